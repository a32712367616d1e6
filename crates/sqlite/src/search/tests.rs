//! A search the full-text index pages alone, counted to the contract's bound.

use jiff::Timestamp;
use rusqlite::Connection;

use super::{ListFilter, search_in_id_order};
use crate::{links, schema};
use linkdeck_domain::{Id, SearchBy, Sort, StatusFilter, Total};

/// 10,050 links of owner 1 whose URLs all hold `ctions/holid`.
fn database() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    rusqlite::vtab::array::load_module(&conn).unwrap();
    schema::migrate(&mut conn).unwrap();
    conn.execute(
        "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0)",
        [],
    )
    .unwrap();
    let tx = conn.transaction().unwrap();
    let mut staged = links::stage_start(&tx).unwrap();
    for n in 0..10_050u64 {
        let mut row = linkdeck_store::LinkRow::blank(1, Timestamp::UNIX_EPOCH);
        row.url = format!("https://x.example/collections/holiday-{}/{n}", n % 17);
        row.alias = format!("x{n}");
        links::stage(&tx, &mut staged, &row, Default::default()).unwrap();
    }
    links::stage_insert(&tx, staged).unwrap();
    tx.commit().unwrap();
    conn
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
            let f = ListFilter {
                owner: 1,
                search: Some((SearchBy::Url, "ctions/holid")),
                status: StatusFilter::All,
                space: Default::default(),
                domain: None,
                tags: &[],
                tag_match: Default::default(),
                sort,
                offset,
                limit: 10,
                now: Timestamp::UNIX_EPOCH,
            };
            let (links, got) = search_in_id_order(&conn, &f).unwrap().unwrap();
            let what = format!("{sort:?} at {offset}");
            assert_eq!(got, total, "{what}");
            let ids: Vec<Id> = links.iter().map(|l| l.id).collect();
            let from = offset as usize;
            assert_eq!(ids, expected[from..(from + 10).min(10_050)], "{what}");
        }
    }
}
