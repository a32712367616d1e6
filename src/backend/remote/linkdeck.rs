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
use super::decode;
use super::errors::{self, Subject};
use super::http::{Answer, Api, Body, Call};
use crate::domain::{Error, Id, OnConflict, Result, TrafficHour};
use crate::wire::linkdeck::{
    API_VERSION, CAPABILITIES_PATH, Capabilities, IMPORT_PATH, ImportAnswer, LinkTraffic, SERVER,
    TRAFFIC_PATH,
};

/// What a capabilities answer says: `Some` for a linkdeck server speaking this API's version,
/// `None` for any other server; an error only for a server that is unwell now.
fn capabilities_of(answer: &Answer, subject: Subject) -> Result<Option<Capabilities>> {
    let status = answer.status;
    if status.is_success() {
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
        return Err(errors::from_answer(
            status,
            &answer.headers,
            &answer.body,
            subject,
        ));
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
    /// `traffic_max_ids`) on a linkdeck server; links without any are left out.
    pub async fn traffic_history(&self, ids: &[Id]) -> Result<HashMap<Id, Vec<TrafficHour>>> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let list = ids.iter().map(Id::to_string).collect::<Vec<_>>().join(",");
        let query = [("ids", list)];
        let what = "traffic history";
        let answer = self
            .http
            .send(Call {
                method: Method::GET,
                api: Api::Linkdeck,
                path: TRAFFIC_PATH,
                query: &query,
                body: Body::None,
                record: Some(what),
            })
            .await?;
        let unreadable =
            |problem: &str| errors::unreadable(self.subject(Some(what)), what, problem);
        let links = decode::record(&answer, |data| {
            serde_json::from_value::<Vec<LinkTraffic>>(data.clone()).map_err(|e| e.to_string())
        })
        .map_err(|p| unreadable(&p))?;
        let mut out = HashMap::new();
        for link in links {
            let hours = link
                .traffic
                .iter()
                .enumerate()
                .map(|(i, hour)| hour.to_hour(&format!("link {}: traffic.{i}", link.id)))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| unreadable(&Error::Validation(e).to_string()))?;
            out.insert(link.id, hours);
        }
        Ok(out)
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
