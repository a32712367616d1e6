//! What the redirect handler needs to know about an alias, read straight from the database
//! (across every owner: a short link is public by nature).

use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};

use super::{LocalService, db_error};
use crate::domain::{Id, Result, TargetRule, TargetType};

/// A link as the redirect handler sees it. Its own shape, not a [`crate::domain::Link`]: it is
/// read on every visit, across owners, with the password's hash and without the joins a `Link`
/// needs (space, domain, title); field names follow [`crate::domain::LinkField`].
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

fn resolved_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResolvedLink> {
    Ok(ResolvedLink {
        id: r.get(0)?,
        owner_id: r.get(1)?,
        alias: r.get(2)?,
        url: r.get(3)?,
        password_hash: r.get(4)?,
        disabled: r.get::<_, i64>(5)? != 0,
        public: r.get::<_, i64>(6)? != 0,
        expiration_url: r.get::<_, Option<String>>(7)?.filter(|u| !u.is_empty()),
        expiration_clicks: r.get::<_, i64>(8)?.clamp(0, i64::from(u32::MAX)) as u32,
        ends_at: time(r.get(9)?),
        clicks: r.get::<_, i64>(10)?.max(0) as u64,
        target_type: u8::try_from(r.get::<_, i64>(11)?)
            .ok()
            .and_then(|t| TargetType::try_from(t).ok())
            .unwrap_or_default(),
        geo: rules(r.get(12)?),
        platform: rules(r.get(13)?),
        rotation: rotation(r.get(14)?),
        last_rotation: r.get::<_, i64>(15)?.clamp(0, i64::from(u32::MAX)) as u32,
    })
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
        let (service, host) = (self.clone(), host.to_owned());
        tokio::task::spawn_blocking(move || service.domain_for_host_blocking(&host))
            .await
            .map_err(|e| crate::domain::Error::Unavailable(format!("lookup failed: {e}")))?
    }

    /// [`LocalService::domain_for_host`] on the calling thread: one indexed read, for callers
    /// that cannot afford a thread hand-off per lookup.
    pub fn domain_for_host_blocking(&self, host: &str) -> Result<Option<Id>> {
        let (host, bare) = host_forms(host);
        self.db()?.read_blocking(move |conn| {
            conn.prepare_cached(
                "SELECT id FROM domains WHERE host IN (?1, ?2) ORDER BY host = ?1 DESC LIMIT 1",
            )
            .map_err(db_error)?
            .query_row(params![host, bare], |r| r.get(0))
            .optional()
            .map_err(db_error)
        })
    }

    /// The link `alias` (case-insensitively) among the links of `domain`, or among the links
    /// without a domain.
    pub async fn resolve_in_domain(
        &self,
        domain: Option<Id>,
        alias: &str,
    ) -> Result<Option<ResolvedLink>> {
        let (service, alias) = (self.clone(), alias.to_owned());
        tokio::task::spawn_blocking(move || service.resolve_in_domain_blocking(domain, &alias))
            .await
            .map_err(|e| crate::domain::Error::Unavailable(format!("lookup failed: {e}")))?
    }

    /// [`LocalService::resolve_in_domain`] on the calling thread: one indexed read.
    pub fn resolve_in_domain_blocking(
        &self,
        domain: Option<Id>,
        alias: &str,
    ) -> Result<Option<ResolvedLink>> {
        self.db()?.read_blocking(|conn| {
            conn.prepare_cached(
                "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                        l.expiration_url, l.expiration_clicks, l.ends_at, l.clicks, l.target_type,
                        l.geo_target, l.platform_target, l.rotation_target, l.last_rotation
                 FROM links l
                 WHERE ifnull(l.domain_id, 0) = ?1 AND l.alias = ?2",
            )
            .map_err(db_error)?
            .query_row(params![domain.unwrap_or(0), alias], resolved_from_row)
            .optional()
            .map_err(db_error)
        })
    }

    /// The name of the domain link `id` lives on (`https://sho.rt`), or none: where its short
    /// URL starts (a QR code holds that URL).
    pub async fn link_domain_name(&self, id: Id) -> Result<Option<String>> {
        self.db()?
            .read(move |conn| {
                conn.prepare_cached(
                    "SELECT d.name FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.id = ?1",
                )
                .map_err(db_error)?
                .query_row([id], |r| r.get(0))
                .optional()
                .map_err(db_error)
            })
            .await
    }

    /// A number that changes whenever another connection (another process, typically) has
    /// committed to the database since the last call: the server's cue to forget what it
    /// cached. Read on the writer connection, whose own commits (this process's) do not count.
    pub async fn external_change_marker(&self) -> Result<i64> {
        self.db()?
            .write(|tx| {
                tx.query_row("PRAGMA data_version", [], |r| r.get(0))
                    .map_err(db_error)
            })
            .await
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
