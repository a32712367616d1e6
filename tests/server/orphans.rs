//! Orphan visits: requests no link answers (the root, an unknown alias, any other path) are
//! recorded by the click writer, bounded, and read back through `GET /api/linkdeck/orphans`.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::{TestServer, json};
use linkdeck::server::ServeOptions;

/// The orphan rollups of the last 24 hours, once their total is `total` (the click writer
/// writes in batches).
async fn orphans_once(s: &TestServer, total: u64) -> Value {
    let mut body = Value::Null;
    for _ in 0..200 {
        let (status, _, answer) = json(
            s.api(Method::GET, "/api/linkdeck/orphans?period=24h&limit=100")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        body = answer["data"].clone();
        if body["total"] == total {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("orphan visits never reached {total}: {body}");
}

fn count(list: &Value, value: &str) -> u64 {
    list.as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == value)
        .and_then(|v| v["clicks"].as_u64())
        .unwrap_or(0)
}

#[tokio::test]
async fn the_root_unknown_aliases_and_other_paths_are_recorded_with_their_referrer() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/real"), ("alias", "real")])
        .await;
    assert!(link["id"].is_i64(), "{link}");
    let from = [("referer", "https://ref.example/page?q=1")];
    for path in ["/", "/nope-alias", "/a/b/c?x=1"] {
        let status = s.visit(path, &from).await.status();
        assert!(
            status == StatusCode::NOT_FOUND || status.is_redirection(),
            "{path}: {status}"
        );
    }
    // What is linkdeck's own, a real link and a bot are no orphans.
    for path in [
        "/real",
        "/favicon.ico",
        "/robots.txt",
        "/api/nothing",
        "/real/qr.svg",
    ] {
        s.visit(path, &[]).await;
    }
    s.visit(
        "/bot-path",
        &[(
            "user-agent",
            "Googlebot/2.1 (+http://www.google.com/bot.html)",
        )],
    )
    .await;
    let body = orphans_once(&s, 3).await;
    assert_eq!(count(&body["kinds"], "root"), 1, "{body}");
    assert_eq!(count(&body["kinds"], "unknown_alias"), 1, "{body}");
    assert_eq!(count(&body["kinds"], "other_path"), 1, "{body}");
    for path in ["/", "/nope-alias", "/a/b/c"] {
        assert_eq!(count(&body["paths"], path), 1, "{path}: {body}");
    }
    assert_eq!(count(&body["referrers"], "ref.example"), 3, "{body}");
    let timeline: u64 = body["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["clicks"].as_u64().unwrap())
        .sum();
    assert_eq!(timeline, 3, "{body}");

    // The capability says so; a scope is refused rather than ignored.
    let (_, _, caps) = json(
        s.api(Method::GET, "/api/linkdeck/capabilities")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(caps["data"]["orphan_visits"], true, "{caps}");
    let (status, _, _) = json(
        s.api(Method::GET, "/api/linkdeck/orphans?space=1")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let status = crate::common::client()
        .get(s.url("/api/linkdeck/orphans"))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn hostile_paths_never_fail_the_server() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let huge = format!("/{}", "x".repeat(6_000));
    let paths = [
        huge.as_str(),
        "/%ff%fe%00",
        "/%1b%5b2J%07",
        "/a%0d%0aSet-Cookie:%20x=1",
        "/..%2f..%2fetc%2fpasswd",
        "/%C3%28",
    ];
    let referrer = format!("https://{}.example/", "r".repeat(500));
    for path in paths {
        let status = s.visit(path, &[("referer", &referrer)]).await.status();
        assert!(!status.is_server_error(), "{path}: {status}");
    }
    // A one-segment path whose percent-encoding is not UTF-8 is refused (400) by the router
    // before any handler runs, so it is no orphan visit; the other four are.
    let body = orphans_once(&s, 4).await;
    for p in body["paths"].as_array().unwrap() {
        let p = p["value"].as_str().unwrap();
        assert!(
            p.chars().count() <= 100 && !p.chars().any(char::is_control),
            "{p:?}"
        );
    }
}

#[tokio::test]
async fn a_flood_of_random_paths_keeps_the_path_rows_within_their_bound() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    const N: u64 = 20_000;
    let url = s.url("/");
    let client = crate::common::client();
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..32u64 {
        let (client, url) = (client.clone(), url.clone());
        tasks.spawn(async move {
            let mut i = worker;
            while i < N {
                let status = client
                    .get(format!(
                        "{url}flood/{i:x}/{}",
                        i.wrapping_mul(2_654_435_761)
                    ))
                    .send()
                    .await
                    .unwrap()
                    .status();
                assert!(!status.is_server_error(), "{status}");
                i += 32;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    let body = orphans_once(&s, N).await;
    let rows = s.orphan_path_rows().await;
    assert!(
        rows <= linkdeck::domain::ORPHAN_VALUES_PER_DAY as i64 * 2 + 2,
        "{rows} path rows"
    );
    // Past the bound every visit is still counted, as "other".
    let listed: u64 = body["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["clicks"].as_u64().unwrap())
        .sum();
    assert_eq!(listed, N, "{body}");
    assert!(count(&body["paths"], "other") >= N - 200, "{body}");
}
