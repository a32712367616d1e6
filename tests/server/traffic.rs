//! Traffic end to end: visits sent through a real `linkdeck serve` (a trusted geo header, real
//! browsers' User-Agents, referrers, languages) at fixed clock times across a daylight-saving
//! change, read back through the stats API for a link, a space, a domain and the account; the
//! stats paths' owner isolation and errors; the public page's cache and rate limit; what a
//! flood of huge referrers leaves on disk; a database that cannot be written; the raw log's
//! pruning.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::{TestServer, json};
use linkdeck::backend::Backend;
use linkdeck::server::ServeOptions;

const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const WINDOWS_CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36";
const MAC_FIREFOX: &str =
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.3; rv:123.0) Gecko/20100101 Firefox/123.0";
const ANDROID: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Mobile Safari/537.36";

fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

fn quick() -> ServeOptions {
    ServeOptions {
        geo_header: Some("CF-IPCountry".into()),
        flush_interval: Duration::from_millis(10),
        api_rate_limit: 0,
        ..ServeOptions::default()
    }
}

async fn get(s: &TestServer, path: &str) -> (StatusCode, Value) {
    let (status, _, body) = json(s.api(Method::GET, path).send().await.unwrap()).await;
    (status, body)
}

/// `value → clicks` of one breakdown of a stats record.
fn values(record: &Value, dimension: &str) -> Vec<(Value, u64)> {
    record["data"][dimension]["top"]
        .as_array()
        .unwrap_or_else(|| panic!("no {dimension} in {record}"))
        .iter()
        .map(|v| (v["value"].clone(), v["clicks"].as_u64().unwrap()))
        .collect()
}

fn timeline(record: &Value) -> Vec<u64> {
    record["data"]["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["clicks"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn visits_through_serve_are_counted_in_every_scope_across_a_daylight_saving_change() {
    let Some(mut s) = crate::serve(quick()).await else {
        return;
    };
    let space = s
        .api(Method::POST, "/api/v1/spaces")
        .form(&[("name", "Launch"), ("color", "3")]);
    let (_, _, space) = json(space.send().await.unwrap()).await;
    let space = id(&space["data"]);
    let domain = s
        .service
        .for_owner(s.owner_id)
        .add_domain("sho.rt")
        .await
        .unwrap();
    let spring = s
        .create_link(&[
            ("url", "https://shop.example.com/spring"),
            ("alias", "spring"),
            ("space", &space.to_string()),
            ("domain", &domain.id.to_string()),
        ])
        .await;
    let _docs = s
        .create_link(&[
            ("url", "https://docs.example.com/"),
            ("alias", "docs"),
            ("space", &space.to_string()),
        ])
        .await;
    let other = s
        .create_link(&[("url", "https://example.org/"), ("alias", "other")])
        .await;

    // (clock, path, host, country, user agent, referrer, language)
    let visits = [
        // Sat Mar 7, 23:30 EST.
        (
            "2026-03-08T04:30:00Z",
            "/spring",
            "sho.rt",
            "DE",
            IPHONE,
            "https://t.co/abc",
            "de-DE,de;q=0.9",
        ),
        // Sun Mar 8, 01:59 EST — and a minute later 03:00 EDT.
        (
            "2026-03-08T06:59:00Z",
            "/spring",
            "sho.rt",
            "DE",
            WINDOWS_CHROME,
            "https://news.ycombinator.com/item?id=1",
            "de",
        ),
        (
            "2026-03-08T07:00:00Z",
            "/spring",
            "sho.rt",
            "US",
            MAC_FIREFOX,
            "",
            "en-US,en;q=0.8",
        ),
        // Sun Mar 8, 23:30 EDT: Monday in UTC.
        (
            "2026-03-09T03:30:00Z",
            "/spring",
            "sho.rt",
            "FR",
            ANDROID,
            "https://www.google.com/search?q=x",
            "fr-FR",
        ),
        (
            "2026-03-09T14:00:00Z",
            "/docs",
            "127.0.0.1",
            "US",
            MAC_FIREFOX,
            "https://t.co/xyz",
            "en",
        ),
        (
            "2026-03-10T15:00:00Z",
            "/other",
            "127.0.0.1",
            "JP",
            IPHONE,
            "",
            "ja",
        ),
    ];
    for (at, path, host, country, ua, referrer, language) in visits {
        s.clock.set(at.parse().unwrap());
        let mut headers = vec![
            ("host", host),
            ("cf-ipcountry", country),
            ("user-agent", ua),
            ("accept-language", language),
        ];
        if !referrer.is_empty() {
            headers.push(("referer", referrer));
        }
        let response = s.visit(path, &headers).await;
        assert_eq!(
            response.status(),
            StatusCode::MOVED_PERMANENTLY,
            "{path} at {at}"
        );
    }
    // A bot is not a visit.
    s.visit(
        "/spring",
        &[
            ("host", "sho.rt"),
            (
                "user-agent",
                "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            ),
        ],
    )
    .await;
    s.wait_for_clicks(id(&other), 1).await;
    s.wait_for_clicks(id(&spring), 4).await;
    s.clock.set("2026-03-10T16:00:00Z".parse().unwrap());

    let zone = "timezone=America%2FNew_York";
    let (status, link) = get(
        &s,
        &format!(
            "/api/v1/stats/{}?from=2026-03-07&to=2026-03-09&{zone}",
            id(&spring)
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{link}");
    assert_eq!(link["data"]["clicks"], 4);
    assert_eq!(link["data"]["from"], "2026-03-07");
    assert_eq!(link["data"]["starts_at"], "2026-03-07T05:00:00Z");
    assert_eq!(link["data"]["ends_at"], "2026-03-10T04:00:00Z");
    assert_eq!(timeline(&link), [1, 3, 0], "Sat, Sun (23 hours), Mon");
    assert_eq!(
        values(&link, "country"),
        [("DE".into(), 2), ("FR".into(), 1), ("US".into(), 1)]
    );
    assert_eq!(
        values(&link, "platform"),
        [
            ("Android".into(), 1),
            ("OS X".into(), 1),
            ("Windows".into(), 1),
            ("iOS".into(), 1)
        ]
    );
    assert_eq!(values(&link, "browser")[0], ("Chrome".into(), 2));
    assert_eq!(
        values(&link, "referrer"),
        [
            (Value::Null, 1),
            ("news.ycombinator.com".into(), 1),
            ("t.co".into(), 1),
            ("www.google.com".into(), 1)
        ]
    );
    assert_eq!(
        values(&link, "language"),
        [("de".into(), 2), ("en".into(), 1), ("fr".into(), 1)]
    );

    // Sunday alone: 23 hourly buckets, each visit in the hour it fell in.
    let (_, sunday) = get(
        &s,
        &format!(
            "/api/v1/stats/{}?from=2026-03-08&to=2026-03-08&name=clicks&{zone}",
            id(&spring)
        ),
    )
    .await;
    let hours = timeline(&sunday);
    assert_eq!(hours.len(), 23);
    assert_eq!((hours[1], hours[2], hours[23 - 1]), (1, 1, 1));
    assert_eq!(sunday["data"]["previous_clicks"], 1, "Saturday");
    assert!(
        sunday["data"].get("country").is_none(),
        "only clicks asked for"
    );

    let week = format!("period=7d&{zone}");
    let (_, space_stats) = get(&s, &format!("/api/v1/stats?space={space}&{week}")).await;
    assert_eq!(space_stats["data"]["clicks"], 5);
    assert_eq!(space_stats["data"]["top_links"][0]["alias"], "spring");
    assert_eq!(space_stats["data"]["top_links"][1]["clicks"], 1);
    let (_, domain_stats) = get(&s, &format!("/api/v1/stats?domain={}&{week}", domain.id)).await;
    assert_eq!(domain_stats["data"]["clicks"], 4);
    let (_, account) = get(&s, &format!("/api/v1/stats?{week}")).await;
    assert_eq!(account["data"]["clicks"], 6);
    assert_eq!(timeline(&account), [0, 0, 0, 1, 3, 1, 1]);
    assert_eq!(
        values(&account, "country")[..2],
        [("DE".into(), 2), ("US".into(), 2)],
        "ties by value"
    );
    let top = account["data"]["top_links"].as_array().unwrap();
    assert_eq!(top.len(), 3);

    // The CLI's figures come from the same answers: through the remote client.
    let (base, key, home) = (s.base.clone(), s.key.clone(), s.dir.path().to_owned());
    // The server answers on this test's runtime: the command runs beside it.
    let cli = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("linkdeck")
            .unwrap()
            .args([
                "--remote",
                &base,
                "--api-key-env",
                "I12_KEY",
                "stats",
                "spring",
            ])
            .args(["--from", "2026-03-07", "--to", "2026-03-09", "--json"])
            .env("I12_KEY", key)
            .env("TZ", "America/New_York")
            .env("XDG_CONFIG_HOME", home)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let printed: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(printed["clicks"], 4);
    assert_eq!(
        printed["timezone"], "America/New_York",
        "asked in the profile's zone"
    );
    assert_eq!(printed["starts_at"], "2026-03-07T05:00:00Z");
    s.stop().await;
}

#[tokio::test]
async fn every_stats_path_keeps_owners_apart_and_names_bad_parameters() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let mine = s
        .create_link(&[("url", "https://example.com/m"), ("alias", "mine")])
        .await;
    s.visit("/mine", &[]).await;
    s.wait_for_clicks(id(&mine), 1).await;
    let (_, their_key) = s.other_owner("mallory").await;
    let theirs = |path: &str| {
        let request = s.api_as(&their_key, Method::GET, path);
        async move { json(request.send().await.unwrap()).await }
    };
    let space = s
        .api(Method::POST, "/api/v1/spaces")
        .form(&[("name", "Mine"), ("color", "1")])
        .send()
        .await
        .unwrap();
    let space = id(&json(space).await.2["data"]);
    let domain = s
        .service
        .for_owner(s.owner_id)
        .add_domain("mine.example")
        .await
        .unwrap();
    for path in [
        format!("/api/v1/stats/{}", id(&mine)),
        format!("/api/v1/stats?space={space}"),
        format!("/api/v1/stats?domain={}", domain.id),
        "/api/v1/stats/999999".to_owned(),
    ] {
        let (status, _, body) = theirs(&path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["message"], "Resource not found.");
    }
    let (status, _, body) = theirs("/api/v1/stats").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["data"]["clicks"], 0, "none of alice's clicks");
    let (status, _, body) = json(
        s.client
            .get(s.url("/api/v1/stats"))
            .header("accept", "application/json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("Unauthenticated."))
    );

    let (status, body) = get(
        &s,
        "/api/v1/stats?from=2026-02-30&period=7d&name=city&limit=500&timezone=Moon%2FBase&space=1&domain=2",
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let fields: Vec<&String> = body["message"].as_object().unwrap().keys().collect();
    assert_eq!(
        fields,
        ["domain", "from", "limit", "name", "period", "timezone"]
    );
    let (status, body) = get(&s, &format!("/api/v1/stats/{}?space=1", id(&mine))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // A tag: one of them, by the tag rules.
    for (query, field) in [("tag=a%2Cb", "tag"), ("tag=promo&space=1", "tag")] {
        let (status, body) = get(&s, &format!("/api/v1/stats?{query}")).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {body}");
        assert!(body["message"].get(field).is_some(), "{query}: {body}");
    }
    let (status, body) = get(&s, "/api/v1/stats?tag=nosuch").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = get(&s, "/api/v1/stats/abc").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_public_page_is_cached_briefly_and_rate_limited() {
    let Some(s) = crate::serve(ServeOptions {
        stats_cache: Duration::from_secs(600),
        api_rate_limit: 4,
        flush_interval: Duration::from_millis(10),
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/p"),
            ("alias", "pub"),
            ("public", "1"),
        ])
        .await;
    s.visit("/pub", &[]).await;
    s.wait_for_clicks(id(&link), 1).await;
    let page = || {
        s.client
            .get(s.url("/pub/stats"))
            .header("accept", "application/json")
            .send()
    };
    let (status, _, first) = json(page().await.unwrap()).await;
    assert_eq!(
        (status, &first["data"]["clicks"]),
        (StatusCode::OK, &Value::from(1))
    );
    assert!(
        first["data"].get("id").is_none(),
        "no record ids for visitors"
    );
    s.visit("/pub", &[]).await;
    s.wait_for_clicks(id(&link), 2).await;
    let (_, _, second) = json(page().await.unwrap()).await;
    assert_eq!(second["data"]["clicks"], 1, "the cached answer");
    assert_eq!(
        second["data"]["all_clicks"], 2,
        "the link's own count is always current"
    );
    // Two more allowed this minute, then refused, in the page's own words or as JSON.
    page().await.unwrap();
    let html = s.client.get(s.url("/pub/stats")).send().await.unwrap();
    assert_eq!(html.status(), StatusCode::OK);
    let refused = page().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    let (_, _, body) = json(refused).await;
    assert_eq!(body["message"], "Too Many Attempts.");
}

#[tokio::test]
async fn huge_referrers_leave_a_host_or_other_and_the_database_small() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/r"),
            ("alias", "r"),
            ("public", "1"),
        ])
        .await;
    let before = s.stored_bytes().await;
    // 8 KiB each, the most a header may hold.
    for i in 0..200 {
        let prefix = format!("https://site{i}.example/");
        let referrer = format!("{prefix}{}", "p".repeat(8 * 1024 - prefix.len()));
        s.visit("/r", &[("referer", &referrer)]).await;
    }
    // 400 KB names: the host itself is longer than any DNS name.
    let host = "h".repeat(400 * 1024);
    let mut answered = 0;
    for _ in 0..5 {
        let referrer = format!("https://{host}.example/");
        let response = s
            .client
            .get(s.url("/r"))
            .header("referer", referrer)
            .header("user-agent", WINDOWS_CHROME)
            .send()
            .await;
        // Refused for its size, or counted with the host bounded: never stored whole.
        if let Ok(r) = response {
            answered += 1;
            assert!(
                r.status().is_redirection() || r.status().is_client_error(),
                "{}",
                r.status()
            );
        }
    }
    assert_eq!(answered, 5, "the server kept answering");
    s.wait_for_clicks(id(&link), 200).await;
    let grown = s.stored_bytes().await.saturating_sub(before);
    // 205 referrers of 8–400 KB are 10 MB of headers; what stays is a host name each.
    assert!(grown < 256 * 1024, "the database grew by {grown} bytes");
    let visits = s.visits(id(&link)).await;
    assert!(
        visits
            .iter()
            .all(|v| v.2.as_deref().is_some_and(|r| r.len() <= 253))
    );
    assert!(
        visits
            .iter()
            .any(|v| v.2.as_deref() == Some("site7.example"))
    );
    let (_, _, page) = json(
        s.client
            .get(s.url("/r/stats?period=24h"))
            .header("accept", "application/json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    let text = page.to_string();
    assert!(
        text.len() < 16 * 1024,
        "the stats page is {} bytes",
        text.len()
    );
}

#[tokio::test]
async fn clicks_stay_exact_while_the_database_cannot_be_written() {
    let Some(mut s) = crate::serve(ServeOptions {
        flush_interval: Duration::from_millis(10),
        pending_log_max: 5,
        ..ServeOptions::default()
    })
    .await
    else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/f"), ("alias", "full")])
        .await;
    s.visit("/full", &[]).await;
    s.wait_for_clicks(id(&link), 1).await;
    // Another program holds the database's write lock longer than the writer waits for it,
    // as a full disk would refuse every write.
    let held = s.hold_writes().await;
    for i in 0..40 {
        let referrer = format!("https://r{i}.example/");
        let response = s.visit("/full", &[("referer", &referrer)]).await;
        assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
        if i == 19 {
            // Past the writer's wait: its first try has failed and it holds the visits.
            tokio::time::sleep(Duration::from_secs(6)).await;
        }
    }
    assert_eq!(
        s.stored_clicks(id(&link)).await.0,
        1,
        "nothing could be written"
    );
    held.release().await;
    s.wait_for_clicks(id(&link), 41).await;
    s.stop().await;
    let (clicks, logged) = s.stored_clicks(id(&link)).await;
    assert_eq!(clicks, 41, "every click counted");
    assert!(
        (6..41).contains(&logged),
        "the raw log kept what it could: {logged}"
    );
    let stats = s
        .service
        .stats_in(
            s.owner_id,
            &linkdeck::domain::StatsQuery::new(
                linkdeck::domain::StatsScope::Link(id(&link)),
                linkdeck::domain::PeriodSpec::preset(linkdeck::domain::Preset::Hours24),
            ),
            jiff::tz::TimeZone::UTC,
        )
        .await
        .unwrap();
    assert_eq!(stats.total, 41, "and every one in the statistics");
    let referrers = stats
        .breakdown(linkdeck::domain::Dimension::Referrer)
        .unwrap();
    assert_eq!(referrers.total(), 41);
}

#[tokio::test]
async fn the_raw_log_is_pruned_in_the_background_and_no_figure_changes() {
    use linkdeck::backend::local::serving::VisitRow;
    use linkdeck::domain::{PeriodSpec, Preset, StatsQuery, StatsScope};
    let Some(s) = crate::serve(ServeOptions {
        visit_log_retention: Some(Duration::from_secs(90 * 86_400)),
        upkeep_every: Duration::from_millis(50),
        ..quick()
    })
    .await
    else {
        return;
    };
    let old = s
        .create_link(&[("url", "https://example.com/old"), ("alias", "old")])
        .await;
    let gone = s
        .create_link(&[("url", "https://example.com/gone"), ("alias", "gone")])
        .await;
    let now = s.service.now().as_second();
    // A visit a day for 300 days, to each link.
    let rows: Vec<VisitRow> = (0..300)
        .flat_map(|day| {
            [id(&old), id(&gone)].map(|link| VisitRow {
                link_id: link,
                at: now - day * 86_400,
                country: Some(["DE", "US", "FR"][day as usize % 3].into()),
                platform: Some("iOS".into()),
                browser: None,
                referrer: Some("t.co".into()),
                language: None,
                address: None,
                rule: None,
            })
        })
        .collect();
    s.service.record_visits(rows).await.unwrap();
    let figures = || async {
        let mut out = Vec::new();
        for preset in [
            Preset::Days30,
            Preset::Days90,
            Preset::Months12,
            Preset::All,
        ] {
            let q = StatsQuery::new(StatsScope::Link(id(&old)), PeriodSpec::preset(preset));
            out.push(
                s.service
                    .stats_in(s.owner_id, &q, jiff::tz::TimeZone::UTC)
                    .await
                    .unwrap(),
            );
        }
        out
    };
    let before = figures().await;
    assert_eq!(before[3].total, 300);
    s.api(Method::DELETE, &format!("/api/v1/links/{}", id(&gone)))
        .send()
        .await
        .unwrap();
    // A deleted link waits in the trash with its log; emptied from there, its log goes too.
    let mine = s.service.for_owner(s.owner_id);
    let trashed = mine.trash(1, 100).await.unwrap().unwrap().items;
    assert_eq!(trashed.len(), 1);
    mine.purge(&trashed).await.unwrap();
    // The next passes keep 90 days of the log, and none of the purged link.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (old_logged, gone_logged) = (
            s.stored_clicks(id(&old)).await.1,
            s.visits(id(&gone)).await.len(),
        );
        if old_logged == 91 && gone_logged == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "log still holds {old_logged} and {gone_logged} visits"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(figures().await, before, "pruning never changes a figure");
}
