//! A reverse proxy on 127.0.0.1 that forwards every HTTP request to one upstream server and
//! counts them: how a test or benchmark sees how many requests a client really made, whatever
//! server is behind it.

#![allow(dead_code)] // each test or bench target uses a part

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;

pub struct CountingProxy {
    pub addr: SocketAddr,
    count: Arc<AtomicUsize>,
}

impl CountingProxy {
    /// Starts forwarding to `upstream` (an `http://host:port` origin).
    pub async fn start(upstream: &str) -> CountingProxy {
        let count = Arc::new(AtomicUsize::new(0));
        let state = ProxyState {
            upstream: upstream.trim_end_matches('/').to_owned(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("an HTTP client"),
            count: count.clone(),
        };
        let app = Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        CountingProxy { addr, count }
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
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    client: reqwest::Client,
    count: Arc<AtomicUsize>,
}

async fn forward(State(state): State<ProxyState>, request: Request) -> Response {
    state.count.fetch_add(1, Ordering::SeqCst);
    let (parts, body) = request.into_parts();
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
