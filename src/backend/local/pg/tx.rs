//! The PostgreSQL store behind the storage contract: [`Pg`] runs a piece of work on a blocking
//! thread inside one transaction, and [`PgTx`] hands each of its statements to the runtime.

use std::any::Any;
use std::future::Future;

use async_trait::async_trait;
use deadpool_postgres::Transaction;
use linkdeck_store::{Access, Store, Work};
use tokio::runtime::Handle;
use tokio_postgres::IsolationLevel;

use super::{Pg, pg_error};
use crate::domain::{Error, Result};

/// One transaction of the PostgreSQL store, driven from a blocking thread.
pub struct PgTx<'t> {
    pub(super) tx: &'t Transaction<'t>,
    runtime: &'t Handle,
}

impl PgTx<'_> {
    /// Waits for one of the transaction's statements.
    pub(super) fn wait<T>(&self, step: impl Future<Output = T>) -> T {
        self.runtime.block_on(step)
    }
}

#[async_trait]
impl Store for Pg {
    fn location(&self) -> String {
        self.target().to_string()
    }

    async fn run(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>> {
        let mut client = self.client().await?;
        let runtime = Handle::current();
        tokio::task::spawn_blocking(move || {
            let tx = match access {
                Access::Read => runtime.block_on(
                    client
                        .build_transaction()
                        .isolation_level(IsolationLevel::RepeatableRead)
                        .read_only(true)
                        .start(),
                ),
                Access::Write => runtime.block_on(client.transaction()),
            }
            .map_err(pg_error)?;
            let out = work(&PgTx {
                tx: &tx,
                runtime: &runtime,
            });
            match out {
                Ok(value) => {
                    runtime.block_on(tx.commit()).map_err(pg_error)?;
                    Ok(value)
                }
                Err(e) => {
                    // Dropping the transaction would roll it back too, but only by a task it
                    // spawns; rolling back here returns the connection clean to the pool.
                    let _ = runtime.block_on(tx.rollback());
                    Err(e)
                }
            }
        })
        .await
        .map_err(|e| Error::Unavailable(format!("database task failed: {e}")))?
    }
}
