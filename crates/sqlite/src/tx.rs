//! One piece of work's view of the SQLite store: the connection its statements run on, inside
//! the transaction or snapshot its [`Access`](linkdeck_store::Access) asked for. Each area's
//! file answers its part of the contract on it.

use rusqlite::Connection;

/// One transaction of the SQLite store: a reader's snapshot or the writer's transaction.
pub struct SqliteTx<'c> {
    pub conn: &'c Connection,
}
