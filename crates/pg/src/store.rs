//! The PostgreSQL store behind the storage contract: [`Store`] for [`Pg`]. Each piece of work
//! runs on a blocking thread as a [`PgTx`](crate::tx::PgTx); clicks, visits, copies and imports
//! go to the files that write them.

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::Object;
use linkdeck_domain::{Error, Id, Result};
use linkdeck_store::copy::{Batch, Moved};
use linkdeck_store::quota::Reserved;
use linkdeck_store::traffic::values::Interner;
use linkdeck_store::visits::{FlushedLink, VisitBatch};
use linkdeck_store::{Access, ImportWork, Store, Work};
use tokio::sync::mpsc;

use crate::cancel::Finish;
use crate::error::pg_error;
use crate::pool::Pg;
use crate::tx::run_in;
use crate::{copy, import, quota, visits};

#[async_trait]
impl Store for Pg {
    fn location(&self) -> String {
        self.target().to_string()
    }

    async fn run(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>> {
        let client = self.client().await?;
        // A read's caller may stop waiting; a write, once asked, is carried through.
        let (waiting, finish) = match access {
            Access::Lookup | Access::Read | Access::Snapshot => {
                let (waiting, finish) = self.watch(&client);
                (Some(waiting), Some(finish))
            }
            Access::Write | Access::Unchecked => (None, None),
        };
        let pg = self.clone();
        let done = tokio::task::spawn_blocking(move || pg.run_on(client, access, work, finish))
            .await
            .map_err(|e| Error::Unavailable(format!("database task failed: {e}")))?;
        drop(waiting);
        done
    }

    fn run_blocking(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>> {
        let client = self.runtime().block_on(self.client())?;
        self.run_on(client, access, work, None)
    }

    async fn ping(&self) -> Result<()> {
        let client = self.client().await?;
        client
            .query_one("SELECT 1", &[])
            .await
            .map(|_| ())
            .map_err(pg_error)
    }

    /// The notifications' count, in memory (see [`Pg::change_marker`]): this process's own
    /// changes count too.
    async fn changes(&self) -> Result<i64> {
        Ok(self.change_marker())
    }

    fn change_poll(&self, configured: Duration) -> Duration {
        configured.min(CHANGE_POLL)
    }

    /// Several servers may share the database.
    fn counts_are_shared(&self) -> bool {
        true
    }

    async fn reserve_click(&self, id: Id, rotation: u32) -> Result<Reserved> {
        quota::reserve(self, id, rotation).await
    }

    async fn settle_reserved_clicks(&self) -> Result<()> {
        quota::settle_all(self).await
    }

    async fn write_visits(
        &self,
        batch: VisitBatch,
        rotations: Vec<(Id, u32)>,
        interner: &Arc<Mutex<Interner>>,
    ) -> (Result<Vec<FlushedLink>>, VisitBatch) {
        // The writer is one task, so nobody else wants the interner meanwhile; it is taken out
        // because a lock cannot be held across the writes. PostgreSQL stores new values outside
        // the batch's transaction, so their codes stay good even if it fails.
        let mut codes = std::mem::take(&mut *interner.lock().unwrap_or_else(|e| e.into_inner()));
        let out = visits::record(self, &batch, &rotations, &mut codes).await;
        *interner.lock().unwrap_or_else(|e| e.into_inner()) = codes;
        (out, batch)
    }

    async fn table_counts(&self) -> Result<Vec<u64>> {
        copy::counts(self).await
    }

    async fn id_mark(&self) -> Result<Id> {
        copy::id_mark(self).await
    }

    async fn copy_out(&self, out: mpsc::Sender<Batch>) -> Result<()> {
        copy::read(self, out).await
    }

    async fn copy_in(
        &self,
        rows: mpsc::Receiver<Batch>,
        mark: Id,
        moved: Arc<Moved>,
    ) -> Result<()> {
        copy::write(self, rows, mark, &*moved).await
    }

    fn import_blocking(&self, work: ImportWork<'_>) -> Result<Box<dyn Any + Send>> {
        import::run(self, self.runtime(), |mut store| work(&mut store))
    }
}

impl Pg {
    /// Runs `work` on `client` as `access` asks; `finish`, when its caller may give up on it,
    /// decides where the connection goes afterwards.
    fn run_on(
        &self,
        mut client: Object,
        access: Access,
        work: Work,
        finish: Option<Finish>,
    ) -> Result<Box<dyn Any + Send>> {
        let done = run_in(self.runtime(), &mut client, access, work);
        if let Some(finish) = finish {
            finish.release(client);
        }
        done
    }
}

/// The longest a server goes without looking at the change marker: looking costs nothing, and
/// other servers' edits are served within this.
const CHANGE_POLL: Duration = Duration::from_millis(20);
