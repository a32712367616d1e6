//! Sets of an owner's links kept in the database as roaring bitmaps: a row `(owner, key, block)
//! → ids` holds, serialized, the ids in one block of 65,536 ids of the links that belong under
//! the key — a tag ([`super::tag_sets`]), a space or a domain, or none ([`super::place_sets`]).
//! A filter reads a few rows instead of an index entry per link (the 700,000 links in no space
//! took 13 ms that way, a tag on a quarter of a million 25–40 ms).
//!
//! Each family of sets is kept up by its own notes; every family changes its rows through
//! [`apply`], which reads and writes each row once however many of its links changed.

use roaring::{RoaringBitmap, RoaringTreemap};
use rusqlite::types::Value;
use rusqlite::{Connection, Params, params};

use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{Error, Id, Result};

/// Ids per row, as in the short-term index: one roaring container.
pub const BLOCK_BITS: u32 = 16;

/// A family of sets: its table, and the name of the column its key is in.
pub struct Family {
    pub table: &'static str,
    pub key: &'static str,
    /// What a set holds the links of, for an error about a damaged row.
    pub what: &'static str,
}

/// The ids of `owner`'s links under `key`, from the family's rows.
pub fn read(conn: &Connection, family: &Family, owner: Id, key: &Value) -> Result<RoaringTreemap> {
    let Family {
        table, key: column, ..
    } = family;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT block, ids FROM {table} WHERE owner_id = ?1 AND {column} = ?2"
        ))
        .map_err(db_error)?;
    let mut rows = stmt.query(params![owner, key]).map_err(db_error)?;
    let mut set = RoaringTreemap::new();
    while let Some(row) = rows.next().map_err(db_error)? {
        let block: i64 = row.get(0).map_err(db_error)?;
        let blob = row
            .get_ref(1)
            .and_then(|v| v.as_blob().map_err(Into::into))
            .map_err(db_error)?;
        let ids = decode(family, blob)?;
        let high = (block >> (32 - BLOCK_BITS)) as u32;
        set |= RoaringTreemap::from_bitmaps([(high, ids)]);
    }
    Ok(set)
}

/// Puts each link `changes` yields — rows `(owner, key, link, member)` in the order of owner,
/// key and link — into its set or takes it out, as `member` says: each row read and written
/// once.
pub fn apply(tx: &Connection, family: &Family, changes: &str, args: impl Params) -> Result<()> {
    let mut stmt = tx.prepare_cached(changes).map_err(db_error)?;
    let mut rows = stmt.query(args).map_err(db_error)?;
    let mut open: Option<(Id, Value, i64, RoaringBitmap)> = None;
    while let Some(row) = rows.next().map_err(db_error)? {
        let owner: Id = row.get(0).map_err(db_error)?;
        let key: Value = row.get(1).map_err(db_error)?;
        let link: Id = row.get(2).map_err(db_error)?;
        let member: bool = row.get(3).map_err(db_error)?;
        let block = link >> BLOCK_BITS;
        let same = open
            .as_ref()
            .is_some_and(|(o, k, b, _)| *o == owner && *k == key && *b == block);
        if !same {
            if let Some(done) = open.take() {
                store(tx, family, done)?;
            }
            let ids = stored(tx, family, owner, &key, block)?;
            open = Some((owner, key, block, ids));
        }
        if let Some((.., ids)) = &mut open {
            if member {
                ids.insert(link as u32);
            } else {
                ids.remove(link as u32);
            }
        }
    }
    if let Some(done) = open {
        store(tx, family, done)?;
    }
    Ok(())
}

/// The row of a block as stored, or an empty one.
fn stored(
    tx: &Connection,
    family: &Family,
    owner: Id,
    key: &Value,
    block: i64,
) -> Result<RoaringBitmap> {
    let Family {
        table, key: column, ..
    } = family;
    let blob: Option<Vec<u8>> = tx.one(
        &format!("SELECT ids FROM {table} WHERE owner_id = ?1 AND {column} = ?2 AND block = ?3"),
        params![owner, key, block],
        |r| r.get(0),
    )?;
    blob.map_or_else(|| Ok(RoaringBitmap::new()), |b| decode(family, &b))
}

fn store(
    tx: &Connection,
    family: &Family,
    (owner, key, block, mut ids): (Id, Value, i64, RoaringBitmap),
) -> Result<()> {
    let Family {
        table,
        key: column,
        what,
    } = family;
    if ids.is_empty() {
        tx.run(
            &format!("DELETE FROM {table} WHERE owner_id = ?1 AND {column} = ?2 AND block = ?3"),
            params![owner, key, block],
        )?;
        return Ok(());
    }
    ids.optimize();
    let mut blob = Vec::with_capacity(ids.serialized_size());
    ids.serialize_into(&mut blob)
        .map_err(|e| Error::Unavailable(format!("cannot encode a {what}'s links: {e}")))?;
    tx.run(
        &format!(
            "INSERT OR REPLACE INTO {table} (owner_id, {column}, block, ids) \
             VALUES (?1, ?2, ?3, ?4)"
        ),
        params![owner, key, block, blob],
    )?;
    Ok(())
}

fn decode(family: &Family, blob: &[u8]) -> Result<RoaringBitmap> {
    RoaringBitmap::deserialize_from(blob).map_err(|e| {
        Error::Unavailable(format!(
            "the database's index of each {}'s links is damaged: {e}",
            family.what
        ))
    })
}

/// Runs `batches` of writes as the store's write path runs them — each batch in a transaction
/// of its own that ends with the settle step — and `check`s the sets inside each transaction
/// before it settles and after it commits; then builds them anew as a migration does
/// (`rebuild`) and checks them once more.
#[cfg(test)]
pub fn check_through_writes<Op>(
    conn: &mut Connection,
    batches: &[Vec<Op>],
    mut apply: impl FnMut(&Connection, &Op),
    check: impl Fn(&Connection),
    rebuild: fn(&Connection) -> Result<()>,
) {
    for batch in batches {
        let tx = conn.transaction().unwrap();
        for op in batch {
            apply(&tx, op);
        }
        check(&tx);
        super::settle(&tx).unwrap();
        tx.commit().unwrap();
        check(conn);
    }
    let tx = conn.transaction().unwrap();
    rebuild(&tx).unwrap();
    tx.commit().unwrap();
    check(conn);
}

/// An empty database in memory with owners 1 and 2, its foreign keys enforced as the service's
/// connections enforce them.
#[cfg(test)]
pub fn two_owners() -> Connection {
    let conn = crate::schema::in_memory();
    conn.execute_batch(
        "PRAGMA foreign_keys = ON;
         INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0), (2, 'you', 0);",
    )
    .unwrap();
    conn
}
