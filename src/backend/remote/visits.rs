//! The raw visits of a `linkdeck serve`, read from its `GET /api/linkdeck/visits` as NDJSON a
//! line at a time as they arrive: memory stays flat however many there are. A v1-only server
//! (phpShort) has no visit log, and a linkdeck server from before the export says it has none;
//! both are told apart before anything is asked.
//!
//! What the server sends is bounded as every answer is: a line longer than any visit can be is
//! an error, and so is a server that stops sending for the profile's timeout.

use std::collections::VecDeque;

use futures::StreamExt;
use reqwest::Method;

use super::RemoteBackend;
use super::body::Limit;
use super::errors::{self, human_duration};
use super::http::{Api, Body, Call};
use crate::backend::VisitStream;
use crate::domain::{Error, Result, StatsScope, Visit, VisitQuery};
use crate::wire::linkdeck::VISITS_PATH;

/// The longest line read as one visit: every value in one is bounded far below this.
const LINE_MAX: usize = 16 << 10;

/// Where a visit stream is: the response, the bytes of a line not yet ended, and what the lines
/// already ended said, in order (a visit, or what was wrong with it: the visits before a bad line
/// still arrive).
struct Reading {
    response: reqwest::Response,
    partial: Vec<u8>,
    ready: VecDeque<Result<Visit>>,
    origin: String,
    timeout: std::time::Duration,
}

impl Reading {
    fn unreadable(&self, problem: &str) -> Error {
        Error::Unavailable(format!(
            "{} sent a visit that linkdeck cannot read: {problem}",
            self.origin
        ))
    }

    fn take_line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let visit = serde_json::from_slice(line).map_err(|e| self.unreadable(&e.to_string()));
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
            if self.partial.len() > LINE_MAX {
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
    pub(super) async fn stream_visits(&self, query: &VisitQuery) -> Result<VisitStream> {
        let origin = self.http.origin().to_owned();
        match self.linkdeck().await? {
            None => {
                return Err(Error::Unsupported(format!(
                    "{origin} keeps no visit log to export (only linkdeck serve has one)"
                )));
            }
            Some(caps) if !caps.visits => {
                return Err(Error::Unsupported(format!(
                    "the linkdeck server at {origin} ({}) is older than the visit export: \
                     upgrade it to export its visits",
                    caps.version
                )));
            }
            Some(_) => {}
        }
        let mut params = vec![("format", "ndjson".to_owned())];
        let record = match query.scope {
            StatsScope::Link(id) => {
                params.push(("link", id.to_string()));
                Some(format!("link {id}"))
            }
            StatsScope::Space(id) => {
                params.push(("space", id.to_string()));
                Some(format!("space {id}"))
            }
            StatsScope::Domain(id) => {
                params.push(("domain", id.to_string()));
                Some(format!("domain {id}"))
            }
            StatsScope::Account => None,
        };
        if let Some(since) = query.since {
            params.push(("since", since.to_string()));
        }
        if let Some(until) = query.until {
            params.push(("until", until.to_string()));
        }
        if let Some(after) = query.after {
            params.push(("after", after.to_string()));
        }
        let response = self
            .http
            .open(&Call {
                method: Method::GET,
                api: Api::Linkdeck,
                path: VISITS_PATH,
                query: &params,
                body: Body::None,
                record: record.as_deref(),
                limit: Limit::Error,
            })
            .await?;
        let reading = Reading {
            response,
            partial: Vec::new(),
            ready: VecDeque::new(),
            origin,
            timeout: self.http.timeout(),
        };
        let visits = futures::stream::try_unfold(reading, |mut reading| async move {
            Ok(reading.next().await?.map(|visit| (visit, reading)))
        });
        Ok(visits.boxed())
    }
}
