//! The access log: one line per request with method, path (never the query, which may hold
//! secrets), status and time taken; keys and passwords travel in headers and bodies, which are
//! not logged. Written by `server::edge` for the router and by the front door for redirects.

use std::time::Instant;

use axum::http::{Method, StatusCode};

/// What a request's line needs from its start, when the access log is on.
pub struct Started {
    method: Method,
    path: String,
    at: Instant,
}

/// Notes a request's start, when the access log is on.
pub fn start(method: &Method, path: &str) -> Option<Started> {
    tracing::enabled!(target: "linkdeck::access", tracing::Level::INFO).then(|| Started {
        method: method.clone(),
        path: path.to_owned(),
        at: Instant::now(),
    })
}

/// Logs a request [`start`] noted, with the status it was answered.
pub fn finish(started: Option<Started>, status: StatusCode) {
    if let Some(Started { method, path, at }) = started {
        tracing::info!(
            target: "linkdeck::access",
            %method,
            path,
            status = status.as_u16(),
            micros = at.elapsed().as_micros() as u64,
        );
    }
}
