//! Benchmark data: databases of N links with a realistic mix (most active, a few per cent
//! expired by date or by clicks, a few disabled, some in spaces), built once through
//! `import_batch` and cached under `target/bench-data/`. Two generators whose shapes differ:
//! `words` (made-up words in hosts, paths and titles, clicks spread evenly) and `shop`
//! (`shop.rs`: long shared URL prefixes, query strings, non-ASCII titles, clicks by a power
//! law).

#![allow(dead_code)]

mod shop;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use linkdeck::backend::local::{
    ImportOptions, ImportRow, Incoming, LocalBackend, LocalOptions, LocalService,
};
use linkdeck::domain::{Carried, FixedClock, LinkInput, Place, SpaceInput};

/// Links in the benchmark database: `LINKDECK_BENCH_LINKS`, one million by default.
pub fn link_count() -> usize {
    std::env::var("LINKDECK_BENCH_LINKS")
        .ok()
        .and_then(|n| n.replace('_', "").parse().ok())
        .unwrap_or(1_000_000)
}

/// The fixed "now" of every benchmark.
pub fn now() -> Timestamp {
    "2026-01-15T12:00:00Z".parse().unwrap()
}

pub fn options() -> LocalOptions {
    LocalOptions {
        public_url: "http://bench.test".into(),
        timezone: TimeZone::UTC,
        clock: Arc::new(FixedClock::new(now())),
        ..LocalOptions::default()
    }
}

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "cl", "dr", "fl", "gr", "pl", "st", "tr", "sh", "ch",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "oo"];
const CODAS: &[&str] = &["", "n", "r", "s", "t", "m", "nd", "rk", "ll", "ng"];
const TLDS: &[&str] = &["com", "org", "net", "io", "dev", "co.uk", "de", "shop"];

/// A fixed list of 2,000 made-up words of one to three syllables.
pub fn words() -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(7);
    let mut words = std::collections::BTreeSet::new();
    while words.len() < 2000 {
        let syllables = rng.random_range(1..=3);
        let word: String = (0..syllables)
            .map(|_| {
                format!(
                    "{}{}{}",
                    ONSETS[rng.random_range(0..ONSETS.len())],
                    VOWELS[rng.random_range(0..VOWELS.len())],
                    CODAS[rng.random_range(0..CODAS.len())]
                )
            })
            .collect();
        if word.len() >= 4 {
            words.insert(word);
        }
    }
    words.into_iter().collect()
}

const SPACES: usize = 40;
const BATCH: usize = 100_000;

/// The generated links as import rows, deterministic for a given `n` and `seed`.
pub fn rows(n: usize, seed: u64) -> Vec<(usize, LinkInput, Option<String>)> {
    let words = words();
    let mut rng = StdRng::seed_from_u64(seed);
    let word = |rng: &mut StdRng| words[rng.random_range(0..words.len())].as_str();
    let mut tag_rng = tag_rng(seed);
    (0..n)
        .map(|i| {
            let host = format!(
                "{}.{}",
                word(&mut rng),
                TLDS[rng.random_range(0..TLDS.len())]
            );
            let path = format!("{}/{}-{}", word(&mut rng), word(&mut rng), word(&mut rng));
            let mut input = LinkInput::with_url(format!("https://{host}/{path}?ref={i}"));
            let roll: u32 = rng.random_range(0..1000);
            if roll < 60 {
                // 6% carry a date: about half of them in the past.
                let day = rng.random_range(-365..365);
                let date = now()
                    .checked_add(jiff::SignedDuration::from_hours(24 * day))
                    .unwrap();
                let date = date.to_zoned(TimeZone::UTC);
                input.expiration_date = Some(date.strftime("%Y-%m-%d").to_string());
                input.expiration_time = Some("12:30".into());
            } else if roll < 100 {
                // 4% carry a click limit, reached by about half (see `Generator::clicks`).
                input.expiration_clicks = Some("25".into());
            }
            if rng.random_range(0..100) < 2 {
                input.disabled = Some("1".into());
            }
            let space = (rng.random_range(0..100) < 30)
                .then(|| format!("Space {}", rng.random_range(0..SPACES)));
            input.tags = word_tags(&mut tag_rng);
            (i + 1, input, space)
        })
        .collect()
}

/// Tags of the `words` links: 60 tags, a few on many links and most on few (a power law), on
/// six links in ten, one to three each.
pub const WORD_TAGS: usize = 60;

pub fn word_tag(n: usize) -> String {
    format!("topic-{n}")
}

fn word_tags(rng: &mut StdRng) -> Option<String> {
    if rng.random_range(0..10) >= 6 {
        return None;
    }
    let count = rng.random_range(1..=3);
    let tags: Vec<String> = (0..count)
        .map(|_| {
            let u: f64 = rng.random();
            word_tag((WORD_TAGS as f64 * u * u * u) as usize)
        })
        .collect();
    Some(tags.join(","))
}

/// Tags drawn on their own generator, so the links' other fields are those of the data before
/// tags were added.
fn tag_rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ 0x7a95)
}

/// The spaces the generated links name.
pub fn spaces() -> Vec<(usize, SpaceInput)> {
    (0..SPACES)
        .map(|i| {
            (
                i + 1,
                SpaceInput {
                    name: Some(format!("Space {i}")),
                    color: Some((i % 6 + 1).to_string()),
                },
            )
        })
        .collect()
}

/// Which generator made a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    Words,
    Shop,
}

impl Generator {
    pub const ALL: [Generator; 2] = [Generator::Words, Generator::Shop];

    pub fn name(self) -> &'static str {
        match self {
            Generator::Words => "words",
            Generator::Shop => "shop",
        }
    }

    fn rows(self, n: usize, seed: u64) -> Vec<(usize, LinkInput, Option<String>)> {
        match self {
            Generator::Words => rows(n, seed),
            Generator::Shop => shop::rows(n, seed),
        }
    }

    /// Link `id`'s clicks, as visits would have left them.
    fn clicks(self, id: u64) -> u64 {
        match self {
            // Most links a few, one in ten many.
            Generator::Words if id.is_multiple_of(10) => (id * 7919) % 5000,
            Generator::Words => (id * 31) % 50,
            Generator::Shop => shop::clicks(id),
        }
    }

    /// Link `id`'s title: `None` for the one an import makes of the URL.
    fn title(self, id: u64) -> Option<String> {
        match self {
            Generator::Words => None,
            Generator::Shop => Some(shop::title(id)),
        }
    }
}

/// The `words` database of `n` links, built on first use.
pub fn database(n: usize) -> PathBuf {
    database_of(Generator::Words, n)
}

/// The database `generator` makes of `n` links, built on first use.
pub fn database_of(generator: Generator, n: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let name = match generator {
        Generator::Words => "links",
        Generator::Shop => "shop",
    };
    // "-tagged": built since the generators give tags.
    let path = dir.join(format!("{name}-{n}-tagged.db"));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(format!("{name}-{n}.partial.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let service = LocalService::open(&partial, options()).unwrap();
        let backend = service.default_backend().await.unwrap();
        let started = Instant::now();
        let spaces = spaces();
        backend.import_batch(spaces, Vec::new()).await.unwrap();
        let mut done = 0;
        while done < n {
            let size = BATCH.min(n - done);
            let rows = carrying(generator, done, generator.rows(size, done as u64));
            backend
                .import_stream(Vec::new(), rows, ImportOptions::default())
                .await
                .unwrap();
            done += size;
            eprintln!("bench data: {done}/{n} links, {:.0?}", started.elapsed());
        }
        eprintln!(
            "bench data: {n} links in {:.1?} ({:.0} links/s)",
            started.elapsed(),
            n as f64 / started.elapsed().as_secs_f64()
        );
        checkpoint(&partial).await;
    });
    std::fs::rename(&partial, &path).unwrap();
    path
}

/// `rows` as an import takes them, each carrying its clicks and title as an export from another
/// service would. Links take ids 1 to n in the order they come: the first of `rows` is link
/// `done + 1`.
fn carrying(
    generator: Generator,
    done: usize,
    rows: Vec<(usize, LinkInput, Option<String>)>,
) -> impl Iterator<Item = Incoming> + Send + 'static {
    rows.into_iter().map(move |(line, input, space)| {
        let id = (done + line) as u64;
        Incoming::Row(Box::new(ImportRow {
            place: Place::line(line),
            input,
            space,
            carried: Carried {
                title: generator.title(id),
                clicks: generator.clicks(id),
                ..Carried::default()
            },
        }))
    })
}

/// Folds the WAL back into the file, so the database is one file in a clean state.
pub async fn checkpoint(path: &Path) {
    let db = linkdeck_sqlite::Db::open(path).unwrap();
    db.write(|tx| {
        tx.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .or(Ok(()))
    })
    .await
    .unwrap();
}

/// Opens the benchmark database of `n` links, building it first if needed.
pub fn open(rt: &tokio::runtime::Runtime, n: usize) -> LocalBackend {
    open_of(rt, Generator::Words, n)
}

/// Opens the database `generator` makes of `n` links, building it first if needed.
pub fn open_of(rt: &tokio::runtime::Runtime, generator: Generator, n: usize) -> LocalBackend {
    let path = database_of(generator, n);
    let service = LocalService::open(&path, options()).unwrap();
    rt.block_on(service.default_backend()).unwrap()
}
