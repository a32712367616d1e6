//! Bulk work on the embedded service: disabling every link a filter matches, and deleting them
//! then bringing them back with undo, at 100,000 matching links (of 200,000). Each run works on
//! a fresh copy of a database generated once under `target/bench-data/`. The baseline, measured
//! in the same run, is the link-by-link path a remote server gets (`bulk::one_by_one`) on a
//! sample, per link.
//!
//! `cargo bench --bench bulk`. `LINKDECK_BENCH_BULK` changes the number of matching links.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService};
use linkdeck::backend::{Backend, BulkAction, Progress, Selection, bulk};
use linkdeck::domain::{LinkInput, LinkQuery, SearchBy};
use linkdeck_sqlite::Db;

const RUNS: usize = 3;

fn matching() -> usize {
    std::env::var("LINKDECK_BENCH_BULK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

/// `2 × n` links, every other one's URL holding "promo"; made once.
fn database(rt: &tokio::runtime::Runtime, n: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("bulk-{n}.db"));
    if path.exists() {
        return path;
    }
    let partial = dir.join(format!("bulk-{n}.partial.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    eprintln!("generating {} links into {} (once)…", 2 * n, path.display());
    rt.block_on(async {
        let backend = open(&partial).await;
        let mut next = 0;
        while next < 2 * n {
            let end = (next + 50_000).min(2 * n);
            let rows = (next..end)
                .map(|i| {
                    let kind = if i % 2 == 0 { "promo" } else { "page" };
                    let input = LinkInput {
                        url: Some(format!("https://shop{}.example.com/{kind}/{i}", i % 97)),
                        alias: Some(format!("b{i:07}")),
                        ..LinkInput::default()
                    };
                    (i + 1, input, None)
                })
                .collect();
            backend.import_batch(Vec::new(), rows).await.unwrap();
            next = end;
        }
        Db::open(&partial)
            .unwrap()
            .write(|tx| {
                tx.execute_batch("UPDATE links SET clicks = (id * 31) % 50;")
                    .map_err(linkdeck::backend::local::db_error)?;
                tx.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .or(Ok(()))
            })
            .await
            .unwrap();
    });
    std::fs::rename(&partial, &path).unwrap();
    path
}

async fn open(path: &Path) -> LocalBackend {
    LocalService::open(path, LocalOptions::default())
        .unwrap()
        .default_backend()
        .await
        .unwrap()
}

/// A fresh copy of `source` to work on.
fn copy(source: &Path, dir: &Path, run: usize) -> PathBuf {
    let path = dir.join(format!("run-{run}.db"));
    std::fs::copy(source, &path).unwrap();
    path
}

fn promo() -> Selection {
    Selection::matching(LinkQuery {
        search: Some("/promo/".into()),
        by: SearchBy::Url,
        ..LinkQuery::default()
    })
}

fn disable() -> BulkAction {
    BulkAction::Update(LinkInput {
        disabled: Some("1".into()),
        ..LinkInput::default()
    })
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that names another bench skips this one.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !args.is_empty() && !args.iter().any(|a| "bulk".contains(a.as_str())) {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let n = matching();
    let source = database(&rt, n);
    let scratch = tempfile::tempdir().unwrap();
    let mut disable_times = Vec::new();
    let mut delete_times = Vec::new();
    let mut undo_times = Vec::new();
    for run in 0..RUNS {
        let path = copy(&source, scratch.path(), run);
        rt.block_on(async {
            let backend = open(&path).await;
            let started = Instant::now();
            let report = backend
                .bulk(&promo(), &disable(), &Progress::new())
                .await
                .unwrap();
            disable_times.push(started.elapsed());
            assert_eq!(report.changed as usize, n);

            let started = Instant::now();
            let report = backend
                .bulk(&promo(), &BulkAction::Delete, &Progress::new())
                .await
                .unwrap();
            delete_times.push(started.elapsed());
            assert_eq!(report.changed as usize, n);
            let started = Instant::now();
            let back = backend
                .revert(&report.undo, &Progress::new())
                .await
                .unwrap();
            undo_times.push(started.elapsed());
            assert_eq!(back.changed as usize, n);
        });
        std::fs::remove_file(&path).unwrap();
    }
    let disabling = median(disable_times);
    let (delete, undo) = (median(delete_times), median(undo_times));
    println!(
        "bulk/disable {n} matching links: {disabling:.2?} (median of {RUNS}; target ≤ 2 s) = {:.1} µs/link",
        disabling.as_secs_f64() * 1e6 / n as f64
    );
    println!(
        "bulk/delete + undo {n} links: {:.2?} = {delete:.2?} + {undo:.2?} (median of {RUNS}; target ≤ 5 s)",
        delete + undo
    );

    // The link-by-link path on a sample, in the same run, per link.
    let sample = 2_000;
    let path = copy(&source, scratch.path(), RUNS);
    let per_link = rt.block_on(async {
        let backend = open(&path).await;
        let ids: Vec<i64> = (0..sample as i64).map(|i| 2 * i + 1).collect();
        let started = Instant::now();
        let report = bulk::one_by_one(
            &backend,
            &Selection::of_ids(ids),
            &disable(),
            &Progress::new(),
        )
        .await
        .unwrap();
        assert_eq!(report.changed as usize, sample);
        started.elapsed().as_secs_f64() / sample as f64
    });
    let bulk_per_link = disabling.as_secs_f64() / n as f64;
    println!(
        "bulk/baseline: link by link {:.1} µs/link vs one transaction {:.1} µs/link = {:.0}× faster",
        per_link * 1e6,
        bulk_per_link * 1e6,
        per_link / bulk_per_link
    );
}
