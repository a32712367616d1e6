//! The embedded service's store on PostgreSQL: a connection pool, the schema, and a listener
//! that hears every other process's edits. Several `linkdeck serve` instances, the CLI and the
//! terminal app may all work on one database at once; the database keeps what must hold for
//! all of them (unique aliases, link counters, exact click reservations), not any one process.
//!
//! The SQL of each area lives beside the SQLite store's, in `pg/<area>.rs`.

mod bulk;
mod cancel;
mod copy;
mod domains;
mod import;
mod keys;
mod links;
mod owners;
pub mod quota;
mod redirect;
mod schema;
mod search;
mod spaces;
mod target;
mod tls;
mod traffic;
mod trash;
pub mod tx;
mod visits;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use deadpool_postgres::{
    GenericClient, Manager, ManagerConfig, Object, Pool, RecyclingMethod, Transaction,
};
use futures::StreamExt;
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::{AsyncMessage, IsolationLevel, Row};
use tokio_postgres_rustls::MakeRustlsConnect;

pub use schema::{PG_SCHEMA_VERSION, create_at_version};
pub use target::{PASSWORD_VARS, PgTarget};
pub use tls::SslMode;

use linkdeck_domain::{Error, Result};

/// Connections each process keeps at most: the server's handlers and click writer share them.
const POOL_SIZE: usize = 16;
/// How long a request waits for a free connection or a new one before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a statement waits for a lock another session holds before it fails, as SQLite's
/// busy timeout does: a write held up by another program answers "busy, try again" instead of
/// hanging, and the click writer keeps its visits and tries again (bounded, see
/// `server/clicks.rs`) instead of waiting without end while visits queue up behind it.
const LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// The channel the schema's triggers notify on (see `schema.rs`).
const CHANGES_CHANNEL: &str = "linkdeck_changes";

/// A shared handle to one PostgreSQL database. Cloning is cheap.
#[derive(Clone)]
pub struct Pg {
    inner: Arc<Inner>,
}

struct Inner {
    target: PgTarget,
    pool: Pool,
    /// The connector the pool's connections were made with, for cancelling their statements.
    tls: MakeRustlsConnect,
    /// Moves whenever some process changes what redirects and key checks read; see
    /// [`Pg::change_marker`].
    changes: Arc<AtomicI64>,
    /// The listening connection's task, ended with the last handle.
    listener: tokio::task::JoinHandle<()>,
    /// Where clicks wait to be reserved (`quota::reserve`): its task starts with the first
    /// and ends with the last handle.
    reservations: linkdeck_store::quota::Queue,
    /// The runtime the pool's connections live on: work run from a blocking thread hands its
    /// statements to it.
    runtime: tokio::runtime::Handle,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl std::fmt::Debug for Pg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pg")
            .field("target", &self.inner.target)
            .finish()
    }
}

impl Pg {
    /// Connects, brings the schema up to date and starts listening for changes.
    pub async fn connect(target: &PgTarget) -> Result<Pg> {
        let resolved = target.clone();
        let resolved = tokio::task::spawn_blocking(move || resolved.resolve_password())
            .await
            .map_err(|e| Error::Unavailable(format!("db_password_command: {e}")))??;
        let mut config = resolved.config();
        // Ours first: settings the URL's own `options` make come after it and win.
        let options = format!(
            "-c lock_timeout={} {}",
            LOCK_TIMEOUT.as_millis(),
            config.get_options().unwrap_or_default()
        );
        config.options(options.trim_end());
        let open = |e: Error| Error::Unavailable(format!("database {target}: {}", bare(&e)));
        // Every connection — the pool's and the listener's — is made with this one connector,
        // so none is less protected than `sslmode` asks.
        let tls = target
            .tls()
            .connector()
            .map_err(|m| open(Error::Unavailable(m)))?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| Error::Unavailable(format!("PostgreSQL pool: {e}")))?;
        let mut client = pool.get().await.map_err(|e| open(pool_error(e, target)))?;
        schema::migrate(&mut client).await.map_err(open)?;
        drop(client);
        let changes = Arc::new(AtomicI64::new(0));
        let listener = listen(config, tls.clone(), target.clone(), changes.clone())
            .await
            .map_err(open)?;
        Ok(Pg {
            inner: Arc::new(Inner {
                target: target.clone(),
                pool,
                tls: tls.clone(),
                changes,
                listener,
                reservations: linkdeck_store::quota::Queue::new(),
                runtime: tokio::runtime::Handle::current(),
            }),
        })
    }

    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.inner.runtime
    }

    pub fn target(&self) -> &PgTarget {
        &self.inner.target
    }

    /// A pooled connection.
    pub async fn client(&self) -> Result<Object> {
        let inner = &self.inner;
        inner
            .pool
            .get()
            .await
            .map_err(|e| pool_error(e, &inner.target))
    }

    /// A number that moves whenever any process (this one included) commits a change to links,
    /// domains or API keys: callers that cache lookups forget them when it moves. Changes made
    /// elsewhere arrive within the time a notification takes, well under a second.
    pub fn change_marker(&self) -> i64 {
        self.inner.changes.load(Ordering::Acquire)
    }
}

/// A read-only transaction on `client` that sees one snapshot: a list's total and its page
/// agree even while others write.
pub async fn snapshot(client: &mut Object) -> Result<Transaction<'_>> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(pg_error)
}

/// A write transaction on `client`.
pub async fn write(client: &mut Object) -> Result<Transaction<'_>> {
    client.transaction().await.map_err(pg_error)
}

/// The rows `sql` answers, its statement prepared once per connection.
pub async fn rows<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    c.query(&stmt, args).await.map_err(pg_error)
}

/// The row `sql` answers, if any.
pub async fn row<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<Option<Row>> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    c.query_opt(&stmt, args).await.map_err(pg_error)
}

/// The first column of the one row `sql` answers: a count, an id.
pub async fn value<C: GenericClient, T: for<'a> FromSql<'a>>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<T> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    let row = c.query_one(&stmt, args).await.map_err(pg_error)?;
    col(&row, 0)
}

/// Runs `sql`; how many rows it changed.
pub async fn execute<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<u64> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    c.execute(&stmt, args).await.map_err(pg_error)
}

/// A stored count as the unsigned number it is.
pub fn count(n: i64) -> u64 {
    n.max(0) as u64
}

/// Column `i` of `row`; a column of an unexpected type is an error, not a panic.
pub fn col<'a, T: FromSql<'a>>(row: &'a Row, i: usize) -> Result<T> {
    row.try_get(i).map_err(pg_error)
}

/// The parameters of a statement built piece by piece: each [`Args::push`] answers the
/// placeholder (`$n`) that names the value, so the SQL and its values cannot drift apart.
#[derive(Default)]
pub struct Args {
    values: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Args {
    pub fn push(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.values.push(Box::new(value));
        format!("${}", self.values.len())
    }

    /// Like [`Args::push`], for a value already boxed (its type chosen at run time).
    pub fn push_boxed(&mut self, value: Box<dyn ToSql + Sync + Send>) -> String {
        self.values.push(value);
        format!("${}", self.values.len())
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values, as the client's query methods take them.
    pub fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

/// Opens the listening connection: every notification on [`CHANGES_CHANNEL`] moves `changes`.
/// A lost connection is opened again; while it is down the marker moves on every retry, so
/// callers forget their caches rather than trust them.
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    target: PgTarget,
    changes: Arc<AtomicI64>,
) -> Result<tokio::task::JoinHandle<()>> {
    let first = subscribe(&config, &tls, &target, changes.clone()).await?;
    Ok(tokio::spawn(async move {
        let mut session = first;
        loop {
            session.await.ok();
            changes.fetch_add(1, Ordering::AcqRel);
            tracing::warn!("lost the PostgreSQL change listener; reconnecting");
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                match subscribe(&config, &tls, &target, changes.clone()).await {
                    Ok(next) => {
                        session = next;
                        break;
                    }
                    Err(e) => {
                        changes.fetch_add(1, Ordering::AcqRel);
                        tracing::warn!(error = %e, "PostgreSQL change listener");
                    }
                }
            }
        }
    }))
}

/// One listening session: connects, subscribes, and returns a task that runs until the
/// connection ends (or the task is aborted, which closes it).
async fn subscribe(
    config: &tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    target: &PgTarget,
    changes: Arc<AtomicI64>,
) -> Result<tokio::task::JoinHandle<()>> {
    let (client, mut connection) = config
        .connect(tls.clone())
        .await
        .map_err(|e| connect_error(e, target))?;
    let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
    // The connection must be polled for the client's own statements to complete.
    let poller = tokio::spawn(async move {
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(_) = message {
                changes.fetch_add(1, Ordering::AcqRel);
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {CHANGES_CHANNEL}"))
        .await
        .map_err(pg_error)?;
    Ok(tokio::spawn(async move {
        // Dropping the client (when this task ends or is aborted) closes the connection, which
        // ends the poller.
        let _client = client;
        let _ = poller.await;
    }))
}

/// The error text without the "service unavailable" framing, to put after a database's name.
fn bare(e: &Error) -> String {
    match e {
        Error::Unavailable(m) => m.clone(),
        other => other.to_string(),
    }
}

/// Maps a PostgreSQL failure to the backend error a person sees. The server's own message is
/// kept (it names the constraint, the column or the refused user); the password never is in it.
pub fn pg_error(e: tokio_postgres::Error) -> Error {
    use tokio_postgres::error::SqlState;
    let Some(db) = e.as_db_error() else {
        let cause = std::error::Error::source(&e).map_or_else(String::new, |s| format!(": {s}"));
        return Error::Unavailable(format!("cannot reach PostgreSQL ({e}{cause})"));
    };
    let code = db.code();
    if *code == SqlState::LOCK_NOT_AVAILABLE {
        return Error::Unavailable(format!("the database {}", linkdeck_store::words::BUSY));
    }
    let hint = if *code == SqlState::INVALID_PASSWORD
        || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
    {
        format!(" (set {} to the database password)", PASSWORD_VARS[0])
    } else {
        String::new()
    };
    Error::Unavailable(format!("PostgreSQL: {}{hint}", db.message()))
}

/// A failed connection to `target`: what TLS needs done when that is why, else as [`pg_error`].
fn connect_error(e: tokio_postgres::Error, target: &PgTarget) -> Error {
    match target.tls().explain(&e, &target.server()) {
        Some(why) => Error::Unavailable(why),
        None => pg_error(e),
    }
}

fn pool_error(e: deadpool_postgres::PoolError, target: &PgTarget) -> Error {
    match e {
        deadpool_postgres::PoolError::Backend(e) => connect_error(e, target),
        other => Error::Unavailable(format!("PostgreSQL connection pool: {other}")),
    }
}

/// Whether `e` is a foreign-key violation of `constraint` (a space or domain removed by another
/// process between a check and a write).
pub fn is_foreign_key_violation(e: &tokio_postgres::Error, constraint: &str) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION)
        && e.as_db_error().and_then(|d| d.constraint()) == Some(constraint)
}

/// Whether `e` is a unique-constraint violation (an alias or a name already taken, found by
/// the database when two writers race).
pub fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
}
