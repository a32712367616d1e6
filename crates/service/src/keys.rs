//! API keys: random secrets shown once, stored only as SHA-256 digests, checked in constant time.

pub use linkdeck_store::{KeyGrant, KeyInfo};
use rand::Rng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::LocalService;
use jiff::Timestamp;
use linkdeck_domain::{Error, Id, Result, SpaceSet, validate_key_name};
use linkdeck_store::LiveKey;

/// Every key starts with this, so a leaked key is recognisable in a log or a repository scan.
pub const KEY_PREFIX: &str = "ldk_";
/// Random characters after the prefix: 40 of 62 symbols is about 238 bits.
const KEY_RANDOM_LEN: usize = 40;
/// How much of a key is kept in clear to tell keys apart in a list.
const SHOWN_PREFIX_LEN: usize = KEY_PREFIX.len() + 6;

/// Who a valid key acts for, whether it may only read, and the spaces it is limited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOwner {
    pub owner_id: Id,
    pub key_id: Id,
    pub read_only: bool,
    pub spaces: Option<SpaceSet>,
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

/// The owner of `key` when its stored digest is the one wanted and it has not expired by
/// `now`. The index found the row; the comparison that decides is constant-time.
fn same_key(key: &LiveKey, wanted: &[u8; 32], now: Timestamp) -> Option<KeyOwner> {
    let same = bool::from(key.digest.ct_eq(wanted.as_slice()));
    let live = key.grant.expires_at.is_none_or(|at| now < at);
    (same && live).then_some(KeyOwner {
        owner_id: key.owner,
        key_id: key.id,
        read_only: key.grant.read_only,
        spaces: key.grant.spaces,
    })
}

impl LocalService {
    /// Creates a key for `owner_id`. The plain key is returned here once and never again.
    pub async fn create_key(&self, owner_id: Id, name: Option<&str>) -> Result<(String, KeyInfo)> {
        self.create_key_with(owner_id, name, KeyGrant::default())
            .await
    }

    /// Creates a key for `owner_id` that may do what `grant` says; an expiry must lie ahead, and
    /// the spaces it is limited to must be the owner's.
    pub async fn create_key_with(
        &self,
        owner_id: Id,
        name: Option<&str>,
        grant: KeyGrant,
    ) -> Result<(String, KeyInfo)> {
        let name = validate_key_name(name).map_err(|m| Error::field("name", m))?;
        if grant.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(Error::field("expires", "must be in the future"));
        }
        let key = generate_key();
        let prefix = key[..SHOWN_PREFIX_LEN].to_owned();
        let digest = digest(&key).to_vec();
        let now = self.now();
        let info = self
            .store
            .write(move |tx| {
                if tx.owner(owner_id)?.is_none() {
                    return Err(Error::not_found(format!("owner {owner_id}")));
                }
                let spaces = grant.spaces.as_ref().map_or(&[][..], SpaceSet::ids);
                if spaces.is_empty() && grant.spaces.is_some() {
                    return Err(Error::field("spaces", "name at least one space"));
                }
                for &space in spaces {
                    if tx.space(owner_id, space)?.is_none() {
                        return Err(Error::field("spaces", format!("space {space} not found")));
                    }
                }
                let id = tx.insert_key(owner_id, name.as_deref(), &prefix, &digest, grant, now)?;
                tx.key(id)?
                    .ok_or_else(|| Error::not_found(format!("key {id}")))
            })
            .await?;
        Ok((key, info))
    }

    /// Every key (of one owner, when given), revoked ones included, oldest first.
    pub async fn list_keys(&self, owner_id: Option<Id>) -> Result<Vec<KeyInfo>> {
        self.store.read(move |tx| tx.keys(owner_id)).await
    }

    /// Revokes a key at once: requests with it fail from now on. Revoking twice is not an error.
    pub async fn revoke_key(&self, id: Id) -> Result<KeyInfo> {
        let now = self.now();
        self.store
            .write(move |tx| {
                if !tx.revoke_key(id, now)? {
                    return Err(Error::not_found(format!("key {id}")));
                }
                tx.key(id)?
                    .ok_or_else(|| Error::not_found(format!("key {id}")))
            })
            .await
    }

    /// The owner (and key id) of a valid, unrevoked, unexpired key; `None` for anything else.
    pub async fn authenticate(&self, key: &str) -> Result<Option<KeyOwner>> {
        if !key.starts_with(KEY_PREFIX) || key.len() > 256 {
            return Ok(None);
        }
        let wanted = digest(key);
        let found = self.store.read(move |tx| tx.live_key(&wanted)).await?;
        let now = self.now();
        Ok(found.and_then(|key| same_key(&key, &wanted, now)))
    }

    /// Records that a key was used; best effort, at most once a minute per key.
    pub async fn touch_key(&self, id: Id) -> Result<()> {
        let now = self.now();
        self.store.write(move |tx| tx.touch_key(id, now)).await
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
