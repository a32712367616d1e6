//! SQL for API keys.

use jiff::Timestamp;
use linkdeck_store::{KeyGrant, KeyInfo, Keys, LiveKey, rows};
use rusqlite::params;

use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result};

/// The key's columns with its owner's name, from `k` (a key row) joined to `o` (owners).
const KEY_COLUMNS: &str = "k.id, k.owner_id, o.name, k.name, k.prefix, k.created_at, \
     k.last_used_at, k.revoked_at, k.read_only, k.expires_at, k.spaces";

impl Keys for SqliteTx<'_> {
    fn insert_key(
        &self,
        owner: Id,
        name: Option<&str>,
        prefix: &str,
        digest: &[u8],
        grant: KeyGrant,
        now: Timestamp,
    ) -> Result<Id> {
        let expires = grant.expires_at.map(|t| t.as_second());
        let spaces = grant.spaces.map(|s| s.joined());
        self.conn.run(
            "INSERT INTO api_keys (owner_id, name, prefix, digest, created_at, read_only, \
             expires_at, spaces) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                owner,
                name,
                prefix,
                digest,
                now.as_second(),
                grant.read_only,
                expires,
                spaces
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn key(&self, id: Id) -> Result<Option<KeyInfo>> {
        self.conn.one(
            &format!(
                "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id
                 WHERE k.id = ?1"
            ),
            [id],
            |r| rows::key(&Cols(r)),
        )
    }

    fn keys(&self, owner: Option<Id>) -> Result<Vec<KeyInfo>> {
        self.conn.all(
            &format!(
                "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id
                 WHERE ?1 IS NULL OR k.owner_id = ?1 ORDER BY k.id"
            ),
            [owner],
            |r| rows::key(&Cols(r)),
        )
    }

    fn revoke_key(&self, id: Id, now: Timestamp) -> Result<bool> {
        let changed = self.conn.run(
            "UPDATE api_keys SET revoked_at = ifnull(revoked_at, ?2) WHERE id = ?1",
            params![id, now.as_second()],
        )?;
        Ok(changed > 0)
    }

    fn live_key(&self, digest: &[u8]) -> Result<Option<LiveKey>> {
        self.conn.one(
            "SELECT id, owner_id, digest, read_only, expires_at, spaces FROM api_keys
             WHERE digest = ?1 AND revoked_at IS NULL",
            [digest],
            |r| rows::live_key(&Cols(r), r.get(2)?),
        )
    }

    fn touch_key(&self, id: Id, now: Timestamp) -> Result<()> {
        self.conn.run(
            "UPDATE api_keys SET last_used_at = ?2
             WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60)",
            params![id, now.as_second()],
        )?;
        Ok(())
    }
}
