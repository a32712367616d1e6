//! A reverse proxy on 127.0.0.1 that forwards every HTTP request to one upstream server and
//! counts them: how a test or benchmark sees how many requests a client really made, whatever
//! server is behind it.
//!
//! It can also break part way, as a server going away does ([`Breaks`]): after a number of link
//! creations (or of linkdeck imports, a page each) it forwards one more and loses the answer
//! (the links exist, the client never hears so), then refuses every further one; or it refuses
//! the list pages from a given page on. And it can stand for a phpShort site in front of a
//! `linkdeck serve`: linkdeck's own paths answered 404, as a server without them answers.

#![allow(dead_code)] // each test or bench target uses a part

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::Response;

/// Where the proxy breaks; the default never does.
#[derive(Debug, Clone, Copy, Default)]
pub struct Breaks {
    /// Link creations answered before the proxy breaks.
    pub creates: Option<usize>,
    /// The first list page (`page=N`) of links that is refused.
    pub list_page: Option<u32>,
    /// Requests to linkdeck's import answered before the proxy breaks.
    pub imports: Option<usize>,
    /// Answer `/api/linkdeck/…` 404, as phpShort does: only the v1 API is there.
    pub v1_only: bool,
}

pub struct CountingProxy {
    pub addr: SocketAddr,
    count: Arc<AtomicUsize>,
    creates: Arc<AtomicUsize>,
    imports: Arc<AtomicUsize>,
}

impl CountingProxy {
    /// Starts forwarding to `upstream` (an `http://host:port` origin).
    pub async fn start(upstream: &str) -> CountingProxy {
        Self::breaking(upstream, Breaks::default()).await
    }

    /// Starts forwarding to `upstream`, breaking as `breaks` says.
    pub async fn breaking(upstream: &str, breaks: Breaks) -> CountingProxy {
        let count = Arc::new(AtomicUsize::new(0));
        let creates = Arc::new(AtomicUsize::new(0));
        let imports = Arc::new(AtomicUsize::new(0));
        let state = ProxyState {
            upstream: upstream.trim_end_matches('/').to_owned(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .build()
                .expect("an HTTP client"),
            count: count.clone(),
            creates: creates.clone(),
            imports: imports.clone(),
            breaks,
        };
        let app = Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        CountingProxy {
            addr,
            count,
            creates,
            imports,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests forwarded so far.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    pub fn reset(&self) {
        self.count.store(0, Ordering::SeqCst);
    }

    /// Link creations that reached the server (counted when the proxy may break on them).
    pub fn creates(&self) -> usize {
        self.creates.load(Ordering::SeqCst)
    }

    /// Requests to linkdeck's import that reached the server.
    pub fn imports(&self) -> usize {
        self.imports.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    client: reqwest::Client,
    count: Arc<AtomicUsize>,
    creates: Arc<AtomicUsize>,
    imports: Arc<AtomicUsize>,
    breaks: Breaks,
}

/// Numbers a request that may break the proxy: `Err` once `limit` have been answered (the
/// request is refused), `Ok(true)` for the one whose answer is lost, `Ok(false)` otherwise.
fn numbered(counter: &AtomicUsize, limit: Option<usize>) -> Result<bool, ()> {
    let n = counter.fetch_add(1, Ordering::SeqCst);
    match limit {
        Some(limit) if n > limit => {
            counter.fetch_sub(1, Ordering::SeqCst);
            Err(())
        }
        Some(limit) => Ok(n == limit),
        None => Ok(false),
    }
}

fn list_page(query: Option<&str>) -> u32 {
    query
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

async fn forward(State(state): State<ProxyState>, request: Request) -> Response {
    state.count.fetch_add(1, Ordering::SeqCst);
    let (parts, body) = request.into_parts();
    if state.breaks.v1_only && parts.uri.path().starts_with("/api/linkdeck") {
        return status(StatusCode::NOT_FOUND);
    }
    let is_create = parts.method == Method::POST && parts.uri.path() == "/api/v1/links";
    let is_import = parts.method == Method::POST && parts.uri.path() == "/api/linkdeck/import";
    let mut lose_answer = false;
    // Numbered as they arrive, so concurrent ones cannot slip past the limit.
    if is_create && state.breaks.creates.is_some() {
        match numbered(&state.creates, state.breaks.creates) {
            Ok(lose) => lose_answer = lose,
            Err(()) => return status(StatusCode::SERVICE_UNAVAILABLE),
        }
    }
    if is_import {
        match numbered(&state.imports, state.breaks.imports) {
            Ok(lose) => lose_answer = lose,
            Err(()) => return status(StatusCode::SERVICE_UNAVAILABLE),
        }
    }
    if parts.method == Method::GET
        && parts.uri.path() == "/api/v1/links"
        && let Some(from) = state.breaks.list_page
        && list_page(parts.uri.query()) >= from
    {
        return status(StatusCode::SERVICE_UNAVAILABLE);
    }
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(body) = axum::body::to_bytes(body, 16 << 20).await else {
        return status(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let mut outgoing = state
        .client
        .request(parts.method, format!("{}{path}", state.upstream))
        .body(body);
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            outgoing = outgoing.header(name, value);
        }
    }
    let Ok(answer) = outgoing.send().await else {
        return status(StatusCode::BAD_GATEWAY);
    };
    if lose_answer {
        // The server made the links; the client hears only that something went wrong.
        return status(StatusCode::BAD_GATEWAY);
    }
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != header::TRANSFER_ENCODING && name != header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    let body = answer.bytes().await.unwrap_or_default();
    response
        .body(Body::from(body))
        .unwrap_or_else(|_| status(StatusCode::BAD_GATEWAY))
}

fn status(code: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}
