//! What a list filters and sorts a large search by, besides the texts: each link's clicks and
//! the two inactive states that do not depend on the time (disabled; click limit reached), kept
//! as a snapshot by id so that a search of 100,000 matches learns them for all in a few
//! milliseconds. Read one row at a time they took 120 ms; the clicks index walked to the middle
//! of a large search took 40 ms; and the ids of every inactive link, read to cross them off, 5.
//!
//! A row `block → data` holds the facts of the 4,096 ids of one block: each id's clicks as a
//! 32-bit number, then a bit per id for disabled, then one for the click limit reached. The
//! database keeps the snapshot right, so no writer has to remember it, as it keeps the
//! short-term index: links above the watermark (`link_facts_upto`) are read from their rows,
//! and triggers note every link whose clicks, disabled flag or click limit changed after the
//! snapshot took it in (the click writer's batches, edits, bulk changes) with its facts as they
//! are now in `link_facts_new` (so reading a note needs no lookup of its link). Every write
//! transaction ends with [`settle`], which folds the notes into the snapshot once
//! [`CHANGED_MAX`] have gathered and takes in the links above the watermark once
//! [`PENDING_MAX`] have. Deleted links need no note: a search never matches them, and one put
//! back under its old id is noted as it is inserted.

use roaring::RoaringTreemap;
use rusqlite::blob::Blob;
use rusqlite::{Connection, MAIN_DB, OptionalExtension, params};

use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{Id, LinkStatus, Result};

/// Ids per row: a row's data is 4,096 × 4 bytes of clicks and two bitmaps, about 17 KB, so a
/// fold rewrites little more than the blocks it changes.
const BLOCK_BITS: u32 = 12;
const BLOCK: usize = 1 << BLOCK_BITS;
const CLICKS_BYTES: usize = BLOCK * 4;
const BITS_BYTES: usize = BLOCK / 8;
const DISABLED_AT: usize = CLICKS_BYTES;
const LIMIT_AT: usize = CLICKS_BYTES + BITS_BYTES;
const DATA_BYTES: usize = CLICKS_BYTES + 2 * BITS_BYTES;

/// Clicks that do not fit (and slots of ids that had no link): the link's row is read instead.
const UNKNOWN: u32 = u32::MAX;

/// How many links may wait above the watermark before a write takes them in.
const PENDING_MAX: Id = if cfg!(test) { 64 } else { 4_096 };

/// How many notes may gather before a write folds them into the snapshot. A search reads every
/// note (about 50 ns each); a fold rewrites every block a note falls in (at most 4 MB for a
/// million links), so on a server whose clicks touch links all over the file, folding rarely
/// keeps the click writer's share small.
const CHANGED_MAX: i64 = if cfg!(test) { 64 } else { 32_768 };

/// Below this many members, a list reads each member's row instead: the snapshot's rows are 17
/// KB each, and a few members spread over many blocks would read many of them.
pub const MEMBERS_FROM: u64 = if cfg!(test) { 16 } else { 512 };

/// A link's facts as a list needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub clicks: u64,
    pub disabled: bool,
    pub limit_reached: bool,
}

impl Facts {
    /// The link's status, given whether its end instant has come.
    pub fn status(self, expired_by_date: bool) -> LinkStatus {
        LinkStatus {
            expired: expired_by_date || self.limit_reached,
            disabled: self.disabled,
        }
    }
}

/// The columns of a link's facts, as `link_facts_new` and the triggers of migration 9 say them.
const FACTS_COLUMNS: &str =
    "clicks, disabled = 1, expiration_clicks > 0 AND clicks >= expiration_clicks";

fn facts_at(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Facts> {
    Ok(Facts {
        clicks: row.get::<_, i64>(first)?.max(0) as u64,
        disabled: row.get(first + 1)?,
        limit_reached: row.get(first + 2)?,
    })
}

/// The facts of every member of `set` (links that exist), in id order, paired with their ids.
#[cfg(test)]
pub fn of(conn: &Connection, set: &RoaringTreemap) -> Result<Vec<(Id, Facts)>> {
    let mut out = Vec::with_capacity(set.len() as usize);
    each(conn, &Pending::read(conn, set)?, set, |id, facts| {
        out.push((id, facts))
    })?;
    Ok(out)
}

/// What the snapshot does not say of a set's members: the notes of links changed since it took
/// them in, and the facts of links above its watermark, both in id order. Read once for a list,
/// which may pass over its members (or some of them) more than once.
pub struct Pending {
    upto: u64,
    changed: Vec<(u64, Facts)>,
    above: Vec<(u64, Facts)>,
}

impl Pending {
    /// What is pending for `set` and any part of it.
    pub fn read(conn: &Connection, set: &RoaringTreemap) -> Result<Pending> {
        let upto = upto(conn)? as u64;
        // ?1 is the lowest id wanted.
        let rows = |sql: &str, from: u64| -> Result<Vec<(u64, Facts)>> {
            conn.all(sql, [from as i64], |r| {
                Ok((r.get::<_, i64>(0)? as u64, facts_at(r, 1)?))
            })
        };
        let changed = rows(
            "SELECT id, clicks, disabled, limit_reached FROM link_facts_new \
             WHERE id >= ?1 ORDER BY id",
            set.min().unwrap_or(0),
        )?;
        let above = match set.max() {
            Some(max) if max > upto => rows(
                &format!("SELECT id, {FACTS_COLUMNS} FROM links WHERE id >= ?1 ORDER BY id"),
                upto + 1,
            )?,
            _ => Vec::new(),
        };
        Ok(Pending {
            upto,
            changed,
            above,
        })
    }
}

/// Calls `visit` with the facts of every member of `set` that is a link, in id order, from the
/// snapshot and what is `pending` for a set holding `set`. Handed over one at a time, not
/// gathered: a caller keeps only what it needs (a number per member to order them by, or the
/// ids that pass a filter), where a list of every member's facts was 20 MB to fill for 850,000
/// members and cost as much as reading them.
pub fn each(
    conn: &Connection,
    pending: &Pending,
    set: &RoaringTreemap,
    mut visit: impl FnMut(Id, Facts),
) -> Result<()> {
    let upto = pending.upto;
    let mut changed = Ascending::new(&pending.changed);
    let mut above = Ascending::new(&pending.above);
    // Clicks past what a slot holds, or a block the snapshot lacks: the row says. Rare, so
    // read where met, keeping the id order.
    let mut row = conn
        .prepare_cached(&format!("SELECT {FACTS_COLUMNS} FROM links WHERE id = ?1"))
        .map_err(db_error)?;
    let mut blob = None;
    let mut block: Option<u64> = None;
    let mut data = vec![0; DATA_BYTES];
    let mut whole = false;
    // The members come in runs within one block. A run the notes do not touch, below the
    // watermark, is read straight from its block: that is nearly every member of a large
    // search, and checking each member for notes cost as much as the rest of the list.
    super::bitmaps::each_run(set, BLOCK_BITS, |high, run| {
        let base = u64::from(high) << 32;
        let first = base | u64::from(run[0]);
        let last = base | u64::from(run[run.len() - 1]);
        if first <= upto {
            let this = first >> BLOCK_BITS;
            if block != Some(this) {
                block = Some(this);
                whole = read_block(conn, &mut blob, this as i64, &mut data);
            }
        }
        let plain = last <= upto && whole && !changed.any_within(first, last);
        for &low in run {
            let id = base | u64::from(low);
            let at = (low as usize) & (BLOCK - 1);
            let facts = match plain.then(|| slot(&data, at)).flatten() {
                Some(facts) => Some(facts),
                None => match changed.find(id) {
                    Some(facts) => Some(facts),
                    // A member without a row is not a link (any more): it is left out.
                    None if id > upto => above.find(id),
                    None => match whole.then(|| slot(&data, at)).flatten() {
                        Some(facts) => Some(facts),
                        None => row
                            .query_row([id as i64], |r| facts_at(r, 0))
                            .optional()
                            .map_err(db_error)?,
                    },
                },
            };
            // `visit` is called in this one place, so that it is inlined into the loop.
            if let Some(facts) = facts {
                visit(id as Id, facts);
            }
        }
        Ok(())
    })
}

/// Facts by id in ascending order, looked up for ids that ascend too.
struct Ascending<'a> {
    items: &'a [(u64, Facts)],
    at: usize,
}

impl Ascending<'_> {
    fn new(items: &[(u64, Facts)]) -> Ascending<'_> {
        Ascending { items, at: 0 }
    }

    fn skip_below(&mut self, id: u64) {
        while self.items.get(self.at).is_some_and(|&(i, _)| i < id) {
            self.at += 1;
        }
    }

    fn find(&mut self, id: u64) -> Option<Facts> {
        self.skip_below(id);
        self.items
            .get(self.at)
            .filter(|&&(i, _)| i == id)
            .map(|&(_, facts)| facts)
    }

    /// Whether any id from `first` to `last` is here.
    fn any_within(&mut self, first: u64, last: u64) -> bool {
        self.skip_below(first);
        self.items.get(self.at).is_some_and(|&(i, _)| i <= last)
    }
}

/// The facts in slot `at` of a whole block, or None when its clicks do not fit (`UNKNOWN`).
#[inline]
fn slot(data: &[u8], at: usize) -> Option<Facts> {
    let clicks = data
        .get(at * 4..at * 4 + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(UNKNOWN, u32::from_le_bytes);
    (clicks != UNKNOWN).then(|| Facts {
        clicks: u64::from(clicks),
        disabled: bit(data, DISABLED_AT, at),
        limit_reached: bit(data, LIMIT_AT, at),
    })
}

/// Reads the snapshot's block `block` into `data` (a whole row's length) through one blob
/// handle moved from row to row: straight from the file's pages, where reading the column
/// copied each 17 KB row twice. False when the block is not there, or not whole, or cannot be
/// read — its members' rows are read instead.
fn read_block<'c>(
    conn: &'c Connection,
    blob: &mut Option<Blob<'c>>,
    block: i64,
    data: &mut [u8],
) -> bool {
    let moved = match blob.take() {
        Some(mut open) => open.reopen(block).map(|()| open),
        None => conn.blob_open(MAIN_DB, c"link_facts", c"data", block, true),
    };
    // A handle that failed to move is spent; the next block opens a new one.
    let Ok(open) = moved else {
        return false;
    };
    let read = open.len() == data.len() && open.read_at_exact(data, 0).is_ok();
    *blob = Some(open);
    read
}

fn bit(data: &[u8], at: usize, low: usize) -> bool {
    data[at + low / 8] & (1 << (low % 8)) != 0
}

fn set_bit(data: &mut [u8], at: usize, low: usize, on: bool) {
    let mask = 1 << (low % 8);
    if on {
        data[at + low / 8] |= mask;
    } else {
        data[at + low / 8] &= !mask;
    }
}

fn put(data: &mut [u8], low: usize, facts: Facts) {
    let clicks = u32::try_from(facts.clicks)
        .ok()
        .filter(|&c| c != UNKNOWN)
        .unwrap_or(UNKNOWN);
    data[low * 4..low * 4 + 4].copy_from_slice(&clicks.to_le_bytes());
    set_bit(data, DISABLED_AT, low, facts.disabled);
    set_bit(data, LIMIT_AT, low, facts.limit_reached);
}

/// The highest link id the snapshot covers.
fn upto(conn: &Connection) -> Result<Id> {
    let upto = conn.one("SELECT upto FROM link_facts_upto", [], |r| r.get(0))?;
    Ok(upto.unwrap_or_default())
}

fn set_upto(tx: &Connection, upto: Id) -> Result<()> {
    tx.run("UPDATE link_facts_upto SET upto = ?1", [upto])?;
    Ok(())
}

/// The highest link id there is, 0 for none.
pub(super) fn last_id(tx: &Connection) -> Result<Id> {
    tx.row("SELECT ifnull(max(id), 0) FROM links", [], |r| r.get(0))
}

/// Takes in what has gathered once there is enough of it: links above the watermark, and the
/// notes of links changed since. Every write transaction ends with this
/// ([`Db`](crate::Db)'s write path), so what every large search reads directly
/// stays small.
pub fn settle(tx: &Connection) -> Result<()> {
    let upto = upto(tx)?;
    let last = last_id(tx)?;
    if last - upto >= PENDING_MAX {
        take_in(tx, upto + 1, last)?;
        set_upto(tx, last)?;
    }
    let changed: i64 = tx.row("SELECT count(*) FROM link_facts_new", [], |r| r.get(0))?;
    if changed >= CHANGED_MAX {
        fold(tx)?;
    }
    Ok(())
}

/// Takes in every link above the watermark and every note now.
pub fn catch_up(tx: &Connection) -> Result<()> {
    let upto = upto(tx)?;
    let last = last_id(tx)?;
    if last > upto {
        take_in(tx, upto + 1, last)?;
        set_upto(tx, last)?;
    }
    fold(tx)
}

/// One block's data as stored, or a new block whose every slot says to read the row.
fn load(tx: &Connection, block: Id) -> Result<Vec<u8>> {
    let stored: Option<Vec<u8>> = tx.one(
        "SELECT data FROM link_facts WHERE block = ?1",
        [block],
        |r| r.get(0),
    )?;
    Ok(match stored {
        Some(data) if data.len() == DATA_BYTES => data,
        _ => {
            let mut data = vec![0; DATA_BYTES];
            data[..CLICKS_BYTES].fill(0xff);
            data
        }
    })
}

fn store(tx: &Connection, block: Id, data: &[u8]) -> Result<()> {
    tx.run(
        "INSERT OR REPLACE INTO link_facts (block, data) VALUES (?1, ?2)",
        params![block, data],
    )?;
    Ok(())
}

/// Writes each `(id, facts)` (in id order) into its block: each block is read and written once.
fn write(tx: &Connection, facts: impl Iterator<Item = (Id, Facts)>) -> Result<()> {
    let mut current: Option<(Id, Vec<u8>)> = None;
    for (id, f) in facts {
        let block = id >> BLOCK_BITS;
        if current.as_ref().is_none_or(|(b, _)| *b != block) {
            if let Some((b, data)) = current.take() {
                store(tx, b, &data)?;
            }
            current = Some((block, load(tx, block)?));
        }
        if let Some((_, data)) = current.as_mut() {
            put(data, (id as usize) & (BLOCK - 1), f);
        }
    }
    if let Some((b, data)) = current {
        store(tx, b, &data)?;
    }
    Ok(())
}

/// Writes the facts of the links with ids in `first..=last` as their rows say now.
fn take_in(tx: &Connection, first: Id, last: Id) -> Result<()> {
    let sql =
        format!("SELECT id, {FACTS_COLUMNS} FROM links WHERE id BETWEEN ?1 AND ?2 ORDER BY id");
    let mut taken = Vec::new();
    tx.each(&sql, params![first, last], |row| {
        taken.push((
            row.get::<_, Id>(0).map_err(db_error)?,
            facts_at(row, 1).map_err(db_error)?,
        ));
        // A block at a time, so memory stays small however many links came.
        if taken.len() >= BLOCK * 16 {
            write(tx, taken.drain(..))?;
        }
        Ok(())
    })?;
    write(tx, taken.into_iter())
}

/// Moves every note into the snapshot and clears them.
fn fold(tx: &Connection) -> Result<()> {
    let notes: Vec<(Id, Facts)> = tx.all(
        "SELECT id, clicks, disabled, limit_reached FROM link_facts_new ORDER BY id",
        [],
        |r| Ok((r.get(0)?, facts_at(r, 1)?)),
    )?;
    if notes.is_empty() {
        return Ok(());
    }
    write(tx, notes.into_iter())?;
    tx.execute("DELETE FROM link_facts_new", [])
        .map_err(db_error)?;
    Ok(())
}

#[cfg(test)]
mod tests;
