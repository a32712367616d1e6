//! A link as it is read: its row joined to its space and domain, one by id or a keyset page.
//! Below both the link writes and the search that pages through matches.

use linkdeck_store::rows;
use linkdeck_store::sql::{READ_COLUMNS, READ_FROM};
use rusqlite::{Connection, Row, params};

use crate::sql::{Cols, Statements};
use linkdeck_domain::{Id, Link, Result};

/// A link as read; `short_url` is left empty for the service to fill in.
pub fn link_from_row(r: &Row<'_>) -> rusqlite::Result<Link> {
    rows::link(&Cols(r))
}

pub fn get(conn: &Connection, owner: Id, id: Id) -> Result<Option<Link>> {
    conn.one(
        &format!("SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.id = ?1 AND l.owner_id = ?2"),
        params![id, owner],
        link_from_row,
    )
}

/// Up to `limit` links of `owner` with ids above `after`, oldest first: a keyset scan that
/// costs the same on the last batch of a million links as on the first (exports use it).
pub fn after(conn: &Connection, owner: Id, after: Id, limit: u32) -> Result<Vec<Link>> {
    conn.all(
        &format!(
            "SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.owner_id = ?1 AND l.id > ?2 \
             ORDER BY l.id ASC LIMIT ?3"
        ),
        params![owner, after, limit],
        link_from_row,
    )
}
