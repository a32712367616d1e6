//! SQL for domains on PostgreSQL.

use deadpool_postgres::GenericClient;

use jiff::Timestamp;
use linkdeck_store::words::host_in_use;
use linkdeck_store::{DOMAIN_COLUMNS as COLUMNS, Domains, settings_cells};

use crate::error::{is_unique_violation, pg_error};
use crate::sql::{Cols, col, count, execute, exists, one, page, value};
use crate::traffic;
use crate::tx::PgTx;
use linkdeck_domain::{Domain, Error, HostSettings, Id, Result};
use linkdeck_store::rows;
use linkdeck_store::traffic::Scope;

/// The owner's domain `id`, read with `lock` after its statement.
async fn select<C: GenericClient>(c: &C, owner: Id, id: Id, lock: &str) -> Result<Option<Domain>> {
    one(
        c,
        &format!("SELECT {COLUMNS} FROM domains WHERE id = $1 AND owner_id = $2{lock}"),
        &[&id, &owner],
        |r| rows::domain_with_settings(&Cols(r)),
    )
    .await
}

impl<C: GenericClient + Sync> Domains for PgTx<'_, C> {
    fn domain(&self, owner: Id, id: Id) -> Result<Option<Domain>> {
        self.wait(select(self.c, owner, id, ""))
    }

    fn lock_domain(&self, owner: Id, id: Id) -> Result<Option<Domain>> {
        // Against every other writer: a removal checks its links under this lock.
        self.wait(select(self.c, owner, id, " FOR UPDATE"))
    }

    fn domain_in_use(&self, name: &str, host: &str) -> Result<bool> {
        self.wait(exists(
            self.c,
            "SELECT 1 FROM domains WHERE lower(name) = lower($1) OR lower(host) = lower($2)",
            &[&name, &host],
        ))
    }

    fn insert_domain(&self, owner: Id, name: &str, host: &str, now: Timestamp) -> Result<Id> {
        // A name or host another writer took meanwhile is the same field error as one found by
        // `domain_in_use`.
        let row = self
            .wait(self.c.query_one(
                "INSERT INTO domains (owner_id, name, host, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $4) RETURNING id",
                &[&owner, &name, &host, &now.as_second()],
            ))
            .map_err(|e| {
                if is_unique_violation(&e) {
                    Error::field("name", host_in_use(host))
                } else {
                    pg_error(e)
                }
            })?;
        col(&row, 0)
    }

    fn set_domain_settings(
        &self,
        owner: Id,
        id: Id,
        settings: &HostSettings,
        now: Timestamp,
    ) -> Result<bool> {
        let (root, unknown, expired, robots, robots_txt) = settings_cells(settings);
        let robots = robots as i16;
        let n = self.wait(execute(
            self.c,
            "UPDATE domains SET root_url = $3, unknown_url = $4, expired_url = $5, robots = $6, \
             robots_txt = $7, updated_at = $8 WHERE id = $1 AND owner_id = $2",
            &[
                &id,
                &owner,
                &root,
                &unknown,
                &expired,
                &robots,
                &robots_txt,
                &now.as_second(),
            ],
        ))?;
        Ok(n > 0)
    }

    fn delete_domain(&self, owner: Id, id: Id) -> Result<bool> {
        let n = self.wait(execute(
            self.c,
            "DELETE FROM domains WHERE id = $1 AND owner_id = $2",
            &[&id, &owner],
        ))?;
        // Its links, none left, took their traffic with them; its sums go here.
        if n > 0 {
            self.wait(traffic::delete_scope(self.c, Scope::Domain, &[id]))?;
        }
        Ok(n > 0)
    }

    fn domain_uses(&self, owner: Id, id: Id) -> Result<(u64, u64)> {
        let count_in = |table: &str| -> Result<u64> {
            let sql =
                format!("SELECT count(*) FROM {table} WHERE owner_id = $1 AND domain_id = $2");
            let n: i64 = self.wait(value(self.c, &sql, &[&owner, &id]))?;
            Ok(count(n))
        };
        Ok((count_in("links")?, count_in("trash_links")?))
    }

    fn domains(&self, owner: Id, offset: u64, limit: u32) -> Result<(Vec<Domain>, u64)> {
        self.wait(page(
            self.c,
            (
                "SELECT count(*) FROM domains WHERE owner_id = $1",
                &[&owner],
            ),
            (
                &format!(
                    "SELECT {COLUMNS} FROM domains WHERE owner_id = $1 \
                     ORDER BY id DESC LIMIT $2 OFFSET $3"
                ),
                &[&owner, &i64::from(limit), &(offset as i64)],
            ),
            |r| rows::domain_with_settings(&Cols(r)),
        ))
    }
}
