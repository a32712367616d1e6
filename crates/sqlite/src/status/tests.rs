//! Every status statement against the Rust rule, on a table of links at the rules' edges.

use std::collections::BTreeSet;

use jiff::Timestamp;
use rusqlite::{Connection, params};

use super::*;
use crate::Db;
use linkdeck_domain::LinkStatus;

const OWNER: i64 = 1;
const NOW: i64 = 1_800_000_000;

/// One link's status columns.
#[derive(Debug, Clone, Copy)]
struct Edge {
    id: i64,
    disabled: bool,
    ends_at: Option<i64>,
    expiration_clicks: u32,
    clicks: u64,
}

impl Edge {
    fn derive(self, ends_at: Option<i64>, expiration_clicks: u32) -> LinkStatus {
        let ts = |s: i64| Timestamp::from_second(s).unwrap();
        LinkStatus::derive(
            self.disabled,
            ends_at.map(ts),
            expiration_clicks,
            self.clicks,
            ts(NOW),
        )
    }
    fn expired(self) -> bool {
        self.derive(self.ends_at, self.expiration_clicks).expired
    }
    fn by_date(self) -> bool {
        self.derive(self.ends_at, 0).expired
    }
    fn by_clicks(self) -> bool {
        self.derive(None, self.expiration_clicks).expired
    }
    fn active(self) -> bool {
        self.derive(self.ends_at, self.expiration_clicks)
            .is_active()
    }
}

/// Disabled or not × no expiry, past, exactly now, future × no limit, under, at and over it.
fn edges() -> Vec<Edge> {
    let mut edges = Vec::new();
    for disabled in [false, true] {
        for ends_at in [None, Some(NOW - 1), Some(NOW), Some(NOW + 1)] {
            for (expiration_clicks, clicks) in [(0, 0), (0, 7), (3, 2), (3, 3), (3, 4)] {
                edges.push(Edge {
                    id: edges.len() as i64 + 1,
                    disabled,
                    ends_at,
                    expiration_clicks,
                    clicks,
                });
            }
        }
    }
    edges
}

fn database(dir: &tempfile::TempDir, edges: &[Edge]) -> Db {
    let db = Db::open(&dir.path().join("status.db")).unwrap();
    db.write_blocking(|tx| {
        for (owner, name) in [(OWNER, "one"), (OWNER + 1, "other")] {
            tx.execute(
                "INSERT INTO owners (id, name, created_at) VALUES (?1, ?2, 0)",
                params![owner, name],
            )
            .unwrap();
        }
        let insert = |owner: i64, e: &Edge| {
            tx.execute(
                "INSERT INTO links (id, owner_id, alias, url, disabled, ends_at, \
                 expiration_clicks, clicks, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, 'https://example.com', ?4, ?5, ?6, ?7, 0, 0)",
                params![
                    e.id,
                    owner,
                    format!("a{}", e.id),
                    e.disabled,
                    e.ends_at,
                    e.expiration_clicks,
                    e.clicks as i64
                ],
            )
            .unwrap();
        };
        for e in edges {
            insert(OWNER, e);
        }
        // Another owner's link in every inactive state, which no statement may pick up.
        if let Some(&stray) = edges.iter().rev().find(|e| e.disabled && e.expired()) {
            insert(OWNER + 1, &Edge { id: 1_000, ..stray });
        }
        Ok(())
    })
    .unwrap();
    db
}

/// `?1` owner and `?2` now, as far as the statement takes them (the list predicates of
/// disabled links do not read the time).
fn ids(conn: &Connection, sql: &str) -> BTreeSet<i64> {
    let mut stmt = conn.prepare(sql).unwrap();
    let values = [OWNER, NOW];
    let values = &values[..stmt.parameter_count()];
    stmt.query_map(rusqlite::params_from_iter(values), |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn count(conn: &Connection, sql: &str) -> usize {
    conn.query_row(sql, params![OWNER, NOW], |r| r.get::<_, i64>(0))
        .unwrap() as usize
}

fn expected(edges: &[Edge], rule: impl Fn(&Edge) -> bool) -> BTreeSet<i64> {
    edges.iter().filter(|e| rule(e)).map(|e| e.id).collect()
}

#[test]
fn every_status_statement_selects_the_links_the_rust_rule_names() {
    let dir = tempfile::tempdir().unwrap();
    let edges = edges();
    let db = database(&dir, &edges);
    db.read_blocking(|conn| {
        let list = |predicate: &str| {
            ids(
                conn,
                &format!("SELECT l.id FROM links l WHERE l.owner_id = ?1 AND {predicate}"),
            )
        };
        assert_eq!(list(EXPIRED), expected(&edges, |e| e.expired()), "expired");
        assert_eq!(list(DISABLED), expected(&edges, |e| e.disabled), "disabled");
        assert_eq!(list(ACTIVE), expected(&edges, |e| e.active()), "active");

        assert_eq!(ids(conn, BY_DATE_IDS), expected(&edges, |e| e.by_date()));

        let n = |rule: &dyn Fn(&Edge) -> bool| expected(&edges, rule).len();
        assert_eq!(count(conn, COUNT_BY_DATE), n(&|e| e.by_date()));
        assert_eq!(count(conn, COUNT_DISABLED), n(&|e| e.disabled));
        assert_eq!(count(conn, COUNT_BY_CLICKS), n(&|e| e.by_clicks()));
        assert_eq!(
            count(conn, COUNT_BY_CLICKS_AND_DATE),
            n(&|e| e.by_clicks() && e.by_date())
        );
        assert_eq!(
            count(conn, COUNT_INACTIVE),
            n(&|e| e.disabled || e.by_clicks())
        );
        assert_eq!(
            count(conn, COUNT_INACTIVE_AND_DATE),
            n(&|e| (e.disabled || e.by_clicks()) && e.by_date())
        );
        // The table really is at the edges: every state is present, and none is everything.
        for state in [list(EXPIRED), list(DISABLED), list(ACTIVE)] {
            assert!(!state.is_empty() && state.len() < edges.len());
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn the_partial_indexes_hold_exactly_the_predicates() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir, &[]);
    db.read_blocking(|conn| {
        for &(index, predicate) in PARTIAL_INDEXES {
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
                    [index],
                    |r| r.get(0),
                )
                .unwrap();
            let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                sql.ends_with(&format!(" WHERE {predicate}")),
                "{index}: {sql}"
            );
        }
        Ok(())
    })
    .unwrap();
}

/// The facts large searches read (`search::facts`), with the ids ended by the time, give every
/// link the status the Rust rule gives it: read from the rows above the snapshot's watermark,
/// from the snapshot, and from the notes of links changed since.
#[test]
fn the_facts_of_large_searches_give_the_status_the_rust_rule_gives() {
    use crate::search::inside::{catch_up_facts, facts_of};
    let dir = tempfile::tempdir().unwrap();
    let mut edges = edges();
    let db = database(&dir, &edges);
    let check = |edges: &[Edge], when: &str| {
        db.read_blocking(|conn| {
            let all: roaring::RoaringTreemap = edges.iter().map(|e| e.id as u64).collect();
            let found = facts_of(conn, &all).unwrap();
            assert_eq!(found.len(), edges.len(), "{when}");
            for ((id, facts), e) in found.into_iter().zip(edges) {
                assert_eq!(id, e.id, "{when}");
                assert_eq!(facts.clicks, e.clicks, "{when} {e:?}");
                assert_eq!(
                    facts.status(e.by_date()),
                    e.derive(e.ends_at, e.expiration_clicks),
                    "{when} {e:?}"
                );
            }
            Ok(())
        })
        .unwrap();
    };
    check(&edges, "above the watermark");
    db.write_blocking(|tx| catch_up_facts(tx)).unwrap();
    check(&edges, "in the snapshot");
    // Each link moves to the next one's status columns, by the statements a writer would use.
    let next: Vec<Edge> = edges
        .iter()
        .zip(edges.iter().cycle().skip(1))
        .map(|(e, n)| Edge { id: e.id, ..*n })
        .collect();
    db.write_blocking(|tx| {
        for e in &next {
            tx.execute(
                "UPDATE links SET clicks = ?2 WHERE id = ?1",
                params![e.id, e.clicks as i64],
            )
            .unwrap();
            tx.execute(
                "UPDATE links SET disabled = ?2, expiration_clicks = ?3, ends_at = ?4 \
                 WHERE id = ?1",
                params![e.id, e.disabled, e.expiration_clicks, e.ends_at],
            )
            .unwrap();
        }
        Ok(())
    })
    .unwrap();
    edges = next;
    check(&edges, "noted since");
    db.write_blocking(|tx| catch_up_facts(tx)).unwrap();
    check(&edges, "folded in");
}
