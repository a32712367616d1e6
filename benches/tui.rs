//! Terminal app figures: the time to draw a full links screen, the time from a search
//! keystroke to the frame showing its answer on a database of a million links, and the
//! resident memory while browsing 1,000 versus 1,000,000 links, and after marking all of them.
//!
//! `cargo bench --bench tui`. The databases are generated once and kept under
//! `target/bench-data/`; `LINKDECK_BENCH_LINKS` changes the large size (default 1,000,000).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService};
use linkdeck::domain::{LinkInput, SystemClock};
use linkdeck::tui::{App, TuiOptions};

const RSS_ENV: &str = "LINKDECK_TUI_RSS_DB";

fn large_size() -> u64 {
    std::env::var("LINKDECK_BENCH_LINKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// A database of `n` links, made once and reused.
fn database(rt: &tokio::runtime::Runtime, n: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("tui-{n}.db"));
    let done = dir.join(format!("tui-{n}.done"));
    if done.exists() {
        return path;
    }
    let _ = std::fs::remove_file(&path);
    eprintln!("generating {n} links into {} (once)…", path.display());
    rt.block_on(async {
        let backend = open(&path).await;
        let mut next = 0u64;
        while next < n {
            let end = (next + 50_000).min(n);
            let rows = (next..end)
                .map(|i| {
                    let input = LinkInput {
                        url: Some(format!(
                            "https://site{}.example.com/articles/{i}/read",
                            i % 997
                        )),
                        alias: Some(format!("l{i:07}")),
                        ..LinkInput::default()
                    };
                    (usize::try_from(i).unwrap() + 1, input, None)
                })
                .collect();
            backend.import_batch(Vec::new(), rows).await.unwrap();
            next = end;
        }
    });
    std::fs::write(&done, b"").unwrap();
    path
}

async fn open(path: &Path) -> LocalBackend {
    LocalService::open(path, LocalOptions::default())
        .unwrap()
        .default_backend()
        .await
        .unwrap()
}

fn app(backend: &dyn Backend) -> App {
    let cfg = TuiOptions::default()
        .app_config(backend, Some("1"))
        .unwrap();
    App::new(cfg, Arc::new(SystemClock), Rect::new(0, 0, 100, 30))
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
    app.handle_event(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn bench_render(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let path = database(rt, 1_000);
    let backend = rt.block_on(open(&path));
    let mut app = app(&backend);
    rt.block_on(settle(&mut app, &backend));
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    c.bench_function("tui/render full links screen 100x30", |b| {
        b.iter(|| {
            // A changed row each time, so the diff always has work to do.
            press(&mut app, KeyCode::Char('j'));
            terminal.draw(|f| app.render(f)).unwrap();
        });
    });
}

fn bench_search(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let n = large_size();
    let path = database(rt, n);
    let backend = rt.block_on(open(&path));
    let mut app = app(&backend);
    rt.block_on(settle(&mut app, &backend));
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut group = c.benchmark_group("tui/keystroke to frame");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    for (by_presses, term) in [(0, "site42"), (1, "l0999"), (2, "articles/77")] {
        let label = ["search by title", "search by alias", "search by url"][by_presses];
        for _ in 0..by_presses {
            press(&mut app, KeyCode::Char('b'));
        }
        rt.block_on(settle(&mut app, &backend));
        group.bench_function(BenchmarkId::new(label, format!("{n} links")), |b| {
            // Only the keystroke to its frame is timed; going back to the whole list is not.
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    press(&mut app, KeyCode::Char('/'));
                    for ch in term.chars() {
                        press(&mut app, KeyCode::Char(ch));
                    }
                    // Enter applies the search at once (typing waits for a 150 ms pause, which
                    // is deliberate and not work): from here to the frame is what is measured.
                    let start = Instant::now();
                    press(&mut app, KeyCode::Enter);
                    rt.block_on(settle(&mut app, &backend));
                    terminal.draw(|f| app.render(f)).unwrap();
                    spent += start.elapsed();
                    press(&mut app, KeyCode::Char('/'));
                    press(&mut app, KeyCode::Esc);
                    rt.block_on(settle(&mut app, &backend));
                }
                spent
            });
        });
        press(&mut app, KeyCode::Char('c'));
        rt.block_on(settle(&mut app, &backend));
    }
    // The backend's share of the title search, to tell the app's time from the store's.
    let query = linkdeck::domain::LinkQuery {
        search: Some("site42".into()),
        per_page: 100,
        ..Default::default()
    };
    group.bench_function(
        BenchmarkId::new("backend alone: title search", format!("{n} links")),
        |b| b.iter(|| rt.block_on(backend.list_links(&query)).unwrap()),
    );
    group.bench_function(
        BenchmarkId::new("G to the end", format!("{n} links")),
        |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    app.handle_event(Event::Key(KeyEvent::new(
                        KeyCode::Char('G'),
                        KeyModifiers::SHIFT,
                    )));
                    rt.block_on(settle(&mut app, &backend));
                    terminal.draw(|f| app.render(f)).unwrap();
                    spent += start.elapsed();
                    press(&mut app, KeyCode::Char('g'));
                    rt.block_on(settle(&mut app, &backend));
                }
                spent
            });
        },
    );
    group.finish();
}

/// In a fresh process: browse the database named by [`RSS_ENV`] and print the resident memory.
fn rss_probe(path: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let backend = open(Path::new(path)).await;
        let mut app = app(&backend);
        settle(&mut app, &backend).await;
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        // Browse: to the bottom, page back up a long way, to the top, search and clear.
        press(&mut app, KeyCode::Char('G'));
        settle(&mut app, &backend).await;
        for _ in 0..300 {
            press(&mut app, KeyCode::PageUp);
            settle(&mut app, &backend).await;
            terminal.draw(|f| app.render(f)).unwrap();
        }
        for _ in 0..300 {
            press(&mut app, KeyCode::Char('j'));
            settle(&mut app, &backend).await;
        }
        press(&mut app, KeyCode::Char('g'));
        press(&mut app, KeyCode::Char('o'));
        settle(&mut app, &backend).await;
        terminal.draw(|f| app.render(f)).unwrap();
        let browsing = vm_rss_kib();
        // Every link marked: held as the filter, so it should cost nothing per link.
        press(&mut app, KeyCode::Char('*'));
        settle(&mut app, &backend).await;
        terminal.draw(|f| app.render(f)).unwrap();
        println!(
            "rss_kib={browsing} cached_pages={} marked={} rss_marked_kib={}",
            app.cached_pages(),
            app.marked(),
            vm_rss_kib()
        );
    });
}

fn vm_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn report_rss(rt: &tokio::runtime::Runtime) {
    if !Path::new("/proc/self/status").exists() {
        return;
    }
    let mut figures = Vec::new();
    for n in [1_000, large_size()] {
        let path = database(rt, n);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env(RSS_ENV, &path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let rss: u64 = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("rss_kib=")?.parse().ok())
            .unwrap_or(0);
        println!(
            "tui/resident memory browsing {n} links: {rss} KiB ({})",
            text.trim()
        );
        figures.push(rss);
    }
    if let [small, large] = figures[..]
        && small > 0
    {
        println!(
            "tui/resident memory ratio {}:1000 = {:.2}× (target ≤ 1.5×)",
            large_size(),
            large as f64 / small as f64
        );
    }
}

fn main() {
    if let Ok(path) = std::env::var(RSS_ENV) {
        rss_probe(&path);
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = Criterion::default().configure_from_args();
    bench_render(&mut c, &rt);
    bench_search(&mut c, &rt);
    report_rss(&rt);
    c.final_summary();
}
