//! The raw visit log out, on linkdeck's own API:
//!
//! - `GET /api/linkdeck/visits`: the caller's visits a question asks for, streamed as NDJSON or
//!   CSV (`wire::visits`), read a window of the log at a time so memory stays flat however many
//!   there are;
//! - `GET /api/linkdeck/visits/live`: the visits logged from now on, as server-sent events (one
//!   `data:` line of a visit's JSON each, its `id:` the visit's id, so a reconnecting
//!   `EventSource` goes on where it stopped with `Last-Event-ID`), with a comment every
//!   [`KEEP_ALIVE`] so proxies keep a quiet stream open.
//!
//! Both are long-lived, so they are bounded as everything a caller starts is: a few of each run
//! at once (more are told to come back), and one whose reader stops reading for [`STALL`] is
//! ended, so a client that walks away holds neither a turn nor a connection for long. A bad
//! question or a scope that is not the caller's is answered before anything is streamed; a
//! failure after the first bytes ends the body early (the client sees it cut).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

use super::error::ApiError;
use super::extract::Caller;
use super::{AppState, params};
use crate::backend::VisitStream;

/// Exports streaming at once, across callers.
pub const EXPORTS_AT_ONCE: usize = 4;

/// Live feeds open at once, across callers.
pub const LIVE_AT_ONCE: usize = 16;

/// How long a stream waits for its reader to take the next piece before it gives up.
const STALL: Duration = Duration::from_secs(60);

/// How long a live feed stays silent before it sends a comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// About how many bytes of an export go out in one piece of the body.
const PIECE: usize = 64 << 10;

/// The turns of the two kinds of stream, shared by the server's requests, and the server's
/// stop, which ends every stream.
pub struct Turns {
    exports: Arc<Semaphore>,
    live: Arc<Semaphore>,
    stopping: watch::Receiver<bool>,
}

impl Turns {
    /// `stopping` turns true when the server stops.
    pub fn new(stopping: watch::Receiver<bool>) -> Turns {
        Turns {
            exports: Arc::new(Semaphore::new(EXPORTS_AT_ONCE)),
            live: Arc::new(Semaphore::new(LIVE_AT_ONCE)),
            stopping,
        }
    }
}

fn turn(
    turns: &Arc<Semaphore>,
    what: &str,
    at_once: usize,
) -> Result<OwnedSemaphorePermit, ApiError> {
    turns.clone().try_acquire_owned().map_err(|_| {
        ApiError::Status(
            StatusCode::TOO_MANY_REQUESTS,
            format!("{at_once} {what} are running: try again when one has ended."),
        )
    })
}

/// A body fed by `make`, which runs on a task of its own and hands over pieces through `send`;
/// the task ends (and with it the body) when `make` returns, the reader stalls or the server
/// stops.
fn pumped<F, Fut>(content_type: &'static str, stopping: &watch::Receiver<bool>, make: F) -> Response
where
    F: FnOnce(Sender) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    let work = make(Sender(tx));
    let mut stopping = stopping.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = work => {}
            _ = stopping.wait_for(|stop| *stop) => {}
        }
    });
    let pieces = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|piece| (piece, rx))
    });
    let mut response = (StatusCode::OK, Body::from_stream(pieces)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The sending end of a [`pumped`] body.
struct Sender(mpsc::Sender<Result<Bytes, std::io::Error>>);

impl Sender {
    /// Hands over `piece`; `false` when the reader has gone or stopped reading.
    async fn send(&self, piece: Vec<u8>) -> bool {
        if self
            .0
            .send_timeout(Ok(Bytes::from(piece)), STALL)
            .await
            .is_ok()
        {
            return true;
        }
        tracing::info!("a stream of visits ended: its reader stopped reading");
        false
    }

    async fn fail(&self, e: &crate::domain::Error) {
        tracing::warn!(error = %e, "a stream of visits failed part way");
        let _ = self.0.send(Err(std::io::Error::other(e.to_string()))).await;
    }
}

pub async fn export(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (query, format) = params::visits_query(query.as_deref())?;
    let turn = turn(
        &state.visit_turns.exports,
        "exports of visits",
        EXPORTS_AT_ONCE,
    )?;
    let mut visits = caller.backend.visits(&query).await?;
    Ok(pumped(
        format.content_type(),
        &state.visit_turns.stopping,
        move |out| async move {
            let _turn = turn;
            let mut piece = format.head();
            loop {
                let next = visits.next().await;
                if let Some(Ok(visit)) = &next {
                    piece.extend(format.line(visit));
                }
                let end = !matches!(next, Some(Ok(_)));
                if (piece.len() >= PIECE || (end && !piece.is_empty()))
                    && !out.send(std::mem::take(&mut piece)).await
                {
                    return;
                }
                match next {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return out.fail(&e).await,
                    None => return,
                }
            }
        },
    ))
}

pub async fn live(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (scope, mut after) = params::live_query(query.as_deref())?;
    // A reconnecting EventSource says where it stopped.
    if let Some(last) = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
    {
        after = Some(last);
    }
    let turn = turn(
        &state.visit_turns.live,
        "live feeds of visits",
        LIVE_AT_ONCE,
    )?;
    let visits = caller.backend.live_visits(scope, after).await?;
    Ok(pumped(
        "text/event-stream",
        &state.visit_turns.stopping,
        move |out| async move {
            let _turn = turn;
            feed(visits, out).await;
        },
    ))
}

/// Writes each visit of `visits` as an event, and a comment when none came for a while.
async fn feed(mut visits: VisitStream, out: Sender) {
    // The first bytes tell the reader (and any proxy) that the stream is open.
    if !out.send(b": linkdeck visits\n\n".to_vec()).await {
        return;
    }
    loop {
        let piece = match tokio::time::timeout(KEEP_ALIVE, visits.next()).await {
            Err(_) => b": still here\n\n".to_vec(),
            Ok(Some(Ok(visit))) => crate::wire::visits::event(&visit),
            Ok(Some(Err(e))) => return out.fail(&e).await,
            Ok(None) => return,
        };
        if !out.send(piece).await {
            return;
        }
    }
}
