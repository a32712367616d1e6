//! Domains: the hosts an owner's links may live on, each with its settings (fallbacks and
//! robots policy). A domain read for itself is read with [`DOMAIN_COLUMNS`].

use jiff::Timestamp;
use linkdeck_domain::{Domain, HostSettings, Id, Result};

/// The columns of a domain read for itself, in the order [`crate::rows::domain_with_settings`]
/// reads them (a link's joined domain is read without its settings).
pub const DOMAIN_COLUMNS: &str = "id, owner_id, name, created_at, updated_at, \
     root_url, unknown_url, expired_url, robots, robots_txt";

/// A domain's settings as its row holds them: `root_url, unknown_url, expired_url, robots,
/// robots_txt`, for the parameters of an update.
pub fn settings_cells(
    settings: &HostSettings,
) -> (Option<&str>, Option<&str>, Option<&str>, i64, Option<&str>) {
    (
        settings.root_url.as_deref(),
        settings.unknown_url.as_deref(),
        settings.expired_url.as_deref(),
        settings.robots.code(),
        settings.robots.text(),
    )
}

pub trait Domains {
    fn domain(&self, owner: Id, id: Id) -> Result<Option<Domain>>;
    /// The owner's domain `id`, held against concurrent writers until the transaction ends (a
    /// link being written on it waits, then finds it gone).
    fn lock_domain(&self, owner: Id, id: Id) -> Result<Option<Domain>>;
    /// Whether any owner's domain has this name or this host (names are global: a host serves
    /// one owner).
    fn domain_in_use(&self, name: &str, host: &str) -> Result<bool>;
    /// Adds a domain; a name or host taken meanwhile by another writer is a field error on
    /// `name`.
    fn insert_domain(&self, owner: Id, name: &str, host: &str, now: Timestamp) -> Result<Id>;
    /// Stores the settings of the owner's domain `id` (its fallbacks and robots policy); `false`
    /// when there is no such domain.
    fn set_domain_settings(
        &self,
        owner: Id,
        id: Id,
        settings: &HostSettings,
        now: Timestamp,
    ) -> Result<bool>;
    /// Removes the owner's domain `id` and its traffic rows; `false` when there is none.
    fn delete_domain(&self, owner: Id, id: Id) -> Result<bool>;
    /// How many of the owner's links use domain `id`: live ones, and ones in the trash (a domain
    /// is kept while they may come back to it, so a restored link never lands on another
    /// domain that took its id).
    fn domain_uses(&self, owner: Id, id: Id) -> Result<(u64, u64)>;
    /// A page of the owner's domains, newest first, and how many there are.
    fn domains(&self, owner: Id, offset: u64, limit: u32) -> Result<(Vec<Domain>, u64)>;
}
