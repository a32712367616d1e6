//! Import rate: 50,000 generated links per transaction into a fresh database (target ≥ 50,000
//! links/s, FTS index and counters included). Besides criterion's wall-clock figure it prints the
//! CPU time per link, which stays meaningful on a machine busy with other work.

mod data;

use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use tempfile::TempDir;

use linkdeck::backend::local::{LocalBackend, LocalService};

const LINKS: usize = 50_000;

fn fresh(rt: &tokio::runtime::Runtime) -> (TempDir, LocalBackend) {
    let dir = tempfile::tempdir().unwrap();
    let service = LocalService::open(&dir.path().join("import.db"), data::options()).unwrap();
    let backend = rt.block_on(service.default_backend()).unwrap();
    (dir, backend)
}

/// User + system CPU time of this process so far (Linux), if known.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel reports in USER_HZ, 100 on every Linux we run on.
    Some(Duration::from_millis(ticks * 10))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rows = data::rows(LINKS, 42);

    // CPU cost per link, over three imports.
    let mut cpu = Duration::ZERO;
    let mut wall = Duration::ZERO;
    for _ in 0..3 {
        let (_dir, backend) = fresh(&rt);
        let (spaces, rows) = (data::spaces(), rows.clone());
        let (before, started) = (cpu_time(), Instant::now());
        rt.block_on(backend.import_batch(spaces, rows)).unwrap();
        wall += started.elapsed();
        if let (Some(a), Some(b)) = (before, cpu_time()) {
            cpu += b - a;
        }
    }
    let links = 3.0 * LINKS as f64;
    eprintln!(
        "import: {:.0} links/s wall, {:.1} µs CPU per link ({:.0} links per CPU-second)",
        links / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / links,
        links / cpu.as_secs_f64()
    );

    let mut group = c.benchmark_group("import");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(LINKS as u64));
    group.bench_function(format!("{LINKS}_links"), |b| {
        b.iter_batched(
            || {
                let (dir, backend) = fresh(&rt);
                (dir, backend, data::spaces(), rows.clone())
            },
            |(dir, backend, spaces, rows)| {
                let summary = rt.block_on(backend.import_batch(spaces, rows)).unwrap();
                assert_eq!(summary.links_created, LINKS);
                dir
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
