//! [`PgTx`], one piece of work's connection to PostgreSQL, driven from a blocking thread that
//! hands each of its statements to the runtime; and the transaction the work runs in,
//! committed when it succeeds and rolled back when it fails.

use std::any::Any;
use std::future::Future;

use deadpool_postgres::{Object, Transaction};
use linkdeck_domain::Result;
use linkdeck_store::{Access, Work};
use tokio::runtime::Handle;

use crate::error::pg_error;
use crate::sql::{snapshot, write};

/// One piece of work's connection to PostgreSQL, driven from a blocking thread: a pooled
/// client for plain reads, a transaction otherwise.
pub struct PgTx<'t, C> {
    pub(crate) c: &'t C,
    runtime: &'t Handle,
}

impl<'t, C> PgTx<'t, C> {
    pub(crate) fn new(c: &'t C, runtime: &'t Handle) -> Self {
        PgTx { c, runtime }
    }

    /// Waits for one of the work's statements.
    pub(crate) fn wait<T>(&self, step: impl Future<Output = T>) -> T {
        self.runtime.block_on(step)
    }
}

/// Runs `work` on `client` as `access` asks: a plain read on the client itself, anything else
/// in a transaction of its own.
pub(crate) fn run_in(
    runtime: &Handle,
    client: &mut Object,
    access: Access,
    work: Work,
) -> Result<Box<dyn Any + Send>> {
    let tx = match access {
        Access::Lookup | Access::Read => {
            return work(&PgTx {
                c: &*client,
                runtime,
            });
        }
        Access::Snapshot => runtime.block_on(snapshot(client))?,
        Access::Write | Access::Unchecked => runtime.block_on(write(client))?,
    };
    let done = work(&PgTx { c: &tx, runtime });
    end(runtime, tx, done)
}

/// Ends `tx` as its work did: committed after a success, rolled back after a failure.
pub(crate) fn end<T>(runtime: &Handle, tx: Transaction<'_>, done: Result<T>) -> Result<T> {
    match done {
        Ok(value) => {
            runtime.block_on(tx.commit()).map_err(pg_error)?;
            Ok(value)
        }
        Err(e) => {
            // Dropping the transaction would roll it back too, but only by a task it spawns;
            // rolling back here returns the connection clean to the pool. A failed rollback
            // leaves it to the connection's close.
            let _ = runtime.block_on(tx.rollback());
            Err(e)
        }
    }
}
