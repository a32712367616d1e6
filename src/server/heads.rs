//! Bounds on what a request's head may carry. hyper refuses a head longer than its buffer with
//! a bare 431 before the path is known; these tighter limits answer in the path's own format
//! (JSON under `/api/`, a page elsewhere), and keep every header the handlers read, cache or
//! store small.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::pages;

/// The longest value one header may have. Real User-Agents and Referers are a few hundred
/// bytes; nginx and Apache stop at 8 KiB too.
pub const MAX_HEADER_VALUE: usize = 8 * 1024;
/// The most all header names and values together may take.
pub const MAX_HEADERS: usize = 16 * 1024;
/// The longest head hyper reads at all (its buffer); longer ones get its own bare 431.
pub const MAX_HEAD: usize = 32 * 1024;

/// Whether a request's headers stay within [`MAX_HEADER_VALUE`] and [`MAX_HEADERS`].
pub fn within_limits(headers: &axum::http::HeaderMap) -> bool {
    let mut total = 0;
    for (name, value) in headers {
        if value.len() > MAX_HEADER_VALUE {
            return false;
        }
        total += name.as_str().len() + value.len();
    }
    total <= MAX_HEADERS
}

/// The 431 for a request whose headers are too large: a bare status on the API (the JSON guard
/// gives it its body), the page elsewhere.
pub fn too_large(api: bool) -> Response {
    if api {
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE.into_response()
    } else {
        pages::headers_too_large()
    }
}
