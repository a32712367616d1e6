//! `linkdeck db copy`: a whole database — owners, keys, domains, spaces, links, the trash,
//! traffic — from one store into another empty one, SQLite or PostgreSQL either way. Ids, click
//! counts, dates, password hashes and key digests arrive as they were, so short links, API keys
//! and statistics work the same on the target. The target is written in one transaction:
//! a failure anywhere leaves it as empty as it was.
//!
//! The source is read in one snapshot while the target writes: a reader and a writer, each on
//! its own store's terms, joined by a bounded channel of batches (memory stays flat, whatever
//! the size of the database).

use tokio::sync::mpsc;

use super::LocalService;
use linkdeck_domain::{Error, Result, plural};
pub use linkdeck_store::copy::Moved;
use linkdeck_store::copy::TABLES;

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
        let counts = self.store.table_counts().await?;
        Ok(TableCounts(
            TABLES.iter().map(|t| t.name).zip(counts).collect(),
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
        let mark = self.store.id_mark().await?;
        let (tx, rx) = mpsc::channel(4);
        let reader = {
            let store = self.store.clone();
            tokio::spawn(async move { store.copy_out(tx).await })
        };
        let written = target.store.copy_in(rx, mark, moved).await;
        let read = reader
            .await
            .map_err(|e| Error::Unavailable(format!("copy: reader failed: {e}")))?;
        // A reader's failure explains the writer's ("the source stopped").
        read?;
        written?;
        Ok(counts)
    }
}
