//! The embedded service's store on PostgreSQL: a connection pool, the schema, and a listener
//! that hears every other process's edits. Several `linkdeck serve` instances, the CLI and the
//! terminal app may all work on one database at once; the database keeps what must hold for
//! all of them (unique aliases, link counters, exact click reservations), not any one process.
//!
//! The SQL of each area lives beside the SQLite store's, in `pg/<area>.rs`. The files import
//! one way only: the connection's pieces at the bottom (`target`, `tls`, `error`, `sql`,
//! `schema`, `listen`, then `pool` and `tx`), the areas above them, and `store` — the contract
//! answered for [`Pg`] — at the top, imported by nothing. This file only declares and
//! re-exports.

mod bulk;
mod cancel;
mod copy;
mod domains;
mod error;
mod import;
mod keys;
mod link_moves;
mod links;
mod listen;
mod orphans;
mod owners;
mod pool;
pub mod quota;
mod redirect;
mod schema;
mod search;
mod spaces;
mod sql;
mod store;
mod tags;
mod target;
mod tls;
mod traffic;
mod trash;
pub mod tx;
mod visits;
mod webhooks;

pub use pool::Pg;
pub use schema::{PG_SCHEMA_VERSION, create_at_version};
pub use target::{PASSWORD_VARS, PgTarget};
pub use tls::SslMode;
