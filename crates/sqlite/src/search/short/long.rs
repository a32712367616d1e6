//! Terms longer than the full-text index is asked for whole ([`WHOLE_MAX`]): every link whose
//! field contains such a term contains each of its triples, so the index's rows of a few of
//! its distinct triples, intersected, hold every match; each of these candidates is then read
//! and checked against the whole term. The work is the rows of at most [`TRIPLES_READ`]
//! triples and one lookup per candidate, however long the term and however often it repeats
//! itself: a word said a thousand times has the triples of the word and the space, and a term
//! of varied characters leaves few candidates after its first triples.
//!
//! [`WHOLE_MAX`]: linkdeck_store::sql::WHOLE_MAX

use std::rc::Rc;

use roaring::RoaringTreemap;
use rusqlite::Connection;
use rusqlite::types::Value;
use rustc_hash::FxHashSet;

use super::{TRIPLES, field, holds, indexed, text_at, waiting};
use crate::error::db_error;
use linkdeck_domain::{Id, Result, SearchBy};

/// Distinct triples whose rows are read at most: a triple's rows are one per block of ids
/// (sixteen at a million links), so this bounds the reading, and each one read halves the
/// candidates or better unless it is in most texts.
const TRIPLES_READ: usize = 32;

/// Candidates few enough to check at once rather than read another triple's rows first.
const FEW: u64 = 256;

/// Candidates looked up per statement.
const CHUNK: usize = 4_096;

/// The ids of `owner`'s links whose field `by` contains the folded `term`, which is longer than
/// [`WHOLE_MAX`](linkdeck_store::sql::WHOLE_MAX).
pub(super) fn matching(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
) -> Result<RoaringTreemap> {
    let mut candidates: Option<RoaringTreemap> = None;
    for triple in distinct_triples(term, TRIPLES_READ) {
        let ids = indexed(conn, owner, TRIPLES + field(by), &triple, &triple)?;
        let narrowed = match candidates {
            Some(candidates) => candidates & ids,
            None => ids,
        };
        let few = narrowed.len() <= FEW;
        candidates = Some(narrowed);
        if few {
            break;
        }
    }
    let mut found = RoaringTreemap::new();
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT id, {} FROM links WHERE id IN rarray(?1)",
            super::super::column(by)
        ))
        .map_err(db_error)?;
    let mut folded = String::new();
    let mut ids = candidates.unwrap_or_default().into_iter().peekable();
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
