//! What redirects read: the domain a request's host names, the link an alias names there, the
//! domain a link lives on. Every server reads these on a cache miss.

use linkdeck_domain::{Id, Result};

/// A link's columns as both stores hold them, before they are read into a [`ResolvedLink`].
pub struct LinkColumns {
    pub id: Id,
    pub owner_id: Id,
    pub alias: String,
    pub url: String,
    pub password_hash: Option<String>,
    pub disabled: bool,
    pub public: bool,
    pub expiration_url: Option<String>,
    pub expiration_clicks: i64,
    pub ends_at: Option<i64>,
    pub clicks: i64,
    pub target_type: i64,
    pub geo_target: Option<String>,
    pub platform_target: Option<String>,
    pub rotation_target: Option<String>,
    pub last_rotation: i64,
}

pub trait Redirects {
    /// The domain whose host is `host` or, failing that, `bare` (the host without its port);
    /// both lower-case.
    fn domain_for_host(&self, host: &str, bare: &str) -> Result<Option<Id>>;
    /// The link `alias` (without case) among the links of `domain`, or among the links without
    /// a domain; its clicks and rotation as exact as the store keeps them.
    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<LinkColumns>>;
    /// The name of the domain link `id` lives on, if any.
    fn link_domain_name(&self, id: Id) -> Result<Option<String>>;
}
