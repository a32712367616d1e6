//! The embedded service as the behaviour suite drives it, on either store: a fresh database (a
//! file in a temporary directory, or a database of a throwaway PostgreSQL cluster), a fixed
//! clock, and two owners. `local_backend.rs` and `pg_backend.rs` both test through it.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use tempfile::TempDir;

use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService, StoreLocation};
use linkdeck::domain::{Domain, FixedClock, Id};

use crate::raw::RawDb;
use crate::suite;

pub const PUBLIC_URL: &str = "http://links.test:8080";

pub struct Embedded {
    /// The directory of a database file, removed when the test ends.
    _dir: Option<TempDir>,
    pub clock: Arc<FixedClock>,
    pub location: StoreLocation,
    pub service: LocalService,
    /// The same database through connections of the test's own.
    pub raw: RawDb,
    pub mine: LocalBackend,
    pub theirs: LocalBackend,
}

impl Embedded {
    /// A fresh database file in a temporary directory.
    pub async fn sqlite() -> Embedded {
        let dir = tempfile::tempdir().unwrap();
        let location = StoreLocation::File(dir.path().join("links.db"));
        Embedded {
            _dir: Some(dir),
            ..Embedded::open(location).await
        }
    }

    /// A fresh database at `location` (made by the caller).
    pub async fn open(location: StoreLocation) -> Embedded {
        let clock = Arc::new(FixedClock::new(suite::start()));
        let service = open_service(&location, &clock).await;
        let mine = service.default_backend().await.unwrap();
        let theirs = service.for_owner(service.add_owner("someone else").await.unwrap().id);
        Embedded {
            _dir: None,
            clock,
            raw: RawDb::new(location.clone()),
            location,
            service,
            mine,
            theirs,
        }
    }

    /// The database file; panics on PostgreSQL.
    pub fn file(&self) -> &Path {
        match &self.location {
            StoreLocation::File(path) => path,
            StoreLocation::Postgres(target) => panic!("{target} is not a SQLite file"),
        }
    }

    /// Another service on the same database, with its own connections: another process, as
    /// far as the database can tell.
    pub async fn second_service(&self) -> LocalService {
        open_service(&self.location, &self.clock).await
    }
}

async fn open_service(location: &StoreLocation, clock: &Arc<FixedClock>) -> LocalService {
    LocalService::open_at(location, options(clock))
        .await
        .unwrap()
}

/// The service's options in every test: the suite's public address and zone, and `clock`.
pub fn options(clock: &Arc<FixedClock>) -> LocalOptions {
    LocalOptions {
        public_url: PUBLIC_URL.into(),
        timezone: TimeZone::get(suite::ZONE).unwrap(),
        clock: clock.clone(),
        ..LocalOptions::default()
    }
}

#[async_trait]
impl suite::Harness for Embedded {
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
        self.raw.set_clicks(id, clicks).await;
    }
    async fn record_visits(&self, visits: Vec<linkdeck::backend::local::serving::VisitRow>) {
        self.service.record_visits(visits).await.unwrap();
    }
}

/// A link whose stored targeting kind and click limit are numbers the service never writes
/// (out of their range) reads on either store by one rule: the kind as none, the limit clamped
/// to a `u32`; its reader, a list and an update (which reads the stored row first) all see it so.
pub async fn out_of_range_stored_numbers_read_the_same_on_both_stores(h: &Embedded) {
    use linkdeck::domain::{LinkInput, LinkQuery, TargetType};
    let big = h
        .mine
        .create_link(&LinkInput::with_url("https://big.example"))
        .await
        .unwrap();
    let negative = h
        .mine
        .create_link(&LinkInput::with_url("https://negative.example"))
        .await
        .unwrap();
    h.raw
        .execute(
            "UPDATE links SET target_type = 300, expiration_clicks = 5000000000 \
             WHERE url = 'https://big.example'",
        )
        .await;
    h.raw
        .execute(
            "UPDATE links SET target_type = -1, expiration_clicks = -3 \
             WHERE url = 'https://negative.example'",
        )
        .await;
    for (id, limit) in [(big.id, u32::MAX), (negative.id, 0)] {
        let link = h.mine.show_link(id).await.unwrap();
        assert_eq!(link.target_type, TargetType::None);
        assert_eq!(link.expiration_clicks, limit);
        let updated = h
            .mine
            .update_link(
                id,
                &LinkInput {
                    alias: Some(format!("renamed{id}")),
                    ..LinkInput::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(updated.target_type, TargetType::None);
        assert_eq!(updated.expiration_clicks, limit);
    }
    let listed = h
        .mine
        .list_links(&LinkQuery {
            per_page: 100,
            ..LinkQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 2);
    assert!(
        listed
            .items
            .iter()
            .all(|l| l.target_type == TargetType::None)
    );
}
