//! SQL for resolving short links on PostgreSQL: the domain a request's host names, the link an
//! alias names there, and the domain a link lives on. Every server reads these on a cache miss;
//! the statements are prepared once per pooled connection.

use deadpool_postgres::GenericClient;
use linkdeck_store::rows;
use linkdeck_store::{Redirects, ResolvedLink};

use crate::sql::{Cols, all, col, one};
use crate::tx::PgTx;
use linkdeck_domain::{HostSettings, Id, Result};

impl<C: GenericClient + Sync> Redirects for PgTx<'_, C> {
    fn domain_for_host(&self, host: &str, bare: &str) -> Result<Option<(Id, HostSettings)>> {
        self.wait(one(
            self.c,
            "SELECT id, root_url, unknown_url, expired_url, robots, robots_txt FROM domains
             WHERE lower(host) IN ($1, $2) ORDER BY lower(host) = $1 DESC LIMIT 1",
            &[&host, &bare],
            |r| Ok((col(r, 0)?, rows::host_settings(&Cols(r), 1)?)),
        ))
    }

    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<ResolvedLink>> {
        // The expressions of the unique index `links_alias`, so that it answers. A limited or
        // rotating link's exact count and turn are its quota row's (`quota.rs`): the link row
        // follows them only in the click writers' batches, and a preview or status read between
        // must already see a link used up.
        self.wait(one(
            self.c,
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at,
                    GREATEST(l.clicks, coalesce(q.used, 0)), l.target_type, l.geo_target,
                    l.platform_target, l.rotation_target, coalesce(q.position, l.last_rotation),
                    l.options
             FROM links l LEFT JOIN click_quota q ON q.link_id = l.id
             WHERE coalesce(l.domain_id, 0) = $1 AND lower(l.alias) = lower($2)",
            &[&domain.unwrap_or(0), &alias],
            |r| rows::resolved(&Cols(r)),
        ))
    }

    fn most_clicked(&self, limit: u64) -> Result<Vec<(Option<Id>, ResolvedLink)>> {
        // Counts as `resolve` reads them: a limited or rotating link's from its quota row.
        self.wait(all(
            self.c,
            "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                    l.expiration_url, l.expiration_clicks, l.ends_at,
                    GREATEST(l.clicks, coalesce(q.used, 0)) AS used, l.target_type, l.geo_target,
                    l.platform_target, l.rotation_target, coalesce(q.position, l.last_rotation),
                    l.options, l.domain_id
             FROM links l LEFT JOIN click_quota q ON q.link_id = l.id
             ORDER BY used DESC, l.id
             LIMIT $1",
            &[&i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| {
                Ok((
                    rows::Cells::opt_int(&Cols(r), 17)?,
                    rows::resolved(&Cols(r))?,
                ))
            },
        ))
    }

    fn link_domain_name(&self, id: Id) -> Result<Option<String>> {
        self.wait(one(
            self.c,
            "SELECT d.name FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.id = $1",
            &[&id],
            |r| col(r, 0),
        ))
    }
}
