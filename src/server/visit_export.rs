//! `GET /api/linkdeck/visits`: the caller's raw visits streamed as NDJSON or CSV
//! (`wire::visits`), read a window of the log at a time so memory stays flat however many
//! there are.
//!
//! An export is long-lived, so it is bounded as everything a caller starts is: a few run at
//! once ([`EXPORTS_AT_ONCE`]; more are told to come back), and one whose reader stops reading
//! for [`STALL`] is ended, so a client that walks away cannot hold a turn and a connection for
//! ever. A failure after the first bytes ends the body early (the client sees it cut); a bad
//! question or a scope that is not the caller's is answered before anything is streamed.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::{Semaphore, mpsc};

use super::error::ApiError;
use super::extract::Caller;
use super::{AppState, params};

/// Exports streaming at once, across callers.
pub const EXPORTS_AT_ONCE: usize = 4;

/// How long an export waits for its reader to take the next piece before it gives up.
const STALL: Duration = Duration::from_secs(60);

/// About how many bytes go out in one piece of the body.
const PIECE: usize = 64 << 10;

/// The turns of exports, shared by the server's requests.
pub fn turns() -> Arc<Semaphore> {
    Arc::new(Semaphore::new(EXPORTS_AT_ONCE))
}

pub async fn export(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (query, format) = params::visits_query(query.as_deref())?;
    let turn = state.exports.clone().try_acquire_owned().map_err(|_| {
        ApiError::Status(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{EXPORTS_AT_ONCE} exports of visits are running: try again when one has ended."
            ),
        )
    })?;
    let mut visits = caller.backend.visits(&query).await?;
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    tokio::spawn(async move {
        let _turn = turn;
        let mut piece = format.head();
        loop {
            let next = visits.next().await;
            let end = match &next {
                Some(Ok(visit)) => {
                    piece.extend(format.line(visit));
                    false
                }
                _ => true,
            };
            if piece.len() >= PIECE || (end && !piece.is_empty()) {
                let out = Bytes::from(std::mem::take(&mut piece));
                if tx.send_timeout(Ok(out), STALL).await.is_err() {
                    tracing::info!("an export of visits ended: its reader stopped reading");
                    return;
                }
            }
            match next {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "an export of visits failed part way");
                    let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                    return;
                }
                None => return,
            }
        }
    });
    let pieces = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|piece| (piece, rx))
    });
    let body = Body::from_stream(pieces);
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    Ok(response)
}
