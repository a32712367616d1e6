//! SQL for resolving short links.

use linkdeck_store::rows;
use linkdeck_store::{Redirects, ResolvedLink};
use rusqlite::params;

use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;
use linkdeck_domain::{HostSettings, Id, Result};

impl Redirects for SqliteTx<'_> {
    fn domain_for_host(&self, host: &str, bare: &str) -> Result<Option<(Id, HostSettings)>> {
        self.conn.one(
            "SELECT id, root_url, unknown_url, expired_url, robots, robots_txt FROM domains \
             WHERE host IN (?1, ?2) ORDER BY host = ?1 DESC LIMIT 1",
            params![host, bare],
            |r| Ok((r.get(0)?, rows::host_settings(&Cols(r), 1)?)),
        )
    }

    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<ResolvedLink>> {
        self.conn.one(
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at, l.clicks, l.target_type,
                    l.geo_target, l.platform_target, l.rotation_target, l.last_rotation, l.options
             FROM links l
             WHERE ifnull(l.domain_id, 0) = ?1 AND l.alias = ?2",
            params![domain.unwrap_or(0), alias],
            |r| rows::resolved(&Cols(r)),
        )
    }

    fn most_clicked(&self, limit: u64) -> Result<Vec<(Option<Id>, ResolvedLink)>> {
        self.conn.all(
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at, l.clicks, l.target_type,
                    l.geo_target, l.platform_target, l.rotation_target, l.last_rotation, l.options,
                    l.domain_id
             FROM links l
             ORDER BY l.clicks DESC, l.id
             LIMIT ?1",
            [i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| Ok((r.get(17)?, rows::resolved(&Cols(r))?)),
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
