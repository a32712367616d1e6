//! Each space's links, and the links in no space, as bitmaps ([`stored_sets`]), so that a list
//! in no space — most links, on most databases — learns which links those are from a few rows.
//! Read from the index of spaces, the 700,000 ids of a million links' no space took 13 ms, and
//! every list there paid it (30–80 ms in all, where the same list in every space took 1–14).
//!
//! The database keeps them in step, so no writer has to remember them. Links above the
//! watermark (`space_sets_upto`) are not in the sets yet; the triggers of `links` note each
//! (owner, space, link) a link at or below it joins or leaves in `space_set_notes` (a new
//! space, a deleted space, a deleted link, one put back under its old id), and every write
//! transaction's [`settle`] takes both in before it commits: a link's membership is read from
//! its row as it is then, so the order of the changes noted does not matter.

use roaring::RoaringTreemap;
use rusqlite::types::Value;
use rusqlite::{Connection, params};

use super::bitmaps;
use super::stored_sets::{self, Family};
use crate::sql::Statements;
use linkdeck_domain::{Id, Result};

const SPACES: Family = Family {
    table: "space_sets",
    key: "space",
    what: "space",
};

/// The key of the links in no space: spaces are numbered from 1.
const NO_SPACE: i64 = 0;

/// The ids of `owner`'s links in `space`, or in none. Inside a write transaction whose links
/// are not all taken in yet, read from the index of spaces instead.
pub fn ids(conn: &Connection, owner: Id, space: Option<Id>) -> Result<RoaringTreemap> {
    if pending(conn)? {
        let ids: Vec<u64> = match space {
            Some(space) => conn.all(
                "SELECT id FROM links INDEXED BY links_owner_space \
                 WHERE owner_id = ?1 AND space_id = ?2",
                params![owner, space],
                |r| r.get::<_, Id>(0).map(|id| id as u64),
            )?,
            None => conn.all(
                "SELECT id FROM links INDEXED BY links_owner_space \
                 WHERE owner_id = ?1 AND space_id IS NULL",
                [owner],
                |r| r.get::<_, Id>(0).map(|id| id as u64),
            )?,
        };
        return Ok(bitmaps::set_of(ids));
    }
    let key = Value::Integer(space.unwrap_or(NO_SPACE));
    stored_sets::read(conn, &SPACES, owner, &key)
}

/// Whether any link's place is not in the sets yet.
fn pending(conn: &Connection) -> Result<bool> {
    conn.exists(
        "SELECT 1 WHERE EXISTS (SELECT 1 FROM space_set_notes) \
            OR EXISTS (SELECT 1 FROM links WHERE id > (SELECT upto FROM space_sets_upto))",
        [],
    )
}

/// Takes in the links above the watermark and what the triggers noted, each set's row read and
/// written once however many of its links came or changed.
pub fn settle(tx: &Connection) -> Result<()> {
    let upto: Id = tx.row("SELECT upto FROM space_sets_upto", [], |r| r.get(0))?;
    let last: Id = tx.row("SELECT ifnull(max(id), 0) FROM links", [], |r| r.get(0))?;
    if last > upto {
        stored_sets::apply(
            tx,
            &SPACES,
            "SELECT owner_id, ifnull(space_id, 0), id, 1 FROM links WHERE id > ?1 \
             ORDER BY owner_id, ifnull(space_id, 0), id",
            [upto],
        )?;
        tx.run("UPDATE space_sets_upto SET upto = ?1", [last])?;
    }
    if tx.exists("SELECT 1 FROM space_set_notes LIMIT 1", [])? {
        stored_sets::apply(
            tx,
            &SPACES,
            "SELECT n.owner_id, n.space, n.link_id, l.id IS NOT NULL \
             FROM space_set_notes n LEFT JOIN links l \
               ON l.id = n.link_id AND l.owner_id = n.owner_id \
              AND ifnull(l.space_id, 0) = n.space \
             ORDER BY n.owner_id, n.space, n.link_id",
            [],
        )?;
        tx.run("DELETE FROM space_set_notes", [])?;
    }
    Ok(())
}

/// Builds every row anew from the links: after a migration.
pub fn rebuild(tx: &Connection) -> Result<()> {
    tx.run("DELETE FROM space_sets", [])?;
    tx.run("DELETE FROM space_set_notes", [])?;
    tx.run("UPDATE space_sets_upto SET upto = 0", [])?;
    settle(tx)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::stored_sets::BLOCK_BITS;
    use super::*;

    /// A write to links' places as any statement makes it.
    #[derive(Debug, Clone)]
    enum Op {
        /// A link in space `space` (0 for none) of its owner, its id a little past the last or
        /// far on in another block.
        Create {
            owner: Id,
            space: usize,
            far: bool,
        },
        Move {
            pick: usize,
            space: usize,
        },
        Delete {
            pick: usize,
        },
        /// A deleted link put back under its old id, below the watermark.
        Restore {
            pick: usize,
        },
        /// A space deleted: its links are left in no space.
        DropSpace {
            space: usize,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1..=2i64, 0..3usize, proptest::bool::weighted(0.2))
                .prop_map(|(owner, space, far)| Op::Create { owner, space, far }),
            3 => (any::<usize>(), 0..3usize).prop_map(|(pick, space)| Op::Move { pick, space }),
            1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
            1 => any::<usize>().prop_map(|pick| Op::Restore { pick }),
            1 => (1..3usize).prop_map(|space| Op::DropSpace { space }),
        ]
    }

    /// Space `n` (1 or 2) of `owner`, made when first asked for; None for 0.
    fn space(conn: &Connection, owner: Id, n: usize) -> Option<Id> {
        if n == 0 {
            return None;
        }
        let name = format!("s{n}");
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
        .ok()
    }

    fn apply(conn: &Connection, op: &Op, gone: &mut Vec<(Id, Id)>) {
        let links: Vec<(Id, Id)> = conn
            .all("SELECT id, owner_id FROM links ORDER BY id", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let insert = |id: Id, owner: Id, space: Option<Id>| {
            conn.run(
                "INSERT INTO links (id, owner_id, space_id, alias, url, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?1, 'u', 0, 0)",
                params![id, owner, space],
            )
            .unwrap();
        };
        match *op {
            Op::Create {
                owner,
                space: n,
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
                insert(id, owner, space(conn, owner, n));
            }
            Op::Move { pick, space: n } if !links.is_empty() => {
                let (id, owner) = links[pick % links.len()];
                conn.run(
                    "UPDATE links SET space_id = ?2 WHERE id = ?1",
                    params![id, space(conn, owner, n)],
                )
                .unwrap();
            }
            Op::Delete { pick } if !links.is_empty() => {
                let (id, owner) = links[pick % links.len()];
                conn.run("DELETE FROM links WHERE id = ?1", [id]).unwrap();
                gone.push((id, owner));
            }
            Op::Restore { pick } if !gone.is_empty() => {
                let (id, owner) = gone.remove(pick % gone.len());
                insert(id, owner, space(conn, owner, 1));
            }
            Op::DropSpace { space: n } => {
                conn.run("DELETE FROM spaces WHERE name = ?1", [format!("s{n}")])
                    .unwrap();
            }
            _ => {}
        }
    }

    /// Every owner's every place read as a list reads it, against the links themselves.
    fn check(conn: &Connection) {
        let spaces: Vec<(Id, Id)> = conn
            .all("SELECT owner_id, id FROM spaces", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let places = spaces
            .iter()
            .map(|&(owner, space)| (owner, Some(space)))
            .chain([(1, None), (2, None)]);
        for (owner, space) in places {
            let truth: Vec<u64> = conn
                .all(
                    "SELECT id FROM links WHERE owner_id = ?1 AND space_id IS ?2 ORDER BY id",
                    params![owner, space],
                    |r| r.get::<_, Id>(0).map(|id| id as u64),
                )
                .unwrap();
            let read: Vec<u64> = ids(conn, owner, space).unwrap().iter().collect();
            assert_eq!(read, truth, "owner {owner}, space {space:?}");
        }
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
            stored_sets::check_through_writes(&mut stored_sets::two_owners(), &batches, apply, check, rebuild);
        }
    }
}
