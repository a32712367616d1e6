//! Sending one API request: headers, time limit, no redirects, and the retry rule.
//!
//! Retries: a read (GET) is sent again on 429, 502, 503 and 504, at most three tries in all,
//! waiting what `Retry-After` asks or 200 ms then 400 ms, and only while the waits fit in the
//! profile's timeout; a wait that does not fit gives the error at once (a 429 then carries the
//! server's `Retry-After`). A write is sent again only on 429, which a server answers before
//! doing anything; never on a 5xx, a timeout or a dropped connection, where the write may have
//! happened. Connection failures and timeouts are not retried for reads either: the person
//! learns at once that the server is down instead of after three time limits.

use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode, Url, redirect};
use serde_json::Value;

use super::ApiKey;
use super::errors::{self, Subject};
use crate::domain::{BaseUrl, Error, Result};

const MAX_TRIES: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

pub struct Http {
    client: reqwest::Client,
    /// `…/api/v1/`, with the trailing slash that makes `join` append.
    api: Url,
    /// The server as shown in messages: no credentials, no trailing slash.
    origin: String,
    key: ApiKey,
    timeout: Duration,
}

/// A request to send.
pub struct Call<'a> {
    pub method: Method,
    /// Under `/api/v1/`: `links`, `links/12`.
    pub path: &'a str,
    pub query: &'a [(&'static str, String)],
    pub form: Option<String>,
    /// The record, for a 404 (`link 12`); `None` for lists.
    pub record: Option<&'a str>,
}

impl Http {
    pub fn new(base_url: &BaseUrl, key: ApiKey, timeout: Duration) -> Result<Http> {
        let (api, origin) = api_root(base_url)?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // A redirect from an API path means the key was not accepted (phpShort sends
            // browsers to /login); following it would turn that into a confusing HTML answer.
            .redirect(redirect::Policy::none())
            .user_agent(concat!("linkdeck/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Unavailable(format!("cannot set up the HTTP client: {e}")))?;
        Ok(Http {
            client,
            api,
            origin,
            key,
            timeout,
        })
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Sends `call` under the retry rule and returns the JSON body of a success (`Null` for an
    /// empty one), or the mapped error.
    pub async fn send(&self, call: Call<'_>) -> Result<Value> {
        let subject = Subject {
            origin: &self.origin,
            record: call.record,
        };
        let url = self.api.join(call.path).map_err(|e| {
            Error::Unavailable(format!("cannot build the address of {}: {e}", call.path))
        })?;
        let is_read = call.method == Method::GET;
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let (status, headers, body) = self.send_once(&call, &url).await?;
            if status.is_success() {
                if body.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Value::Null);
                }
                return serde_json::from_slice(&body)
                    .map_err(|_| errors::not_json(status, &headers, subject));
            }
            let may_retry = tries < MAX_TRIES
                && if is_read {
                    errors::is_retryable(status)
                } else {
                    status == StatusCode::TOO_MANY_REQUESTS
                };
            if may_retry {
                let wait =
                    errors::retry_after(&headers).unwrap_or(FIRST_BACKOFF * 2u32.pow(tries - 1));
                if started.elapsed() + wait <= self.timeout {
                    tracing::debug!(%status, ?wait, tries, "retrying {} {}", call.method, url.path());
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            return Err(errors::from_answer(status, &headers, &body, subject));
        }
    }

    async fn send_once(
        &self,
        call: &Call<'_>,
        url: &Url,
    ) -> Result<(StatusCode, reqwest::header::HeaderMap, Vec<u8>)> {
        let mut request = self
            .client
            .request(call.method.clone(), url.clone())
            .bearer_auth(self.key.expose())
            .header(ACCEPT, "application/json");
        if !call.query.is_empty() {
            request = request.query(call.query);
        }
        if let Some(form) = &call.form {
            request = request
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(form.clone());
        }
        let started = Instant::now();
        let transport = |e: reqwest::Error| errors::from_transport(&e, &self.origin, self.timeout);
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(transport)?.to_vec();
        tracing::debug!(
            method = %call.method,
            path = url.path(),
            %status,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "v1 request"
        );
        Ok((status, headers, body))
    }
}

/// The API root under a base URL and the origin shown in messages. Accepts the service's
/// address with or without a trailing slash, and also one that already ends in `/api/v1`; what
/// makes a base URL usable was checked by [`BaseUrl::parse`].
pub fn api_root(base_url: &BaseUrl) -> Result<(Url, String)> {
    let bad = || Error::field("base_url", "cannot hold the API path");
    let mut url = Url::parse(base_url.as_str()).map_err(|_| bad())?;
    let path = url.path().trim_end_matches('/');
    let path = path.strip_suffix("/api/v1").unwrap_or(path).to_owned();
    url.set_path(&format!("{path}/"));
    let origin = url.as_str().trim_end_matches('/').to_owned();
    let api = url.join("api/v1/").map_err(|_| bad())?;
    Ok((api, origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_root_is_under_the_base_url() {
        for (base, api, origin) in [
            ("https://sho.rt", "https://sho.rt/api/v1/", "https://sho.rt"),
            (
                "https://sho.rt/",
                "https://sho.rt/api/v1/",
                "https://sho.rt",
            ),
            (
                "https://sho.rt/api/v1/",
                "https://sho.rt/api/v1/",
                "https://sho.rt",
            ),
            (
                "http://127.0.0.1:8080/s",
                "http://127.0.0.1:8080/s/api/v1/",
                "http://127.0.0.1:8080/s",
            ),
        ] {
            let (got_api, got_origin) = api_root(&BaseUrl::parse(base).unwrap()).unwrap();
            assert_eq!(
                (got_api.as_str(), got_origin.as_str()),
                (api, origin),
                "{base}"
            );
        }
        let (api, _) = api_root(&BaseUrl::parse("https://sho.rt").unwrap()).unwrap();
        assert_eq!(
            api.join("links/12").unwrap().as_str(),
            "https://sho.rt/api/v1/links/12"
        );
    }
}
