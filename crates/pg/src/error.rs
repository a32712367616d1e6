//! How PostgreSQL's failures read as the store's errors: what a person sees of a refused
//! connection or statement, and which constraint a racing writer broke.

use linkdeck_domain::Error;

use crate::target::{PASSWORD_VARS, PgTarget};

/// The error text without the "service unavailable" framing, to put after a database's name.
pub(crate) fn bare(e: &Error) -> String {
    match e {
        Error::Unavailable(m) => m.clone(),
        other => other.to_string(),
    }
}

/// Maps a PostgreSQL failure to the backend error a person sees. The server's own message is
/// kept (it names the constraint, the column or the refused user); the password never is in it.
pub fn pg_error(e: tokio_postgres::Error) -> Error {
    use tokio_postgres::error::SqlState;
    let Some(db) = e.as_db_error() else {
        let cause = std::error::Error::source(&e).map_or_else(String::new, |s| format!(": {s}"));
        return Error::Unavailable(format!("cannot reach PostgreSQL ({e}{cause})"));
    };
    let code = db.code();
    if *code == SqlState::LOCK_NOT_AVAILABLE {
        return Error::Unavailable(format!("the database {}", linkdeck_store::words::BUSY));
    }
    let hint = if *code == SqlState::INVALID_PASSWORD
        || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
    {
        format!(" (set {} to the database password)", PASSWORD_VARS[0])
    } else {
        String::new()
    };
    Error::Unavailable(format!("PostgreSQL: {}{hint}", db.message()))
}

/// A failed connection to `target`: what TLS needs done when that is why, else as [`pg_error`].
pub(crate) fn connect_error(e: tokio_postgres::Error, target: &PgTarget) -> Error {
    match target.tls().explain(&e, &target.server()) {
        Some(why) => Error::Unavailable(why),
        None => pg_error(e),
    }
}

pub(crate) fn pool_error(e: deadpool_postgres::PoolError, target: &PgTarget) -> Error {
    match e {
        deadpool_postgres::PoolError::Backend(e) => connect_error(e, target),
        other => Error::Unavailable(format!("PostgreSQL connection pool: {other}")),
    }
}

/// Whether `e` is a foreign-key violation of `constraint` (a space or domain removed by another
/// process between a check and a write).
pub fn is_foreign_key_violation(e: &tokio_postgres::Error, constraint: &str) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION)
        && e.as_db_error().and_then(|d| d.constraint()) == Some(constraint)
}

/// Whether `e` is a unique-constraint violation (an alias or a name already taken, found by
/// the database when two writers race).
pub fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
}
