//! The storage contract of linkdeck's embedded service. The service (`linkdeck-service`) holds
//! its rules and speaks only to [`Store`]; each store (`linkdeck-sqlite`, `linkdeck-pg`) answers
//! it with its own SQL. What both stores share — the records they read and write, the wording of
//! the facts they report — lives here, below both, so neither store imports from the service
//! nor from the other.
//!
//! A piece of work is a closure over one transaction ([`Tx`]): the service writes each rule
//! once, as plain synchronous code that asks the transaction for facts and hands it rows, and
//! the store runs the closure where its connections live — SQLite on its blocking pool,
//! PostgreSQL on a blocking thread that hands each statement to the runtime. A read sees one
//! snapshot; a write commits when the closure returns `Ok` and leaves nothing behind otherwise.

pub mod bulk;
pub mod copy;
mod domains;
mod import;
mod keys;
mod links;
mod list;
pub mod orphans;
mod owners;
pub mod quota;
mod redirect;
pub mod rows;
mod spaces;
pub mod sql;
mod tags;
pub mod traffic;
mod trash;
mod visit_log;
pub mod visits;
pub mod webhooks;
pub mod words;

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

pub use bulk::Bulk;
pub use domains::{DOMAIN_COLUMNS, Domains, settings_cells};
pub use import::{Counted, ImportStore, ImportWork};
pub use keys::{KeyGrant, KeyInfo, Keys, LiveKey};
pub use linkdeck_domain::{Error, Id, Result};
pub use links::{
    LinkRow, Links, clamped, options_json, parse_options, parse_rotation, parse_rules, parse_tags,
    rotation_json, rules_json, tag_json, tags_json, target_type,
};
pub use list::{ListFilter, Search, Slice};
pub use orphans::Orphans;
pub use owners::Owners;
pub use redirect::{Redirects, ResolvedLink};
pub use spaces::Spaces;
pub use tags::Tags;
pub use traffic::Rollups;
pub use trash::{Aliases, Blocking, ListedRow, Restored, Scope, Trash, members_blob, members_of};
pub use visit_log::{LogWindow, VisitLog};
pub use webhooks::Webhooks;

/// Every question and change one transaction of a store answers, by area.
pub trait Tx:
    Owners
    + Keys
    + Domains
    + Spaces
    + Links
    + Tags
    + Search
    + Redirects
    + Trash
    + Bulk
    + Rollups
    + Orphans
    + VisitLog
    + Webhooks
{
}

impl<T> Tx for T where
    T: Owners
        + Keys
        + Domains
        + Spaces
        + Links
        + Tags
        + Search
        + Redirects
        + Trash
        + Bulk
        + Rollups
        + Orphans
        + VisitLog
        + Webhooks
{
}

/// A stored unix time as a timestamp; out-of-range values (never written by us) read as the
/// epoch.
pub fn time(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(seconds).unwrap_or_default()
}

/// A stored optional unix time; one out of range (never written by us) is none.
pub fn optional_time(seconds: Option<i64>) -> Option<jiff::Timestamp> {
    seconds.and_then(|s| jiff::Timestamp::from_second(s).ok())
}

/// How a piece of work uses the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// One indexed read on a hot path (a redirect's lookup on a cache miss): a store whose
    /// readers never wait may answer it on the calling thread.
    Lookup,
    /// Reads, each of which sees every change committed before it: for work that asks one
    /// question, or questions that need not agree with each other.
    Read,
    /// Reads that see one snapshot, so that they agree (a list's total and its page).
    Snapshot,
    /// One write transaction, committed when the work succeeds.
    Write,
    /// A write whose work makes sure itself of every row it references, and whose moves must
    /// leave what depends on a moved row where it is (the trash, the click writer): a store may
    /// leave its own reference checks and cascades off for it.
    Unchecked,
}

/// A piece of work over one transaction, its answer boxed so that [`Store`] can be a trait
/// object; [`dyn Store::read`] and [`dyn Store::write`] type it again.
pub type Work = Box<dyn FnOnce(&dyn Tx) -> Result<Box<dyn Any + Send>> + Send>;

/// One database of the embedded service, whichever it is. Chosen once, where the database is
/// opened; everything above speaks to it through this trait.
#[async_trait]
pub trait Store: Send + Sync + fmt::Debug + 'static {
    /// Where the data lives, for messages: a file's path, or a database URL without its
    /// password.
    fn location(&self) -> String;

    /// Runs `work` in one transaction of the kind `access` names, off the async threads.
    async fn run(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>>;

    /// [`Store::run`] for a caller already off the async threads (opening a file, an
    /// import's writer thread).
    fn run_blocking(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>>;

    /// Asks the database something trivial: whether it can be reached and read now.
    async fn ping(&self) -> Result<()>;

    /// A number that moves when another process commits a change: how caches and the terminal
    /// app notice edits made elsewhere. (A store may count this process's own changes too.)
    async fn changes(&self) -> Result<i64>;

    /// How often [`Store::changes`] is worth asking, given the period configured: where
    /// asking is a statement, the period; where the number is in memory, often enough that
    /// other processes' edits are seen within moments.
    fn change_poll(&self, configured: Duration) -> Duration;

    /// Whether several servers may count clicks on this database at once, so that a rotating
    /// link's turn, which they share, is kept in the database rather than in one server's
    /// memory.
    fn counts_are_shared(&self) -> bool;

    /// Reserves one click of link `id` in the database before its visitor is answered (see
    /// [`quota`]): stored at once, and refused once the link's click limit is reached; with
    /// `rotation` URLs (more than 0) the link's rotation position moves on too.
    async fn reserve_click(&self, id: Id, rotation: u32) -> Result<quota::Reserved>;

    /// Brings every link's click count up to the clicks reserved for it, before a server
    /// starts: a server that was killed may have reserved clicks it never wrote into the links.
    async fn settle_reserved_clicks(&self) -> Result<()>;

    /// Runs an import's writer over one write transaction of the store's own import path
    /// (staged rows moved in a chunk at a time), on the calling thread, which is off the async
    /// threads: committed when it returns `Ok`, nothing written otherwise.
    fn import_blocking(&self, work: ImportWork<'_>) -> Result<Box<dyn Any + Send>>;

    /// Writes one batch of the click writer in one transaction: each link's clicks go up by
    /// its visits (less those reserved already), the raw rows are logged, the rollups take in
    /// every visit, and the rotation positions given are saved; visits of links deleted
    /// meanwhile are dropped. Answers each touched link's click count, and gives the batch
    /// back, so that one the database refused can be tried again. `interner` is the writer's,
    /// kept between batches; values a failed write stored must not keep their codes.
    async fn write_visits(
        &self,
        batch: visits::VisitBatch,
        rotations: Vec<(Id, u32)>,
        interner: &Arc<Mutex<traffic::values::Interner>>,
    ) -> (Result<Vec<visits::FlushedLink>>, visits::VisitBatch);

    /// `db copy`: the rows of each table of [`copy::TABLES`], counted in one snapshot.
    async fn table_counts(&self) -> Result<Vec<u64>>;

    /// `db copy`: the highest link id ever given out (stored, trashed or deleted), which the
    /// target's ids must stay above.
    async fn id_mark(&self) -> Result<Id>;

    /// `db copy`'s reader: every table of [`copy::TABLES`] in one snapshot, a batch at a time,
    /// then [`copy::Batch::Done`]. Stops quietly when the writer has gone (its error is the one
    /// reported).
    async fn copy_out(&self, out: tokio::sync::mpsc::Sender<copy::Batch>) -> Result<()>;

    /// `db copy`'s writer, into this empty store: what `rows` brings, in one transaction
    /// committed only once [`copy::Batch::Done`] has come; link ids kept above `mark`; derived
    /// state (counters, search indexes, sequences) rebuilt. `moved` hears of each batch.
    async fn copy_in(
        &self,
        rows: tokio::sync::mpsc::Receiver<copy::Batch>,
        mark: Id,
        moved: Arc<copy::Moved>,
    ) -> Result<()>;
}

impl dyn Store {
    /// Runs `f`, one indexed read on a hot path (see [`Access::Lookup`]).
    pub async fn lookup<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.typed(Access::Lookup, f).await
    }

    /// Runs `f`, which only reads (see [`Access::Read`]).
    pub async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.typed(Access::Read, f).await
    }

    /// Runs `f` over one read snapshot.
    pub async fn snapshot<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.typed(Access::Snapshot, f).await
    }

    /// Runs `f` in one write transaction: committed when it returns `Ok`, rolled back
    /// otherwise, so nothing is ever half-written.
    pub async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.typed(Access::Write, f).await
    }

    /// Runs `f` as [`Access::Unchecked`].
    pub async fn write_unchecked<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.typed(Access::Unchecked, f).await
    }

    /// [`dyn Store::write`] for a caller already off the async threads.
    pub fn write_blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        untyped(self.run_blocking(Access::Write, boxed(f)))
    }

    /// [`dyn Store::read`] for a caller already off the async threads.
    pub fn read_blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        untyped(self.run_blocking(Access::Read, boxed(f)))
    }

    /// [`Store::import_blocking`] with the writer's own answer.
    pub fn import<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn ImportStore) -> Result<T> + Send,
    ) -> Result<T> {
        untyped(self.import_blocking(Box::new(move |store| {
            f(store).map(|v| Box::new(v) as Box<dyn Any + Send>)
        })))
    }

    async fn typed<T: Send + 'static>(
        &self,
        access: Access,
        f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        untyped(self.run(access, boxed(f)).await)
    }
}

fn boxed<T: Send + 'static>(f: impl FnOnce(&dyn Tx) -> Result<T> + Send + 'static) -> Work {
    Box::new(move |tx| f(tx).map(|v| Box::new(v) as Box<dyn Any + Send>))
}

fn untyped<T: 'static>(answer: Result<Box<dyn Any + Send>>) -> Result<T> {
    answer?.downcast::<T>().map(|v| *v).map_err(|_| {
        Error::Unavailable("the store answered with something else than was asked".into())
    })
}
