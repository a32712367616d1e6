//! Sending one API request: headers, time limit, no redirects, how much of the answer is read
//! (`body.rs`), and the retry rule.
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
use super::body::{self, Answer, Limit};
use super::errors::{self, Subject};
use crate::domain::{BaseUrl, Error, Result};

const MAX_TRIES: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// The longest a streamed answer may take in all ([`Http::open`]).
const STREAM_MAX: Duration = Duration::from_secs(24 * 3600);

pub struct Http {
    client: reqwest::Client,
    /// `…/api/v1/`, with the trailing slash that makes `join` append.
    api: Url,
    /// `…/api/linkdeck/`: linkdeck's own paths beside v1 (`wire::linkdeck`).
    linkdeck: Url,
    /// The server as shown in messages: no credentials, no trailing slash.
    origin: String,
    key: ApiKey,
    timeout: Duration,
}

/// Which API a path is under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `/api/v1/`, which every phpShort-style server has.
    V1,
    /// `/api/linkdeck/`, which only `linkdeck serve` has.
    Linkdeck,
}

/// What a request carries.
pub enum Body {
    None,
    /// `application/x-www-form-urlencoded`, as every v1 write is sent.
    Form(String),
    /// `application/json`.
    Json(Vec<u8>),
}

/// A request to send.
pub struct Call<'a> {
    pub method: Method,
    pub api: Api,
    /// Under the API's root: `links`, `links/12`.
    pub path: &'a str,
    pub query: &'a [(&'static str, String)],
    pub body: Body,
    /// The record, for a 404 (`link 12`); `None` for lists.
    pub record: Option<&'a str>,
    /// How much of a success is read; an error's is read up to [`Limit::Error`].
    pub limit: Limit,
}

impl Answer {
    /// The answer if it is a success read whole; else the error it is — the server's refusal,
    /// or a success longer than its limit.
    pub fn success(self, subject: Subject) -> Result<Answer> {
        if !self.status.is_success() {
            return Err(errors::from_answer(&self, subject));
        }
        if self.cut {
            return Err(errors::too_large(&self, subject));
        }
        Ok(self)
    }

    /// The JSON body of a success (`Null` for an empty one).
    pub fn json(&self, subject: Subject) -> Result<Value> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&self.body)
            .map_err(|_| errors::not_json(self.status, &self.headers, subject))
    }
}

impl Http {
    pub fn new(base_url: &BaseUrl, key: ApiKey, timeout: Duration) -> Result<Http> {
        let (api, origin) = api_root(base_url)?;
        let linkdeck = linkdeck_root(&api)?;
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
            linkdeck,
            origin,
            key,
            timeout,
        })
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The profile's timeout: how long one answer may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends `call` under the retry rule and returns the JSON body of a success (`Null` for an
    /// empty one), or the mapped error.
    pub async fn send(&self, call: Call<'_>) -> Result<Value> {
        let subject = self.subject(&call);
        self.succeed(&call).await?.json(subject)
    }

    /// Sends `call` under the retry rule and returns a success read whole, or the mapped error.
    pub async fn succeed(&self, call: &Call<'_>) -> Result<Answer> {
        self.exchange(call).await?.success(self.subject(call))
    }

    fn subject<'a>(&'a self, call: &Call<'a>) -> Subject<'a> {
        Subject {
            origin: &self.origin,
            record: call.record,
        }
    }

    /// Sends `call` under the retry rule and returns the last answer, whatever its status; only
    /// a request that got no answer is an error.
    pub async fn exchange(&self, call: &Call<'_>) -> Result<Answer> {
        let url = self.url(call)?;
        let is_read = call.method == Method::GET;
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let answer = self.send_once(call, &url).await?;
            let status = answer.status;
            let may_retry = !status.is_success()
                && tries < MAX_TRIES
                && if is_read {
                    errors::is_retryable(status)
                } else {
                    status == StatusCode::TOO_MANY_REQUESTS
                };
            if may_retry {
                let wait = errors::retry_after(&answer.headers)
                    .unwrap_or(FIRST_BACKOFF * 2u32.pow(tries - 1));
                if started.elapsed() + wait <= self.timeout {
                    tracing::debug!(%status, ?wait, tries, "retrying {} {}", call.method, url.path());
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            return Ok(answer);
        }
    }

    fn url(&self, call: &Call<'_>) -> Result<Url> {
        let root = match call.api {
            Api::V1 => &self.api,
            Api::Linkdeck => &self.linkdeck,
        };
        root.join(call.path).map_err(|e| {
            Error::Unavailable(format!("cannot build the address of {}: {e}", call.path))
        })
    }

    /// `call`'s request, with the key and the body.
    fn request(&self, call: &Call<'_>, url: &Url) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .request(call.method.clone(), url.clone())
            .bearer_auth(self.key.expose())
            .header(ACCEPT, "application/json");
        if !call.query.is_empty() {
            request = request.query(call.query);
        }
        match &call.body {
            Body::None => {}
            Body::Form(form) => {
                request = request
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(form.clone());
            }
            Body::Json(json) => {
                request = request
                    .header(CONTENT_TYPE, "application/json")
                    .body(json.clone());
            }
        }
        request
    }

    /// Sends `call` once and hands back a successful response unread, for a body read as it
    /// arrives (no retry: a long read is not worth repeating blind). The profile's timeout bounds
    /// the wait for the answer's head; the caller bounds each wait for more of the body.
    pub async fn open(&self, call: &Call<'_>) -> Result<reqwest::Response> {
        let url = self.url(call)?;
        // The client's timeout covers a whole answer; a stream's body may rightly take hours.
        let request = self.request(call, &url).timeout(STREAM_MAX);
        let mut response = tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| {
                Error::Unavailable(format!(
                    "{} did not answer within {}",
                    self.origin,
                    errors::human_duration(self.timeout)
                ))
            })?
            .map_err(|e| errors::from_transport(&e, &self.origin, self.timeout))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let headers = response.headers().clone();
        let read = body::read(&mut response, Limit::Error.bytes())
            .await
            .map_err(|e| errors::cut_off(&e, &self.origin, self.timeout))?;
        let answer = Answer {
            status,
            headers,
            body: read.bytes,
            limit: Limit::Error,
            cut: read.cut,
            request: format!("{} {}", call.method, url.path()),
        };
        Err(errors::from_answer(&answer, self.subject(call)))
    }

    async fn send_once(&self, call: &Call<'_>, url: &Url) -> Result<Answer> {
        let request = self.request(call, url);
        let started = Instant::now();
        let mut response = request
            .send()
            .await
            .map_err(|e| errors::from_transport(&e, &self.origin, self.timeout))?;
        let status = response.status();
        let headers = response.headers().clone();
        let limit = if status.is_success() {
            call.limit
        } else {
            Limit::Error
        };
        let read = body::read(&mut response, limit.bytes())
            .await
            .map_err(|e| errors::cut_off(&e, &self.origin, self.timeout))?;
        tracing::debug!(
            method = %call.method,
            path = url.path(),
            %status,
            bytes = read.bytes.len(),
            cut = read.cut,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "API request"
        );
        Ok(Answer {
            status,
            headers,
            body: read.bytes,
            limit,
            cut: read.cut,
            request: format!("{} {}", call.method, url.path()),
        })
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

/// linkdeck's own paths, beside the v1 API's root: `…/api/linkdeck/`.
fn linkdeck_root(api: &Url) -> Result<Url> {
    api.join("../linkdeck/")
        .map_err(|_| Error::field("base_url", "cannot hold the API path"))
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
        for (base, linkdeck) in [
            ("https://sho.rt", "https://sho.rt/api/linkdeck/import"),
            (
                "http://127.0.0.1:8080/s/api/v1",
                "http://127.0.0.1:8080/s/api/linkdeck/import",
            ),
        ] {
            let (api, _) = api_root(&BaseUrl::parse(base).unwrap()).unwrap();
            let root = linkdeck_root(&api).unwrap();
            assert_eq!(root.join("import").unwrap().as_str(), linkdeck, "{base}");
        }
    }
}
