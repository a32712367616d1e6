//! The behaviour suite on the embedded service, plus what only a local database file has:
//! several handles and processes on one file, bad files, bulk import, domain management.

#[macro_use]
mod suite;

use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use tempfile::TempDir;

use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService};
use linkdeck::domain::{Domain, FixedClock, Id};

/// A fresh database file in a temporary directory, with a fixed clock and two owners.
pub struct LocalHarness {
    _dir: TempDir,
    clock: Arc<FixedClock>,
    service: LocalService,
    mine: LocalBackend,
    theirs: LocalBackend,
}

pub const PUBLIC_URL: &str = "http://links.test:8080";

impl LocalHarness {
    pub async fn new() -> LocalHarness {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(suite::start()));
        let service = LocalService::open(&dir.path().join("links.db"), options(&clock)).unwrap();
        let mine = service.default_backend().await.unwrap();
        let theirs = service.for_owner(service.add_owner("someone else").await.unwrap().id);
        LocalHarness {
            _dir: dir,
            clock,
            service,
            mine,
            theirs,
        }
    }
}

fn options(clock: &Arc<FixedClock>) -> LocalOptions {
    LocalOptions {
        public_url: PUBLIC_URL.into(),
        timezone: TimeZone::get(suite::ZONE).unwrap(),
        clock: clock.clone(),
    }
}

#[async_trait]
impl suite::Harness for LocalHarness {
    fn backend(&self) -> &dyn Backend {
        &self.mine
    }
    fn other_owner(&self) -> &dyn Backend {
        &self.theirs
    }
    fn set_now(&self, t: Timestamp) {
        self.clock.set(t);
    }
    fn timezone(&self) -> TimeZone {
        TimeZone::get(suite::ZONE).unwrap()
    }
    fn public_url(&self) -> String {
        PUBLIC_URL.into()
    }
    async fn add_domain(&self, name: &str, other: bool) -> Domain {
        let owner = if other { &self.theirs } else { &self.mine };
        owner.add_domain(name).await.unwrap()
    }
    async fn set_clicks(&self, id: Id, clicks: u64) {
        self.service
            .db()
            .write(move |tx| {
                tx.execute(
                    "UPDATE links SET clicks = ?1 WHERE id = ?2",
                    rusqlite::params![clicks as i64, id],
                )
                .map_err(linkdeck::backend::local::db_error)?;
                Ok(())
            })
            .await
            .unwrap();
    }
}

backend_suite!(LocalHarness::new().await);
