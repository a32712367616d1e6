//! RemoteBackend against servers that fail, and against a phpShort-shaped responder.
//!
//! Every server here is real: a socket on 127.0.0.1 that accepts connections. The failing ones
//! are scripted (an axum app answering 500, 429, 302 or HTML; a listener that never answers;
//! a port with nothing behind it). No real phpShort can run on this machine, so the tolerance
//! tests use a small axum app that answers with bodies of the shapes phpShort 2.4 sends
//! (docs/ARCHITECTURE.md, "phpShort's quirks").
//! Every call is bounded by a generous timeout so a hang fails the test instead of stalling it.

mod cli_support;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jiff::tz::TimeZone;
use linkdeck::backend::Backend;
use linkdeck::backend::remote::{ApiKey, RemoteBackend, RemoteOptions};
use linkdeck::domain::{
    Error, LinkInput, LinkQuery, PeriodSpec, Preset, RuleInput, SpaceFilter, SpaceInput,
    SpaceQuery, StatsQuery, StatsScope, StatusFilter,
};
use serde_json::{Value, json};

const KEY: &str = "the-right-key-0123456789";

/// A request as the fake server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: String,
    auth: Option<String>,
    accept: Option<String>,
    content_type: Option<String>,
    body: String,
}

type Respond = dyn Fn(&Seen, usize) -> Response + Send + Sync;

#[derive(Clone)]
struct FakeState {
    seen: Arc<Mutex<Vec<Seen>>>,
    respond: Arc<Respond>,
}

struct Fake {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Starts an HTTP server on 127.0.0.1 that records every request and answers with `respond`
/// (given the request and how many came before it).
async fn fake(respond: impl Fn(&Seen, usize) -> Response + Send + Sync + 'static) -> Fake {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let state = FakeState {
        seen: seen.clone(),
        respond: Arc::new(respond),
    };
    let app = Router::new().fallback(record).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Fake { addr, seen }
}

async fn record(State(state): State<FakeState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let header = |name: header::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or("").to_owned(),
        auth: header(header::AUTHORIZATION),
        accept: header(header::ACCEPT),
        content_type: header(header::CONTENT_TYPE),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let before = {
        let mut all = state.seen.lock().unwrap();
        all.push(seen.clone());
        all.len() - 1
    };
    (state.respond)(&seen, before)
}

fn json_answer(status: u16, body: Value) -> Response {
    (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response()
}

fn client_with(base_url: &str, key: &str, timeout: Duration) -> RemoteBackend {
    RemoteBackend::new(RemoteOptions {
        base_url: base_url.to_owned(),
        api_key: ApiKey::new(key).unwrap(),
        timeout,
        timezone: TimeZone::UTC,
    })
    .unwrap()
}

fn client(fake: &Fake) -> RemoteBackend {
    client_with(&fake.base_url(), KEY, Duration::from_secs(5))
}

/// Fails the test instead of hanging it.
async fn bounded<T>(fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), fut)
        .await
        .expect("the call did not return within 30s")
}

fn unavailable(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Unavailable(message)) => message,
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

// ---- faults ----------------------------------------------------------------------------------

#[tokio::test]
async fn a_stopped_server_is_connection_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let backend = client_with(&format!("http://{addr}"), KEY, Duration::from_secs(5));
    let message = unavailable(bounded(backend.show_link(1)).await);
    assert_eq!(
        message,
        format!("cannot reach http://{addr}: connection refused")
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_with_a_message() {
    // Accepts connections and reads nothing back: a real server, stuck.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let backend = client_with(&format!("http://{addr}"), KEY, Duration::from_millis(300));
    let message = unavailable(bounded(backend.list_links(&LinkQuery::default())).await);
    assert_eq!(
        message,
        format!("http://{addr} did not answer within 300ms")
    );
    // A write is not retried after a timeout either, and fails the same way.
    let message =
        unavailable(bounded(backend.create_link(&LinkInput::with_url("https://a.example"))).await);
    assert!(
        message.ends_with("did not answer within 300ms"),
        "{message}"
    );
}

#[tokio::test]
async fn a_500_is_unavailable_and_not_retried() {
    let fake = fake(|_, _| json_answer(500, json!({"message": "Server Error"}))).await;
    let message = unavailable(bounded(client(&fake).show_link(3)).await);
    assert_eq!(
        message,
        format!(
            "{} answered 500 Internal Server Error (Server Error)",
            fake.base_url()
        )
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn a_read_retries_a_503_then_succeeds() {
    let fake = fake(|_, n| {
        if n < 2 {
            (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response()
        } else {
            json_answer(
                200,
                json!({"data": [], "meta": {"current_page": 1, "per_page": 10, "total": 0}}),
            )
        }
    })
    .await;
    let page = bounded(client(&fake).list_spaces(&SpaceQuery::default()))
        .await
        .unwrap();
    assert_eq!(page.total, 0);
    assert_eq!(fake.count(), 3);
}

#[tokio::test]
async fn a_read_gives_up_after_three_tries() {
    let fake =
        fake(|_, _| (StatusCode::BAD_GATEWAY, "<html>bad gateway</html>").into_response()).await;
    let message = unavailable(bounded(client(&fake).list_links(&LinkQuery::default())).await);
    assert_eq!(
        message,
        format!("{} answered 502 Bad Gateway", fake.base_url())
    );
    assert_eq!(fake.count(), 3);
}

#[tokio::test]
async fn a_write_is_never_retried_on_a_5xx() {
    let fake = fake(|_, _| (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response()).await;
    let input = LinkInput::with_url("https://example.com");
    let message = unavailable(bounded(client(&fake).create_link(&input)).await);
    assert!(
        message.ends_with("answered 503 Service Unavailable"),
        "{message}"
    );
    assert_eq!(fake.count(), 1);
}

fn too_many(retry_after: &'static str) -> Response {
    let mut response = json_answer(429, json!({"message": "Too Many Attempts."}));
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    headers.insert("x-ratelimit-limit", HeaderValue::from_static("60"));
    headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
    response
}

#[tokio::test]
async fn a_429_is_retried_then_reported_as_rate_limited() {
    let fake = fake(|_, _| too_many("1")).await;
    let result = bounded(client(&fake).show_link(1)).await;
    assert_eq!(
        result.unwrap_err(),
        Error::RateLimited {
            retry_after: Some(Duration::from_secs(1))
        }
    );
    assert_eq!(fake.count(), 3, "three tries in all");
}

#[tokio::test]
async fn a_429_longer_than_the_timeout_is_reported_at_once() {
    let fake = fake(|_, _| too_many("60")).await;
    let result = bounded(client(&fake).show_link(1)).await;
    assert_eq!(
        result.unwrap_err(),
        Error::RateLimited {
            retry_after: Some(Duration::from_secs(60))
        }
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn a_write_is_sent_again_after_a_429_which_did_nothing() {
    let fake = fake(|_, n| {
        if n == 0 {
            too_many("0")
        } else {
            json_answer(201, json!({"data": {"id": 5, "user_id": 1, "name": "Ops", "color": "3",
                "created_at": "2020-09-14 06:53:49", "updated_at": "2020-09-14 06:53:49"}, "status": 200}))
        }
    })
    .await;
    let input = SpaceInput {
        name: Some("Ops".into()),
        color: Some("3".into()),
    };
    let space = bounded(client(&fake).create_space(&input)).await.unwrap();
    assert_eq!(space.id, 5);
    assert_eq!(fake.count(), 2);
}

fn needs_key(seen: &Seen) -> Option<Response> {
    (seen.auth.as_deref() != Some(&format!("Bearer {KEY}")))
        .then(|| json_answer(401, json!({"message": "Unauthenticated.", "status": 401})))
}

#[tokio::test]
async fn a_wrong_key_is_unauthorized_and_never_shown() {
    let fake = fake(|seen, _| needs_key(seen).unwrap_or_else(|| json_answer(200, json!({})))).await;
    let backend = client_with(&fake.base_url(), "wrong-key-abcdef", Duration::from_secs(5));
    let err = bounded(backend.list_links(&LinkQuery::default()))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        Error::Unauthorized(format!(
            "{} did not accept the API key (Unauthenticated.)",
            fake.base_url()
        ))
    );
    assert!(!err.to_string().contains("wrong-key"));
    assert!(!format!("{backend:?}").contains("wrong-key"));
    assert_eq!(fake.count(), 1, "an auth failure is not retried");
}

#[tokio::test]
async fn a_redirect_to_login_is_unauthorized() {
    // What phpShort does with a bad key when the client does not ask for JSON.
    let fake = fake(|_, _| {
        Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, "/login")
            .body(Body::empty())
            .unwrap()
    })
    .await;
    let err = bounded(client(&fake).show_space(2)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Unauthorized(m) if m.contains("redirected the API request to /login")),
        "{err:?}"
    );
    assert_eq!(fake.count(), 1, "the redirect is not followed");
}

#[tokio::test]
async fn an_html_page_is_unavailable() {
    let fake = fake(|_, _| {
        (
            [(header::CONTENT_TYPE, "text/html; charset=UTF-8")],
            "<!doctype html><title>Welcome</title>",
        )
            .into_response()
    })
    .await;
    let message = unavailable(bounded(client(&fake).list_links(&LinkQuery::default())).await);
    assert_eq!(
        message,
        format!(
            "{} answered 200 with text/html instead of JSON: is the base URL the service's address?",
            fake.base_url()
        )
    );
}

#[tokio::test]
async fn a_list_404_blames_the_base_url_and_a_record_404_is_not_found() {
    let fake = fake(|seen, _| {
        if seen.path == "/api/v1/links/9" {
            // phpShort 2.4's update of an unknown id: a bare message, no status.
            json_answer(
                404,
                json!({"message": "No query results for model [App\\Link]."}),
            )
        } else {
            (StatusCode::NOT_FOUND, "<html>not found</html>").into_response()
        }
    })
    .await;
    let backend = client(&fake);
    let err = bounded(backend.update_link(9, &LinkInput::default()))
        .await
        .unwrap_err();
    assert_eq!(err, Error::not_found("link 9"));
    let message = unavailable(bounded(backend.list_spaces(&SpaceQuery::default())).await);
    assert!(message.contains("check the base URL"), "{message}");
}

#[tokio::test]
async fn bad_paging_is_refused_before_anything_is_sent() {
    let fake = fake(|_, _| json_answer(200, json!({}))).await;
    let query = LinkQuery {
        per_page: 5,
        ..LinkQuery::default()
    };
    let err = bounded(client(&fake).list_links(&query)).await.unwrap_err();
    assert!(err.field_errors().unwrap().contains("per_page"));
    assert_eq!(fake.count(), 0);
}

// ---- what goes on the wire --------------------------------------------------------------------

#[tokio::test]
async fn every_request_carries_the_key_and_asks_for_json_and_writes_are_forms() {
    let fake = fake(|seen, _| match seen.method.as_str() {
        "DELETE" => json_answer(
            200,
            json!({"id": 4, "object": "link", "deleted": true, "status": 200}),
        ),
        _ => json_answer(
            422,
            json!({"message": {"platform.0.key": ["Invalid platform"]}, "status": 422}),
        ),
    })
    .await;
    let backend = client(&fake);
    let input = LinkInput {
        url: Some("https://example.com".into()),
        target_type: Some("2".into()),
        platform: Some(vec![RuleInput::new("Chrome OS", "https://cros.example")]),
        ..LinkInput::default()
    };
    let err = bounded(backend.create_link(&input)).await.unwrap_err();
    assert_eq!(err, Error::field("platform.0.key", "Invalid platform"));
    bounded(backend.update_link(4, &input)).await.unwrap_err();
    bounded(backend.delete_link(4)).await.unwrap();

    let seen = fake.seen();
    let methods: Vec<(&str, &str)> = seen
        .iter()
        .map(|s| (s.method.as_str(), s.path.as_str()))
        .collect();
    assert_eq!(
        methods,
        [
            ("POST", "/api/v1/links"),
            ("PUT", "/api/v1/links/4"),
            ("DELETE", "/api/v1/links/4")
        ]
    );
    for s in &seen {
        assert_eq!(s.auth.as_deref(), Some(format!("Bearer {KEY}").as_str()));
        assert_eq!(s.accept.as_deref(), Some("application/json"));
    }
    assert_eq!(
        seen[0].content_type.as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        seen[0].body,
        "url=https://example.com&target_type=2\
         &platform[0][key]=Chrome+OS&platform[0][value]=https://cros.example"
    );
}

// ---- a phpShort-shaped server -----------------------------------------------------------------

/// A link record as phpShort 2.4 sends it from a list (PHP 7: integer columns as strings).
fn php_link(id: u64) -> Value {
    json!({
        "id": id, "alias": format!("a{id}"), "url": "https://example.com/page",
        "short_url": format!("https://sho.rt/a{id}"), "title": null,
        "target_type": "1",
        "geo_target": {"0": {"key": "US", "value": "https://us.example"},
                       "2": {"key": "FR", "value": "https://fr.example"}},
        "platform_target": null, "rotation_target": null, "last_rotation": null,
        "disabled": "0", "public": "0", "expiration_url": null, "expiration_clicks": null,
        "clicks": "12", "user_id": "1",
        "space": null,
        "domain": {"id": 2, "name": "http://sho.rt", "index_page": null, "not_found_page": null,
                   "user_id": 1, "created_at": "2020-09-14 06:53:49", "updated_at": "2020-09-14 06:53:49"},
        "ends_at": "2020-10-01 00:00:00",
        "created_at": "2020-09-14T06:53:49.000000Z", "updated_at": "2020-09-14T06:53:49.000000Z"
    })
}

/// 25 links, always 10 a page whatever `per_page` says, no `status` key, a `links.next` that
/// drops the status filter — as phpShort 2.4 does.
fn phpshort(seen: &Seen, _: usize) -> Response {
    if let Some(denied) = needs_key(seen) {
        return denied;
    }
    let page: u64 = seen
        .query
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", "/api/v1/links") => {
            let first = (page - 1) * 10 + 1;
            let last = (page * 10).min(25);
            let data: Vec<Value> = (first..=last).map(php_link).collect();
            json_answer(
                200,
                json!({
                    "data": data,
                    "links": {"first": "https://sho.rt/api/v1/links?page=1",
                              "last": "https://sho.rt/api/v1/links?page=3",
                              "prev": null,
                              "next": format!("https://sho.rt/api/v1/links?page={}", page + 1)},
                    "meta": {"current_page": page, "from": first, "last_page": 3,
                             "path": "https://sho.rt/api/v1/links", "per_page": 10, "to": last, "total": 25}
                }),
            )
        }
        ("GET", "/api/v1/links/404") => json_answer(
            404,
            json!({"message": "Resource not found.", "status": 404}),
        ),
        ("POST", "/api/v1/links") => json_answer(
            422,
            json!({"message": {"url": ["The Link field is required."],
                               "geo.0.key": ["Invalid country."]}, "status": 422}),
        ),
        _ => json_answer(
            404,
            json!({"message": "Resource not found.", "status": 404}),
        ),
    }
}

#[tokio::test]
async fn a_phpshort_list_is_read_with_its_fixed_page_size_and_own_page_urls() {
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let mut query = LinkQuery {
        status: StatusFilter::Expired,
        per_page: 50,
        ..LinkQuery::default()
    };
    let first = bounded(backend.list_links(&query)).await.unwrap();
    assert_eq!((first.page, first.per_page, first.total), (1, 10, 25));
    assert_eq!(first.items.len(), 10);
    assert_eq!(first.last_page(), 3);
    let link = &first.items[0];
    assert_eq!(link.clicks, 12);
    assert_eq!(link.expiration_clicks, 0);
    assert_eq!(link.geo.len(), 2);
    assert_eq!(link.geo[1].key, "FR");
    assert_eq!(link.domain.as_ref().unwrap().name, "http://sho.rt");
    assert_eq!(link.ends_at, Some("2020-10-01T00:00:00Z".parse().unwrap()));
    assert!(!link.password);

    // The client walks pages by the size the server used, keeping every filter itself.
    query.page = first.page + 1;
    let second = bounded(backend.list_links(&query)).await.unwrap();
    assert_eq!(second.items[0].id, 11);
    let queries: Vec<String> = fake.seen().into_iter().map(|s| s.query).collect();
    assert_eq!(
        queries,
        [
            "page=1&per_page=50&status=2&sort=desc",
            "page=2&per_page=50&status=2&sort=desc"
        ]
    );
}

/// phpShort has no "no space" filter and would answer with every link: the client says so
/// instead of listing them, and sends nothing to the links path.
#[tokio::test]
async fn a_phpshort_server_is_not_asked_for_links_in_no_space() {
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let query = LinkQuery {
        space: SpaceFilter::NoSpace,
        ..LinkQuery::default()
    };
    let err = bounded(backend.list_links(&query)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("space") && text.contains("no space"),
        "{text}"
    );
    assert!(
        fake.seen().iter().all(|s| s.path != "/api/v1/links"),
        "{:?}",
        fake.seen()
    );
}

/// phpShort keeps no tags: a tag filter, tags on a new link and the tag list are refused by
/// the client, naming the field and why, and nothing is sent to the links path; clearing tags
/// there is nothing to do and goes through.
#[tokio::test]
async fn a_phpshort_server_is_not_sent_tags() {
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let query = LinkQuery {
        tags: vec!["promo".into()],
        ..LinkQuery::default()
    };
    let err = bounded(backend.list_links(&query)).await.unwrap_err();
    let message = &err
        .field_errors()
        .expect("a field error")
        .get("tag")
        .unwrap()[0];
    assert!(message.contains("keeps no tags"), "{message}");
    let tagged = LinkInput {
        tags: Some("promo".into()),
        ..LinkInput::with_url("https://example.com")
    };
    let err = bounded(backend.create_link(&tagged)).await.unwrap_err();
    assert!(
        err.field_errors().expect("a field error").contains("tags"),
        "{err}"
    );
    assert!(
        fake.seen().iter().all(|s| s.path != "/api/v1/links"),
        "{:?}",
        fake.seen()
    );
    assert!(matches!(
        bounded(backend.tags()).await,
        Err(Error::Unsupported(_))
    ));
    // A tag's traffic would be answered with every link's: refused before it is asked.
    let tag_traffic = StatsQuery::new(
        StatsScope::Tag("promo".into()),
        PeriodSpec::preset(Preset::Days7),
    );
    let err = bounded(backend.stats(&tag_traffic)).await.unwrap_err();
    assert!(
        err.field_errors().expect("a field error").contains("tag"),
        "{err}"
    );
    assert!(
        fake.seen()
            .iter()
            .all(|s| !s.path.starts_with("/api/v1/stats")),
        "{:?}",
        fake.seen()
    );
}

/// phpShort keeps no redirect rules: a request with some is refused by the client naming
/// `rules`, before anything is sent; an empty list (what clearing them names) goes without.
#[tokio::test]
async fn a_phpshort_server_is_not_sent_rules() {
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let ruled = LinkInput {
        rules: Some(vec!["country DE => https://de.example/".into()]),
        ..LinkInput::with_url("https://example.com")
    };
    let err = bounded(backend.create_link(&ruled)).await.unwrap_err();
    let fields = err.field_errors().expect("a field error");
    let message = &fields.get("rules").unwrap_or_else(|| panic!("{err}"))[0];
    assert!(message.contains("keeps no link options"), "{message}");
    assert!(
        fake.seen().iter().all(|s| s.path != "/api/v1/links"),
        "{:?}",
        fake.seen()
    );
    let cleared = LinkInput {
        rules: Some(Vec::new()),
        ..LinkInput::with_url("https://example.com")
    };
    let _ = bounded(backend.create_link(&cleared)).await;
    let sent = fake.seen();
    let body = &sent
        .iter()
        .find(|s| s.path == "/api/v1/links")
        .unwrap()
        .body;
    assert!(!body.contains("rules"), "{body}");
}

/// phpShort keeps no link options: setting one is refused by the client, naming each field and
/// why, before anything is sent; a request that only names the defaults goes without them.
#[tokio::test]
async fn a_phpshort_server_is_not_sent_link_options() {
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let optioned = LinkInput {
        forward_path: Some("1".into()),
        preview_title: Some("Spring sale".into()),
        ..LinkInput::with_url("https://example.com")
    };
    let err = bounded(backend.create_link(&optioned)).await.unwrap_err();
    let fields = err.field_errors().expect("a field error");
    for name in ["forward_path", "preview_title"] {
        let message = &fields.get(name).unwrap_or_else(|| panic!("{name}: {err}"))[0];
        assert!(message.contains("keeps no link options"), "{message}");
    }
    assert_eq!(fields.len(), 2, "{err}");
    assert!(
        fake.seen().iter().all(|s| s.path != "/api/v1/links"),
        "{:?}",
        fake.seen()
    );
    assert!(!bounded(backend.keeps_link_options()).await.unwrap());
    // The defaults, as an undo or a copy of a plain link names them: nothing to refuse, sent
    // without them (this fake server refuses every new link, for reasons of its own).
    let defaults = LinkInput {
        forward_query: Some("1".into()),
        forward_path: Some("0".into()),
        preview_title: Some(String::new()),
        ..LinkInput::with_url("https://example.com")
    };
    let err = bounded(backend.create_link(&defaults)).await.unwrap_err();
    assert!(err.field_errors().unwrap().contains("url"), "{err}");
    let sent = fake.seen();
    let body = &sent
        .iter()
        .find(|s| s.path == "/api/v1/links")
        .unwrap()
        .body;
    assert!(
        !body.contains("forward") && !body.contains("preview"),
        "{body}"
    );
}

#[tokio::test]
async fn phpshort_errors_map_by_field_and_record() {
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let err = bounded(backend.create_link(&LinkInput::default()))
        .await
        .unwrap_err();
    let fields = err.field_errors().expect("a validation error");
    assert_eq!(fields.get("url").unwrap(), ["The Link field is required."]);
    assert_eq!(fields.get("geo.0.key").unwrap(), ["Invalid country."]);
    let err = bounded(backend.show_link(404)).await.unwrap_err();
    assert_eq!(err, Error::not_found("link 404"));
}

#[tokio::test]
async fn a_server_without_statistics_is_said_so_once() {
    // phpShort 2.x has no /api/v1/stats: its router answers 404, as for a missing record.
    let fake = fake(phpshort).await;
    let backend = client(&fake);
    let query =
        |scope| linkdeck::domain::StatsQuery::new(scope, linkdeck::domain::PeriodSpec::default());
    let err = bounded(backend.stats(&query(linkdeck::domain::StatsScope::Link(3))))
        .await
        .unwrap_err();
    let Error::Unsupported(why) = err else {
        panic!("expected Unsupported, got {err:?}");
    };
    assert!(why.contains("offers no statistics"), "{why}");
    let asked = fake.count();
    assert_eq!(
        asked, 2,
        "the link's path, then the account's to tell the two 404s apart"
    );
    // Known from now on: the server is not asked again.
    let err = bounded(backend.stats(&query(linkdeck::domain::StatsScope::Account)))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)));
    assert_eq!(fake.count(), asked);
}

#[tokio::test]
async fn a_missing_link_on_a_server_with_statistics_is_not_found() {
    let fake = fake(|seen: &Seen, _| match seen.path.as_str() {
        "/api/v1/stats" => json_answer(
            200,
            json!({"data": {"scope": "account", "id": null, "starts_at": "2026-11-21T12:00:00Z",
                            "ends_at": "2026-11-22T12:00:00Z", "interval": "hour",
                            "clicks": "3", "previous_clicks": null,
                            "timeline": [{"starts_at": "2026-11-21T12:00:00Z", "clicks": 3}]},
                   "status": 200}),
        ),
        _ => json_answer(404, json!({"message": "Resource not found."})),
    })
    .await;
    let backend = client(&fake);
    let err = bounded(backend.stats(&linkdeck::domain::StatsQuery::new(
        linkdeck::domain::StatsScope::Link(9),
        linkdeck::domain::PeriodSpec::default(),
    )))
    .await
    .unwrap_err();
    assert_eq!(err, Error::not_found("link 9"));
    // A tolerant read: a count sent as a string, no breakdowns asked for.
    let s = bounded(backend.stats(&linkdeck::domain::StatsQuery::new(
        linkdeck::domain::StatsScope::Account,
        linkdeck::domain::PeriodSpec::default(),
    )))
    .await
    .unwrap();
    assert_eq!((s.total, s.timeline.len()), (3, 1));
}

// ---- answers longer than any real one ----------------------------------------------------------
//
// The long bodies are made only as the client reads them, and each ends after a guard far past
// every limit: a client that did not stop would still finish, and the test with it.

const MIB: usize = 1 << 20;

/// What a streamed body had produced when the client stopped asking for more.
#[derive(Clone, Default)]
struct Sent(Arc<AtomicUsize>);

impl Sent {
    fn bytes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// `head`, then `chunk` `times` times, then `tail`, each piece made when the server writes it.
fn streamed(head: &str, chunk: &str, times: usize, tail: &str, sent: &Sent) -> Body {
    let (head, chunk, tail) = (
        axum::body::Bytes::from(head.to_owned()),
        axum::body::Bytes::from(chunk.to_owned()),
        axum::body::Bytes::from(tail.to_owned()),
    );
    let sent = sent.clone();
    let pieces = std::iter::once(head)
        .chain(std::iter::repeat_n(chunk, times))
        .chain(std::iter::once(tail))
        .map(move |piece| {
            sent.0.fetch_add(piece.len(), Ordering::SeqCst);
            Ok::<_, Infallible>(piece)
        });
    Body::from_stream(futures::stream::iter(pieces))
}

/// A chunked body of 64 KiB pieces of `x` with no end a client would reach: 128 MiB.
fn endless(sent: &Sent) -> Response {
    let piece = "x".repeat(64 << 10);
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(streamed("", &piece, 128 * MIB / piece.len(), "", sent))
        .unwrap()
}

/// `{"message": "xxx…"}` of about `bytes` bytes, with `status`.
fn long_error(status: StatusCode, bytes: usize, sent: &Sent) -> Response {
    let piece = "x".repeat(10_000);
    let body = streamed(
        r#"{"message": ""#,
        &piece,
        bytes / piece.len(),
        r#""}"#,
        sent,
    );
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .unwrap()
}

#[tokio::test]
async fn an_endless_body_is_read_no_further_than_its_limit() {
    let sent = Sent::default();
    let endless_everywhere = {
        let sent = sent.clone();
        move |_: &Seen, _: usize| endless(&sent)
    };
    let fake = fake(endless_everywhere).await;
    let backend = patient(&fake);

    // linkdeck's capabilities, the first thing `copy` asks a server.
    let message = unavailable(bounded(backend.linkdeck()).await);
    assert_eq!(
        message,
        format!(
            "{} sent more than 1 MiB in answer to GET /api/linkdeck/capabilities, the most \
             linkdeck reads of one record; it stopped reading there",
            fake.base_url()
        )
    );
    assert!(
        sent.bytes() < 32 * MIB,
        "the server made {} MiB before the client stopped",
        sent.bytes() / MIB
    );

    // A page of links, the largest answer v1 has.
    let message = unavailable(bounded(backend.list_links(&LinkQuery::default())).await);
    assert_eq!(
        message,
        format!(
            "{} sent more than 32 MiB in answer to GET /api/v1/links, the most linkdeck reads \
             of a page of a list; it stopped reading there",
            fake.base_url()
        )
    );
    assert_eq!(fake.count(), 2, "neither is asked again");
}

#[tokio::test]
async fn a_huge_valid_page_is_refused_at_its_limit() {
    // 40 MiB of well-formed links, sent a hundred at a time: more than 100 links of any real
    // server.
    let item = php_link(7).to_string();
    let hundred = format!("{},", vec![item.as_str(); 100].join(","));
    let times = 40 * MIB / hundred.len();
    let pages = move |_: &Seen, _: usize| {
        let tail =
            format!(r#"{item}], "meta": {{"current_page": 1, "per_page": 10, "total": 1}}}}"#);
        Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(streamed(
                r#"{"data": ["#,
                &hundred,
                times,
                &tail,
                &Sent::default(),
            ))
            .unwrap()
    };
    let fake = fake(pages).await;
    let message = unavailable(bounded(patient(&fake).list_links(&LinkQuery::default())).await);
    assert!(
        message.starts_with(&format!("{} sent more than 32 MiB", fake.base_url())),
        "{message}"
    );
}

#[tokio::test]
async fn a_huge_record_in_a_page_is_refused_by_its_own_limit() {
    let mut item = php_link(7);
    item["title"] = json!("t".repeat(2 * MIB));
    let fake = fake(move |_, _| {
        json_answer(
            200,
            json!({"data": [php_link(6), item],
                   "meta": {"current_page": 1, "per_page": 10, "total": 2}}),
        )
    })
    .await;
    let message = unavailable(bounded(client(&fake).list_links(&LinkQuery::default())).await);
    assert_eq!(
        message,
        format!(
            "{} sent a list that linkdeck cannot read: data.1: more than 1 MiB, the most \
             linkdeck reads of one record",
            fake.base_url()
        )
    );
}

#[tokio::test]
async fn a_huge_error_message_is_cut_and_shown_by_its_beginning() {
    let sent = Sent::default();
    let errors = {
        let sent = sent.clone();
        move |_: &Seen, _: usize| long_error(StatusCode::INTERNAL_SERVER_ERROR, 50 * MIB, &sent)
    };
    let fake = fake(errors).await;
    let message = unavailable(bounded(client(&fake).show_link(3)).await);
    let begins = format!(r#"{{"message": "{}…"#, "x".repeat(186));
    assert_eq!(
        message,
        format!(
            "{} answered 500 Internal Server Error (an error of more than 64 KiB, the most \
             linkdeck reads of one, which begins: {begins})",
            fake.base_url()
        )
    );
    assert!(sent.bytes() < 32 * MIB, "{} MiB made", sent.bytes() / MIB);
}

#[tokio::test]
async fn a_long_error_message_within_the_limit_is_shown_as_an_excerpt() {
    let fake = fake(|_, _| {
        json_answer(
            403,
            json!({"message": format!("Denied: {}", "because ".repeat(5_000))}),
        )
    })
    .await;
    let err = bounded(client(&fake).show_link(3)).await.unwrap_err();
    let Error::Forbidden(message) = err else {
        panic!("expected Forbidden, got {err:?}");
    };
    let excerpt = format!("Denied: {}", "because ".repeat(24));
    assert_eq!(
        message,
        format!(
            "{} refused access with this API key ({}…(39,807 more bytes))",
            fake.base_url(),
            excerpt.trim_end()
        )
    );
}

#[tokio::test]
async fn a_body_that_trickles_ends_at_the_time_limit_saying_so() {
    // Headers at once, then a byte every 50 ms for ever.
    let fake = fake(|_, _| {
        let trickle = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Some((
                Ok::<_, Infallible>(axum::body::Bytes::from_static(b" ")),
                (),
            ))
        });
        Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from_stream(trickle))
            .unwrap()
    })
    .await;
    let backend = client_with(&fake.base_url(), KEY, Duration::from_millis(500));
    let message = unavailable(bounded(backend.list_links(&LinkQuery::default())).await);
    assert_eq!(
        message,
        format!(
            "{} did not finish its answer within 500ms (the profile's timeout_secs)",
            fake.base_url()
        )
    );
}

// ---- linkdeck's traffic history ----------------------------------------------------------------

/// About `bytes` of a link's traffic history as linkdeck's traffic path sends it, as JSON text:
/// hours of 20 long referring hosts each.
fn history(bytes: usize) -> String {
    let hosts: Vec<String> = (0..20)
        .map(|i| format!(r#""r{i:02}-{}.example": 1"#, "h".repeat(190)))
        .collect();
    let hosts = hosts.join(", ");
    let first = jiff::Timestamp::from_second(1_700_000_000 / 3600 * 3600).unwrap();
    let mut text = String::from("[");
    for h in 0.. {
        if text.len() >= bytes {
            break;
        }
        if h > 0 {
            text.push_str(", ");
        }
        let at = first + jiff::SignedDuration::from_hours(h);
        text.push_str(&format!(
            r#"{{"hour": "{at}", "clicks": 20, "referrer": {{{hosts}}}}}"#
        ));
    }
    text.push(']');
    text
}

/// A linkdeck server whose links have `size(id)` bytes of history each. Each size's history is
/// made once, so that the server answers at once whatever is asked.
async fn linkdeck_fake(size: fn(i64) -> usize) -> Fake {
    let made: Mutex<std::collections::HashMap<usize, Arc<String>>> = Mutex::default();
    fake(move |seen, _| match seen.path.as_str() {
        "/api/linkdeck/capabilities" => json_answer(
            200,
            json!({"data": {"server": "linkdeck", "version": "0.1.0", "api": 1,
                            "import_max_bytes": 16 * MIB, "traffic_max_ids": 100}, "status": 200}),
        ),
        "/api/linkdeck/traffic" => {
            let ids = seen.query.trim_start_matches("ids=").replace("%2C", ",");
            let links: Vec<String> = ids
                .split(',')
                .map(|id| {
                    let id: i64 = id.parse().unwrap();
                    let mut made = made.lock().unwrap();
                    let traffic = made
                        .entry(size(id))
                        .or_insert_with(|| Arc::new(history(size(id))));
                    format!(r#"{{"id": {id}, "traffic": {traffic}}}"#)
                })
                .collect();
            let body = format!(r#"{{"data": [{}], "status": 200}}"#, links.join(", "));
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        _ => json_answer(404, json!({"message": "Not Found"})),
    })
    .await
}

/// A client with time enough for tens of MiB on a busy machine.
fn patient(fake: &Fake) -> RemoteBackend {
    client_with(&fake.base_url(), KEY, Duration::from_secs(20))
}

#[tokio::test]
async fn traffic_history_longer_than_one_answer_is_asked_for_in_halves() {
    // Four links of 12 MiB: 48 MiB in one answer, more than linkdeck reads of one.
    let fake = linkdeck_fake(|_| 12 * MIB).await;
    let history = bounded(patient(&fake).traffic_history(&[1, 2, 3, 4]))
        .await
        .unwrap();
    let mut hours: Vec<(i64, usize)> = history.iter().map(|(id, h)| (*id, h.len())).collect();
    hours.sort();
    let each = hours[0].1;
    assert!(each > 1000, "{each} hours");
    assert_eq!(hours, [(1, each), (2, each), (3, each), (4, each)]);
    assert_eq!(history[&2][0].values[3].len(), 20, "every referrer kept");
    let asked: Vec<String> = fake
        .seen()
        .into_iter()
        .map(|s| s.query.replace("%2C", ","))
        .collect();
    assert_eq!(asked, ["ids=1,2,3,4", "ids=1,2", "ids=3,4"]);
}

#[tokio::test]
async fn one_link_with_more_history_than_linkdeck_reads_is_named() {
    let fake = linkdeck_fake(|id| if id == 5 { 40 * MIB } else { MIB }).await;
    let message = unavailable(bounded(patient(&fake).traffic_history(&[4, 5])).await);
    assert_eq!(
        message,
        format!(
            "{} sent more than 32 MiB in answer to GET /api/linkdeck/traffic (traffic history \
             of link 5), the most linkdeck reads of traffic history; it stopped reading there",
            fake.base_url()
        )
    );
}

// ---- through the binary ------------------------------------------------------------------------

/// Runs the binary against `fake` as the remote profile `far`, off the async threads.
fn cli(env: &cli_support::Env, fake: &Fake, args: &[&str]) -> cli_support::Run {
    std::fs::write(
        &env.config,
        format!(
            "[profiles.far]\nbackend = \"remote\"\nbase_url = \"{}\"\napi_key_env = \
             \"LINKDECK_FAULTS_KEY\"\ntimezone = \"UTC\"\n",
            fake.base_url()
        ),
    )
    .unwrap();
    tokio::task::block_in_place(|| {
        cli_support::run(
            env.bare()
                .arg("--config")
                .arg(&env.config)
                .env("LINKDECK_FAULTS_KEY", KEY)
                .args(args),
        )
    })
}

/// A server that keeps no webhooks (a phpShort site, a linkdeck server whose capabilities do not
/// name them) is never asked for them: the app is told it keeps none, and the CLI says so in one
/// line with a nonzero exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_webhooks_is_said_so_before_anything_is_asked_of_it() {
    let php = fake(phpshort).await;
    let older = linkdeck_fake(|_| 0).await;
    for (server, kind) in [(&php, "phpShort"), (&older, "linkdeck 0.1.0")] {
        let backend = client(server);
        assert_eq!(bounded(backend.webhooks(5)).await.unwrap(), None);
        match bounded(backend.list_webhooks()).await {
            Err(Error::Unsupported(m)) => {
                assert!(m.contains("keeps no webhooks") && m.contains(kind), "{m}")
            }
            other => panic!("expected unsupported, got {other:?}"),
        }
    }
    let env = cli_support::Env::new();
    let run = cli(&env, &older, &["--profile", "far", "webhooks", "list"]).fails_with(6);
    assert!(run.stderr.contains("keeps no webhooks"), "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    let run = cli(
        &env,
        &older,
        &[
            "--profile",
            "far",
            "webhooks",
            "create",
            "--url",
            "https://h.example/",
            "--event",
            "link.created",
        ],
    )
    .fails_with(6);
    assert!(run.stderr.contains("keeps no webhooks"), "{}", run.stderr);
    for server in [&php, &older] {
        assert!(
            server.seen().iter().all(|s| !s.path.contains("webhooks")),
            "{:?}",
            server.seen()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_stops_an_endless_body_and_shows_a_short_error() {
    let sent = Sent::default();
    let answers = {
        let sent = sent.clone();
        move |seen: &Seen, _: usize| match seen.path.as_str() {
            "/api/v1/spaces" => long_error(StatusCode::BAD_REQUEST, 50 * MIB, &sent),
            _ => endless(&sent),
        }
    };
    let fake = fake(answers).await;
    let env = cli_support::Env::new();
    let target = env.path("copy.db");

    let run = cli(
        &env,
        &fake,
        &["copy", "--from", "far", "--to", target.to_str().unwrap()],
    )
    .fails_with(6);
    assert!(
        run.stderr.contains(&format!(
            "{} sent more than 1 MiB in answer to GET /api/linkdeck/capabilities",
            fake.base_url()
        )),
        "{}",
        run.stderr
    );

    let run = cli(&env, &fake, &["--profile", "far", "links", "list"]).fails_with(6);
    assert!(
        run.stderr
            .contains("more than 32 MiB in answer to GET /api/v1/links"),
        "{}",
        run.stderr
    );

    // A 50 MB error message is printed by its beginning only.
    let run = cli(&env, &fake, &["--profile", "far", "spaces", "list"]).fails_with(6);
    assert!(
        run.stderr.contains("an error of more than 64 KiB"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.len() < 1000,
        "{} bytes printed",
        run.stderr.len()
    );
    assert!(sent.bytes() < 128 * MIB, "{} MiB made", sent.bytes() / MIB);
}

// ---- the visit export ------------------------------------------------------------------------

fn every_visit() -> linkdeck::domain::VisitQuery {
    linkdeck::domain::VisitQuery::all(linkdeck::domain::StatsScope::Account)
}

/// The error a visit export ended with, after any visits it read.
async fn export_error(backend: &RemoteBackend) -> Error {
    use futures::TryStreamExt;
    let stream = match bounded(backend.visits(&every_visit())).await {
        Ok(stream) => stream,
        Err(e) => return e,
    };
    bounded(stream.try_collect::<Vec<_>>()).await.unwrap_err()
}

#[tokio::test]
async fn a_server_without_a_visit_log_is_said_so_before_anything_is_asked_of_it() {
    // phpShort: no linkdeck API at all.
    let php = fake(phpshort).await;
    let err = export_error(&client(&php)).await;
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("keeps no visit log")),
        "{err:?}"
    );
    assert!(php.seen().iter().all(|s| !s.path.ends_with("/visits")));
    // A linkdeck server from before the export: its capabilities do not name it.
    let older = linkdeck_fake(|_| 0).await;
    let err = export_error(&client(&older)).await;
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("older") && m.contains("upgrade")),
        "{err:?}"
    );
    assert!(older.seen().iter().all(|s| !s.path.ends_with("/visits")));
}

/// A linkdeck server with the export, whose visit stream is `body`.
async fn visits_fake(body: impl Fn() -> Response + Send + Sync + 'static) -> Fake {
    fake(move |seen, _| match seen.path.as_str() {
        "/api/linkdeck/capabilities" => json_answer(
            200,
            json!({"data": {"server": "linkdeck", "version": "0.2.0", "api": 1,
                            "import_max_bytes": 16 * MIB, "traffic_max_ids": 100,
                            "visits": true}, "status": 200}),
        ),
        "/api/linkdeck/visits" => body(),
        _ => json_answer(404, json!({"message": "Not Found"})),
    })
    .await
}

const A_VISIT: &str = r#"{"id":1,"at":"2026-11-27T10:00:00Z","link_id":3,"alias":"a","country":"DE","platform":null,"browser":null,"referrer":null,"language":null}"#;

#[tokio::test]
async fn an_endless_visit_line_is_read_no_further_than_a_visit_can_be() {
    let sent = Sent::default();
    let fake = {
        let sent = sent.clone();
        visits_fake(move || {
            let piece = "x".repeat(64 << 10);
            Response::builder()
                .header(header::CONTENT_TYPE, "application/x-ndjson")
                .body(streamed(
                    &format!("{A_VISIT}\n"),
                    &piece,
                    128 * MIB / piece.len(),
                    "",
                    &sent,
                ))
                .unwrap()
        })
        .await
    };
    let err = export_error(&client(&fake)).await;
    let text = unavailable(Err::<(), _>(err));
    assert!(
        text.contains(&fake.base_url()) && text.contains("a line longer than 16 KiB"),
        "{text}"
    );
    assert!(sent.bytes() < 16 * MIB, "{} bytes were sent", sent.bytes());
}

#[tokio::test]
async fn a_visit_that_cannot_be_read_ends_the_export_naming_the_server() {
    let fake = visits_fake(|| {
        let body = format!("{A_VISIT}\n{{\"id\": \"one\"}}\n{A_VISIT}\n");
        ([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response()
    })
    .await;
    use futures::StreamExt;
    let mut stream = bounded(client(&fake).visits(&every_visit())).await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!((first.id, first.alias.as_str()), (1, "a"));
    let text = unavailable(stream.next().await.unwrap());
    assert!(
        text.contains("sent a visit that linkdeck cannot read"),
        "{text}"
    );
}

#[tokio::test]
async fn a_live_feed_reads_events_passing_over_comments_and_other_fields() {
    let fake = fake(|seen, _| match seen.path.as_str() {
        "/api/linkdeck/capabilities" => json_answer(
            200,
            json!({"data": {"server": "linkdeck", "version": "0.2.0", "api": 1,
                            "import_max_bytes": 16 * MIB, "traffic_max_ids": 100,
                            "visits": true}, "status": 200}),
        ),
        "/api/linkdeck/visits/live" => {
            // A comment, an event with CRLF line ends, and one whose JSON spans two data lines.
            let second = A_VISIT.replace(r#""id":1"#, r#""id":2"#);
            let (head, tail) = second.split_at(second.find(r#""alias""#).unwrap());
            let body = format!(
                ": hello\n\nid: 1\r\nevent: visit\r\ndata: {A_VISIT}\r\n\r\ndata: {head}\ndata: {tail}\n\n"
            );
            ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
        }
        _ => json_answer(404, json!({"message": "Not Found"})),
    })
    .await;
    use futures::TryStreamExt;
    let feed = bounded(client(&fake).live_visits(linkdeck::domain::StatsScope::Link(3), Some(7)))
        .await
        .unwrap();
    let visits: Vec<_> = bounded(feed.try_collect::<Vec<_>>()).await.unwrap();
    let ids: Vec<i64> = visits.iter().map(|v| v.id).collect();
    assert_eq!(ids, [1, 2]);
    let asked = fake
        .seen()
        .into_iter()
        .find(|s| s.path.ends_with("/live"))
        .unwrap();
    assert_eq!(asked.query, "link=3&after=7");
}
