//! The SQLite store behind the storage contract: [`Db`] runs a piece of work on its blocking
//! pool, and [`SqliteTx`] answers the work's questions over one connection.

use std::any::Any;

use async_trait::async_trait;
use linkdeck_store::{Access, Store, Work};
use rusqlite::Connection;

use super::db_error;
use crate::backend::local::Db;
use crate::domain::Result;

/// One transaction of the SQLite store: a reader's snapshot or the writer's transaction.
pub struct SqliteTx<'c> {
    pub(in crate::backend::local) conn: &'c Connection,
}

#[async_trait]
impl Store for Db {
    fn location(&self) -> String {
        self.path().display().to_string()
    }

    async fn run(&self, access: Access, work: Work) -> Result<Box<dyn Any + Send>> {
        match access {
            Access::Read => self.read(move |conn| work(&SqliteTx { conn })).await,
            Access::Snapshot => {
                self.read(move |conn| {
                    let tx = conn.unchecked_transaction().map_err(db_error)?;
                    let out = work(&SqliteTx { conn: &tx });
                    tx.finish().map_err(db_error)?;
                    out
                })
                .await
            }
            Access::Write => self.write(move |tx| work(&SqliteTx { conn: tx })).await,
        }
    }
}
