//! The one place where what a v1 server answers (or fails to answer) becomes a domain
//! [`Error`]. Every message names the server and says what a person can do; none holds the key.

use std::error::Error as StdError;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, LOCATION, RETRY_AFTER};
use serde_json::Value;

use super::body;
use super::body::Answer;
use super::decode;
use crate::domain::{EXCERPT_CHARS, Error, clip};

/// What a request was about, for messages.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The server, as `https://sho.rt` (never with credentials).
    pub origin: &'a str,
    /// The record asked for (`link 12`), or `None` for a list, where a 404 means the path does
    /// not exist on that server rather than a missing record.
    pub record: Option<&'a str>,
}

/// Whether a failed read may be sent again: the server was busy or a proxy in front of it had
/// no answer; nothing was done.
pub fn is_retryable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// Maps a non-success answer. 2xx never comes here. What the server says is shown as an
/// excerpt; an error body longer than linkdeck reads is shown by its beginning.
pub fn from_answer(answer: &Answer, subject: Subject) -> Error {
    let (status, headers) = (answer.status, &answer.headers);
    let origin = subject.origin;
    if status.is_redirection() {
        // phpShort sends a bad key to its login page unless the client expects JSON; a
        // redirect from an API path is never a real answer.
        let target = headers
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(|l| format!(" to {}", strip_query(l)))
            .unwrap_or_default();
        return Error::Unauthorized(format!(
            "{origin} redirected the API request{target}: the API key is missing or wrong, \
             or the base URL is not the service's address"
        ));
    }
    let json: Option<Value> = if answer.cut {
        None
    } else {
        serde_json::from_slice(&answer.body).ok()
    };
    let server_message = if answer.cut {
        Some(beginning(answer))
    } else {
        json.as_ref().and_then(decode::message)
    };
    let with_message = |text: String| match &server_message {
        Some(m) => format!("{text} ({m})"),
        None => text,
    };
    match status {
        StatusCode::UNPROCESSABLE_ENTITY => match &json {
            Some(body) => Error::Validation(decode::field_errors(body)),
            None => Error::Unavailable(with_message(format!(
                "{origin} refused the request (422) without saying which field"
            ))),
        },
        StatusCode::UNAUTHORIZED => {
            Error::Unauthorized(with_message(format!("{origin} did not accept the API key")))
        }
        StatusCode::FORBIDDEN => Error::Forbidden(with_message(format!(
            "{origin} refused access with this API key"
        ))),
        StatusCode::NOT_FOUND => match subject.record {
            Some(record) => Error::NotFound(record.to_owned()),
            None => Error::Unavailable(format!(
                "{origin} has no v1 API at this address (404): check the base URL"
            )),
        },
        StatusCode::TOO_MANY_REQUESTS => Error::RateLimited {
            retry_after: retry_after(headers),
        },
        StatusCode::CONFLICT => Error::Conflict(
            server_message.unwrap_or_else(|| "the record changed on the server".into()),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => {
            Error::field("request", "is larger than the server accepts")
        }
        status => Error::Unavailable(with_message(format!("{origin} answered {status}"))),
    }
}

/// An error body longer than linkdeck reads, by what it begins with.
fn beginning(answer: &Answer) -> String {
    let text = String::from_utf8_lossy(&answer.body);
    format!(
        "an error of more than {}, the most linkdeck reads of one, which begins: {}",
        body::size(answer.limit.bytes()),
        clip(text.trim(), EXCERPT_CHARS)
    )
}

/// A success longer than what linkdeck reads of its kind: the rest was left unread.
pub fn too_large(answer: &Answer, subject: Subject) -> Error {
    let about = subject
        .record
        .map(|record| format!(" ({record})"))
        .unwrap_or_default();
    Error::Unavailable(format!(
        "{} sent more than {} in answer to {}{about}, the most linkdeck reads of {}; it \
         stopped reading there",
        subject.origin,
        body::size(answer.limit.bytes()),
        answer.request,
        answer.limit.noun()
    ))
}

/// A 2xx whose body is not the JSON expected.
pub fn not_json(status: StatusCode, headers: &HeaderMap, subject: Subject) -> Error {
    let kind = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or(v).trim().to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "no content type".into());
    Error::Unavailable(format!(
        "{} answered {} with {kind} instead of JSON: is the base URL the service's address?",
        subject.origin,
        status.as_u16()
    ))
}

/// A body that is JSON but not the record expected.
pub fn unreadable(subject: Subject, what: &str, problem: &str) -> Error {
    Error::Unavailable(format!(
        "{} sent {what} that linkdeck cannot read: {problem}",
        subject.origin
    ))
}

/// The request never got an answer: refused, unresolvable, timed out, cut off.
pub fn from_transport(err: &reqwest::Error, origin: &str, timeout: Duration) -> Error {
    if err.is_timeout() {
        return Error::Unavailable(format!(
            "{origin} did not answer within {}",
            human_duration(timeout)
        ));
    }
    let cause = root_cause(err);
    if err.is_connect() {
        Error::Unavailable(format!("cannot reach {origin}: {cause}"))
    } else {
        Error::Unavailable(format!("lost the connection to {origin}: {cause}"))
    }
}

/// The innermost cause, in plain words where a common one is recognised.
fn root_cause(err: &(dyn StdError + 'static)) -> String {
    let mut current: &(dyn StdError + 'static) = err;
    while let Some(next) = current.source() {
        if let Some(io) = next.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            let plain = match io.kind() {
                ConnectionRefused => Some("connection refused"),
                ConnectionReset => Some("the connection was reset"),
                ConnectionAborted => Some("the connection was aborted"),
                TimedOut => Some("the connection timed out"),
                HostUnreachable | NetworkUnreachable => Some("no route to the host"),
                UnexpectedEof => Some("the server closed the connection"),
                _ => None,
            };
            if let Some(plain) = plain {
                return plain.to_owned();
            }
        }
        current = next;
    }
    let text = current.to_string();
    if text.contains("dns error") || text.contains("failed to lookup address") {
        "the host name does not resolve".to_owned()
    } else {
        text
    }
}

/// The answer began but did not arrive whole: the time limit ran out while it was read, or the
/// connection was lost part way.
pub fn cut_off(err: &reqwest::Error, origin: &str, timeout: Duration) -> Error {
    if err.is_timeout() {
        return Error::Unavailable(format!(
            "{origin} did not finish its answer within {} (the profile's timeout_secs)",
            human_duration(timeout)
        ));
    }
    Error::Unavailable(format!(
        "lost the connection to {origin} part way through its answer: {}",
        root_cause(err)
    ))
}

/// `Retry-After` as seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let wait = at.duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// `10s`, `1.5s` or `250ms`.
pub fn human_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{}s", d.as_secs())
    } else if d.as_secs() > 0 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn strip_query(location: &str) -> &str {
    location.split(['?', '#']).next().unwrap_or(location)
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;
    use serde_json::json;

    use super::*;

    const SUBJECT: Subject = Subject {
        origin: "https://sho.rt",
        record: Some("link 12"),
    };
    const LIST: Subject = Subject {
        origin: "https://sho.rt",
        record: None,
    };

    fn reply(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Answer {
        Answer {
            status,
            headers: headers.clone(),
            body: body.to_vec(),
            limit: body::Limit::Error,
            cut: false,
            request: "GET /api/v1/links/12".into(),
        }
    }

    fn answer(status: u16, body: Value) -> Error {
        from_answer(
            &reply(
                StatusCode::from_u16(status).unwrap(),
                &HeaderMap::new(),
                body.to_string().as_bytes(),
            ),
            SUBJECT,
        )
    }

    #[test]
    fn validation_keeps_field_names() {
        let err = answer(422, json!({"message": {"geo.0.key": ["Invalid country."]}}));
        assert_eq!(err, Error::field("geo.0.key", "Invalid country."));
    }

    #[test]
    fn auth_failures_are_unauthorized_and_refusals_forbidden() {
        let err = answer(401, json!({"message": "Unauthenticated."}));
        assert_eq!(
            err,
            Error::Unauthorized(
                "https://sho.rt did not accept the API key (Unauthenticated.)".into()
            )
        );
        let err = answer(
            403,
            json!({"message": "You don't have access to this feature.", "status": 403}),
        );
        assert!(matches!(err, Error::Forbidden(m) if m.contains("You don't have access")));
    }

    #[test]
    fn a_redirect_to_login_is_unauthorized() {
        let mut headers = HeaderMap::new();
        headers.insert(
            LOCATION,
            HeaderValue::from_static("https://sho.rt/login?next=x"),
        );
        let err = from_answer(&reply(StatusCode::FOUND, &headers, b""), SUBJECT);
        assert_eq!(
            err,
            Error::Unauthorized(
                "https://sho.rt redirected the API request to https://sho.rt/login: the API key \
                 is missing or wrong, or the base URL is not the service's address"
                    .into()
            )
        );
    }

    #[test]
    fn not_found_names_the_record_or_blames_the_base_url() {
        assert_eq!(
            answer(404, json!({"message": "Resource not found."})),
            Error::not_found("link 12")
        );
        let err = from_answer(
            &reply(StatusCode::NOT_FOUND, &HeaderMap::new(), b"<html>"),
            LIST,
        );
        assert!(matches!(err, Error::Unavailable(m) if m.contains("check the base URL")));
    }

    #[test]
    fn rate_limits_carry_retry_after() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        let err = from_answer(
            &reply(StatusCode::TOO_MANY_REQUESTS, &headers, b"{}"),
            SUBJECT,
        );
        assert_eq!(
            err,
            Error::RateLimited {
                retry_after: Some(Duration::from_secs(7))
            }
        );
    }

    #[test]
    fn retry_after_may_be_an_http_date() {
        let mut headers = HeaderMap::new();
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        // In the past: no wait.
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
    }

    #[test]
    fn server_errors_are_unavailable_with_the_status() {
        let err = from_answer(
            &reply(StatusCode::BAD_GATEWAY, &HeaderMap::new(), b"<html>"),
            SUBJECT,
        );
        assert_eq!(
            err,
            Error::Unavailable("https://sho.rt answered 502 Bad Gateway".into())
        );
        let err = answer(500, json!({"message": "Server Error"}));
        assert_eq!(
            err,
            Error::Unavailable(
                "https://sho.rt answered 500 Internal Server Error (Server Error)".into()
            )
        );
    }

    #[test]
    fn an_html_success_is_unavailable() {
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=UTF-8"),
        );
        let err = not_json(StatusCode::OK, &headers, SUBJECT);
        assert_eq!(
            err,
            Error::Unavailable(
                "https://sho.rt answered 200 with text/html instead of JSON: is the base URL \
                 the service's address?"
                    .into()
            )
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(Duration::from_secs(10)), "10s");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(human_duration(Duration::from_millis(250)), "250ms");
    }
}
