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
use rusqlite::{Connection, params};

use crate::sql::Statements;
use crate::tx::SqliteTx;
use crate::{staged, traffic};
use linkdeck_domain::{Error, Id, Result, Trashed, TrashedKind};

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
    conn.run(
        &format!(
            "INSERT INTO trash_links (batch, {LINK_COLUMNS}) SELECT ?1, {LINK_COLUMNS} FROM links \
             WHERE owner_id = ?2 AND id IN (SELECT id FROM temp.bulk_ids)"
        ),
        params![batch, owner],
    )?;
    conn.run(
        "DELETE FROM links WHERE owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids)",
        [owner],
    )?;
    Ok(ids.len())
}

/// The staged links of `owner` with where their traffic counts.
fn homes(conn: &Connection, owner: Id) -> Result<Vec<(Id, traffic::LinkHome)>> {
    conn.all(
        "SELECT id, space_id, domain_id FROM links \
         WHERE owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids)",
        [owner],
        |r| {
            Ok((
                r.get(0)?,
                traffic::LinkHome {
                    owner,
                    space: r.get(1)?,
                    domain: r.get(2)?,
                },
            ))
        },
    )
}

fn staged_links_of(conn: &Connection, owner: Id) -> Result<RoaringTreemap> {
    let ids: Vec<u64> = conn.all(
        "SELECT id FROM links WHERE owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids) \
         ORDER BY id",
        [owner],
        |r| r.get::<_, Id>(0).map(|id| id as u64),
    )?;
    RoaringTreemap::from_sorted_iter(ids).map_err(|e| Error::Unavailable(e.to_string()))
}

/// The trashed link and space ids of `owner` in `scope`: in id order, or as the scope names them.
fn ids_in(conn: &Connection, owner: Id, scope: &Scope) -> Result<(Vec<Id>, Vec<Id>)> {
    let of = |table: &str, named: &[Id]| -> Result<Vec<Id>> {
        let select = format!("SELECT id FROM {table} WHERE owner_id = ?1");
        match scope {
            Scope::Batch(batch) => conn.all(
                &format!("{select} AND batch = ?2 ORDER BY id"),
                params![owner, batch],
                |r| r.get(0),
            ),
            Scope::All => conn.all(&format!("{select} ORDER BY id"), [owner], |r| r.get(0)),
            // Only the named ids that are the owner's and in the trash.
            Scope::Items { .. } => {
                let mut kept = Vec::new();
                for &id in named {
                    if conn.exists(&format!("{select} AND id = ?2"), params![owner, id])? {
                        kept.push(id);
                    }
                }
                Ok(kept)
            }
        }
    };
    let (links, spaces) = match scope {
        Scope::Items { links, spaces } => (links.as_slice(), spaces.as_slice()),
        _ => (&[][..], &[][..]),
    };
    Ok((of("trash_links", links)?, of("trash_spaces", spaces)?))
}

fn restore_space(conn: &Connection, owner: Id, id: Id, done: &mut Restored) -> Result<()> {
    let row: Option<(String, Vec<u8>)> = conn.one(
        "SELECT name, members FROM trash_spaces WHERE id = ?1 AND owner_id = ?2",
        params![id, owner],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let Some((name, members)) = row else {
        return Ok(());
    };
    let taken = conn.exists(
        "SELECT 1 FROM spaces WHERE owner_id = ?1 AND name = ?2",
        params![owner, name],
    )?;
    if taken {
        done.space_name_taken(id, name);
        return Ok(());
    }
    conn.run(
        "INSERT INTO spaces (id, owner_id, name, color, link_count, created_at, updated_at) \
         SELECT id, owner_id, name, color, 0, created_at, updated_at FROM trash_spaces \
         WHERE id = ?1",
        [id],
    )?;
    // Its links come back to it, unless they have moved to another space since.
    let members = members_of(&members)?;
    staged::stage_ids(conn, members.iter().map(|id| id as Id))?;
    conn.run(
        "UPDATE links SET space_id = ?2 WHERE owner_id = ?1 AND space_id IS NULL \
         AND id IN (SELECT id FROM temp.bulk_ids)",
        params![owner, id],
    )?;
    conn.run(
        "UPDATE spaces SET link_count = \
         (SELECT count(*) FROM links WHERE owner_id = ?2 AND space_id = ?1) WHERE id = ?1",
        params![id, owner],
    )?;
    conn.run("DELETE FROM trash_spaces WHERE id = ?1", [id])?;
    done.spaces += 1;
    Ok(())
}

fn restore_links(conn: &Connection, owner: Id, ids: &[Id], done: &mut Restored) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    staged::stage_ids(conn, ids.iter().copied())?;
    // Everything that would keep a link from coming back as it was, read in one pass.
    let found: Vec<(Id, Id, String, Blocking)> = conn.all(
        "SELECT t.id, ifnull(t.domain_id, 0), t.alias, \
           EXISTS (SELECT 1 FROM links l WHERE l.id = t.id), \
           EXISTS (SELECT 1 FROM links l WHERE ifnull(l.domain_id, 0) = \
                   ifnull(t.domain_id, 0) AND l.alias = t.alias), \
           t.domain_id IS NOT NULL AND NOT EXISTS \
             (SELECT 1 FROM domains d \
              WHERE d.id = t.domain_id AND d.owner_id = t.owner_id) \
         FROM trash_links t WHERE t.id IN (SELECT id FROM temp.bulk_ids) ORDER BY t.id",
        [],
        |r| {
            let facts = Blocking {
                id_taken: r.get(3)?,
                alias_taken: r.get(4)?,
                domain_gone: r.get(5)?,
            };
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, facts))
        },
    )?;
    let mut aliases = Aliases::default();
    for (id, domain, alias, facts) in found {
        if let Some(why) = facts.why(id, domain, &alias, &mut aliases) {
            conn.run("DELETE FROM temp.bulk_ids WHERE id = ?1", [id])?;
            done.failed
                .push((TrashedKind::Link, id, alias, Error::Conflict(why)));
        }
    }
    let columns = restored_columns();
    let n = conn.run(
        &format!(
            "INSERT INTO links ({LINK_COLUMNS}) SELECT {columns} FROM trash_links t \
             WHERE t.owner_id = ?1 AND t.id IN (SELECT id FROM temp.bulk_ids) ORDER BY t.id"
        ),
        [owner],
    )?;
    staged::move_counters(conn, owner, 1)?;
    for (id, home) in homes(conn, owner)? {
        traffic::reinstate(conn, id, home)?;
    }
    conn.run(
        "DELETE FROM trash_links WHERE id IN (SELECT id FROM temp.bulk_ids)",
        [],
    )?;
    done.links += n as u64;
    Ok(())
}

fn drop_empty_batches(conn: &Connection, owner: Id) -> Result<()> {
    conn.run(
        "DELETE FROM trash_batches WHERE owner_id = ?1 \
         AND NOT EXISTS (SELECT 1 FROM trash_links t WHERE t.batch = trash_batches.id) \
         AND NOT EXISTS (SELECT 1 FROM trash_spaces s WHERE s.batch = trash_batches.id)",
        [owner],
    )?;
    Ok(())
}

/// Deletes the staged trashed links for good, with everything that belongs to them.
fn purge_staged_links(conn: &Connection) -> Result<u64> {
    // Their share of the owner's, space's and domain's figures left when they were trashed.
    let gone: Vec<(Id, Id)> = conn.all(
        "SELECT id, owner_id FROM trash_links WHERE id IN (SELECT id FROM temp.bulk_ids)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    for (id, owner) in gone {
        traffic::forget(conn, id, owner)?;
    }
    let n = conn.run(
        "DELETE FROM trash_links WHERE id IN (SELECT id FROM temp.bulk_ids)",
        [],
    )?;
    Ok(n as u64)
}

impl Trash for SqliteTx<'_> {
    fn trash_due(&self, cutoff: Timestamp) -> Result<bool> {
        self.conn.exists(
            "SELECT 1 FROM trash_batches WHERE deleted_at < ?1 LIMIT 1",
            [cutoff.as_second()],
        )
    }

    fn purge_trash_before(&self, cutoff: Timestamp) -> Result<u64> {
        if !self.trash_due(cutoff)? {
            return Ok(0);
        }
        let ids: Vec<Id> = self.conn.all(
            "SELECT t.id FROM trash_links t JOIN trash_batches b ON b.id = t.batch \
             WHERE b.deleted_at < ?1",
            [cutoff.as_second()],
            |r| r.get(0),
        )?;
        staged::stage_ids(self.conn, ids)?;
        let n = purge_staged_links(self.conn)?;
        // A purged space's traffic sums go with it.
        let spaces: Vec<Id> = self.conn.all(
            "SELECT s.id FROM trash_spaces s JOIN trash_batches b ON b.id = s.batch \
             WHERE b.deleted_at < ?1",
            [cutoff.as_second()],
            |r| r.get(0),
        )?;
        for id in spaces {
            traffic::delete_scope(self.conn, traffic::Scope::Space, id)?;
        }
        // Their spaces, and the batches themselves, go by cascade.
        self.conn.run(
            "DELETE FROM trash_batches WHERE deleted_at < ?1",
            [cutoff.as_second()],
        )?;
        Ok(n)
    }

    fn new_trash_batch(&self, owner: Id, now: Timestamp) -> Result<Id> {
        self.conn.run(
            "INSERT INTO trash_batches (owner_id, deleted_at) VALUES (?1, ?2)",
            params![owner, now.as_second()],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn trash_space(&self, owner: Id, id: Id, batch: Id) -> Result<bool> {
        let members: RoaringTreemap = self.conn.all(
            "SELECT id FROM links WHERE owner_id = ?1 AND space_id = ?2",
            params![owner, id],
            |r| r.get::<_, Id>(0).map(|id| id as u64),
        )?;
        let blob = members_blob(&members)?;
        let n = self.conn.run(
            "INSERT INTO trash_spaces (id, batch, owner_id, name, color, created_at, updated_at, \
             members) SELECT id, ?3, owner_id, name, color, created_at, updated_at, ?4 \
             FROM spaces WHERE id = ?1 AND owner_id = ?2",
            params![id, owner, batch, blob],
        )?;
        if n == 0 {
            return Ok(false);
        }
        self.conn.run(
            "DELETE FROM spaces WHERE id = ?1 AND owner_id = ?2",
            params![id, owner],
        )?;
        Ok(true)
    }

    fn restore_trash(&self, owner: Id, scope: &Scope) -> Result<Restored> {
        let (links, spaces) = ids_in(self.conn, owner, scope)?;
        let mut done = Restored::default();
        for id in spaces {
            restore_space(self.conn, owner, id, &mut done)?;
        }
        restore_links(self.conn, owner, &links, &mut done)?;
        drop_empty_batches(self.conn, owner)?;
        Ok(done)
    }

    fn purge_trash(&self, owner: Id, scope: &Scope) -> Result<u64> {
        let (links, spaces) = ids_in(self.conn, owner, scope)?;
        staged::stage_ids(self.conn, links.iter().copied())?;
        let n = purge_staged_links(self.conn)?;
        for &id in &spaces {
            self.conn
                .run("DELETE FROM trash_spaces WHERE id = ?1", [id])?;
            traffic::delete_scope(self.conn, traffic::Scope::Space, id)?;
        }
        drop_empty_batches(self.conn, owner)?;
        Ok(n + spaces.len() as u64)
    }

    fn trash(
        &self,
        owner: Id,
        offset: u64,
        limit: u32,
        keep_days: u32,
    ) -> Result<(Vec<Trashed>, u64)> {
        let total = self.conn.count(
            "SELECT (SELECT count(*) FROM trash_links WHERE owner_id = ?1) + \
             (SELECT count(*) FROM trash_spaces WHERE owner_id = ?1)",
            [owner],
        )?;
        let items = self.conn.all(
            "SELECT kind, id, name, detail, clicks, deleted_at, batch, members FROM ( \
               SELECT 0 AS kind, t.id, t.alias AS name, t.url AS detail, t.clicks, \
                      b.deleted_at, t.batch, NULL AS members \
               FROM trash_links t JOIN trash_batches b ON b.id = t.batch \
               WHERE t.owner_id = ?1 \
               UNION ALL \
               SELECT 1, s.id, s.name, '', 0, b.deleted_at, s.batch, s.members \
               FROM trash_spaces s JOIN trash_batches b ON b.id = s.batch \
               WHERE s.owner_id = ?1) \
             ORDER BY deleted_at DESC, batch DESC, kind DESC, id DESC LIMIT ?2 OFFSET ?3",
            params![owner, limit, offset as i64],
            |r| {
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
            },
        )?;
        Ok((items, total))
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
