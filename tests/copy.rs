//! `linkdeck copy` between a temporary database and a real `linkdeck serve`, both ways, run as
//! the real binary — through linkdeck's own API, which carries titles, click totals, creation
//! dates and traffic history both ways, and through the v1 API alone, as against a phpShort
//! site (the server behind a proxy that hides linkdeck's paths). The server breaks part way
//! (behind a proxy that loses an answer and then refuses, or refuses a list page); running the
//! same copy again finishes it, every link is there exactly once, and no click is counted
//! twice: the stats read through the CLI are the source's. `linkdeck import` into a server
//! profile takes the same path.

mod cli_support;
mod common;
mod pg_cluster;
mod raw;

#[path = "common/counting_proxy.rs"]
mod counting_proxy;

use std::collections::BTreeMap;

use cli_support::{Env, Run};
use common::{Store, TestServer};
use counting_proxy::{Breaks, CountingProxy};
use linkdeck::backend::local::serving::VisitRow;
use linkdeck::domain::{LinkInput, SpaceInput};
use linkdeck::server::ServeOptions;
use reqwest::Method;
use serde_json::{Value, json};

const KEY_VAR: &str = "LINKDECK_COPY_TEST_KEY";

/// Profiles `direct` (the server) and `flaky` (the server behind `proxy`).
fn write_config(env: &Env, server: &str, proxy: &str) {
    write_profiles(env, &[("direct", server), ("flaky", proxy)]);
}

/// A remote profile of each name, for the server at its URL, in UTC.
fn write_profiles(env: &Env, profiles: &[(&str, &str)]) {
    let text: String = profiles
        .iter()
        .map(|(name, url)| {
            format!(
                "[profiles.{name}]\nbackend = \"remote\"\nbase_url = \"{url}\"\napi_key_env = \"{KEY_VAR}\"\ntimezone = \"UTC\"\n\n"
            )
        })
        .collect();
    std::fs::write(&env.config, text).unwrap();
}

/// Runs the binary with the server's key in the environment, off the async threads.
fn cli(env: &Env, key: &str, args: &[&str]) -> Run {
    tokio::task::block_in_place(|| cli_support::run(env.cmd().env(KEY_VAR, key).args(args)))
}

/// Every link the server's owner has: alias → (url, space, clicks).
async fn server_links(server: &TestServer) -> BTreeMap<String, Value> {
    let mut all = BTreeMap::new();
    let mut page = 1;
    loop {
        let body: Value = server
            .api(
                Method::GET,
                &format!("/api/v1/links?per_page=100&page={page}"),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let items = body["data"].as_array().unwrap();
        for l in items {
            let alias = l["alias"].as_str().unwrap().to_owned();
            assert!(
                all.insert(alias.clone(), l.clone()).is_none(),
                "{alias} twice"
            );
        }
        if items.len() < 100 {
            return all;
        }
        page += 1;
    }
}

fn local_links(env: &Env, db: &std::path::Path) -> BTreeMap<String, Value> {
    let list = cli_support::run(env.bare().args([
        "--db",
        db.to_str().unwrap(),
        "--config",
        env.config.to_str().unwrap(),
        "--json",
        "links",
        "list",
        "--all",
    ]))
    .ok()
    .json();
    let mut all = BTreeMap::new();
    for l in list.as_array().unwrap() {
        let alias = l["alias"].as_str().unwrap().to_owned();
        assert!(
            all.insert(alias.clone(), l.clone()).is_none(),
            "{alias} twice"
        );
    }
    all
}

/// A server that has only the v1 API, as a phpShort site: links are created one request each,
/// and what the API cannot set stays behind (the summary says so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_database_into_a_v1_only_server_resumes_after_the_server_fails() {
    let server = TestServer::start().await;
    let proxy = CountingProxy::breaking(
        &server.base,
        Breaks {
            creates: Some(10),
            v1_only: true,
            ..Breaks::default()
        },
    )
    .await;
    let phpshort = CountingProxy::breaking(
        &server.base,
        Breaks {
            v1_only: true,
            ..Breaks::default()
        },
    )
    .await;
    let env = Env::new();
    write_config(&env, &phpshort.base_url(), &proxy.base_url());
    let links: Vec<String> = (0..30)
        .map(|i| {
            let space = if i % 3 == 0 {
                r#", "space": "Launch""#
            } else {
                ""
            };
            let tags = if i % 4 == 0 { r#", "tags": ["promo"]"# } else { "" };
            let options = if i % 5 == 0 {
                r#", "forward_path": true, "preview_title": "Card""#
            } else {
                ""
            };
            format!(
                r#"{{"url": "https://example.com/{i}?q=ü", "alias": "l{i}", "clicks": {i}{space}{tags}{options}}}"#
            )
        })
        .collect();
    let seed = env.write(
        "seed.json",
        &format!(
            r#"{{"spaces": [{{"name": "Launch", "color": "green"}}], "links": [{}]}}"#,
            links.join(",\n")
        ),
    );
    env.run(&["import", seed.to_str().unwrap()]).ok();
    let db = env.db.to_str().unwrap().to_owned();

    // A dry run changes nothing.
    let dry = cli(
        &env,
        &server.key,
        &[
            "--json",
            "copy",
            "--from",
            &db,
            "--to",
            "direct",
            "--dry-run",
        ],
    )
    .ok()
    .json();
    assert_eq!(dry["links_copied"], 30);
    assert_eq!(dry["spaces_created"], 1);
    assert!(server_links(&server).await.is_empty());

    // The server goes away after ten links (the eleventh made, its answer lost).
    let run = cli(&env, &server.key, &["copy", "--from", &db, "--to", "flaky"]).fails_with(6);
    assert!(
        run.stderr.contains("run the same command again"),
        "{}",
        run.stderr
    );
    assert_eq!(proxy.creates(), 11);
    let first_run = server_links(&server).await;
    assert_eq!(first_run.len(), 11);

    // Run again: the eleven are passed over, the rest arrive.
    let done = cli(
        &env,
        &server.key,
        &["--json", "copy", "--from", &db, "--to", "direct"],
    )
    .ok()
    .json();
    assert_eq!(done["links_copied"], 19);
    assert_eq!(done["links_already_there"], 11);
    assert!(
        done["not_carried"].as_str().unwrap().contains(
            "titles, click totals, creation dates and traffic history (it is not a linkdeck server"
        ),
        "{done}"
    );
    assert_eq!(proxy.imports() + phpshort.imports(), 0, "v1 only");
    // The tagged links this run sent (every fourth, less those the first run made) went
    // without their tags, and it said so.
    let tagged_sent = (0..30)
        .filter(|i| i % 4 == 0 && !first_run.contains_key(&format!("l{i}")))
        .count();
    assert_eq!(done["tags_not_copied"], tagged_sent, "{done}");
    // So did the links with options (every fifth), and they went as plain links.
    let optioned_sent = (0..30)
        .filter(|i| i % 5 == 0 && !first_run.contains_key(&format!("l{i}")))
        .count();
    assert_eq!(done["options_not_copied"], optioned_sent, "{done}");
    let there = server_links(&server).await;
    assert_eq!(there.len(), 30, "every link exactly once");
    for i in 0..30 {
        let link = &there[&format!("l{i}")];
        assert_eq!(link["tags"], json!([]), "l{i}");
        assert_eq!(link["forward_path"], 0, "l{i}");
        assert_eq!(link["preview_title"], json!(null), "l{i}");
        assert_eq!(link["url"], format!("https://example.com/{i}?q=ü"));
        let space = link["space"]["name"].as_str();
        assert_eq!(space, (i % 3 == 0).then_some("Launch"), "l{i}");
    }
    let spaces: Value = server
        .api(Method::GET, "/api/v1/spaces")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(spaces["data"][0]["name"], "Launch");
    assert_eq!(spaces["data"][0]["color"], 4, "its colour came along");
    // A third run has nothing left to do.
    let again = cli(
        &env,
        &server.key,
        &["--json", "copy", "--from", &db, "--to", "direct"],
    )
    .ok()
    .json();
    assert_eq!(again["links_copied"], 0);
    assert_eq!(again["links_already_there"], 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_into_a_local_database_resumes_after_the_server_fails() {
    let server = TestServer::start().await;
    let backend = server.service.for_owner(server.owner_id);
    let rows = (0..250)
        .map(|i| {
            (
                i + 1,
                LinkInput {
                    alias: Some(format!("s{i}")),
                    ..LinkInput::with_url(format!("https://example.org/{i}"))
                },
                (i % 2 == 0).then(|| "Docs".to_owned()),
            )
        })
        .collect();
    let docs = SpaceInput {
        name: Some("Docs".into()),
        color: Some("5".into()),
    };
    backend.import_batch(vec![(0, docs)], rows).await.unwrap();
    // Clicks counted on the server travel with their links.
    server
        .raw
        .sqlite()
        .await
        .write(|tx| {
            tx.execute("UPDATE links SET clicks = id * 3", [])
                .map_err(linkdeck::backend::local::db_error)?;
            Ok(())
        })
        .await
        .unwrap();
    let proxy = CountingProxy::breaking(
        &server.base,
        Breaks {
            list_page: Some(2),
            ..Breaks::default()
        },
    )
    .await;
    let env = Env::new();
    write_config(&env, &server.base, &proxy.base_url());
    let target = env.path("copy.db");
    let target_s = target.to_str().unwrap().to_owned();

    let run = cli(
        &env,
        &server.key,
        &["copy", "--from", "flaky", "--to", &target_s],
    )
    .fails_with(6);
    assert!(
        run.stderr.contains("stopped after 100 new links"),
        "{}",
        run.stderr
    );
    assert_eq!(
        local_links(&env, &target).len(),
        100,
        "the first page stays"
    );

    let done = cli(
        &env,
        &server.key,
        &["--json", "copy", "--from", "direct", "--to", &target_s],
    )
    .ok()
    .json();
    assert_eq!(done["links_copied"], 150);
    assert_eq!(done["links_already_there"], 100);
    let here = local_links(&env, &target);
    assert_eq!(here.len(), 250, "every link exactly once");
    let theirs = server_links(&server).await;
    for (alias, link) in &here {
        let source = &theirs[alias];
        assert_eq!(link["url"], source["url"], "{alias}");
        assert_eq!(link["clicks"], source["clicks"], "{alias}: clicks carried");
        assert_eq!(link["tags"], source["tags"], "{alias}: tags carried");
        assert_eq!(
            link["created_at"], source["created_at"],
            "{alias}: date carried"
        );
        assert_eq!(
            link["space"]["name"].as_str(),
            source["space"]["name"].as_str(),
            "{alias}"
        );
    }
    assert_eq!(here["s0"]["space"]["color"], 5);

    // With a filter, only those links: into another file.
    let other = env.path("docs.db");
    let some = cli(
        &env,
        &server.key,
        &[
            "--json",
            "copy",
            "--from",
            "direct",
            "--to",
            other.to_str().unwrap(),
            "--space",
            "Docs",
            "--search",
            "org/1",
            "--by",
            "url",
        ],
    )
    .ok()
    .json();
    let copied = some["links_copied"].as_u64().unwrap();
    let here = local_links(&env, &other);
    assert_eq!(here.len() as u64, copied);
    assert!(
        copied > 0
            && here.keys().all(|a| {
                let n: u32 = a[1..].parse().unwrap();
                n.is_multiple_of(2) && a[1..].starts_with('1')
            }),
        "{here:?}"
    );
}

#[test]
fn copy_refuses_what_it_cannot_do() {
    let env = Env::new();
    env.run(&["links", "create", "https://a.example", "--alias", "a"])
        .ok();
    let db = env.db.to_str().unwrap().to_owned();
    env.run(&["copy", "--from", &db, "--to", &db]).fails_with(2);
    let run = env
        .run(&["copy", "--from", "nowhere", "--to", &db])
        .fails_with(9);
    assert!(run.stderr.contains("no such profile"), "{}", run.stderr);

    // A link on a domain the target lacks: nothing is copied.
    env.run(&["domains", "add", "sho.rt"]).ok();
    env.run(&[
        "links",
        "create",
        "https://b.example",
        "--alias",
        "b",
        "--domain",
        "sho.rt",
    ])
    .ok();
    let target = env.path("t.db");
    let run = env
        .run(&["copy", "--from", &db, "--to", target.to_str().unwrap()])
        .fails_with(3);
    assert!(run.stderr.contains("sho.rt (1 link)"), "{}", run.stderr);
    assert!(!target.exists() || local_links(&env, &target).is_empty());

    // An alias taken there by another link: fail (nothing), skip or rename.
    env.run_on(&target, &["domains", "add", "sho.rt"]).ok();
    env.run_on(
        &target,
        &["links", "create", "https://other.example", "--alias", "a"],
    )
    .ok();
    env.run(&["copy", "--from", &db, "--to", target.to_str().unwrap()])
        .fails_with(3);
    assert_eq!(local_links(&env, &target).len(), 1);
    let skip = env.json(&[
        "copy",
        "--from",
        &db,
        "--to",
        target.to_str().unwrap(),
        "--on-conflict",
        "skip",
    ]);
    assert_eq!(
        (
            skip["links_copied"].as_u64(),
            skip["links_skipped"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let rename = env.json(&[
        "copy",
        "--from",
        &db,
        "--to",
        target.to_str().unwrap(),
        "--on-conflict",
        "rename",
    ]);
    assert_eq!(rename["renamed"][0]["to"], "a-2");
    // Renamed once, passed over after.
    let again = env.json(&[
        "copy",
        "--from",
        &db,
        "--to",
        target.to_str().unwrap(),
        "--on-conflict",
        "rename",
    ]);
    assert_eq!(again["links_copied"], 0);
    assert_eq!(again["links_already_there"], 2);
}

/// A linkdeck export of `n` links carrying titles, click totals and creation dates, every third
/// in space Launch, every fifth with an hourly history over June 2029 (with countries,
/// platforms, browsers, referrers and languages).
fn seed(n: usize) -> String {
    let links: Vec<String> = (0..n)
        .map(|i| {
            let mut link = json!({
                "url": format!("https://example.com/{i}?q=ü"),
                "alias": format!("l{i}"),
                "title": format!("Page {i}"),
                "clicks": 100 + i,
                "created_at": format!("2029-0{}-{:02}T08:30:00Z", 1 + i % 5, 1 + i % 28),
            });
            if i.is_multiple_of(3) {
                link["space"] = json!("Launch");
            }
            if i.is_multiple_of(4) {
                link["tags"] = json!(["Promo", format!("t{}", i % 3)]);
            }
            if i.is_multiple_of(5) {
                link["traffic"] = json!([
                    {"hour": format!("2029-06-01T{:02}:00:00Z", i % 24), "clicks": 3,
                     "country": {"DE": 2, "US": 1}, "platform": {"iOS": 3},
                     "referrer": {"t.co": 2}},
                    {"hour": "2029-06-02T23:00:00Z", "clicks": 1 + i % 4,
                     "browser": {"Firefox": 1}, "language": {"de": 1}},
                    {"hour": format!("2029-06-{:02}T12:00:00Z", 3 + i % 20), "clicks": 2,
                     "country": {"FR": 2}},
                ]);
            }
            link.to_string()
        })
        .collect();
    format!(
        "{{\"version\": 1, \"spaces\": [{{\"name\": \"Launch\", \"color\": \"green\"}}], \"links\": [\n{}\n]}}",
        links.join(",\n")
    )
}

/// The clicks of link `i`'s history in [`seed`].
fn seed_history_clicks(i: usize) -> u64 {
    if i.is_multiple_of(5) {
        3 + (1 + i % 4) as u64 + 2
    } else {
        0
    }
}

/// Runs the binary on `at` (`--db PATH`, or `--profile NAME`) with the server's key.
fn on(env: &Env, key: &str, at: &[&str], args: &[&str]) -> Run {
    tokio::task::block_in_place(|| {
        cli_support::run(
            env.bare()
                .env(KEY_VAR, key)
                .arg("--config")
                .arg(&env.config)
                .args(at)
                .args(args),
        )
    })
}

/// A stats record as a user compares it between two places: without the ids, which differ.
fn without_ids(printed: Value) -> Value {
    let mut record = printed.get("data").cloned().unwrap_or(printed);
    let fields = record.as_object_mut().unwrap();
    fields.remove("id");
    if let Some(top) = fields.get_mut("top_links").and_then(Value::as_array_mut) {
        for link in top {
            link.as_object_mut().unwrap().remove("id");
        }
    }
    record
}

/// What `linkdeck stats` prints of a link (or, without one, of every link) at `at`: June 2029
/// day by day, and its first two days hour by hour.
fn stats(env: &Env, key: &str, at: &[&str], link: Option<&str>) -> Value {
    let ask = |from: &str, to: &str| {
        let mut args = vec!["--json", "stats"];
        args.extend(link);
        args.extend(["--from", from, "--to", to, "--top", "100"]);
        without_ids(on(env, key, at, &args).ok().json())
    };
    json!({"days": ask("2029-06-01", "2029-06-30"), "hours": ask("2029-06-01", "2029-06-02")})
}

/// Every link at `at` as `links list` prints it, by alias: what a copy must carry of each.
fn carried(env: &Env, key: &str, at: &[&str]) -> BTreeMap<String, Value> {
    let list = on(env, key, at, &["--json", "links", "list", "--all"])
        .ok()
        .json();
    let mut all = BTreeMap::new();
    for l in list.as_array().unwrap() {
        let alias = l["alias"].as_str().unwrap().to_owned();
        let kept = json!({
            "url": l["url"], "title": l["title"], "clicks": l["clicks"],
            "created_at": l["created_at"], "space": l["space"]["name"],
        });
        assert!(all.insert(alias.clone(), kept).is_none(), "{alias} twice");
    }
    all
}

/// The same links and the same statistics at both places: each link's title, clicks, creation
/// date and space, and, hour by hour and day by day, every link's traffic and the account's.
fn assert_same_links_and_traffic(
    env: &Env,
    key: &str,
    source: &[&str],
    target: &[&str],
    with_history: &[String],
) {
    let (theirs, ours) = (carried(env, key, source), carried(env, key, target));
    assert_eq!(ours.len(), theirs.len(), "every link exactly once");
    assert_eq!(ours, theirs, "titles, click totals, creation dates, spaces");
    for alias in with_history {
        assert_eq!(
            stats(env, key, target, Some(alias)),
            stats(env, key, source, Some(alias)),
            "{alias}: its traffic, hour by hour"
        );
    }
    assert_eq!(
        stats(env, key, target, None),
        stats(env, key, source, None),
        "the account's traffic"
    );
}

/// Local database → `linkdeck serve` on `store` through its own import, breaking after the
/// first page; the rerun finishes it, and a third run finds everything there.
async fn a_local_database_into_a_linkdeck_server_carries_everything(store: Store) {
    let server = TestServer::start_on(
        store,
        ServeOptions {
            api_rate_limit: 0,
            ..ServeOptions::default()
        },
    )
    .await;
    // The second page's import is written, but its answer is lost; the rest refused.
    let proxy = CountingProxy::breaking(
        &server.base,
        Breaks {
            imports: Some(1),
            ..Breaks::default()
        },
    )
    .await;
    let env = Env::new();
    write_config(&env, &server.base, &proxy.base_url());
    let file = env.write("seed.json", &seed(250));
    env.run(&["import", file.to_str().unwrap()]).ok();
    let db = env.db.to_str().unwrap().to_owned();
    let key = &server.key;

    let run = cli(&env, key, &["copy", "--from", &db, "--to", "flaky"]).fails_with(6);
    assert!(
        run.stderr.contains("stopped after 100 new links")
            && run.stderr.contains("run the same command again"),
        "{}",
        run.stderr
    );
    assert_eq!(proxy.imports(), 2, "one request a page");
    assert_eq!(
        server_links(&server).await.len(),
        200,
        "the lost page is there"
    );

    proxy.reset();
    let done = cli(
        &env,
        key,
        &["--json", "copy", "--from", &db, "--to", "flaky"],
    )
    .fails_with(6);
    assert!(
        done.stderr.contains("503"),
        "still refused: {}",
        done.stderr
    );
    let done = cli(
        &env,
        key,
        &["--json", "copy", "--from", &db, "--to", "direct"],
    )
    .ok()
    .json();
    assert_eq!(done["links_copied"], 50, "{done}");
    assert_eq!(done["links_already_there"], 200);
    assert_eq!(
        done["clicks_copied"],
        (200..250).map(seed_history_clicks).sum::<u64>(),
        "only the new links bring their history"
    );
    assert_eq!(done["not_carried"], Value::Null, "{done}");

    let with_history: Vec<String> = (0..250)
        .filter(|i: &usize| i.is_multiple_of(5))
        .step_by(5)
        .map(|i| format!("l{i}"))
        .chain(["l200".into(), "l245".into()])
        .collect();
    let (local, remote) = (["--db", db.as_str()], ["--profile", "direct"]);
    assert_same_links_and_traffic(&env, key, &local, &remote, &with_history);
    let before = stats(&env, key, &remote, None);
    assert!(before["days"]["clicks"].as_u64().unwrap() > 0, "{before}");

    // Nothing is left to do, and nothing is counted twice.
    let again = cli(
        &env,
        key,
        &["--json", "copy", "--from", &db, "--to", "direct"],
    )
    .ok()
    .json();
    assert_eq!(
        (
            again["links_copied"].as_u64(),
            again["links_already_there"].as_u64()
        ),
        (Some(0), Some(250))
    );
    assert_eq!(stats(&env, key, &remote, None), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_database_into_a_linkdeck_server_carries_everything_and_resumes() {
    a_local_database_into_a_linkdeck_server_carries_everything(Store::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_database_into_a_linkdeck_server_on_postgres_carries_everything_and_resumes() {
    let Some(cluster) = pg_cluster::cluster() else {
        return;
    };
    let store = Store::Postgres {
        url: cluster.fresh_database(),
        password: pg_cluster::PASSWORD.into(),
    };
    a_local_database_into_a_linkdeck_server_carries_everything(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linkdeck_server_into_a_local_database_carries_its_traffic_history() {
    let server = TestServer::start_with(ServeOptions {
        api_rate_limit: 0,
        ..ServeOptions::default()
    })
    .await;
    let backend = server.service.for_owner(server.owner_id);
    let rows = (0..250)
        .map(|i| {
            (
                i + 1,
                LinkInput {
                    alias: Some(format!("s{i}")),
                    ..LinkInput::with_url(format!("https://example.org/{i}"))
                },
                (i % 2 == 0).then(|| "Docs".to_owned()),
            )
        })
        .collect();
    let docs = SpaceInput {
        name: Some("Docs".into()),
        color: Some("5".into()),
    };
    backend.import_batch(vec![(0, docs)], rows).await.unwrap();
    // Visits counted by the server's click writer, over hours and days of June 2029.
    let ids: BTreeMap<String, i64> = server_links(&server)
        .await
        .into_iter()
        .map(|(alias, l)| (alias, l["id"].as_i64().unwrap()))
        .collect();
    let june: i64 = "2029-06-01T00:00:00Z"
        .parse::<jiff::Timestamp>()
        .unwrap()
        .as_second();
    let mut visits = Vec::new();
    for i in (0..250).filter(|i: &usize| i.is_multiple_of(7)) {
        for k in 0..(1 + i % 5) {
            visits.push(VisitRow {
                link_id: ids[&format!("s{i}")],
                at: june + (i * 3_600 + k * 86_400 + k * 61) as i64,
                country: Some(["DE", "US", "FR"][k % 3].into()),
                platform: Some(["iOS", "Android"][i % 2].into()),
                browser: k.is_multiple_of(2).then(|| "Safari".into()),
                referrer: Some("news.example".into()),
                language: Some("en".into()),
                address: None,
                rule: None,
            });
        }
    }
    server.service.record_visits(visits).await.unwrap();

    let proxy = CountingProxy::breaking(
        &server.base,
        Breaks {
            list_page: Some(2),
            ..Breaks::default()
        },
    )
    .await;
    let phpshort = CountingProxy::breaking(
        &server.base,
        Breaks {
            v1_only: true,
            ..Breaks::default()
        },
    )
    .await;
    let env = Env::new();
    write_profiles(
        &env,
        &[
            ("direct", &server.base),
            ("flaky", &proxy.base_url()),
            ("phpshort", &phpshort.base_url()),
        ],
    );
    let key = &server.key;
    let target = env.path("copy.db");
    let target_s = target.to_str().unwrap().to_owned();

    cli(&env, key, &["copy", "--from", "flaky", "--to", &target_s]).fails_with(6);
    let done = cli(
        &env,
        key,
        &["--json", "copy", "--from", "direct", "--to", &target_s],
    )
    .ok()
    .json();
    assert_eq!(
        (
            done["links_copied"].as_u64(),
            done["links_already_there"].as_u64()
        ),
        (Some(150), Some(100)),
        "{done}"
    );
    assert_eq!(done["not_carried"], Value::Null, "{done}");
    let with_history: Vec<String> = (0..250)
        .filter(|i: &usize| i.is_multiple_of(7))
        .map(|i| format!("s{i}"))
        .collect();
    let (remote, local) = (["--profile", "direct"], ["--db", target_s.as_str()]);
    assert_same_links_and_traffic(&env, key, &remote, &local, &with_history);
    let before = stats(&env, key, &local, None);
    assert!(before["days"]["clicks"].as_u64().unwrap() > 0, "{before}");
    let again = cli(
        &env,
        key,
        &["--json", "copy", "--from", "direct", "--to", &target_s],
    )
    .ok()
    .json();
    assert_eq!(again["links_copied"], 0);
    assert_eq!(stats(&env, key, &local, None), before, "counted once");

    // From a server with only the v1 API the click totals come, the history cannot.
    let other = env.path("v1.db");
    let v1 = cli(
        &env,
        key,
        &[
            "--json",
            "copy",
            "--from",
            "phpshort",
            "--to",
            other.to_str().unwrap(),
        ],
    )
    .ok()
    .json();
    assert_eq!(v1["links_copied"], 250);
    assert!(
        v1["not_carried"]
            .as_str()
            .unwrap()
            .starts_with("from the server: traffic history (it is not a linkdeck server"),
        "{v1}"
    );
    let theirs = carried(&env, key, &remote);
    let ours = carried(&env, key, &["--db", other.to_str().unwrap()]);
    assert_eq!(ours, theirs, "click totals and the rest");
    let history = stats(&env, key, &["--db", other.to_str().unwrap()], Some("s7"));
    assert_eq!(history["days"]["clicks"], 0, "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_into_a_linkdeck_server_profile_carries_the_history() {
    let server = TestServer::start_with(ServeOptions {
        api_rate_limit: 0,
        ..ServeOptions::default()
    })
    .await;
    let env = Env::new();
    write_config(&env, &server.base, &server.base);
    let key = &server.key;
    let file = env.write("seed.json", &seed(40));
    let file = file.to_str().unwrap();
    env.run(&["import", file]).ok();

    let imported = on(&env, key, &["--profile", "direct"], &["import", file]).ok();
    let expected: u64 = (0..40).map(seed_history_clicks).sum();
    assert!(
        imported.stdout.contains(&format!(
            "imported 40 links and 1 new space from {file} (linkdeck JSON) with {expected} clicks of traffic history"
        )),
        "{}",
        imported.stdout
    );
    assert!(
        !imported.stdout.contains("not carried"),
        "{}",
        imported.stdout
    );
    let with_history: Vec<String> = (0..40).step_by(5).map(|i| format!("l{i}")).collect();
    let db = env.db.to_str().unwrap().to_owned();
    let (local, remote) = (["--db", db.as_str()], ["--profile", "direct"]);
    assert_same_links_and_traffic(&env, key, &local, &remote, &with_history);

    // Run again: the links are there, the history counted once.
    let before = stats(&env, key, &remote, None);
    let again = on(&env, key, &remote, &["--json", "import", file])
        .ok()
        .json();
    assert_eq!(again["links_created"], 0, "{again}");
    assert_eq!(stats(&env, key, &remote, None), before);
}

/// A password cannot travel (only its hash is kept): the summary counts the links that lost
/// theirs in this run, not those passed over as already there.
#[test]
fn lost_passwords_are_counted_only_for_links_written() {
    let env = Env::new();
    env.run(&[
        "links",
        "create",
        "https://secret.example",
        "--alias",
        "secret",
        "--password",
        "hunter22",
    ])
    .ok();
    env.run(&["links", "create", "https://open.example", "--alias", "open"])
        .ok();
    let db = env.db.to_str().unwrap().to_owned();
    let target = env.path("t.db");
    let copy = || env.json(&["copy", "--from", &db, "--to", target.to_str().unwrap()]);
    let first = copy();
    assert_eq!(first["links_copied"], 2);
    assert_eq!(first["passwords_not_copied"], 1);
    let again = copy();
    assert_eq!(again["links_already_there"], 2);
    assert_eq!(again["passwords_not_copied"], 0);
}
