//! `GET /{alias}/qr.svg` and `GET /{alias}/qr.png`: the QR code of a short link, for printing
//! or embedding. Never a click: the code is only the short URL, and the link's rules apply
//! when someone scans it and follows `/{alias}`.
//!
//! What answers: any link that `/{alias}` finds, whatever its state — disabled, expired or
//! password-protected links included, because the code holds nothing but the public short URL
//! (a printed code outlives a link's state; following it shows the disabled, expired or
//! password page then). An unknown alias is the same 404 page as `/{alias}`. Aliases cannot
//! contain dots, so no link is shadowed by these routes. `?size=N` asks for N pixels a side
//! (64 to 4096, 512 by default).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::AppState;
use super::pages;
use super::redirect::lookup;
use crate::qr::{Qr, SIZE_DEFAULT, parse_size};

#[derive(Deserialize)]
pub struct QrQuery {
    size: Option<String>,
}

#[derive(Clone, Copy)]
enum Image {
    Svg,
    Png,
}

pub async fn svg(
    state: State<Arc<AppState>>,
    alias: Path<String>,
    query: Query<QrQuery>,
    headers: HeaderMap,
) -> Response {
    answer(state, alias, query, headers, Image::Svg).await
}

pub async fn png(
    state: State<Arc<AppState>>,
    alias: Path<String>,
    query: Query<QrQuery>,
    headers: HeaderMap,
) -> Response {
    answer(state, alias, query, headers, Image::Png).await
}

async fn answer(
    State(state): State<Arc<AppState>>,
    Path(alias): Path<String>,
    Query(query): Query<QrQuery>,
    headers: HeaderMap,
    image: Image,
) -> Response {
    let size = match query.size.as_deref().map(parse_size) {
        None => SIZE_DEFAULT,
        Some(Ok(size)) => size,
        Some(Err(message)) => {
            return (StatusCode::BAD_REQUEST, format!("size {message}\n")).into_response();
        }
    };
    let link = match lookup(&state, &headers, &alias).await {
        Ok(link) => link,
        Err(page) => return page,
    };
    let base = match state.service.link_domain_name(link.id).await {
        Ok(Some(domain)) => domain,
        Ok(None) => state.public_url.clone(),
        Err(e) => {
            tracing::warn!(error = %e, "reading a link's domain failed");
            return pages::unavailable();
        }
    };
    let short_url = format!("{}/{}", base.trim_end_matches('/'), link.alias);
    let qr = match Qr::new(&short_url) {
        Ok(qr) => qr,
        Err(e) => {
            tracing::warn!(error = %e, "drawing a QR code failed");
            return pages::unavailable();
        }
    };
    let (content_type, body) = match image {
        Image::Svg => ("image/svg+xml", qr.svg(size).into_bytes()),
        Image::Png => match qr.png(size) {
            Ok(bytes) => ("image/png", bytes),
            Err(e) => {
                tracing::warn!(error = %e, "drawing a QR code failed");
                return pages::unavailable();
            }
        },
    };
    let mut response = body.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // The code changes only if the link's alias does; a few minutes of caching spare the
    // server a page full of them.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}
