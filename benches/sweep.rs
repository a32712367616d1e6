//! Lists without blind spots: a sweep of random list questions over both generators'
//! databases (`data::Generator`), each timed as the embedded service answers it, reported as
//! p50 / p90 / p99 / worst, with the slowest questions named so they can be asked again.
//!
//! A question is a status (all, active, expired, disabled) × a sort (newest, oldest, most and
//! fewest clicks) × a search — none, or a term of 1 to 30 characters cut from a random link's
//! stored title, alias or URL, or (one in twenty) a term that matches nothing — × a page: the
//! first, the hundredth and the last of its answer; one question in three also filters by one
//! or two tags stored on random links (every one, or any). Seeded, so two builds are asked the
//! same questions.
//!
//! `cargo bench --bench sweep`; settings through the environment:
//!   LINKDECK_BENCH_LINKS=1000000   links in each database (built once under target/bench-data)
//!   SWEEP_QUESTIONS=600            questions per database (each asked at up to three pages)
//!   SWEEP_SEED=1                   which questions
//!   SWEEP_GENERATORS=words,shop    which databases
//!   SWEEP_SPACES=1                 also filter one question in four by a space: a random link's,
//!                                  or no space when it has none (its own draws, so the rest of
//!                                  each question is as without)
//!   SWEEP_POSTGRES=URL             also ask every question of a PostgreSQL copy of each database
//!                                  (a database per generator beside URL's, e.g. the one
//!                                  `scripts/pg-cluster` prints, copied once by `db copy`'s code;
//!                                  the password from LINKDECK_DB_PASSWORD), the two stores in
//!                                  turn question by question; reports each store and the ratio
//!                                  PostgreSQL / SQLite per question, and checks both answer the
//!                                  same links
//!   SWEEP_ONLY=TEXT                ask only the questions whose description holds TEXT (as
//!                                  the report prints them, e.g. `"ce-2022/pr" in url`), to
//!                                  time or profile one of them alone
//!   SWEEP_EVERY=FILE               also write every answer's time to FILE, a line each:
//!                                  generator, store, which page (first, 100th, last), ms, the
//!                                  question; two builds' files compare question by question

mod data;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::{Connection, OpenFlags};

use std::sync::Arc;

use data::Generator;
use linkdeck::backend::Backend;
use linkdeck::backend::local::pg::PgTarget;
use linkdeck::backend::local::{LocalBackend, LocalService, StoreLocation};
use linkdeck::domain::{
    Link, LinkQuery, Page, SearchBy, Sort, SpaceFilter, StatusFilter, TagMatch,
};
use tokio_postgres::NoTls;

/// One timed answer: how long, and the question.
#[derive(Clone)]
struct Timed {
    took: Duration,
    question: String,
}

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// A term of `len` characters from a random place in `text` (all of it when shorter).
fn cut(text: &str, len: usize, rng: &mut StdRng) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= len {
        return text.to_owned();
    }
    let start = rng.random_range(0..=chars.len() - len);
    chars[start..start + len].iter().collect()
}

/// A stored field of a random link, as the search would look in it.
fn field_of_random_link(db: &Connection, links: usize, by: SearchBy, rng: &mut StdRng) -> String {
    let column = by.as_str();
    let id = rng.random_range(1..=links as i64);
    db.query_row(
        &format!("SELECT coalesce({column}, '') FROM links WHERE id = ?1"),
        [id],
        |r| r.get(0),
    )
    .unwrap_or_default()
}

/// The questions of the sweep, without their pages.
fn questions(db: &Connection, links: usize, count: usize, seed: u64) -> Vec<LinkQuery> {
    let mut rng = StdRng::seed_from_u64(seed);
    // Tags drawn on a generator of their own: the rest of each question is the one a sweep
    // without tags asks, so the two can be compared question by question.
    let mut tag_rng = StdRng::seed_from_u64(seed ^ 0x7a95);
    let mut space_rng = StdRng::seed_from_u64(seed ^ 0x5ace);
    let spaces = std::env::var("SWEEP_SPACES").is_ok_and(|v| v == "1");
    (0..count)
        .map(|_| {
            let by = SearchBy::ALL[rng.random_range(0..3)];
            let search = match rng.random_range(0..20) {
                0..=1 => None,
                2 => Some(format!("zq{}xj", rng.random_range(0..1_000_000))),
                _ => {
                    let len = rng.random_range(1..=30);
                    let text = field_of_random_link(db, links, by, &mut rng);
                    Some(cut(&text, len, &mut rng)).filter(|t| !t.trim().is_empty())
                }
            };
            let status = StatusFilter::ALL[rng.random_range(0..4)];
            let sort = Sort::ALL[rng.random_range(0..4)];
            let (tags, tag_match) = match tag_rng.random_range(0..3) {
                0 => tags_of_random_links(db, links, &mut tag_rng),
                _ => (Vec::new(), TagMatch::All),
            };
            let space = match (spaces, space_rng.random_range(0..4)) {
                (true, 0) => {
                    let id = space_rng.random_range(1..=links as i64);
                    let sql = "SELECT space_id FROM links WHERE id = ?1";
                    let space: Option<i64> = db.query_row(sql, [id], |r| r.get(0)).unwrap();
                    space.map_or(SpaceFilter::NoSpace, SpaceFilter::In)
                }
                _ => SpaceFilter::Any,
            };
            LinkQuery {
                search,
                by,
                status,
                sort,
                tags,
                tag_match,
                space,
                ..LinkQuery::default()
            }
        })
        .collect()
}

/// One or two tags stored on random links (every one of them asked, or any), as a person
/// filtering by the tags in use would ask.
fn tags_of_random_links(
    db: &Connection,
    links: usize,
    rng: &mut StdRng,
) -> (Vec<String>, TagMatch) {
    let mut tags = Vec::new();
    for _ in 0..rng.random_range(1..=2) {
        for _ in 0..20 {
            let id = rng.random_range(1..=links as i64);
            let stored: Option<String> = db
                .query_row("SELECT tags FROM links WHERE id = ?1", [id], |r| r.get(0))
                .unwrap_or_default();
            let on_link: Vec<String> = stored
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            if !on_link.is_empty() {
                tags.push(on_link[rng.random_range(0..on_link.len())].clone());
                break;
            }
        }
    }
    tags.sort();
    tags.dedup();
    let how = if rng.random_range(0..2) == 0 {
        TagMatch::All
    } else {
        TagMatch::Any
    };
    (tags, how)
}

fn describe(q: &LinkQuery, last: &str) -> String {
    let search = match q.search_term() {
        Some(term) => format!(
            "{:?} in {} ({} chars)",
            term,
            q.by.as_str(),
            term.chars().count()
        ),
        None => "no search".to_owned(),
    };
    let tags = match q.tags.len() {
        0 => String::new(),
        _ => format!(", tags {} ({})", q.tags.join("+"), q.tag_match.as_str()),
    };
    let space = match q.space {
        SpaceFilter::Any | SpaceFilter::Among(_) => String::new(),
        SpaceFilter::NoSpace => ", no space".to_owned(),
        SpaceFilter::In(id) => format!(", space {id}"),
    };
    format!(
        "{search}{tags}{space}, status {}, sort {}, page {} of {last}",
        q.status.label(),
        q.sort.as_str(),
        q.page
    )
}

fn percentile(sorted: &[Timed], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].took
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// The store a sweep asks: its name and the service's view of it.
struct Store {
    name: &'static str,
    backend: LocalBackend,
}

/// A PostgreSQL copy of `generator`'s database of `links` links, in a database of its own on the
/// server of `url`, copied from the SQLite file on first use.
fn postgres_copy(
    rt: &tokio::runtime::Runtime,
    url: &str,
    generator: Generator,
    links: usize,
) -> LocalBackend {
    let password = std::env::var("LINKDECK_DB_PASSWORD").unwrap_or_default();
    let name = format!("sweep_{}_{links}", generator.name());
    let target = |db: &str| {
        let (server, _) = url.rsplit_once('/').expect("a database URL");
        PgTarget::parse(&format!("{server}/{db}"))
            .unwrap()
            .with_password(password.clone())
    };
    rt.block_on(async {
        let admin = target("postgres");
        let (client, connection) = admin.config().connect(NoTls).await.unwrap();
        tokio::spawn(connection);
        let exists = client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
            .await
            .unwrap()
            .is_some();
        if !exists {
            // A name of the bench's own making, not a value: CREATE DATABASE takes no parameters.
            client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .unwrap();
        }
        let location = StoreLocation::Postgres(target(&name));
        let pg = LocalService::open_at(&location, data::options())
            .await
            .unwrap();
        if pg.table_counts().await.unwrap().total() == 0 {
            let path = data::database_of(generator, links);
            let sqlite = LocalService::open(&path, data::options()).unwrap();
            let started = Instant::now();
            sqlite.copy_into(&pg, Arc::new(|_| {})).await.unwrap();
            eprintln!("copied into PostgreSQL in {:.1?}", started.elapsed());
        }
        pg.default_backend().await.unwrap()
    })
}

fn sweep(
    rt: &tokio::runtime::Runtime,
    generator: Generator,
    links: usize,
    count: usize,
    seed: u64,
) {
    let mut stores = vec![Store {
        name: "SQLite",
        backend: data::open_of(rt, generator, links),
    }];
    if let Ok(url) = std::env::var("SWEEP_POSTGRES") {
        stores.push(Store {
            name: "PostgreSQL",
            backend: postgres_copy(rt, &url, generator, links),
        });
    }
    let path = data::database_of(generator, links);
    let db = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut asked = questions(&db, links, count, seed);
    if let Ok(only) = std::env::var("SWEEP_ONLY") {
        asked.retain(|q| describe(q, "").contains(&only));
    }
    let ask = |backend: &LocalBackend, q: &LinkQuery| {
        let started = Instant::now();
        let page = rt.block_on(backend.list_links(q)).unwrap();
        (started.elapsed(), page)
    };
    // Warm the stores' pages into their caches as a running server's would be.
    for store in &stores {
        for q in asked.iter().take(50) {
            ask(&store.backend, q);
        }
    }
    let mut every = std::env::var("SWEEP_EVERY").ok().map(|path| {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        std::io::BufWriter::new(file.expect("SWEEP_EVERY: a file that can be written"))
    });
    let mut timed: Vec<Vec<Timed>> = stores.iter().map(|_| Vec::new()).collect();
    let mut ratios = Vec::new();
    let mut disagreements = 0;
    for q in &asked {
        // Each store is asked its own pages 1, 100 and last: a store that stops counting at a
        // bound ("10,000+") knows of fewer pages, and a user of it would ask for those.
        let firsts: Vec<_> = stores.iter().map(|s| ask(&s.backend, q).1).collect();
        let pages_of = |first: &Page<Link>| {
            let last = first.last_page();
            let mut pages = vec![1, 100.min(last), last];
            pages.dedup();
            pages
        };
        let mut answers: BTreeMap<u32, Vec<(Duration, Page<Link>)>> = BTreeMap::new();
        for (i, store) in stores.iter().enumerate() {
            for (which, page) in pages_of(&firsts[i]).into_iter().enumerate() {
                let q = LinkQuery { page, ..q.clone() };
                let (took, answer) = ask(&store.backend, &q);
                let known = if firsts[i].total_exact { "" } else { "+" };
                let question = describe(&q, &format!("{}{known}", firsts[i].last_page()));
                if let Some(every) = every.as_mut() {
                    let ms = took.as_secs_f64() * 1000.0;
                    let (name, store) = (generator.name(), store.name);
                    writeln!(every, "{name}\t{store}\t{which}\t{ms:.3}\t{question}").unwrap();
                }
                timed[i].push(Timed { took, question });
                answers.entry(page).or_default().push((took, answer));
            }
        }
        // Where both stores answered the same page: the same links, and totals that agree (a
        // bound no larger than the exact count).
        for (page, both) in answers {
            let [(sqlite, a), (pg, b)] = &both[..] else {
                continue;
            };
            ratios.push(pg.as_secs_f64() / sqlite.as_secs_f64().max(1e-6));
            let ids = |p: &Page<Link>| p.items.iter().map(|l| l.id).collect::<Vec<_>>();
            let agree = |exact: &Page<Link>, other: &Page<Link>| match other.total_exact {
                true => other.total == exact.total,
                false => other.total <= exact.total,
            };
            if ids(a) != ids(b) || !(agree(a, b) || agree(b, a)) {
                disagreements += 1;
                let q = LinkQuery { page, ..q.clone() };
                println!(
                    "  the stores disagree on {}: {} and {} links",
                    describe(&q, "?"),
                    a.total,
                    b.total
                );
            }
        }
    }
    for (store, mut timed) in stores.iter().zip(timed) {
        timed.sort_by_key(|t| t.took);
        let what = format!("{} on {} ({links} links)", generator.name(), store.name);
        report(&what, &timed);
        // The questions with a tag filter on their own, beside those without, from the same run.
        let (tagged, untagged): (Vec<Timed>, Vec<Timed>) = timed
            .into_iter()
            .partition(|t| t.question.contains(", tags "));
        // And those within a space (or none), whether tagged or not.
        let in_space =
            |t: &&Timed| t.question.contains(", space ") || t.question.contains(", no space");
        let mut spaced: Vec<Timed> = (tagged.iter().chain(&untagged))
            .filter(in_space)
            .cloned()
            .collect();
        spaced.sort_by_key(|t| t.took);
        report(&format!("{what} with tags"), &tagged);
        report(&format!("{what} without tags"), &untagged);
        if !spaced.is_empty() {
            report(&format!("{what} within a space or none"), &spaced);
        }
    }
    if !ratios.is_empty() {
        ratios.sort_by(f64::total_cmp);
        let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
        println!(
            "{}: PostgreSQL / SQLite per answer · p10 {:.2} · p50 {:.2} · p90 {:.2} · p99 {:.2}; \
             {disagreements} answers differ",
            generator.name(),
            at(0.10),
            at(0.50),
            at(0.90),
            at(0.99),
        );
    }
}

fn report(what: &str, timed: &[Timed]) {
    let Some(worst) = timed.last() else {
        return;
    };
    println!(
        "{what}: {} answers · p50 {} · p90 {} · p99 {} · worst {}",
        timed.len(),
        ms(percentile(timed, 0.50)),
        ms(percentile(timed, 0.90)),
        ms(percentile(timed, 0.99)),
        ms(worst.took),
    );
    for t in timed.iter().rev().take(5) {
        println!("  {:>9}  {}", ms(t.took), t.question);
    }
}

fn main() {
    let links = data::link_count();
    let count = env("SWEEP_QUESTIONS", 600usize);
    let seed = env("SWEEP_SEED", 1u64);
    let wanted = std::env::var("SWEEP_GENERATORS").unwrap_or_else(|_| "words,shop".into());
    let rt = tokio::runtime::Runtime::new().unwrap();
    for generator in Generator::ALL {
        if wanted.split(',').any(|w| w.trim() == generator.name()) {
            sweep(&rt, generator, links, count, seed);
        }
    }
}
