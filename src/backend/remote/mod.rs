//! The v1 API client: a [`Backend`] over any server that speaks the v1 API — `linkdeck serve`
//! or a real phpShort 2.x. It sends what was typed and lets the server validate (its 422 comes
//! back as field errors); it reads answers tolerantly ([`decode`]); every failure maps to a
//! domain error in one place ([`errors`]).

mod body;
mod decode;
mod encode;
mod errors;
mod http;
mod key;
mod linkdeck;
mod options;
mod orphans;
mod tags;
mod visits;
mod webhooks;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use jiff::tz::TimeZone;
use reqwest::Method;
use serde_json::Value;

pub use key::{ApiKey, KeySource};

use self::body::Limit;
use self::errors::Subject;
use self::http::{Api, Body, Call, Http};
use super::{Backend, BackendInfo};
use crate::domain::{
    BaseUrl, Domain, DomainInput, Error, Id, Link, LinkInput, LinkQuery, Page, PeriodSpec, Preset,
    Result, Space, SpaceFilter, SpaceInput, SpaceQuery, Stats, StatsPart, StatsQuery, StatsScope,
    TagCount,
};

/// Everything a remote profile says, resolved: the key already read from its source.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// The service's address, such as `https://sho.rt` (the API is under `/api/v1/`).
    pub base_url: String,
    pub api_key: ApiKey,
    /// For each request, from connecting to the last byte of the answer.
    pub timeout: Duration,
    /// The zone in which the person reads and types dates. Expiry is sent as typed (see
    /// [`encode`]); this zone is for showing `ends_at` and filling forms.
    pub timezone: TimeZone,
}

impl RemoteOptions {
    pub fn new(base_url: impl Into<String>, api_key: ApiKey) -> Self {
        RemoteOptions {
            base_url: base_url.into(),
            api_key,
            timeout: super::DEFAULT_REMOTE_TIMEOUT,
            timezone: TimeZone::system(),
        }
    }
}

/// A v1 server acting for the owner of the API key. Cloning is cheap and clones share one
/// connection pool.
#[derive(Clone)]
pub struct RemoteBackend {
    http: Arc<Http>,
    timezone: TimeZone,
    /// Set once the server has shown it has no statistics paths, so it is not asked again.
    no_stats: Arc<AtomicBool>,
    /// linkdeck's own API on the server, once asked (see `linkdeck`).
    linkdeck: Arc<tokio::sync::OnceCell<Option<crate::wire::linkdeck::Capabilities>>>,
}

impl fmt::Debug for RemoteBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteBackend")
            .field("origin", &self.http.origin())
            .field("api_key", &"***")
            .finish()
    }
}

/// One kind of record the v1 API serves under `/api/v1/{path}`: where it lives, how errors
/// name one ("link 7"), and how its JSON is read. The paths and words of every CRUD call come
/// from here, so links, spaces and domains cannot drift apart.
struct Resource<T> {
    path: &'static str,
    noun: &'static str,
    read: fn(&Value) -> std::result::Result<T, decode::DecodeError>,
}

const LINKS: Resource<Link> = Resource {
    path: "links",
    noun: "link",
    read: decode::link,
};
const SPACES: Resource<Space> = Resource {
    path: "spaces",
    noun: "space",
    read: decode::space,
};
const DOMAINS: Resource<Domain> = Resource {
    path: "domains",
    noun: "domain",
    read: decode::domain,
};

impl<T> Resource<T> {
    fn record_path(&self, id: Id) -> String {
        format!("{}/{id}", self.path)
    }

    /// How an error names record `id`, such as "link 7".
    fn record(&self, id: Id) -> String {
        format!("{} {id}", self.noun)
    }
}

impl RemoteBackend {
    /// Checks the base URL and sets up the client; nothing is sent until the first call.
    pub fn new(options: RemoteOptions) -> Result<RemoteBackend> {
        Ok(RemoteBackend {
            http: Arc::new(Http::new(
                &BaseUrl::parse(&options.base_url).map_err(|m| Error::field("base_url", m))?,
                options.api_key,
                options.timeout,
            )?),
            timezone: options.timezone,
            no_stats: Arc::new(AtomicBool::new(false)),
            linkdeck: Arc::default(),
        })
    }

    /// The profile's time zone, for showing and typing dates.
    pub fn timezone(&self) -> &TimeZone {
        &self.timezone
    }

    async fn get_record<T>(
        &self,
        path: &str,
        record: &str,
        read: impl Fn(&Value) -> std::result::Result<T, String>,
    ) -> Result<T> {
        let body = self
            .http
            .send(Call {
                method: Method::GET,
                api: Api::V1,
                path,
                query: &[],
                body: Body::None,
                record: Some(record),
                limit: Limit::Record,
            })
            .await?;
        self.read_record(&body, record, read)
    }

    async fn write_record<T>(
        &self,
        method: Method,
        path: &str,
        form: String,
        record: &str,
        read: impl Fn(&Value) -> std::result::Result<T, String>,
    ) -> Result<T> {
        let body = self
            .http
            .send(Call {
                method,
                api: Api::V1,
                path,
                query: &[],
                body: Body::Form(form),
                record: Some(record),
                limit: Limit::Record,
            })
            .await?;
        self.read_record(&body, record, read)
    }

    async fn get_page<T>(
        &self,
        path: &str,
        query: &[(&'static str, String)],
        requested: (u32, u32),
        read: impl Fn(&Value) -> std::result::Result<T, String>,
    ) -> Result<Page<T>> {
        let answer = self
            .http
            .succeed(&Call {
                method: Method::GET,
                api: Api::V1,
                path,
                query,
                body: Body::None,
                record: None,
                limit: Limit::Page,
            })
            .await?;
        let envelope = decode::envelope(&answer.body)
            .ok_or_else(|| errors::not_json(answer.status, &answer.headers, self.subject(None)))?;
        decode::page(&envelope, requested, read)
            .map_err(|problem| errors::unreadable(self.subject(None), "a list", &problem))
    }

    async fn delete(&self, path: &str, record: &str) -> Result<()> {
        // The body (`{"id", "object", "deleted"}`) adds nothing to a 2xx.
        self.http
            .send(Call {
                method: Method::DELETE,
                api: Api::V1,
                path,
                query: &[],
                body: Body::None,
                record: Some(record),
                limit: Limit::Record,
            })
            .await
            .map(drop)
    }

    async fn list<T>(
        &self,
        resource: &Resource<T>,
        query: &[(&'static str, String)],
        requested: (u32, u32),
    ) -> Result<Page<T>> {
        self.get_page(resource.path, query, requested, resource.read)
            .await
    }

    async fn show<T>(&self, resource: &Resource<T>, id: Id) -> Result<T> {
        let path = resource.record_path(id);
        self.get_record(&path, &resource.record(id), resource.read)
            .await
    }

    async fn create<T>(&self, resource: &Resource<T>, form: String) -> Result<T> {
        let record = format!("the new {}", resource.noun);
        self.write_record(Method::POST, resource.path, form, &record, resource.read)
            .await
    }

    async fn update<T>(&self, resource: &Resource<T>, id: Id, form: String) -> Result<T> {
        let path = resource.record_path(id);
        let record = resource.record(id);
        self.write_record(Method::PUT, &path, form, &record, resource.read)
            .await
    }

    async fn remove<T>(&self, resource: &Resource<T>, id: Id) -> Result<()> {
        self.delete(&resource.record_path(id), &resource.record(id))
            .await
    }

    fn read_record<T>(
        &self,
        body: &Value,
        record: &str,
        read: impl Fn(&Value) -> std::result::Result<T, String>,
    ) -> Result<T> {
        decode::record(body, read)
            .map_err(|problem| errors::unreadable(self.subject(Some(record)), record, &problem))
    }

    async fn get_stats(&self, query: &StatsQuery) -> Result<Stats> {
        let params = crate::wire::stats::query_params(query, &self.timezone);
        let what = match &query.scope {
            StatsScope::Link(id) => format!("link {id}"),
            StatsScope::Space(id) => format!("space {id}"),
            StatsScope::Domain(id) => format!("domain {id}"),
            StatsScope::Tag(tag) => format!("tag {tag}"),
            StatsScope::Account => "statistics".to_owned(),
        };
        let body = self
            .http
            .send(Call {
                method: Method::GET,
                api: Api::V1,
                path: &crate::wire::stats::path(&query.scope),
                query: &params,
                body: Body::None,
                record: Some(&what),
                limit: Limit::Stats,
            })
            .await?;
        decode::record(&body, |v| decode::stats(v, query.scope.clone())).map_err(|problem| {
            errors::unreadable(self.subject(Some(&what)), "statistics", &problem)
        })
    }

    /// The error for a server without statistics paths (phpShort 2.x answers them 404).
    fn no_statistics(&self) -> Error {
        Error::Unsupported(format!(
            "{} offers no statistics (its API has no /api/v1/stats; phpShort 2.x keeps them to its web pages)",
            self.http.origin()
        ))
    }

    fn subject<'a>(&'a self, record: Option<&'a str>) -> Subject<'a> {
        Subject {
            origin: self.http.origin(),
            record,
        }
    }
}

#[async_trait]
impl Backend for RemoteBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: "remote",
            location: self.http.origin().to_owned(),
        }
    }

    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>> {
        query.validate()?;
        // phpShort has no filter for links in no space, and would list every link instead.
        if query.space == SpaceFilter::NoSpace && self.linkdeck().await?.is_none() {
            return Err(Error::field(
                "space",
                "this server cannot list only the links in no space (phpShort filters by a \
                 space's id alone; linkdeck serve can)",
            ));
        }
        self.check_tag_filter(query).await?;
        let params = encode::link_query(query);
        self.list(&LINKS, &params, (query.page, query.per_page))
            .await
    }

    async fn show_link(&self, id: Id) -> Result<Link> {
        self.show(&LINKS, id).await
    }

    async fn create_link(&self, input: &LinkInput) -> Result<Link> {
        let input = self.optioned_input(self.tagged_input(input).await?).await?;
        self.create(&LINKS, encode::link_form(&input)?).await
    }

    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link> {
        let input = self.optioned_input(self.tagged_input(input).await?).await?;
        self.update(&LINKS, id, encode::link_form(&input)?).await
    }

    async fn tags(&self) -> Result<Vec<TagCount>> {
        self.tag_counts().await
    }

    async fn keeps_link_options(&self) -> Result<bool> {
        self.keeps_options().await
    }

    async fn rename_tag(&self, from: &str, to: &str) -> Result<u64> {
        self.tag_rename(from, to).await
    }

    async fn delete_link(&self, id: Id) -> Result<()> {
        self.remove(&LINKS, id).await
    }

    async fn webhooks(&self, recent: u32) -> Result<Option<Vec<crate::domain::WebhookActivity>>> {
        self.webhook_activity(recent).await
    }

    async fn webhooks_held(&self) -> Result<Option<String>> {
        match self.needs_key().await {
            Ok(()) => Ok(None),
            Err(crate::domain::Error::Unsupported(why)) => Ok(Some(why)),
            Err(e) => Err(e),
        }
    }

    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        query.validate()?;
        let params = encode::space_query(query);
        self.list(&SPACES, &params, (query.page, query.per_page))
            .await
    }

    async fn show_space(&self, id: Id) -> Result<Space> {
        self.show(&SPACES, id).await
    }

    async fn create_space(&self, input: &SpaceInput) -> Result<Space> {
        self.create(&SPACES, encode::space_form(input)?).await
    }

    async fn update_space(&self, id: Id, input: &SpaceInput) -> Result<Space> {
        self.update(&SPACES, id, encode::space_form(input)?).await
    }

    async fn delete_space(&self, id: Id) -> Result<()> {
        self.remove(&SPACES, id).await
    }

    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        let query = SpaceQuery {
            page,
            per_page,
            ..SpaceQuery::default()
        };
        query.validate()?;
        let params = encode::paging(page, per_page);
        self.list(&DOMAINS, &params, (page, per_page)).await
    }

    async fn show_domain(&self, id: Id) -> Result<Domain> {
        self.show(&DOMAINS, id).await
    }

    /// Only a linkdeck server has domain settings: a phpShort server is never sent a change it
    /// has no field for.
    async fn update_domain(&self, id: Id, input: &DomainInput) -> Result<Domain> {
        crate::domain::validate_domain_input(input)?;
        if self.linkdeck().await?.is_none() {
            return Err(Error::Unsupported(format!(
                "{} has no domain fallbacks or robots.txt settings (a phpShort server keeps its \
                 own; set them there); linkdeck serve has them",
                self.http.origin()
            )));
        }
        self.update(&DOMAINS, id, encode::domain_form(input)?).await
    }

    async fn orphan_stats(&self, query: &StatsQuery) -> Result<crate::domain::OrphanStats> {
        self.get_orphans(query).await
    }

    /// A 404 means the record is not found, or the server has no statistics at all: the
    /// account-wide path, which always exists where statistics do, tells which.
    async fn stats(&self, query: &StatsQuery) -> Result<Stats> {
        query.validate()?;
        if self.no_stats.load(Ordering::Relaxed) {
            return Err(self.no_statistics());
        }
        self.check_tag_scope(&query.scope).await?;
        match self.get_stats(query).await {
            Err(Error::NotFound(what)) => {
                let probe = StatsQuery {
                    scope: StatsScope::Account,
                    period: PeriodSpec::preset(Preset::Hours24),
                    only: Some(StatsPart::Clicks),
                    top: 1,
                };
                let unsupported = query.scope == StatsScope::Account
                    || matches!(self.get_stats(&probe).await, Err(Error::NotFound(_)));
                if unsupported {
                    self.no_stats.store(true, Ordering::Relaxed);
                    Err(self.no_statistics())
                } else {
                    Err(Error::NotFound(what))
                }
            }
            other => other,
        }
    }

    async fn visits(&self, query: &crate::domain::VisitQuery) -> Result<super::VisitStream> {
        self.stream_visits(query).await
    }

    async fn live_visits(
        &self,
        scope: StatsScope,
        after: Option<Id>,
    ) -> Result<super::VisitStream> {
        self.stream_live(scope, after).await
    }
}
