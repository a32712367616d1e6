//! linkdeck's own API on a `linkdeck serve` (`wire::linkdeck`): whether the server has it, and
//! the two calls a copy or an import makes of it — a page of export records imported with
//! everything they carry, and the hourly history of a page of links.
//!
//! Whether the server has it is asked once, at `GET /api/linkdeck/capabilities`, and only a
//! capabilities record naming linkdeck and this API's version counts: every other answer a
//! server gives for a path it lacks (a phpShort site's 404, a redirect, a web page, any other
//! refusal) means a v1-only server, which is then used exactly as before. Only a server that
//! is unwell right now (429 or 5xx after the read retries, no answer at all) is an error, so a
//! passing fault never quietly turns a linkdeck server into a v1-only one.

use std::collections::HashMap;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::RemoteBackend;
use super::body::Answer;
use super::body::Limit;
use super::decode;
use super::errors::{self, Subject};
use super::http::{Api, Body, Call};
use crate::domain::{Id, OnConflict, Result, TrafficHour};
use crate::wire::linkdeck::{
    API_VERSION, CAPABILITIES_PATH, Capabilities, IMPORT_PATH, ImportAnswer, SERVER, TRAFFIC_PATH,
};

/// What a capabilities answer says: `Some` for a linkdeck server speaking this API's version,
/// `None` for any other server; an error only for a server that is unwell now, or whose success
/// is longer than any capabilities record (or a v1-only site's page) can be.
fn capabilities_of(answer: &Answer, subject: Subject) -> Result<Option<Capabilities>> {
    let status = answer.status;
    if status.is_success() {
        if answer.cut {
            return Err(errors::too_large(answer, subject));
        }
        let caps = serde_json::from_slice::<Value>(&answer.body)
            .ok()
            .and_then(|body| {
                decode::record(&body, |data| {
                    serde_json::from_value::<Capabilities>(data.clone()).map_err(|e| e.to_string())
                })
                .ok()
            })
            .filter(|c| c.server == SERVER && c.api == API_VERSION);
        return Ok(caps);
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Err(errors::from_answer(answer, subject));
    }
    Ok(None)
}

impl RemoteBackend {
    /// linkdeck's own API on this server, with its limits: `None` for a v1-only server (a
    /// phpShort site). Asked once per backend.
    pub async fn linkdeck(&self) -> Result<Option<Capabilities>> {
        self.linkdeck
            .get_or_try_init(|| async {
                let call = Call {
                    method: Method::GET,
                    api: Api::Linkdeck,
                    path: CAPABILITIES_PATH,
                    query: &[],
                    body: Body::None,
                    record: None,
                    limit: Limit::Record,
                };
                let answer = self.http.exchange(&call).await?;
                let caps = capabilities_of(&answer, self.subject(None))?;
                tracing::debug!(linkdeck = caps.is_some(), status = %answer.status, "capabilities");
                Ok(caps)
            })
            .await
            .cloned()
    }

    /// Imports `body`, a linkdeck JSON export, on a linkdeck server: one transaction there,
    /// everything the records carry kept, links already there passed over. Errors name rows by
    /// their line in `body` (`line 4: url`). Sent once (a write): a lost answer is found out by
    /// running again, which passes over what arrived.
    pub async fn import_records(
        &self,
        body: Vec<u8>,
        on_conflict: OnConflict,
    ) -> Result<ImportAnswer> {
        let query = [("on_conflict", on_conflict.as_str().to_owned())];
        let what = "the import";
        let answer = self
            .http
            .send(Call {
                method: Method::POST,
                api: Api::Linkdeck,
                path: IMPORT_PATH,
                query: &query,
                body: Body::Json(body),
                record: Some(what),
                limit: Limit::Record,
            })
            .await?;
        decode::record(&answer, |data| {
            serde_json::from_value::<ImportAnswer>(data.clone()).map_err(|e| e.to_string())
        })
        .map_err(|problem| {
            errors::unreadable(self.subject(Some(what)), "an import answer", &problem)
        })
    }

    /// The hourly traffic history of the caller's links `ids` (at most the server's
    /// `traffic_max_ids`) on a linkdeck server; links without any are left out. An answer
    /// longer than linkdeck reads of one ([`TRAFFIC_MAX`](super::body::TRAFFIC_MAX)) is asked
    /// for again in halves, down to one link, whose history longer than that is an error naming
    /// it.
    pub async fn traffic_history(&self, ids: &[Id]) -> Result<HashMap<Id, Vec<TrafficHour>>> {
        let mut out = HashMap::new();
        let mut asks = vec![ids];
        while let Some(some) = asks.pop() {
            if some.is_empty() {
                continue;
            }
            match self.traffic_of(some).await? {
                Some(links) => out.extend(links),
                None => {
                    let (first, second) = some.split_at(some.len() / 2);
                    asks.extend([second, first]);
                }
            }
        }
        Ok(out)
    }

    /// One request of [`traffic_history`]: `None` when the answer is longer than linkdeck reads
    /// of one and several links were asked for; for one link, that is an error naming it.
    ///
    /// [`traffic_history`]: RemoteBackend::traffic_history
    async fn traffic_of(&self, ids: &[Id]) -> Result<Option<Vec<(Id, Vec<TrafficHour>)>>> {
        let list = ids.iter().map(Id::to_string).collect::<Vec<_>>().join(",");
        let query = [("ids", list)];
        let what = match ids {
            [one] => format!("traffic history of link {one}"),
            _ => "traffic history".to_owned(),
        };
        let subject = self.subject(Some(&what));
        let answer = self
            .http
            .exchange(&Call {
                method: Method::GET,
                api: Api::Linkdeck,
                path: TRAFFIC_PATH,
                query: &query,
                body: Body::None,
                record: Some(&what),
                limit: Limit::Traffic,
            })
            .await?;
        if answer.status.is_success() && answer.cut && ids.len() > 1 {
            tracing::debug!(
                links = ids.len(),
                "traffic history asked for again in halves"
            );
            return Ok(None);
        }
        let answer = answer.success(subject)?;
        let links = decode::traffic(&answer.body)
            .map_err(|problem| errors::unreadable(subject, "traffic history", &problem))?;
        Ok(Some(links))
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderMap;

    use super::*;

    const SUBJECT: Subject = Subject {
        origin: "https://sho.rt",
        record: None,
    };

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status: StatusCode::from_u16(status).unwrap(),
            headers: HeaderMap::new(),
            body: body.as_bytes().to_vec(),
            limit: Limit::Record,
            cut: false,
            request: "GET /api/linkdeck/capabilities".into(),
        }
    }

    #[test]
    fn only_a_linkdeck_capabilities_record_counts() {
        let caps = r#"{"data": {"server": "linkdeck", "version": "0.1.0", "api": 1,
            "import_max_bytes": 1000, "traffic_max_ids": 100}, "status": 200}"#;
        let got = capabilities_of(&answer(200, caps), SUBJECT)
            .unwrap()
            .unwrap();
        assert_eq!(got.import_max_bytes, 1000);
        // What other servers answer for a path they lack: phpShort's 404 (JSON or a page), a
        // redirect to a login page, a refusal, a page with 200, a record of something else.
        for (status, body) in [
            (404, r#"{"message": "Not Found"}"#),
            (404, "<html>not found</html>"),
            (302, ""),
            (401, r#"{"message": "Unauthenticated."}"#),
            (403, ""),
            (405, ""),
            (200, "<html>home</html>"),
            (200, r#"{"data": {"server": "other", "api": 1}}"#),
            (200, &caps.replace(r#""api": 1"#, r#""api": 2"#) as &str),
        ] {
            assert_eq!(
                capabilities_of(&answer(status, body), SUBJECT).unwrap(),
                None,
                "{status} {body}"
            );
        }
        // A server unwell right now is an error, not a v1-only server.
        for status in [429, 500, 503] {
            assert!(capabilities_of(&answer(status, ""), SUBJECT).is_err());
        }
    }
}
