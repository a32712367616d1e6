//! Orphan visits on a remote server: linkdeck's `GET orphans`, asked only of a server whose
//! capabilities say `orphan_visits`; any other server (a phpShort site, an older linkdeck) is
//! told apart before anything is asked, with words that say so.

use reqwest::Method;

use super::RemoteBackend;
use super::body::Limit;
use super::decode;
use super::errors;
use super::http::{Api, Body, Call};
use crate::domain::{Error, OrphanStats, Result, StatsQuery, StatsScope};
use crate::wire::linkdeck::ORPHANS_PATH;

impl RemoteBackend {
    pub(super) async fn get_orphans(&self, query: &StatsQuery) -> Result<OrphanStats> {
        query.validate()?;
        if query.scope != StatsScope::Account {
            return Err(Error::Unsupported(
                "orphan visits are the account's: they have no space, domain or tag".into(),
            ));
        }
        if !self
            .linkdeck()
            .await?
            .is_some_and(|caps| caps.orphan_visits)
        {
            return Err(Error::Unsupported(format!(
                "{} does not record orphan visits (it is not a linkdeck server, or one older \
                 than orphan visits)",
                self.http.origin()
            )));
        }
        let params = crate::wire::stats::query_params(query, &self.timezone);
        let what = "orphan visits";
        let body = self
            .http
            .send(Call {
                method: Method::GET,
                api: Api::Linkdeck,
                path: ORPHANS_PATH,
                query: &params,
                body: Body::None,
                record: Some(what),
                limit: Limit::Stats,
            })
            .await?;
        decode::record(&body, |v| {
            serde_json::from_value::<OrphanStats>(v.clone()).map_err(|e| e.to_string())
        })
        .map_err(|problem| errors::unreadable(self.subject(Some(what)), what, &problem))
    }
}
