//! SQL for resolving short links on PostgreSQL: the domain a request's host names, the link an
//! alias names there, and the domain a link lives on. Every server reads these on a cache miss;
//! the statements are prepared once per pooled connection.

use deadpool_postgres::GenericClient;
use linkdeck_store::{
    Redirects, ResolvedLink, clamped, optional_time, parse_rules, rotation_urls, target_type,
};

use crate::error::pg_error;
use crate::sql::row;
use crate::tx::PgTx;
use linkdeck_domain::{Id, Result};

impl<C: GenericClient + Sync> Redirects for PgTx<'_, C> {
    fn domain_for_host(&self, host: &str, bare: &str) -> Result<Option<Id>> {
        let found = self.wait(row(
            self.c,
            "SELECT id FROM domains WHERE lower(host) IN ($1, $2)
             ORDER BY lower(host) = $1 DESC LIMIT 1",
            &[&host, &bare],
        ))?;
        Ok(found.map(|r| r.get(0)))
    }

    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<ResolvedLink>> {
        // The expressions of the unique index `links_alias`, so that it answers. A limited or
        // rotating link's exact count and turn are its quota row's (`quota.rs`): the link row
        // follows them only in the click writers' batches, and a preview or status read between
        // must already see a link used up.
        let found = self.wait(row(
            self.c,
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at,
                    GREATEST(l.clicks, coalesce(q.used, 0)), l.target_type, l.geo_target,
                    l.platform_target, l.rotation_target, coalesce(q.position, l.last_rotation)
             FROM links l LEFT JOIN click_quota q ON q.link_id = l.id
             WHERE coalesce(l.domain_id, 0) = $1 AND lower(l.alias) = lower($2)",
            &[&domain.unwrap_or(0), &alias],
        ))?;
        Ok(found.map(|r| ResolvedLink {
            id: r.get(0),
            owner_id: r.get(1),
            alias: r.get(2),
            url: r.get(3),
            password_hash: r.get(4),
            disabled: r.get(5),
            public: r.get(6),
            expiration_url: r.get::<_, Option<String>>(7).filter(|u| !u.is_empty()),
            expiration_clicks: clamped(r.get(8)),
            ends_at: optional_time(r.get(9)),
            clicks: r.get::<_, i64>(10).max(0) as u64,
            target_type: target_type(u8::try_from(r.get::<_, i16>(11)).unwrap_or(0)),
            geo: parse_rules(r.get(12)),
            platform: parse_rules(r.get(13)),
            rotation: rotation_urls(r.get(14)),
            last_rotation: clamped(r.get(15)),
        }))
    }

    fn link_domain_name(&self, id: Id) -> Result<Option<String>> {
        let row = self
            .wait(self.c.query_opt(
                "SELECT d.name FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.id = $1",
                &[&id],
            ))
            .map_err(pg_error)?;
        Ok(row.map(|r| r.get(0)))
    }
}
