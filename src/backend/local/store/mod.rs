//! The SQLite store: every SQL statement of the embedded service, and nothing else. The service
//! rules (validation, ownership, alias generation, hashing, titles) live one level up and call
//! these functions inside one transaction, so a PostgreSQL store can later stand beside this one
//! with the same shape.
//!
//! Times are unix seconds; targeting lists are JSON text in the wire shape.

pub mod bulk;
mod copy;
pub mod domains;
mod import;
mod keys;
pub mod links;
mod owners;
pub(in crate::backend::local) mod quota;
mod redirect;
pub mod search;
pub mod spaces;
pub(in crate::backend::local) mod status;
pub mod traffic;
pub mod trash;
pub mod tx;
pub mod visit_log;
pub mod visits;

use rusqlite::{Connection, Params};

pub use super::db::db_error;
use crate::domain::Result;

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
