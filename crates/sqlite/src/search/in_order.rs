//! A list over a term's many unchecked candidates ([`Candidates`], those its triples leave: a
//! long term's, or a shorter one's when that costs less than the full-text index): they are
//! checked in the list's own order, a chunk at a time, until the page and the count's bound
//! ([`ListFilter::count_limit`]) are reached. A stretch every link holds (a shop's own URL)
//! leaves a million candidates, and checking each cost half a second; the first page and a
//! bounded count need about ten thousand of them.

use roaring::RoaringTreemap;
use rusqlite::Connection;

use super::sets::{self, FEWEST_CLICKS_FIRST, MOST_CLICKS_FIRST, STEP_COST};
use super::short::{Asked, Candidates};
use super::{ListFilter, owner_link_count, paged_by_full_text, status_sql};
use crate::error::db_error;
use linkdeck_domain::{Id, Result, Sort};

/// Candidates checked per statement at most.
const CHUNK: u64 = 4_096;
/// ... and at least, so a list that needs few more matches does not read them one by one.
const CHUNK_MIN: u64 = 256;

/// What the list `f` needs of a term's candidates to check them in its order.
pub fn asked(conn: &Connection, f: &ListFilter<'_>) -> Result<Asked> {
    let by_clicks = matches!(f.sort, Sort::Max | Sort::Min);
    Ok(Asked {
        bound: f.count_limit(),
        end: f.offset + u64::from(f.limit),
        by_clicks,
        paged_by_full_text: paged_by_full_text(conn, f)?,
        links: match by_clicks {
            true => owner_link_count(conn, f.owner)?,
            false => 0,
        },
        step_cost: STEP_COST,
    })
}

/// The page `f.offset`, `f.limit` of the candidates that match and pass `f`'s status, in the
/// order of `f.sort`, and their total counted to the bound. `None` when checking every
/// candidate costs less: when there are few of them, or — in clicks order, where each is a read
/// of its own — when the page's matches are spread thin among them. In clicks order the
/// candidates are met by walking the owner's links in the clicks index, or, when they are few
/// among those links and the walk would be long, ranked by their facts.
pub fn select(
    conn: &Connection,
    f: &ListFilter<'_>,
    asked: &Asked,
    candidates: &Candidates,
) -> Result<Option<(Vec<Id>, u64)>> {
    let len = candidates.ids().len();
    let (bound, end) = (asked.bound, asked.end);
    if !asked.takes(len) {
        return Ok(None);
    }
    let mut check = Check {
        candidates,
        conn,
        filter: status_sql(f.status).unwrap_or("1"),
        now: f.now.as_second(),
        checked: RoaringTreemap::new(),
        matched: 0,
    };
    let page = |found: Vec<Id>| -> Vec<Id> {
        let rows = found.into_iter().skip(f.offset as usize);
        rows.take(f.limit as usize).collect()
    };
    let ids = candidates.ids();
    match f.sort {
        // One walk in id order finds the page and counts.
        Sort::Desc => {
            let found = check.first(ids.iter().rev().map(Ok), bound)?;
            let total = found.len() as u64;
            Ok(Some((page(found), total)))
        }
        Sort::Asc => {
            let found = check.first(ids.iter().map(Ok), bound)?;
            let total = found.len() as u64;
            Ok(Some((page(found), total)))
        }
        // The page from the candidates met in clicks order, and the count from the rest in id
        // order: the candidates' rows read in id order cost a fraction of those read in clicks
        // order.
        Sort::Max | Sort::Min => {
            let walk = asked.walks(len);
            // Past a share of the candidates read in clicks order, reading every one in id
            // order is the quicker way.
            let most = len / asked.scattered_read_cost(len);
            // The page needs at least as many reads.
            if end > most {
                return Ok(None);
            }
            let ranked;
            let mut stmt;
            let order: Box<dyn Iterator<Item = Result<u64>>> = if walk {
                let query = match f.sort {
                    Sort::Max => MOST_CLICKS_FIRST,
                    _ => FEWEST_CLICKS_FIRST,
                };
                stmt = conn.prepare_cached(query).map_err(db_error)?;
                let walked = stmt
                    .query_map([f.owner], |r| r.get::<_, Id>(0))
                    .map_err(db_error)?
                    .map(|id| id.map(|id| id as u64).map_err(db_error))
                    .filter(|id| id.as_ref().map_or(true, |&id| ids.contains(id)));
                Box::new(walked)
            } else {
                ranked = sets::in_clicks_order(conn, f, ids)?;
                Box::new(ranked.iter().map(|&id| Ok(id as u64)))
            };
            let Some(found) = check.first_within(order, end, most)? else {
                return Ok(None);
            };
            let total = match (found.len() as u64) < end {
                true => found.len() as u64,
                false => {
                    let rest = ids - &check.checked;
                    check.first(rest.iter().map(Ok), bound.saturating_sub(check.matched))?;
                    check.matched.min(bound)
                }
            };
            Ok(Some((page(found), total)))
        }
    }
}

/// Checks candidates as a list meets them: the ids checked so far, and how many matched.
struct Check<'a> {
    candidates: &'a Candidates,
    conn: &'a Connection,
    filter: &'static str,
    now: i64,
    checked: RoaringTreemap,
    matched: u64,
}

impl Check<'_> {
    /// The first `wanted` matches among `ids`, in their order, checked a chunk at a time.
    fn first(&mut self, ids: impl Iterator<Item = Result<u64>>, wanted: u64) -> Result<Vec<Id>> {
        Ok(self
            .first_within(ids, wanted, u64::MAX)?
            .unwrap_or_default())
    }

    /// [`Check::first`], or `None` once more than `most` were checked without finding them.
    fn first_within(
        &mut self,
        ids: impl Iterator<Item = Result<u64>>,
        wanted: u64,
        most: u64,
    ) -> Result<Option<Vec<Id>>> {
        let mut found: Vec<Id> = Vec::new();
        let mut chunk: Vec<Id> = Vec::with_capacity(CHUNK as usize);
        let mut checked = 0;
        let mut ids = ids.peekable();
        while (found.len() as u64) < wanted && ids.peek().is_some() {
            let size = (wanted - found.len() as u64).clamp(CHUNK_MIN, CHUNK);
            for id in ids.by_ref().take(size as usize) {
                chunk.push(id? as Id);
            }
            let matched = self
                .candidates
                .check(self.conn, &chunk, self.filter, self.now)?;
            checked += chunk.len() as u64;
            self.checked.extend(chunk.iter().map(|&id| id as u64));
            let before = found.len();
            found.extend(chunk.drain(..).filter(|&id| matched.contains(id as u64)));
            self.matched += (found.len() - before) as u64;
            if checked > most && (found.len() as u64) < wanted {
                return Ok(None);
            }
        }
        found.truncate(wanted as usize);
        Ok(Some(found))
    }
}

/// The candidates that `tagged` holds too, when a list asks for tags: links waiting for the
/// index are candidates whatever their tags.
pub fn keep_tagged(candidates: &mut Candidates, tagged: Option<&RoaringTreemap>) {
    if let Some(tagged) = tagged {
        *candidates.ids_mut() &= tagged;
    }
}
