//! SQL for resolving short links.

use linkdeck_store::{
    Redirects, ResolvedLink, clamped, optional_time, parse_rotation, parse_rules, target_type,
};
use rusqlite::params;

use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result};

fn resolved(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResolvedLink> {
    Ok(ResolvedLink {
        id: r.get(0)?,
        owner_id: r.get(1)?,
        alias: r.get(2)?,
        url: r.get(3)?,
        password_hash: r.get(4)?,
        disabled: r.get::<_, i64>(5)? != 0,
        public: r.get::<_, i64>(6)? != 0,
        expiration_url: r.get::<_, Option<String>>(7)?.filter(|u| !u.is_empty()),
        expiration_clicks: clamped(r.get(8)?),
        ends_at: optional_time(r.get(9)?),
        clicks: r.get::<_, i64>(10)?.max(0) as u64,
        target_type: target_type(r.get(11)?),
        geo: parse_rules(r.get(12)?),
        platform: parse_rules(r.get(13)?),
        rotation: parse_rotation(r.get(14)?),
        last_rotation: clamped(r.get(15)?),
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

    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<ResolvedLink>> {
        self.conn.one(
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at, l.clicks, l.target_type,
                    l.geo_target, l.platform_target, l.rotation_target, l.last_rotation
             FROM links l
             WHERE ifnull(l.domain_id, 0) = ?1 AND l.alias = ?2",
            params![domain.unwrap_or(0), alias],
            resolved,
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
