//! SQL for acting on many links at once on PostgreSQL: a chunk of ids travels as one `bigint[]`
//! parameter. The columns a bulk update may set, and their values, are the contract's
//! [`Change`]s; they are typed here as PostgreSQL's columns are, and earlier values come back in
//! the same shape.

use std::collections::BTreeSet;

use deadpool_postgres::GenericClient;
use jiff::Timestamp;
use linkdeck_store::Bulk;
use linkdeck_store::bulk::{Change, Earlier, Step, Value, chunks};
use roaring::RoaringTreemap;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::link_moves::{SpaceMoves, lock, move_links, withdraw};
use crate::sql::{Args, all, col, rows};
use crate::tx::PgTx;
use linkdeck_domain::{Error, Id, Result};

/// How a bulk-settable column is typed on PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Number,
    Text,
}

fn kind(column: &str) -> Result<Kind> {
    match column {
        "disabled" | "public" => Ok(Kind::Flag),
        "space_id" | "ends_at" | "expiration_clicks" => Ok(Kind::Number),
        "expiration_url" => Ok(Kind::Text),
        other => Err(Error::Unavailable(format!(
            "a bulk update cannot set the column {other}"
        ))),
    }
}

/// A change's value as a parameter of its column's type.
fn param(column: &str, value: &Value) -> Result<Box<dyn ToSql + Sync + Send>> {
    let mismatch = || {
        Error::Unavailable(format!(
            "a bulk update's value for {column} has the wrong type"
        ))
    };
    Ok(match (kind(column)?, value) {
        (Kind::Flag, Value::Integer(n)) => Box::new(*n != 0),
        (Kind::Number, Value::Integer(n)) => Box::new(Some(*n)),
        (Kind::Number, Value::Null) => Box::new(None::<i64>),
        (Kind::Text, Value::Text(s)) => Box::new(Some(s.clone())),
        (Kind::Text, Value::Null) => Box::new(None::<String>),
        _ => return Err(mismatch()),
    })
}

/// Column `i` of `row` (a column of `column`'s type) in the shape SQLite answers it.
fn earlier(row: &Row, i: usize, column: &str) -> Result<Value> {
    Ok(match kind(column)? {
        Kind::Flag => Value::Integer(col::<bool>(row, i)?.into()),
        Kind::Number => col::<Option<i64>>(row, i)?.map_or(Value::Null, Value::Integer),
        Kind::Text => col::<Option<String>>(row, i)?.map_or(Value::Null, Value::Text),
    })
}

/// Sets `changes` (and `updated_at`) on the owner's links among `ids` that differ in any of
/// them. Returns each changed link's id with its earlier values, in the order of `changes`.
/// The rows are locked as they are read (the caller has locked them in id order already, see
/// [`lock`]), so the earlier values are the ones replaced.
pub async fn update<C: GenericClient>(
    c: &C,
    owner: Id,
    ids: &[Id],
    changes: &[Change],
    now: i64,
) -> Result<Vec<Earlier>> {
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = Args::default();
    let owner_p = args.push(owner);
    let ids_p = args.push(ids.to_vec());
    let mut differs = Vec::new();
    let mut sets = Vec::new();
    for (column, value) in changes {
        let p = args.push_boxed(param(column, value)?);
        differs.push(format!("{column} IS DISTINCT FROM {p}"));
        sets.push(format!("{column} = {p}"));
    }
    let now_p = args.push(now);
    let columns: Vec<&str> = changes.iter().map(|(c, _)| *c).collect();
    let old_columns = columns
        .iter()
        .map(|c| format!("old.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "WITH old AS (SELECT id, {} FROM links WHERE owner_id = {owner_p} AND id = ANY({ids_p}) \
           AND ({}) ORDER BY id FOR UPDATE) \
         UPDATE links l SET {}, updated_at = {now_p} FROM old WHERE l.id = old.id \
         RETURNING old.id, {old_columns}",
        columns.join(", "),
        differs.join(" OR "),
        sets.join(", "),
    );
    let mut changed = Vec::new();
    for r in rows(c, &sql, &args.refs()).await? {
        let id: Id = col(&r, 0)?;
        let values = columns
            .iter()
            .enumerate()
            .map(|(i, column)| earlier(&r, i + 1, column))
            .collect::<Result<Vec<_>>>()?;
        changed.push((id, values));
    }
    changed.sort_by_key(|(id, _)| *id);
    Ok(changed)
}

impl<C: GenericClient + Sync> Bulk for PgTx<'_, C> {
    fn owned_links(&self, owner: Id, ids: &BTreeSet<Id>) -> Result<RoaringTreemap> {
        let ids: Vec<Id> = ids.iter().copied().filter(|&id| id > 0).collect();
        let found: Vec<Id> = self.wait(all(
            self.c,
            "SELECT id FROM links WHERE owner_id = $1 AND id = ANY($2) ORDER BY id",
            &[&owner, &ids],
            |r| col(r, 0),
        ))?;
        Ok(found.into_iter().map(|id| id as u64).collect())
    }

    /// Every link first, in id order (an undo's groups are not), then the work; the links'
    /// traffic follows their moves between spaces once, after all of them.
    fn update_links(
        &self,
        owner: Id,
        groups: &[(RoaringTreemap, Vec<Change>)],
        now: Timestamp,
        step: &mut Step<'_>,
    ) -> Result<Vec<Vec<Earlier>>> {
        let all = groups
            .iter()
            .fold(RoaringTreemap::new(), |all, (ids, _)| all | ids);
        for chunk in chunks(&all) {
            self.wait(lock(self.c, owner, &chunk))?;
        }
        let mut moves = SpaceMoves::default();
        let mut done = Vec::with_capacity(groups.len());
        for (ids, changes) in groups {
            let mut changed = Vec::new();
            for chunk in chunks(ids) {
                let found = self.wait(update(self.c, owner, &chunk, changes, now.as_second()))?;
                moves.note(changes, &found);
                changed.extend(found);
                step(chunk.len() as u64)?;
            }
            done.push(changed);
        }
        self.wait(moves.apply(self.c, owner))?;
        Ok(done)
    }

    /// The links' rows are locked chunk by chunk in id order, their traffic's rows after all
    /// of them (see `traffic::shift`).
    fn trash_links(
        &self,
        owner: Id,
        ids: &RoaringTreemap,
        batch: Id,
        step: &mut Step<'_>,
    ) -> Result<u64> {
        let mut homes = Vec::new();
        for chunk in chunks(ids) {
            homes.extend(self.wait(move_links(self.c, owner, &chunk, batch))?);
            step(chunk.len() as u64)?;
        }
        self.wait(withdraw(self.c, owner, &homes))?;
        Ok(homes.len() as u64)
    }
}
