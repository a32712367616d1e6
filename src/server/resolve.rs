//! A short-lived cache of alias lookups. Edits made through this server's API clear it at once;
//! edits made by another process (the TUI, the CLI) are seen within the cache's lifetime (one
//! second by default).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::clicks::Ledger;
use crate::backend::local::LocalService;
use crate::backend::local::redirect::ResolvedLink;
use crate::domain::Result;

/// Entries kept before the cache starts over (bounds memory under random-alias floods).
const MAX_ENTRIES: usize = 500_000;

type Entry = (Instant, Option<Arc<ResolvedLink>>);

pub struct ResolveCache {
    ttl: Duration,
    map: Mutex<HashMap<(String, String), Entry>>,
}

impl ResolveCache {
    pub fn new(ttl: Duration) -> Self {
        ResolveCache {
            ttl,
            map: Mutex::new(HashMap::new()),
        }
    }

    pub fn clear(&self) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The link `alias` answers for on `host` (see [`LocalService::resolve_alias`]).
    pub async fn resolve(
        &self,
        service: &LocalService,
        ledger: &Ledger,
        host: &str,
        alias: &str,
    ) -> Result<Option<Arc<ResolvedLink>>> {
        let key = (host.to_ascii_lowercase(), alias.to_ascii_lowercase());
        if !self.ttl.is_zero()
            && let Some((at, link)) = self.map.lock().unwrap_or_else(|e| e.into_inner()).get(&key)
            && at.elapsed() < self.ttl
        {
            return Ok(link.clone());
        }
        let token = ledger.read_token();
        let link = service.resolve_alias(host, alias).await?.map(Arc::new);
        if let Some(link) = &link {
            ledger.observed(token, link);
        }
        if !self.ttl.is_zero() {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
            map.insert(key, (Instant::now(), link.clone()));
        }
        Ok(link)
    }
}
