//! API keys: their digests and what is known of them, never the secret.

use jiff::Timestamp;
use linkdeck_domain::{Id, Result, SpaceSet};

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
    /// The key may only read: the server refuses it every request that changes data.
    pub read_only: bool,
    /// From this moment the key is refused, as a revoked one is.
    pub expires_at: Option<Timestamp>,
    /// The key sees and changes only links in these spaces; `None`: the whole account.
    pub spaces: Option<SpaceSet>,
}

/// What a new key may do beyond acting for its owner; the default can do everything, forever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyGrant {
    pub read_only: bool,
    pub expires_at: Option<Timestamp>,
    /// Only links in these spaces; `None`: the whole account.
    pub spaces: Option<SpaceSet>,
}

/// An unrevoked key found by its digest, with the digest as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveKey {
    pub id: Id,
    pub owner: Id,
    pub digest: Vec<u8>,
    pub grant: KeyGrant,
}

pub trait Keys {
    /// Stores a key of an existing owner (its digest, never the key); answers its id.
    fn insert_key(
        &self,
        owner: Id,
        name: Option<&str>,
        prefix: &str,
        digest: &[u8],
        grant: KeyGrant,
        now: Timestamp,
    ) -> Result<Id>;
    fn key(&self, id: Id) -> Result<Option<KeyInfo>>;
    /// Every key (of one owner, when given), revoked ones included, oldest first.
    fn keys(&self, owner: Option<Id>) -> Result<Vec<KeyInfo>>;
    /// Revokes key `id` at `now` unless it already was; `false` when there is no such key.
    fn revoke_key(&self, id: Id, now: Timestamp) -> Result<bool>;
    /// The unrevoked key whose digest is `digest`.
    fn live_key(&self, digest: &[u8]) -> Result<Option<LiveKey>>;
    /// Records that key `id` was used at `now`, unless that was recorded less than a minute
    /// ago.
    fn touch_key(&self, id: Id, now: Timestamp) -> Result<()>;
}
