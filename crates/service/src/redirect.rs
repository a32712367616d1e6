//! What the redirect handler needs to know about an alias, read straight from the database
//! (across every owner: a short link is public by nature).

use std::time::Duration;

use jiff::Timestamp;
use linkdeck_store::LinkColumns;

use super::LocalService;
use linkdeck_domain::{Id, Result, TargetRule, TargetType};

/// A link as the redirect handler sees it. Its own shape, not a [`linkdeck_domain::Link`]: it is
/// read on every visit, across owners, with the password's hash and without the joins a `Link`
/// needs (space, domain, title); field names follow [`linkdeck_domain::LinkField`].
#[derive(Clone, PartialEq)]
pub struct ResolvedLink {
    pub id: Id,
    pub owner_id: Id,
    pub alias: String,
    pub url: String,
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

/// Reads a stored targeting list. The store writes JSON; both `[{"key","value"}]` and, for
/// rotation, plain strings or `{"value"}` objects are understood, and anything unreadable counts
/// as no rules rather than failing the redirect.
fn rules(text: Option<String>) -> Vec<TargetRule> {
    let Some(text) = text else { return Vec::new() };
    serde_json::from_str::<Vec<TargetRule>>(&text).unwrap_or_default()
}

fn rotation(text: Option<String>) -> Vec<String> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Entry {
        Url(String),
        Object { value: String },
    }
    let Some(text) = text else { return Vec::new() };
    serde_json::from_str::<Vec<Entry>>(&text)
        .unwrap_or_default()
        .into_iter()
        .map(|e| match e {
            Entry::Url(u) | Entry::Object { value: u } => u,
        })
        .collect()
}

fn time(seconds: Option<i64>) -> Option<Timestamp> {
    seconds.and_then(|s| Timestamp::from_second(s).ok())
}

/// `host` lower-case, and without its port (IPv6 literals such as `[::1]` kept whole).
fn host_forms(host: &str) -> (String, String) {
    let host = host.trim().to_ascii_lowercase();
    let bare = match host.rsplit_once(':') {
        Some((h, port)) if !h.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            h.to_owned()
        }
        _ => host.clone(),
    };
    (host, bare)
}

impl From<LinkColumns> for ResolvedLink {
    fn from(c: LinkColumns) -> ResolvedLink {
        ResolvedLink {
            id: c.id,
            owner_id: c.owner_id,
            alias: c.alias,
            url: c.url,
            password_hash: c.password_hash,
            disabled: c.disabled,
            public: c.public,
            expiration_url: c.expiration_url.filter(|u| !u.is_empty()),
            expiration_clicks: c.expiration_clicks.clamp(0, i64::from(u32::MAX)) as u32,
            ends_at: time(c.ends_at),
            clicks: c.clicks.max(0) as u64,
            target_type: u8::try_from(c.target_type)
                .ok()
                .and_then(|t| TargetType::try_from(t).ok())
                .unwrap_or_default(),
            geo: rules(c.geo_target),
            platform: rules(c.platform_target),
            rotation: rotation(c.rotation_target),
            last_rotation: c.last_rotation.clamp(0, i64::from(u32::MAX)) as u32,
        }
    }
}

impl LocalService {
    /// The link `alias` answers for on `host`: on the host of a known domain (matched
    /// case-insensitively, with or without the port) among that domain's links, on any other
    /// host among the links without a domain.
    pub async fn resolve_alias(&self, host: &str, alias: &str) -> Result<Option<ResolvedLink>> {
        let domain = self.domain_for_host(host).await?;
        self.resolve_in_domain(domain, alias).await
    }

    /// The domain whose host is `host` (case-insensitively, with or without the port).
    pub async fn domain_for_host(&self, host: &str) -> Result<Option<Id>> {
        let (host, bare) = host_forms(host);
        self.store
            .lookup(move |tx| tx.domain_for_host(&host, &bare))
            .await
    }

    /// The link `alias` (case-insensitively) among the links of `domain`, or among the links
    /// without a domain.
    pub async fn resolve_in_domain(
        &self,
        domain: Option<Id>,
        alias: &str,
    ) -> Result<Option<ResolvedLink>> {
        let alias = alias.to_owned();
        let found = self
            .store
            .lookup(move |tx| tx.resolve(domain, &alias))
            .await?;
        Ok(found.map(ResolvedLink::from))
    }

    /// The name of the domain link `id` lives on (`https://sho.rt`), or none: where its short
    /// URL starts (a QR code holds that URL).
    pub async fn link_domain_name(&self, id: Id) -> Result<Option<String>> {
        self.store.read(move |tx| tx.link_domain_name(id)).await
    }

    /// A number that changes whenever another process has committed a change to what
    /// redirects and key checks read: the server's cue to forget what it cached.
    pub async fn external_change_marker(&self) -> Result<i64> {
        self.store.changes().await
    }

    /// How often to ask [`LocalService::external_change_marker`], given the configured
    /// period (see [`Store::change_poll`](linkdeck_store::Store::change_poll)).
    pub fn change_poll(&self, configured: Duration) -> Duration {
        self.store.change_poll(configured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_targets_are_read_in_either_shape() {
        let geo = rules(Some(
            r#"[{"key":"US","value":"https://us.example"}]"#.into(),
        ));
        assert_eq!(geo[0].key, "US");
        let plain = rotation(Some(r#"["https://a.example","https://b.example"]"#.into()));
        let objects = rotation(Some(
            r#"[{"value":"https://a.example"},{"value":"https://b.example"}]"#.into(),
        ));
        assert_eq!(plain, objects);
        assert!(rules(Some("not json".into())).is_empty());
        assert!(rotation(None).is_empty());
    }
}
