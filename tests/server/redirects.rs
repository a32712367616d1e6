//! The short links: every step of a redirect (docs/ARCHITECTURE.md, "A redirect"), and exact
//! click counts under concurrency.

use std::sync::Arc;

use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::{json, location};
use linkdeck::server::ServeOptions;

const BOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

fn id(link: &Value) -> i64 {
    link["id"].as_i64().unwrap()
}

async fn body(response: reqwest::Response) -> (StatusCode, String, String) {
    let status = response.status();
    let ct = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, ct, response.text().await.unwrap())
}

#[tokio::test]
async fn plain_redirect_counts_once_and_merges_the_query() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/p?utm_source=short&keep=1"),
            ("alias", "go"),
        ])
        .await;
    let response = s
        .visit(
            "/go?utm_source=mail&extra=a+b",
            &[
                ("referer", "https://news.example.org/item?id=1"),
                ("accept-language", "fr-CH, fr;q=0.9"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(
        location(&response),
        "https://example.com/p?keep=1&utm_source=mail&extra=a+b"
    );
    // Aliases match case-insensitively.
    let response = s.visit("/GO", &[]).await;
    assert_eq!(
        location(&response),
        "https://example.com/p?utm_source=short&keep=1"
    );
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (2, 2));
    let visits = s.visits(id(&link)).await;
    assert_eq!(
        visits[0],
        (
            None,
            Some("Windows".into()),
            Some("news.example.org".into()),
            Some("fr".into())
        )
    );
}

#[tokio::test]
async fn unknown_alias_is_a_404_page() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    for path in ["/nothing", "/no%20such", "/a.b", "/x/y/z"] {
        let (status, ct, text) = body(s.visit(path, &[]).await).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(ct.starts_with("text/html"), "{path}: {ct}");
        assert!(text.contains("Link not found"));
    }
}

#[tokio::test]
async fn expiry_by_date_and_by_clicks() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    // 2030-01-01 is "now"; both expire a day later.
    let dated = s
        .create_link(&[
            ("url", "https://example.com/d"),
            ("alias", "dated"),
            ("expiration_date", "2030-01-02"),
            ("expiration_time", "00:00"),
        ])
        .await;
    let dated_fallback = s
        .create_link(&[
            ("url", "https://example.com/d2"),
            ("alias", "dated2"),
            ("expiration_date", "2030-01-02"),
            ("expiration_time", "00:00"),
            ("expiration_url", "https://example.com/sorry"),
        ])
        .await;
    let counted = s
        .create_link(&[
            ("url", "https://example.com/c"),
            ("alias", "twice"),
            ("expiration_clicks", "2"),
        ])
        .await;
    let counted_fallback = s
        .create_link(&[
            ("url", "https://example.com/c2"),
            ("alias", "once"),
            ("expiration_clicks", "1"),
            ("expiration_url", "https://example.com/over?x=1"),
        ])
        .await;

    assert_eq!(
        location(&s.visit("/dated", &[]).await),
        "https://example.com/d"
    );
    s.clock.set("2030-01-02T00:00:01Z".parse().unwrap());
    let (status, ct, text) = body(s.visit("/dated", &[]).await).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(ct.starts_with("text/html") && text.contains("expired"));
    let response = s.visit("/dated2?q=1", &[]).await;
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(location(&response), "https://example.com/sorry");

    for _ in 0..2 {
        assert_eq!(
            location(&s.visit("/twice", &[]).await),
            "https://example.com/c"
        );
    }
    let (status, _, _) = body(s.visit("/twice", &[]).await).await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(
        location(&s.visit("/once", &[]).await),
        "https://example.com/c2"
    );
    assert_eq!(
        location(&s.visit("/once", &[]).await),
        "https://example.com/over?x=1"
    );

    s.stop().await;
    assert_eq!(s.stored_clicks(id(&dated)).await, (1, 1));
    assert_eq!(s.stored_clicks(id(&dated_fallback)).await, (0, 0));
    assert_eq!(s.stored_clicks(id(&counted)).await, (2, 2));
    assert_eq!(s.stored_clicks(id(&counted_fallback)).await, (1, 1));
}

#[tokio::test]
async fn password_form_right_wrong_and_rate_limited() {
    let Some(mut s) = crate::serve(ServeOptions {
        password_attempts: 3,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/secret"),
            ("alias", "locked"),
            ("password", "open sesame"),
        ])
        .await;
    let form = s.visit("/locked", &[]).await;
    // The redirect after the right password goes to another origin, which browsers check
    // against form-action: the policy names the link's destination, and nothing else.
    let csp = form.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.ends_with("form-action 'self' https://example.com")
            && csp.contains("default-src 'none'"),
        "{csp}"
    );
    let (status, ct, text) = body(form).await;
    assert_eq!(status, StatusCode::OK);
    assert!(ct.starts_with("text/html"));
    assert!(text.contains("<form") && text.contains("name=\"password\""));

    let post = |password: &'static str| {
        s.client
            .post(s.url("/locked?ref=x"))
            .form(&[("password", password)])
            .send()
    };
    let (status, _, text) = body(post("wrong").await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(text.contains("<form") && text.contains("not right"));
    let response = post("open sesame").await.unwrap();
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(location(&response), "https://example.com/secret?ref=x");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let (status, _, _) = body(post("wrong again").await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Three attempts used the budget up: even the right password now waits.
    let (status, _, text) = body(post("open sesame").await.unwrap()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(text.contains("Too many attempts"));

    s.stop().await;
    assert_eq!(
        s.stored_clicks(id(&link)).await,
        (1, 1),
        "only the unlocked visit counts"
    );
}

#[tokio::test]
async fn disabled_bots_and_preview() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let off = s
        .create_link(&[
            ("url", "https://example.com/off"),
            ("alias", "off"),
            ("disabled", "1"),
        ])
        .await;
    let (status, _, text) = body(s.visit("/off", &[]).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(text.contains("disabled"));

    let on = s
        .create_link(&[
            ("url", "https://example.com/on?a=1"),
            ("alias", "on"),
            ("target_type", "3"),
            ("rotation[0][value]", "https://r.example.com"),
        ])
        .await;
    let response = s.visit("/on?b=2", &[("user-agent", BOT)]).await;
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(
        location(&response),
        "https://example.com/on?a=1&b=2",
        "bots go to the main URL"
    );

    let (status, _, text) = body(s.visit("/on/+", &[]).await).await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("https://example.com/on?a=1"));

    let evil = s
        .create_link(&[
            (
                "url",
                "https://example.com/?q=<script>alert(1)</script>&x=\"y\"",
            ),
            ("alias", "evil"),
        ])
        .await;
    let (_, _, text) = body(s.visit("/evil/+", &[]).await).await;
    assert!(
        !text.contains("<script>alert"),
        "values are escaped: {text}"
    );

    s.stop().await;
    assert_eq!(s.stored_clicks(id(&off)).await, (0, 0));
    assert_eq!(s.stored_clicks(id(&on)).await, (0, 0));
    assert_eq!(s.stored_clicks(id(&evil)).await, (0, 0));
}

#[tokio::test]
async fn scripts_without_an_agent_and_preview_fetchers_are_sent_on_but_not_counted() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/shared"), ("alias", "shared")])
        .await;
    let no_agent = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let bare = no_agent.get(s.url("/shared")).send().await.unwrap();
    assert_eq!(location(&bare), "https://example.com/shared");
    for agent in [
        "WhatsApp/2.23.20.0 A",
        "TelegramBot (like TwitterBot)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    ] {
        let preview = s.visit("/shared", &[("user-agent", agent)]).await;
        assert_eq!(location(&preview), "https://example.com/shared", "{agent}");
    }
    // A person's browser is counted.
    s.visit("/shared", &[]).await;
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (1, 1));
}

#[tokio::test]
async fn a_preview_never_shows_a_destination_its_link_refuses() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    s.create_link(&[
        ("url", "https://secret.example/disabled"),
        ("alias", "off"),
        ("disabled", "1"),
    ])
    .await;
    s.create_link(&[
        ("url", "https://secret.example/used-up"),
        ("alias", "once"),
        ("expiration_clicks", "1"),
    ])
    .await;
    s.create_link(&[
        ("url", "https://secret.example/used-up-2"),
        ("alias", "once-more"),
        ("expiration_clicks", "1"),
        ("expiration_url", "https://example.com/over"),
    ])
    .await;
    s.create_link(&[
        ("url", "https://secret.example/locked-and-off"),
        ("alias", "locked"),
        ("password", "pw"),
        ("disabled", "1"),
    ])
    .await;
    for alias in ["once", "once-more"] {
        assert_eq!(s.visit(&format!("/{alias}"), &[]).await.status(), 301);
    }
    let (status, _, text) = body(s.visit("/off/+", &[]).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        text.contains("disabled") && !text.contains("secret.example"),
        "{text}"
    );
    let (status, _, text) = body(s.visit("/once/+", &[]).await).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(!text.contains("secret.example"), "{text}");
    let (status, _, text) = body(s.visit("/once-more/+", &[]).await).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        text.contains("https://example.com/over") && !text.contains("secret.example"),
        "{text}"
    );
    // Past the password, a disabled link is still disabled.
    let response = s
        .client
        .post(s.url("/locked/+"))
        .form(&[("password", "pw")])
        .send()
        .await
        .unwrap();
    let (status, _, text) = body(response).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(!text.contains("secret.example"), "{text}");
}

#[tokio::test]
async fn location_is_one_ascii_form_with_or_without_a_visitor_query() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    s.create_link(&[("url", "https://例え.jp/パス?q=値"), ("alias", "jp")])
        .await;
    s.create_link(&[
        ("url", "https://example.com/a"),
        ("alias", "gone"),
        ("expiration_clicks", "1"),
        ("expiration_url", "https://例え.jp/終わり"),
    ])
    .await;
    let plain = location(&s.visit("/jp", &[]).await);
    assert_eq!(
        plain,
        "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?q=%E5%80%A4"
    );
    // An empty query brings nothing to merge: the same form, through the same shortcut.
    assert_eq!(location(&s.visit("/jp?", &[]).await), plain);
    let merged = location(&s.visit("/jp?src=mail", &[]).await);
    assert_eq!(
        merged,
        "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?q=%E5%80%A4&src=mail"
    );
    s.visit("/gone", &[]).await;
    let expired = location(&s.visit("/gone", &[]).await);
    assert_eq!(
        expired,
        "https://xn--r8jz45g.jp/%E7%B5%82%E3%82%8F%E3%82%8A"
    );
}

#[tokio::test]
async fn geo_targeting_by_trusted_header() {
    let Some(mut s) = crate::serve(ServeOptions {
        geo_header: Some("CF-IPCountry".into()),
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/world"),
            ("alias", "geo"),
            ("target_type", "1"),
            ("geo[0][key]", "DE"),
            ("geo[0][value]", "https://example.de/"),
            ("geo[1][key]", "us"),
            ("geo[1][value]", "https://example.us/"),
        ])
        .await;
    assert_eq!(
        location(&s.visit("/geo", &[("cf-ipcountry", "de")]).await),
        "https://example.de/"
    );
    assert_eq!(
        location(&s.visit("/geo", &[("cf-ipcountry", "US")]).await),
        "https://example.us/"
    );
    assert_eq!(
        location(&s.visit("/geo", &[("cf-ipcountry", "FR")]).await),
        "https://example.com/world"
    );
    assert_eq!(
        location(&s.visit("/geo", &[("cf-ipcountry", "XX")]).await),
        "https://example.com/world"
    );
    assert_eq!(
        location(&s.visit("/geo", &[]).await),
        "https://example.com/world"
    );
    s.stop().await;
    let countries: Vec<Option<String>> =
        s.visits(id(&link)).await.into_iter().map(|v| v.0).collect();
    assert_eq!(
        countries,
        [
            Some("DE".into()),
            Some("US".into()),
            Some("FR".into()),
            None,
            None
        ]
    );
}

#[tokio::test]
async fn platform_targeting_knows_all_nine_platforms() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let cases = [
        (
            "iOS",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
        ),
        (
            "Android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
        ),
        (
            "Windows",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        ),
        (
            "OS X",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15",
        ),
        (
            "Linux",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        ),
        (
            "Ubuntu",
            "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
        ),
        (
            "Chrome OS",
            "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        ),
        (
            "HarmonyOS",
            "Mozilla/5.0 (Linux; Android 10; HarmonyOS; ELS-AN00; HMSCore 6.1.0.314) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/92.0.4515.105 HuaweiBrowser/12.0.0.301 Mobile Safari/537.36",
        ),
        (
            "Huawei",
            "Mozilla/5.0 (Linux; Android 10; HUAWEI P30 Pro Build/HUAWEIVOG-L29) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.106 Mobile Safari/537.36",
        ),
    ];
    let mut fields: Vec<(String, String)> = vec![
        ("url".into(), "https://example.com/other".into()),
        ("alias".into(), "apps".into()),
        ("target_type".into(), "2".into()),
    ];
    for (i, (platform, _)) in cases.iter().enumerate() {
        fields.push((format!("platform[{i}][key]"), platform.to_string()));
        fields.push((
            format!("platform[{i}][value]"),
            format!("https://example.com/{}", platform.replace(' ', "-")),
        ));
    }
    let fields: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let link = s.create_link(&fields).await;
    for (platform, ua) in cases {
        let response = s.visit("/apps", &[("user-agent", ua)]).await;
        assert_eq!(
            location(&response),
            format!("https://example.com/{}", platform.replace(' ', "-")),
            "{platform}"
        );
    }
    let response = s.visit("/apps", &[("user-agent", "curl/8.5.0")]).await;
    assert_eq!(location(&response), "https://example.com/other");
    s.stop().await;
    let platforms: Vec<Option<String>> = s
        .visits(id(&link))
        .await
        .into_iter()
        .map(|v| v.1)
        .take(9)
        .collect();
    let want: Vec<Option<String>> = cases.iter().map(|(p, _)| Some(p.to_string())).collect();
    assert_eq!(platforms, want);
}

#[tokio::test]
async fn rotation_is_round_robin_and_survives_a_restart() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/main"),
            ("alias", "spin"),
            ("target_type", "3"),
            ("rotation[0][value]", "https://a.example/"),
            ("rotation[1][value]", "https://b.example/"),
            ("rotation[2][value]", "https://c.example/"),
        ])
        .await;
    let mut seen = Vec::new();
    for _ in 0..7 {
        seen.push(location(&s.visit("/spin", &[]).await));
    }
    assert_eq!(
        seen,
        [
            "https://a.example/",
            "https://b.example/",
            "https://c.example/",
            "https://a.example/",
            "https://b.example/",
            "https://c.example/",
            "https://a.example/"
        ]
    );
    s.stop().await;
    let (_, _, shown) = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let handle = linkdeck::server::start(s.service.clone(), ServeOptions::default(), listener)
            .await
            .unwrap();
        let url = format!("{}/spin", handle.url());
        let next = crate::common::client().get(url).send().await.unwrap();
        assert_eq!(
            location(&next),
            "https://b.example/",
            "the cycle continues after a restart"
        );
        handle.shutdown().await.unwrap();
        let backend = s.service.for_owner(s.owner_id);
        let stored = linkdeck::backend::Backend::show_link(&backend, id(&link))
            .await
            .unwrap();
        (0, 0, stored)
    };
    assert_eq!(shown.clicks, 8);
    assert_eq!(shown.last_rotation, 2);
}

/// A server starts with its most clicked links in the alias cache: what it serves from there
/// is what a lookup would have read, clicks and limits included; and an alias written with
/// percent escapes (which the front door leaves to the router) is the same link.
#[tokio::test]
async fn a_warm_start_keeps_counts_and_limits_exact() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let limited = s
        .create_link(&[
            ("url", "https://example.com/three"),
            ("alias", "three"),
            ("expiration_clicks", "3"),
        ])
        .await;
    let plain = s
        .create_link(&[("url", "https://example.com/plain"), ("alias", "plain")])
        .await;
    for _ in 0..2 {
        assert_eq!(
            location(&s.visit("/three", &[]).await),
            "https://example.com/three"
        );
    }
    assert_eq!(
        location(&s.visit("/plain", &[]).await),
        "https://example.com/plain"
    );
    s.stop().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = linkdeck::server::start(s.service.clone(), ServeOptions::default(), listener)
        .await
        .unwrap();
    let client = crate::common::client();
    let get = |path: &str| client.get(format!("{}{path}", handle.url())).send();
    assert_eq!(
        location(&get("/three").await.unwrap()),
        "https://example.com/three",
        "the third of three clicks"
    );
    let after = get("/three").await.unwrap();
    assert_eq!(after.status(), StatusCode::GONE, "past its limit");
    for path in ["/plain", "/%70lain", "/PLAIN"] {
        assert_eq!(
            location(&get(path).await.unwrap()),
            "https://example.com/plain",
            "{path}"
        );
    }
    handle.shutdown().await.unwrap();
    let backend = s.service.for_owner(s.owner_id);
    for (link, clicks) in [(&limited, 3), (&plain, 4)] {
        let stored = linkdeck::backend::Backend::show_link(&backend, id(link))
            .await
            .unwrap();
        assert_eq!(stored.clicks, clicks, "{}", stored.alias);
    }
}

#[tokio::test]
async fn stats_are_public_only_when_the_link_is() {
    let Some(mut s) = crate::serve(ServeOptions {
        geo_header: Some("CF-IPCountry".into()),
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let public = s
        .create_link(&[
            ("url", "https://example.com/p"),
            ("alias", "pub"),
            ("public", "1"),
        ])
        .await;
    s.create_link(&[("url", "https://example.com/q"), ("alias", "priv")])
        .await;
    for _ in 0..3 {
        s.visit(
            "/pub",
            &[("cf-ipcountry", "NL"), ("referer", "https://t.co/x")],
        )
        .await;
    }
    s.wait_for_clicks(id(&public), 3).await;
    let response = s
        .client
        .get(s.url("/pub/stats"))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    let (status, headers, stats) = json(response).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(stats["data"]["clicks"], 3);
    assert_eq!(stats["data"]["all_clicks"], 3);
    assert_eq!(stats["data"]["alias"], "pub");
    assert_eq!(stats["data"]["country"]["top"][0]["value"], "NL");
    assert_eq!(stats["data"]["country"]["top"][0]["clicks"], 3);
    assert_eq!(stats["data"]["referrer"]["top"][0]["value"], "t.co");
    assert_eq!(stats["data"]["platform"]["top"][0]["value"], "Windows");
    let timeline = stats["data"]["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 30, "the last 30 days");
    assert_eq!(timeline[29]["starts_at"], "2030-01-01T00:00:00Z");
    assert_eq!(timeline[29]["clicks"], 3);
    let (status, ct, text) = body(s.visit("/pub/stats", &[]).await).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        ct.starts_with("text/html")
            && text.contains("Clicks by day")
            && text.contains("Netherlands"),
        "{text}"
    );
    let (status, _, text) = body(s.visit("/pub/stats?period=forever", &[]).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("24h, 7d, 30d, 90d, 12m or all"), "{text}");
    let (status, _, text) = body(s.visit("/pub/stats?period=24h", &[]).await).await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("Clicks by hour"), "{text}");

    let (status, _, _) = body(s.visit("/priv/stats", &[]).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let response = s
        .client
        .get(s.url("/priv/stats"))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    let (status, _, body) = json(response).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["message"], "Resource not found.");
    s.stop().await;
}

#[tokio::test]
async fn domains_choose_where_an_alias_is_looked_up() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let domain = crate::api::add_domain(&s, s.owner_id, "https://sho.rt").await;
    s.create_link(&[("url", "https://example.com/plain"), ("alias", "same")])
        .await;
    s.create_link(&[
        ("url", "https://example.com/branded"),
        ("alias", "same"),
        ("domain", &domain.to_string()),
    ])
    .await;
    assert_eq!(
        location(&s.visit("/same", &[]).await),
        "https://example.com/plain"
    );
    for host in ["sho.rt", "SHO.RT", "sho.rt:8080"] {
        assert_eq!(
            location(&s.visit("/same", &[("host", host)]).await),
            "https://example.com/branded",
            "{host}"
        );
    }
    let (status, _, _) = body(s.visit("/same", &[("host", "other.example")]).await).await;
    assert_eq!(
        status,
        StatusCode::MOVED_PERMANENTLY,
        "unknown hosts use links without a domain"
    );
    s.stop().await;
}

#[tokio::test]
async fn configured_status_and_edits_seen_at_once() {
    let Some(mut s) = crate::serve(ServeOptions {
        redirect_status: linkdeck::domain::RedirectStatus::FOUND,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/one"), ("alias", "edit")])
        .await;
    let response = s.visit("/edit", &[]).await;
    assert_eq!(response.status(), StatusCode::FOUND);
    assert_eq!(location(&response), "https://example.com/one");
    let (status, _, _) = json(
        s.api(Method::PATCH, &format!("/api/v1/links/{}", id(&link)))
            .form(&[("url", "https://example.com/two")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        location(&s.visit("/edit", &[]).await),
        "https://example.com/two"
    );
    s.stop().await;
}

#[tokio::test]
async fn concurrent_visits_are_all_counted_after_shutdown() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/busy"), ("alias", "busy")])
        .await;
    let url = s.url("/busy");
    let client = s.client.clone();
    let statuses: Vec<StatusCode> = futures::stream::iter(0..2000)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            async move { client.get(url).send().await.unwrap().status() }
        })
        .buffer_unordered(128)
        .collect()
        .await;
    assert!(statuses.iter().all(|s| *s == StatusCode::MOVED_PERMANENTLY));
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (2000, 2000));
}

#[tokio::test]
async fn click_limit_is_exact_under_concurrency() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/limited"),
            ("alias", "hundred"),
            ("expiration_clicks", "100"),
            ("expiration_url", "https://example.com/gone"),
        ])
        .await;
    let url = s.url("/hundred");
    let client = s.client.clone();
    let locations: Vec<String> = futures::stream::iter(0..300)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            async move { location(&client.get(url).send().await.unwrap()) }
        })
        .buffer_unordered(100)
        .collect()
        .await;
    let to_url = locations
        .iter()
        .filter(|l| *l == "https://example.com/limited")
        .count();
    let to_gone = locations
        .iter()
        .filter(|l| *l == "https://example.com/gone")
        .count();
    assert_eq!((to_url, to_gone), (100, 200));
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (100, 100));
}

#[tokio::test]
async fn shutdown_writes_clicks_still_pending() {
    // A long flush interval keeps every click pending until the shutdown.
    let Some(mut s) = crate::serve(ServeOptions {
        flush_interval: std::time::Duration::from_secs(3600),
        flush_batch: 1_000_000,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/late"), ("alias", "late")])
        .await;
    let shared = Arc::new(s.client.clone());
    for _ in 0..25 {
        shared.get(s.url("/late")).send().await.unwrap();
    }
    assert_eq!(
        s.stored_clicks(id(&link)).await,
        (0, 0),
        "nothing written yet"
    );
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (25, 25));
}

#[tokio::test]
async fn geo_from_a_maxmind_database_when_the_header_is_absent() {
    let dir = tempfile::tempdir().unwrap();
    let mmdb = dir.path().join("country.mmdb");
    crate::common::tiny_geoip_db(&mmdb, "JP");
    let Some(mut s) = crate::serve(ServeOptions {
        geo_header: Some("CF-IPCountry".into()),
        geoip_db: Some(mmdb),
        ..Default::default()
    })
    .await
    else {
        return;
    };
    s.create_link(&[
        ("url", "https://example.com/"),
        ("alias", "jp"),
        ("target_type", "1"),
        ("geo[0][key]", "JP"),
        ("geo[0][value]", "https://example.jp/"),
    ])
    .await;
    assert_eq!(location(&s.visit("/jp", &[]).await), "https://example.jp/");
    assert_eq!(
        location(&s.visit("/jp", &[("cf-ipcountry", "DE")]).await),
        "https://example.com/",
        "the trusted header wins over the database"
    );
    s.stop().await;

    // A file that is not a MaxMind database is refused at start, with its name.
    let bad = dir.path().join("bad.mmdb");
    std::fs::write(&bad, b"not a database").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = linkdeck::server::serve(
        s.service.clone(),
        ServeOptions {
            geoip_db: Some(bad),
            ..Default::default()
        },
        listener,
        async {},
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("bad.mmdb"), "{err}");
}

#[tokio::test]
async fn head_requests_are_answered_but_not_counted() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/h"), ("alias", "head")])
        .await;
    let response = s.client.head(s.url("/head")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(location(&response), "https://example.com/h");
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (0, 0));
}

#[tokio::test]
async fn edits_by_another_process_are_seen_promptly() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[("url", "https://example.com/before"), ("alias", "shared")])
        .await;
    assert_eq!(
        location(&s.visit("/shared", &[]).await),
        "https://example.com/before"
    );
    // A second handle on the same database, as the TUI or the CLI in another process would open.
    let other = s.another_service().await;
    let backend = other.for_owner(s.owner_id);
    linkdeck::backend::Backend::update_link(
        &backend,
        id(&link),
        &linkdeck::domain::LinkInput {
            url: Some("https://example.com/after".into()),
            disabled: Some("1".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut redirects = 1;
    loop {
        let response = s.visit("/shared", &[]).await;
        if response.status() == StatusCode::FORBIDDEN {
            break;
        }
        redirects += 1;
        assert!(
            tokio::time::Instant::now() < deadline,
            "the edit was never seen"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    s.stop().await;
    // Every visit before the edit was seen is stored, despite the other writer.
    assert_eq!(s.stored_clicks(id(&link)).await, (redirects, redirects));
}

#[tokio::test]
async fn visits_of_a_link_deleted_before_the_write_are_dropped_not_fatal() {
    let Some(mut s) = crate::serve(ServeOptions {
        flush_interval: std::time::Duration::from_secs(3600),
        flush_batch: 1_000_000,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let gone = s
        .create_link(&[("url", "https://example.com/gone"), ("alias", "gone")])
        .await;
    let kept = s
        .create_link(&[("url", "https://example.com/kept"), ("alias", "kept")])
        .await;
    for _ in 0..3 {
        s.visit("/gone", &[]).await;
        s.visit("/kept", &[]).await;
    }
    let (status, _, _) = json(
        s.api(Method::DELETE, &format!("/api/v1/links/{}", id(&gone)))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = body(s.visit("/gone", &[]).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&kept)).await, (3, 3));
    assert_eq!(
        s.logged_visits().await,
        3,
        "only the kept link's visits are stored"
    );
}

/// The link's previews as its API record says, once they reach `n` (under a timeout, no fixed
/// sleep: the click writer batches them).
async fn previews_reach(s: &crate::common::TestServer, link_id: i64, n: u64) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let response = s
            .api(Method::GET, &format!("/api/v1/links/{link_id}"))
            .send()
            .await
            .unwrap();
        let (_, _, record) = json(response).await;
        if record["data"]["previews"].as_u64() >= Some(n) {
            return record["data"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "previews stayed at {}, wanted {n}",
            record["data"]["previews"]
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

const SLACK: &str = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)";

#[tokio::test]
async fn the_query_and_the_rest_of_the_path_go_on_as_each_link_says() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    s.create_link(&[("url", "https://example.com/p?keep=1"), ("alias", "plain")])
        .await;
    s.create_link(&[
        ("url", "https://example.com/p?keep=1"),
        ("alias", "noquery"),
        ("forward_query", "0"),
    ])
    .await;
    s.create_link(&[
        ("url", "https://docs.example/v2/?keep=1"),
        ("alias", "docs"),
        ("forward_path", "1"),
    ])
    .await;
    let s = &s;
    let to = |path: &'static str| async move { location(&s.visit(path, &[]).await) };
    // Defaults: the visitor's query merged in (theirs win on a clash), no path forwarded.
    assert_eq!(
        to("/plain?keep=2&utm=x").await,
        "https://example.com/p?keep=2&utm=x"
    );
    assert_eq!(
        s.visit("/plain/extra", &[]).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(to("/noquery?utm=x").await, "https://example.com/p?keep=1");
    assert_eq!(
        to("/docs/guide/install?utm=x").await,
        "https://docs.example/v2/guide/install?keep=1&utm=x"
    );
    assert_eq!(
        to("/docs/a%20b/").await,
        "https://docs.example/v2/a%20b/?keep=1"
    );
    assert_eq!(to("/docs").await, "https://docs.example/v2/?keep=1");
    // Nothing that could leave the destination's path: an unknown path, as without the option.
    for path in [
        "/docs//evil.example",
        "/docs/%2e%2e/x",
        "/docs/.%2E/x",
        "/docs/x%2f..%2fy",
        "/docs/x%5c@evil.example",
        "/docs/x%0d%0aSet-Cookie:%20a=1",
    ] {
        let response = s.visit(path, &[]).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }
    let long = format!("/docs/{}", "a".repeat(1100));
    assert_eq!(s.visit(&long, &[]).await.status(), StatusCode::NOT_FOUND);
    // The link's own pages keep their paths.
    assert_eq!(s.visit("/docs/+", &[]).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn redirects_are_noindex_unless_the_link_allows_indexing() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    s.create_link(&[("url", "https://example.com/a"), ("alias", "hidden")])
        .await;
    s.create_link(&[
        ("url", "https://example.com/b"),
        ("alias", "shown"),
        ("allow_indexing", "1"),
    ])
    .await;
    let hidden = s.visit("/hidden", &[]).await;
    assert_eq!(hidden.headers()["x-robots-tag"], "noindex");
    let shown = s.visit("/shown", &[]).await;
    assert_eq!(location(&shown), "https://example.com/b");
    assert!(shown.headers().get("x-robots-tag").is_none());
    let bot = s.visit("/shown", &[("user-agent", BOT)]).await;
    assert!(bot.headers().get("x-robots-tag").is_none());
}

#[tokio::test]
async fn preview_agents_see_the_card_and_are_counted_apart_people_are_redirected() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://example.com/sale"),
            ("alias", "sale"),
            ("preview_title", "Spring <sale> & \"more\""),
            (
                "preview_description",
                "Half price</title><script>x()</script>",
            ),
            ("preview_image", "https://img.example/s.png?a=1&b=2"),
        ])
        .await;
    assert_eq!(link["preview_title"], "Spring <sale> & \"more\"");
    assert_eq!(link["previews"], 0);
    let card = s.visit("/sale?utm=chat", &[("user-agent", SLACK)]).await;
    assert_eq!(card.headers()["x-robots-tag"], "noindex");
    let (status, ct, html) = body(card).await;
    assert_eq!(
        (status, ct.as_str()),
        (StatusCode::OK, "text/html; charset=utf-8")
    );
    for tag in [
        r#"<meta property="og:title" content="Spring &lt;sale&gt; &amp; &quot;more&quot;">"#,
        r#"<meta name="twitter:title" content="Spring &lt;sale&gt; &amp; &quot;more&quot;">"#,
        r#"<meta property="og:description" content="Half price&lt;/title&gt;&lt;script&gt;x()&lt;/script&gt;">"#,
        r#"<meta property="og:image" content="https://img.example/s.png?a=1&amp;b=2">"#,
        r#"<meta name="twitter:card" content="summary_large_image">"#,
        r#"<meta property="og:url" content="https://example.com/sale?utm=chat">"#,
    ] {
        assert!(html.contains(tag), "{tag} in {html}");
    }
    assert!(!html.contains("<script>"), "{html}");
    // A browser is redirected as before, and counted as a click.
    let person = s.visit("/sale", &[]).await;
    assert_eq!(location(&person), "https://example.com/sale");
    assert!(person.headers().get("x-robots-tag").is_some());
    // A preview agent on a link without a card is sent on, counted as a preview too.
    let plain = s
        .create_link(&[("url", "https://example.com/plain"), ("alias", "nocard")])
        .await;
    let sent = s.visit("/nocard", &[("user-agent", SLACK)]).await;
    assert_eq!(location(&sent), "https://example.com/plain");
    let record = previews_reach(&s, id(&link), 1).await;
    assert_eq!(record["previews"], 1);
    previews_reach(&s, id(&plain), 1).await;
    s.stop().await;
    assert_eq!(
        s.stored_clicks(id(&link)).await,
        (1, 1),
        "a preview is not a click"
    );
    assert_eq!(s.stored_clicks(id(&plain)).await, (0, 0));
}

#[tokio::test]
async fn bad_options_are_field_errors_naming_the_field() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let response = s
        .api(Method::POST, "/api/v1/links")
        .form(&[
            ("url", "https://example.com"),
            ("forward_query", "maybe"),
            ("preview_title", &"t".repeat(201)),
            ("preview_image", "ftp://img.example/a.png"),
        ])
        .send()
        .await
        .unwrap();
    let (status, _, body) = json(response).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let fields = body["message"].as_object().unwrap();
    let mut names: Vec<&str> = fields.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        ["forward_query", "preview_image", "preview_title"],
        "{body}"
    );
}

/// A password-protected link that forwards the rest of its path: its form is answered at the
/// path asked for, and the right password there leads on with the rest of the path.
#[tokio::test]
async fn a_protected_link_keeps_the_rest_of_the_path_through_its_form() {
    let Some(mut s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s
        .create_link(&[
            ("url", "https://docs.example/v2"),
            ("alias", "locked-docs"),
            ("password", "open sesame"),
            ("forward_path", "1"),
        ])
        .await;
    let (status, _, text) = body(s.visit("/locked-docs/guide?ref=x", &[]).await).await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("name=\"password\""), "{text}");
    let post = |password: &'static str| {
        s.client
            .post(s.url("/locked-docs/guide?ref=x"))
            .form(&[("password", password)])
            .send()
    };
    let (status, _, text) = body(post("wrong").await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(text.contains("not right"));
    let response = post("open sesame").await.unwrap();
    assert_eq!(location(&response), "https://docs.example/v2/guide?ref=x");
    // A path the link may not take is an unknown one, for a form post too.
    let refused = s
        .client
        .post(s.url("/locked-docs//evil.example"))
        .form(&[("password", "open sesame")])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    s.stop().await;
    assert_eq!(s.stored_clicks(id(&link)).await, (1, 1));
}
