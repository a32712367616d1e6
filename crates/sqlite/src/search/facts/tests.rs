//! The facts snapshot and the large-search lists built on it, against the links' rows, after
//! any mix of the writes that change them: creates, imports, clicks counted in batches, edits of
//! the status columns, deletes, links put back under their old ids, and folds at any moment.

use jiff::Timestamp;
use proptest::prelude::*;
use roaring::RoaringTreemap;
use rusqlite::{Connection, Transaction, params};

use super::super::{ListFilter, list};
use super::*;
use crate::schema;
use crate::{links, search};
use linkdeck_domain::{LinkStatus, SearchBy, Sort, SpaceFilter, StatusFilter, Total};

const NOW: i64 = 1_800_000_000;

fn now() -> Timestamp {
    Timestamp::from_second(NOW).unwrap()
}

/// A write, as the service or the click writer would make it.
#[derive(Debug, Clone)]
enum Op {
    Create {
        url: String,
        limit: u32,
        ends: Option<i64>,
    },
    Import {
        urls: Vec<(String, u64)>,
    },
    /// The click writer's statement, for a few links at once.
    Clicks {
        picks: Vec<(usize, u8)>,
    },
    Disable {
        pick: usize,
        on: bool,
    },
    Limit {
        pick: usize,
        limit: u32,
    },
    Ends {
        pick: usize,
        ends: Option<i64>,
    },
    Delete {
        pick: usize,
    },
    /// The most recently deleted link comes back under its own id, as from the trash.
    Restore,
    /// Everything waiting is taken in, as a database copy ends.
    CatchUp,
}

fn url() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[abc]{1,6}").unwrap()
}

fn ends() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![3 => Just(None), 1 => Just(Some(NOW - 5)), 1 => Just(Some(NOW + 5))]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (url(), 0..4u32, ends()).prop_map(|(url, limit, ends)| Op::Create { url, limit, ends }),
        2 => proptest::collection::vec((url(), 0..6u64), 1..90)
            .prop_map(|urls| Op::Import { urls }),
        4 => proptest::collection::vec((any::<usize>(), 1..4u8), 1..40)
            .prop_map(|picks| Op::Clicks { picks }),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(pick, on)| Op::Disable { pick, on }),
        1 => (any::<usize>(), 0..4u32).prop_map(|(pick, limit)| Op::Limit { pick, limit }),
        1 => (any::<usize>(), ends()).prop_map(|(pick, ends)| Op::Ends { pick, ends }),
        1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        1 => Just(Op::Restore),
        1 => Just(Op::CatchUp),
    ]
}

fn ids(tx: &Connection) -> Vec<Id> {
    let mut stmt = tx.prepare("SELECT id FROM links ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn row(url: &str, n: u64) -> linkdeck_store::LinkRow {
    let mut row = linkdeck_store::LinkRow::blank(1, now());
    row.url = format!("https://{url}/");
    row.alias = format!("x{n}");
    // Spaces 1 to 3 and none, for the lists by space.
    row.space_id = Some((n % 4) as Id).filter(|&s| s > 0);
    row
}

/// Applies `op`; `deleted` keeps the rows deleted so far, as the trash would.
fn apply(
    tx: &Transaction<'_>,
    op: &Op,
    deleted: &mut Vec<Vec<rusqlite::types::Value>>,
    n: &mut u64,
) {
    let existing = ids(tx);
    let pick = |i: usize| existing.get(i % existing.len().max(1)).copied();
    let mut next = || {
        *n += 1;
        *n
    };
    match op {
        Op::Create { url, limit, ends } => {
            let mut r = row(url, next());
            r.expiration_clicks = *limit;
            r.ends_at = ends.map(|s| Timestamp::from_second(s).unwrap());
            links::insert(tx, &r).unwrap();
        }
        Op::Import { urls } => {
            let mut staged = links::stage_start(tx).unwrap();
            for (url, clicks) in urls {
                let mut r = row(url, next());
                r.expiration_clicks = (*clicks % 3) as u32;
                let counted = linkdeck_store::Counted {
                    clicks: *clicks,
                    previews: 0,
                };
                links::stage(tx, &mut staged, &r, counted).unwrap();
            }
            links::stage_insert(tx, staged).unwrap();
        }
        Op::Clicks { picks } => {
            for &(i, by) in picks {
                if let Some(id) = pick(i) {
                    tx.execute(
                        "UPDATE links SET clicks = clicks + ?2 WHERE id = ?1",
                        params![id, by],
                    )
                    .unwrap();
                }
            }
        }
        Op::Disable { pick: i, on } => {
            if let Some(id) = pick(*i) {
                tx.execute(
                    "UPDATE links SET disabled = ?2 WHERE id = ?1",
                    params![id, on],
                )
                .unwrap();
            }
        }
        Op::Limit { pick: i, limit } => {
            if let Some(id) = pick(*i) {
                tx.execute(
                    "UPDATE links SET expiration_clicks = ?2 WHERE id = ?1",
                    params![id, limit],
                )
                .unwrap();
            }
        }
        Op::Ends { pick: i, ends } => {
            if let Some(id) = pick(*i) {
                tx.execute(
                    "UPDATE links SET ends_at = ?2 WHERE id = ?1",
                    params![id, ends],
                )
                .unwrap();
            }
        }
        Op::Delete { pick: i } => {
            if let Some(id) = pick(*i) {
                let values: Vec<rusqlite::types::Value> = tx
                    .query_row("SELECT * FROM links WHERE id = ?1", [id], |r| {
                        (0..r.as_ref().column_count())
                            .map(|c| r.get(c))
                            .collect::<rusqlite::Result<_>>()
                    })
                    .unwrap();
                tx.execute("DELETE FROM links WHERE id = ?1", [id]).unwrap();
                deleted.push(values);
            }
        }
        Op::Restore => {
            if let Some(values) = deleted.pop() {
                let marks = vec!["?"; values.len()].join(", ");
                tx.execute(
                    &format!("INSERT INTO links VALUES ({marks})"),
                    rusqlite::params_from_iter(values),
                )
                .unwrap();
            }
        }
        Op::CatchUp => catch_up(tx).unwrap(),
    }
}

/// Every link as its row says: id, url, clicks, status, space.
fn rows(conn: &Connection) -> Vec<(Id, String, u64, LinkStatus, Option<Id>)> {
    let mut stmt = conn
        .prepare(
            "SELECT id, url, clicks, disabled, ends_at, expiration_clicks, space_id FROM links \
             ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let clicks = r.get::<_, i64>(2)? as u64;
        Ok((
            r.get(0)?,
            r.get(1)?,
            clicks,
            LinkStatus::derive(
                r.get(3)?,
                r.get::<_, Option<i64>>(4)?
                    .map(|s| Timestamp::from_second(s).unwrap()),
                r.get(5)?,
                clicks,
                now(),
            ),
            r.get(6)?,
        ))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// The facts of every link agree with its row.
fn check_facts(conn: &Connection) -> std::result::Result<(), TestCaseError> {
    let all = rows(conn);
    let set: RoaringTreemap = all.iter().map(|r| r.0 as u64).collect();
    let found = of(conn, &set).unwrap();
    prop_assert_eq!(found.len(), all.len());
    for ((id, facts), (rid, _, clicks, status, _)) in found.iter().zip(&all) {
        prop_assert_eq!(id, rid);
        prop_assert_eq!(facts.clicks, *clicks, "link {}", id);
        let ended = status.expired && !facts.limit_reached;
        prop_assert_eq!(facts.status(ended), *status, "link {}", id);
    }
    Ok(())
}

/// Pages of large searches (first, middle, last) in every status and order, their totals, and
/// the ids a bulk action would take agree with the rows; so do those within one space and
/// within several (a key limited to them), in fewer statuses.
fn check_lists(conn: &Connection) -> std::result::Result<(), TestCaseError> {
    let all = rows(conn);
    let among = SpaceFilter::Among(linkdeck_domain::SpaceSet::new([1, 3]).unwrap());
    let nowhere = SpaceFilter::Among(linkdeck_domain::SpaceSet::new([]).unwrap());
    let places = [SpaceFilter::Any, SpaceFilter::In(2), among, nowhere];
    // "a", "ab" and "ps:" (every link) from the short-term index; "https" (every link) from it
    // too once it holds common terms (past a few dozen links), before that and "/abc" from the
    // full-text index; and no search at all with an inactive status (read as a set in clicks
    // order; the other totals without a search come from the owner's counter, which the store's
    // writes keep and this test's do not).
    for term in [
        None,
        Some("a"),
        Some("ab"),
        Some("ps:"),
        Some("https"),
        Some("/abc"),
    ] {
        let statuses = StatusFilter::ALL.into_iter().filter(move |&status| {
            term.is_some() || matches!(status, StatusFilter::Disabled | StatusFilter::Expired)
        });
        let asked = statuses.flat_map(|status| {
            places
                .into_iter()
                .filter(move |&p| {
                    p.is_any()
                        || status == StatusFilter::All
                        || (status == StatusFilter::Active && p == among)
                })
                .map(move |space| (status, space))
        });
        for (status, space) in asked {
            let mut expected: Vec<&(Id, String, u64, LinkStatus, Option<Id>)> = all
                .iter()
                .filter(|r| {
                    term.is_none_or(|t| r.1.contains(t)) && status.admits(r.3) && space.admits(r.4)
                })
                .collect();
            let f = |sort, offset| ListFilter {
                owner: 1,
                search: term.map(|t| (SearchBy::Url, t)),
                status,
                space,
                domain: None,
                tags: &[],
                tag_match: Default::default(),
                sort,
                offset,
                limit: 10,
                now: now(),
            };
            let whole: RoaringTreemap = expected.iter().map(|r| r.0 as u64).collect();
            prop_assert_eq!(
                search::matching_ids(conn, &f(Sort::Desc, 0)).unwrap(),
                whole
            );
            for sort in Sort::ALL {
                match sort {
                    Sort::Desc => expected.sort_by_key(|r| std::cmp::Reverse(r.0)),
                    Sort::Asc => expected.sort_by_key(|r| r.0),
                    Sort::Max => expected.sort_by_key(|r| std::cmp::Reverse((r.2, r.0))),
                    Sort::Min => expected.sort_by_key(|r| (r.2, r.0)),
                }
                let total = expected.len() as u64;
                for offset in [0, total / 2, total.saturating_sub(7)] {
                    let (links, n) = list(conn, &f(sort, offset)).unwrap();
                    let got: Vec<Id> = links.iter().map(|l| l.id).collect();
                    let want: Vec<Id> = expected
                        .iter()
                        .skip(offset as usize)
                        .take(10)
                        .map(|r| r.0)
                        .collect();
                    let case = format!("{term:?} {status:?} {space:?} {sort:?} at {offset}");
                    prop_assert_eq!((n, got), (Total::exact(total), want), "{}", case);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn facts_and_large_searches_agree_with_the_rows_after_any_writes(
        ops in proptest::collection::vec(op(), 1..30)
    ) {
        // As the service's connections are: a term's triples read their candidates through
        // the array module.
        let mut conn = schema::in_memory();
        conn.execute("INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0)", [])
            .unwrap();
        for space in 1..=3 {
            conn.execute(
                "INSERT INTO spaces (id, owner_id, name, color, created_at, updated_at) \
                 VALUES (?1, 1, ?1, 1, 0, 0)",
                [space],
            )
            .unwrap();
        }
        let (mut deleted, mut n) = (Vec::new(), 0);
        for op in &ops {
            let tx = conn.transaction().unwrap();
            apply(&tx, op, &mut deleted, &mut n);
            // Between the write and the end of its transaction, as another statement of the
            // same transaction would read.
            check_facts(&tx)?;
            // As every write transaction ends (`Db`).
            search::short::settle(&tx).unwrap();
            settle(&tx).unwrap();
            tx.commit().unwrap();
            check_facts(&conn)?;
            check_lists(&conn)?;
        }
    }
}
