//! A link's redirect rules through `serve`: each kind sends the visits it
//! matches and no others, the first match wins, the visit log names the rule that sent each
//! click, and the gates before them (password, disabled, expiry, the host's fallbacks) come
//! first. Rules are set through linkdeck's own API (`PUT /api/linkdeck/links/{id}/rules`) or
//! the v1 form's `rules[N]`, and read back from both.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{TestServer, location};
use linkdeck::domain::HostSettings;
use linkdeck::server::ServeOptions;

type Headers = &'static [(&'static str, &'static str)];

const FIREFOX_LINUX: &str =
    "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0";

/// A link `alias` to `https://default.example/` with `rules`; its id.
async fn ruled(s: &TestServer, alias: &str, extra: &[(&str, &str)], rules: &[&str]) -> i64 {
    let mut fields = vec![("url", "https://default.example/"), ("alias", alias)];
    fields.extend_from_slice(extra);
    let id = s.create_link(&fields).await["id"].as_i64().unwrap();
    let (status, body) = put_rules(s, id, rules).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    id
}

async fn put_rules(s: &TestServer, id: i64, rules: &[&str]) -> (StatusCode, Value) {
    let response = s
        .api(Method::PUT, &format!("/api/linkdeck/links/{id}/rules"))
        .json(&json!({ "rules": rules }))
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Where `path` sends a visitor with `headers`: the `Location`, or the status when none.
async fn to(s: &TestServer, path: &str, headers: &[(&str, &str)]) -> String {
    let response = s.visit(path, headers).await;
    match response.headers().get("location") {
        Some(_) => location(&response),
        None => response.status().as_u16().to_string(),
    }
}

/// The rule each logged visit of the link `alias` names, in order.
async fn logged_rules(s: &TestServer, alias: &str) -> Vec<Value> {
    let text = s
        .api(Method::GET, "/api/linkdeck/visits")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["alias"] == alias)
        .map(|v| v["rule"].clone())
        .collect()
}

#[tokio::test]
async fn each_rule_kind_sends_what_it_matches_and_the_log_names_it() {
    let Some(s) = crate::serve(ServeOptions {
        geo_header: Some("CF-IPCountry".into()),
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let d = "https://default.example/";
    // The test clock stands at 2030-01-01T00:00Z, a Tuesday.
    let cases: &[(&str, &str, Headers, Headers)] = &[
        (
            "lang",
            "language de => https://de.example/",
            &[("accept-language", "fr;q=0.9, de-CH;q=0.8")],
            &[("accept-language", "fr, de;q=0")],
        ),
        (
            "query",
            "query utm_source=news => https://q.example/",
            &[],
            &[],
        ),
        ("cidr", "cidr 127.0.0.0/8 => https://lan.example/", &[], &[]),
        (
            "browser",
            "browser Firefox => https://ff.example/",
            &[("user-agent", FIREFOX_LINUX)],
            &[],
        ),
        (
            "country",
            "country de => https://de.example/",
            &[("cf-ipcountry", "DE")],
            &[("cf-ipcountry", "FR")],
        ),
        (
            "platform",
            "platform linux => https://linux.example/",
            &[("user-agent", FIREFOX_LINUX)],
            &[],
        ),
        (
            "after",
            "after 2029-12-31T00:00Z => https://new.example/",
            &[],
            &[],
        ),
        (
            "schedule",
            "schedule tue 00-12 UTC => https://office.example/",
            &[],
            &[],
        ),
    ];
    for (alias, rule, hit, _) in cases {
        ruled(&s, alias, &[], &[rule]).await;
        let url = rule.rsplit_once("=> ").unwrap().1;
        let path = if *alias == "query" {
            format!("/{alias}?utm_source=news")
        } else {
            format!("/{alias}")
        };
        // The visitor's query goes on, as for any destination.
        let want = if *alias == "query" {
            format!("{url}?utm_source=news")
        } else {
            url.to_owned()
        };
        assert_eq!(to(&s, &path, hit).await, want, "{alias}");
    }
    for (alias, _, _, miss) in cases {
        let path = match *alias {
            "query" => "/query?utm_source=other".to_owned(),
            other => format!("/{other}"),
        };
        let want = match *alias {
            // Loopback is what the test visits from; the clock has not moved.
            "cidr" | "after" | "schedule" => continue,
            "query" => format!("{d}?utm_source=other"),
            _ => d.to_owned(),
        };
        assert_eq!(to(&s, &path, miss).await, want, "{alias}");
    }
    ruled(
        &s,
        "away",
        &[],
        &["cidr 10.0.0.0/8 => https://lan.example/"],
    )
    .await;
    assert_eq!(to(&s, "/away", &[]).await, d);
    ruled(
        &s,
        "old",
        &[],
        &["before 2029-12-31T00:00Z => https://old.example/"],
    )
    .await;
    assert_eq!(to(&s, "/old", &[]).await, d);
    s.clock.set("2030-01-01T13:00:00Z".parse().unwrap());
    assert_eq!(to(&s, "/schedule", &[]).await, d, "past noon");
    s.clock.set("2029-12-30T00:00:00Z".parse().unwrap());
    assert_eq!(to(&s, "/after", &[]).await, d);
    assert_eq!(to(&s, "/old", &[]).await, "https://old.example/");

    let lang_id = ruled(
        &s,
        "lang3",
        &[("public", "1")],
        &["language de => https://de.example/"],
    )
    .await;
    s.visit("/lang3", &[("accept-language", "de")]).await;
    s.visit("/lang3", &[("accept-language", "en")]).await;
    s.wait_for_clicks(lang_id, 2).await;
    assert_eq!(
        logged_rules(&s, "lang3").await,
        [json!("rule 1 language"), Value::Null]
    );
    // The link's traffic says which rule sent its clicks, the rest going to its URL; its
    // public page does not tell visitors how the operator routes them.
    let stats = s
        .api(Method::GET, &format!("/api/v1/stats/{lang_id}?name=rule"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(
        stats["data"]["rule"]["top"].as_array().unwrap().clone(),
        [
            json!({"value": null, "clicks": 1}),
            json!({"value": "rule 1 language", "clicks": 1})
        ]
        .to_vec(),
        "{stats}"
    );
    let public = s
        .visit("/lang3/stats", &[("accept", "application/json")])
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(public["data"]["clicks"], 2, "{public}");
    assert!(public["data"].get("rule").is_none(), "{public}");
}

#[tokio::test]
async fn a_split_goes_by_weight_until_its_end_then_the_winner_takes_all() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let id = ruled(
        &s,
        "ab",
        &[],
        &["split 1*https://a.example/,1*https://b.example/ until 2030-01-02T00:00Z => https://b.example/"],
    )
    .await;
    let mut seen = std::collections::BTreeMap::<String, u32>::new();
    for _ in 0..40 {
        *seen.entry(to(&s, "/ab", &[]).await).or_default() += 1;
    }
    let keys: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["https://a.example/", "https://b.example/"],
        "{seen:?}"
    );
    s.clock.set("2030-01-02T00:00:00Z".parse().unwrap());
    for _ in 0..10 {
        assert_eq!(to(&s, "/ab", &[]).await, "https://b.example/");
    }
    s.wait_for_clicks(id, 50).await;
    let logged = logged_rules(&s, "ab").await;
    assert!(logged.iter().all(|r| r == "rule 1 split"), "{logged:?}");
}

/// The order of a redirect's decisions with rules on the link: the password, disabled and
/// expiry gates and the host's fallbacks come first; then the rules, in the operator's order,
/// the first match winning; then the seed's targeting; then the link's own URL.
#[tokio::test]
async fn the_order_of_evaluation() {
    let Some(s) = crate::serve(ServeOptions {
        geo_header: Some("CF-IPCountry".into()),
        host: HostSettings {
            expired_url: Some("https://own.example/gone".into()),
            ..HostSettings::default()
        },
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let always = "after 2000-01-01T00:00Z => https://rule.example/";
    let table: &[(&str, Headers, &[&str], Headers, &str)] = &[
        // alias, link fields, rules, visitor headers, where the visitor goes
        ("pw", &[("password", "secret")], &[always], &[], "200"),
        (
            "off",
            &[
                ("disabled", "1"),
                ("expiration_url", "https://own-url.example/"),
            ],
            &[always],
            &[],
            "https://own.example/gone",
        ),
        (
            "expired",
            &[
                ("expiration_date", "2029-12-31"),
                ("expiration_time", "00:00"),
                ("expiration_url", "https://after.example/"),
            ],
            &[always],
            &[],
            "https://after.example/",
        ),
        (
            "fellback",
            &[
                ("expiration_date", "2029-12-31"),
                ("expiration_time", "00:00"),
            ],
            &[always],
            &[],
            "https://own.example/gone",
        ),
        (
            "first",
            &[],
            &[
                "query x => https://x.example/",
                "language de => https://de.example/",
                always,
            ],
            &[("accept-language", "de")],
            "https://de.example/",
        ),
        (
            "overgeo",
            &[
                ("target_type", "1"),
                ("geo[0][key]", "DE"),
                ("geo[0][value]", "https://geo.example/"),
            ],
            &[always],
            &[("cf-ipcountry", "DE")],
            "https://rule.example/",
        ),
        (
            "thengeo",
            &[
                ("target_type", "1"),
                ("geo[0][key]", "DE"),
                ("geo[0][value]", "https://geo.example/"),
            ],
            &["query x => https://x.example/"],
            &[("cf-ipcountry", "DE")],
            "https://geo.example/",
        ),
        (
            "default",
            &[],
            &["query x => https://x.example/"],
            &[],
            "https://default.example/",
        ),
    ];
    for (alias, fields, rules, _, _) in table {
        ruled(&s, alias, fields, rules).await;
    }
    for (alias, _, _, headers, want) in table {
        assert_eq!(
            to(&s, &format!("/{alias}"), headers).await,
            *want,
            "{alias}"
        );
    }
}

#[tokio::test]
async fn rules_are_read_back_checked_by_field_and_cleared() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let rules = [
        "country DE => https://de.example/",
        "schedule mon,fri 09-17 Europe/Paris => https://office.example/",
    ];
    let id = ruled(&s, "r", &[], &rules).await;
    let read = s
        .api(Method::GET, &format!("/api/linkdeck/links/{id}/rules"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(read["data"], json!({ "id": id, "rules": rules }));
    // The v1 record carries them after phpShort's keys, as the export writes them.
    let v1 = s
        .api(Method::GET, &format!("/api/v1/links/{id}"))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(v1["data"]["rules"][0]["kind"], "country", "{v1}");
    assert_eq!(v1["data"]["rules"][1]["tz"], "Europe/Paris", "{v1}");
    let (status, body) = put_rules(
        &s,
        id,
        &[
            "cidr 10.0.0.0/8 => https://a.example/",
            "country XX => https://b.example/",
        ],
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("rules.1.country"), "{body}");
    let (status, body) = put_rules(&s, id, &[]).await;
    assert_eq!(
        (status, &body["data"]["rules"]),
        (StatusCode::OK, &json!([]))
    );
    assert_eq!(to(&s, "/r", &[]).await, "https://default.example/");

    // The v1 form takes them beside the link's other fields, in one request.
    let made = s
        .create_link(&[
            ("url", "https://default.example/"),
            ("alias", "f"),
            ("rules[0]", "query ref => https://q.example/"),
            ("rules[1]", "language fr => https://fr.example/"),
        ])
        .await;
    assert_eq!(made["rules"][1]["languages"], json!(["fr"]), "{made}");
    assert_eq!(to(&s, "/f?ref=1", &[]).await, "https://q.example/?ref=1");
}
