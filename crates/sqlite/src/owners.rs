//! SQL for owners.

use jiff::Timestamp;
use linkdeck_store::Owners;
use rusqlite::params;

use crate::error::db_error;
use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Error, Id, Owner, Result};

const COLUMNS: &str = "id, name, created_at";

fn owner_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Owner> {
    Ok(Owner {
        id: row.get(0)?,
        name: row.get(1)?,
        created_at: linkdeck_store::time(row.get(2)?),
    })
}

impl Owners for SqliteTx<'_> {
    fn owner(&self, id: Id) -> Result<Option<Owner>> {
        self.conn.one(
            &format!("SELECT {COLUMNS} FROM owners WHERE id = ?1"),
            [id],
            owner_from_row,
        )
    }

    fn owners(&self) -> Result<Vec<Owner>> {
        self.conn.all(
            &format!("SELECT {COLUMNS} FROM owners ORDER BY id"),
            [],
            owner_from_row,
        )
    }

    fn owner_named(&self, name: &str) -> Result<Option<Owner>> {
        self.conn.one(
            &format!("SELECT {COLUMNS} FROM owners WHERE name = ?1"),
            [name],
            owner_from_row,
        )
    }

    fn insert_owner(&self, name: &str, now: Timestamp) -> Result<Owner> {
        // One writer at a time: the service has found the name free in this transaction.
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO owners (name, created_at) VALUES (?1, ?2) RETURNING {COLUMNS}"
            ))
            .map_err(db_error)?
            .query_row(params![name, now.as_second()], owner_from_row)
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::ConstraintViolation) => {
                    Error::Conflict(format!("an owner named {name} already exists"))
                }
                _ => db_error(e),
            })
    }
}
