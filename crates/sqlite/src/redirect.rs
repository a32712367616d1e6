//! SQL for resolving short links.

use linkdeck_store::{LinkColumns, Redirects};
use rusqlite::params;

use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result};

fn columns_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LinkColumns> {
    Ok(LinkColumns {
        id: r.get(0)?,
        owner_id: r.get(1)?,
        alias: r.get(2)?,
        url: r.get(3)?,
        password_hash: r.get(4)?,
        disabled: r.get::<_, i64>(5)? != 0,
        public: r.get::<_, i64>(6)? != 0,
        expiration_url: r.get(7)?,
        expiration_clicks: r.get(8)?,
        ends_at: r.get(9)?,
        clicks: r.get(10)?,
        target_type: r.get(11)?,
        geo_target: r.get(12)?,
        platform_target: r.get(13)?,
        rotation_target: r.get(14)?,
        last_rotation: r.get(15)?,
    })
}

impl Redirects for SqliteTx<'_> {
    fn domain_for_host(&self, host: &str, bare: &str) -> Result<Option<Id>> {
        self.conn.one(
            "SELECT id FROM domains WHERE host IN (?1, ?2) ORDER BY host = ?1 DESC LIMIT 1",
            params![host, bare],
            |r| r.get(0),
        )
    }

    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<LinkColumns>> {
        self.conn.one(
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at, l.clicks, l.target_type,
                    l.geo_target, l.platform_target, l.rotation_target, l.last_rotation
             FROM links l
             WHERE ifnull(l.domain_id, 0) = ?1 AND l.alias = ?2",
            params![domain.unwrap_or(0), alias],
            columns_from_row,
        )
    }

    fn link_domain_name(&self, id: Id) -> Result<Option<String>> {
        self.conn.one(
            "SELECT d.name FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.id = ?1",
            [id],
            |r| r.get(0),
        )
    }
}
