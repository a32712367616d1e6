//! API keys: random secrets shown once, stored only as SHA-256 digests, checked in constant time.

use jiff::Timestamp;
use rand::Rng;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{LocalService, db_error, pg};
use crate::domain::{Error, Id, Result, validate_key_name};

/// Every key starts with this, so a leaked key is recognisable in a log or a repository scan.
pub const KEY_PREFIX: &str = "ldk_";
/// Random characters after the prefix: 40 of 62 symbols is about 238 bits.
const KEY_RANDOM_LEN: usize = 40;
/// How much of a key is kept in clear to tell keys apart in a list.
const SHOWN_PREFIX_LEN: usize = KEY_PREFIX.len() + 6;

/// What is known of a key after its creation: never the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyInfo {
    pub id: Id,
    pub owner_id: Id,
    pub owner: String,
    pub name: Option<String>,
    /// The first characters of the key, such as `ldk_a1b2c3`.
    pub prefix: String,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
}

/// Who a valid key acts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOwner {
    pub owner_id: Id,
    pub key_id: Id,
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn generate_key() -> String {
    const SYMBOLS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut rng = rand::rng();
    let random: String = (0..KEY_RANDOM_LEN)
        .map(|_| char::from(SYMBOLS[rng.random_range(0..SYMBOLS.len())]))
        .collect();
    format!("{KEY_PREFIX}{random}")
}

fn time(seconds: Option<i64>) -> Option<Timestamp> {
    seconds.and_then(|s| Timestamp::from_second(s).ok())
}

const KEY_COLUMNS: &str =
    "k.id, k.owner_id, o.name, k.name, k.prefix, k.created_at, k.last_used_at, k.revoked_at";

/// Key `id` as it now stands: what creating and revoking a key answer with.
fn key_by_id(conn: &Connection, id: Id) -> Result<KeyInfo> {
    conn.query_row(
        &format!(
            "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id WHERE k.id = ?1"
        ),
        [id],
        key_from_row,
    )
    .map_err(db_error)
}

fn key_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<KeyInfo> {
    Ok(KeyInfo {
        id: row.get(0)?,
        owner_id: row.get(1)?,
        owner: row.get(2)?,
        name: row.get(3)?,
        prefix: row.get(4)?,
        created_at: time(row.get(5)?).unwrap_or_default(),
        last_used_at: time(row.get(6)?),
        revoked_at: time(row.get(7)?),
    })
}

/// The owner of key `id` when its stored digest is the one wanted. The index found the row;
/// the comparison that decides is constant-time.
fn same_key(id: Id, owner: Id, stored: &[u8], wanted: &[u8; 32]) -> Option<KeyOwner> {
    bool::from(stored.ct_eq(wanted.as_slice())).then_some(KeyOwner {
        owner_id: owner,
        key_id: id,
    })
}

impl LocalService {
    /// Creates a key for `owner_id`. The plain key is returned here once and never again.
    pub async fn create_key(&self, owner_id: Id, name: Option<&str>) -> Result<(String, KeyInfo)> {
        let name = validate_key_name(name).map_err(|m| Error::field("name", m))?;
        let key = generate_key();
        let prefix = key[..SHOWN_PREFIX_LEN].to_owned();
        let digest = digest(&key).to_vec();
        let now = self.now().as_second();
        if let Some(pg) = self.pg() {
            let info =
                pg::keys::create(pg, owner_id, name.as_deref(), &prefix, &digest, now).await?;
            return Ok((key, info));
        }
        let info = self
            .db()?
            .write(move |tx| {
                let owner_exists = tx
                    .query_row("SELECT 1 FROM owners WHERE id = ?1", [owner_id], |_| Ok(()))
                    .optional()
                    .map_err(db_error)?
                    .is_some();
                if !owner_exists {
                    return Err(Error::not_found(format!("owner {owner_id}")));
                }
                tx.execute(
                    "INSERT INTO api_keys (owner_id, name, prefix, digest, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![owner_id, name, prefix, digest, now],
                )
                .map_err(db_error)?;
                let id = tx.last_insert_rowid();
                key_by_id(tx, id)
            })
            .await?;
        Ok((key, info))
    }

    /// Every key (of one owner, when given), revoked ones included, oldest first.
    pub async fn list_keys(&self, owner_id: Option<Id>) -> Result<Vec<KeyInfo>> {
        if let Some(pg) = self.pg() {
            return pg::keys::list(pg, owner_id).await;
        }
        self.db()?
            .read(move |conn| {
                let mut stmt = conn
                    .prepare_cached(&format!(
                        "SELECT {KEY_COLUMNS} FROM api_keys k JOIN owners o ON o.id = k.owner_id
                         WHERE ?1 IS NULL OR k.owner_id = ?1 ORDER BY k.id"
                    ))
                    .map_err(db_error)?;
                let rows = stmt.query_map([owner_id], key_from_row).map_err(db_error)?;
                rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_error)
            })
            .await
    }

    /// Revokes a key at once: requests with it fail from now on. Revoking twice is not an error.
    pub async fn revoke_key(&self, id: Id) -> Result<KeyInfo> {
        let now = self.now().as_second();
        if let Some(pg) = self.pg() {
            return pg::keys::revoke(pg, id, now).await;
        }
        self.db()?
            .write(move |tx| {
                let changed = tx
                    .execute(
                        "UPDATE api_keys SET revoked_at = ifnull(revoked_at, ?2) WHERE id = ?1",
                        params![id, now],
                    )
                    .map_err(db_error)?;
                if changed == 0 {
                    return Err(Error::not_found(format!("key {id}")));
                }
                key_by_id(tx, id)
            })
            .await
    }

    /// The owner (and key id) of a valid, unrevoked key; `None` for anything else.
    pub async fn authenticate(&self, key: &str) -> Result<Option<KeyOwner>> {
        if !key.starts_with(KEY_PREFIX) || key.len() > 256 {
            return Ok(None);
        }
        let wanted = digest(key);
        if let Some(pg) = self.pg() {
            let row = pg::keys::by_digest(pg, &wanted).await?;
            return Ok(row.and_then(|(id, owner, stored)| same_key(id, owner, &stored, &wanted)));
        }
        self.db()?
            .read(move |conn| {
                let row: Option<(Id, Id, Vec<u8>)> = conn
                    .prepare_cached(
                        "SELECT id, owner_id, digest FROM api_keys
                         WHERE digest = ?1 AND revoked_at IS NULL",
                    )
                    .map_err(db_error)?
                    .query_row([wanted.as_slice()], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })
                    .optional()
                    .map_err(db_error)?;
                Ok(row.and_then(|(id, owner, stored)| same_key(id, owner, &stored, &wanted)))
            })
            .await
    }

    /// Records that a key was used; best effort, at most once a minute per key.
    pub async fn touch_key(&self, id: Id) -> Result<()> {
        let now = self.now().as_second();
        if let Some(pg) = self.pg() {
            return pg::keys::touch(pg, id, now).await;
        }
        self.db()?
            .write(move |tx| {
                tx.execute(
                    "UPDATE api_keys SET last_used_at = ?2
                     WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60)",
                    params![id, now],
                )
                .map_err(db_error)?;
                Ok(())
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_random_and_long() {
        let a = generate_key();
        let b = generate_key();
        assert!(a.starts_with(KEY_PREFIX));
        assert_eq!(a.len(), KEY_PREFIX.len() + KEY_RANDOM_LEN);
        assert_ne!(a, b);
    }
}
