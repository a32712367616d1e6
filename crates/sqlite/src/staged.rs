//! The links one step of bulk work or of the trash works on, staged by id in the connection's
//! own `temp.bulk_ids`, so that each statement of the step joins one table instead of binding
//! thousands of ids; and the counters that follow those links when they leave or arrive.

use rusqlite::{Connection, params};

use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{Id, Result};

/// Replaces the contents of `temp.bulk_ids` with `ids`.
pub fn stage_ids(conn: &Connection, ids: impl IntoIterator<Item = Id>) -> Result<()> {
    conn.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS bulk_ids (id INTEGER PRIMARY KEY);
         DELETE FROM temp.bulk_ids;",
    )
    .map_err(db_error)?;
    let mut insert = conn
        .prepare_cached("INSERT OR IGNORE INTO temp.bulk_ids (id) VALUES (?1)")
        .map_err(db_error)?;
    for id in ids {
        insert.execute([id]).map_err(db_error)?;
    }
    Ok(())
}

/// Moves the link counters of `owner` and of their spaces by `sign` for each staged link that
/// is the owner's: call with -1 before the links leave, +1 after they arrive. Returns how many.
pub fn move_counters(conn: &Connection, owner: Id, sign: i64) -> Result<u64> {
    let n: i64 = conn.row(
        "SELECT count(*) FROM links WHERE owner_id = ?1 \
         AND id IN (SELECT id FROM temp.bulk_ids)",
        [owner],
        |r| r.get(0),
    )?;
    conn.run(
        "UPDATE owners SET link_count = link_count + ?2 WHERE id = ?1",
        params![owner, sign * n],
    )?;
    conn.run(
        "UPDATE spaces SET link_count = link_count + ?2 * staged.n FROM \
           (SELECT space_id, count(*) AS n FROM links \
            WHERE owner_id = ?1 AND space_id IS NOT NULL AND id IN (SELECT id FROM temp.bulk_ids) \
            GROUP BY space_id) AS staged \
         WHERE spaces.id = staged.space_id",
        params![owner, sign],
    )?;
    Ok(n.max(0) as u64)
}
