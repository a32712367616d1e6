//! The embedded link-shortening service on SQLite or PostgreSQL. `LocalService` is the whole database (every
//! owner: what the server needs to resolve aliases, record visits and check keys);
//! `LocalBackend` is one owner's view of it and implements [`Backend`](linkdeck_backend::Backend).

mod alias;
pub mod backup;
mod bulk;
mod copy;
mod domains;
mod import;
mod keys;
mod links;
mod orphans;
mod owned;
mod password;
pub use linkdeck_pg as pg;
mod public_address;
mod redirect;
pub mod serving;
mod spaces;
mod stats;
pub use linkdeck_sqlite as store;
mod tags;
mod titles;
use linkdeck_store::traffic;
mod trash;
mod visits;
mod visits_out;
pub mod webhooks;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use linkdeck_store::Store;

pub use copy::{Moved, TableCounts};
pub use import::{
    CHUNK as IMPORT_CHUNK, ImportOptions, ImportRow, ImportSummary, Incoming, Renamed,
};
pub use keys::{KeyGrant, KeyInfo};
pub use links::default_title;
pub use store::SCHEMA_VERSION;
pub use store::ServeLock;
pub use store::{Db, UpgradeNotice, db_error};
pub use titles::title_of_html;
pub use trash::DEFAULT_TRASH_DAYS;

use linkdeck_backend::bulk::{BulkAction, BulkReport, Preview, Progress, Selection, Undo};
use linkdeck_backend::trash::{TrashPage, Trashed};
use linkdeck_backend::{Backend, BackendInfo};
use linkdeck_domain::{
    Clock, Domain, DomainInput, Error, Id, Link, LinkInput, LinkQuery, Owner, Page, Result, Space,
    SpaceFilter, SpaceInput, SpaceQuery, SpaceSet, Stats, StatsQuery, StatsScope, SystemClock,
    TagCount, VisitQuery, WebhookActivity, validate_owner_name,
};

/// The owner the terminal app and the CLI act as on a local database.
pub const DEFAULT_OWNER: &str = "default";

/// Settings of the embedded service that come from the profile.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Base of short URLs of links without a domain, such as `http://127.0.0.1:8080`.
    pub public_url: String,
    /// The zone in which expiry dates and times are read.
    pub timezone: TimeZone,
    pub clock: Arc<dyn Clock>,
    /// Whether a saved link's page `<title>` is fetched in the background to replace the
    /// host-and-path title.
    pub fetch_titles: bool,
    /// Days a deleted link or space stays in the trash before it is purged; 0 keeps it until
    /// the trash is emptied.
    pub trash_days: u32,
    /// Addresses title fetching may reach although they are not public (only public ones are
    /// reached otherwise): a test's own loopback site, say.
    pub title_fetch_allow: Vec<std::net::SocketAddr>,
    /// Told before a SQLite file's schema is upgraded (see [`UpgradeNotice`]).
    pub upgrade_notice: Option<UpgradeNotice>,
    /// Whether a large write (an import, a copy into the database) may hold a SQLite file alone
    /// while it runs, when nothing else has it open as it starts: for a command that reads
    /// nothing beside it (see `Db::let_large_writes_hold_it`).
    pub large_writes_alone: bool,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            public_url: "http://127.0.0.1:8080".into(),
            timezone: TimeZone::UTC,
            clock: Arc::new(SystemClock),
            fetch_titles: false,
            trash_days: DEFAULT_TRASH_DAYS,
            title_fetch_allow: Vec::new(),
            upgrade_notice: None,
            large_writes_alone: false,
        }
    }
}

/// Where the embedded service keeps its data: a SQLite file (the default) or a PostgreSQL
/// database, which several processes on several machines can share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    File(std::path::PathBuf),
    Postgres(pg::PgTarget),
}

impl std::fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::File(path) => write!(f, "{}", path.display()),
            StoreLocation::Postgres(target) => write!(f, "{target}"),
        }
    }
}

/// The embedded service over one database. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct LocalService {
    /// The database, whichever store holds it: chosen where it is opened, and nowhere else.
    store: Arc<dyn Store>,
    opts: Arc<LocalOptions>,
    titles: Option<Arc<titles::TitleFetcher>>,
}

impl LocalService {
    /// Opens (creating if needed) the SQLite database at `path`.
    pub fn open(path: &Path, opts: LocalOptions) -> Result<LocalService> {
        let db = Db::open_noting(path, opts.upgrade_notice)?;
        if opts.large_writes_alone {
            db.let_large_writes_hold_it();
        }
        let service = Self::over(Arc::new(db), opts);
        // What has been in the trash long enough goes now; a database busy with another
        // program is left for the next time.
        if let Err(e) = service.purge_due_blocking() {
            tracing::warn!(error = %e, "could not purge the trash");
        }
        Ok(service)
    }

    /// Opens the database at `location`, whichever store it is.
    pub async fn open_at(location: &StoreLocation, opts: LocalOptions) -> Result<LocalService> {
        match location {
            StoreLocation::File(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || Self::open(&path, opts))
                    .await
                    .map_err(|e| Error::Unavailable(format!("opening the database failed: {e}")))?
            }
            StoreLocation::Postgres(target) => {
                let pg = pg::Pg::connect(target).await?;
                Ok(Self::over(Arc::new(pg), opts))
            }
        }
    }

    fn over(store: Arc<dyn Store>, opts: LocalOptions) -> LocalService {
        let titles = opts
            .fetch_titles
            .then(|| Arc::new(titles::TitleFetcher::new(opts.title_fetch_allow.clone())));
        LocalService {
            store,
            opts: Arc::new(opts),
            titles,
        }
    }

    /// Brings every limited or rotating link's click count up to the clicks reserved for it in
    /// the database, before a server starts: a server that was killed had reserved clicks it
    /// never wrote into the links. (SQLite counts in the link row itself: nothing to do.)
    pub async fn settle_reserved_clicks(&self) -> Result<()> {
        self.store.settle_reserved_clicks().await
    }

    /// Asks the database something trivial: whether it can be reached and read now.
    pub async fn ping(&self) -> Result<()> {
        self.store.ping().await
    }

    /// Where the data lives, for messages and `info`.
    pub fn location(&self) -> String {
        self.store.location()
    }

    pub fn options(&self) -> &LocalOptions {
        &self.opts
    }

    pub fn now(&self) -> Timestamp {
        self.opts.clock.now()
    }

    /// A number that moves when another program (or another handle on the same file) commits:
    /// how the terminal app notices changes made elsewhere.
    pub async fn change_marker(&self) -> Result<i64> {
        self.store.changes().await
    }

    /// One owner's view, implementing [`Backend`].
    pub fn for_owner(&self, owner_id: Id) -> LocalBackend {
        LocalBackend {
            service: self.clone(),
            owner_id,
            reach: None,
        }
    }

    /// The view of the [`DEFAULT_OWNER`], created on first use.
    pub async fn default_backend(&self) -> Result<LocalBackend> {
        let owner = match self.owner_by_name(DEFAULT_OWNER).await {
            Ok(owner) => owner,
            Err(Error::NotFound(_)) => match self.add_owner(DEFAULT_OWNER).await {
                // Another process may have created it between the two calls.
                Err(Error::Conflict(_)) => self.owner_by_name(DEFAULT_OWNER).await?,
                other => other?,
            },
            Err(e) => return Err(e),
        };
        Ok(self.for_owner(owner.id))
    }

    pub async fn add_owner(&self, name: &str) -> Result<Owner> {
        let name = validate_owner_name(name).map_err(|m| Error::field("name", m))?;
        let now = self.now();
        self.store
            .write(move |tx| {
                if tx.owner_named(&name)?.is_some() {
                    return Err(Error::Conflict(format!(
                        "an owner named {name} already exists"
                    )));
                }
                tx.insert_owner(&name, now)
            })
            .await
    }

    pub async fn list_owners(&self) -> Result<Vec<Owner>> {
        self.store.read(|tx| tx.owners()).await
    }

    pub async fn owner_by_name(&self, name: &str) -> Result<Owner> {
        let name = name.trim().to_owned();
        self.store
            .read(move |tx| {
                tx.owner_named(&name)?
                    .ok_or_else(|| Error::not_found(format!("owner {name}")))
            })
            .await
    }
}

/// One owner's view of the embedded service.
#[derive(Clone, Debug)]
pub struct LocalBackend {
    service: LocalService,
    owner_id: Id,
    /// The spaces a limited key reaches. Its wrapper (`SpaceLimited`) decides what the key may
    /// ask; this makes the writes check it again inside the transaction that writes, so a link
    /// moved out of the key's spaces meanwhile is not found rather than changed.
    reach: Option<SpaceSet>,
}

impl LocalBackend {
    pub fn service(&self) -> &LocalService {
        &self.service
    }

    /// The store this owner's work runs on.
    fn store(&self) -> &Arc<dyn Store> {
        &self.service.store
    }

    pub fn owner_id(&self) -> Id {
        self.owner_id
    }

    /// This view with its link writes held to the links in `spaces`.
    pub fn within(self, spaces: SpaceSet) -> LocalBackend {
        LocalBackend {
            reach: Some(spaces),
            ..self
        }
    }
}

/// Whether a link in `space` is within `reach` (no reach: every link of the owner).
fn reaches(reach: Option<SpaceSet>, space: Option<Id>) -> bool {
    reach.is_none_or(|spaces| SpaceFilter::Among(spaces).admits(space))
}

#[async_trait]
impl Backend for LocalBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: "local",
            location: self.service.location(),
        }
    }

    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>> {
        self.link_list(query).await
    }
    async fn show_link(&self, id: Id) -> Result<Link> {
        self.link_show(id).await
    }
    async fn create_link(&self, input: &LinkInput) -> Result<Link> {
        self.link_create(input).await
    }
    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link> {
        self.link_update(id, input).await
    }
    async fn delete_link(&self, id: Id) -> Result<()> {
        self.link_delete(id).await
    }
    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        self.space_list(query).await
    }
    async fn show_space(&self, id: Id) -> Result<Space> {
        self.space_show(id).await
    }
    async fn create_space(&self, input: &SpaceInput) -> Result<Space> {
        self.space_create(input).await
    }
    async fn update_space(&self, id: Id, input: &SpaceInput) -> Result<Space> {
        self.space_update(id, input).await
    }
    async fn delete_space(&self, id: Id) -> Result<()> {
        self.space_delete(id).await
    }
    async fn tags(&self) -> Result<Vec<TagCount>> {
        self.tag_list().await
    }
    async fn rename_tag(&self, from: &str, to: &str) -> Result<u64> {
        self.tag_rename(from, to).await
    }
    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        self.domain_list(page, per_page).await
    }
    async fn show_domain(&self, id: Id) -> Result<Domain> {
        self.domain_show(id).await
    }
    async fn update_domain(&self, id: Id, input: &DomainInput) -> Result<Domain> {
        self.domain_update(id, input).await
    }
    fn input_zone(&self) -> TimeZone {
        self.service.options().timezone.clone()
    }
    async fn bulk(
        &self,
        selection: &Selection,
        action: &BulkAction,
        progress: &Progress,
    ) -> Result<BulkReport> {
        self.bulk_local(selection, action, progress).await
    }
    async fn revert(&self, undo: &Undo, progress: &Progress) -> Result<BulkReport> {
        self.revert_local(undo, progress).await
    }
    async fn preview(&self, selection: &Selection, first: u32) -> Result<Preview> {
        self.preview_local(selection, first).await
    }
    async fn trash(&self, page: u32, per_page: u32) -> Result<Option<TrashPage>> {
        self.trash_page(page, per_page).await.map(Some)
    }
    async fn restore(&self, items: &[Trashed]) -> Result<BulkReport> {
        self.restore_items(items).await
    }
    async fn purge(&self, items: &[Trashed]) -> Result<u64> {
        self.purge_items(items).await
    }
    async fn webhooks(&self, recent: u32) -> Result<Option<Vec<WebhookActivity>>> {
        let owner = Some(self.owner_id);
        let mut out = Vec::new();
        for hook in self.service.list_webhooks(owner).await? {
            let deliveries = self
                .service
                .webhook_deliveries(hook.id, owner, recent)
                .await?;
            out.push((hook, deliveries));
        }
        Ok(Some(out))
    }

    async fn change_marker(&self) -> Result<Option<i64>> {
        self.service.change_marker().await.map(Some)
    }
    async fn stats(&self, query: &StatsQuery) -> Result<Stats> {
        let tz = self.service.options().timezone.clone();
        self.service.stats_in(self.owner_id, query, tz).await
    }
    async fn orphan_stats(&self, query: &StatsQuery) -> Result<linkdeck_domain::OrphanStats> {
        let tz = self.service.options().timezone.clone();
        self.service.orphan_stats_in(self.owner_id, query, tz).await
    }
    async fn counted_clicks(&self, scope: StatsScope) -> Result<Option<u64>> {
        self.service
            .counted_clicks(self.owner_id, scope)
            .await
            .map(Some)
    }

    async fn visits(&self, query: &VisitQuery) -> Result<linkdeck_backend::VisitStream> {
        self.service.visits(self.owner_id, query.clone()).await
    }

    async fn live_visits(
        &self,
        scope: StatsScope,
        after: Option<Id>,
    ) -> Result<linkdeck_backend::VisitStream> {
        self.service.live_visits(self.owner_id, scope, after).await
    }
}
