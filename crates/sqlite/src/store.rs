//! The SQLite store behind the storage contract: [`Db`] runs a piece of work on its blocking
//! pool over a [`SqliteTx`], and answers the store-wide questions (clicks reserved, visits
//! written, copies, imports) through the area files. The top of the store: nothing imports it.

use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use linkdeck_store::copy::{Batch, Moved};
use linkdeck_store::quota::Reserved;
use linkdeck_store::traffic::values::Interner;
use linkdeck_store::visits::{FlushedLink, VisitBatch};
use linkdeck_store::{Access, ImportWork, Store, Work};
use tokio::sync::mpsc;

use crate::Db;
use crate::db::Waiting;
use crate::error::db_error;
use crate::tx::SqliteTx;
use linkdeck_domain::{Error, Id, Result};

#[async_trait]
impl Store for Db {
    fn location(&self) -> String {
        self.path().display().to_string()
    }

    async fn run(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>> {
        // In WAL mode readers never wait for the writer, and a hand-off to the blocking pool
        // per lookup costs more than the read.
        if access == Access::Lookup {
            return self.run_blocking(access, work);
        }
        let db = self.clone();
        // Dropped with this future: a read nobody waits for any more stops (see `Db::read`).
        let waiting = Waiting::default();
        let gone = waiting.gone();
        tokio::task::spawn_blocking(move || db.run_until(access, work, Some(gone)))
            .await
            .map_err(|e| Error::Unavailable(format!("database task failed: {e}")))?
    }

    fn run_blocking(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>> {
        self.run_until(access, work, None)
    }

    async fn ping(&self) -> Result<()> {
        self.read(|conn| conn.query_row("SELECT 1", [], |_| Ok(())).map_err(db_error))
            .await
    }

    /// SQLite's `data_version` on the writer connection: other connections' commits move it,
    /// this handle's own do not.
    async fn changes(&self) -> Result<i64> {
        self.outside_changes().await
    }

    /// One `serve` per file counts its clicks.
    fn counts_are_shared(&self) -> bool {
        false
    }

    async fn reserve_click(&self, id: Id, rotation: u32) -> Result<Reserved> {
        super::quota::reserve_in_file(self, id, rotation).await
    }

    async fn write_visits(
        &self,
        batch: VisitBatch,
        rotations: Vec<(Id, u32)>,
        interner: &Arc<Mutex<Interner>>,
    ) -> (Result<Vec<FlushedLink>>, VisitBatch) {
        let db = self.clone();
        let interner = interner.clone();
        let written = self
            .on_click_thread(move || {
                let mut interner = interner.lock().unwrap_or_else(|e| e.into_inner());
                let out = db.write_blocking_checked_by_caller(|tx| {
                    super::visits::record_visits(tx, &batch, &rotations, &mut interner)
                });
                if out.is_err() {
                    // Values it stored were rolled back: their numbers must not be reused.
                    *interner = Interner::default();
                }
                (out, batch)
            })
            .await;
        written.unwrap_or_else(|e| {
            tracing::error!(error = %e, "visit writer task failed");
            (
                Err(Error::Unavailable(format!("the visit writer failed: {e}"))),
                VisitBatch::default(),
            )
        })
    }

    async fn table_counts(&self) -> Result<Vec<u64>> {
        self.read(super::copy::counts).await
    }

    async fn id_mark(&self) -> Result<Id> {
        self.read(super::copy::id_mark).await
    }

    async fn copy_out(&self, out: mpsc::Sender<Batch>) -> Result<()> {
        let db = self.clone();
        tokio::task::spawn_blocking(move || super::copy::read(&db, out))
            .await
            .map_err(|e| Error::Unavailable(format!("copy: reader failed: {e}")))?
    }

    async fn copy_in(
        &self,
        rows: mpsc::Receiver<Batch>,
        mark: Id,
        moved: Arc<Moved>,
    ) -> Result<()> {
        let db = self.clone();
        tokio::task::spawn_blocking(move || super::copy::write(&db, rows, mark, &*moved))
            .await
            .map_err(|e| Error::Unavailable(format!("copy: writer failed: {e}")))?
    }

    fn import_blocking(&self, work: ImportWork<'_>) -> Result<Box<dyn Any + Send>> {
        self.write_large_blocking(move |tx| work(&mut super::import::SqliteImport::new(tx)?))
    }

    /// Reserved clicks go straight into the link's row: nothing to settle.
    async fn settle_reserved_clicks(&self) -> Result<()> {
        Ok(())
    }

    /// Each ask is a statement: the period configured.
    fn change_poll(&self, configured: Duration) -> Duration {
        configured
    }
}

impl Db {
    /// Runs `work` as `access` asks; a read's statements fail once `gone` is set.
    fn run_until(
        &self,
        access: Access,
        work: Work,
        gone: Option<Arc<AtomicBool>>,
    ) -> Result<Box<dyn Any + Send>> {
        match access {
            Access::Lookup | Access::Read => {
                self.read_until(move |conn| work(&SqliteTx { conn }), gone)
            }
            Access::Snapshot => self.read_until(
                move |conn| {
                    let tx = conn.unchecked_transaction().map_err(db_error)?;
                    let out = work(&SqliteTx { conn: &tx });
                    tx.finish().map_err(db_error)?;
                    out
                },
                gone,
            ),
            Access::Write => self.write_blocking(move |tx| work(&SqliteTx { conn: tx })),
            Access::Unchecked => {
                self.write_blocking_checked_by_caller(move |tx| work(&SqliteTx { conn: tx }))
            }
        }
    }
}
