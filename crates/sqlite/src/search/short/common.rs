//! Common longer terms: terms of four characters or more that many links' texts contain —
//! `https`, `www.`, `ref=`, the host most links point at. The full-text index answers a longer
//! term by stepping through its matches and their positions, about 200 ns each: 200 ms for a
//! term in every URL of a million links, where a term in few links takes a millisecond. So the
//! terms most links contain are kept in the short-term index beside the pairs and triples, rows
//! of bitmaps under fields of their own ([`COMMON`](super::COMMON) on), and their matches are
//! read whole; every other longer term stays with the full-text index.
//!
//! Which terms: each time the links have doubled in number (from [`FIRST_AT`] on), [`refresh`]
//! reads a sample of them and chooses, for each field, the terms of 4 to [`LONGEST`] characters
//! that at least one sampled text in [`SHARE`] contains (at most [`MOST`] per field, the
//! commonest first). A chosen term stays chosen. Its rows are built from every link when it is
//! chosen, after the index has caught up with every write, and kept from then on by the same
//! writes that keep the pairs' (one gathering finds both): the
//! table of chosen terms says which longer terms the index answers, and it only ever names
//! terms whose rows are complete.

use std::collections::BTreeMap;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rusqlite::{Connection, OptionalExtension, params};
use rustc_hash::{FxHashMap, FxHashSet};

use super::{SHORT, fold};
use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{Error, Id, Result};

/// The shortest and longest terms chosen: shorter ones are the pairs' and triples'; longer
/// ones are rarely typed, and their substrings narrow them.
const SHORTEST: usize = SHORT + 1;
const LONGEST: usize = 24;

/// A term is common when at least one sampled text in this many contains it: below that, at a
/// million links, the full-text index steps through under 20,000 matches (a few milliseconds).
const SHARE: usize = if cfg!(test) { 8 } else { 50 };

/// At most this many terms per field: each costs its rows and every write's gathering. The
/// pieces of one long common prefix (`https://www.example.com/` has 210 of 4 to 24 characters)
/// should not use them all up; a million made-up URLs have about 700 common terms.
const MOST: usize = 1_024;

/// Links sampled to choose by: a term in 1 in 50 is in about 80 of them.
const SAMPLE: Id = if cfg!(test) { 48 } else { 4_096 };

/// Terms are first chosen once there are this many links; below it, every search of the
/// full-text index is quick.
const FIRST_AT: Id = if cfg!(test) { 24 } else { 8_192 };

/// The chosen terms of each field (title, alias, url) and a finder for them.
pub struct Common {
    fields: [Finder; 3],
}

struct Finder {
    grams: Vec<String>,
    /// Every chosen term at once; `None` when the field has none. ASCII letters match either
    /// case, so an ASCII text is searched as it is stored; any other is folded first.
    finder: Option<AhoCorasick>,
}

impl Finder {
    fn new(grams: Vec<String>) -> Result<Finder> {
        let finder = if grams.is_empty() {
            None
        } else {
            // A DFA: built once per write batch or import, it then runs over every text.
            let built = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&grams)
                .map_err(|e| Error::Unavailable(format!("cannot build the common terms: {e}")))?;
            Some(built)
        };
        Ok(Finder { grams, finder })
    }
}

impl Common {
    /// No chosen terms.
    pub fn none() -> Arc<Common> {
        Arc::new(Common {
            fields: [(); 3].map(|()| Finder {
                grams: Vec::new(),
                finder: None,
            }),
        })
    }

    fn of(grams: [Vec<String>; 3]) -> Result<Common> {
        let [a, b, c] = grams.map(Finder::new);
        Ok(Common {
            fields: [a?, b?, c?],
        })
    }

    /// The terms chosen so far.
    pub fn load(conn: &Connection) -> Result<Arc<Common>> {
        let mut grams: [Vec<String>; 3] = Default::default();
        let sql = "SELECT field, gram FROM link_common_grams ORDER BY field, gram";
        conn.each(sql, [], |row| {
            let field: i64 = row.get(0).map_err(db_error)?;
            let gram: String = row.get(1).map_err(db_error)?;
            if let Some(list) = grams.get_mut(field as usize) {
                list.push(gram);
            }
            Ok(())
        })?;
        Ok(Arc::new(Common::of(grams)?))
    }

    #[cfg(test)]
    pub fn grams(&self, field: usize) -> &[String] {
        &self.fields[field].grams
    }

    /// The chosen term numbered `i` of `field`.
    pub fn gram(&self, field: usize, i: u32) -> &str {
        &self.fields[field].grams[i as usize]
    }

    /// Calls `found` with the number of each chosen term of `field` that `text` contains (once
    /// for each place it is found). `folded` is room for a folded copy of a text that is not
    /// ASCII.
    pub fn each_in(
        &self,
        field: usize,
        text: &str,
        folded: &mut String,
        mut found: impl FnMut(u32),
    ) {
        let Some(finder) = &self.fields[field].finder else {
            return;
        };
        let haystack = if text.is_ascii() {
            text
        } else {
            folded.clear();
            folded.extend(text.chars().map(fold));
            folded.as_str()
        };
        for m in finder.find_overlapping_iter(haystack) {
            found(m.pattern().as_u32());
        }
    }
}

/// Whether `term` (folded, of four characters or more) is a chosen term of `field`.
pub fn is_chosen(conn: &Connection, field: usize, term: &str) -> Result<bool> {
    conn.exists(
        "SELECT 1 FROM link_common_grams WHERE field = ?1 AND gram = ?2",
        params![field as i64, term],
    )
}

/// Chooses terms again when the links have doubled in number since the last choice (`last` the
/// highest link id). Called as a write transaction ends, after the index took in what waited.
pub fn refresh(tx: &Connection, last: Id) -> Result<()> {
    let at: Option<Id> = tx.one("SELECT common_at FROM link_grams_upto", [], |r| r.get(0))?;
    let at = at.unwrap_or_default();
    if last < FIRST_AT || last < at.saturating_mul(2) {
        return Ok(());
    }
    choose(tx, last)
}

/// [`refresh`] for a database upgraded to the schema that has common terms: chosen at once from
/// the links it holds.
pub fn choose_on_upgrade(tx: &Connection) -> Result<()> {
    let last: Id = tx
        .query_row("SELECT ifnull(max(id), 0) FROM links", [], |r| r.get(0))
        .map_err(db_error)?;
    refresh(tx, last)
}

fn choose(tx: &Connection, last: Id) -> Result<()> {
    // The new terms' rows are built from the links as they are now: the rows of every other
    // gram must say the same, so nothing may wait.
    super::catch_up(tx)?;
    super::fold_stale(tx)?;
    let sample = sample(tx, last)?;
    let chosen = Common::load(tx)?;
    let least = sample.len().div_ceil(SHARE).max(2);
    let mut fresh: [Vec<String>; 3] = Default::default();
    let mut any = false;
    for (field, fresh) in fresh.iter_mut().enumerate() {
        let had = &chosen.fields[field].grams;
        let texts: Vec<Vec<char>> = sample
            .iter()
            .filter_map(|texts| texts[field].as_deref())
            .map(|t| t.chars().map(fold).collect())
            .collect();
        *fresh = commonest(&texts, least)
            .into_iter()
            .filter(|g| !had.contains(g))
            .take(MOST.saturating_sub(had.len()))
            .collect();
        any |= !fresh.is_empty();
    }
    if any {
        for (field, grams) in fresh.iter().enumerate() {
            for gram in grams {
                tx.run(
                    "INSERT INTO link_common_grams (field, gram) VALUES (?1, ?2)",
                    params![field as i64, gram],
                )?;
            }
        }
        let fresh = Arc::new(Common::of(fresh)?);
        super::index_common(tx, last, &fresh)?;
    }
    tx.run("UPDATE link_grams_upto SET common_at = ?1", [last])?;
    Ok(())
}

/// The texts of up to [`SAMPLE`] links spread over the ids up to `last`: the first link at or
/// after each of evenly spaced ids, each moved by a fixed pseudo-random step within its
/// stretch so that a pattern in the ids does not line up with the sample.
fn sample(tx: &Connection, last: Id) -> Result<Vec<[Option<String>; 3]>> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT id, title, alias, url FROM links WHERE id >= ?1 ORDER BY id LIMIT 1",
        )
        .map_err(db_error)?;
    let mut found = BTreeMap::new();
    let stretch = (last / SAMPLE).max(1);
    let mut step = 0x9e37_79b9_7f4a_7c15_u64;
    let mut from = 1;
    while from <= last {
        step = step.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let at = from + ((step >> 33) % stretch as u64) as Id;
        let row = stmt
            .query_row([at], |r| {
                Ok((
                    r.get::<_, Id>(0)?,
                    [r.get(1)?, r.get(2)?, r.get::<_, Option<String>>(3)?],
                ))
            })
            .optional()
            .map_err(db_error)?;
        if let Some((id, texts)) = row {
            found.insert(id, texts);
        }
        from += stretch;
    }
    Ok(found.into_values().collect())
}

/// The terms of [`SHORTEST`] to [`LONGEST`] characters that at least `least` of `texts`
/// contain, the commonest first (then the shortest, then in order). A term can only be that
/// common if the term one character shorter at either end is too, so each length looks only
/// at the windows whose two shorter ends passed.
fn commonest(texts: &[Vec<char>], least: usize) -> Vec<String> {
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut passed: FxHashSet<&[char]> = FxHashSet::default();
    let mut seen: FxHashSet<&[char]> = FxHashSet::default();
    for n in SHORT..=LONGEST {
        let mut counts: FxHashMap<&[char], usize> = FxHashMap::default();
        for text in texts {
            seen.clear();
            for w in text.windows(n) {
                if n == SHORT || (passed.contains(&w[..n - 1]) && passed.contains(&w[1..])) {
                    seen.insert(w);
                }
            }
            for w in seen.drain() {
                *counts.entry(w).or_default() += 1;
            }
        }
        passed = counts
            .into_iter()
            .filter(|&(_, count)| count >= least)
            .map(|(w, count)| {
                if n >= SHORTEST {
                    found.push((count, w.iter().collect()));
                }
                w
            })
            .collect();
        if passed.is_empty() {
            break;
        }
    }
    found.sort_by(|a, b| {
        (b.0.cmp(&a.0))
            .then(a.1.chars().count().cmp(&b.1.chars().count()))
            .then(a.1.cmp(&b.1))
    });
    found.into_iter().map(|(_, gram)| gram).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(texts: &[&str]) -> Vec<Vec<char>> {
        texts.iter().map(|t| t.chars().collect()).collect()
    }

    #[test]
    fn the_commonest_terms_come_first_and_rare_ones_not_at_all() {
        let texts = chars(&[
            "https://a.example/x",
            "https://b.example/y",
            "https://c.test/zzzz",
            "http://d.example/q",
        ]);
        let found = commonest(&texts, 3);
        assert_eq!(found[0], "http", "the one term in all four");
        assert!(found.contains(&"https://".to_owned()), "in three of four");
        assert!(found.contains(&".example/".to_owned()));
        assert!(
            !found.iter().any(|g| g.contains("test")),
            "in one text only"
        );
        assert!(
            found
                .iter()
                .all(|g| (SHORTEST..=LONGEST).contains(&g.chars().count()))
        );
        // A term repeated within one text counts once.
        assert!(commonest(&chars(&["abcdabcdabcd", "x"]), 2).is_empty());
    }

    #[test]
    fn a_finder_finds_overlapping_terms_in_either_case_and_folded_texts() {
        let common = Common::of([
            vec!["abab".into(), "baba".into(), "éabc".into()],
            vec![],
            vec![],
        ])
        .unwrap();
        let mut folded = String::new();
        let mut hits = Vec::new();
        common.each_in(0, "ABaBab", &mut folded, |i| hits.push(i));
        hits.sort();
        assert_eq!(hits, [0, 0, 1]);
        hits.clear();
        common.each_in(0, "xÉABC", &mut folded, |i| hits.push(i));
        assert_eq!(hits, [2]);
        hits.clear();
        common.each_in(1, "abab", &mut folded, |i| hits.push(i));
        assert!(hits.is_empty(), "no terms chosen for that field");
    }
}
