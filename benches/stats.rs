//! Traffic figures (issue 12's targets) on 100,000 links and 10,000,000 visits over a year:
//! a link's stats for 30 days and 12 months (≤ 10 ms), a space's and the account's 12-month
//! dashboards (≤ 50 ms), keystroke to frame in the Stats view (≤ 50 ms), the public stats page
//! of a link with 1,000,000 visits (≤ 20 ms), and the bytes of rollups per million visits.
//!
//! `cargo bench --bench stats`. The database is generated once into `target/bench-data/`
//! (`LINKDECK_BENCH_VISITS` changes its size).

#[path = "traffic_data/mod.rs"]
mod traffic_data;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use linkdeck::backend::Backend;
use linkdeck::domain::{FixedClock, PeriodSpec, Preset, StatsQuery, StatsScope};
use linkdeck::server::ServeOptions;
use linkdeck::tui::{App, TuiOptions};

fn bench_queries(c: &mut Criterion, rt: &tokio::runtime::Runtime, t: &traffic_data::Traffic) {
    let mut group = c.benchmark_group("stats");
    group.sample_size(30);
    let cases = [
        (
            "link with 10% of visits",
            StatsScope::Link(t.hot),
            Preset::Days30,
        ),
        (
            "link with 10% of visits",
            StatsScope::Link(t.hot),
            Preset::Months12,
        ),
        ("median link", StatsScope::Link(t.median), Preset::Days30),
        ("median link", StatsScope::Link(t.median), Preset::Months12),
        (
            "largest space",
            StatsScope::Space(t.space),
            Preset::Months12,
        ),
        ("account", StatsScope::Account, Preset::Months12),
        ("account", StatsScope::Account, Preset::Days30),
        ("account", StatsScope::Account, Preset::Hours24),
    ];
    for (name, scope, preset) in cases {
        let query = StatsQuery::new(scope, PeriodSpec::preset(preset));
        group.bench_function(
            BenchmarkId::new(name, format!("{} of {} visits", preset.as_str(), t.visits)),
            |b| b.iter(|| rt.block_on(t.backend.stats(&query)).unwrap()),
        );
    }
    group.finish();
}

/// The public page, uncached (every request reads the rollups) and with the server's cache.
fn bench_public_page(c: &mut Criterion, rt: &tokio::runtime::Runtime, t: &traffic_data::Traffic) {
    let mut group = c.benchmark_group("stats page");
    group.sample_size(30);
    for (label, cache) in [
        ("uncached", Duration::ZERO),
        ("cached", Duration::from_secs(5)),
    ] {
        let server = rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            linkdeck::server::start(
                t.backend.service().clone(),
                ServeOptions {
                    stats_cache: cache,
                    api_rate_limit: 0,
                    ..ServeOptions::default()
                },
                listener,
            )
            .await
            .unwrap()
        });
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        for (format, accept) in [("html", "text/html"), ("json", "application/json")] {
            let url = format!("{}/{}/stats", server.url(), t.hot_alias);
            group.bench_function(
                BenchmarkId::new(
                    format!("{label} {format}"),
                    format!("link of {} visits", t.visits / 10),
                ),
                |b| {
                    b.iter(|| {
                        rt.block_on(async {
                            let r = client
                                .get(&url)
                                .header("accept", accept)
                                .send()
                                .await
                                .unwrap();
                            assert!(r.status().is_success());
                            r.bytes().await.unwrap()
                        })
                    })
                },
            );
        }
        rt.block_on(server.shutdown()).unwrap();
    }
    group.finish();
}

/// Carries out the app's backend calls in order until none are left (what the runtime does on
/// tasks).
async fn settle(app: &mut App, backend: &dyn Backend) {
    loop {
        let commands = app.take_commands();
        if commands.is_empty() {
            return;
        }
        for command in commands {
            if let Some(msg) = linkdeck::tui::answer(command, backend).await {
                app.update(msg);
            }
        }
    }
}

fn press(app: &mut App, code: KeyCode) {
    let modifiers = if matches!(code, KeyCode::Char(c) if c.is_ascii_uppercase()) {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    app.handle_event(Event::Key(KeyEvent::new(code, modifiers)));
}

/// From a key in the Stats view to the frame with its answer: the next period (`p`) on the
/// account's dashboard, all six in turn, and a step back (`[`) on the hot link.
fn bench_view(c: &mut Criterion, rt: &tokio::runtime::Runtime, t: &traffic_data::Traffic) {
    let backend = &t.backend;
    let cfg = TuiOptions::default()
        .app_config(backend, Some("1"))
        .unwrap();
    let mut app = App::new(
        cfg,
        Arc::new(FixedClock::new(traffic_data::now())),
        Rect::new(0, 0, 100, 30),
    );
    rt.block_on(settle(&mut app, backend));
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut group = c.benchmark_group("stats view keystroke to frame");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(10));
    press(&mut app, KeyCode::Char('T'));
    rt.block_on(settle(&mut app, backend));
    group.bench_function(
        BenchmarkId::new("dashboard: next period", format!("{} visits", t.visits)),
        |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    press(&mut app, KeyCode::Char('p'));
                    rt.block_on(settle(&mut app, backend));
                    terminal.draw(|f| app.render(f)).unwrap();
                }
                start.elapsed()
            })
        },
    );
    group.finish();
}

fn report_bytes(rt: &tokio::runtime::Runtime, t: &traffic_data::Traffic) {
    let tables = traffic_data::table_bytes(rt, &t.raw);
    let of = |names: &[&str]| -> u64 {
        tables
            .iter()
            .filter(|(n, _)| names.contains(&n.as_str()))
            .map(|(_, b)| *b)
            .sum()
    };
    let rollups = of(&[
        "link_traffic",
        "scope_traffic",
        "traffic_values",
        "sqlite_autoindex_traffic_values_1",
    ]);
    let log = of(&["visit_log"]);
    let millions = t.visits as f64 / 1e6;
    println!(
        "stats/bytes of rollups: {rollups} for {} visits = {:.1} MB per million visits \
         ({:.0} bytes a visit)",
        t.visits,
        rollups as f64 / millions / 1e6,
        rollups as f64 / t.visits as f64
    );
    println!(
        "stats/bytes of the raw log (90 days of the year): {log} = {:.0} bytes a logged visit",
        log as f64 / (t.visits as f64 * 90.0 / 365.0)
    );
    for (name, bytes) in tables.iter().take(12) {
        println!("stats/table {name}: {bytes}");
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = traffic_data::open(&rt);
    let mut c = Criterion::default().configure_from_args();
    report_bytes(&rt, &t);
    bench_queries(&mut c, &rt, &t);
    bench_public_page(&mut c, &rt, &t);
    bench_view(&mut c, &rt, &t);
    c.final_summary();
}
