//! Where a host sends a visitor no link takes (its root, an unknown alias, a disabled or
//! expired link without its own expiration URL), its robots.txt, and `X-Robots-Tag` on every
//! redirect: per domain (set through the v1 API) and for the server's own host (`[serve]`).

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::{TestServer, json, location};
use linkdeck::domain::{HostSettings, Robots};
use linkdeck::server::ServeOptions;

/// A server whose own host sends its visitors to `own.example`, with a domain `sho.rt` that
/// sends them to `sho.example`; its id.
async fn two_hosts() -> Option<(TestServer, i64)> {
    let opts = ServeOptions {
        host: HostSettings {
            root_url: Some("https://own.example/".into()),
            unknown_url: Some("https://own.example/unknown".into()),
            expired_url: Some("https://own.example/gone".into()),
            robots: Robots::Allow,
        },
        ..ServeOptions::default()
    };
    let s = crate::serve(opts).await?;
    let domain = crate::api::add_domain(&s, s.owner_id, "https://sho.rt").await;
    Some((s, domain))
}

async fn set(s: &TestServer, domain: i64, fields: &[(&str, &str)]) -> (StatusCode, Value) {
    let (status, _, body) = json(
        s.api(Method::PUT, &format!("/api/v1/domains/{domain}"))
            .form(fields)
            .send()
            .await
            .unwrap(),
    )
    .await;
    (status, body)
}

/// Where `path` on `host` sends a visitor: the status and the `Location`, if any.
async fn sent(s: &TestServer, host: &str, path: &str) -> (StatusCode, String) {
    let response = s.visit(path, &[("host", host)]).await;
    let status = response.status();
    let to = response
        .headers()
        .get("location")
        .map(|_| location(&response))
        .unwrap_or_default();
    (status, to)
}

#[tokio::test]
async fn each_fallback_on_each_host() {
    let Some((s, domain)) = two_hosts().await else {
        return;
    };
    let (status, body) = set(
        &s,
        domain,
        &[
            ("root_url", "https://sho.example/"),
            ("unknown_url", "https://sho.example/unknown"),
            ("expired_url", "https://sho.example/gone"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["root_url"], "https://sho.example/");
    assert_eq!(body["data"]["robots"], "disallow");
    let domain_field = domain.to_string();
    for (alias, extra) in [
        ("off", vec![("disabled", "1")]),
        (
            "old",
            vec![
                ("expiration_date", "2029-12-31"),
                ("expiration_time", "00:00"),
            ],
        ),
        (
            "oldown",
            vec![
                ("expiration_date", "2029-12-31"),
                ("expiration_time", "00:00"),
                ("expiration_url", "https://example.com/own"),
            ],
        ),
    ] {
        for on_domain in [false, true] {
            let mut fields = vec![("url", "https://example.com/x"), ("alias", alias)];
            fields.extend(extra.iter().copied());
            if on_domain {
                fields.push(("domain", &domain_field));
            }
            s.create_link(&fields).await;
        }
    }
    let found = StatusCode::FOUND;
    for (host, site) in [("127.0.0.1", "own"), ("sho.rt", "sho")] {
        let at = |path: &str| format!("https://{site}.example{path}");
        assert_eq!(sent(&s, host, "/").await, (found, at("/")), "{host}");
        assert_eq!(
            sent(&s, host, "/nope").await,
            (found, at("/unknown")),
            "{host}"
        );
        assert_eq!(
            sent(&s, host, "/x/y/z").await,
            (found, at("/unknown")),
            "{host}"
        );
        assert_eq!(sent(&s, host, "/off").await, (found, at("/gone")), "{host}");
        assert_eq!(sent(&s, host, "/old").await, (found, at("/gone")), "{host}");
        // A link's own expiration URL comes first, at the link's own status.
        assert_eq!(
            sent(&s, host, "/oldown").await,
            (
                StatusCode::MOVED_PERMANENTLY,
                "https://example.com/own".into()
            ),
            "{host}"
        );
        // The preview shows where the visitor would go.
        let preview = s
            .visit("/off/+", &[("host", host)])
            .await
            .text()
            .await
            .unwrap();
        assert!(preview.contains(&at("/gone")), "{host}: {preview}");
    }

    // Cleared, the domain shows linkdeck's own pages again; the own host keeps its settings.
    let (status, body) = set(
        &s,
        domain,
        &[("root_url", ""), ("unknown_url", ""), ("expired_url", "")],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["root_url"], Value::Null);
    assert_eq!(sent(&s, "sho.rt", "/").await.0, StatusCode::NOT_FOUND);
    assert_eq!(sent(&s, "sho.rt", "/nope").await.0, StatusCode::NOT_FOUND);
    assert_eq!(sent(&s, "sho.rt", "/off").await.0, StatusCode::FORBIDDEN);
    assert_eq!(sent(&s, "sho.rt", "/old").await.0, StatusCode::GONE);
    assert_eq!(
        sent(&s, "127.0.0.1", "/off").await.1,
        "https://own.example/gone"
    );
}

#[tokio::test]
async fn without_settings_the_pages_are_as_before() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    assert_eq!(sent(&s, "127.0.0.1", "/").await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        sent(&s, "127.0.0.1", "/nope").await.0,
        StatusCode::NOT_FOUND
    );
    let robots = s.visit("/robots.txt", &[]).await;
    assert_eq!(robots.status(), StatusCode::OK);
    assert!(
        robots.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(robots.text().await.unwrap(), "User-agent: *\nDisallow: /\n");
}

#[tokio::test]
async fn robots_txt_answers_per_host() {
    let Some((s, domain)) = two_hosts().await else {
        return;
    };
    let robots = |host: &'static str| {
        let s = &s;
        async move {
            let response = s.visit("/robots.txt", &[("host", host)]).await;
            assert_eq!(response.status(), StatusCode::OK, "{host}");
            response.text().await.unwrap()
        }
    };
    // The own host allows (its [serve] says so); a new domain keeps crawlers out.
    assert_eq!(robots("127.0.0.1").await, "User-agent: *\nDisallow:\n");
    assert_eq!(robots("sho.rt").await, "User-agent: *\nDisallow: /\n");
    let custom = "User-agent: *\nAllow: /$\nDisallow: /\n";
    let (status, body) = set(&s, domain, &[("robots_txt", custom)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["robots"], "custom");
    assert_eq!(body["data"]["robots_txt"], custom);
    assert_eq!(robots("sho.rt").await, custom);
    assert_eq!(robots("SHO.RT:80").await, custom);
    let (status, _) = set(&s, domain, &[("robots", "allow")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(robots("sho.rt").await, "User-agent: *\nDisallow:\n");
}

#[tokio::test]
async fn every_redirect_says_noindex() {
    let Some((s, _)) = two_hosts().await else {
        return;
    };
    s.create_link(&[("url", "https://example.com/a"), ("alias", "a")])
        .await;
    s.create_link(&[
        ("url", "https://example.com/b"),
        ("alias", "b"),
        ("expiration_clicks", "1"),
        ("expiration_url", "https://example.com/after"),
    ])
    .await;
    for (host, path) in [
        ("127.0.0.1", "/a"),
        ("127.0.0.1", "/b"),
        ("127.0.0.1", "/b"),
        ("127.0.0.1", "/"),
        ("127.0.0.1", "/unknown"),
    ] {
        let response = s.visit(path, &[("host", host)]).await;
        assert!(response.status().is_redirection(), "{path}");
        assert_eq!(response.headers()["x-robots-tag"], "noindex", "{path}");
    }
}

#[tokio::test]
async fn bad_settings_are_named_and_others_cannot_set_them() {
    let Some((s, domain)) = two_hosts().await else {
        return;
    };
    let (status, body) = set(
        &s,
        domain,
        &[
            ("root_url", "javascript:alert(1)"),
            ("robots", "sometimes"),
            ("robots_txt", "x"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = &body["message"];
    assert!(message["root_url"].is_array(), "{body}");
    assert!(message["robots"].is_array(), "{body}");
    let (status, body) = set(&s, domain, &[("colour", "red")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["message"]["colour"].is_array(), "{body}");
    let long = "a".repeat(5000);
    let (status, body) = set(&s, domain, &[("robots_txt", &long)]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["message"]["robots_txt"].is_array(), "{body}");
    // Nothing was changed by the refused requests.
    assert_eq!(sent(&s, "sho.rt", "/").await.0, StatusCode::NOT_FOUND);

    // Another owner's domain is not found, and stays as it is.
    let (_, key) = s.other_owner("mallory").await;
    let (status, _, _) = json(
        s.api_as(&key, Method::PUT, &format!("/api/v1/domains/{domain}"))
            .form(&[("root_url", "https://evil.example/")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(sent(&s, "sho.rt", "/").await.0, StatusCode::NOT_FOUND);
}
