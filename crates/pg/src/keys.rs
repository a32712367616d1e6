//! SQL for API keys on PostgreSQL.

use deadpool_postgres::GenericClient;
use jiff::Timestamp;
use linkdeck_store::{KeyInfo, Keys, LiveKey, optional_time};
use tokio_postgres::Row;

use crate::error::pg_error;
use crate::sql::row;
use crate::tx::PgTx;
use linkdeck_domain::{Id, Result};

/// The key's columns with its owner's name, from `k` (a key row) joined to `o` (owners).
const KEY_COLUMNS: &str =
    "k.id, k.owner_id, o.name, k.name, k.prefix, k.created_at, k.last_used_at, k.revoked_at";

fn key(row: &Row) -> KeyInfo {
    KeyInfo {
        id: row.get(0),
        owner_id: row.get(1),
        owner: row.get(2),
        name: row.get(3),
        prefix: row.get(4),
        created_at: optional_time(row.get(5)).unwrap_or_default(),
        last_used_at: optional_time(row.get(6)),
        revoked_at: optional_time(row.get(7)),
    }
}

impl<C: GenericClient + Sync> Keys for PgTx<'_, C> {
    fn insert_key(
        &self,
        owner: Id,
        name: Option<&str>,
        prefix: &str,
        digest: &[u8],
        now: Timestamp,
    ) -> Result<Id> {
        let row = self
            .wait(self.c.query_one(
                "INSERT INTO api_keys (owner_id, name, prefix, digest, created_at)
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                &[&owner, &name, &prefix, &digest, &now.as_second()],
            ))
            .map_err(pg_error)?;
        Ok(row.get(0))
    }

    fn key(&self, id: Id) -> Result<Option<KeyInfo>> {
        let row = self
            .wait(self.c.query_opt(
                &format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id
                     WHERE k.id = $1"
                ),
                &[&id],
            ))
            .map_err(pg_error)?;
        Ok(row.as_ref().map(key))
    }

    fn keys(&self, owner: Option<Id>) -> Result<Vec<KeyInfo>> {
        let rows = self
            .wait(self.c.query(
                &format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id
                     WHERE $1::bigint IS NULL OR k.owner_id = $1 ORDER BY k.id"
                ),
                &[&owner],
            ))
            .map_err(pg_error)?;
        Ok(rows.iter().map(key).collect())
    }

    fn revoke_key(&self, id: Id, now: Timestamp) -> Result<bool> {
        let changed = self
            .wait(self.c.execute(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1",
                &[&id, &now.as_second()],
            ))
            .map_err(pg_error)?;
        Ok(changed > 0)
    }

    fn live_key(&self, digest: &[u8]) -> Result<Option<LiveKey>> {
        let found = self.wait(row(
            self.c,
            "SELECT id, owner_id, digest FROM api_keys
             WHERE digest = $1 AND revoked_at IS NULL",
            &[&digest],
        ))?;
        Ok(found.map(|r| (r.get(0), r.get(1), r.get(2))))
    }

    fn touch_key(&self, id: Id, now: Timestamp) -> Result<()> {
        self.wait(self.c.execute(
            "UPDATE api_keys SET last_used_at = $2::bigint
             WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::bigint - 60)",
            &[&id, &now.as_second()],
        ))
        .map_err(pg_error)?;
        Ok(())
    }
}
