//! SQL for spaces. `link_count` is kept by the writes of links (`links.rs`).

use jiff::Timestamp;
use linkdeck_store::Spaces;
use linkdeck_store::rows;
use rusqlite::{Connection, params};

use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;
use linkdeck_domain::{Color, Id, Result, Space};
use linkdeck_store::sql::like_pattern;

const COLUMNS: &str = "id, owner_id, name, color, link_count, created_at, updated_at";

pub fn get(conn: &Connection, owner: Id, id: Id) -> Result<Option<Space>> {
    conn.one(
        &format!("SELECT {COLUMNS} FROM spaces WHERE id = ?1 AND owner_id = ?2"),
        params![id, owner],
        |r| rows::space(&Cols(r), 0),
    )
}

/// The owner's spaces as `(id, name)` (for resolving many links at once).
pub fn names(conn: &Connection, owner: Id) -> Result<Vec<(Id, String)>> {
    conn.all(
        "SELECT id, name FROM spaces WHERE owner_id = ?1",
        [owner],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

impl Spaces for SqliteTx<'_> {
    fn space(&self, owner: Id, id: Id) -> Result<Option<Space>> {
        get(self.conn, owner, id)
    }

    fn space_named(&self, owner: Id, name: &str, except: Option<Id>) -> Result<Option<Id>> {
        self.conn.one(
            "SELECT id FROM spaces WHERE owner_id = ?1 AND name = ?2 AND id IS NOT ?3",
            params![owner, name, except],
            |r| r.get(0),
        )
    }

    fn insert_space(&self, owner: Id, name: &str, color: Color, now: Timestamp) -> Result<Id> {
        // Above every live and trashed space's id, so a restored space finds its own id free.
        self.conn.run(
            "INSERT INTO spaces (id, owner_id, name, color, created_at, updated_at)
             VALUES (max(ifnull((SELECT max(id) FROM spaces), 0),
                         ifnull((SELECT max(id) FROM trash_spaces), 0)) + 1,
                     ?1, ?2, ?3, ?4, ?4)",
            params![owner, name, color.number(), now.as_second()],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn update_space(
        &self,
        owner: Id,
        id: Id,
        name: Option<&str>,
        color: Option<Color>,
        now: Timestamp,
    ) -> Result<bool> {
        let n = self.conn.run(
            "UPDATE spaces SET name = coalesce(?3, name), color = coalesce(?4, color),
             updated_at = ?5 WHERE id = ?1 AND owner_id = ?2",
            params![id, owner, name, color.map(Color::number), now.as_second()],
        )?;
        Ok(n > 0)
    }

    fn spaces(
        &self,
        owner: Id,
        search: Option<&str>,
        newest_first: bool,
        offset: u64,
        limit: u32,
    ) -> Result<(Vec<Space>, u64)> {
        let pattern = search.map(like_pattern);
        let filter = "owner_id = ?1 AND (?2 IS NULL OR name LIKE ?2 ESCAPE '\\')";
        let total: i64 = self.conn.row(
            &format!("SELECT count(*) FROM spaces WHERE {filter}"),
            params![owner, pattern],
            |r| r.get(0),
        )?;
        let order = if newest_first { "DESC" } else { "ASC" };
        let items = self.conn.all(
            &format!(
                "SELECT {COLUMNS} FROM spaces WHERE {filter} ORDER BY id {order} LIMIT ?3 OFFSET ?4"
            ),
            params![owner, pattern, limit, offset as i64],
            |r| rows::space(&Cols(r), 0),
        )?;
        Ok((items, total as u64))
    }
}
