//! SQL for API keys on PostgreSQL. The rules (the key's shape, its digest, the constant-time
//! comparison) stay in `backend/local/keys.rs`.

use jiff::Timestamp;
use tokio_postgres::Row;

use super::{Pg, pg_error};
use crate::backend::local::KeyInfo;
use crate::domain::{Error, Id, Result};

/// The key's columns with its owner's name, from `k` (a key row) joined to `o` (owners).
const KEY_COLUMNS: &str =
    "k.id, k.owner_id, o.name, k.name, k.prefix, k.created_at, k.last_used_at, k.revoked_at";

fn time(seconds: Option<i64>) -> Option<Timestamp> {
    seconds.and_then(|s| Timestamp::from_second(s).ok())
}

fn key(row: &Row) -> KeyInfo {
    KeyInfo {
        id: row.get(0),
        owner_id: row.get(1),
        owner: row.get(2),
        name: row.get(3),
        prefix: row.get(4),
        created_at: time(row.get(5)).unwrap_or_default(),
        last_used_at: time(row.get(6)),
        revoked_at: time(row.get(7)),
    }
}

/// Stores a key of `owner_id` (its digest, never the key); an unknown owner is not found.
pub async fn create(
    pg: &Pg,
    owner_id: Id,
    name: Option<&str>,
    prefix: &str,
    digest: &[u8],
    now: i64,
) -> Result<KeyInfo> {
    let client = pg.client().await?;
    let row = client
        .query_opt(
            &format!(
                "WITH k AS (
                     INSERT INTO api_keys (owner_id, name, prefix, digest, created_at)
                     SELECT id, $2::text, $3::text, $4::bytea, $5::bigint FROM owners WHERE id = $1
                     RETURNING *)
                 SELECT {KEY_COLUMNS} FROM k JOIN owners o ON o.id = k.owner_id"
            ),
            &[&owner_id, &name, &prefix, &digest, &now],
        )
        .await
        .map_err(pg_error)?;
    row.as_ref()
        .map(key)
        .ok_or_else(|| Error::not_found(format!("owner {owner_id}")))
}

/// Every key (of one owner, when given), revoked ones included, oldest first.
pub async fn list(pg: &Pg, owner_id: Option<Id>) -> Result<Vec<KeyInfo>> {
    let client = pg.client().await?;
    let rows = client
        .query(
            &format!(
                "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id
                 WHERE $1::bigint IS NULL OR k.owner_id = $1 ORDER BY k.id"
            ),
            &[&owner_id],
        )
        .await
        .map_err(pg_error)?;
    Ok(rows.iter().map(key).collect())
}

/// Revokes key `id` (at `now`, unless it already was).
pub async fn revoke(pg: &Pg, id: Id, now: i64) -> Result<KeyInfo> {
    let client = pg.client().await?;
    let row = client
        .query_opt(
            &format!(
                "WITH k AS (
                     UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1
                     RETURNING *)
                 SELECT {KEY_COLUMNS} FROM k JOIN owners o ON o.id = k.owner_id"
            ),
            &[&id, &now],
        )
        .await
        .map_err(pg_error)?;
    row.as_ref()
        .map(key)
        .ok_or_else(|| Error::not_found(format!("key {id}")))
}

/// The unrevoked key with this digest: its id, its owner and the stored digest.
pub async fn by_digest(pg: &Pg, digest: &[u8]) -> Result<Option<(Id, Id, Vec<u8>)>> {
    let client = pg.client().await?;
    let stmt = client
        .prepare_cached(
            "SELECT id, owner_id, digest FROM api_keys WHERE digest = $1 AND revoked_at IS NULL",
        )
        .await
        .map_err(pg_error)?;
    let row = client
        .query_opt(&stmt, &[&digest])
        .await
        .map_err(pg_error)?;
    Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
}

/// Records that key `id` was used at `now`, unless that was recorded less than a minute ago.
pub async fn touch(pg: &Pg, id: Id, now: i64) -> Result<()> {
    let client = pg.client().await?;
    client
        .execute(
            "UPDATE api_keys SET last_used_at = $2::bigint
             WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::bigint - 60)",
            &[&id, &now],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}
