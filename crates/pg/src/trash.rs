//! SQL for the trash on PostgreSQL: the same tables and rules as SQLite's (`store::trash`),
//! whose shared pieces it uses — the column lists, why a link cannot come back, how a listed
//! row reads. Sets of ids travel as `bigint[]` parameters (`= ANY($n)`) instead of a staging
//! table, and the link counters follow by the schema's triggers.
//!
//! What belongs to a link beyond its row waits with it, as on SQLite: a trashed link's share
//! leaves its owner's, space's and domain's traffic (`link_moves::withdraw`) and comes back on
//! restore; its own rows and logged visits go when it is purged (`traffic::forget`).

use std::collections::{BTreeMap, HashSet};

use deadpool_postgres::GenericClient;
use jiff::Timestamp;
use roaring::RoaringTreemap;
use tokio_postgres::types::ToSql;

use crate::link_moves::{home_of, lock, reinstate};
use crate::sql::{all, col, execute, exists, page, row, rows, value};
use crate::traffic;
use linkdeck_store::sql::{LINK_COLUMNS, restored_columns};
use linkdeck_store::{
    Aliases, Blocking, ListedRow, Restored, Scope, Trash, members_blob, members_of,
};

use crate::tx::PgTx;
use linkdeck_domain::{Error, Id, Result, Trashed, TrashedKind};
use linkdeck_store::traffic::Scope as TrafficScope;

/// The trashed link and space ids of `owner` in `scope`, in id order.
async fn ids_in<C: GenericClient>(c: &C, owner: Id, scope: &Scope) -> Result<(Vec<Id>, Vec<Id>)> {
    Ok((
        trashed(c, "trash_links", owner, scope, |links, _| links).await?,
        trashed(c, "trash_spaces", owner, scope, |_, spaces| spaces).await?,
    ))
}

/// The ids of `owner`'s rows of `table` (`trash_links` or `trash_spaces`) in `scope`, in id
/// order; `named` picks the table's ids out of a scope of items.
async fn trashed<C: GenericClient>(
    c: &C,
    table: &str,
    owner: Id,
    scope: &Scope,
    named: for<'s> fn(&'s Vec<Id>, &'s Vec<Id>) -> &'s Vec<Id>,
) -> Result<Vec<Id>> {
    let (filter, args): (&str, &[&(dyn ToSql + Sync)]) = match scope {
        Scope::Batch(batch) => ("AND batch = $2 ", &[&owner, batch]),
        Scope::All => ("", &[&owner]),
        // Only the named ids that are the owner's and in the trash.
        Scope::Items { links, spaces } => ("AND id = ANY($2) ", &[&owner, named(links, spaces)]),
    };
    let sql = format!("SELECT id FROM {table} WHERE owner_id = $1 {filter}ORDER BY id");
    all(c, &sql, args, |r| col(r, 0)).await
}

async fn restore_space<C: GenericClient>(
    c: &C,
    owner: Id,
    id: Id,
    done: &mut Restored,
) -> Result<()> {
    let Some(r) = row(
        c,
        "SELECT name, members FROM trash_spaces WHERE id = $1 AND owner_id = $2",
        &[&id, &owner],
    )
    .await?
    else {
        return Ok(());
    };
    let (name, members): (String, Vec<u8>) = (col(&r, 0)?, col(&r, 1)?);
    let taken = exists(
        c,
        "SELECT 1 FROM spaces WHERE owner_id = $1 AND lower(name) = lower($2)",
        &[&owner, &name],
    )
    .await?;
    if taken {
        done.space_name_taken(id, name);
        return Ok(());
    }
    execute(
        c,
        "INSERT INTO spaces (id, owner_id, name, color, link_count, created_at, updated_at) \
         SELECT id, owner_id, name, color, 0, created_at, updated_at FROM trash_spaces \
         WHERE id = $1",
        &[&id],
    )
    .await?;
    // Its links come back to it, unless they have moved to another space since; the trigger
    // counts them in.
    let members: Vec<Id> = members_of(&members)?.iter().map(|id| id as Id).collect();
    lock(c, owner, &members).await?;
    execute(
        c,
        "UPDATE links SET space_id = $2 WHERE owner_id = $1 AND space_id IS NULL \
         AND id = ANY($3)",
        &[&owner, &id, &members],
    )
    .await?;
    execute(c, "DELETE FROM trash_spaces WHERE id = $1", &[&id]).await?;
    done.spaces += 1;
    Ok(())
}

async fn restore_links<C: GenericClient>(
    c: &C,
    owner: Id,
    ids: &[Id],
    done: &mut Restored,
) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    // Everything that would keep a link from coming back as it was, read in one pass.
    let found = rows(
        c,
        "SELECT t.id, coalesce(t.domain_id, 0), t.alias, \
           EXISTS (SELECT 1 FROM links l WHERE l.id = t.id), \
           EXISTS (SELECT 1 FROM links l WHERE coalesce(l.domain_id, 0) = \
                   coalesce(t.domain_id, 0) AND lower(l.alias) = lower(t.alias)), \
           t.domain_id IS NOT NULL AND NOT EXISTS \
             (SELECT 1 FROM domains d WHERE d.id = t.domain_id AND d.owner_id = t.owner_id) \
         FROM trash_links t WHERE t.owner_id = $1 AND t.id = ANY($2) ORDER BY t.id",
        &[&owner, &ids],
    )
    .await?;
    let mut aliases = Aliases::default();
    let mut blocked = HashSet::new();
    for r in &found {
        let id: Id = col(r, 0)?;
        let domain: Id = col(r, 1)?;
        let alias: String = col(r, 2)?;
        let facts = Blocking {
            id_taken: col(r, 3)?,
            alias_taken: col(r, 4)?,
            domain_gone: col(r, 5)?,
        };
        if let Some(why) = facts.why(id, domain, &alias, &mut aliases) {
            blocked.insert(id);
            done.failed
                .push((TrashedKind::Link, id, alias, Error::Conflict(why)));
        }
    }
    let back: Vec<Id> = ids
        .iter()
        .copied()
        .filter(|id| !blocked.contains(id))
        .collect();
    let back_home = all(
        c,
        &format!(
            "INSERT INTO links ({LINK_COLUMNS}) SELECT {} FROM trash_links t \
             WHERE t.owner_id = $1 AND t.id = ANY($2) ORDER BY t.id \
             RETURNING id, space_id, domain_id",
            restored_columns()
        ),
        &[&owner, &back],
        |r| home_of(r, owner),
    )
    .await?;
    reinstate(c, owner, &back_home).await?;
    execute(
        c,
        "DELETE FROM trash_links WHERE owner_id = $1 AND id = ANY($2)",
        &[&owner, &back],
    )
    .await?;
    done.links += back_home.len() as u64;
    Ok(())
}

async fn drop_empty_batches<C: GenericClient>(c: &C, owner: Id) -> Result<()> {
    execute(
        c,
        "DELETE FROM trash_batches b WHERE owner_id = $1 \
         AND NOT EXISTS (SELECT 1 FROM trash_links t WHERE t.batch = b.id) \
         AND NOT EXISTS (SELECT 1 FROM trash_spaces s WHERE s.batch = b.id)",
        &[&owner],
    )
    .await?;
    Ok(())
}

impl<C: GenericClient + Sync> Trash for PgTx<'_, C> {
    fn trash_due(&self, cutoff: Timestamp) -> Result<bool> {
        self.wait(exists(
            self.c,
            "SELECT 1 FROM trash_batches WHERE deleted_at < $1 LIMIT 1",
            &[&cutoff.as_second()],
        ))
    }

    fn purge_trash_before(&self, cutoff: Timestamp) -> Result<u64> {
        let due = self.wait(rows(
            self.c,
            "SELECT t.owner_id, t.id FROM trash_links t JOIN trash_batches b ON b.id = t.batch \
             WHERE b.deleted_at < $1 ORDER BY t.owner_id, t.id",
            &[&cutoff.as_second()],
        ))?;
        let mut by_owner: BTreeMap<Id, Vec<Id>> = BTreeMap::new();
        for r in &due {
            by_owner.entry(col(r, 0)?).or_default().push(col(r, 1)?);
        }
        for (owner, links) in &by_owner {
            self.wait(traffic::forget(self.c, *owner, links))?;
        }
        let spaces = self.wait(all(
            self.c,
            "SELECT s.id FROM trash_spaces s JOIN trash_batches b ON b.id = s.batch \
             WHERE b.deleted_at < $1",
            &[&cutoff.as_second()],
            |r| col(r, 0),
        ))?;
        self.wait(traffic::delete_scope(self.c, TrafficScope::Space, &spaces))?;
        self.wait(execute(
            self.c,
            "DELETE FROM trash_batches WHERE deleted_at < $1",
            &[&cutoff.as_second()],
        ))?;
        Ok(due.len() as u64)
    }

    fn new_trash_batch(&self, owner: Id, now: Timestamp) -> Result<Id> {
        self.wait(value(
            self.c,
            "INSERT INTO trash_batches (owner_id, deleted_at) VALUES ($1, $2) RETURNING id",
            &[&owner, &now.as_second()],
        ))
    }

    fn trash_space(&self, owner: Id, id: Id, batch: Id) -> Result<bool> {
        let members: RoaringTreemap = self
            .wait(rows(
                self.c,
                "SELECT id FROM links WHERE owner_id = $1 AND space_id = $2 ORDER BY id FOR UPDATE",
                &[&owner, &id],
            ))?
            .iter()
            .map(|r| col::<Id>(r, 0).map(|id| id as u64))
            .collect::<Result<_>>()?;
        let blob = members_blob(&members)?;
        let n = self.wait(execute(
            self.c,
            "INSERT INTO trash_spaces (id, batch, owner_id, name, color, created_at, updated_at, \
             members) SELECT id, $3, owner_id, name, color, created_at, updated_at, $4 \
             FROM spaces WHERE id = $1 AND owner_id = $2",
            &[&id, &owner, &batch, &blob],
        ))?;
        if n == 0 {
            return Ok(false);
        }
        // The links' space_id goes to NULL by the foreign key's ON DELETE SET NULL.
        self.wait(execute(
            self.c,
            "DELETE FROM spaces WHERE id = $1 AND owner_id = $2",
            &[&id, &owner],
        ))?;
        Ok(true)
    }

    fn restore_trash(&self, owner: Id, scope: &Scope) -> Result<Restored> {
        let (links, spaces) = self.wait(ids_in(self.c, owner, scope))?;
        let mut done = Restored::default();
        for id in spaces {
            self.wait(restore_space(self.c, owner, id, &mut done))?;
        }
        self.wait(restore_links(self.c, owner, &links, &mut done))?;
        self.wait(drop_empty_batches(self.c, owner))?;
        Ok(done)
    }

    fn purge_trash(&self, owner: Id, scope: &Scope) -> Result<u64> {
        let (links, spaces) = self.wait(ids_in(self.c, owner, scope))?;
        // Their share of the owner's, space's and domain's figures left when they were trashed.
        self.wait(traffic::forget(self.c, owner, &links))?;
        let n = self.wait(execute(
            self.c,
            "DELETE FROM trash_links WHERE owner_id = $1 AND id = ANY($2)",
            &[&owner, &links],
        ))?;
        let m = self.wait(execute(
            self.c,
            "DELETE FROM trash_spaces WHERE owner_id = $1 AND id = ANY($2)",
            &[&owner, &spaces],
        ))?;
        self.wait(traffic::delete_scope(self.c, TrafficScope::Space, &spaces))?;
        self.wait(drop_empty_batches(self.c, owner))?;
        Ok(n + m)
    }

    fn trash(
        &self,
        owner: Id,
        offset: u64,
        limit: u32,
        keep_days: u32,
    ) -> Result<(Vec<Trashed>, u64)> {
        self.wait(page(
            self.c,
            (
                "SELECT (SELECT count(*) FROM trash_links WHERE owner_id = $1) + \
                 (SELECT count(*) FROM trash_spaces WHERE owner_id = $1)",
                &[&owner],
            ),
            (
                "SELECT kind, id, name, detail, clicks, deleted_at, batch, members FROM ( \
                   SELECT 0 AS kind, t.id, t.alias AS name, t.url AS detail, t.clicks, \
                          b.deleted_at, t.batch, NULL::bytea AS members \
                   FROM trash_links t JOIN trash_batches b ON b.id = t.batch \
                   WHERE t.owner_id = $1 \
                   UNION ALL \
                   SELECT 1, s.id, s.name, '', 0, b.deleted_at, s.batch, s.members \
                   FROM trash_spaces s JOIN trash_batches b ON b.id = s.batch \
                   WHERE s.owner_id = $1) \
                   AS items \
                 ORDER BY deleted_at DESC, batch DESC, kind DESC, id DESC LIMIT $2 OFFSET $3",
                &[&owner, &i64::from(limit), &(offset as i64)],
            ),
            |r| {
                let kind: i32 = col(r, 0)?;
                Ok(ListedRow {
                    link: kind == 0,
                    id: col(r, 1)?,
                    name: col(r, 2)?,
                    url: col(r, 3)?,
                    clicks: col(r, 4)?,
                    deleted_at: col(r, 5)?,
                    batch: col(r, 6)?,
                    members: col(r, 7)?,
                }
                .into_trashed(keep_days))
            },
        ))
    }
}
