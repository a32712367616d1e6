//! SQL for owners on PostgreSQL.

use jiff::Timestamp;
use tokio_postgres::Row;

use deadpool_postgres::GenericClient;
use linkdeck_store::Owners;

use crate::error::{is_unique_violation, pg_error};
use crate::tx::PgTx;
use linkdeck_domain::{Error, Id, Owner, Result};

fn owner(row: &Row) -> Owner {
    Owner {
        id: row.get(0),
        name: row.get(1),
        created_at: Timestamp::from_second(row.get(2)).unwrap_or_default(),
    }
}

impl<C: GenericClient + Sync> Owners for PgTx<'_, C> {
    fn owner(&self, id: Id) -> Result<Option<Owner>> {
        let row = self
            .wait(self.c.query_opt(
                "SELECT id, name, created_at FROM owners WHERE id = $1",
                &[&id],
            ))
            .map_err(pg_error)?;
        Ok(row.as_ref().map(owner))
    }

    fn owners(&self) -> Result<Vec<Owner>> {
        let rows = self
            .wait(
                self.c
                    .query("SELECT id, name, created_at FROM owners ORDER BY id", &[]),
            )
            .map_err(pg_error)?;
        Ok(rows.iter().map(owner).collect())
    }

    fn owner_named(&self, name: &str) -> Result<Option<Owner>> {
        let row = self
            .wait(self.c.query_opt(
                "SELECT id, name, created_at FROM owners WHERE lower(name) = lower($1)",
                &[&name],
            ))
            .map_err(pg_error)?;
        Ok(row.as_ref().map(owner))
    }

    /// A name taken (without case) is a conflict, also when another process adds the same name
    /// at the same moment.
    fn insert_owner(&self, name: &str, now: Timestamp) -> Result<Owner> {
        let row = self
            .wait(self.c.query_one(
                "INSERT INTO owners (name, created_at) VALUES ($1, $2) \
                 RETURNING id, name, created_at",
                &[&name, &now.as_second()],
            ))
            .map_err(|e| {
                if is_unique_violation(&e) {
                    Error::Conflict(format!("an owner named {name} already exists"))
                } else {
                    pg_error(e)
                }
            })?;
        Ok(owner(&row))
    }
}
