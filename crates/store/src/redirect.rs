//! What redirects read: the domain a request's host names, the link an alias names there, the
//! domain a link lives on. Every server reads these on a cache miss.

use jiff::Timestamp;
use linkdeck_domain::{HostSettings, Id, LinkOptions, Result, TargetRule, TargetType};

/// A link as the redirect handler sees it. Its own shape, not a [`linkdeck_domain::Link`]: it is
/// read on every visit, across owners, with the password's hash and without the joins a `Link`
/// needs (space, domain, title); field names follow [`linkdeck_domain::LinkField`].
#[derive(Clone, PartialEq)]
pub struct ResolvedLink {
    pub id: Id,
    pub owner_id: Id,
    pub alias: String,
    pub url: String,
    /// `url` as a `Location` header carries it when the visitor brings nothing to add
    /// ([`linkdeck_domain::destination`] with no query and no rest of path): worked out once,
    /// when the link is read, instead of on every visit.
    pub location: String,
    /// The Argon2 hash (PHC string) when a password protects the link.
    pub password_hash: Option<String>,
    pub disabled: bool,
    pub public: bool,
    pub expiration_url: Option<String>,
    /// 0 means no limit.
    pub expiration_clicks: u32,
    pub ends_at: Option<Timestamp>,
    /// Clicks recorded in the database when this was read.
    pub clicks: u64,
    pub target_type: TargetType,
    pub geo: Vec<TargetRule>,
    pub platform: Vec<TargetRule>,
    pub rotation: Vec<String>,
    pub last_rotation: u32,
    pub options: LinkOptions,
}

impl std::fmt::Debug for ResolvedLink {
    // The password hash stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedLink")
            .field("id", &self.id)
            .field("alias", &self.alias)
            .field("url", &self.url)
            .field("password", &self.password_hash.is_some())
            .field("disabled", &self.disabled)
            .field("expiration_clicks", &self.expiration_clicks)
            .field("ends_at", &self.ends_at)
            .field("clicks", &self.clicks)
            .field("target_type", &self.target_type)
            .finish_non_exhaustive()
    }
}

pub trait Redirects {
    /// The domain whose host is `host` or, failing that, `bare` (the host without its port);
    /// both lower-case: its id and its settings.
    fn domain_for_host(&self, host: &str, bare: &str) -> Result<Option<(Id, HostSettings)>>;
    /// The link `alias` (without case) among the links of `domain`, or among the links without
    /// a domain; its clicks and rotation as exact as the store keeps them.
    fn resolve(&self, domain: Option<Id>, alias: &str) -> Result<Option<ResolvedLink>>;
    /// The name of the domain link `id` lives on, if any.
    fn link_domain_name(&self, id: Id) -> Result<Option<String>>;
    /// Up to `limit` links, the most clicked first, each with its domain (none: a link without
    /// one), as [`Redirects::resolve`] reads them: what a server's alias cache starts with.
    fn most_clicked(&self, limit: u64) -> Result<Vec<(Option<Id>, ResolvedLink)>>;
}

#[cfg(test)]
mod tests {
    use crate::parse_rotation;

    #[test]
    fn stored_targets_are_read_in_either_shape() {
        let geo = crate::parse_rules(Some(
            r#"[{"key":"US","value":"https://us.example"}]"#.into(),
        ));
        assert_eq!(geo[0].key, "US");
        let plain = parse_rotation(Some(r#"["https://a.example","https://b.example"]"#.into()));
        let objects = parse_rotation(Some(
            r#"[{"value":"https://a.example"},{"value":"https://b.example"}]"#.into(),
        ));
        assert_eq!(plain, objects);
        assert!(crate::parse_rules(Some("not json".into())).is_empty());
        assert!(parse_rotation(None).is_empty());
    }
}
