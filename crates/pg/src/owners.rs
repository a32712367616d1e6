//! SQL for owners on PostgreSQL.

use jiff::Timestamp;

use deadpool_postgres::GenericClient;
use linkdeck_store::{Owners, rows};

use crate::error::{is_unique_violation, pg_error};
use crate::sql::{Cols, all, one};
use crate::tx::PgTx;
use linkdeck_domain::{Error, Id, Owner, Result};

impl<C: GenericClient + Sync> Owners for PgTx<'_, C> {
    fn owner(&self, id: Id) -> Result<Option<Owner>> {
        self.wait(one(
            self.c,
            "SELECT id, name, created_at FROM owners WHERE id = $1",
            &[&id],
            |r| rows::owner(&Cols(r)),
        ))
    }

    fn owners(&self) -> Result<Vec<Owner>> {
        self.wait(all(
            self.c,
            "SELECT id, name, created_at FROM owners ORDER BY id",
            &[],
            |r| rows::owner(&Cols(r)),
        ))
    }

    fn owner_named(&self, name: &str) -> Result<Option<Owner>> {
        self.wait(one(
            self.c,
            "SELECT id, name, created_at FROM owners WHERE lower(name) = lower($1)",
            &[&name],
            |r| rows::owner(&Cols(r)),
        ))
    }

    /// A name taken (without case) is a conflict, also when another process adds the same name
    /// at the same moment.
    fn insert_owner(&self, name: &str, now: Timestamp) -> Result<Owner> {
        let row = self.wait(async {
            let stmt = self
                .c
                .prepare_cached(
                    "INSERT INTO owners (name, created_at) VALUES ($1, $2) \
                     RETURNING id, name, created_at",
                )
                .await?;
            self.c.query_one(&stmt, &[&name, &now.as_second()]).await
        });
        let row = row.map_err(|e| {
            if is_unique_violation(&e) {
                Error::Conflict(format!("an owner named {name} already exists"))
            } else {
                pg_error(e)
            }
        })?;
        rows::owner(&Cols(&row))
    }
}
