//! The SQLite store: every SQL statement of the embedded service, and nothing else. The service
//! rules (validation, ownership, alias generation, hashing, titles) live one level up and call
//! these functions inside one transaction, so a PostgreSQL store can later stand beside this one
//! with the same shape.
//!
//! Times are unix seconds; targeting lists are JSON text in the wire shape.

mod background;
pub mod backup;
mod bulk;
mod copy;
mod db;
mod domains;
mod error;
mod import;
mod keys;
mod link_rows;
mod links;
mod orphans;
mod owners;
mod quota;
mod redirect;
mod schema;
mod search;
mod serve_lock;
mod spaces;
mod sql;
mod staged;
mod status;
mod store;
mod tags;
mod traffic;
mod trash;
mod tx;
mod visit_log;
mod visits;
mod webhooks;

pub use db::{Db, UpgradeNotice};
pub use error::db_error;
pub use schema::SCHEMA_VERSION;
pub use serve_lock::ServeLock;

/// A stored unix time as a timestamp; out-of-range values (never written by us) read as the epoch.
pub use linkdeck_store::time;
