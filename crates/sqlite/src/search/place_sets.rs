//! Each space's links and each domain's, and the links in no space or on no domain, as bitmaps
//! ([`stored_sets`]), so that a list in a place — no space holds most links on most databases,
//! and one domain may hold most of them too — learns which links those are from a few rows.
//! Read from the index of spaces, the 700,000 ids of a million links' no space took 13 ms, and
//! every list there paid it (30–80 ms in all, where the same list in every space took 1–14).
//!
//! The database keeps them in step, so no writer has to remember them. Links above a place's
//! watermark (`space_sets_upto`, `domain_sets_upto`) are not in its sets yet; the triggers of
//! `links` note each (owner, place, link) a link at or below it joins or leaves (a move, a
//! deleted space, a deleted link, one put back under its old id), and every write
//! transaction's [`settle`] takes both in before it commits: a link's membership is read from
//! its row as it is then, so the order of the changes noted does not matter.

use roaring::RoaringTreemap;
use rusqlite::Connection;
use rusqlite::types::Value;

use super::bitmaps;
use super::stored_sets::{self, Family};
use crate::sql::Statements;
use linkdeck_domain::{Id, Result};

/// One kind of place: its sets, notes and watermark, and the column and index of `links` that
/// say it. A link in none (no space, the default domain) is under key 0: rows are numbered
/// from 1.
pub struct Place {
    sets: Family,
    notes: &'static str,
    upto: &'static str,
    column: &'static str,
    index: &'static str,
}

pub const SPACES: Place = Place {
    sets: Family {
        table: "space_sets",
        key: "space",
        what: "space",
    },
    notes: "space_set_notes",
    upto: "space_sets_upto",
    column: "space_id",
    index: "links_owner_space",
};

pub const DOMAINS: Place = Place {
    sets: Family {
        table: "domain_sets",
        key: "domain",
        what: "domain",
    },
    notes: "domain_set_notes",
    upto: "domain_sets_upto",
    column: "domain_id",
    index: "links_owner_domain",
};

/// The ids of `owner`'s links in `place`'s `key` (a space or a domain), or in none. Inside a
/// write transaction whose links are not all taken in yet, read from the place's index
/// instead.
pub fn ids(conn: &Connection, place: &Place, owner: Id, key: Option<Id>) -> Result<RoaringTreemap> {
    if pending(conn, place)? {
        let Place { column, index, .. } = place;
        let ids: Vec<u64> = conn.all(
            &format!(
                "SELECT id FROM links INDEXED BY {index} WHERE owner_id = ?1 AND {column} IS ?2"
            ),
            rusqlite::params![owner, key],
            |r| r.get::<_, Id>(0).map(|id| id as u64),
        )?;
        return Ok(bitmaps::set_of(ids));
    }
    let key = Value::Integer(key.unwrap_or(0));
    stored_sets::read(conn, &place.sets, owner, &key)
}

/// Whether any link's place is not in the sets yet.
fn pending(conn: &Connection, place: &Place) -> Result<bool> {
    let Place { notes, upto, .. } = place;
    conn.exists(
        &format!(
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM {notes}) \
                OR EXISTS (SELECT 1 FROM links WHERE id > (SELECT upto FROM {upto}))"
        ),
        [],
    )
}

/// Takes in, for every kind of place, the links above its watermark and what its triggers
/// noted.
pub fn settle(tx: &Connection) -> Result<()> {
    let last = super::facts::last_id(tx)?;
    settle_place(tx, &SPACES, last)?;
    settle_place(tx, &DOMAINS, last)
}

/// [`settle`] for one kind of place, `last` the highest link id: each set's row read and
/// written once however many of its links came or changed.
fn settle_place(tx: &Connection, place: &Place, last: Id) -> Result<()> {
    let Place {
        sets,
        notes,
        upto: upto_table,
        column,
        ..
    } = place;
    let key = &sets.key;
    let upto: Id = tx.row(&format!("SELECT upto FROM {upto_table}"), [], |r| r.get(0))?;
    if last > upto {
        stored_sets::apply(
            tx,
            sets,
            &format!(
                "SELECT owner_id, ifnull({column}, 0), id, 1 FROM links WHERE id > ?1 \
                 ORDER BY owner_id, ifnull({column}, 0), id"
            ),
            [upto],
        )?;
        tx.run(&format!("UPDATE {upto_table} SET upto = ?1"), [last])?;
    }
    if tx.exists(&format!("SELECT 1 FROM {notes} LIMIT 1"), [])? {
        stored_sets::apply(
            tx,
            sets,
            &format!(
                "SELECT n.owner_id, n.{key}, n.link_id, l.id IS NOT NULL \
                 FROM {notes} n LEFT JOIN links l \
                   ON l.id = n.link_id AND l.owner_id = n.owner_id \
                  AND ifnull(l.{column}, 0) = n.{key} \
                 ORDER BY n.owner_id, n.{key}, n.link_id"
            ),
            [],
        )?;
        tx.run(&format!("DELETE FROM {notes}"), [])?;
    }
    Ok(())
}

/// Builds every set of `place` anew from the links: after the migration that adds them.
fn rebuild(tx: &Connection, place: &Place) -> Result<()> {
    let Place {
        sets, notes, upto, ..
    } = place;
    tx.run(&format!("DELETE FROM {}", sets.table), [])?;
    tx.run(&format!("DELETE FROM {notes}"), [])?;
    tx.run(&format!("UPDATE {upto} SET upto = 0"), [])?;
    settle_place(tx, place, super::facts::last_id(tx)?)
}

/// The spaces' sets built anew (migration 23).
pub fn rebuild_spaces(tx: &Connection) -> Result<()> {
    rebuild(tx, &SPACES)
}

/// The domains' sets built anew (migration 24).
pub fn rebuild_domains(tx: &Connection) -> Result<()> {
    rebuild(tx, &DOMAINS)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rusqlite::params;

    use super::stored_sets::BLOCK_BITS;
    use super::*;

    /// A write to links' places as any statement makes it. Spaces and domains are numbered 1
    /// and 2 for each owner, 0 for none.
    #[derive(Debug, Clone)]
    enum Op {
        /// A link of `owner`, its id a little past the last or far on in another block.
        Create {
            owner: Id,
            space: usize,
            domain: usize,
            far: bool,
        },
        Move {
            pick: usize,
            space: usize,
        },
        MoveDomain {
            pick: usize,
            domain: usize,
        },
        Delete {
            pick: usize,
        },
        /// A deleted link put back under its old id, below the watermark.
        Restore {
            pick: usize,
        },
        /// A space deleted: its links are left in no space, by a foreign key action.
        DropSpace {
            space: usize,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1..=2i64, 0..3usize, 0..3usize, proptest::bool::weighted(0.2))
                .prop_map(|(owner, space, domain, far)| Op::Create { owner, space, domain, far }),
            2 => (any::<usize>(), 0..3usize).prop_map(|(pick, space)| Op::Move { pick, space }),
            2 => (any::<usize>(), 0..3usize)
                .prop_map(|(pick, domain)| Op::MoveDomain { pick, domain }),
            1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
            1 => any::<usize>().prop_map(|pick| Op::Restore { pick }),
            1 => (1..3usize).prop_map(|space| Op::DropSpace { space }),
        ]
    }

    /// Space `n` of `owner`, made when first asked for; None for 0.
    fn space(conn: &Connection, owner: Id, n: usize) -> Option<Id> {
        let name = format!("s{n}");
        (n > 0).then(|| {
            conn.run(
                "INSERT OR IGNORE INTO spaces (owner_id, name, color, created_at, updated_at) \
                 VALUES (?1, ?2, 1, 0, 0)",
                params![owner, name],
            )
            .unwrap();
            conn.row(
                "SELECT id FROM spaces WHERE owner_id = ?1 AND name = ?2",
                params![owner, name],
                |r| r.get(0),
            )
            .unwrap()
        })
    }

    /// Domain `n` of `owner`, made when first asked for; None for 0.
    fn domain(conn: &Connection, owner: Id, n: usize) -> Option<Id> {
        let name = format!("d{n}-{owner}.example");
        (n > 0).then(|| {
            conn.run(
                "INSERT OR IGNORE INTO domains (owner_id, name, host, created_at, updated_at) \
                 VALUES (?1, ?2, ?2, 0, 0)",
                params![owner, name],
            )
            .unwrap();
            conn.row("SELECT id FROM domains WHERE name = ?1", [&name], |r| {
                r.get(0)
            })
            .unwrap()
        })
    }

    fn apply(conn: &Connection, op: &Op, gone: &mut Vec<(Id, Id)>) {
        let links: Vec<(Id, Id)> = conn
            .all("SELECT id, owner_id FROM links ORDER BY id", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let insert = |id: Id, owner: Id, space: Option<Id>, domain: Option<Id>| {
            conn.run(
                "INSERT INTO links \
                 (id, owner_id, space_id, domain_id, alias, url, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?1, 'u', 0, 0)",
                params![id, owner, space, domain],
            )
            .unwrap();
        };
        let set = |column: &str, pick: usize, to: &dyn Fn(Id) -> Option<Id>| {
            if let Some(&(id, owner)) = links.get(pick % links.len().max(1)) {
                conn.run(
                    &format!("UPDATE links SET {column} = ?2 WHERE id = ?1"),
                    params![id, to(owner)],
                )
                .unwrap();
            }
        };
        match *op {
            Op::Create {
                owner,
                space: s,
                domain: d,
                far,
            } => {
                let last = links
                    .last()
                    .map_or(0, |l| l.0)
                    .max(gone.iter().map(|g| g.0).max().unwrap_or(0));
                let id = if far {
                    last + (1 << BLOCK_BITS) + 7
                } else {
                    last + 1
                };
                insert(id, owner, space(conn, owner, s), domain(conn, owner, d));
            }
            Op::Move { pick, space: n } => set("space_id", pick, &|o| space(conn, o, n)),
            Op::MoveDomain { pick, domain: n } => {
                set("domain_id", pick, &|o| domain(conn, o, n));
            }
            Op::Delete { pick } if !links.is_empty() => {
                let (id, owner) = links[pick % links.len()];
                conn.run("DELETE FROM links WHERE id = ?1", [id]).unwrap();
                gone.push((id, owner));
            }
            Op::Restore { pick } if !gone.is_empty() => {
                let (id, owner) = gone.remove(pick % gone.len());
                insert(id, owner, space(conn, owner, 1), domain(conn, owner, 1));
            }
            Op::DropSpace { space: n } => {
                conn.run("DELETE FROM spaces WHERE name = ?1", [format!("s{n}")])
                    .unwrap();
            }
            _ => {}
        }
    }

    /// Every owner's every place of both kinds read as a list reads it, against the links
    /// themselves.
    fn check(conn: &Connection) {
        for (place, table) in [(&SPACES, "spaces"), (&DOMAINS, "domains")] {
            let keys: Vec<(Id, Id)> = conn
                .all(&format!("SELECT owner_id, id FROM {table}"), [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            let keys = keys
                .iter()
                .map(|&(owner, key)| (owner, Some(key)))
                .chain([(1, None), (2, None)]);
            for (owner, key) in keys {
                let truth: Vec<u64> = conn
                    .all(
                        &format!(
                            "SELECT id FROM links WHERE owner_id = ?1 AND {} IS ?2 ORDER BY id",
                            place.column
                        ),
                        params![owner, key],
                        |r| r.get::<_, Id>(0).map(|id| id as u64),
                    )
                    .unwrap();
                let read: Vec<u64> = ids(conn, place, owner, key).unwrap().iter().collect();
                assert_eq!(read, truth, "{table}: owner {owner}, {key:?}");
            }
        }
    }

    fn rebuild_both(tx: &Connection) -> Result<()> {
        rebuild_spaces(tx)?;
        rebuild_domains(tx)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Writes in transactions of one or several statements, each settled as the store's
        /// write path settles it: a place's bitmaps always hold exactly its links, read inside
        /// a transaction before it settles as well as after, and built anew by a migration.
        #[test]
        fn a_places_bitmaps_hold_exactly_its_links(
            batches in proptest::collection::vec(proptest::collection::vec(op(), 1..6), 1..25)
        ) {
            let mut gone = Vec::new();
            let apply = |conn: &Connection, op: &Op| apply(conn, op, &mut gone);
            let mut conn = stored_sets::two_owners();
            stored_sets::check_through_writes(&mut conn, &batches, apply, check, rebuild_both);
        }
    }
}
