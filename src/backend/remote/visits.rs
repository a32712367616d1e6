//! The raw visits of a `linkdeck serve`: an export read from `GET /api/linkdeck/visits` as
//! NDJSON, and a live feed read from `GET /api/linkdeck/visits/live` as server-sent events, both
//! a line at a time as they arrive, so memory stays flat however many there are. A v1-only
//! server (phpShort) has no visit log, and a linkdeck server from before them says it has none;
//! both are told apart before anything is asked.
//!
//! What the server sends is bounded as every answer is: a line longer than any visit can be is
//! an error, and so is a server that goes silent (for the profile's timeout during an export,
//! for a few of the live feed's keep-alive comments during a feed).

use std::collections::VecDeque;

use futures::StreamExt;
use reqwest::Method;

use super::RemoteBackend;
use super::body::Limit;
use super::errors::{self, human_duration};
use super::http::{Api, Body, Call};
use crate::backend::VisitStream;
use crate::domain::{Error, Id, Result, StatsScope, Visit, VisitQuery};
use crate::wire::linkdeck::{LIVE_VISITS_PATH, VISITS_PATH};

/// The longest line read as one visit: every value in one is bounded far below this.
const LINE_MAX: usize = 16 << 10;

/// How long a live feed may stay silent: the server sends a comment every 15 seconds.
const LIVE_SILENCE: std::time::Duration = std::time::Duration::from_secs(45);

/// How the body holds its visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A visit a line.
    Ndjson,
    /// Server-sent events, each visit's JSON in its `data` (other fields and comments are
    /// passed over).
    Events,
}

/// Where a visit stream is: the response, the bytes of a line not yet ended, and what the lines
/// already ended said, in order (a visit, or what was wrong with it: the visits before a bad line
/// still arrive).
struct Reading {
    response: reqwest::Response,
    partial: Vec<u8>,
    ready: VecDeque<Result<Visit>>,
    /// The data lines of the event being read.
    data: Vec<u8>,
    shape: Shape,
    origin: String,
    /// How long the server may stay silent.
    timeout: std::time::Duration,
}

impl Reading {
    fn unreadable(&self, problem: &str) -> Error {
        let subject = errors::Subject {
            origin: &self.origin,
            record: None,
        };
        errors::unreadable(subject, "a visit", problem)
    }

    fn take_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match self.shape {
            Shape::Ndjson => self.take_visit(line),
            // A blank line ends an event; `data:` lines make up its data.
            Shape::Events if line.is_empty() => {
                let data = std::mem::take(&mut self.data);
                self.take_visit(&data);
            }
            Shape::Events => {
                if let Some(data) = line.strip_prefix(b"data:") {
                    if !self.data.is_empty() {
                        self.data.push(b'\n');
                    }
                    self.data
                        .extend_from_slice(data.strip_prefix(b" ").unwrap_or(data));
                }
            }
        }
    }

    fn take_visit(&mut self, text: &[u8]) {
        if text.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let visit = serde_json::from_slice(text).map_err(|e| self.unreadable(&e.to_string()));
        self.ready.push_back(visit);
    }

    /// The next visit, `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<Visit>> {
        loop {
            if let Some(visit) = self.ready.pop_front() {
                return visit.map(Some);
            }
            let chunk = tokio::time::timeout(self.timeout, self.response.chunk())
                .await
                .map_err(|_| {
                    Error::Unavailable(format!(
                        "{} stopped sending visits for {}",
                        self.origin,
                        human_duration(self.timeout)
                    ))
                })?
                .map_err(|e| errors::cut_off(&e, &self.origin, self.timeout))?;
            let Some(chunk) = chunk else {
                let rest = std::mem::take(&mut self.partial);
                self.take_line(&rest);
                return self.ready.pop_front().transpose();
            };
            let mut rest: &[u8] = &chunk;
            while let Some(end) = rest.iter().position(|b| *b == b'\n') {
                let (line, after) = rest.split_at(end);
                if self.partial.is_empty() {
                    self.take_line(line);
                } else {
                    let mut whole = std::mem::take(&mut self.partial);
                    whole.extend_from_slice(line);
                    self.take_line(&whole);
                }
                rest = &after[1..];
            }
            self.partial.extend_from_slice(rest);
            if self.partial.len() > LINE_MAX || self.data.len() > LINE_MAX {
                let long = self.unreadable(&format!(
                    "a line longer than {}",
                    super::body::size(LINE_MAX)
                ));
                self.ready.push_back(Err(long));
            }
        }
    }
}

impl RemoteBackend {
    /// Whether the server keeps a visit log this client can read; an error saying why not
    /// otherwise.
    async fn has_visit_log(&self) -> Result<()> {
        let origin = self.http.origin();
        match self.linkdeck().await? {
            None => Err(Error::Unsupported(format!(
                "{origin} keeps no visit log to read (only linkdeck serve has one)"
            ))),
            Some(caps) if !caps.visits => Err(Error::Unsupported(format!(
                "the linkdeck server at {origin} ({}) is older than the visit export and the \
                 live feed: upgrade it to read its visits",
                caps.version
            ))),
            Some(_) => Ok(()),
        }
    }

    pub(super) async fn stream_visits(&self, query: &VisitQuery) -> Result<VisitStream> {
        self.has_visit_log().await?;
        self.check_tag_scope(&query.scope).await?;
        let mut params = vec![("format", "ndjson".to_owned())];
        let record = scope_params(&query.scope, &mut params);
        if let Some(since) = query.since {
            params.push(("since", since.to_string()));
        }
        if let Some(until) = query.until {
            params.push(("until", until.to_string()));
        }
        if let Some(after) = query.after {
            params.push(("after", after.to_string()));
        }
        self.read_visits(
            VISITS_PATH,
            &params,
            record,
            Shape::Ndjson,
            self.http.timeout(),
        )
        .await
    }

    pub(super) async fn stream_live(
        &self,
        scope: StatsScope,
        after: Option<Id>,
    ) -> Result<VisitStream> {
        self.has_visit_log().await?;
        self.check_tag_scope(&scope).await?;
        let mut params = Vec::new();
        let record = scope_params(&scope, &mut params);
        if let Some(after) = after {
            params.push(("after", after.to_string()));
        }
        let silence = LIVE_SILENCE.max(self.http.timeout());
        self.read_visits(LIVE_VISITS_PATH, &params, record, Shape::Events, silence)
            .await
    }

    async fn read_visits(
        &self,
        path: &str,
        params: &[(&'static str, String)],
        record: Option<String>,
        shape: Shape,
        silence: std::time::Duration,
    ) -> Result<VisitStream> {
        let response = self
            .http
            .open(&Call {
                method: Method::GET,
                api: Api::Linkdeck,
                path,
                query: params,
                body: Body::None,
                record: record.as_deref(),
                limit: Limit::Error,
            })
            .await?;
        let reading = Reading {
            response,
            partial: Vec::new(),
            ready: VecDeque::new(),
            data: Vec::new(),
            shape,
            origin: self.http.origin().to_owned(),
            timeout: silence,
        };
        let visits = futures::stream::try_unfold(reading, |mut reading| async move {
            Ok(reading.next().await?.map(|visit| (visit, reading)))
        });
        Ok(visits.boxed())
    }
}

/// The scope's parameter, and the record a 404 names.
fn scope_params(scope: &StatsScope, params: &mut Vec<(&'static str, String)>) -> Option<String> {
    let (name, value) = match scope {
        StatsScope::Link(id) => ("link", id.to_string()),
        StatsScope::Space(id) => ("space", id.to_string()),
        StatsScope::Domain(id) => ("domain", id.to_string()),
        StatsScope::Tag(tag) => ("tag", tag.clone()),
        StatsScope::Account => return None,
    };
    let record = format!("{name} {value}");
    params.push((name, value));
    Some(record)
}
