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

use super::{TRIPLES, Within, field, holds, indexed, text_at, waiting};
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

/// Candidates looked up per statement.
const CHUNK: usize = 4_096;

/// What a checked candidate costs against one posting the full-text index steps through: a
/// lookup of the link by id and its text folded, against the next entry of a doclist.
const CHECK_COST: u64 = 32;

/// The ids of `owner`'s links whose field `by` contains the folded `term`, which is longer than
/// [`WHOLE_MAX`](linkdeck_store::sql::WHOLE_MAX); among `within` alone when it is given.
pub(super) fn matching(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    within: Option<Within<'_>>,
) -> Result<RoaringTreemap> {
    let mut narrowed = narrow(conn, owner, by, distinct_triples(term, TRIPLES_READ), FEW)?;
    narrowed.keep_within(within)?;
    checked(conn, owner, by, term, narrowed.candidates)
}

/// The ids of `owner`'s links whose field `by` contains the folded `term`, one the full-text
/// index would be asked, when its triples answer it for less: when the candidates they leave
/// cost less to check than the postings of the same triples, which the full-text index would
/// step through, cost to walk. `None`: the full-text index is cheaper.
pub(super) fn matching_if_cheaper(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    within: Option<Within<'_>>,
) -> Result<Option<RoaringTreemap>> {
    matching_if(conn, owner, by, term, CHECK_COST, within)
}

/// [`matching_if_cheaper`] with a candidate costing `check_cost` postings (0: always).
fn matching_if(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    check_cost: u64,
    within: Option<Within<'_>>,
) -> Result<Option<RoaringTreemap>> {
    // Every distinct triple (a term this short has at most WHOLE_MAX - 2), read to the end:
    // the full-text index would walk all of their postings.
    let mut narrowed = narrow(conn, owner, by, distinct_triples(term, usize::MAX), 0)?;
    narrowed.keep_within(within)?;
    if narrowed.candidates.len().saturating_mul(check_cost) > narrowed.postings {
        return Ok(None);
    }
    checked(conn, owner, by, term, narrowed.candidates).map(Some)
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
    Ok(matching_if(conn, owner, by, term, 0, None)?.unwrap_or_default())
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
