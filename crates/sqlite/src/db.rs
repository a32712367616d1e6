//! The database file: one writer connection and a few readers, all used off the async threads.
//! WAL mode lets readers (this process's or another's: a second CLI, the server, the TUI) run
//! beside the one writer; a busy timeout rides out short write locks from other processes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::background::Background;
use crate::error::{db_error, opening_error};
use crate::schema;
use linkdeck_domain::{Error, Result};

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How far a commit goes before it returns: in write-ahead-log mode `NORMAL` hands it to the
/// operating system, and the log reaches the disk at checkpoints. A process killed outright
/// loses nothing it committed; a power cut may lose the last commits, never the file. What
/// must outlast a power cut too is written by [`Db::write_synced`].
const SYNCHRONOUS: &str = "NORMAL";
const READERS: usize = 4;
/// How much of the file a connection maps into memory (1 GiB): a page read through the map is
/// not copied into the page cache first.
const MMAP_SIZE: &str = "1073741824";
/// SQLite's virtual-machine steps between two looks at whether a read's caller is still
/// waiting: a look is one load of a flag, and a step takes tens of nanoseconds, so a read
/// nobody waits for stops within microseconds.
const STEPS_BETWEEN_LOOKS: std::ffi::c_int = 1_000;

/// A shared handle to one database file. Cloning is cheap.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// Opened by the first write (or [`Db::outside_changes`]): a command that only reads, such as
    /// a list, opens one connection instead of two (each reads and parses the whole schema).
    writer: Mutex<Option<Connection>>,
    readers: Mutex<Vec<Connection>>,
    /// Where clicks wait to be reserved in the file (`quota::reserve_in_file`).
    reservations: linkdeck_store::quota::Queue,
    /// Whether a large write may hold the file alone (see [`Db::let_large_writes_hold_it`]).
    large_writes_alone: AtomicBool,
    /// Where the click writer's batches run, once the first has come (see `background.rs`);
    /// `None` inside if no thread could be had.
    click_thread: OnceLock<Option<Background>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.inner.path)
            .finish()
    }
}

/// Told, before an existing file's schema is brought up to date, the file and the versions
/// from and to. The first start after installing a newer linkdeck can rebuild an index for
/// seconds on a large file (the per-field search indexes: 14 s at a million links), and a
/// program that says nothing meanwhile looks hung.
pub type UpgradeNotice = fn(&Path, i64, i64);

impl Db {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Db> {
        Self::open_noting(path, None)
    }

    /// [`Db::open`], telling `notice` first when an existing file's schema will be upgraded.
    pub fn open_noting(path: &Path, notice: Option<UpgradeNotice>) -> Result<Db> {
        create_parent(path)?;
        let mut writer = open_connection(path)?;
        // Reading the version checks that the file is a database, and one this build can use,
        // before anything changes it (WAL mode is written into the file).
        let version: i64 = writer
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| opening_error(path, e))?;
        schema::check_version(version).map_err(|e| match e {
            Error::Unavailable(m) => Error::Unavailable(format!("{}: {m}", path.display())),
            other => other,
        })?;
        writer
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| opening_error(path, e))?;
        if version > 0 && version < schema::SCHEMA_VERSION {
            tracing::info!(
                file = %path.display(),
                from = version,
                to = schema::SCHEMA_VERSION,
                "upgrading the database schema"
            );
            if let Some(notice) = notice {
                notice(path, version, schema::SCHEMA_VERSION);
            }
        }
        schema::migrate(&mut writer).map_err(|e| match e {
            Error::Unavailable(m) => Error::Unavailable(format!("{}: {m}", path.display())),
            other => other,
        })?;
        // The connection that checked the schema serves the first read.
        Ok(Db {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                writer: Mutex::new(None),
                readers: Mutex::new(vec![writer]),
                reservations: linkdeck_store::quota::Queue::new(),
                large_writes_alone: AtomicBool::new(false),
                click_thread: OnceLock::new(),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on a reader connection on the blocking pool. When the caller stops waiting —
    /// this future is dropped, as a request's is when it times out or its client goes away —
    /// the statement `f` is running fails at its next step, and so does any it starts after,
    /// so the work ends with the wait instead of running on for nobody.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let db = self.clone();
        let waiting = Waiting::default();
        let gone = waiting.gone();
        run_blocking(move || db.read_until(f, Some(gone))).await
    }

    /// Runs `f` on the click writer's thread, below the request threads' priority (see
    /// `background.rs`), or on the blocking pool when no such thread could be started. `Err`
    /// says why `f` did not finish.
    pub async fn on_click_thread<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::result::Result<T, String> {
        let thread = self
            .inner
            .click_thread
            .get_or_init(|| Background::start("linkdeck-clicks"));
        match thread {
            Some(thread) => thread.run(f).await,
            None => tokio::task::spawn_blocking(f)
                .await
                .map_err(|e| e.to_string()),
        }
    }

    /// Runs `f` inside one immediate write transaction on the blocking pool; commits when `f`
    /// returns `Ok`, rolls back otherwise, so nothing is ever half-written.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let db = self.clone();
        run_blocking(move || db.write_blocking(f)).await
    }

    /// [`Db::write`] whose commit is on the disk, not only handed to the operating system, when
    /// it returns: the write-ahead log is synced (`synchronous = FULL`) at its commit, and with
    /// it every commit before. Only the writes that must outlast a power cut pay for the sync.
    pub async fn write_synced<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let db = self.clone();
        run_blocking(move || db.write_synced_blocking(f)).await
    }

    /// [`Db::write_synced`] for callers already off the async threads.
    pub fn write_synced_blocking<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        self.with_writer(|conn| in_transaction_setting(conn, &[SYNCED], f))
    }

    /// [`Db::write_blocking`] for a transaction that writes far more than the write-ahead log
    /// holds between two checkpoints — an import, a copy between profiles — with the file not
    /// memory-mapped while it runs. Through the map, SQLite fetches every page only after
    /// searching the log's index for a newer copy of it, even a page already in the cache; and
    /// the search grows with every frame the transaction has written. Ten million links
    /// imported in one transaction wrote three million frames, and those searches took 92 % of
    /// the import's time by its end. Unmapped, a page in the cache is found without them.
    ///
    /// Pages that miss the cache are still looked for in the log first, and in a large import
    /// most do. So when this handle may ([`Db::let_large_writes_hold_it`]) and nothing else has
    /// the file open, the write runs with a rollback journal instead of the log, holding the
    /// file alone: pages are read from the file itself, and the journal keeps only what the
    /// write changed of the file as it was (little, for an import). The file is back in WAL
    /// mode after it.
    pub fn write_large_blocking<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let may_hold = self.inner.large_writes_alone.load(Ordering::Relaxed);
        if may_hold {
            // This handle's idle readers keep the file shared; the next read opens one anew.
            (self.inner.readers.lock())
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
        self.with_writer(|conn| {
            if !(may_hold && hold_alone(conn)) {
                return in_transaction_setting(conn, &[UNMAPPED], f);
            }
            let result = in_transaction_setting(conn, &[UNMAPPED, SYNCED], f);
            share_again(conn, &self.inner.path);
            result
        })
    }

    /// Lets [`Db::write_large_blocking`] hold the file alone while it runs, when nothing else
    /// has it open as it starts: for a process that runs one command and ends (the CLI), which
    /// reads nothing beside its large write. Another program opening the file meanwhile is told
    /// it is busy until the write ends. The terminal app and the server never ask for it: they
    /// read while they import.
    pub fn let_large_writes_hold_it(&self) {
        self.inner.large_writes_alone.store(true, Ordering::Relaxed);
    }

    /// A handle that does not keep the file open: for a task the handles themselves start,
    /// which must end with the last of them.
    pub(super) fn downgrade(&self) -> WeakDb {
        WeakDb(Arc::downgrade(&self.inner))
    }

    /// Where this file's clicks wait to be reserved.
    pub(super) fn reservations(&self) -> &linkdeck_store::quota::Queue {
        &self.inner.reservations
    }

    /// SQLite's `data_version` as the writer connection sees it: it moves whenever another
    /// connection (another process, or another handle on the file) commits, but not for this
    /// handle's own writes. Asked without a transaction, so it never takes the file's lock.
    pub async fn outside_changes(&self) -> Result<i64> {
        let db = self.clone();
        run_blocking(move || {
            db.with_writer(|conn| {
                conn.query_row("PRAGMA data_version", [], |r| r.get(0))
                    .map_err(db_error)
            })
        })
        .await
    }

    /// [`Db::read`] for callers already off the async threads.
    pub fn read_blocking<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.read_until(f, None)
    }

    /// Runs `f` on a reader connection; its statements fail once `gone` is set.
    pub(super) fn read_until<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T>,
        gone: Option<Arc<AtomicBool>>,
    ) -> Result<T> {
        let conn = self
            .inner
            .readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut conn = match conn {
            Some(conn) => conn,
            None => open_connection(&self.inner.path)?,
        };
        if let Some(gone) = gone {
            conn.progress_handler(
                STEPS_BETWEEN_LOOKS,
                Some(move || gone.load(Ordering::Relaxed)),
            )
            .map_err(db_error)?;
        }
        let result = f(&conn);
        let cleared = conn.progress_handler(0, None::<fn() -> bool>);
        // A connection left inside a transaction (a read stopped half-way whose rollback
        // failed) is closed rather than handed to the next read.
        let mut readers = self.inner.readers.lock().unwrap_or_else(|e| e.into_inner());
        if readers.len() < READERS && cleared.is_ok() && conn.is_autocommit() {
            readers.push(conn);
        }
        result
    }

    /// [`Db::write`] for callers already off the async threads.
    pub fn write_blocking<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        self.with_writer(|conn| in_transaction(conn, f))
    }

    /// Runs `f` on the writer connection, opening it first if no write has yet.
    fn with_writer<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut writer = self.inner.writer.lock().unwrap_or_else(|e| e.into_inner());
        if writer.is_none() {
            *writer = Some(open_connection(&self.inner.path)?);
        }
        match writer.as_mut() {
            Some(conn) => f(conn),
            None => Err(Error::Unavailable(format!(
                "database {} has no writer connection",
                self.inner.path.display()
            ))),
        }
    }

    /// [`Db::write_blocking`] with foreign-key checks off, for a writer that makes sure of every
    /// row it references inside the same transaction (the click writer stores a visit only for
    /// a link its own `UPDATE … RETURNING` just found). Skipping the redundant lookup per row
    /// and the statement journal it needs is a large share of a batch's cost. Checks are back
    /// on before the connection is used again, whatever `f` returns.
    pub fn write_blocking_checked_by_caller<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        self.with_writer(|conn| in_transaction_setting(conn, &[UNCHECKED], f))
    }
}

/// A [`Db`] that does not keep it open (see [`Db::downgrade`]).
#[derive(Clone)]
pub(super) struct WeakDb(Weak<Inner>);

impl WeakDb {
    /// The database, while any handle of it is left.
    pub fn upgrade(&self) -> Option<Db> {
        self.0.upgrade().map(|inner| Db { inner })
    }
}

/// Runs `f` in one immediate transaction on `conn`: committed on `Ok`, rolled back otherwise.
fn in_transaction<T>(
    conn: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_error)?;
    let value = f(&tx)?;
    // Whatever the write was, the short-term search index and the facts large searches are
    // filtered and sorted by take in what has gathered.
    crate::search::settle(&tx)?;
    tx.commit().map_err(db_error)?;
    Ok(value)
}

/// A connection setting for one transaction: the pragma, its value then, and the value it is
/// put back to.
type Setting = (&'static str, &'static str, &'static str);

/// Commits reach the disk (see [`Db::write_synced`]).
const SYNCED: Setting = ("synchronous", "FULL", SYNCHRONOUS);
/// The file is read without its memory map (see [`Db::write_large_blocking`]).
const UNMAPPED: Setting = ("mmap_size", "0", MMAP_SIZE);
/// References are left to the writer (see [`Db::write_blocking_checked_by_caller`]).
const UNCHECKED: Setting = ("foreign_keys", "OFF", "ON");

/// [`in_transaction`] with the connection's `settings` made for it, and every one put back
/// afterwards, whatever `f` returns and even when one of them could not be made.
fn in_transaction_setting<T>(
    conn: &mut Connection,
    settings: &[Setting],
    f: impl FnOnce(&Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let set = (settings.iter()).try_for_each(|(pragma, value, _)| {
        conn.pragma_update(None, pragma, value).map_err(db_error)
    });
    let result = set.and_then(|()| in_transaction(conn, f));
    let restored: Vec<_> = (settings.iter())
        .map(|(pragma, _, back)| conn.pragma_update(None, pragma, back))
        .collect();
    let value = result?;
    for outcome in restored {
        outcome.map_err(db_error)?;
    }
    Ok(value)
}

/// Moves `conn`'s file from the write-ahead log to a rollback journal, which SQLite does only
/// when no other connection has the file open (each holds it shared while in WAL mode); false,
/// and the file as it was, when another has. Commits then go through the journal, synced, and
/// no other connection can open the file (see [`opening_error`]) until [`share_again`].
fn hold_alone(conn: &Connection) -> bool {
    let mode = conn.query_row("PRAGMA journal_mode = DELETE", [], |r| {
        r.get::<_, String>(0)
    });
    matches!(mode, Ok(mode) if mode == "delete")
}

/// Puts `conn`'s file back in WAL mode after [`hold_alone`]. When another connection has
/// opened it since (a read the moment the write ended), it stays in the journal's mode until
/// the next open, which puts it back: its data is whole either way.
fn share_again(conn: &Connection, path: &Path) {
    match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
        Ok(mode) if mode == "wal" => {}
        outcome => tracing::warn!(file = %path.display(), ?outcome, "left with a rollback journal"),
    }
}

/// Set once the caller of a read stops waiting for it: when this is dropped, with the read's
/// future or after its answer.
#[derive(Default)]
pub(super) struct Waiting {
    gone: Arc<AtomicBool>,
}

impl Waiting {
    /// What the read looks at.
    pub(super) fn gone(&self) -> Arc<AtomicBool> {
        self.gone.clone()
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.gone.store(true, Ordering::Relaxed);
    }
}

async fn run_blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Unavailable(format!("database task failed: {e}")))?
}

/// Creates the directory a database file (or a file beside it) goes in.
pub(super) fn create_parent(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Unavailable(format!("cannot create {}: {e}", dir.display())))?;
    }
    Ok(())
}

fn open_connection(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| opening_error(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| opening_error(path, e))?;
    // Plans never depend on bound values. Without this, SQLite marks a statement whose
    // parameter it compared with a partial index's literal (`disabled = 1`) to be compiled
    // again whenever that parameter changes to or from 0 or 1 — and a cached statement's
    // parameters are cleared between uses, so reading a page's 20 links by id compiled the
    // statement 20 times (0.35 M instructions each, about 1.5 ms a page). Every statement
    // that needs a partial index names its rule in literals.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(|e| opening_error(path, e))?;
    // `rarray(?)`: a list of ids as one parameter (the long search terms' candidates).
    rusqlite::vtab::array::load_module(&conn).map_err(|e| opening_error(path, e))?;
    conn.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;
         PRAGMA cache_size = -16384;",
    )
    .map_err(|e| opening_error(path, e))?;
    conn.pragma_update(None, "mmap_size", MMAP_SIZE)
        .map_err(|e| opening_error(path, e))?;
    conn.pragma_update(None, "synchronous", SYNCHRONOUS)
        .map_err(|e| opening_error(path, e))?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::file_error;

    fn foreign_keys(db: &Db) -> bool {
        db.with_writer(|conn| {
            conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))
                .map_err(db_error)
        })
        .unwrap()
    }

    /// A file with the given schema version, in the default (rollback journal) mode.
    fn file_at_version(dir: &Path, version: i64) -> PathBuf {
        let path = dir.join(format!("v{version}.db"));
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE other (x)").unwrap();
        conn.pragma_update(None, "user_version", version).unwrap();
        path
    }

    fn journal_mode(path: &Path) -> String {
        Connection::open(path)
            .unwrap()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_locked_database_reads_the_same_when_opening_and_when_working() {
        let locked = || {
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                None,
            )
        };
        let words = "is busy: another program has it locked; try again in a moment";
        assert_eq!(
            file_error(Path::new("/d/links.db"), locked()).to_string(),
            Error::Unavailable(format!("database /d/links.db {words}")).to_string()
        );
        assert_eq!(
            db_error(locked()).to_string(),
            Error::Unavailable(format!("the database {words}")).to_string()
        );
    }

    #[test]
    fn versions_this_build_cannot_use_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        for (version, says) in [
            (-1, "not a linkdeck database"),
            (schema::SCHEMA_VERSION + 1, "newer linkdeck"),
        ] {
            let path = file_at_version(dir.path(), version);
            let err = Db::open(&path).unwrap_err().to_string();
            assert!(
                err.contains(says) && err.contains(&format!("schema {version}")),
                "{err}"
            );
            assert_eq!(
                journal_mode(&path),
                "delete",
                "schema {version}: switched to WAL"
            );
        }
    }

    /// A read whose caller stops waiting (a request that timed out) stops as well, and its
    /// connection serves the next read.
    #[tokio::test]
    async fn a_read_nobody_waits_for_any_more_stops() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("stop.db")).unwrap();
        let (outcome, told) = std::sync::mpsc::channel();
        let read = db.read(move |conn| {
            // Counting to a billion: minutes of work.
            let counted = conn.query_row(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
                 WHERE i < 1000000000) SELECT count(*) FROM n",
                [],
                |r| r.get::<_, i64>(0),
            );
            let _ = outcome.send(counted.map_err(db_error));
            Ok(())
        });
        let waited = tokio::time::timeout(Duration::from_millis(200), read).await;
        assert!(waited.is_err(), "the count ended within 200 ms");
        let counted = told
            .recv_timeout(Duration::from_secs(120))
            .expect("the read still runs for nobody");
        let err = counted.expect_err("the read ran to its end").to_string();
        assert!(err.contains("interrupted"), "{err}");
        let one = db
            .read(|conn| {
                conn.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                    .map_err(db_error)
            })
            .await
            .unwrap();
        assert_eq!(one, 1);
    }

    /// `synchronous`: 1 is NORMAL, 2 FULL.
    fn level_of(conn: &Connection) -> Result<i64> {
        conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
            .map_err(db_error)
    }

    #[test]
    fn only_a_synced_write_waits_for_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("sync.db")).unwrap();
        let level = level_of;
        assert_eq!(db.write_blocking(|tx| level(tx)).unwrap(), 1);
        assert_eq!(db.write_synced_blocking(|tx| level(tx)).unwrap(), 2);
        assert_eq!(
            db.write_blocking(|tx| level(tx)).unwrap(),
            1,
            "NORMAL again"
        );
        let failed: Result<()> = db.write_synced_blocking(|_| Err(Error::Unavailable("no".into())));
        assert!(failed.is_err());
        assert_eq!(
            db.with_writer(|c| level(c)).unwrap(),
            1,
            "after a rollback too"
        );
    }

    #[test]
    fn a_large_write_leaves_the_file_mapped_for_the_writes_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("map.db")).unwrap();
        let mapped = |conn: &Connection| -> Result<i64> {
            conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))
                .map_err(db_error)
        };
        assert_eq!(db.write_blocking(|tx| mapped(tx)).unwrap(), 1 << 30);
        assert_eq!(db.write_large_blocking(|tx| mapped(tx)).unwrap(), 0);
        assert_eq!(db.write_blocking(|tx| mapped(tx)).unwrap(), 1 << 30);
        let failed: Result<()> = db.write_large_blocking(|_| Err(Error::Unavailable("no".into())));
        assert!(failed.is_err());
        assert_eq!(
            db.with_writer(|c| mapped(c)).unwrap(),
            1 << 30,
            "after a rollback too"
        );
    }

    /// What a large write that adds a row runs with: the journal's mode and `synchronous`.
    fn large_write_sees(db: &Db, fail: bool) -> Result<(String, i64)> {
        db.write_large_blocking(|tx| {
            tx.execute_batch("CREATE TABLE IF NOT EXISTS held (x); INSERT INTO held VALUES (1)")
                .map_err(db_error)?;
            let mode = tx.query_row("PRAGMA journal_mode", [], |r| r.get(0));
            let synced = tx.query_row("PRAGMA synchronous", [], |r| r.get(0));
            match fail {
                true => Err(Error::Unavailable("no".into())),
                false => Ok((mode.map_err(db_error)?, synced.map_err(db_error)?)),
            }
        })
    }

    fn rows_held(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row("SELECT count(*) FROM held", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_large_write_holds_the_file_alone_only_when_it_may_and_nothing_else_has_it_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alone.db");
        let db = Db::open(&path).unwrap();
        // Not asked: the log, as every write.
        assert_eq!(large_write_sees(&db, false).unwrap(), ("wal".into(), 1));
        db.let_large_writes_hold_it();
        // Another handle on the file, as a server's beside the command: the log still.
        let other = Db::open(&path).unwrap();
        assert_eq!(large_write_sees(&db, false).unwrap(), ("wal".into(), 1));
        drop(other);
        // Alone, although this handle had read: a rollback journal, synced.
        db.read_blocking(|conn| conn.execute_batch("SELECT 1").map_err(db_error))
            .unwrap();
        assert_eq!(large_write_sees(&db, false).unwrap(), ("delete".into(), 2));
        assert_eq!(journal_mode(&path), "wal", "shared again after it");
        assert_eq!(db.write_blocking(|tx| level_of(tx)).unwrap(), 1);
        // A write that fails leaves nothing, and the file shared again.
        assert!(large_write_sees(&db, true).is_err());
        assert_eq!(journal_mode(&path), "wal");
        assert_eq!(rows_held(&path), 3);
    }

    #[test]
    fn a_file_held_alone_tells_another_opener_why_it_must_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.db");
        let db = Db::open(&path).unwrap();
        db.let_large_writes_hold_it();
        let refused = db
            .write_large_blocking(|_| Ok(Db::open(&path).map(|_| ()).unwrap_err()))
            .unwrap()
            .to_string();
        assert!(
            refused.contains("held.db is busy: another program holds it alone")
                && refused.contains("import or copy"),
            "{refused}"
        );
        assert!(Db::open(&path).is_ok(), "open once the write has ended");
    }

    #[test]
    fn reference_checks_come_back_after_a_writer_that_skips_them() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("fk.db")).unwrap();
        let saw = db
            .write_blocking_checked_by_caller(|tx| {
                tx.query_row("PRAGMA foreign_keys", [], |r| r.get::<_, bool>(0))
                    .map_err(db_error)
            })
            .unwrap();
        assert!(!saw, "off inside");
        assert!(foreign_keys(&db), "on again after a commit");
        let failed: Result<()> =
            db.write_blocking_checked_by_caller(|_| Err(Error::Unavailable("no".into())));
        assert!(failed.is_err());
        assert!(foreign_keys(&db), "on again after a rollback");
        // And enforced: a link of an owner that does not exist is refused.
        let orphan = db.write_blocking(|tx| {
            tx.execute(
                "INSERT INTO links (owner_id, alias, url, created_at, updated_at)
                 VALUES (999, 'a', 'https://a.example', 0, 0)",
                [],
            )
            .map_err(db_error)
        });
        assert!(orphan.is_err());
    }
}
