//! The front door: what hyper calls for every request. A short link's `GET /{alias}` — most of
//! what a shortener serves — is answered by the redirect handler directly; every other request
//! goes through the axum router and its middleware (`server::app`).
//!
//! Going around the router saves a redirect the per-request costs of its plumbing (each layer's
//! boxed copy of the service below it and boxed future, the route match, the path's extraction)
//! while it keeps what those layers give it, in the same order: the access log and the header
//! bounds of `server::edge` (a request outside them is left to the router, which answers 431),
//! the panic caught as `tower_http`'s `CatchPanicLayer` does, and the request timeout as its
//! `TimeoutLayer` does. Connection limits and timeouts are the accept loop's, around both.

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use tower_http::catch_panic::{DefaultResponseForPanic, ResponseForPanic};

use super::AppState;
use super::proxies::Visitor;
use crate::domain::is_alias_shaped;

/// The axum app, and what the redirect handler needs to be called without it.
pub struct Front {
    app: Router,
    state: Arc<AppState>,
    request_timeout: Duration,
}

impl Front {
    pub(super) fn new(app: Router, state: Arc<AppState>, request_timeout: Duration) -> Front {
        Front {
            app,
            state,
            request_timeout,
        }
    }

    /// The router, for every request [`Front::direct`] leaves to it.
    pub fn app(&self) -> &Router {
        &self.app
    }

    /// Whether the redirect handler answers `request` without the router: a `GET` of one
    /// alias-shaped path segment with headers within bounds. The router would send it to
    /// `redirect::follow` too: its only other one-segment routes are `/api` (which
    /// [`is_alias_shaped`] accepts, so it is named here) and `/robots.txt` (which it does not).
    /// A segment with a `%` in it is left to the router, which decodes it.
    pub fn direct<B>(&self, request: &Request<B>) -> bool {
        request.method() == Method::GET
            && request
                .uri()
                .path()
                .strip_prefix('/')
                .is_some_and(|alias| alias != "api" && is_alias_shaped(alias))
            && super::heads::within_limits(request.headers())
    }

    /// Answers a request [`Front::direct`] accepted, from the client at `peer`.
    pub async fn redirect<B>(&self, request: Request<B>, peer: SocketAddr) -> Response {
        let (parts, _) = request.into_parts();
        let logged = super::access::start(&parts.method, parts.uri.path());
        let state = &self.state;
        let visitor = Visitor(state.proxies.visitor(peer.ip(), &parts.headers));
        let alias = &parts.uri.path()[1..];
        let answered = super::redirect::alias_visited(state, &parts, alias, visitor);
        let timed = tokio::time::timeout(self.request_timeout, answered);
        let response = match AssertUnwindSafe(timed).catch_unwind().await {
            Ok(Ok(response)) => response,
            Ok(Err(_)) => StatusCode::REQUEST_TIMEOUT.into_response(),
            Err(panic) => DefaultResponseForPanic::default()
                .response_for_panic(panic)
                .map(Body::new),
        };
        super::access::finish(logged, response.status());
        response
    }
}
