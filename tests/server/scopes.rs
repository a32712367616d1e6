//! What a key may do, path by path: a read-only key reads everything its owner's full key reads
//! and is refused (403, saying why) every request that would change data, which then changes
//! nothing; a key past its expiry is refused as a revoked one is (401).

use jiff::SignedDuration;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::{TestServer, json};
use linkdeck::backend::local::KeyGrant;
use linkdeck::domain::Clock;
use linkdeck::server::ServeOptions;

/// Every path of the API with the method, and whether it changes data. `{link}` and `{space}`
/// stand for records of the key's owner.
const PATHS: &[(Method, &str, bool)] = &[
    (Method::GET, "/api/v1/links", false),
    (Method::POST, "/api/v1/links", true),
    (Method::GET, "/api/v1/links/{link}", false),
    (Method::PUT, "/api/v1/links/{link}", true),
    (Method::PATCH, "/api/v1/links/{link}", true),
    (Method::DELETE, "/api/v1/links/{link}", true),
    (Method::GET, "/api/v1/spaces", false),
    (Method::POST, "/api/v1/spaces", true),
    (Method::GET, "/api/v1/spaces/{space}", false),
    (Method::PUT, "/api/v1/spaces/{space}", true),
    (Method::PATCH, "/api/v1/spaces/{space}", true),
    (Method::DELETE, "/api/v1/spaces/{space}", true),
    (Method::GET, "/api/v1/domains", false),
    (Method::GET, "/api/v1/stats", false),
    (Method::GET, "/api/v1/stats/{link}", false),
    (Method::GET, "/api/linkdeck/capabilities", false),
    (Method::GET, "/api/linkdeck/traffic?ids={link}", false),
    (Method::GET, "/api/linkdeck/visits?link={link}", false),
    (Method::POST, "/api/linkdeck/import", true),
];

/// A body each write would be accepted with from a full key.
fn body(method: &Method, path: &str) -> Option<Vec<(&'static str, &'static str)>> {
    match (method.as_str(), path) {
        ("POST", "/api/v1/links") => Some(vec![("url", "https://example.com/new")]),
        ("PUT" | "PATCH", p) if p.contains("/links/") => Some(vec![("title", "Renamed")]),
        ("POST", "/api/v1/spaces") => Some(vec![("name", "New"), ("color", "2")]),
        ("PUT" | "PATCH", p) if p.contains("/spaces/") => Some(vec![("name", "Renamed")]),
        _ => None,
    }
}

async fn ask(s: &TestServer, key: &str, method: &Method, path: &str) -> (StatusCode, Value) {
    let mut request = s.api_as(key, method.clone(), path);
    if let Some(fields) = body(method, path) {
        request = request.form(&fields);
    }
    if path.ends_with("/import") {
        request = request
            .header("content-type", "application/json")
            .body(r#"{"links": []}"#);
    }
    let response = request.send().await.unwrap();
    if path.contains("/visits") && response.status().is_success() {
        // A stream of visits, not a JSON record.
        let status = response.status();
        return (status, Value::String(response.text().await.unwrap()));
    }
    let (status, _, body) = json(response).await;
    (status, body)
}

#[tokio::test]
async fn a_read_only_key_reads_every_path_and_is_refused_every_write() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let link = s.create_link(&[("url", "https://example.com/a")]).await["id"].clone();
    let space = s
        .api(Method::POST, "/api/v1/spaces")
        .form(&[("name", "Launch"), ("color", "1")])
        .send()
        .await
        .unwrap();
    let space: Value = space.json().await.unwrap();
    let space = space["data"]["id"].clone();
    let (read_only, info) = s
        .service
        .create_key_with(
            s.owner_id,
            Some("dashboard"),
            KeyGrant {
                read_only: true,
                expires_at: None,
            },
        )
        .await
        .unwrap();
    assert!(info.read_only);
    let before = s.service.list_keys(Some(s.owner_id)).await.unwrap().len();
    for (method, path, writes) in PATHS {
        let path = path
            .replace("{link}", &link.to_string())
            .replace("{space}", &space.to_string());
        let (status, body) = ask(&s, &read_only, method, &path).await;
        if *writes {
            assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {body}");
            let message = body["message"].as_str().unwrap_or_default();
            assert!(message.contains("only read"), "{method} {path}: {body}");
        } else {
            assert!(status.is_success(), "{method} {path}: {status} {body}");
            // The full key reads the same.
            let (full, same) = ask(&s, &s.key, method, &path).await;
            assert_eq!((full, same), (status, body), "{method} {path}");
        }
    }
    // Nothing the refused writes asked for happened.
    let (_, links) = ask(&s, &s.key, &Method::GET, "/api/v1/links").await;
    assert_eq!(links["meta"]["total"], 1, "{links}");
    assert_eq!(links["data"][0]["title"], "example.com/a", "{links}");
    let (_, spaces) = ask(&s, &s.key, &Method::GET, "/api/v1/spaces").await;
    assert_eq!(spaces["data"][0]["name"], "Launch", "{spaces}");
    assert_eq!(
        s.service.list_keys(Some(s.owner_id)).await.unwrap().len(),
        before
    );
    // The owner's full key still writes on each of those paths.
    for (method, path, writes) in PATHS.iter().filter(|p| p.2) {
        let path = path
            .replace("{link}", &link.to_string())
            .replace("{space}", &space.to_string());
        let (status, body) = ask(&s, &s.key, method, &path).await;
        assert!(
            status != StatusCode::FORBIDDEN && status != StatusCode::UNAUTHORIZED,
            "{method} {path} ({writes}): {status} {body}"
        );
    }
}

#[tokio::test]
async fn a_key_works_until_it_expires_and_is_refused_after() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let now = s.clock.now();
    let expiring = |at| {
        let grant = KeyGrant {
            read_only: false,
            expires_at: Some(at),
        };
        s.service.create_key_with(s.owner_id, None, grant)
    };
    let tomorrow = now + SignedDuration::from_hours(24);
    let (key, info) = expiring(tomorrow).await.unwrap();
    assert_eq!(info.expires_at, Some(tomorrow));
    let (status, _) = ask(&s, &key, &Method::GET, "/api/v1/links").await;
    assert_eq!(status, StatusCode::OK);
    s.clock.set(tomorrow);
    let (status, body) = ask(&s, &key, &Method::GET, "/api/v1/links").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    // A key cannot be made already expired.
    let refused = expiring(tomorrow).await.unwrap_err();
    assert!(refused.to_string().contains("expires"), "{refused}");
}
