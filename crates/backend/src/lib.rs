//! The one contract every front end calls: the TUI, the CLI and the server's API all speak to a
//! `dyn Backend`, whether it is the embedded service or a remote v1 server.

pub mod bulk;
pub mod read_only;
pub mod space_limited;
pub mod trash;

use async_trait::async_trait;
use jiff::tz::TimeZone;

pub use bulk::{BulkAction, BulkFailure, BulkReport, Preview, Progress, Selection, Undo};
pub use read_only::ReadOnly;
pub use space_limited::SpaceLimited;
pub use trash::{TrashPage, Trashed, TrashedKind};

use linkdeck_domain::{
    Domain, DomainInput, Id, Link, LinkInput, LinkQuery, Page, Result, Space, SpaceInput,
    SpaceQuery, Stats, StatsQuery, StatsScope, TagCount, Visit, VisitQuery, WebhookActivity,
};

/// Logged visits as they are read, oldest first: a store or a server is read a window at a
/// time, so memory stays flat however many visits there are. An error ends it.
pub type VisitStream = futures::stream::BoxStream<'static, Result<Visit>>;

/// How long a request to a remote v1 server may take when the profile does not say. It lives
/// here, with the contract, because two parts read it: the remote backend's own default and the
/// config's default for a profile's `timeout`.
pub const DEFAULT_REMOTE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where a backend points, for headers and messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendInfo {
    /// `local` or `remote`.
    pub kind: &'static str,
    /// The database path or the server's base URL.
    pub location: String,
}

/// A link-shortening service acting for one owner. Every method may be called concurrently;
/// the inputs are what a person typed (validated by the backend, every invalid field reported),
/// the outputs the domain types.
#[async_trait]
pub trait Backend: Send + Sync {
    fn info(&self) -> BackendInfo;

    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>>;
    async fn show_link(&self, id: Id) -> Result<Link>;
    async fn create_link(&self, input: &LinkInput) -> Result<Link>;
    /// Changes only the fields present in `input`.
    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link>;
    async fn delete_link(&self, id: Id) -> Result<()>;

    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>>;
    async fn show_space(&self, id: Id) -> Result<Space>;
    async fn create_space(&self, input: &SpaceInput) -> Result<Space>;
    async fn update_space(&self, id: Id, input: &SpaceInput) -> Result<Space>;
    /// Keeps the space's links, which are left without a space.
    async fn delete_space(&self, id: Id) -> Result<()>;

    /// Every tag of the owner's links and how many carry it, by name. A backend without tags
    /// (a v1 server that is not linkdeck) answers
    /// [`Error::Unsupported`](linkdeck_domain::Error::Unsupported).
    async fn tags(&self) -> Result<Vec<TagCount>> {
        Err(no_tags())
    }

    /// Whether links keep their options (`linkdeck_domain::LinkOptions`): a v1 server that is
    /// not linkdeck has none, and refuses a request that sets one.
    async fn keeps_link_options(&self) -> Result<bool> {
        Ok(true)
    }

    /// Renames tag `from` to `to` on every link carrying it — a merge, where some carry both.
    /// Answers how many links changed; a tag no link carries is not found.
    async fn rename_tag(&self, _from: &str, _to: &str) -> Result<u64> {
        Err(no_tags())
    }

    /// Domains, newest first; `per_page` as for links.
    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>>;
    async fn show_domain(&self, id: Id) -> Result<Domain>;
    /// Changes a domain's fallbacks and robots policy: only the fields present in `input`. A
    /// server without them (phpShort) answers
    /// [`Error::Unsupported`](linkdeck_domain::Error::Unsupported), saying so.
    async fn update_domain(&self, id: Id, input: &DomainInput) -> Result<Domain>;

    /// The zone in which this backend reads typed expiry dates and times.
    fn input_zone(&self) -> TimeZone {
        TimeZone::UTC
    }

    /// Does `action` to every link of `selection`. On a server without bulk support this is
    /// link by link, a few requests at a time, going on past failures ([`bulk::one_by_one`]);
    /// the embedded service does it in one transaction.
    async fn bulk(
        &self,
        selection: &Selection,
        action: &BulkAction,
        progress: &Progress,
    ) -> Result<BulkReport> {
        bulk::one_by_one(self, selection, action, progress).await
    }

    /// Takes back what a bulk operation (or a single change) did, as far as the backend
    /// allows (see [`Undo`]).
    async fn revert(&self, undo: &Undo, progress: &Progress) -> Result<BulkReport> {
        bulk::revert_one_by_one(self, undo, progress).await
    }

    /// How many links `selection` holds and the first `first` of them.
    async fn preview(&self, selection: &Selection, first: u32) -> Result<Preview> {
        bulk::preview_by_listing(self, selection, first).await
    }

    /// Deleted links and spaces kept for restoring, newest first; `None` when the backend keeps
    /// no trash (a remote server: a delete there is final).
    async fn trash(&self, _page: u32, _per_page: u32) -> Result<Option<TrashPage>> {
        Ok(None)
    }

    /// Brings trashed links and spaces back with their ids, clicks and traffic.
    async fn restore(&self, _items: &[Trashed]) -> Result<BulkReport> {
        Err(trash::no_trash())
    }

    /// Deletes trashed links and spaces for good.
    async fn purge(&self, _items: &[Trashed]) -> Result<u64> {
        Err(trash::no_trash())
    }

    /// The owner's webhook subscriptions, each with its latest `recent` deliveries (newest
    /// first); `None` when the backend keeps none (a remote server that is not a linkdeck
    /// server with webhooks, such as a phpShort site).
    async fn webhooks(&self, _recent: u32) -> Result<Option<Vec<WebhookActivity>>> {
        Ok(None)
    }

    /// Why the webhooks' deliveries cannot go out now, when the backend can tell: a server
    /// that keeps webhooks but was started without its webhook key.
    async fn webhooks_held(&self) -> Result<Option<String>> {
        Ok(None)
    }

    /// A number that changes whenever the data changes, cheap to ask for often: how the app
    /// notices changes made elsewhere. `None`: the backend cannot tell (ask again on a timer).
    async fn change_marker(&self) -> Result<Option<i64>> {
        Ok(None)
    }

    /// Traffic of a link, a space, a domain or the whole account over a period read in the
    /// profile's time zone. Another owner's link, space or domain is not found. A server that
    /// keeps no statistics answers [`Error::Unsupported`](linkdeck_domain::Error::Unsupported).
    async fn stats(&self, query: &StatsQuery) -> Result<Stats>;

    /// Orphan visits (requests to the owner's domains and the server's own host that no link
    /// answered) over `query`'s period; its scope is the account. A backend that does not
    /// record them answers [`Error::Unsupported`](linkdeck_domain::Error::Unsupported).
    async fn orphan_stats(&self, _query: &StatsQuery) -> Result<linkdeck_domain::OrphanStats> {
        Err(linkdeck_domain::Error::Unsupported(
            "this server does not record orphan visits".into(),
        ))
    }

    /// The clicks the links of a scope have counted in all by their own counters, whether the
    /// traffic history has a date for them or not (imported clicks, clicks from before the
    /// history was kept); `None` when the backend cannot tell. Reads every link of the scope:
    /// asked once when a view opens, not per period.
    async fn counted_clicks(&self, _scope: StatsScope) -> Result<Option<u64>> {
        Ok(None)
    }

    /// The raw visits `query` asks for, from the visit log (kept for the server's
    /// `visit_log_days`). Another owner's link, space or domain is not found, before anything
    /// is streamed; a backend without a visit log answers
    /// [`Error::Unsupported`](linkdeck_domain::Error::Unsupported).
    async fn visits(&self, _query: &VisitQuery) -> Result<VisitStream> {
        Err(linkdeck_domain::Error::Unsupported(
            "this backend keeps no log of visits to export".into(),
        ))
    }

    /// The visits to links in `scope` logged from now on, as they arrive; the stream never ends
    /// by itself. Another owner's link, space or domain is not found at once.
    /// `after`: start after this visit instead (where a feed that was cut off stopped).
    async fn live_visits(&self, _scope: StatsScope, _after: Option<Id>) -> Result<VisitStream> {
        Err(linkdeck_domain::Error::Unsupported(
            "this backend keeps no log of visits to follow".into(),
        ))
    }
}

/// What a backend without tags answers when asked about them.
pub fn no_tags() -> linkdeck_domain::Error {
    linkdeck_domain::Error::Unsupported(
        "this server keeps no tags (they need a linkdeck server)".into(),
    )
}

/// Pages fetched at most by [`all_spaces`] and [`all_domains`]: they hold what a person named
/// one by one, so this bound is only a guard against a server that never says it is done.
const MAX_PAGES: u32 = 1_000;

/// Every space, in `sort` order (`Asc` or `Desc`), however the backend pages them (a phpShort
/// server pages by 10 whatever is asked).
pub async fn all_spaces(backend: &dyn Backend, sort: linkdeck_domain::Sort) -> Result<Vec<Space>> {
    every_page(|page| {
        let query = SpaceQuery {
            sort,
            page,
            per_page: linkdeck_domain::PER_PAGE_MAX,
            ..SpaceQuery::default()
        };
        async move { backend.list_spaces(&query).await }
    })
    .await
}

/// Every domain, newest first, however the backend pages them.
pub async fn all_domains(backend: &dyn Backend) -> Result<Vec<Domain>> {
    every_page(|page| backend.list_domains(page, linkdeck_domain::PER_PAGE_MAX)).await
}

/// The items of page 1, 2, … of `fetch` until the last (at most [`MAX_PAGES`]).
async fn every_page<T, F, Fut>(mut fetch: F) -> Result<Vec<T>>
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>>>,
{
    let mut all = Vec::new();
    let mut page_no = 1;
    loop {
        let page = fetch(page_no).await?;
        let more = page.has_next() && !page.items.is_empty() && page_no < MAX_PAGES;
        all.extend(page.items);
        if !more {
            return Ok(all);
        }
        page_no += 1;
    }
}
