//! A search the full-text index pages alone, counted to the contract's bound.

use jiff::Timestamp;
use rusqlite::Connection;

use super::{ListFilter, search_in_id_order};
use crate::{links, schema};
use linkdeck_domain::{Id, SearchBy, Sort, StatusFilter, Total};
use linkdeck_store::{Counted, LinkRow};

/// A database of owner 1's links 1 to `count`, each as `fill` makes link n (ids follow n),
/// staged and indexed as an import does; nothing settled, so no common term is chosen.
fn database_of(count: u64, fill: impl Fn(u64, &mut LinkRow) -> Counted) -> Connection {
    let mut conn = schema::in_memory();
    conn.execute(
        "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0)",
        [],
    )
    .unwrap();
    let tx = conn.transaction().unwrap();
    let mut staged = links::stage_start(&tx).unwrap();
    for n in 1..=count {
        let mut row = LinkRow::blank(1, Timestamp::UNIX_EPOCH);
        row.alias = format!("x{n}");
        let counted = fill(n, &mut row);
        links::stage(&tx, &mut staged, &row, counted).unwrap();
    }
    links::stage_insert(&tx, staged).unwrap();
    tx.commit().unwrap();
    conn
}

/// Owner 1's page of ten links from `offset` whose URL holds `term`.
fn url_search(term: &str, status: StatusFilter, sort: Sort, offset: u64) -> ListFilter<'_> {
    ListFilter {
        owner: 1,
        search: Some((SearchBy::Url, term)),
        status,
        space: Default::default(),
        domain: None,
        tags: &[],
        tag_match: Default::default(),
        sort,
        offset,
        limit: 10,
        now: Timestamp::UNIX_EPOCH,
    }
}

/// 10,050 links of owner 1 whose URLs all hold `ctions/holid`.
fn database() -> Connection {
    database_of(10_050, |n, row| {
        row.url = format!("https://x.example/collections/holiday-{}/{n}", n % 17);
        Counted::default()
    })
}

#[test]
fn a_full_text_search_in_id_order_is_counted_to_the_bound() {
    let conn = database();
    let newest_first: Vec<Id> = (1..=10_050).rev().collect();
    for sort in [Sort::Desc, Sort::Asc] {
        let expected: Vec<Id> = match sort {
            Sort::Desc => newest_first.clone(),
            _ => newest_first.iter().rev().copied().collect(),
        };
        // (rows before the page, its total)
        for (offset, total) in [
            (0, Total::at_least(10_001)),
            (10_000, Total::at_least(10_011)),
            (10_040, Total::exact(10_050)),
        ] {
            let f = url_search("ctions/holid", StatusFilter::All, sort, offset);
            let (links, got) = search_in_id_order(&conn, &f).unwrap().unwrap();
            let what = format!("{sort:?} at {offset}");
            assert_eq!(got, total, "{what}");
            let ids: Vec<Id> = links.iter().map(|l| l.id).collect();
            let from = offset as usize;
            assert_eq!(ids, expected[from..(from + 10).min(10_050)], "{what}");
        }
    }
}

/// A term held by most of 24,000 links, left by its triples as candidates (one longer than the
/// full-text index is asked for whole, and one shorter): they are checked in the list's order
/// and the count stops at the bound.
mod long_shared_term {
    use super::*;
    use crate::search::list;

    const LINKS: u64 = 24_000;
    /// Longer than `WHOLE_MAX`, and not.
    const TERMS: [&str; 2] = ["Example-Store.com/Collections", "Store.com/Collections/c"];

    /// Link n is in the shared shop unless n is a multiple of 7, disabled when a multiple of 11,
    /// and has clicks scattered (and tied) by n.
    fn in_shop(n: u64) -> bool {
        !n.is_multiple_of(7)
    }

    fn clicks(n: u64) -> u64 {
        n * 7_919 % 1_000
    }

    fn database() -> Connection {
        database_of(LINKS, |n, row| {
            row.url = match in_shop(n) {
                true => format!("https://shop.example-store.com/collections/c{}/{n}", n % 13),
                false => format!("https://other.example/collections/{n}"),
            };
            row.disabled = n.is_multiple_of(11);
            Counted {
                clicks: clicks(n),
                previews: 0,
            }
        })
    }

    /// Every link's id, folded URL, clicks and whether it is disabled, as stored now.
    fn rows(conn: &Connection) -> Vec<(u64, String, bool)> {
        let mut stmt = conn
            .prepare("SELECT id, url, disabled FROM links ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| {
            let url: String = r.get(1)?;
            Ok((r.get::<_, i64>(0)? as u64, url.to_lowercase(), r.get(2)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    /// Link n's place in `sort`: the ids in the list's order.
    fn ordered(mut ids: Vec<u64>, sort: Sort) -> Vec<u64> {
        match sort {
            Sort::Desc => ids.sort_by(|a, b| b.cmp(a)),
            Sort::Asc => ids.sort(),
            Sort::Max => ids.sort_by_key(|&n| std::cmp::Reverse((clicks(n), n))),
            Sort::Min => ids.sort_by_key(|&n| (clicks(n), n)),
        }
        ids
    }

    #[test]
    fn each_page_is_the_matches_in_order_and_the_count_stops_at_the_bound() {
        let conn = database();
        // Written after the index took the links in: one leaves the shop and one joins it.
        conn.execute(
            "UPDATE links SET url = 'https://elsewhere.example/' WHERE id = 1",
            [],
        )
        .unwrap();
        conn.execute(
            "UPDATE links SET url = 'https://shop.example-store.com/collections/now' \
             WHERE id = 7",
            [],
        )
        .unwrap();
        let rows = rows(&conn);
        for (term, status) in TERMS.into_iter().flat_map(|term| {
            [
                StatusFilter::All,
                StatusFilter::Active,
                StatusFilter::Disabled,
            ]
            .map(|s| (term, s))
        }) {
            let folded = term.to_lowercase();
            let matching: Vec<u64> = rows
                .iter()
                .filter(|(_, url, disabled)| {
                    url.contains(&folded)
                        && match status {
                            StatusFilter::Disabled => *disabled,
                            StatusFilter::Active => !*disabled,
                            _ => true,
                        }
                })
                .map(|(id, _, _)| *id)
                .collect();
            let all = matching.len() as u64;
            for sort in [Sort::Desc, Sort::Asc, Sort::Max, Sort::Min] {
                let expected = ordered(matching.clone(), sort);
                for offset in [0, 9_990, 10_000, 15_000, all - 5] {
                    let f = url_search(term, status, sort, offset);
                    let (links, total) = list(&conn, &f).unwrap();
                    let what = format!("{term} {status:?} {sort:?} at {offset}");
                    let ids: Vec<u64> = links.iter().map(|l| l.id as u64).collect();
                    let from = (offset as usize).min(expected.len());
                    let to = (from + 10).min(expected.len());
                    assert_eq!(ids, expected[from..to], "{what}");
                    let bounded = Total::at_least(f.count_limit());
                    if f.count_limit() > all {
                        assert_eq!(total, Total::exact(all), "{what}");
                    } else if status != StatusFilter::Disabled
                        && (offset == 0
                            || matches!(sort, Sort::Desc | Sort::Asc) && offset <= 10_000)
                    {
                        // What makes the term quick: checking stopped at the bound.
                        assert_eq!(total, bounded, "{what}");
                    } else {
                        // Deeper, checking every candidate can cost less.
                        assert!(total == bounded || total == Total::exact(all), "{what}");
                    }
                }
            }
        }
    }
}

/// A term's candidates met in a clicks order by their facts: every candidate that is a link,
/// most (or fewest) clicks first, ties by id the same way, whatever its status (each candidate's
/// check decides that), clicks written after the snapshot of facts included.
#[test]
fn candidates_in_clicks_order_are_ranked_by_their_facts() {
    use super::sets::in_clicks_order;

    let clicks = |n: u64| n * 7_919 % 40;
    let conn = database_of(3_000, |n, row| {
        row.url = format!("https://x.example/{n}");
        row.disabled = n.is_multiple_of(11);
        if n.is_multiple_of(5) {
            row.expiration_clicks = 30;
        }
        Counted {
            clicks: clicks(n),
            previews: 0,
        }
    });
    super::facts::catch_up(&conn).unwrap();
    // Clicked since: link 3 now has the most.
    conn.execute("UPDATE links SET clicks = 1000 WHERE id = 3", [])
        .unwrap();
    let clicks = |n: u64| if n == 3 { 1000 } else { clicks(n) };
    // Every third link, and ids no link has.
    let mut candidates: roaring::RoaringTreemap = (3..=3_000).step_by(3).collect();
    candidates.insert_range(5_000..5_010);
    for status in [
        StatusFilter::All,
        StatusFilter::Active,
        StatusFilter::Disabled,
    ] {
        for sort in [Sort::Max, Sort::Min] {
            let f = url_search("x.example", status, sort, 0);
            let mut expected: Vec<u64> = (3..=3_000).step_by(3).collect();
            match sort {
                Sort::Max => expected.sort_by_key(|&n| std::cmp::Reverse((clicks(n), n))),
                _ => expected.sort_by_key(|&n| (clicks(n), n)),
            }
            let got: Vec<u64> = in_clicks_order(&conn, &f, &candidates)
                .unwrap()
                .into_iter()
                .map(|id| id as u64)
                .collect();
            assert_eq!(got, expected, "{status:?} {sort:?}");
        }
    }
}
