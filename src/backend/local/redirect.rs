//! What the redirect handler needs to know about an alias, read straight from the database
//! (across every owner: a short link is public by nature).

use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};

use std::time::Duration;

use super::{LocalService, db_error, pg};
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

/// A link's columns as both stores hold them, before they are read into a [`ResolvedLink`].
pub(super) struct LinkColumns {
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

fn columns_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LinkColumns> {
    Ok(LinkColumns {
        id: r.get(0)?,
        owner_id: r.get(1)?,
        alias: r.get(2)?,
        url: r.get(3)?,
        password_hash: r.get(4)?,
        disabled: r.get::<_, i64>(5)? != 0,
        public: r.get::<_, i64>(6)? != 0,
        expiration_url: r.get(7)?,
        expiration_clicks: r.get(8)?,
        ends_at: r.get(9)?,
        clicks: r.get(10)?,
        target_type: r.get(11)?,
        geo_target: r.get(12)?,
        platform_target: r.get(13)?,
        rotation_target: r.get(14)?,
        last_rotation: r.get(15)?,
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
    ///
    /// On SQLite this is one indexed read on the calling thread: in WAL mode readers never wait
    /// for writers, and a hand-off to the blocking pool per lookup cost more than the read.
    pub async fn domain_for_host(&self, host: &str) -> Result<Option<Id>> {
        let (host, bare) = host_forms(host);
        if let Some(pg) = self.pg() {
            return pg::redirect::domain_for_host(pg, &host, &bare).await;
        }
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
    /// without a domain. On SQLite one indexed read on the calling thread, as
    /// [`LocalService::domain_for_host`].
    pub async fn resolve_in_domain(
        &self,
        domain: Option<Id>,
        alias: &str,
    ) -> Result<Option<ResolvedLink>> {
        if let Some(pg) = self.pg() {
            let found = pg::redirect::resolve_in_domain(pg, domain, alias).await?;
            return Ok(found.map(ResolvedLink::from));
        }
        let found = self.db()?.read_blocking(|conn| {
            conn.prepare_cached(
                "SELECT l.id, l.owner_id, l.alias, l.url, l.password_hash, l.disabled, l.public,
                        l.expiration_url, l.expiration_clicks, l.ends_at, l.clicks, l.target_type,
                        l.geo_target, l.platform_target, l.rotation_target, l.last_rotation
                 FROM links l
                 WHERE ifnull(l.domain_id, 0) = ?1 AND l.alias = ?2",
            )
            .map_err(db_error)?
            .query_row(params![domain.unwrap_or(0), alias], columns_from_row)
            .optional()
            .map_err(db_error)
        })?;
        Ok(found.map(ResolvedLink::from))
    }

    /// The name of the domain link `id` lives on (`https://sho.rt`), or none: where its short
    /// URL starts (a QR code holds that URL).
    pub async fn link_domain_name(&self, id: Id) -> Result<Option<String>> {
        if let Some(pg) = self.pg() {
            return pg::redirect::link_domain_name(pg, id).await;
        }
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

    /// A number that changes whenever another process has committed a change to what
    /// redirects and key checks read: the server's cue to forget what it cached. On SQLite it
    /// is read on the writer connection, whose own commits (this process's) do not count; on
    /// PostgreSQL it is the notifications' count, in memory (see [`pg::Pg::change_marker`]),
    /// and this process's own changes count too.
    pub async fn external_change_marker(&self) -> Result<i64> {
        if let Some(pg) = self.pg() {
            return Ok(pg.change_marker());
        }
        self.db()?
            .write(|tx| {
                tx.query_row("PRAGMA data_version", [], |r| r.get(0))
                    .map_err(db_error)
            })
            .await
    }

    /// How often to ask [`LocalService::external_change_marker`], given the configured
    /// period: on SQLite each ask is a statement, so the configured period; on PostgreSQL the
    /// marker is in memory and asking costs nothing, so often enough that other servers' edits
    /// are served within [`PG_CHANGE_POLL`].
    pub fn change_poll(&self, configured: Duration) -> Duration {
        match self.pg() {
            Some(_) => configured.min(PG_CHANGE_POLL),
            None => configured,
        }
    }
}

/// The longest a server on PostgreSQL goes without looking at the change marker.
pub const PG_CHANGE_POLL: Duration = Duration::from_millis(20);

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
