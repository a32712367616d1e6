//! The click writer's batches on SQLite, as `linkdeck serve` writes them: each batch of visits
//! (a browser's country, platform, browser, referrer and language, the same few values again
//! and again, as under a load test) goes through `LocalService::write_visits`, one transaction:
//! the links' clicks, the raw log, the rollups. Two spreads: every visit on one of 500 links,
//! where a batch touches each link many times, and on one of 100,000 links at random, where
//! nearly every visit is a link of its own. Each spread runs on a fresh copy of a database of
//! 100,000 links generated once under `target/bench-data/`.
//!
//! Reports, per spread, the time a batch takes (p50 and worst of the runs) and what a visit
//! costs in it: the writer's share of a redirect, apart from the HTTP side and from the load
//! generator that shares the machine with `scripts/bench-redirect`.
//!
//! `cargo bench --bench clicks`; settings through the environment:
//!   CLICKS_BATCH=25000   visits a batch (a server's 500 ms at 50,000 redirects a second)
//!   CLICKS_BATCHES=12    batches a spread

mod data;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use linkdeck::backend::local::LocalService;
use linkdeck::backend::local::serving::{Interner, VisitBatch, VisitRow};
use linkdeck::domain::Id;

const LINKS: usize = 100_000;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// [`LINKS`] links with ids 1 to [`LINKS`]; made once.
fn database(rt: &tokio::runtime::Runtime) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("clicks-{LINKS}.db"));
    if path.exists() {
        return path;
    }
    let partial = dir.join(format!("clicks-{LINKS}.partial.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    eprintln!("generating {LINKS} links into {} (once)…", path.display());
    rt.block_on(async {
        let service = LocalService::open(&partial, data::options()).unwrap();
        let backend = service.default_backend().await.unwrap();
        backend
            .import_batch(data::spaces(), Vec::new())
            .await
            .unwrap();
        backend
            .import_batch(Vec::new(), data::rows(LINKS, 7))
            .await
            .unwrap();
        data::checkpoint(&partial).await;
    });
    std::fs::rename(&partial, &path).unwrap();
    path
}

/// A visit to `link` at `at` from the browser a load test sends.
fn visit(link: Id, at: i64) -> VisitRow {
    VisitRow {
        link_id: link,
        at,
        country: None,
        platform: Some("Linux".into()),
        browser: Some("Chrome".into()),
        referrer: None,
        language: None,
        address: Some("127.0.0.1".into()),
        rule: None,
    }
}

/// Writes `batches` batches of `size` visits, each on one of the first `spread` links, into a
/// fresh copy of `source`; returns each batch's time.
fn run(
    rt: &tokio::runtime::Runtime,
    source: &Path,
    spread: usize,
    size: usize,
    batches: usize,
) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clicks.db");
    std::fs::copy(source, &path).unwrap();
    let mut rng = StdRng::seed_from_u64(spread as u64);
    let now = data::now().as_second();
    rt.block_on(async {
        let service = LocalService::open(&path, data::options()).unwrap();
        let interner = Arc::new(Mutex::new(Interner::default()));
        let mut times = Vec::with_capacity(batches);
        for b in 0..batches {
            let mut batch = VisitBatch::keeping(usize::MAX);
            for i in 0..size {
                let link = 1 + rng.random_range(0..spread) as Id;
                batch.add(visit(link, now + (b * size + i) as i64 / 50_000));
            }
            let started = Instant::now();
            let (written, _) = service.write_visits(batch, Vec::new(), &interner).await;
            times.push(started.elapsed());
            written.unwrap();
        }
        times
    })
}

fn main() {
    let size = env("CLICKS_BATCH", 25_000);
    let batches = env("CLICKS_BATCHES", 12);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let source = database(&rt);
    println!("click writer: batches of {size} visits, {batches} a spread, {LINKS} links stored");
    for spread in [500, LINKS] {
        let mut times = run(&rt, &source, spread, size, batches);
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let p50 = times[times.len() / 2];
        println!(
            "  visits over {spread:>6} links: p50 {:7.1} ms a batch ({:5.2} µs a visit), worst {:7.1} ms",
            ms(p50),
            p50.as_secs_f64() * 1e6 / size as f64,
            ms(times[times.len() - 1]),
        );
    }
}
