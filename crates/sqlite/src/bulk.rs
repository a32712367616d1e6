//! SQL for acting on many links in one statement: their ids go to a temporary table
//! (`temp.bulk_ids`) a chunk at a time, and each statement joins it. One statement per chunk
//! keeps the full-text index's work in large steps, as imports do.

use std::collections::BTreeSet;

use jiff::Timestamp;
use linkdeck_store::Bulk;
use linkdeck_store::bulk::{Change, Earlier, Step, Value, chunks};
use roaring::RoaringTreemap;
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, params, params_from_iter};

use crate::error::db_error;
use crate::sql::Statements;
use crate::staged::stage_ids;
use crate::trash;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result};

/// A value as SQLite binds it.
fn sql(value: &Value) -> Sql {
    match value {
        Value::Null => Sql::Null,
        Value::Integer(n) => Sql::Integer(*n),
        Value::Text(s) => Sql::Text(s.clone()),
    }
}

/// A stored value as the contract speaks it (bulk-settable columns hold nothing else).
fn value(stored: Sql) -> Value {
    match stored {
        Sql::Integer(n) => Value::Integer(n),
        Sql::Text(s) => Value::Text(s),
        _ => Value::Null,
    }
}

/// `column op ?N` for each of `changes`, joined by `sep`: their values are bound from `?2` on,
/// in order (`?1` is the owner).
fn column_terms(changes: &[Change], op: &str, sep: &str) -> String {
    changes
        .iter()
        .enumerate()
        .map(|(i, (column, _))| format!("{column} {op} ?{}", i + 2))
        .collect::<Vec<_>>()
        .join(sep)
}

/// Sets `changes` (and `updated_at`) on the staged links of `owner` that differ in any of them.
/// Returns each changed link's id with its earlier values, in the order of `changes`.
fn update_staged(
    conn: &Connection,
    owner: Id,
    changes: &[Change],
    now: i64,
) -> Result<Vec<Earlier>> {
    let differs = column_terms(changes, "IS NOT", " OR ");
    let filter = format!("owner_id = ?1 AND id IN (SELECT id FROM temp.bulk_ids) AND ({differs})");
    let mut values = vec![Sql::Integer(owner)];
    values.extend(changes.iter().map(|(_, v)| sql(v)));
    let columns = changes
        .iter()
        .map(|(c, _)| *c)
        .collect::<Vec<_>>()
        .join(", ");
    let earlier: Vec<Earlier> = conn.all(
        &format!("SELECT id, {columns} FROM links WHERE {filter}"),
        params_from_iter(values.iter()),
        |row| {
            let old = (1..=changes.len())
                .map(|i| row.get::<_, Sql>(i).map(value))
                .collect::<rusqlite::Result<_>>()?;
            Ok((row.get(0)?, old))
        },
    )?;
    if earlier.is_empty() {
        return Ok(earlier);
    }
    // A move between spaces keeps both spaces' counters right.
    if let Some(at) = changes.iter().position(|(c, _)| *c == "space_id") {
        conn.run(
            &format!(
                "UPDATE spaces SET link_count = link_count - moved.n FROM \
                   (SELECT space_id, count(*) AS n FROM links \
                    WHERE {filter} AND space_id IS NOT NULL GROUP BY space_id) AS moved \
                 WHERE spaces.id = moved.space_id"
            ),
            params_from_iter(values.iter()),
        )?;
        if let Value::Integer(space) = &changes[at].1 {
            conn.run(
                "UPDATE spaces SET link_count = link_count + ?2 WHERE id = ?1",
                params![space, earlier.len() as i64],
            )?;
        }
    }
    let sets = column_terms(changes, "=", ", ");
    let mut update_values = values.clone();
    update_values.push(Sql::Integer(now));
    conn.run(
        &format!(
            "UPDATE links SET {sets}, updated_at = ?{} WHERE {filter}",
            update_values.len()
        ),
        params_from_iter(update_values),
    )?;
    // The traffic of a link counts in its space's figures: it moves with the link.
    if let Some(at) = changes.iter().position(|(c, _)| *c == "space_id") {
        let space = |v: &Value| match v {
            Value::Integer(id) => Some(*id),
            _ => None,
        };
        let to = space(&changes[at].1);
        for (id, old) in &earlier {
            super::traffic::move_link(conn, *id, owner, space(&old[at]), to)?;
        }
    }
    Ok(earlier)
}

/// Works through `ids` a chunk at a time, so a million links never sit in one statement: each
/// chunk is staged ([`stage_ids`]), handed to `work`, and told to `step`.
fn in_staged_chunks(
    conn: &Connection,
    ids: &RoaringTreemap,
    step: &mut Step<'_>,
    mut work: impl FnMut() -> Result<()>,
) -> Result<()> {
    for chunk in chunks(ids) {
        let n = chunk.len() as u64;
        stage_ids(conn, chunk)?;
        work()?;
        step(n)?;
    }
    Ok(())
}

impl Bulk for SqliteTx<'_> {
    fn owned_links(&self, owner: Id, ids: &BTreeSet<Id>) -> Result<RoaringTreemap> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM links WHERE id = ?1 AND owner_id = ?2")
            .map_err(db_error)?;
        let mut found = RoaringTreemap::new();
        for &id in ids {
            if id > 0 && stmt.exists(params![id, owner]).map_err(db_error)? {
                found.insert(id as u64);
            }
        }
        Ok(found)
    }

    fn update_links(
        &self,
        owner: Id,
        groups: &[(RoaringTreemap, Vec<Change>)],
        now: Timestamp,
        step: &mut Step<'_>,
    ) -> Result<Vec<Vec<Earlier>>> {
        let mut done = Vec::with_capacity(groups.len());
        for (ids, changes) in groups {
            let mut changed = Vec::new();
            in_staged_chunks(self.conn, ids, step, || {
                changed.extend(update_staged(self.conn, owner, changes, now.as_second())?);
                Ok(())
            })?;
            done.push(changed);
        }
        Ok(done)
    }

    fn trash_links(
        &self,
        owner: Id,
        ids: &RoaringTreemap,
        batch: Id,
        step: &mut Step<'_>,
    ) -> Result<u64> {
        let mut moved = 0;
        in_staged_chunks(self.conn, ids, step, || {
            moved += trash::move_staged_links(self.conn, owner, batch)?;
            Ok(())
        })?;
        Ok(moved)
    }
}
