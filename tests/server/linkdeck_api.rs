//! linkdeck's own API beside v1 (`/api/linkdeck/…`): its capabilities behind the key check, an
//! import of export records that keeps titles, click totals, creation dates and traffic
//! history (read back through the v1 records and the stats API, as a user would) and counts
//! nothing twice when sent again, every refused request as a JSON answer naming what is wrong
//! with nothing of the page written, and the traffic history of a page of links.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{TestServer, json};
use linkdeck::server::ServeOptions;

fn quick() -> ServeOptions {
    ServeOptions {
        api_rate_limit: 0,
        ..ServeOptions::default()
    }
}

/// An export document with one record a line: line 1 `{`, 2 the version, 3 the spaces, 4
/// `"links": [`, and link `i` on line `5 + i`.
fn export(links: &[Value]) -> String {
    let lines: Vec<String> = links.iter().map(Value::to_string).collect();
    format!(
        "{{\n\"version\": 1,\n\"spaces\": [{{\"name\": \"Launch\", \"color\": \"green\"}}],\n\"links\": [\n{}\n]}}\n",
        lines.join(",\n")
    )
}

/// Three links with what they carry from before; the first two with an hourly history.
fn carried_links() -> Vec<Value> {
    vec![
        json!({"url": "https://example.com/a", "alias": "a", "title": "Page A", "clicks": 40,
               "created_at": "2029-03-01T08:00:00Z", "space": "Launch",
               "traffic": [
                   {"hour": "2029-06-01T09:00:00Z", "clicks": 3, "country": {"DE": 2, "US": 1},
                    "platform": {"iOS": 3}, "referrer": {"t.co": 1}, "language": {"de": 2}},
                   {"hour": "2029-06-01T17:00:00Z", "clicks": 5, "country": {"FR": 5},
                    "browser": {"Firefox": 4}},
                   {"hour": "2029-06-03T00:00:00Z", "clicks": 2}]}),
        json!({"url": "https://example.com/b", "alias": "b", "clicks": 1,
               "created_at": "2029-04-01T08:00:00Z",
               "traffic": [{"hour": "2029-06-02T12:00:00Z", "clicks": 1, "country": {"US": 1}}]}),
        json!({"url": "https://example.com/c", "alias": "c", "title": "Page C", "clicks": 7,
               "password": "s3cret", "expiration_clicks": 7}),
    ]
}

async fn post_import(
    s: &TestServer,
    query: &str,
    body: impl Into<reqwest::Body>,
) -> (StatusCode, Value) {
    let response = s
        .api(Method::POST, &format!("/api/linkdeck/import{query}"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let (status, _, body) = json(response).await;
    (status, body)
}

async fn get(s: &TestServer, path: &str) -> (StatusCode, Value) {
    let (status, _, body) = json(s.api(Method::GET, path).send().await.unwrap()).await;
    (status, body)
}

/// Every link of the key's owner, by alias.
async fn links(s: &TestServer) -> std::collections::BTreeMap<String, Value> {
    let (status, body) = get(s, "/api/v1/links?per_page=100").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["alias"].as_str().unwrap().to_owned(), l.clone()))
        .collect()
}

/// What the stats API says of a link over June 2029: clicks, the hourly timeline of 1–2 June,
/// the daily one of the month, and each breakdown.
async fn stats_of(s: &TestServer, id: i64) -> Value {
    let hourly = get(
        s,
        &format!("/api/v1/stats/{id}?from=2029-06-01&to=2029-06-02&timezone=UTC"),
    )
    .await
    .1;
    let daily = get(
        s,
        &format!("/api/v1/stats/{id}?from=2029-06-01&to=2029-06-30&timezone=UTC"),
    )
    .await
    .1;
    json!({
        "clicks": daily["data"]["clicks"],
        "hours": hourly["data"]["timeline"],
        "days": daily["data"]["timeline"],
        "country": daily["data"]["country"],
        "platform": daily["data"]["platform"],
        "browser": daily["data"]["browser"],
        "referrer": daily["data"]["referrer"],
        "language": daily["data"]["language"],
    })
}

fn hour_clicks(stats: &Value) -> Vec<u64> {
    stats["hours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["clicks"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn the_capabilities_say_linkdeck_only_to_a_key() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let (status, body) = get(&s, "/api/linkdeck/capabilities").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["server"], "linkdeck");
    assert_eq!(body["data"]["api"], 1);
    assert_eq!(body["data"]["import_max_bytes"], 16 << 20);
    assert_eq!(body["data"]["traffic_max_ids"], 100);
    assert_eq!(body["data"]["visits"], true);
    for key in [None, Some("not-a-key")] {
        let mut request = s
            .client
            .get(s.url("/api/linkdeck/capabilities"))
            .header("accept", "application/json");
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let (status, _, body) = json(request.send().await.unwrap()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{key:?}");
        assert_eq!(body["message"], "Unauthenticated.");
    }
    // An unknown path of it is JSON too.
    let (status, body) = get(&s, "/api/linkdeck/nothing").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test]
async fn an_import_keeps_what_links_carry_and_sent_again_counts_nothing_twice() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let body = export(&carried_links());
    let (status, answer) = post_import(&s, "", body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let data = &answer["data"];
    assert_eq!(data["links_created"], 3);
    assert_eq!(data["spaces_created"], 1);
    assert_eq!(data["clicks_imported"], 11);
    assert_eq!(data["links_already_there"], 0);

    let there = links(&s).await;
    let a = &there["a"];
    assert_eq!(a["title"], "Page A");
    assert_eq!(
        a["clicks"], 40,
        "the total, which holds more than the history"
    );
    assert_eq!(a["created_at"], "2029-03-01T08:00:00Z");
    assert_eq!(a["space"]["name"], "Launch");
    assert_eq!(a["space"]["color"], 4);
    assert_eq!(there["b"]["clicks"], 1);
    assert_eq!(
        there["c"]["password"], true,
        "a password in the records is set"
    );
    assert_eq!(
        there["c"]["expiration_clicks"], 7,
        "expired by its clicks as it was"
    );

    let id_a = a["id"].as_i64().unwrap();
    let stats = stats_of(&s, id_a).await;
    assert_eq!(stats["clicks"], 10);
    let hours = hour_clicks(&stats);
    assert_eq!(hours.len(), 48);
    assert_eq!((hours[9], hours[17], hours.iter().sum::<u64>()), (3, 5, 8));
    let days: Vec<u64> = stats["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["clicks"].as_u64().unwrap())
        .collect();
    assert_eq!(&days[..4], [8, 0, 2, 0]);
    assert_eq!(
        stats["country"]["top"][0],
        json!({"value": "FR", "clicks": 5})
    );
    assert!(
        stats["platform"]["top"]
            .as_array()
            .unwrap()
            .contains(&json!({"value": "iOS", "clicks": 3})),
        "{stats}"
    );

    // The history reads back hour by hour, as it was sent.
    let id_b = there["b"]["id"].as_i64().unwrap();
    let (status, traffic) = get(
        &s,
        &format!("/api/linkdeck/traffic?ids={id_a},{id_b},999999"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{traffic}");
    let links_traffic = traffic["data"].as_array().unwrap();
    assert_eq!(
        links_traffic.len(),
        2,
        "a link that is not hers is left out"
    );
    assert_eq!(links_traffic[0]["id"], id_a);
    assert_eq!(
        links_traffic[0]["traffic"],
        carried_links()[0]["traffic"],
        "the same hours and values"
    );

    // The same page again: every link is there already, and no click is counted twice.
    let (status, again) = post_import(&s, "", body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["data"]["links_created"], 0);
    assert_eq!(again["data"]["links_already_there"], 3);
    assert_eq!(again["data"]["clicks_imported"], 0);
    assert_eq!(again["data"]["spaces_reused"], 1);
    assert_eq!(
        stats_of(&s, id_a).await,
        stats,
        "the history is counted once"
    );
    assert_eq!(links(&s).await["a"]["clicks"], 40);
    // …also when the conflict rule would rename a taken alias.
    let (_, renamed) = post_import(&s, "?on_conflict=rename", body).await;
    assert_eq!(renamed["data"]["links_already_there"], 3, "{renamed}");
    assert_eq!(links(&s).await.len(), 3);
}

#[tokio::test]
async fn a_taken_alias_follows_the_conflict_rule() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    s.create_link(&[("url", "https://other.example/"), ("alias", "a")])
        .await;
    let body = export(&carried_links()[..2]);
    let (status, failed) = post_import(&s, "", body.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{failed}");
    assert!(failed["message"]["line 5: alias"].is_array(), "{failed}");
    assert_eq!(links(&s).await.len(), 1, "nothing of the page is written");

    let (_, skipped) = post_import(&s, "?on_conflict=skip", body.clone()).await;
    assert_eq!(
        (
            skipped["data"]["links_created"].as_u64(),
            skipped["data"]["links_skipped"].as_u64()
        ),
        (Some(1), Some(1)),
        "{skipped}"
    );
    let (_, renamed) = post_import(&s, "?on_conflict=rename", body).await;
    assert_eq!(
        renamed["data"]["renamed"],
        json!([{"place": "line 5", "from": "a", "to": "a-2"}])
    );
    assert_eq!(renamed["data"]["links_already_there"], 1, "b");
    // A link twice in one page arrives once.
    let twice = json!({"url": "https://example.com/d", "alias": "d", "clicks": 2,
                       "traffic": [{"hour": "2029-06-01T09:00:00Z", "clicks": 2}]});
    let (_, once) = post_import(&s, "", export(&[twice.clone(), twice])).await;
    assert_eq!(
        (
            once["data"]["links_created"].as_u64(),
            once["data"]["links_already_there"].as_u64()
        ),
        (Some(1), Some(1)),
        "{once}"
    );
    assert_eq!(once["data"]["clicks_imported"], 2);
    let (status, bad) = post_import(&s, "?on_conflict=merge", "{}").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad["message"]["on_conflict"].is_array(), "{bad}");
}

#[tokio::test]
async fn imported_titles_arrive_clean_of_control_characters() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    // As another linkdeck copies them from an older database, or an export from YOURLS.
    let rows = [
        json!({"url": "https://example.com/a", "alias": "a",
               "title": "Sale\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nnow\u{0}\u{9b}\u{202e}"}),
        json!({"url": "https://example.com/b", "alias": "b", "title": "\u{1b}\u{8}\u{0}"}),
    ];
    let (status, body) = post_import(&s, "", export(&rows)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let links = links(&s).await;
    assert_eq!(links["a"]["title"], "Sale[2J]0;pwned now");
    assert_eq!(
        links["b"]["title"], "example.com/b",
        "nothing left: its own title"
    );

    // The v1 API takes no title at all: one sent is named, whatever it holds.
    let (status, _, body) = json(
        s.api(Method::POST, "/api/v1/links")
            .form(&[("url", "https://example.com/c"), ("title", "x\u{1b}[2J")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["message"]["title"].is_array(), "{body}");
}

#[tokio::test]
async fn a_bad_page_is_refused_as_json_naming_what_is_wrong_and_nothing_is_written() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    // One good row, one bad in its URL, one bad in its history: nothing is written.
    let mut rows = carried_links();
    rows[1]["url"] = json!("javascript:alert(1)");
    rows[2]["traffic"] = json!([{"hour": "2029-06-01T09:00:00Z", "clicks": 1,
                                 "country": {"Atlantis": 1}}]);
    let (status, body) = post_import(&s, "", export(&rows)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let fields: Vec<&String> = body["message"].as_object().unwrap().keys().collect();
    assert_eq!(
        fields,
        ["line 6: url", "line 7: traffic.0.country"],
        "{body}"
    );
    assert!(links(&s).await.is_empty());

    // A body that is not an export: named by its line; an unknown field of a record too.
    let (status, body) = post_import(&s, "", "{\n\"links\": [\n{\"url\": ").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["message"]["line 3"].is_array(), "{body}");
    let (status, body) = post_import(
        &s,
        "",
        export(&[json!({"url": "https://example.com/x", "hits": 3})]),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["message"]["line 5"][0]
            .as_str()
            .unwrap()
            .contains("hits"),
        "{body}"
    );
    let (status, body) = post_import(&s, "", "{\"version\": 2, \"links\": []}").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["message"]["body"].is_array(), "{body}");

    // Not JSON by its content type.
    let (status, _, body) = json(
        s.api(Method::POST, "/api/linkdeck/import")
            .form(&[("url", "https://example.com/x")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("application/json")
    );

    // Over the limit: refused before it is read, saying the limit.
    let huge = vec![b' '; (16 << 20) + 1];
    let (status, body) = post_import(&s, "", huge.clone()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("16 MiB"),
        "{body}"
    );
    // Without a key nothing is read at all.
    for key in [None, Some("not-a-key")] {
        let mut request = s
            .client
            .post(s.url("/api/linkdeck/import"))
            .header("accept", "application/json")
            .header("content-type", "application/json")
            .body(export(&carried_links()));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let (status, _, body) = json(request.send().await.unwrap()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{key:?}: {body}");
    }
    // The wrong method is JSON as well.
    let (status, body) = get(&s, "/api/linkdeck/import").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
    assert!(links(&s).await.is_empty());
}

#[tokio::test]
async fn the_traffic_of_a_page_of_links_is_asked_strictly_and_only_of_ones_own() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let (_, answer) = post_import(&s, "", export(&carried_links())).await;
    assert_eq!(answer["data"]["links_created"], 3, "{answer}");
    let id_a = links(&s).await["a"]["id"].as_i64().unwrap();
    for bad in [
        "",
        "?ids=",
        "?ids=1,x",
        "?ids=0",
        &format!("?ids={}", vec!["1"; 101].join(",")),
    ] {
        let (status, body) = get(&s, &format!("/api/linkdeck/traffic{bad}")).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {body}");
        assert!(body["message"]["ids"].is_array(), "{bad}: {body}");
    }
    let (_, their_key) = s.other_owner("mallory").await;
    let (status, _, body) = json(
        s.api_as(
            &their_key,
            Method::GET,
            &format!("/api/linkdeck/traffic?ids={id_a}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["data"], json!([]), "alice's history is not mallory's");
}

/// `GET /api/linkdeck/visits` with this server's key.
async fn visits(s: &TestServer, query: &str) -> reqwest::Response {
    s.api(Method::GET, &format!("/api/linkdeck/visits{query}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_visits_of_real_redirects_stream_as_ndjson_or_csv_and_bad_questions_are_named() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let a = s
        .create_link(&[("url", "https://example.com/a"), ("alias", "a")])
        .await["id"]
        .as_i64()
        .unwrap();
    s.create_link(&[("url", "https://example.com/b"), ("alias", "b")])
        .await;
    let firefox = [
        (
            "user-agent",
            "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
        ),
        ("referer", "https://news.example.org/item?id=1"),
        ("accept-language", "de-DE,de;q=0.9"),
    ];
    for _ in 0..2 {
        s.visit("/a", &firefox).await;
    }
    s.visit("/b", &[]).await;
    s.wait_for_clicks(a, 2).await;

    // NDJSON by default: each visit as the click writer logged it, oldest first.
    let response = visits(&s, "").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let text = response.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let a_visits: Vec<&Value> = lines.iter().filter(|v| v["alias"] == "a").collect();
    assert_eq!(a_visits.len(), 2, "{text}");
    let v = a_visits[0];
    assert_eq!(v["link_id"], a);
    assert_eq!(v["platform"], "Linux");
    assert_eq!(v["browser"], "Firefox");
    assert_eq!(v["referrer"], "news.example.org");
    assert_eq!(v["language"], "de");

    // CSV of one link.
    let response = visits(&s, &format!("?format=csv&link={a}")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "text/csv; charset=utf-8"
    );
    let csv = response.text().await.unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "id,at,link_id,alias,country,platform,browser,referrer,language,address,rule"
    );
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(
        rows[1].contains(",a,,Linux,Firefox,news.example.org,de"),
        "{csv}"
    );

    // Bad questions: a 422 naming each parameter, before anything is streamed.
    let response = visits(&s, "?format=xml&since=yesterday&link=1&space=2&after=x").await;
    let (status, _, body) = json(response).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    for field in ["format", "since", "link", "after"] {
        assert!(body["message"].get(field).is_some(), "{field}: {body}");
    }
    let response = visits(&s, "?since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z").await;
    let (status, _, body) = json(response).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["message"].get("until").is_some(), "{body}");

    // Another owner's link is not found; without a key nothing is said.
    let (_, their_key) = s.other_owner("bob").await;
    let response = s
        .api_as(
            &their_key,
            Method::GET,
            &format!("/api/linkdeck/visits?link={a}"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = s
        .api_as(&their_key, Method::GET, "/api/linkdeck/visits")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "", "bob has no visits");
    let response = s
        .client
        .get(s.url("/api/linkdeck/visits"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

/// Each `visitor_addresses` setting, seen through real redirects behind a trusted proxy (the
/// test's own loopback address) naming a visitor on IPv4 and one on IPv6.
#[tokio::test]
async fn the_visit_log_keeps_of_an_address_what_the_setting_says() {
    use linkdeck::domain::AddressLog;
    for (setting, v4, v6) in [
        (AddressLog::Drop, Value::Null, Value::Null),
        (
            AddressLog::Network,
            json!("203.0.113.0/24"),
            json!("2001:db8:5::/48"),
        ),
        (
            AddressLog::Whole,
            json!("203.0.113.77"),
            json!("2001:db8:5:6::9"),
        ),
    ] {
        let opts = ServeOptions {
            visitor_addresses: setting,
            trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
            ..quick()
        };
        let Some(s) = crate::serve(opts).await else {
            return;
        };
        let id = s
            .create_link(&[("url", "https://example.com/a"), ("alias", "a")])
            .await["id"]
            .as_i64()
            .unwrap();
        for visitor in ["203.0.113.77", "2001:db8:5:6::9"] {
            s.visit("/a", &[("x-forwarded-for", visitor)]).await;
        }
        s.wait_for_clicks(id, 2).await;
        let text = visits(&s, "").await.text().await.unwrap();
        let kept: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["address"].clone())
            .collect();
        assert_eq!(kept, [v4.clone(), v6.clone()], "{setting:?}: {text}");
    }
}

/// Reads `response` until its text holds `needle`; fails after 20 s.
async fn read_until(response: &mut reqwest::Response, needle: &str) -> String {
    let mut text = String::new();
    let found = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !text.contains(needle) {
            match response.chunk().await.unwrap() {
                Some(chunk) => text.push_str(&String::from_utf8_lossy(&chunk)),
                None => return false,
            }
        }
        true
    })
    .await;
    assert_eq!(found, Ok(true), "{needle:?} never came: {text}");
    text
}

/// A live feed is a request in flight for as long as it streams: it outlives the idle timeout
/// of a connection with nothing in flight, and it ends (rather than holding the server up)
/// when the server stops.
#[tokio::test]
async fn a_live_feed_outlives_the_idle_timeout_and_ends_when_the_server_stops() {
    let opts = ServeOptions {
        idle_timeout: std::time::Duration::from_secs(1),
        header_timeout: std::time::Duration::from_secs(1),
        ..quick()
    };
    let Some(mut s) = crate::serve(opts).await else {
        return;
    };
    let id = s
        .create_link(&[("url", "https://example.com/a"), ("alias", "a")])
        .await["id"]
        .as_i64()
        .unwrap();
    let mut feed = s
        .api(Method::GET, "/api/linkdeck/visits/live")
        .send()
        .await
        .unwrap();
    assert_eq!(feed.status(), StatusCode::OK);
    assert_eq!(feed.headers()["content-type"], "text/event-stream");
    read_until(&mut feed, ": linkdeck visits").await;
    // Three idle timeouts later, the feed is still there and brings the visit.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    s.visit("/a", &[]).await;
    s.wait_for_clicks(id, 1).await;
    let text = read_until(&mut feed, "\"alias\":\"a\"").await;
    assert!(
        text.contains("\nid: 1\n") || text.contains("id: 1\ndata: "),
        "{text}"
    );
    // The server stops without waiting for the feed, which ends.
    tokio::time::timeout(std::time::Duration::from_secs(20), s.stop())
        .await
        .expect("the server stopped with a live feed open");
    let rest = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Ok(Some(_)) = feed.chunk().await {}
    })
    .await;
    assert!(rest.is_ok(), "the feed ended with the server");
}

/// Each visit's log row names the targeting rule that sent it, as real redirects chose it; a
/// visit sent to the link's own URL names none.
#[tokio::test]
async fn the_visit_log_names_the_rule_that_sent_each_visit() {
    let Some(s) = crate::serve(quick()).await else {
        return;
    };
    let rotating = s
        .create_link(&[
            ("url", "https://example.com/r"),
            ("alias", "rot"),
            ("target_type", "3"),
            ("rotation[0][value]", "https://a.example.com"),
            ("rotation[1][value]", "https://b.example.com"),
        ])
        .await["id"]
        .as_i64()
        .unwrap();
    let by_platform = s
        .create_link(&[
            ("url", "https://example.com/p"),
            ("alias", "plat"),
            ("target_type", "2"),
            ("platform[0][key]", "Linux"),
            ("platform[0][value]", "https://linux.example.com"),
        ])
        .await["id"]
        .as_i64()
        .unwrap();
    let linux = [(
        "user-agent",
        "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
    )];
    let iphone = [(
        "user-agent",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
    )];
    for _ in 0..3 {
        s.visit("/rot", &linux).await;
    }
    s.visit("/plat", &linux).await;
    s.visit("/plat", &iphone).await;
    s.wait_for_clicks(rotating, 3).await;
    s.wait_for_clicks(by_platform, 2).await;
    let text = visits(&s, "").await.text().await.unwrap();
    let rules: Vec<(String, Value)> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["alias"].as_str().unwrap().to_owned(), v["rule"].clone())
        })
        .collect();
    let of = |alias: &str| -> Vec<Value> {
        rules
            .iter()
            .filter(|(a, _)| a == alias)
            .map(|(_, r)| r.clone())
            .collect()
    };
    assert_eq!(
        of("rot"),
        [
            json!("rotation 1"),
            json!("rotation 2"),
            json!("rotation 1")
        ],
        "{text}"
    );
    assert_eq!(of("plat"), [json!("platform Linux"), Value::Null], "{text}");
}
