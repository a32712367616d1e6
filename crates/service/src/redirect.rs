//! What the redirect handler needs to know about an alias, read straight from the database
//! (across every owner: a short link is public by nature).

use std::time::Duration;

use linkdeck_store::ResolvedLink;

use super::LocalService;
use linkdeck_domain::{HostSettings, Id, Result};

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

impl LocalService {
    /// The link `alias` answers for on `host`: on the host of a known domain (matched
    /// case-insensitively, with or without the port) among that domain's links, on any other
    /// host among the links without a domain.
    pub async fn resolve_alias(&self, host: &str, alias: &str) -> Result<Option<ResolvedLink>> {
        let domain = self.domain_for_host(host).await?;
        self.resolve_in_domain(domain.map(|(id, _)| id), alias)
            .await
    }

    /// The domain whose host is `host` (case-insensitively, with or without the port): its id
    /// and its settings.
    pub async fn domain_for_host(&self, host: &str) -> Result<Option<(Id, HostSettings)>> {
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
        self.store
            .lookup(move |tx| tx.resolve(domain, &alias))
            .await
    }

    /// Up to `limit` links, the most clicked first, each with its domain: what the server's
    /// alias cache starts with (see [`linkdeck_store::Redirects::most_clicked`]). Read on the
    /// blocking pool, off the hot path.
    pub async fn most_clicked(&self, limit: u64) -> Result<Vec<(Option<Id>, ResolvedLink)>> {
        self.store.read(move |tx| tx.most_clicked(limit)).await
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
