//! Each tag's links as bitmaps ([`stored_sets`]): a row `(owner, tag, block) → ids`, so a tag
//! filter reads a few rows instead of one row of `link_tags` per link (a tag on a quarter of a
//! million links cost 25–40 ms a question that way).
//!
//! The database keeps them in step, so no writer has to remember them: the triggers of
//! `link_tags` note each (owner, tag, link) it gains or loses in `tag_set_notes`, and every write
//! transaction's [`settle`] takes the notes in before it commits. A link's membership is read
//! from `link_tags` as it is then, so the order of the changes noted does not matter.

use roaring::RoaringTreemap;
use rusqlite::Connection;
use rusqlite::types::Value;

use super::bitmaps;
use super::stored_sets::{self, Family};
use crate::sql::Statements;
use linkdeck_domain::{Id, Result};

const TAGS: Family = Family {
    table: "tag_sets",
    key: "tag",
    what: "tag",
};

/// The ids of `owner`'s links carrying `tag`. Inside a write transaction that changed tags
/// (notes not yet taken in), read from `link_tags` itself.
pub fn ids(conn: &Connection, owner: Id, tag: &str) -> Result<RoaringTreemap> {
    if conn.exists("SELECT 1 FROM tag_set_notes LIMIT 1", [])? {
        return Ok(bitmaps::set_of(crate::tags::link_ids(conn, owner, tag)?));
    }
    stored_sets::read(conn, &TAGS, owner, &Value::Text(tag.to_owned()))
}

/// Takes in what the triggers noted: each noted link joins or leaves its tag's row as
/// `link_tags` now says, a row read and written once however many of its links changed.
pub fn settle(tx: &Connection) -> Result<()> {
    if !tx.exists("SELECT 1 FROM tag_set_notes LIMIT 1", [])? {
        return Ok(());
    }
    stored_sets::apply(
        tx,
        &TAGS,
        "SELECT n.owner_id, n.tag, n.link_id, t.link_id IS NOT NULL \
         FROM tag_set_notes n LEFT JOIN link_tags t \
           ON t.owner_id = n.owner_id AND t.tag = n.tag AND t.link_id = n.link_id \
         ORDER BY n.owner_id, n.tag, n.link_id",
        [],
    )?;
    tx.run("DELETE FROM tag_set_notes", [])?;
    Ok(())
}

/// Builds every row anew from `link_tags`: after a migration, or rows that arrived without the
/// triggers.
pub fn rebuild(tx: &Connection) -> Result<()> {
    tx.run("DELETE FROM tag_sets", [])?;
    tx.run(
        "INSERT OR IGNORE INTO tag_set_notes (owner_id, tag, link_id) \
         SELECT owner_id, tag, link_id FROM link_tags",
        [],
    )?;
    settle(tx)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;
    use rusqlite::params;

    use super::stored_sets::BLOCK_BITS;
    use super::*;

    const TAGS: [&str; 4] = ["a", "b", "c", "d"];

    /// A write to links' tags as any statement makes it.
    #[derive(Debug, Clone)]
    enum Op {
        /// A link with these tags (of [`TAGS`]), its id a little past the last or far on in
        /// another block.
        Create {
            owner: Id,
            tags: Vec<usize>,
            far: bool,
        },
        Retag {
            pick: usize,
            tags: Vec<usize>,
        },
        Delete {
            pick: usize,
        },
    }

    fn tags() -> impl Strategy<Value = Vec<usize>> {
        proptest::collection::vec(0..TAGS.len(), 0..3)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1..=2i64, tags(), proptest::bool::weighted(0.2))
                .prop_map(|(owner, tags, far)| Op::Create { owner, tags, far }),
            3 => (any::<usize>(), tags()).prop_map(|(pick, tags)| Op::Retag { pick, tags }),
            1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        ]
    }

    fn json(tags: &[usize]) -> Option<String> {
        let names: BTreeSet<&str> = tags.iter().map(|&t| TAGS[t]).collect();
        let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        (!names.is_empty()).then(|| format!("[{}]", quoted.join(",")))
    }

    fn apply(conn: &Connection, op: &Op) {
        let ids: Vec<Id> = conn
            .all("SELECT id FROM links ORDER BY id", [], |r| r.get(0))
            .unwrap();
        match op {
            Op::Create { owner, tags, far } => {
                let last = ids.last().copied().unwrap_or(0);
                let id = if *far {
                    last + (1 << BLOCK_BITS) + 7
                } else {
                    last + 1
                };
                conn.run(
                    "INSERT INTO links (id, owner_id, alias, url, created_at, updated_at, tags) \
                     VALUES (?1, ?2, ?1, 'u', 0, 0, ?3)",
                    params![id, owner, json(tags)],
                )
                .unwrap();
            }
            Op::Retag { pick, tags } if !ids.is_empty() => {
                conn.run(
                    "UPDATE links SET tags = ?2 WHERE id = ?1",
                    params![ids[pick % ids.len()], json(tags)],
                )
                .unwrap();
            }
            Op::Delete { pick } if !ids.is_empty() => {
                conn.run("DELETE FROM links WHERE id = ?1", [ids[pick % ids.len()]])
                    .unwrap();
            }
            _ => {}
        }
    }

    /// Every owner's every tag read as a tag filter reads it, against `link_tags` itself.
    fn check(conn: &Connection) {
        for owner in 1..=2 {
            for tag in TAGS {
                let truth: Vec<u64> = crate::tags::link_ids(conn, owner, tag).unwrap();
                let read: Vec<u64> = ids(conn, owner, tag).unwrap().iter().collect();
                assert_eq!(read, truth, "owner {owner}, tag {tag}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Writes in transactions of one or several statements, each settled as the store's
        /// write path settles it: a tag's bitmaps always hold exactly its links, read inside a
        /// transaction before it settles as well as after, and built anew by a migration.
        #[test]
        fn a_tags_bitmaps_hold_exactly_its_links(
            batches in proptest::collection::vec(proptest::collection::vec(op(), 1..6), 1..25)
        ) {
            stored_sets::check_through_writes(&mut stored_sets::two_owners(), &batches, apply, check, rebuild);
        }
    }
}
