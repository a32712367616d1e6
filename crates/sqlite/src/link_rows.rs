//! A link as it is read: its row joined to its space and domain, one by id or a keyset page.
//! Below both the link writes and the search that pages through matches.

use linkdeck_store::sql::{READ_COLUMNS, READ_FROM};
use linkdeck_store::{clamped, parse_rotation, parse_rules, target_type, time};
use rusqlite::{Connection, Row, params};

use crate::sql::Statements;
use crate::{domains, spaces};
use linkdeck_domain::{Id, Link, Result};

/// A link as read; `short_url` is left empty for the service to fill in.
pub fn link_from_row(r: &Row<'_>) -> rusqlite::Result<Link> {
    let space_id: Option<Id> = r.get(19)?;
    let domain_id: Option<Id> = r.get(26)?;
    let clicks: i64 = r.get(14)?;
    let last_rotation: i64 = r.get(8)?;
    Ok(Link {
        id: r.get(0)?,
        alias: r.get(1)?,
        url: r.get(2)?,
        short_url: String::new(),
        title: r.get(3)?,
        target_type: target_type(r.get(4)?),
        geo: parse_rules(r.get(5)?),
        platform: parse_rules(r.get(6)?),
        rotation: parse_rotation(r.get(7)?),
        last_rotation: u32::try_from(last_rotation).unwrap_or(0),
        disabled: r.get(9)?,
        public: r.get(10)?,
        password: r.get(11)?,
        expiration_url: r.get(12)?,
        expiration_clicks: clamped(r.get(13)?),
        clicks: clicks.max(0) as u64,
        owner_id: r.get(15)?,
        ends_at: r.get::<_, Option<i64>>(16)?.map(time),
        created_at: time(r.get(17)?),
        updated_at: time(r.get(18)?),
        space: space_id.map(|_| spaces::from_row(r, 19)).transpose()?,
        domain: domain_id.map(|_| domains::from_row(r, 26)).transpose()?,
    })
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
