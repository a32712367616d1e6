//! `linkdeck db copy`: a whole database — owners, keys, domains, spaces, links, the trash,
//! traffic — from one store into another empty one, SQLite or PostgreSQL either way. Ids, click
//! counts, dates, password hashes and key digests arrive as they were, so short links, API keys
//! and statistics work the same on the target. The target is written in one transaction:
//! a failure anywhere leaves it as empty as it was.
//!
//! The source is read in one snapshot while the target writes: a reader and a writer, each on
//! its own store's terms, joined by a bounded channel of batches (memory stays flat, whatever
//! the size of the database).

mod pg;
mod sqlite;
mod tables;

use tokio::sync::mpsc;

use super::{Backing, LocalService};
use crate::domain::{Error, Result, plural};

/// Rows per batch on the channel.
const CHUNK: usize = 2_000;

/// What the reader sends: a table begins (its index in [`tables::TABLES`]), rows of it, the end.
enum Batch {
    Start(usize),
    Rows(Vec<tables::Row>),
    Done,
}

/// Told how many rows were just written, for a progress bar.
pub type Moved = dyn Fn(u64) + Send + Sync;

/// Link counters of owners and spaces, taken from the links copied (the same SQL on both
/// stores). PostgreSQL's triggers counted each copied link on top of the copied counter.
const RECOUNT: &str = "
    UPDATE owners SET link_count = (SELECT count(*) FROM links WHERE links.owner_id = owners.id);
    UPDATE spaces SET link_count = (SELECT count(*) FROM links WHERE links.space_id = spaces.id);
";

/// Rows per table, in the order they are copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCounts(pub Vec<(&'static str, u64)>);

impl TableCounts {
    pub fn total(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }

    pub fn of(&self, table: &str) -> u64 {
        self.0
            .iter()
            .find(|(name, _)| *name == table)
            .map_or(0, |(_, n)| *n)
    }
}

impl LocalService {
    /// How many rows each table holds, in one snapshot.
    pub async fn table_counts(&self) -> Result<TableCounts> {
        let counts = match &self.backing {
            Backing::Sqlite(db) => db.read(sqlite::counts).await?,
            Backing::Postgres(pg) => pg::counts(pg).await?,
        };
        Ok(TableCounts(
            tables::TABLES.iter().map(|t| t.name).zip(counts).collect(),
        ))
    }

    /// Copies the whole database into `target`, which must be empty; `moved` hears of each
    /// batch written. Returns what was copied.
    pub async fn copy_into(
        &self,
        target: &LocalService,
        moved: std::sync::Arc<Moved>,
    ) -> Result<TableCounts> {
        let there = target.table_counts().await?;
        if there.total() > 0 {
            return Err(Error::Conflict(format!(
                "{} is not empty ({}, {}); copy into a new database",
                target.location(),
                plural(there.of("links"), "link"),
                plural(there.of("owners"), "owner"),
            )));
        }
        let counts = self.table_counts().await?;
        let mark = match &self.backing {
            Backing::Sqlite(db) => db.read(sqlite::id_mark).await?,
            Backing::Postgres(pg) => pg::id_mark(pg).await?,
        };
        let (tx, rx) = mpsc::channel(4);
        let reader = {
            let store = self.backing.clone();
            tokio::spawn(async move {
                match store {
                    Backing::Sqlite(db) => {
                        tokio::task::spawn_blocking(move || sqlite::read(&db, tx))
                            .await
                            .map_err(|e| Error::Unavailable(format!("copy: reader failed: {e}")))?
                    }
                    Backing::Postgres(pg) => pg::read(&pg, tx).await,
                }
            })
        };
        let written = match &target.backing {
            Backing::Sqlite(db) => {
                let db = db.clone();
                tokio::task::spawn_blocking(move || sqlite::write(&db, rx, mark, &*moved))
                    .await
                    .map_err(|e| Error::Unavailable(format!("copy: writer failed: {e}")))?
            }
            Backing::Postgres(pg) => pg::write(pg, rx, mark, &*moved).await,
        };
        let read = reader
            .await
            .map_err(|e| Error::Unavailable(format!("copy: reader failed: {e}")))?;
        // A reader's failure explains the writer's ("the source stopped").
        read?;
        written?;
        Ok(counts)
    }
}
