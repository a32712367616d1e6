//! [`Pg`], a shared handle to one database: its connection pool, each connection made with
//! the lock timeout and the TLS the target asks for, the schema brought up to date on
//! connect, and the listener that hears every other process's edits.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use linkdeck_domain::{Error, Result};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{bare, pool_error};
use crate::listen::listen;
use crate::schema;
use crate::target::PgTarget;

/// Connections each process keeps at most: the server's handlers and click writer share them.
const POOL_SIZE: usize = 16;
/// How long a request waits for a free connection or a new one before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a statement waits for a lock another session holds before it fails, as SQLite's
/// busy timeout does: a write held up by another program answers "busy, try again" instead of
/// hanging, and the click writer keeps its visits and tries again (bounded, see
/// `server/clicks.rs`) instead of waiting without end while visits queue up behind it.
const LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// A shared handle to one PostgreSQL database. Cloning is cheap.
#[derive(Clone)]
pub struct Pg {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) target: PgTarget,
    pub(crate) pool: Pool,
    /// The connector the pool's connections were made with, for cancelling their statements.
    pub(crate) tls: MakeRustlsConnect,
    /// Moves whenever some process changes what redirects and key checks read; see
    /// [`Pg::change_marker`].
    changes: Arc<AtomicI64>,
    /// The listening connection's task, ended with the last handle.
    listener: tokio::task::JoinHandle<()>,
    /// Where clicks wait to be reserved (`quota::reserve`): its task starts with the first
    /// and ends with the last handle.
    pub(crate) reservations: linkdeck_store::quota::Queue,
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
