//! Traffic through the real binary: `linkdeck stats` in each output form and its errors, history
//! carried by export → import, and the demo file's traffic.

#[path = "cli_support/mod.rs"]
mod cli_support;

use cli_support::Env;
use serde_json::Value;

use linkdeck::backend::local::serving::VisitRow;
use linkdeck::backend::local::{LocalOptions, LocalService};

/// Visits to `alias` in the sandbox's database, `hours_ago` before now, with these values.
fn record(env: &Env, db: &std::path::Path, alias: &str, visits: &[(i64, [Option<&str>; 5])]) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let service = LocalService::open(db, LocalOptions::default()).unwrap();
        let backend = service.default_backend().await.unwrap();
        let link = linkdeck::backend::Backend::list_links(
            &backend,
            &linkdeck::domain::LinkQuery {
                search: Some(alias.into()),
                by: linkdeck::domain::SearchBy::Alias,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|l| l.alias == alias)
        .unwrap();
        let now = jiff::Timestamp::now().as_second();
        let rows = visits
            .iter()
            .map(|(hours_ago, values)| {
                let [country, platform, browser, referrer, language] =
                    values.map(|v| v.map(str::to_owned));
                VisitRow {
                    link_id: link.id,
                    at: now - hours_ago * 3600,
                    country,
                    platform,
                    browser,
                    referrer,
                    language,
                    address: None,
                    rule: None,
                }
            })
            .collect();
        service.record_visits(rows).await.unwrap();
    });
    let _ = env;
}

/// A stats record without what differs between databases (ids).
fn figures(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("id");
    for l in v["top_links"].as_array_mut().into_iter().flatten() {
        l.as_object_mut().unwrap().remove("id");
    }
    v
}

#[test]
fn stats_print_tables_json_and_csv_and_refuse_bad_questions() {
    let env = Env::new();
    env.run(&["links", "create", "https://example.com/a", "--alias", "a"])
        .ok();
    env.run(&["spaces", "create", "Launch", "--color", "green"])
        .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/b",
        "--alias",
        "b",
        "--space",
        "Launch",
    ])
    .ok();
    let de = [
        Some("DE"),
        Some("iOS"),
        Some("Safari"),
        Some("t.co"),
        Some("de"),
    ];
    let us = [
        Some("US"),
        Some("Windows"),
        Some("Chrome"),
        None,
        Some("en"),
    ];
    record(&env, &env.db, "a", &[(1, de), (2, de), (30, us)]);
    record(&env, &env.db, "b", &[(3, us)]);

    let table = env.run(&["stats", "a", "--period", "7d"]).ok().stdout;
    assert!(table.contains("link a · the last 7 days"), "{table}");
    assert!(table.contains("3 clicks"), "{table}");
    assert!(
        table.contains("Germany") && table.contains("t.co") && table.contains("direct"),
        "{table}"
    );

    let json = env.json(&["stats", "--period", "24h"]);
    assert_eq!(json["clicks"], 3, "{json}");
    assert_eq!(json["interval"], "hour");
    assert_eq!(json["timeline"].as_array().unwrap().len(), 24);
    assert_eq!(json["top_links"][0]["alias"], "a");
    let space = env.json(&["stats", "--space", "Launch", "--by", "country"]);
    assert_eq!(space["clicks"], 1);
    assert_eq!(space["country"]["top"][0]["value"], "US");
    assert!(space.get("timeline").is_none());

    // A tag: the links that carry it, with their clicks from before it was put on.
    env.run(&["links", "update", "b", "--tag", "promo"]).ok();
    let tag = env
        .run(&["stats", "--tag", "Promo", "--period", "7d"])
        .ok()
        .stdout;
    assert!(tag.contains("tag promo · the last 7 days"), "{tag}");
    assert!(tag.contains("1 click"), "{tag}");
    let json = env.json(&["stats", "--tag", "promo"]);
    assert_eq!(
        (json["scope"].as_str(), json["tag"].as_str()),
        (Some("tag"), Some("promo"))
    );
    assert_eq!(json["top_links"][0]["alias"], "b", "{json}");
    env.run(&["stats", "--tag", "nosuch"]).fails_with(4);
    env.run(&["stats", "--tag", "a,b"]).fails_with(2);
    env.run(&["stats", "--tag", "promo", "--space", "Launch"])
        .fails_with(2);

    let csv = env
        .run(&["stats", "a", "--by", "referrer", "--csv"])
        .ok()
        .stdout;
    assert_eq!(csv, "referrer,clicks\nt.co,2\ndirect,1\n");
    let csv = env.run(&["stats", "--csv", "--period", "7d"]).ok().stdout;
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "start,clicks");
    assert_eq!(rows.len(), 8, "{csv}");

    env.run(&["stats", "nosuch"]).fails_with(4);
    env.run(&["stats", "--period", "1w"]).fails_with(2);
    env.run(&["stats", "--from", "2026-01-02"]).fails_with(2);
    env.run(&["stats", "a", "--space", "Launch"]).fails_with(2);
    env.run(&["stats", "--top", "0"]).fails_with(2);
    let err = env
        .run(&[
            "--json",
            "stats",
            "--from",
            "2026-02-01",
            "--to",
            "2026-01-01",
        ])
        .fails_with(3)
        .error_json();
    assert!(err["fields"].get("to").is_some(), "{err}");
}

/// Links `a` (in space Launch, 200 visits over six weeks with values) and `b` (one visit
/// without any), in the sandbox's database.
fn busy_links(env: &Env) {
    env.run(&["spaces", "create", "Launch", "--color", "2"])
        .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/a",
        "--alias",
        "a",
        "--space",
        "Launch",
    ])
    .ok();
    env.run(&["links", "create", "https://example.com/b", "--alias", "b"])
        .ok();
    let mut visits = Vec::new();
    for i in 0..200i64 {
        let country = ["DE", "US", "FR", "JP"][i as usize % 4];
        let referrer = [Some("t.co"), None, Some("news.ycombinator.com")][i as usize % 3];
        visits.push((
            i * 7,
            [
                Some(country),
                Some("iOS"),
                Some("Safari"),
                referrer,
                Some("en"),
            ],
        ));
    }
    record(env, &env.db, "a", &visits);
    record(env, &env.db, "b", &[(5, [None, None, None, None, None])]);
}

/// The figures every test of carried history compares, one database against another.
const STATS_ASKED: [&[&str]; 5] = [
    &["stats", "a", "--period", "all"],
    &["stats", "a", "--period", "30d"],
    &["stats", "b", "--period", "7d"],
    &["stats", "--space", "Launch", "--period", "90d"],
    &["stats", "--period", "12m"],
];

fn same_figures(env: &Env, copy: &std::path::Path) {
    for args in STATS_ASKED {
        let mut all = vec!["--json"];
        all.extend(args);
        let before = figures(env.run(&all).ok().json());
        let after = figures(env.run_on(copy, &all).ok().json());
        assert_eq!(before, after, "{args:?}");
    }
}

#[test]
fn export_then_import_keeps_every_figure_of_the_history() {
    let env = Env::new();
    busy_links(&env);
    let file = env.path("out.json");
    env.run(&["export", file.to_str().unwrap()]).ok();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\"traffic\":[{\"hour\":"),
        "{}",
        &text[..text.len().min(600)]
    );

    let copy = env.path("copy.db");
    let summary = env
        .run_on(&copy, &["--json", "import", file.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(summary["clicks_imported"], 201);
    same_figures(&env, &copy);
    let link = env
        .run_on(&copy, &["--json", "links", "show", "a"])
        .ok()
        .json();
    assert_eq!(
        link["clicks"], 200,
        "a link with history starts with its clicks"
    );
}

/// `copy` from one database file into another carries each link's history with it, as an
/// export and import does; a second run finds the links there and adds no click twice, and a
/// link made in between arrives with its own history only.
#[test]
fn copy_between_databases_carries_history_once() {
    let env = Env::new();
    busy_links(&env);
    let copy = env.path("copy.db");
    let (from, to) = (env.db.to_str().unwrap(), copy.to_str().unwrap());
    let first = env.json(&["copy", "--from", from, "--to", to]);
    assert_eq!(first["links_copied"], 2, "{first}");
    assert_eq!(first["clicks_copied"], 201, "{first}");
    assert_eq!(first["not_carried"], Value::Null, "{first}");
    same_figures(&env, &copy);

    env.run(&["links", "create", "https://example.com/c", "--alias", "c"])
        .ok();
    record(
        &env,
        &env.db,
        "c",
        &[(3, [Some("DE"), None, None, None, None]); 4],
    );
    let second = env.json(&["copy", "--from", from, "--to", to]);
    assert_eq!(second["links_copied"], 1, "{second}");
    assert_eq!(second["links_already_there"], 2, "{second}");
    assert_eq!(second["clicks_copied"], 4, "{second}");
    same_figures(&env, &copy);
    for (alias, clicks) in [("a", 200), ("b", 1), ("c", 4)] {
        let link = env
            .run_on(&copy, &["--json", "links", "show", alias])
            .ok()
            .json();
        assert_eq!(link["clicks"], clicks, "{alias}");
    }
    let stats = env
        .run_on(&copy, &["--json", "stats", "c", "--period", "7d"])
        .ok()
        .json();
    assert_eq!(stats["clicks"], 4, "{stats}");
    let text = env.run(&["copy", "--from", from, "--to", to]).ok().stdout;
    assert!(text.contains("3 links already there"), "{text}");
    assert!(!text.contains("traffic history carried"), "{text}");
}

#[test]
fn the_demo_shows_traffic_at_once() {
    let env = Env::new();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.json");
    let summary = env.json(&["import", demo]);
    assert!(
        summary["clicks_imported"].as_u64().unwrap() > 1_000,
        "{summary}"
    );
    // Whenever it is imported, the last weeks have traffic.
    for period in ["7d", "30d", "90d"] {
        let stats = env.json(&["stats", "--period", period]);
        let busy_days = stats["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["clicks"].as_u64() > Some(0))
            .count();
        assert!(busy_days >= 5, "{period}: {busy_days} days with clicks");
        assert!(stats["country"]["top"].as_array().unwrap().len() >= 3);
        assert!(stats["top_links"].as_array().unwrap().len() >= 5);
    }
}

#[test]
fn visits_export_writes_ndjson_and_csv_goes_on_after_an_id_and_refuses_bad_questions() {
    let env = Env::new();
    busy_links(&env);

    // NDJSON on standard output: a visit a line, oldest first.
    let out = env.run(&["visits", "export"]).ok().stdout;
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 201, "{out}");
    assert!(
        lines
            .windows(2)
            .all(|w| w[0]["id"].as_i64() < w[1]["id"].as_i64())
    );
    assert_eq!(lines[0]["alias"], "a");
    assert_eq!(lines[0]["platform"], "iOS");
    assert!(lines[0]["at"].as_str().unwrap().ends_with('Z'));

    // A link, a space and a period (the last 7 days: visits every 7 hours).
    let of_b = env.run(&["visits", "export", "b"]).ok().stdout;
    assert_eq!(of_b.lines().count(), 1, "{of_b}");
    let launch = env
        .run(&["visits", "export", "--space", "Launch"])
        .ok()
        .stdout;
    assert_eq!(launch.lines().count(), 200);
    env.run(&["links", "update", "b", "--tag", "promo"]).ok();
    let promo = env.run(&["visits", "export", "--tag", "promo"]).ok().stdout;
    assert_eq!(promo, of_b);
    let week = env
        .run(&["visits", "export", "a", "--period", "7d"])
        .ok()
        .stdout;
    let n = week.lines().count();
    assert!(
        (20..=26).contains(&n),
        "{n} visits in a week of one every 7 hours"
    );

    // CSV into a file (the format from its extension), then on from the last id written.
    let file = env.path("visits.csv");
    let said = env
        .run(&["visits", "export", "--output", file.to_str().unwrap()])
        .ok()
        .stdout;
    let csv = std::fs::read_to_string(&file).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "id,at,link_id,alias,country,platform,browser,referrer,language,address,rule"
    );
    assert_eq!(rows.len(), 202, "{csv}");
    let last = lines[150]["id"].as_i64().unwrap().to_string();
    assert!(said.contains("wrote 201 visits"), "{said}");
    let rest = env.run(&["visits", "export", "--after", &last]).ok().stdout;
    assert_eq!(rest.lines().count(), 50);

    // Bad questions name the flag; nothing is left where the file would go.
    env.run(&["visits", "export", "nosuch"]).fails_with(4);
    env.run(&["visits", "export", "--period", "1w"])
        .fails_with(2);
    env.run(&["visits", "export", "a", "--space", "Launch"])
        .fails_with(2);
    let err = env
        .run(&[
            "visits",
            "export",
            "--from",
            "2026-02-01",
            "--to",
            "2026-01-01",
        ])
        .fails_with(2);
    assert!(err.stderr.contains("--to"), "{}", err.stderr);
    let missing = env.path("visits-of-nosuch.ndjson");
    env.run(&[
        "visits",
        "export",
        "nosuch",
        "-o",
        missing.to_str().unwrap(),
    ])
    .fails_with(4);
    assert!(!missing.exists());
    let leftovers = std::fs::read_dir(env.path("."))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".partial-")
        })
        .count();
    assert_eq!(leftovers, 0);
}

/// `visits tail` in the real binary prints the visits logged after it began, a line each, as
/// they arrive (here written by another process's click writer, as `serve` writes them).
#[test]
fn visits_tail_prints_each_new_visit_as_it_arrives() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let env = Env::new();
    busy_links(&env);
    let mut tail = env
        .std_cmd()
        .args(["visits", "tail", "a"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = tail.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    // The feed starts after the visits already logged; give it a moment to begin, then log
    // visits until one is seen (a slow start would miss the first).
    let de = [
        Some("DE"),
        Some("iOS"),
        Some("Safari"),
        Some("t.co"),
        Some("de"),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    let line = loop {
        assert!(Instant::now() < deadline, "no visit printed within 30 s");
        record(&env, &env.db, "b", &[(0, de)]);
        record(&env, &env.db, "a", &[(0, de)]);
        if let Ok(line) = rx.recv_timeout(Duration::from_secs(3)) {
            break line;
        }
    };
    let _ = tail.kill();
    let _ = tail.wait();
    // Only link a's visit, with its values; nothing from before it began.
    assert!(line.contains("  a  DE  iOS  Safari  t.co  de"), "{line}");
    assert!(rx.try_recv().map_or(true, |l| l.contains("  a  ")));
}
