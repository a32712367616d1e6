//! SQL for owners.

use jiff::Timestamp;
use linkdeck_store::{Owners, rows};
use rusqlite::params;

use crate::error::db_error;
use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;
use linkdeck_domain::{Error, Id, Owner, Result};

const COLUMNS: &str = "id, name, created_at";

impl Owners for SqliteTx<'_> {
    fn owner(&self, id: Id) -> Result<Option<Owner>> {
        self.conn.one(
            &format!("SELECT {COLUMNS} FROM owners WHERE id = ?1"),
            [id],
            |r| rows::owner(&Cols(r)),
        )
    }

    fn owners(&self) -> Result<Vec<Owner>> {
        self.conn.all(
            &format!("SELECT {COLUMNS} FROM owners ORDER BY id"),
            [],
            |r| rows::owner(&Cols(r)),
        )
    }

    fn owner_named(&self, name: &str) -> Result<Option<Owner>> {
        self.conn.one(
            &format!("SELECT {COLUMNS} FROM owners WHERE name = ?1"),
            [name],
            |r| rows::owner(&Cols(r)),
        )
    }

    fn insert_owner(&self, name: &str, now: Timestamp) -> Result<Owner> {
        // One writer at a time: the service has found the name free in this transaction.
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO owners (name, created_at) VALUES (?1, ?2) RETURNING {COLUMNS}"
            ))
            .map_err(db_error)?
            .query_row(params![name, now.as_second()], |r| rows::owner(&Cols(r)))
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::ConstraintViolation) => {
                    Error::Conflict(format!("an owner named {name} already exists"))
                }
                _ => db_error(e),
            })
    }
}
