//! The SQLite store: every SQL statement of the embedded service, and nothing else. The service
//! rules (validation, ownership, alias generation, hashing, titles) live one level up and call
//! these functions inside one transaction, so a PostgreSQL store can later stand beside this one
//! with the same shape.
//!
//! Times are unix seconds; targeting lists are JSON text in the wire shape.

mod bulk;
mod copy;
mod db;
mod domains;
mod import;
mod keys;
mod links;
mod owners;
mod quota;
mod redirect;
mod schema;
mod search;
mod serve_lock;
mod spaces;
mod status;
mod traffic;
mod trash;
mod tx;
mod visit_log;
mod visits;

use rusqlite::{Connection, Params};

pub use db::{Db, UpgradeNotice, db_error};
use linkdeck_domain::Result;
pub use schema::SCHEMA_VERSION;
pub use serve_lock::ServeLock;

/// A stored unix time as a timestamp; out-of-range values (never written by us) read as the epoch.
pub use linkdeck_store::time;

/// The number a `SELECT count(*)` statement answers.
fn count(conn: &Connection, sql: &str, params: impl Params) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached(sql)
        .map_err(db_error)?
        .query_row(params, |r| r.get(0))
        .map_err(db_error)?;
    Ok(n as u64)
}
