//! A cache of alias lookups, so a redirect rarely touches the database.
//!
//! Freshness: edits through this server's API clear the cache at once; edits by another process
//! (the TUI, the CLI, another server on the same PostgreSQL database) are noticed by a watcher
//! of the service's change marker, which clears it too: on SQLite it asks whether anyone else
//! committed (`PRAGMA data_version`, every `change_poll`); on PostgreSQL the marker moves on
//! the database's notifications and is looked at every few milliseconds. Entries also age out
//! after `max_age` as a backstop. A lookup that raced with a clear is not stored (a generation
//! number guards every insert), so a stale answer cannot outlive the clear.
//!
//! The server starts with the most clicked links in the cache ([`ResolveCache::warm`], up to
//! `ServeOptions::warm_aliases`). A miss on SQLite reads the database on the calling (async) thread (see
//! `LocalService::domain_for_host`); on PostgreSQL it is a query on a pooled connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::clicks::Ledger;
use crate::backend::local::serving::LocalService;
use crate::backend::local::serving::ResolvedLink;
use crate::domain::{HostSettings, Id, Result};

/// Entries kept before the cache starts over (bounds memory under random-alias floods).
const MAX_ENTRIES: usize = 1_000_000;
const MAX_HOSTS: usize = 10_000;

/// When a lookup was made, and what it found.
type Cached<T> = (Instant, T);

/// A request's host as redirects see it: the domain it names (none: the server's own host,
/// whose links have no domain) and what it answers when no link does — the domain's settings,
/// or the server's own from `[serve]`.
#[derive(Clone)]
pub struct Host {
    pub domain: Option<Id>,
    pub settings: Arc<HostSettings>,
}

#[derive(Default)]
struct Maps {
    generation: u64,
    /// Host → its domain (or none) and what it answers with.
    hosts: HashMap<String, Cached<Host>>,
    /// (domain or 0, lower-case alias) → the link, or none.
    links: HashMap<(Id, String), Cached<Option<Arc<ResolvedLink>>>>,
}

pub struct ResolveCache {
    max_age: Duration,
    maps: Mutex<Maps>,
    /// What a host that is no domain answers with (`[serve]`'s settings).
    own: Arc<HostSettings>,
}

impl ResolveCache {
    pub fn new(max_age: Duration, own: HostSettings) -> Self {
        ResolveCache {
            max_age,
            maps: Mutex::new(Maps::default()),
            own: Arc::new(own),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Maps> {
        self.maps.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets everything; lookups in flight will not store what they read.
    pub fn clear(&self) {
        let mut maps = self.lock();
        maps.generation += 1;
        maps.hosts.clear();
        maps.links.clear();
    }

    fn fresh(&self, at: Instant) -> bool {
        at.elapsed() < self.max_age
    }

    /// The domain `host` names, if any, with the settings the host answers with.
    pub async fn host(&self, service: &LocalService, host: &str) -> Result<Host> {
        let generation = {
            let maps = self.lock();
            if let Some((at, known)) = maps.hosts.get(host)
                && self.fresh(*at)
            {
                return Ok(known.clone());
            }
            maps.generation
        };
        let known = match service.domain_for_host(host).await? {
            Some((id, settings)) => Host {
                domain: Some(id),
                settings: Arc::new(settings),
            },
            None => Host {
                domain: None,
                settings: self.own.clone(),
            },
        };
        let mut maps = self.lock();
        if maps.generation == generation && !self.max_age.is_zero() {
            if maps.hosts.len() >= MAX_HOSTS {
                maps.hosts.clear();
            }
            maps.hosts
                .insert(host.to_owned(), (Instant::now(), known.clone()));
        }
        Ok(known)
    }

    /// The link `alias` answers for on `host` (see [`LocalService::resolve_alias`]), which
    /// [`ResolveCache::host`] read.
    pub async fn resolve(
        &self,
        service: &LocalService,
        ledger: &Ledger,
        host: &Host,
        alias: &str,
    ) -> Result<Option<Arc<ResolvedLink>>> {
        let domain = host.domain;
        let key = (domain.unwrap_or(0), alias.to_ascii_lowercase());
        let generation = {
            let maps = self.lock();
            if let Some((at, link)) = maps.links.get(&key)
                && self.fresh(*at)
            {
                return Ok(link.clone());
            }
            maps.generation
        };
        let token = ledger.read_token();
        let link = service
            .resolve_in_domain(domain, alias)
            .await?
            .map(Arc::new);
        if let Some(link) = &link {
            ledger.observed(token, link);
        }
        let mut maps = self.lock();
        if maps.generation == generation && !self.max_age.is_zero() {
            if maps.links.len() >= MAX_ENTRIES {
                maps.links.clear();
            }
            maps.links.insert(key, (Instant::now(), link.clone()));
        }
        Ok(link)
    }
}

impl ResolveCache {
    /// Fills the cache with up to `limit` links, the most clicked first, so the first visits of
    /// the links most likely to be visited do not read the database on the async thread. Their
    /// entries age out and are cleared like any other. Answers how many were stored.
    pub async fn warm(
        &self,
        service: &LocalService,
        ledger: &Ledger,
        limit: usize,
    ) -> Result<usize> {
        let limit = limit.min(MAX_ENTRIES);
        if limit == 0 || self.max_age.is_zero() {
            return Ok(0);
        }
        let generation = self.lock().generation;
        let token = ledger.read_token();
        let links = service.most_clicked(limit as u64).await?;
        for (_, link) in &links {
            ledger.observed(token, link);
        }
        let mut maps = self.lock();
        if maps.generation != generation {
            return Ok(0);
        }
        let at = Instant::now();
        let before = maps.links.len();
        for (domain, link) in links {
            if maps.links.len() >= MAX_ENTRIES {
                break;
            }
            let key = (domain.unwrap_or(0), link.alias.to_ascii_lowercase());
            // A lookup made since the read is as fresh: kept.
            maps.links
                .entry(key)
                .or_insert_with(|| (at, Some(Arc::new(link))));
        }
        Ok(maps.links.len() - before)
    }
}

/// Clears `cache` whenever another process commits to the database, looking every `every` (or
/// more often where looking is free: see `LocalService::change_poll`), `since` the marker
/// when the cache was filled, if known. Runs until aborted.
pub async fn watch_changes(
    service: LocalService,
    cache: Arc<ResolveCache>,
    every: Duration,
    since: Option<i64>,
) {
    let mut last = since;
    let mut ticker = tokio::time::interval(service.change_poll(every));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match service.external_change_marker().await {
            Ok(marker) => {
                if last.is_some_and(|l| l != marker) {
                    cache.clear();
                }
                last = Some(marker);
            }
            // Busy with another writer: try at the next tick; a failed check clears to be safe.
            Err(e) => {
                tracing::debug!(error = %e, "checking for outside changes failed");
                cache.clear();
            }
        }
    }
}
