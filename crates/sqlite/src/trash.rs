//! SQL for the trash: deleted links and spaces moved whole into `trash_links` and
//! `trash_spaces`, grouped in `trash_batches` (one per delete), and moved back or purged.
//!
//! What belongs to a link beyond its row — its traffic rollups and logged visits — waits with it:
//! a trashed link's share leaves its owner's, space's and domain's figures (`traffic::withdraw`)
//! and comes back on restore (`traffic::reinstate`); its own rows and visits go only when it is
//! purged ([`purge_staged_links`]).

use jiff::Timestamp;
use linkdeck_store::sql::{LINK_COLUMNS, restored_columns};
use linkdeck_store::{
    Aliases, Blocking, ListedRow, Restored, Scope, Trash, members_blob, members_of,
};
use roaring::RoaringTreemap;
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{count, db_error};
use crate::tx::SqliteTx;
use crate::{staged, traffic};
use linkdeck_domain::{Error, Id, Result, Trashed, TrashedKind};

pub fn new_batch(conn: &Connection, owner: Id, now: Timestamp) -> Result<Id> {
    conn.prepare_cached("INSERT INTO trash_batches (owner_id, deleted_at) VALUES (?1, ?2)")
        .map_err(db_error)?
        .execute(params![owner, now.as_second()])
        .map_err(db_error)?;
    Ok(conn.last_insert_rowid())
}

/// Moves the staged links (`temp.bulk_ids`) of `owner` into trash `batch`, keeping the
/// counters right (the search indexes follow by themselves). The caller runs with reference actions off, so the links'
/// traffic stays. Returns how many moved.
pub fn move_staged_links(conn: &Connection, owner: Id, batch: Id) -> Result<u64> {
    let ids = staged_links_of(conn, owner)?;
    if ids.is_empty() {
        return Ok(0);
    }
    staged::move_counters(conn, owner, -1)?;
    for (id, home) in homes(conn, owner)? {
        traffic::withdraw(conn, id, home)?;
    }
    conn.prepare_cached(&format!(
        "INSERT INTO trash_links (batch, {LINK_COLUMNS}) SELECT ?1, {LINK_COLUMNS} FROM links \
         WHERE owner_id = ?2 AND id IN (SELECT id FROM temp.bulk_ids)"
    ))
    .map_err(db_error)?
    .execute(params![batch, owner])
    .map_err(db_error)?;
    conn.prepare_cached(
        "DELETE FROM links WHERE owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids)",
    )
    .map_err(db_error)?
    .execute([owner])
    .map_err(db_error)?;
    Ok(ids.len())
}

/// The staged links of `owner` with where their traffic counts.
fn homes(conn: &Connection, owner: Id) -> Result<Vec<(Id, traffic::LinkHome)>> {
    conn.prepare_cached(
        "SELECT id, space_id, domain_id FROM links \
         WHERE owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids)",
    )
    .map_err(db_error)?
    .query_map([owner], |r| {
        Ok((
            r.get(0)?,
            traffic::LinkHome {
                owner,
                space: r.get(1)?,
                domain: r.get(2)?,
            },
        ))
    })
    .map_err(db_error)?
    .collect::<rusqlite::Result<_>>()
    .map_err(db_error)
}

fn staged_links_of(conn: &Connection, owner: Id) -> Result<RoaringTreemap> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id FROM links WHERE owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids) \
             ORDER BY id",
        )
        .map_err(db_error)?;
    let ids = stmt
        .query_map([owner], |r| r.get::<_, Id>(0))
        .map_err(db_error)?
        .map(|id| id.map(|id| id as u64))
        .collect::<rusqlite::Result<Vec<u64>>>()
        .map_err(db_error)?;
    RoaringTreemap::from_sorted_iter(ids).map_err(|e| Error::Unavailable(e.to_string()))
}

/// Moves space `id` of `owner` into trash `batch`, remembering which links it held (they are
/// left without a space, as a deleted space leaves them). False when there is no such space.
pub fn move_space(conn: &Connection, owner: Id, id: Id, batch: Id) -> Result<bool> {
    let mut members = RoaringTreemap::new();
    {
        let mut stmt = conn
            .prepare_cached("SELECT id FROM links WHERE owner_id = ?1 AND space_id = ?2")
            .map_err(db_error)?;
        let mut rows = stmt.query(params![owner, id]).map_err(db_error)?;
        while let Some(row) = rows.next().map_err(db_error)? {
            members.insert(row.get::<_, Id>(0).map_err(db_error)? as u64);
        }
    }
    let blob = members_blob(&members)?;
    let n = conn
        .prepare_cached(
            "INSERT INTO trash_spaces (id, batch, owner_id, name, color, created_at, updated_at, \
             members) SELECT id, ?3, owner_id, name, color, created_at, updated_at, ?4 \
             FROM spaces WHERE id = ?1 AND owner_id = ?2",
        )
        .map_err(db_error)?
        .execute(params![id, owner, batch, blob])
        .map_err(db_error)?;
    if n == 0 {
        return Ok(false);
    }
    conn.prepare_cached("DELETE FROM spaces WHERE id = ?1 AND owner_id = ?2")
        .map_err(db_error)?
        .execute(params![id, owner])
        .map_err(db_error)?;
    Ok(true)
}

/// The ids (first column) of the rows `sql` selects.
fn select_ids(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Id>> {
    conn.prepare_cached(sql)
        .map_err(db_error)?
        .query_map(params, |r| r.get(0))
        .map_err(db_error)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db_error)
}

/// The trashed link and space ids of `owner` in `scope`.
fn ids_in(conn: &Connection, owner: Id, scope: &Scope) -> Result<(Vec<Id>, Vec<Id>)> {
    let read = |sql: &str, param: Id| select_ids(conn, sql, params![owner, param]);
    Ok(match scope {
        Scope::Batch(batch) => (
            read(
                "SELECT id FROM trash_links WHERE owner_id = ?1 AND batch = ?2 ORDER BY id",
                *batch,
            )?,
            read(
                "SELECT id FROM trash_spaces WHERE owner_id = ?1 AND batch = ?2 ORDER BY id",
                *batch,
            )?,
        ),
        Scope::All => (
            read(
                "SELECT id FROM trash_links WHERE owner_id = ?1 AND ?2 = 0 ORDER BY id",
                0,
            )?,
            read(
                "SELECT id FROM trash_spaces WHERE owner_id = ?1 AND ?2 = 0 ORDER BY id",
                0,
            )?,
        ),
        Scope::Items { links, spaces } => {
            // Only the named ids that are the owner's and in the trash.
            let keep = |sql: &str, ids: &[Id]| -> Result<Vec<Id>> {
                let mut kept = Vec::new();
                for &id in ids {
                    if !read(sql, id)?.is_empty() {
                        kept.push(id);
                    }
                }
                Ok(kept)
            };
            (
                keep(
                    "SELECT id FROM trash_links WHERE owner_id = ?1 AND id = ?2",
                    links,
                )?,
                keep(
                    "SELECT id FROM trash_spaces WHERE owner_id = ?1 AND id = ?2",
                    spaces,
                )?,
            )
        }
    })
}

/// Moves the trashed links and spaces of `owner` in `scope` back, with their ids. A link whose
/// alias was taken meanwhile, or whose domain was removed, stays in the trash and is reported;
/// so is a space whose name was taken. A link whose space is gone comes back without one.
pub fn restore(conn: &Connection, owner: Id, scope: &Scope) -> Result<Restored> {
    let (links, spaces) = ids_in(conn, owner, scope)?;
    let mut done = Restored::default();
    for id in spaces {
        restore_space(conn, owner, id, &mut done)?;
    }
    restore_links(conn, owner, &links, &mut done)?;
    drop_empty_batches(conn, owner)?;
    Ok(done)
}

fn restore_space(conn: &Connection, owner: Id, id: Id, done: &mut Restored) -> Result<()> {
    let row: Option<(String, Vec<u8>)> = conn
        .prepare_cached("SELECT name, members FROM trash_spaces WHERE id = ?1 AND owner_id = ?2")
        .map_err(db_error)?
        .query_row(params![id, owner], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .map_err(db_error)?;
    let Some((name, members)) = row else {
        return Ok(());
    };
    let taken = conn
        .prepare_cached("SELECT 1 FROM spaces WHERE owner_id = ?1 AND name = ?2")
        .map_err(db_error)?
        .exists(params![owner, name])
        .map_err(db_error)?;
    if taken {
        done.space_name_taken(id, name);
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO spaces (id, owner_id, name, color, link_count, created_at, updated_at) \
         SELECT id, owner_id, name, color, 0, created_at, updated_at FROM trash_spaces \
         WHERE id = ?1",
    )
    .map_err(db_error)?
    .execute([id])
    .map_err(db_error)?;
    // Its links come back to it, unless they have moved to another space since.
    let members = members_of(&members)?;
    staged::stage_ids(conn, members.iter().map(|id| id as Id))?;
    conn.prepare_cached(
        "UPDATE links SET space_id = ?2 WHERE owner_id = ?1 AND space_id IS NULL \
         AND id IN (SELECT id FROM temp.bulk_ids)",
    )
    .map_err(db_error)?
    .execute(params![owner, id])
    .map_err(db_error)?;
    conn.prepare_cached(
        "UPDATE spaces SET link_count = \
         (SELECT count(*) FROM links WHERE owner_id = ?2 AND space_id = ?1) WHERE id = ?1",
    )
    .map_err(db_error)?
    .execute(params![id, owner])
    .map_err(db_error)?;
    conn.prepare_cached("DELETE FROM trash_spaces WHERE id = ?1")
        .map_err(db_error)?
        .execute([id])
        .map_err(db_error)?;
    done.spaces += 1;
    Ok(())
}

fn restore_links(conn: &Connection, owner: Id, ids: &[Id], done: &mut Restored) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    staged::stage_ids(conn, ids.iter().copied())?;
    // Everything that would keep a link from coming back as it was, read in one pass.
    let mut blocked = Vec::new();
    {
        let mut stmt = conn
            .prepare_cached(
                "SELECT t.id, ifnull(t.domain_id, 0), t.alias, \
                   EXISTS (SELECT 1 FROM links l WHERE l.id = t.id), \
                   EXISTS (SELECT 1 FROM links l WHERE ifnull(l.domain_id, 0) = \
                           ifnull(t.domain_id, 0) AND l.alias = t.alias), \
                   t.domain_id IS NOT NULL AND NOT EXISTS \
                     (SELECT 1 FROM domains d WHERE d.id = t.domain_id AND d.owner_id = t.owner_id) \
                 FROM trash_links t WHERE t.id IN (SELECT id FROM temp.bulk_ids) ORDER BY t.id",
            )
            .map_err(db_error)?;
        let mut rows = stmt.query([]).map_err(db_error)?;
        let mut aliases = Aliases::default();
        while let Some(row) = rows.next().map_err(db_error)? {
            let id: Id = row.get(0).map_err(db_error)?;
            let domain: Id = row.get(1).map_err(db_error)?;
            let alias: String = row.get(2).map_err(db_error)?;
            let facts = Blocking {
                id_taken: row.get(3).map_err(db_error)?,
                alias_taken: row.get(4).map_err(db_error)?,
                domain_gone: row.get(5).map_err(db_error)?,
            };
            if let Some(why) = facts.why(id, domain, &alias, &mut aliases) {
                blocked.push((id, alias, why));
            }
        }
    }
    let mut unstage = conn
        .prepare_cached("DELETE FROM temp.bulk_ids WHERE id = ?1")
        .map_err(db_error)?;
    for (id, alias, why) in blocked {
        unstage.execute([id]).map_err(db_error)?;
        done.failed
            .push((TrashedKind::Link, id, alias, Error::Conflict(why)));
    }
    let columns = restored_columns();
    let n = conn
        .prepare_cached(&format!(
            "INSERT INTO links ({LINK_COLUMNS}) SELECT {columns} FROM trash_links t \
             WHERE t.owner_id = ?1 AND t.id IN (SELECT id FROM temp.bulk_ids) ORDER BY t.id"
        ))
        .map_err(db_error)?
        .execute([owner])
        .map_err(db_error)?;
    staged::move_counters(conn, owner, 1)?;
    for (id, home) in homes(conn, owner)? {
        traffic::reinstate(conn, id, home)?;
    }
    conn.prepare_cached("DELETE FROM trash_links WHERE id IN (SELECT id FROM temp.bulk_ids)")
        .map_err(db_error)?
        .execute([])
        .map_err(db_error)?;
    done.links += n as u64;
    Ok(())
}

fn drop_empty_batches(conn: &Connection, owner: Id) -> Result<()> {
    conn.prepare_cached(
        "DELETE FROM trash_batches WHERE owner_id = ?1 \
         AND NOT EXISTS (SELECT 1 FROM trash_links t WHERE t.batch = trash_batches.id) \
         AND NOT EXISTS (SELECT 1 FROM trash_spaces s WHERE s.batch = trash_batches.id)",
    )
    .map_err(db_error)?
    .execute([owner])
    .map_err(db_error)?;
    Ok(())
}

/// Deletes the trashed links and spaces of `owner` in `scope` for good. Returns how many.
pub fn purge(conn: &Connection, owner: Id, scope: &Scope) -> Result<u64> {
    let (links, spaces) = ids_in(conn, owner, scope)?;
    staged::stage_ids(conn, links.iter().copied())?;
    let n = purge_staged_links(conn)?;
    let mut gone = conn
        .prepare_cached("DELETE FROM trash_spaces WHERE id = ?1")
        .map_err(db_error)?;
    for id in &spaces {
        gone.execute([id]).map_err(db_error)?;
        traffic::delete_scope(conn, traffic::Scope::Space, *id)?;
    }
    drop_empty_batches(conn, owner)?;
    Ok(n + spaces.len() as u64)
}

/// Purges, for every owner, what was deleted before `cutoff`.
pub fn purge_before(conn: &Connection, cutoff: Timestamp) -> Result<u64> {
    let due = conn
        .prepare_cached("SELECT 1 FROM trash_batches WHERE deleted_at < ?1 LIMIT 1")
        .map_err(db_error)?
        .exists([cutoff.as_second()])
        .map_err(db_error)?;
    if !due {
        return Ok(0);
    }
    let ids = select_ids(
        conn,
        "SELECT t.id FROM trash_links t JOIN trash_batches b ON b.id = t.batch \
         WHERE b.deleted_at < ?1",
        [cutoff.as_second()],
    )?;
    staged::stage_ids(conn, ids)?;
    let n = purge_staged_links(conn)?;
    // A purged space's traffic sums go with it.
    let spaces = select_ids(
        conn,
        "SELECT s.id FROM trash_spaces s JOIN trash_batches b ON b.id = s.batch \
         WHERE b.deleted_at < ?1",
        [cutoff.as_second()],
    )?;
    for id in spaces {
        traffic::delete_scope(conn, traffic::Scope::Space, id)?;
    }
    // Their spaces, and the batches themselves, go by cascade.
    conn.prepare_cached("DELETE FROM trash_batches WHERE deleted_at < ?1")
        .map_err(db_error)?
        .execute([cutoff.as_second()])
        .map_err(db_error)?;
    Ok(n)
}

/// Deletes the staged trashed links for good, with everything that belongs to them.
fn purge_staged_links(conn: &Connection) -> Result<u64> {
    // Their share of the owner's, space's and domain's figures left when they were trashed.
    let gone: Vec<(Id, Id)> = conn
        .prepare_cached(
            "SELECT id, owner_id FROM trash_links WHERE id IN (SELECT id FROM temp.bulk_ids)",
        )
        .map_err(db_error)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(db_error)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db_error)?;
    for (id, owner) in gone {
        traffic::forget(conn, id, owner)?;
    }
    let n = conn
        .prepare_cached("DELETE FROM trash_links WHERE id IN (SELECT id FROM temp.bulk_ids)")
        .map_err(db_error)?
        .execute([])
        .map_err(db_error)?;
    Ok(n as u64)
}

/// One page of the owner's trash, newest deletes first, and how many items it holds.
pub fn list(
    conn: &Connection,
    owner: Id,
    offset: u64,
    limit: u32,
    keep_days: u32,
) -> Result<(Vec<Trashed>, u64)> {
    let total = count(
        conn,
        "SELECT (SELECT count(*) FROM trash_links WHERE owner_id = ?1) + \
                (SELECT count(*) FROM trash_spaces WHERE owner_id = ?1)",
        [owner],
    )?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT kind, id, name, detail, clicks, deleted_at, batch, members FROM ( \
               SELECT 0 AS kind, t.id, t.alias AS name, t.url AS detail, t.clicks, \
                      b.deleted_at, t.batch, NULL AS members \
               FROM trash_links t JOIN trash_batches b ON b.id = t.batch WHERE t.owner_id = ?1 \
               UNION ALL \
               SELECT 1, s.id, s.name, '', 0, b.deleted_at, s.batch, s.members \
               FROM trash_spaces s JOIN trash_batches b ON b.id = s.batch WHERE s.owner_id = ?1) \
             ORDER BY deleted_at DESC, batch DESC, kind DESC, id DESC LIMIT ?2 OFFSET ?3",
        )
        .map_err(db_error)?;
    let items = stmt
        .query_map(params![owner, limit, offset as i64], |r| {
            Ok(ListedRow {
                link: r.get::<_, i64>(0)? == 0,
                id: r.get(1)?,
                name: r.get(2)?,
                url: r.get(3)?,
                clicks: r.get(4)?,
                deleted_at: r.get(5)?,
                batch: r.get(6)?,
                members: r.get(7)?,
            }
            .into_trashed(keep_days))
        })
        .map_err(db_error)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(db_error)?;
    Ok((items, total))
}

impl Trash for SqliteTx<'_> {
    fn trash_due(&self, cutoff: Timestamp) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM trash_batches WHERE deleted_at < ?1 LIMIT 1")
            .map_err(db_error)?
            .exists([cutoff.as_second()])
            .map_err(db_error)
    }

    fn purge_trash_before(&self, cutoff: Timestamp) -> Result<u64> {
        purge_before(self.conn, cutoff)
    }

    fn new_trash_batch(&self, owner: Id, now: Timestamp) -> Result<Id> {
        new_batch(self.conn, owner, now)
    }

    fn trash_space(&self, owner: Id, id: Id, batch: Id) -> Result<bool> {
        move_space(self.conn, owner, id, batch)
    }

    fn restore_trash(&self, owner: Id, scope: &Scope) -> Result<Restored> {
        restore(self.conn, owner, scope)
    }

    fn purge_trash(&self, owner: Id, scope: &Scope) -> Result<u64> {
        purge(self.conn, owner, scope)
    }

    fn trash(
        &self,
        owner: Id,
        offset: u64,
        limit: u32,
        keep_days: u32,
    ) -> Result<(Vec<Trashed>, u64)> {
        list(self.conn, owner, offset, limit, keep_days)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rusqlite::Connection;

    use crate::schema;
    use linkdeck_store::sql::LINK_COLUMNS;

    fn columns(conn: &Connection, table: &str) -> BTreeSet<String> {
        let mut stmt = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn the_trash_keeps_every_column_of_a_link() {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::migrate(&mut conn).unwrap();
        let listed: BTreeSet<String> = LINK_COLUMNS
            .split(',')
            .map(|c| c.trim().to_owned())
            .collect();
        assert_eq!(
            columns(&conn, "links"),
            listed,
            "a column of links is not trashed"
        );
        let mut trash = columns(&conn, "trash_links");
        assert!(trash.remove("batch"));
        assert_eq!(trash, listed);
    }
}
