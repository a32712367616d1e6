//! `linkdeck copy` between a temporary database and a real `linkdeck serve`, both ways, run as
//! the real binary. The server breaks part way (behind a proxy that loses an answer and then
//! refuses, or refuses a list page); running the same copy again finishes it, and every link is
//! there exactly once.

mod cli_support;
mod common;

#[path = "common/counting_proxy.rs"]
mod counting_proxy;

use std::collections::BTreeMap;

use cli_support::{Env, Run};
use common::TestServer;
use counting_proxy::{Breaks, CountingProxy};
use linkdeck::domain::{LinkInput, SpaceInput};
use reqwest::Method;
use serde_json::Value;

const KEY_VAR: &str = "LINKDECK_COPY_TEST_KEY";

/// Profiles `direct` (the server) and `flaky` (the server behind `proxy`).
fn write_config(env: &Env, server: &str, proxy: &str) {
    std::fs::write(
        &env.config,
        format!(
            "[profiles.direct]\nbackend = \"remote\"\nbase_url = \"{server}\"\napi_key_env = \"{KEY_VAR}\"\ntimezone = \"UTC\"\n\n\
             [profiles.flaky]\nbackend = \"remote\"\nbase_url = \"{proxy}\"\napi_key_env = \"{KEY_VAR}\"\ntimezone = \"UTC\"\n"
        ),
    )
    .unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_database_into_a_server_resumes_after_the_server_fails() {
    let server = TestServer::start().await;
    let proxy = CountingProxy::breaking(
        &server.base,
        Breaks {
            creates: Some(10),
            ..Breaks::default()
        },
    )
    .await;
    let env = Env::new();
    write_config(&env, &server.base, &proxy.base_url());
    let links: Vec<String> = (0..30)
        .map(|i| {
            let space = if i % 3 == 0 {
                r#", "space": "Launch""#
            } else {
                ""
            };
            format!(
                r#"{{"url": "https://example.com/{i}?q=ü", "alias": "l{i}", "clicks": {i}{space}}}"#
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
    assert_eq!(server_links(&server).await.len(), 11);

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
    let there = server_links(&server).await;
    assert_eq!(there.len(), 30, "every link exactly once");
    for i in 0..30 {
        let link = &there[&format!("l{i}")];
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
        .service
        .db()
        .unwrap()
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
