//! What a key may do, path by path, for every path of the API (v1 and linkdeck's own):
//! - a read-only key reads everything its owner's full key reads and is refused (403, saying
//!   why) every request that would change data, which then changes nothing;
//! - a key limited to a space reads and changes the links of that space as a full key would,
//!   finds nothing outside it (404, as for another owner's records), and is refused (403, saying
//!   why) what concerns the whole account; nothing outside its space changes;
//! - a key past its expiry is refused as a revoked one is (401).

use jiff::SignedDuration;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{TestServer, json};
use linkdeck::backend::local::KeyGrant;
use linkdeck::backend::local::webhooks::{DeliveryPolicy, WebhookKey};
use linkdeck::domain::{Clock, SpaceSet};
use linkdeck::server::{ServeOptions, WebhookSettings};

/// How far a key limited to spaces reaches on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Answered as for a full key about records in its spaces; not found about others'.
    Space,
    /// Refused (403): the path concerns the whole account.
    Account,
}

use Reach::{Account, Space};

/// Every path of the API with its method and how far a space-limited key reaches there. The
/// placeholders stand for records of the key's owner: `{link}` a link in `{space}`, `{domain}`
/// a domain, `{hook}` a webhook.
const PATHS: &[(Method, &str, Reach)] = &[
    (Method::GET, "/api/v1/links", Space),
    (Method::POST, "/api/v1/links", Space),
    (Method::GET, "/api/v1/links/{link}", Space),
    (Method::PUT, "/api/v1/links/{link}", Space),
    (Method::PATCH, "/api/v1/links/{link}", Space),
    (Method::GET, "/api/v1/spaces", Space),
    (Method::POST, "/api/v1/spaces", Account),
    (Method::GET, "/api/v1/spaces/{space}", Space),
    (Method::PUT, "/api/v1/spaces/{space}", Account),
    (Method::PATCH, "/api/v1/spaces/{space}", Account),
    (Method::GET, "/api/v1/domains", Space),
    (Method::GET, "/api/v1/domains/{domain}", Space),
    (Method::PUT, "/api/v1/domains/{domain}", Account),
    (Method::PATCH, "/api/v1/domains/{domain}", Account),
    (Method::GET, "/api/v1/stats", Account),
    (Method::GET, "/api/v1/stats?space={space}", Space),
    (Method::GET, "/api/v1/stats/{link}", Space),
    (Method::GET, "/api/linkdeck/capabilities", Space),
    (Method::GET, "/api/linkdeck/traffic?ids={link}", Space),
    (Method::GET, "/api/linkdeck/tags", Account),
    (Method::POST, "/api/linkdeck/tags/rename", Account),
    (Method::GET, "/api/linkdeck/visits", Account),
    (Method::GET, "/api/linkdeck/visits?link={link}", Space),
    (
        Method::GET,
        "/api/linkdeck/visits/live?space={space}",
        Space,
    ),
    (Method::POST, "/api/linkdeck/import", Account),
    (Method::GET, "/api/linkdeck/orphans", Account),
    (Method::GET, "/api/linkdeck/links/{link}/rules", Space),
    (Method::PUT, "/api/linkdeck/links/{link}/rules", Space),
    (Method::GET, "/api/linkdeck/webhooks", Account),
    (Method::POST, "/api/linkdeck/webhooks", Account),
    (Method::GET, "/api/linkdeck/webhooks/{hook}", Account),
    (
        Method::GET,
        "/api/linkdeck/webhooks/{hook}/deliveries",
        Account,
    ),
    (
        Method::POST,
        "/api/linkdeck/webhooks/{hook}/resume",
        Account,
    ),
    (
        Method::POST,
        "/api/linkdeck/webhooks/{hook}/secret",
        Account,
    ),
    // Deletes last: what they delete is gone for the rows after them.
    (Method::DELETE, "/api/linkdeck/webhooks/{hook}", Account),
    (Method::DELETE, "/api/v1/links/{link}", Space),
    (Method::DELETE, "/api/v1/spaces/{space}", Account),
];

/// The body a request is accepted with from a full key.
enum Body {
    None,
    Form(&'static [(&'static str, &'static str)]),
    Json(Value),
}

fn body(method: &Method, path: &str) -> Body {
    let writes = !method.is_safe();
    match path {
        "/api/v1/links" if writes => Body::Form(&[("url", "https://example.com/new")]),
        p if writes && p.starts_with("/api/v1/links/") => {
            Body::Form(&[("url", "https://example.com/changed")])
        }
        "/api/v1/spaces" if writes => Body::Form(&[("name", "New"), ("color", "2")]),
        p if writes && p.starts_with("/api/v1/spaces/") => Body::Form(&[("name", "Renamed")]),
        p if writes && p.starts_with("/api/v1/domains/") => {
            Body::Form(&[("root_url", "https://example.com/home")])
        }
        "/api/linkdeck/tags/rename" => Body::Form(&[("from", "promo"), ("to", "sale")]),
        "/api/linkdeck/import" => Body::Json(json!({"links": []})),
        p if writes && p.ends_with("/rules") => {
            Body::Json(json!({"rules": ["country DE => https://example.de/"]}))
        }
        "/api/linkdeck/webhooks" if writes => {
            Body::Json(json!({"url": "https://hooks.example.com/in", "events": ["link.created"]}))
        }
        _ => Body::None,
    }
}

/// The status and body of `method path` asked with `key`. A live feed never ends: only its
/// status is read.
async fn ask(s: &TestServer, key: &str, method: &Method, path: &str) -> (StatusCode, Value) {
    let mut request = s.api_as(key, method.clone(), path);
    request = match body(method, path.split('?').next().unwrap_or(path)) {
        Body::None => request,
        Body::Form(fields) => request.form(fields),
        Body::Json(value) => request.json(&value),
    };
    let response = request.send().await.unwrap();
    let status = response.status();
    if path.contains("/visits") && status.is_success() {
        if path.contains("/live") {
            return (status, Value::Null);
        }
        return (status, Value::String(response.text().await.unwrap()));
    }
    let (status, _, body) = json(response).await;
    (status, body)
}

fn with_webhooks() -> ServeOptions {
    ServeOptions {
        webhooks: Some(WebhookSettings {
            key: WebhookKey::from_text(&"k".repeat(40)).unwrap(),
            policy: DeliveryPolicy::default(),
        }),
        ..ServeOptions::default()
    }
}

/// The owner's records the paths name, made with the full key.
struct Records {
    link: Value,
    space: Value,
    domain: Value,
    hook: Value,
}

impl Records {
    async fn make(s: &TestServer, space_name: &str, alias: &str) -> Records {
        let space = s
            .api(Method::POST, "/api/v1/spaces")
            .form(&[("name", space_name), ("color", "1")])
            .send()
            .await
            .unwrap();
        let space: Value = space.json().await.unwrap();
        let space = space["data"]["id"].clone();
        let url = format!("https://example.com/{alias}");
        let space_id = space.to_string();
        let link = s
            .create_link(&[
                ("url", &url),
                ("alias", alias),
                ("space", &space_id),
                ("tags", "promo"),
            ])
            .await["id"]
            .clone();
        let host = format!("https://{alias}.example");
        let domain = Value::from(crate::api::add_domain(s, s.owner_id, &host).await);
        let (status, hook) = ask(s, &s.key, &Method::POST, "/api/linkdeck/webhooks").await;
        assert_eq!(status, StatusCode::CREATED, "{hook}");
        Records {
            link,
            space,
            domain,
            hook: hook["data"]["webhook"]["id"].clone(),
        }
    }

    fn path(&self, template: &str) -> String {
        template
            .replace("{link}", &self.link.to_string())
            .replace("{space}", &self.space.to_string())
            .replace("{domain}", &self.domain.to_string())
            .replace("{hook}", &self.hook.to_string())
    }
}

/// What the full key reads at `paths`.
async fn read_all(s: &TestServer, paths: &[String]) -> Vec<(StatusCode, Value)> {
    let mut seen = Vec::new();
    for path in paths {
        seen.push(ask(s, &s.key, &Method::GET, path).await);
    }
    seen
}

async fn key_with(s: &TestServer, grant: KeyGrant) -> String {
    s.service
        .create_key_with(s.owner_id, Some("scoped"), grant)
        .await
        .unwrap()
        .0
}

#[tokio::test]
async fn a_read_only_key_reads_every_path_and_is_refused_every_write() {
    let Some(s) = crate::serve(with_webhooks()).await else {
        return;
    };
    let records = Records::make(&s, "Launch", "a").await;
    let read_only = key_with(
        &s,
        KeyGrant {
            read_only: true,
            ..KeyGrant::default()
        },
    )
    .await;
    let keys_before = s.service.list_keys(Some(s.owner_id)).await.unwrap().len();
    for (method, path, _) in PATHS {
        let path = records.path(path);
        let (status, body) = ask(&s, &read_only, method, &path).await;
        if method.is_safe() {
            // The full key reads the same.
            let (full, same) = ask(&s, &s.key, method, &path).await;
            assert_eq!((status, &body), (full, &same), "{method} {path}");
        } else {
            assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {body}");
            let message = body["message"].as_str().unwrap_or_default();
            assert!(message.contains("only read"), "{method} {path}: {body}");
        }
    }
    // Nothing the refused writes asked for happened.
    let (_, links) = ask(&s, &s.key, &Method::GET, "/api/v1/links").await;
    assert_eq!(links["meta"]["total"], 1, "{links}");
    assert_eq!(links["data"][0]["title"], "example.com/a", "{links}");
    let (_, spaces) = ask(&s, &s.key, &Method::GET, "/api/v1/spaces").await;
    assert_eq!(spaces["data"][0]["name"], "Launch", "{spaces}");
    let (_, hooks) = ask(&s, &s.key, &Method::GET, "/api/linkdeck/webhooks").await;
    assert_eq!(hooks["data"].as_array().map(Vec::len), Some(1), "{hooks}");
    assert_eq!(
        s.service.list_keys(Some(s.owner_id)).await.unwrap().len(),
        keys_before
    );
    // The owner's full key still writes on each of those paths.
    for (method, path, _) in PATHS.iter().filter(|p| !p.0.is_safe()) {
        let path = records.path(path);
        let (status, body) = ask(&s, &s.key, method, &path).await;
        assert!(
            status.is_success(),
            "{method} {path} with the full key: {status} {body}"
        );
    }
}

#[tokio::test]
async fn a_space_limited_key_reaches_its_space_only_on_every_path() {
    let Some(s) = crate::serve(with_webhooks()).await else {
        return;
    };
    let outside = Records::make(&s, "Other", "theirs").await;
    let loose = s.create_link(&[("url", "https://example.com/loose")]).await["id"].clone();
    let mine = Records::make(&s, "Mine", "mine").await;
    let space: i64 = mine.space.as_i64().unwrap();
    let limited = key_with(
        &s,
        KeyGrant {
            spaces: SpaceSet::new([space]),
            ..KeyGrant::default()
        },
    )
    .await;
    let elsewhere = [
        outside.path("/api/v1/links/{link}"),
        format!("/api/v1/links/{loose}"),
        outside.path("/api/v1/spaces/{space}"),
        outside.path("/api/v1/domains/{domain}"),
    ];
    let untouched = read_all(&s, &elsewhere).await;

    for (method, template, reach) in PATHS {
        // About records in the key's space.
        let path = mine.path(template);
        let (status, body) = ask(&s, &limited, method, &path).await;
        let wanted = match reach {
            Account => StatusCode::FORBIDDEN,
            Space if *method == Method::POST => StatusCode::CREATED,
            Space => StatusCode::OK,
        };
        assert_eq!(status, wanted, "{method} {path}: {body}");
        if *reach == Account {
            let message = body["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("limited to space"),
                "{method} {path}: {body}"
            );
        }
        // About another space's records: as if they did not exist.
        if *reach == Space && (template.contains("{link}") || template.contains("{space}")) {
            let path = outside.path(template);
            let (status, body) = ask(&s, &limited, method, &path).await;
            if template.contains("traffic?ids=") {
                // A list of links, which leaves another space's out.
                assert_eq!(
                    (status, &body["data"]),
                    (StatusCode::OK, &json!([])),
                    "{path}"
                );
            } else {
                assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
            }
        }
    }

    // Lists hold the key's space only; a link made without a space goes there.
    let (_, made) = ask(&s, &limited, &Method::GET, "/api/v1/links").await;
    let made_in: Vec<&Value> = made["data"].as_array().unwrap().iter().collect();
    assert_eq!(made["meta"]["total"], 1, "{made}");
    assert_eq!(made_in[0]["space"]["id"], mine.space, "{made}");
    assert_eq!(made_in[0]["url"], "https://example.com/new", "{made}");
    let (_, spaces) = ask(&s, &limited, &Method::GET, "/api/v1/spaces").await;
    assert_eq!(spaces["meta"]["total"], 1, "{spaces}");
    for (field, value) in [
        ("space", outside.space.to_string()),
        ("space", String::new()),
    ] {
        let link = made_in[0]["id"].to_string();
        let response = s
            .api_as(&limited, Method::PATCH, &format!("/api/v1/links/{link}"))
            .form(&[(field, value.as_str())])
            .send()
            .await
            .unwrap();
        let (status, _, body) = json(response).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{value:?}: {body}"
        );
        assert!(body["message"]["space"].is_array(), "{body}");
    }
    let (status, body) = {
        let response = s
            .api_as(&limited, Method::GET, "/api/v1/links?space=none")
            .send()
            .await
            .unwrap();
        let (status, _, body) = json(response).await;
        (status, body)
    };
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // Nothing outside its space changed.
    assert_eq!(read_all(&s, &elsewhere).await, untouched);
    for hook in [&outside.hook, &mine.hook] {
        let path = format!("/api/linkdeck/webhooks/{hook}");
        assert_eq!(ask(&s, &s.key, &Method::GET, &path).await.0, StatusCode::OK);
    }
}

#[tokio::test]
async fn a_key_of_several_spaces_lists_them_all_and_must_say_where_a_link_goes() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let mut spaces = Vec::new();
    for name in ["One", "Two", "Three"] {
        let response = s
            .api(Method::POST, "/api/v1/spaces")
            .form(&[("name", name), ("color", "1")])
            .send()
            .await
            .unwrap();
        let (_, _, body) = json(response).await;
        let id = body["data"]["id"].as_i64().unwrap();
        s.create_link(&[
            ("url", &format!("https://example.com/{name}")),
            ("space", &id.to_string()),
        ])
        .await;
        spaces.push(id);
    }
    let limited = key_with(
        &s,
        KeyGrant {
            spaces: SpaceSet::new([spaces[0], spaces[2]]),
            ..KeyGrant::default()
        },
    )
    .await;
    let (_, links) = ask(&s, &limited, &Method::GET, "/api/v1/links?per_page=10").await;
    let mut urls: Vec<&str> = links["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["url"].as_str().unwrap())
        .collect();
    urls.sort_unstable();
    assert_eq!(
        urls,
        ["https://example.com/One", "https://example.com/Three"]
    );
    assert_eq!(links["meta"]["total"], 2);
    let (_, found) = ask(&s, &limited, &Method::GET, "/api/v1/links?search=Two").await;
    assert_eq!(found["meta"]["total"], 0, "{found}");
    let (status, _) = ask(
        &s,
        &limited,
        &Method::GET,
        &format!("/api/v1/links?space={}", spaces[1]),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Without a space there is no telling which of the two it means.
    let response = s
        .api_as(&limited, Method::POST, "/api/v1/links")
        .form(&[("url", "https://example.com/where")])
        .send()
        .await
        .unwrap();
    let (status, _, body) = json(response).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = body["message"]["space"][0].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("spaces {} and {}", spaces[0], spaces[2])),
        "{body}"
    );
    // A key cannot be limited to a space that is not its owner's.
    let (_, other) = s.other_owner("bob").await;
    let _ = other;
    let refused = s
        .service
        .create_key_with(
            s.owner_id,
            None,
            KeyGrant {
                spaces: SpaceSet::new([spaces[0], 999]),
                ..KeyGrant::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("space 999 not found"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_key_works_until_it_expires_and_is_refused_after() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let now = s.clock.now();
    let expiring = |at| {
        let grant = KeyGrant {
            expires_at: Some(at),
            ..KeyGrant::default()
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
