//! The one mapping from what can go wrong on `/api/` to a status code and a JSON body, and the
//! guard that turns any other error response on `/api/` (405 from the router, 413 from the body
//! limit, 431 from the header limits, 408 from the timeout, 500 from a caught panic) into the
//! same JSON shape.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::domain::{Error, FieldErrors};
use crate::wire;

/// An answer other than success on `/api/`.
#[derive(Debug)]
pub enum ApiError {
    /// What a backend answered.
    Domain(Error),
    /// The request itself is unusable (wrong content type, body not UTF-8 …).
    Status(StatusCode, String),
    /// Too many requests: the limit and the seconds until the window opens again.
    RateLimited { limit: u32, retry_after: u64 },
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError::Domain(e)
    }
}

impl From<FieldErrors> for ApiError {
    fn from(e: FieldErrors) -> Self {
        ApiError::Domain(Error::Validation(e))
    }
}

impl ApiError {
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        ApiError::Domain(Error::field(field, message))
    }

    fn status_and_body(&self) -> (StatusCode, Value) {
        match self {
            ApiError::Domain(Error::NotFound(_)) => (
                StatusCode::NOT_FOUND,
                wire::error(404, "Resource not found."),
            ),
            ApiError::Domain(Error::Validation(fields)) => {
                (StatusCode::UNPROCESSABLE_ENTITY, wire::validation(fields))
            }
            ApiError::Domain(Error::Unauthorized(_)) => (
                StatusCode::UNAUTHORIZED,
                wire::error(401, "Unauthenticated."),
            ),
            ApiError::Domain(Error::RateLimited { .. }) | ApiError::RateLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                wire::error(429, "Too Many Attempts."),
            ),
            ApiError::Domain(Error::Forbidden(message)) => {
                (StatusCode::FORBIDDEN, wire::error(403, message))
            }
            ApiError::Domain(Error::Conflict(message)) => {
                (StatusCode::CONFLICT, wire::error(409, message))
            }
            ApiError::Domain(Error::Unsupported(message)) => {
                (StatusCode::NOT_IMPLEMENTED, wire::error(501, message))
            }
            ApiError::Domain(Error::Unavailable(message)) => {
                // The detail may name files; it goes to the log, not to the caller.
                tracing::warn!(error = %message, "backend unavailable");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    wire::error(503, "The service is unavailable; try again later."),
                )
            }
            ApiError::Status(status, message) => (*status, wire::error(status.as_u16(), message)),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = self.status_and_body();
        let mut response = (status, axum::Json(body)).into_response();
        let retry = match &self {
            ApiError::RateLimited { limit, retry_after } => Some((*limit, *retry_after)),
            ApiError::Domain(Error::RateLimited { retry_after }) => {
                retry_after.map(|d| (0, d.as_secs().max(1)))
            }
            _ => None,
        };
        if let Some((limit, retry_after)) = retry {
            let headers = response.headers_mut();
            headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            if limit > 0 {
                headers.insert("x-ratelimit-limit", HeaderValue::from(limit));
                headers.insert("x-ratelimit-remaining", HeaderValue::from(0));
            }
        }
        response
    }
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// The message for an error status that reached the client without a JSON body.
fn message_for(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "Resource not found.",
        StatusCode::METHOD_NOT_ALLOWED => "The method is not allowed for this resource.",
        StatusCode::PAYLOAD_TOO_LARGE => "The request body is too large.",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => {
            "The request headers are too large (at most 8 KiB a header, 16 KiB in all)."
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            "Send the fields as application/x-www-form-urlencoded."
        }
        StatusCode::REQUEST_TIMEOUT => "The request took too long.",
        StatusCode::UNAUTHORIZED => "Unauthenticated.",
        StatusCode::TOO_MANY_REQUESTS => "Too Many Attempts.",
        StatusCode::BAD_REQUEST => "The request is malformed.",
        s if s.is_server_error() => "Something went wrong on the server.",
        _ => "The request cannot be answered.",
    }
}

/// Whether a path belongs to the API, whose every answer is JSON.
pub fn is_api_path(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// An error answer on `/api/` as it leaves: with a JSON body, whoever produced it (the router,
/// the body limit, the timeout, a caught panic, the header bounds). Other answers pass as they are.
pub fn json_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let body = wire::error(status.as_u16(), message_for(status));
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(body.to_string()))
}

/// The fields a validation error names, for the parsers' tests; any other error fails the test.
#[cfg(test)]
pub(super) fn invalid_fields(e: ApiError) -> Vec<String> {
    match e {
        ApiError::Domain(crate::domain::Error::Validation(f)) => {
            f.iter().map(|(k, _)| k.to_owned()).collect()
        }
        other => panic!("not a validation error: {other:?}"),
    }
}
