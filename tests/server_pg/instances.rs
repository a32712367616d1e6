//! Two `linkdeck serve` processes on one PostgreSQL database, as behind a load balancer.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::{client, location};
use crate::{Database, Sandbox, Server, database};

/// Follows `path` on `server` as a browser would (without following the redirect).
async fn visit(http: &reqwest::Client, server: &Server, path: &str) -> reqwest::Response {
    http.get(server.url(path)).send().await.unwrap()
}

/// A stats record of the API, with `key`.
async fn stats(http: &reqwest::Client, server: &Server, key: &str, path: &str) -> Value {
    let response = http
        .get(server.url(path))
        .bearer_auth(key)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.unwrap()
}

/// A key for the default owner, made by the CLI, and that owner's id.
async fn key(db: &Database, sandbox: &Sandbox) -> (String, linkdeck::domain::Id) {
    let key = sandbox.run(&db.url, &["keys", "create", "--name", "tests"]);
    (key.trim().to_owned(), db.owner("default").await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_count_a_click_limit_exactly_and_lose_nothing_when_stopped() {
    let Some(db) = database().await else { return };
    let sandbox = Sandbox::default();
    let (key, owner) = key(&db, &sandbox).await;
    let limited = db
        .link(owner, "hundred", "https://example.com/limited", 100, &[])
        .await;
    let open = db
        .link(owner, "open", "https://example.com/open", 0, &[])
        .await;
    let servers = [sandbox.serve(&db.url), sandbox.serve(&db.url)];

    // 16 visitors at once, half on each server, 25 visits each to both links.
    let http = client();
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let (http, base) = (http.clone(), servers[i % 2].base.clone());
            tokio::spawn(async move {
                let (mut followed, mut expired) = (0, 0);
                for _ in 0..25 {
                    let r = http.get(format!("{base}/hundred")).send().await.unwrap();
                    match r.status() {
                        StatusCode::MOVED_PERMANENTLY => {
                            assert_eq!(location(&r), "https://example.com/limited");
                            followed += 1;
                        }
                        StatusCode::GONE => expired += 1,
                        other => panic!("/hundred answered {other}"),
                    }
                    let r = http.get(format!("{base}/open")).send().await.unwrap();
                    assert_eq!(r.status(), StatusCode::MOVED_PERMANENTLY);
                }
                (followed, expired)
            })
        })
        .collect();
    let (mut followed, mut expired) = (0, 0);
    for task in tasks {
        let (f, e) = task.await.unwrap();
        followed += f;
        expired += e;
    }
    assert_eq!(followed, 100, "the limit holds across both servers");
    assert_eq!(expired, 300, "every visit past it gets the expired answer");

    // Stopped as a service manager stops them: every visit they counted is written.
    for server in servers {
        let log = server.stop();
        assert!(!log.contains(&key), "the key must never reach the log");
        assert!(!log.contains("WARN") && !log.contains("ERROR"), "{log}");
    }
    assert_eq!(
        db.clicks(limited).await,
        (100, 100),
        "clicks and logged visits"
    );
    assert_eq!(
        db.clicks(open).await,
        (400, 400),
        "clicks and logged visits"
    );

    // What statistics say agrees, through a server started afterwards, with the CLI's key.
    let third = sandbox.serve(&db.url);
    let all = |id: i64| format!("/api/v1/stats/{id}?period=all");
    let limited_stats = stats(&http, &third, &key, &all(limited)).await;
    assert_eq!(limited_stats["data"]["clicks"], 100, "{limited_stats}");
    let open_stats = stats(&http, &third, &key, &all(open)).await;
    assert_eq!(open_stats["data"]["clicks"], 400, "{open_stats}");
    let account = stats(&http, &third, &key, "/api/v1/stats?period=all").await;
    assert_eq!(account["data"]["clicks"], 500, "{account}");
    let top: Vec<(i64, u64)> = account["data"]["top_links"]
        .as_array()
        .unwrap_or_else(|| panic!("no top links in {account}"))
        .iter()
        .map(|l| (l["id"].as_i64().unwrap(), l["clicks"].as_u64().unwrap()))
        .collect();
    assert_eq!(top, [(open, 400), (limited, 100)]);
    third.stop();
}

#[tokio::test]
async fn rotation_takes_turns_across_servers() {
    let Some(db) = database().await else { return };
    let sandbox = Sandbox::default();
    let (_, owner) = key(&db, &sandbox).await;
    let urls = [
        "https://r0.example/",
        "https://r1.example/",
        "https://r2.example/",
    ];
    let link = db
        .link(owner, "turns", "https://example.com/main", 0, &urls)
        .await;
    let servers = [sandbox.serve(&db.url), sandbox.serve(&db.url)];
    let http = client();
    let mut served = Vec::new();
    for i in 0..9 {
        let r = visit(&http, &servers[i % 2], "/turns").await;
        assert_eq!(r.status(), StatusCode::MOVED_PERMANENTLY);
        served.push(location(&r));
    }
    let want: Vec<String> = urls.iter().cycle().take(9).map(|u| u.to_string()).collect();
    assert_eq!(
        served, want,
        "one cycle, in order, whichever server answers"
    );
    for server in servers {
        server.stop();
    }
    assert_eq!(db.clicks(link).await, (9, 9));
}

#[tokio::test]
async fn an_edit_elsewhere_is_served_by_the_other_server_within_a_second() {
    let Some(db) = database().await else { return };
    let sandbox = Sandbox::default();
    let (key, owner) = key(&db, &sandbox).await;
    let id = db
        .link(owner, "moving", "https://example.com/before", 0, &[])
        .await;
    let (a, b) = (sandbox.serve(&db.url), sandbox.serve(&db.url));
    let http = client();
    // Looked up once, so the server has it cached.
    let r = visit(&http, &b, "/moving").await;
    assert_eq!(location(&r), "https://example.com/before");

    // Edited through the other server's API, then through the CLI: each edit is served by `b`
    // within a second.
    let r = http
        .put(a.url(&format!("/api/v1/links/{id}")))
        .bearer_auth(&key)
        .header("accept", "application/json")
        .form(&[("url", "https://example.com/through-the-api")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
    served_within_a_second(&http, &b, "/moving", "https://example.com/through-the-api").await;
    sandbox.run(
        &db.url,
        &[
            "links",
            "update",
            "moving",
            "--url",
            "https://example.com/through-the-cli",
        ],
    );
    served_within_a_second(&http, &b, "/moving", "https://example.com/through-the-cli").await;
    a.stop();
    b.stop();
}

/// Visits `path` on `server` until it redirects to `url`; fails if that takes over a second.
async fn served_within_a_second(http: &reqwest::Client, server: &Server, path: &str, url: &str) {
    let edited = tokio::time::Instant::now();
    let mut seen = Vec::new();
    loop {
        let r = visit(http, server, path).await;
        seen.push(location(&r));
        if seen.last().is_some_and(|l| l == url) {
            return;
        }
        assert!(
            edited.elapsed() < Duration::from_secs(1),
            "the edit was not served within a second: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_says_whether_the_database_answers() {
    let Some(db) = database().await else { return };
    let sandbox = Sandbox::default();
    let server = sandbox.serve(&db.url);
    let http = client();
    let r = http.get(server.url("/api/health")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "ok");
    // The database goes away under the server (its connections cut): a load balancer must
    // hear it, as JSON, not a hang or an HTML page. (The reason goes to the server's log: it
    // names the database, which strangers need not know.)
    let name = db.url.rsplit('/').next().unwrap().to_owned();
    let admin = db.admin().await;
    admin
        .execute(&format!("DROP DATABASE \"{name}\" WITH (FORCE)"), &[])
        .await
        .unwrap();
    let r = http.get(server.url("/api/health")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"], 503, "{body}");
    let log = server.stop();
    assert!(log.contains("PostgreSQL"), "{log}");
}

#[tokio::test]
async fn keys_made_by_the_cli_open_the_api_until_revoked() {
    let Some(db) = database().await else { return };
    let sandbox = Sandbox::default();
    let (key, _) = key(&db, &sandbox).await;
    let server = sandbox.serve(&db.url);
    let http = client();
    let account = |key: String| {
        http.get(server.url("/api/v1/stats"))
            .bearer_auth(key)
            .header("accept", "application/json")
            .send()
    };
    assert_eq!(account(key.clone()).await.unwrap().status(), StatusCode::OK);
    // The last character changed (a random key may end in `x` already).
    let last = if key.ends_with('x') { 'y' } else { 'x' };
    let wrong = format!("{}{last}", &key[..key.len() - 1]);
    assert_eq!(
        account(wrong).await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );

    // Its use is recorded (in the background, so looked for until it shows).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let id = loop {
        let listed: Value =
            serde_json::from_str(&sandbox.run(&db.url, &["--json", "keys", "list"])).unwrap();
        if listed[0]["last_used_at"].is_string() {
            break listed[0]["id"].as_i64().unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the key's use was never recorded: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let revoked = sandbox.run(&db.url, &["keys", "revoke", &id.to_string()]);
    assert!(revoked.contains("revoked"), "{revoked}");
    assert_eq!(
        account(key).await.unwrap().status(),
        StatusCode::UNAUTHORIZED,
        "a revoked key stops working on a running server"
    );
    server.stop();
}
