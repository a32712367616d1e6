//! Traffic benchmark data: 100,000 links (the mix of `benches/data`) and 10,000,000 visits
//! spread over the year before the benchmarks' fixed "now", built once into
//! `target/bench-data/`. One link (`hot`, public) takes 1,000,000 of the visits; the others
//! share the rest by a Zipf law, as links do. Visits go through the click writer's own code
//! (`LocalService::write_visits`), a day per transaction, so the rollups are exactly what a server would have
//! written; the raw log keeps the last 90 days, as the default retention would.
//!
//! `LINKDECK_BENCH_VISITS` changes the number of visits (the hot link keeps a tenth of them).

#![allow(dead_code)]

#[path = "../data/mod.rs"]
mod data;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use linkdeck::backend::Backend;
use linkdeck::backend::local::serving::Interner;
use linkdeck::backend::local::serving::{VisitBatch, VisitRow};
use linkdeck::backend::local::{LocalBackend, LocalService};
use linkdeck::domain::{Id, LinkInput, LinkQuery, SearchBy, Sort};
use linkdeck_sqlite::Db;

pub use data::{now, options};

pub const LINKS: usize = 100_000;
const DAYS: i64 = 365;
/// Days of raw log kept, as `[serve] visit_log_days` does by default.
const LOG_DAYS: i64 = 90;

pub fn visit_count() -> u64 {
    std::env::var("LINKDECK_BENCH_VISITS")
        .ok()
        .and_then(|n| n.replace('_', "").parse().ok())
        .unwrap_or(10_000_000)
}

/// What the benchmarks look at.
pub struct Traffic {
    pub backend: LocalBackend,
    /// The same file through connections of the benchmark's own.
    pub raw: Db,
    /// The link with a tenth of all visits (1,000,000 by default); public.
    pub hot: Id,
    pub hot_alias: String,
    /// A link in the middle of the popularity curve.
    pub median: Id,
    /// The space with the most links.
    pub space: Id,
    pub visits: u64,
}

const COUNTRIES: &[&str] = &[
    "US", "DE", "GB", "FR", "IN", "BR", "CA", "NL", "JP", "ES", "IT", "AU", "PL", "SE", "MX", "CH",
    "AT", "BE", "DK", "NO", "FI", "IE", "PT", "CZ", "RO", "TR", "KR", "ID", "PH", "ZA", "AR", "CL",
    "CO", "NZ", "SG", "HK", "TW", "IL", "UA", "GR",
];
const PLATFORMS: &[&str] = &[
    "iOS",
    "Android",
    "Windows",
    "OS X",
    "Linux",
    "Chrome OS",
    "Ubuntu",
];
const BROWSERS: &[&str] = &[
    "Chrome",
    "Safari",
    "Firefox",
    "Edge",
    "Opera",
    "Samsung Browser",
];
const LANGUAGES: &[&str] = &[
    "en", "de", "fr", "es", "pt", "ja", "nl", "it", "pl", "sv", "ko", "zh", "ru", "tr", "da",
];

/// An index in `0..n`, small ones far more often (a Zipf-like law).
fn skewed(rng: &mut StdRng, n: usize) -> usize {
    let u: f64 = rng.random();
    ((n as f64).powf(u) as usize).saturating_sub(1).min(n - 1)
}

fn value(rng: &mut StdRng, list: &[&str], unknown_percent: u32) -> Option<String> {
    (rng.random_range(0..100) >= unknown_percent).then(|| list[skewed(rng, list.len())].to_owned())
}

fn visit(rng: &mut StdRng, link: Id, day: i64) -> VisitRow {
    // Busier in the afternoon and evening (UTC), quieter at night.
    let hour = (8 + skewed(rng, 16) as i64 + rng.random_range(0..4)) % 24;
    let referrer = match rng.random_range(0..100) {
        0..30 => None,
        _ => Some(format!("ref{}.example", skewed(rng, 2_000))),
    };
    VisitRow {
        link_id: link,
        at: day * 86_400 + hour * 3600 + rng.random_range(0..3600),
        country: value(rng, COUNTRIES, 3),
        platform: value(rng, PLATFORMS, 2),
        browser: value(rng, BROWSERS, 2),
        referrer,
        language: value(rng, LANGUAGES, 8),
        address: None,
        rule: None,
    }
}

/// The database, built on first use; its links' ids run from 1 to [`LINKS`] in import order.
pub fn database(rt: &tokio::runtime::Runtime) -> PathBuf {
    let visits = visit_count();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let path = dir.join(format!("traffic-{LINKS}-{visits}.db"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(format!("traffic-{LINKS}-{visits}.partial.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    rt.block_on(async {
        let started = Instant::now();
        let service = LocalService::open(&partial, options()).unwrap();
        let backend = service.default_backend().await.unwrap();
        backend
            .import_batch(data::spaces(), Vec::new())
            .await
            .unwrap();
        let mut rows = data::rows(LINKS, 12);
        // The hot link: public, never expiring, with a name the benchmarks can ask for.
        rows[0].1 = LinkInput {
            alias: Some("hot".into()),
            public: Some("1".into()),
            ..LinkInput::with_url("https://shop.example.com/hot")
        };
        backend.import_batch(Vec::new(), rows).await.unwrap();
        eprintln!("traffic data: {LINKS} links in {:.1?}", started.elapsed());

        let mut rng = StdRng::seed_from_u64(42);
        let interner = Arc::new(Mutex::new(Interner::default()));
        let last_day = now().as_second().div_euclid(86_400);
        let hot_share = visits / 10;
        let mut written = 0u64;
        for d in 0..DAYS {
            let day = last_day - DAYS + 1 + d;
            // Weekdays busier than weekends; the total comes out at `visits`.
            let target = (visits * (d as u64 + 1)) / DAYS as u64;
            let n = target - written;
            let hot =
                (hot_share * (d as u64 + 1)) / DAYS as u64 - (hot_share * d as u64) / DAYS as u64;
            let raw = if d >= DAYS - LOG_DAYS { usize::MAX } else { 0 };
            let mut batch = VisitBatch::keeping(raw);
            for i in 0..n {
                let link = if i < hot {
                    1
                } else {
                    2 + skewed(&mut rng, LINKS - 1) as Id
                };
                batch.add(visit(&mut rng, link, day));
            }
            written += n;
            service
                .write_visits(batch, Vec::new(), &interner)
                .await
                .0
                .unwrap();
            if d % 30 == 29 {
                eprintln!(
                    "traffic data: {written} visits ({} days) in {:.0?}",
                    d + 1,
                    started.elapsed()
                );
            }
        }
        data::checkpoint(&partial).await;
        eprintln!(
            "traffic data: {written} visits in {:.1?} ({:.0} visits/s)",
            started.elapsed(),
            written as f64 / started.elapsed().as_secs_f64()
        );
    });
    std::fs::rename(&partial, &path).unwrap();
    path
}

/// Opens the benchmark database, building it first if needed.
pub fn open(rt: &tokio::runtime::Runtime) -> Traffic {
    let path = database(rt);
    let service = LocalService::open(&path, options()).unwrap();
    let backend = rt.block_on(service.default_backend()).unwrap();
    let hot = rt
        .block_on(backend.list_links(&LinkQuery {
            search: Some("hot".into()),
            by: SearchBy::Alias,
            // The hot link was made first: oldest first, it leads the page however many
            // generated aliases hold "hot".
            sort: Sort::Asc,
            ..LinkQuery::default()
        }))
        .unwrap()
        .items
        .into_iter()
        .find(|l| l.alias == "hot")
        .expect("the hot link")
        .id;
    let raw = Db::open(&path).unwrap();
    let (median, space) = rt
        .block_on(raw.read(|conn| {
            let q = |sql: &str| {
                conn.query_row(sql, [], |r| r.get::<_, Id>(0))
                    .map_err(linkdeck::backend::local::db_error)
            };
            Ok((
                q("SELECT id FROM links ORDER BY clicks, id LIMIT 1 OFFSET 50000")?,
                q("SELECT id FROM spaces ORDER BY link_count DESC, id LIMIT 1")?,
            ))
        }))
        .unwrap();
    Traffic {
        backend,
        raw,
        hot,
        hot_alias: "hot".into(),
        median,
        space,
        visits: visit_count(),
    }
}

/// Bytes on disk per table (and index), from SQLite's `dbstat`, largest first.
pub fn table_bytes(rt: &tokio::runtime::Runtime, raw: &Db) -> Vec<(String, u64)> {
    rt.block_on(raw.read(|conn| {
        let mut stmt = conn
            .prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
            .map_err(linkdeck::backend::local::db_error)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(linkdeck::backend::local::db_error)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(linkdeck::backend::local::db_error)?;
        Ok(rows)
    }))
    .unwrap()
}
