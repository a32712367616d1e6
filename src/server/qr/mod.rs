//! `GET /{alias}/qr.svg` and `GET /{alias}/qr.png`: the QR code of a short link, for printing
//! or embedding. Never a click: the code is only the short URL, and the link's rules apply
//! when someone scans it and follows `/{alias}`.
//!
//! What answers: any link that `/{alias}` finds, whatever its state — disabled, expired or
//! password-protected links included, because the code holds nothing but the public short URL
//! (a printed code outlives a link's state; following it shows the disabled, expired or
//! password page then). An unknown alias is the same 404 page as `/{alias}`. Aliases cannot
//! contain dots, so no link is shadowed by these routes. `?size=N` asks for N pixels a side
//! (`crate::qr::SIZE_MIN` to `SIZE_MAX`, 512 by default).
//!
//! Anyone may ask, so a code stays cheap however it is asked for: each request counts against
//! its visitor's allowance on the public pages, a code drawn once is kept (`cache`), and
//! drawing runs on the blocking pool a few at a time (`Slots`), never on the async threads that
//! answer redirects.

mod cache;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{MatchedPath, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::AppState;
use super::pages;
use super::proxies::Visitor;
use super::redirect::lookup;
use super::slots::{Declined, Slots};
use crate::qr::{Qr, SIZE_DEFAULT, parse_size};
use cache::{ImageCache, Key};

/// Seconds a visitor is asked to wait when every drawing slot is taken.
const BUSY_RETRY: u64 = 5;

#[derive(Deserialize)]
pub struct QrQuery {
    size: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Image {
    Svg,
    Png,
}

/// The codes drawn and kept, and the turns to draw more.
pub struct Codes {
    cache: Arc<ImageCache>,
    slots: Slots,
}

impl Codes {
    /// Half the cores draw at once, at least one.
    pub fn new() -> Codes {
        Codes {
            cache: Arc::new(ImageCache::new()),
            slots: Slots::new(0),
        }
    }

    /// The image `key` names, kept or drawn now.
    async fn image(&self, key: Key) -> Result<Bytes, Response> {
        if let Some(kept) = self.cache.get(&key) {
            return Ok(kept);
        }
        let cache = self.cache.clone();
        let drawn = self
            .slots
            .run(move || {
                // Another request for the same code may have drawn it while this one waited.
                if let Some(kept) = cache.get(&key) {
                    return Ok::<_, String>(kept);
                }
                let image = draw(&key)?;
                cache.put(key, image.clone());
                Ok(image)
            })
            .await;
        match drawn {
            Ok(Ok(image)) => Ok(image),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "drawing a QR code failed");
                Err(pages::unavailable())
            }
            Err(Declined::Busy) => Err(pages::busy(BUSY_RETRY)),
            Err(Declined::Failed) => {
                tracing::warn!("drawing a QR code panicked");
                Err(pages::unavailable())
            }
        }
    }
}

fn draw(key: &Key) -> Result<Bytes, String> {
    let qr = Qr::new(&key.url)?;
    Ok(match key.image {
        Image::Svg => qr.svg(key.size).into_bytes(),
        Image::Png => qr.png(key.size)?,
    }
    .into())
}

/// `GET /{alias}/qr.svg` and `GET /{alias}/qr.png`: the route says which.
pub async fn code(
    State(state): State<Arc<AppState>>,
    Path(alias): Path<String>,
    Query(query): Query<QrQuery>,
    visitor: Visitor,
    route: MatchedPath,
    headers: HeaderMap,
) -> Response {
    let image = if route.as_str().ends_with(".png") {
        Image::Png
    } else {
        Image::Svg
    };
    let decision = state.public_page(visitor);
    if !decision.allowed {
        return pages::too_many_requests(decision.retry_after);
    }
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
    let key = Key {
        url: format!("{}/{}", base.trim_end_matches('/'), link.alias),
        image,
        size,
    };
    let body = match state.qr_codes.image(key).await {
        Ok(body) => body,
        Err(page) => return page,
    };
    let content_type = match image {
        Image::Svg => "image/svg+xml",
        Image::Png => "image/png",
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
