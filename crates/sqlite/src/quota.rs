//! A group of reserved clicks on SQLite (see the contract's `quota`): a limited link's
//! reserved clicks go straight into its row's `clicks`, and its rotation position into
//! `last_rotation`, so nothing needs settling after a crash. The caller's immediate
//! transaction holds the file's write lock, so what is read here cannot change before it is
//! written.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{Connection, OptionalExtension, params};

use crate::Db;
use crate::error::db_error;
use linkdeck_domain::{Error, Id, Result};
use linkdeck_store::quota::{self, Asked, Granted, Reserved};

/// Admits, link by link in id order, as many of the clicks asked as each link's limit has room
/// for, and moves its rotation position on by as many. Links without a limit, or gone, are left
/// out of the answer: their clicks are counted as any other link's.
pub fn reserve_group(
    conn: &Connection,
    asked: &BTreeMap<Id, Asked>,
) -> Result<HashMap<Id, Granted>> {
    let mut read = conn
        .prepare_cached("SELECT clicks, expiration_clicks, last_rotation FROM links WHERE id = ?1")
        .map_err(db_error)?;
    let mut take = conn
        .prepare_cached("UPDATE links SET clicks = clicks + ?2, last_rotation = ?3 WHERE id = ?1")
        .map_err(db_error)?;
    let mut out = HashMap::with_capacity(asked.len());
    for (&id, &wanted) in asked {
        let row: Option<(i64, i64, i64)> = read
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()
            .map_err(db_error)?;
        let Some((used, cap, position)) = row.filter(|&(_, cap, _)| cap > 0) else {
            continue;
        };
        let granted = Granted::of(used, cap, position, wanted);
        if granted.granted > 0 {
            take.execute(params![id, granted.granted, granted.next_position()])
                .map_err(db_error)?;
        }
        out.insert(id, granted);
    }
    Ok(out)
}

/// [`reserve`] on a SQLite file: one group at a time, since the file has one writer; each
/// group's transaction is on disk before its clicks are answered (see [`Db::write_synced`]).
/// The queue's task holds the file weakly, so it ends with the last handle.
pub async fn reserve_in_file(db: &Db, id: Id, rotation: u32) -> Result<Reserved> {
    let start = |rx| {
        let file = db.downgrade();
        tokio::spawn(quota::run(rx, 1, move |asked| {
            let file = file.clone();
            async move {
                let db = file
                    .upgrade()
                    .ok_or_else(|| Error::Unavailable("the database is closed".into()))?;
                db.write_synced(move |tx| reserve_group(tx, &asked)).await
            }
        }));
    };
    quota::reserve(db.reservations(), start, id, rotation).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Db;

    fn link(db: &Db, alias: &str, limit: i64, clicks: i64, rotation: i64) -> Id {
        let alias = alias.to_owned();
        db.write_blocking(move |tx| {
            tx.execute(
                "INSERT OR IGNORE INTO owners (id, name, created_at) VALUES (1, 'me', 0)",
                [],
            )
            .map_err(db_error)?;
            tx.query_row(
                "INSERT INTO links (owner_id, alias, url, expiration_clicks, clicks,
                                    last_rotation, created_at, updated_at)
                 VALUES (1, ?1, 'https://example.com', ?2, ?3, ?4, 0, 0) RETURNING id",
                params![alias, limit, clicks, rotation],
                |r| r.get(0),
            )
            .map_err(db_error)
        })
        .unwrap()
    }

    #[test]
    fn a_group_takes_what_each_limit_has_room_for_into_the_links_rows() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("quota.db")).unwrap();
        let nearly = link(&db, "nearly", 10, 8, 0);
        let turns = link(&db, "turns", 100, 0, 1);
        let open = link(&db, "open", 0, 4, 0);
        let asked = BTreeMap::from([
            (
                nearly,
                Asked {
                    clicks: 5,
                    turns: 0,
                },
            ),
            (
                turns,
                Asked {
                    clicks: 4,
                    turns: 3,
                },
            ),
            (
                open,
                Asked {
                    clicks: 1,
                    turns: 0,
                },
            ),
            (
                999,
                Asked {
                    clicks: 1,
                    turns: 0,
                },
            ),
        ]);
        let got = db
            .write_synced_blocking(|tx| reserve_group(tx, &asked))
            .unwrap();
        assert_eq!(got[&nearly].granted, 2, "two clicks left of ten");
        assert_eq!(got[&turns].granted, 4);
        assert!(
            !got.contains_key(&open) && !got.contains_key(&999),
            "no limit, or no link: counted as any other click"
        );
        let stored = |id: Id| {
            db.read_blocking(move |c| {
                c.query_row(
                    "SELECT clicks, last_rotation FROM links WHERE id = ?1",
                    [id],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
                .map_err(db_error)
            })
            .unwrap()
        };
        assert_eq!(stored(nearly), (10, 0));
        assert_eq!(
            stored(turns),
            (4, 2),
            "four turns on from the second URL of three"
        );
        assert_eq!(stored(open), (4, 0), "untouched");
        let again = db
            .write_synced_blocking(|tx| reserve_group(tx, &asked))
            .unwrap();
        assert_eq!(again[&nearly].granted, 0, "at its limit: refused");
        assert_eq!(stored(nearly), (10, 0));
    }
}
