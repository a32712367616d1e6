//! Terms answered from the rows of their triples: every link whose field contains a term
//! contains each of its triples, so the index's rows of a few of its distinct triples,
//! intersected, hold every match; each of these candidates is then read and checked against
//! the whole term.
//!
//! A term longer than [`WHOLE_MAX`] always comes here: the full-text index's work grows with
//! the term, and here it is the rows of at most [`TRIPLES_READ`] triples and one lookup per
//! candidate, however long the term and however often it repeats itself: a word said a
//! thousand times has the triples of the word and the space, and a term of varied characters
//! leaves few candidates after its first triples.
//!
//! A shorter term the full-text index would be asked comes here when that is cheaper
//! ([`matching_if_cheaper`]): the full-text index steps through the postings of every trigram
//! of the term, so a rare term holding a stretch every link has (`https://floorbondsan.s`,
//! `://shirkc`) walks a million postings for a handful of matches, where its triples' rows
//! leave those few candidates after a few reads.
//!
//! [`WHOLE_MAX`]: linkdeck_store::sql::WHOLE_MAX

use std::rc::Rc;

use roaring::RoaringTreemap;
use rusqlite::Connection;
use rusqlite::types::Value;
use rustc_hash::FxHashSet;

use super::{Matches, TRIPLES, Within, field, holds, indexed, text_at, waiting, waiting_ids};
use crate::error::db_error;
use linkdeck_domain::{Id, Result, SearchBy};

/// Distinct triples whose rows are read at most: a triple's rows are one per block of ids
/// (sixteen at a million links), so this bounds the reading, and each one read halves the
/// candidates or better unless it is in most texts.
const TRIPLES_READ: usize = 32;

/// Candidates few enough to check at once rather than read another triple's rows first.
const FEW: u64 = 256;

/// Candidates many enough that reading the set a list's other filters admit (a tag's links, the
/// inactive ones) costs less than checking those outside it.
const WITHIN_FROM: u64 = 4_096;

/// Candidates checked to learn what share of them match, before leaving many unchecked.
const SAMPLE: u64 = 64;

/// Candidates looked up per statement.
const CHUNK: usize = 4_096;

/// What a checked candidate costs against one posting the full-text index steps through: a
/// lookup of the link by id and its text folded, against the next entry of a doclist.
const CHECK_COST: u64 = 32;

/// What a list needs of a term's candidates when it can check them in its own order and stop:
/// the bound of its count, the end of its page, and whether its order is by clicks.
pub struct Asked {
    pub bound: u64,
    pub end: u64,
    pub by_clicks: bool,
    /// Whether the full-text index pages this list alone, stopping once it has counted to the
    /// bound.
    pub paged_by_full_text: bool,
    /// In clicks order: the owner's links, among which the candidates lie, and how many steps
    /// of the clicks index cost what ranking one candidate by its facts does.
    pub links: u64,
    pub step_cost: u64,
}

/// What a candidate's row costs read in clicks order, against one read in id order: the rows
/// are scattered over the table, each a descent of its own.
pub const SCATTERED_READ_COST: u64 = 16;

impl Asked {
    /// Whether `len` candidates are many enough to leave unchecked: twice the bound, so that
    /// a term in half of them or more is answered from part of them.
    pub fn takes(&self, len: u64) -> bool {
        len >= self.bound.saturating_mul(2)
    }

    /// What the full-text index costs this list, when the term's triples hold `postings` and
    /// leave `len` candidates of which a `share` match: every posting, or, when it pages the
    /// list alone, those before the bound's match.
    fn full_text_cost(&self, postings: u64, len: u64, share: f64) -> u64 {
        let matches = len as f64 * share;
        match self.paged_by_full_text && matches > self.bound as f64 {
            true => (postings as f64 * self.bound as f64 / matches) as u64,
            false => postings,
        }
    }

    /// In clicks order, whether `len` candidates are met by walking the owner's links in the
    /// clicks index (about `end × links / len` steps until the page's candidates are met)
    /// rather than by ranking every candidate by its facts.
    pub fn walks(&self, len: u64) -> bool {
        let walked = self.end.saturating_mul(self.links) / len.max(1);
        walked.saturating_mul(self.step_cost) < len
    }

    /// What a candidate's row read in clicks order costs against one read in id order, among
    /// `len` candidates: [`SCATTERED_READ_COST`] when the walk meets them, since the rows it
    /// reads are close enough together for reads in id order to share the table's pages.
    /// Ranked, they are read in an order of their own, which costs less against id order as
    /// they thin out among the links, down to about the same when each lies on a page of its
    /// own either way. Measured at ten million links, 20,000 rows read out of order against in
    /// id order: about 1.15 times as long one link in 90 apart, 2.3 times one in 6, and 4
    /// times side by side; at a million, 1.6 times one in 60 apart.
    pub fn scattered_read_cost(&self, len: u64) -> u64 {
        match self.walks(len) {
            true => SCATTERED_READ_COST,
            false => (SCATTERED_READ_COST.saturating_mul(len) / self.links.max(1))
                .clamp(1, SCATTERED_READ_COST),
        }
    }

    /// What checking `len` candidates in the list's order costs, counted in candidates read in
    /// id order, when a `share` of them match: those met until the bound is counted, and in
    /// clicks order those met until the page's end, each read out of id order.
    fn cost(&self, len: u64, share: f64) -> u64 {
        let share = share.max(1.0 / SAMPLE as f64);
        let met = |wanted: u64| ((wanted as f64 / share) as u64).min(len);
        match self.by_clicks {
            true => met(self.end) * self.scattered_read_cost(len) + met(self.bound),
            false => met(self.bound),
        }
    }
}

/// The ids of `owner`'s links whose field `by` contains the folded `term`, which is longer than
/// [`WHOLE_MAX`](linkdeck_store::sql::WHOLE_MAX); among `within` alone when it is given. When
/// there are enough for a list that `asked` to check them in its order, they are handed back
/// unchecked.
pub(super) fn matching(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    within: Option<Within<'_>>,
    asked: Option<&Asked>,
) -> Result<Matches> {
    let mut narrowed = narrow(conn, owner, by, distinct_triples(term, TRIPLES_READ), FEW)?;
    narrowed.keep_within(within)?;
    if asked.is_some_and(|asked| asked.takes(narrowed.candidates.len())) {
        return narrowed.unchecked(conn, owner, by, term);
    }
    checked(conn, owner, by, term, narrowed.candidates).map(Matches::Known)
}

/// The links a term may match, not checked yet: the candidates its triples left (the
/// links the index holds may be stale) and every link the index does not hold as it is now.
/// A list checks them in its own order and stops once it has its page and its count.
pub struct Candidates {
    owner: Id,
    by: SearchBy,
    term: String,
    ids: RoaringTreemap,
}

impl Candidates {
    pub fn ids(&self) -> &RoaringTreemap {
        &self.ids
    }

    pub fn ids_mut(&mut self) -> &mut RoaringTreemap {
        &mut self.ids
    }

    /// Of `ids`, those of the owner's links whose field holds the term and whose row passes
    /// `filter` (SQL over `links l`, `?2` the time `now`), read as they are now.
    pub fn check(
        &self,
        conn: &Connection,
        ids: &[Id],
        filter: &str,
        now: i64,
    ) -> Result<RoaringTreemap> {
        // Each candidate by its id, one descent of the table. Left to itself the planner seeks
        // the owner's (owner_id, id) index first and the row after it, two descents: 1.6 to 1.9
        // times as long at a million links. The disabled links' partial index is the exception:
        // it turns most candidates away without their rows.
        let table = match filter == crate::status::DISABLED {
            true => "links l",
            false => "links l NOT INDEXED",
        };
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT l.id, l.{} FROM {table} WHERE l.id IN rarray(?1) AND ?2 IS NOT NULL \
                 AND l.owner_id = ?3 AND {filter}",
                linkdeck_store::sql::column(self.by)
            ))
            .map_err(db_error)?;
        // In id order, so the lookups descend the table's tree in one direction.
        let mut chunk: Vec<Value> = ids.iter().map(|&id| Value::Integer(id)).collect();
        chunk.sort_unstable_by_key(|v| match v {
            Value::Integer(id) => *id,
            _ => 0,
        });
        let mut rows = stmt
            .query(rusqlite::params![Rc::new(chunk), now, self.owner])
            .map_err(db_error)?;
        let mut found = RoaringTreemap::new();
        let mut folded = String::new();
        while let Some(row) = rows.next().map_err(db_error)? {
            if holds(text_at(row, 1)?, &self.term, &mut folded) {
                found.insert(row.get::<_, Id>(0).map_err(db_error)? as u64);
            }
        }
        Ok(found)
    }

    /// Every match among the candidates.
    pub fn checked(self, conn: &Connection) -> Result<RoaringTreemap> {
        let mut found = RoaringTreemap::new();
        let mut ids = self.ids.iter().peekable();
        while ids.peek().is_some() {
            let chunk: Vec<Id> = ids.by_ref().take(CHUNK).map(|id| id as Id).collect();
            found |= self.check(conn, &chunk, "1", 0)?;
        }
        Ok(found)
    }
}

/// The ids of `owner`'s links whose field `by` contains the folded `term`, one the full-text
/// index would be asked, when its triples answer it for less: when the candidates they leave
/// cost less to check than the postings of the same triples, which the full-text index would
/// step through, cost to walk — or, for a list that `asked`, when checking them in its order
/// until it has its page and its count costs less, and they are handed back unchecked. `None`:
/// the full-text index is cheaper.
pub(super) fn matching_if_cheaper(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    within: Option<Within<'_>>,
    asked: Option<&Asked>,
) -> Result<Option<Matches>> {
    matching_if(conn, owner, by, term, CHECK_COST, within, asked)
}

/// [`matching_if_cheaper`] with a candidate costing `check_cost` postings (0: always).
fn matching_if(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    check_cost: u64,
    within: Option<Within<'_>>,
    asked: Option<&Asked>,
) -> Result<Option<Matches>> {
    // Every distinct triple (a term this short has at most WHOLE_MAX - 2), read to the end:
    // the full-text index would walk all of their postings.
    let mut narrowed = narrow(conn, owner, by, distinct_triples(term, usize::MAX), 0)?;
    narrowed.keep_within(within)?;
    let len = narrowed.candidates.len();
    // What the full-text index would cost: the postings it steps through.
    let mut full_text = narrowed.postings;
    if let Some(asked) = asked
        && asked.takes(len)
    {
        let share = narrowed.sampled_share(conn, owner, by, term)?;
        full_text = asked.full_text_cost(narrowed.postings, len, share);
        if asked.cost(len, share).saturating_mul(check_cost) <= full_text {
            return narrowed.unchecked(conn, owner, by, term).map(Some);
        }
    }
    if len.saturating_mul(check_cost) > full_text {
        return Ok(None);
    }
    checked(conn, owner, by, term, narrowed.candidates).map(|set| Some(Matches::Known(set)))
}

/// The matches of a term the full-text index would be asked, from its triples whatever the
/// cost: what tests compare the texts with.
#[cfg(test)]
pub(super) fn matching_always(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
) -> Result<RoaringTreemap> {
    match matching_if(conn, owner, by, term, 0, None, None)? {
        Some(matches) => matches.known(conn),
        None => Ok(RoaringTreemap::new()),
    }
}

/// The candidates a term's triples leave, and the postings their rows held together.
struct Narrowed {
    candidates: RoaringTreemap,
    postings: u64,
}

impl Narrowed {
    /// Only the candidates among what `within` reads, when there are enough to be worth it: a
    /// shared stretch such as a shop's own URL leaves every link a candidate, and a tag or an
    /// inactive status, read as a set, leaves a tenth of them or less to read and check.
    /// The candidates unchecked, with every link the index does not hold as it is now.
    fn unchecked(&self, conn: &Connection, owner: Id, by: SearchBy, term: &str) -> Result<Matches> {
        let ids = &self.candidates | waiting_ids(conn, owner)?;
        Ok(Matches::Unchecked(Candidates {
            owner,
            by,
            term: term.to_owned(),
            ids,
        }))
    }

    /// The share of the candidates that match, from [`SAMPLE`] of them spread evenly.
    fn sampled_share(&self, conn: &Connection, owner: Id, by: SearchBy, term: &str) -> Result<f64> {
        let len = self.candidates.len();
        let sample: Vec<Id> = (0..SAMPLE)
            .filter_map(|i| self.candidates.select(i * len / SAMPLE))
            .map(|id| id as Id)
            .collect();
        let some = Candidates {
            owner,
            by,
            term: term.to_owned(),
            ids: RoaringTreemap::new(),
        };
        let matched = some.check(conn, &sample, "1", 0)?.len();
        Ok(matched as f64 / sample.len().max(1) as f64)
    }

    fn keep_within(&mut self, within: Option<Within<'_>>) -> Result<()> {
        if let Some(within) = within
            && self.candidates.len() > WITHIN_FROM
            && let Some(set) = within()?
        {
            self.candidates &= set;
        }
        Ok(())
    }
}

/// The intersection of the rows of `triples`, read until `few` candidates are left.
fn narrow(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    triples: Vec<String>,
    few: u64,
) -> Result<Narrowed> {
    let mut candidates: Option<RoaringTreemap> = None;
    let mut postings = 0;
    for triple in triples {
        let ids = indexed(conn, owner, TRIPLES + field(by), &triple, &triple)?;
        postings += ids.len();
        let narrowed = match candidates {
            Some(candidates) => candidates & ids,
            None => ids,
        };
        let enough = narrowed.len() <= few;
        candidates = Some(narrowed);
        if enough {
            break;
        }
    }
    Ok(Narrowed {
        candidates: candidates.unwrap_or_default(),
        postings,
    })
}

/// The `candidates` whose field `by` contains the folded `term`, each read and checked, with
/// the links the index does not hold as they are now.
fn checked(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    candidates: RoaringTreemap,
) -> Result<RoaringTreemap> {
    let mut found = RoaringTreemap::new();
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT id, {} FROM links WHERE id IN rarray(?1)",
            super::super::column(by)
        ))
        .map_err(db_error)?;
    let mut folded = String::new();
    let mut ids = candidates.into_iter().peekable();
    while ids.peek().is_some() {
        let chunk: Vec<Value> = ids
            .by_ref()
            .take(CHUNK)
            .map(|id| Value::Integer(id as Id))
            .collect();
        let mut rows = stmt.query([Rc::new(chunk)]).map_err(db_error)?;
        while let Some(row) = rows.next().map_err(db_error)? {
            if holds(text_at(row, 1)?, term, &mut folded) {
                found.insert(row.get::<_, Id>(0).map_err(db_error)? as u64);
            }
        }
    }
    waiting(conn, owner, by, term, &mut found)?;
    Ok(found)
}

/// The first `most` distinct triples of `term`, in the order they first appear.
fn distinct_triples(term: &str, most: usize) -> Vec<String> {
    let chars: Vec<char> = term.chars().collect();
    let mut seen = FxHashSet::default();
    chars
        .windows(3)
        .filter(|w| seen.insert([w[0], w[1], w[2]]))
        .take(most)
        .map(|w| w.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_word_has_the_triples_of_one_repetition() {
        let term = "cart school ".repeat(1_666);
        let triples = distinct_triples(&term, TRIPLES_READ);
        assert_eq!(triples.len(), 12, "{triples:?}");
        assert_eq!(triples[0], "car");
        assert_eq!(triples[11], " ca");
        let varied: String = (0..2_000u32)
            .map(|i| char::from_u32(0x4e00 + i).unwrap())
            .collect();
        assert_eq!(distinct_triples(&varied, TRIPLES_READ).len(), TRIPLES_READ);
    }
}
