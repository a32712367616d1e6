//! Webhook subscriptions over linkdeck's own API: made, read and deleted by the key's owner
//! only; bad input answered 422 naming the field; a private receiver refused without the
//! operator's switch; a read-only key may read and is refused the rest; an event is queued in
//! the transaction of the change it tells of. (Delivery itself: `server_pg/webhooks.rs`.)

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{TestServer, json};
use linkdeck::backend::local::KeyGrant;
use linkdeck::backend::local::webhooks::{DeliveryPolicy, WebhookKey};
use linkdeck::server::{ServeOptions, WebhookSettings};

fn delivering() -> ServeOptions {
    ServeOptions {
        webhooks: Some(WebhookSettings {
            key: WebhookKey::from_text(&"k".repeat(40)).unwrap(),
            policy: DeliveryPolicy::default(),
        }),
        ..ServeOptions::default()
    }
}

async fn ask(
    s: &TestServer,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = s.api_as(key, method, path);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let (status, _, body) = json(request.send().await.unwrap()).await;
    (status, body)
}

#[tokio::test]
async fn subscriptions_are_the_owners_and_bad_ones_are_refused_by_field() {
    let Some(s) = crate::serve(delivering()).await else {
        return;
    };
    let hooks = "/api/linkdeck/webhooks";
    for (body, field, words) in [
        (
            json!({"url": "http://127.0.0.1:9/in", "events": ["link.created"]}),
            "url",
            "webhooks_allow_private",
        ),
        (
            json!({"url": "https://hooks.example.com/in", "events": ["link.nope"]}),
            "events",
            "unknown event",
        ),
        (
            json!({"url": "https://hooks.example.com/in"}),
            "body",
            "events",
        ),
    ] {
        let (status, answer) = ask(&s, &s.key, Method::POST, hooks, Some(body.clone())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
        let said = answer["message"][field].to_string();
        assert!(said.contains(words), "{body}: {answer}");
    }

    let (status, made) = ask(
        &s,
        &s.key,
        Method::POST,
        hooks,
        Some(json!({"url": "https://hooks.example.com/in", "events": ["link.created", "link.clicked"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["data"]["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{made}");
    let id = made["data"]["webhook"]["id"].as_i64().unwrap();
    let one = format!("{hooks}/{id}");

    // Listed without its secret; its deliveries start with the next link made.
    let (_, listed) = ask(&s, &s.key, Method::GET, hooks, None).await;
    assert_eq!(
        listed["data"][0]["events"],
        json!(["link.created", "link.clicked"])
    );
    assert!(!listed.to_string().contains(secret), "{listed}");
    s.create_link(&[("url", "https://example.com/a"), ("alias", "a")])
        .await;
    let (status, deliveries) =
        ask(&s, &s.key, Method::GET, &format!("{one}/deliveries"), None).await;
    assert_eq!(status, StatusCode::OK, "{deliveries}");
    assert_eq!(
        deliveries["data"][0]["event"], "link.created",
        "{deliveries}"
    );

    // A read-only key of the owner reads, and may neither change nor reveal.
    let (read_only, _) = s
        .service
        .create_key_with(
            s.owner_id,
            None,
            KeyGrant {
                read_only: true,
                ..KeyGrant::default()
            },
        )
        .await
        .unwrap();
    let (status, _) = ask(&s, &read_only, Method::GET, &one, None).await;
    assert_eq!(status, StatusCode::OK);
    for (method, path) in [
        (Method::POST, format!("{one}/secret")),
        (Method::POST, format!("{one}/resume")),
        (Method::DELETE, one.clone()),
    ] {
        let (status, body) = ask(&s, &read_only, method.clone(), &path, None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {body}");
    }
    // Another owner sees none of it.
    let (_, other) = s.other_owner("bob").await;
    let (status, _) = ask(&s, &other, Method::GET, &one, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, theirs) = ask(&s, &other, Method::GET, hooks, None).await;
    assert_eq!(theirs["data"], json!([]));
    let (status, _) = ask(&s, &other, Method::DELETE, &one, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The secret again, then a new one; then gone.
    let (_, again) = ask(&s, &s.key, Method::POST, &format!("{one}/secret"), None).await;
    assert_eq!(again["data"]["secret"], secret);
    let (_, rotated) = ask(
        &s,
        &s.key,
        Method::POST,
        &format!("{one}/secret?rotate=true"),
        None,
    )
    .await;
    assert_ne!(rotated["data"]["secret"], secret);
    let (status, _) = ask(&s, &s.key, Method::DELETE, &one, None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = ask(&s, &s.key, Method::GET, &one, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_server_without_webhooks_says_so() {
    let Some(s) = crate::serve(ServeOptions::default()).await else {
        return;
    };
    let (status, body) = ask(
        &s,
        &s.key,
        Method::POST,
        "/api/linkdeck/webhooks",
        Some(json!({"url": "https://hooks.example.com/in", "events": ["link.created"]})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    for words in ["keeps no webhook key", "LINKDECK_WEBHOOK_KEY"] {
        assert!(body.to_string().contains(words), "{words}: {body}");
    }
}

#[tokio::test]
async fn capabilities_say_whether_the_server_holds_a_webhook_key() {
    for (opts, holds) in [(ServeOptions::default(), false), (delivering(), true)] {
        let Some(s) = crate::serve(opts).await else {
            return;
        };
        let (status, caps) = ask(&s, &s.key, Method::GET, "/api/linkdeck/capabilities", None).await;
        assert_eq!(status, StatusCode::OK, "{caps}");
        assert_eq!(caps["data"]["webhooks"], true, "{caps}");
        assert_eq!(caps["data"]["webhook_key"], holds, "{caps}");
    }
}
