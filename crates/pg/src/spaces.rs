//! SQL for spaces on PostgreSQL. `link_count` is kept by the schema's triggers, never here.

use deadpool_postgres::GenericClient;

use jiff::Timestamp;
use linkdeck_store::Spaces;
use linkdeck_store::words::NAME_TAKEN;

use crate::error::{is_unique_violation, pg_error};
use crate::sql::{Cols, col, one, page};
use crate::tx::PgTx;
use linkdeck_domain::{Color, Error, Id, Result, Space};
use linkdeck_store::rows;
use linkdeck_store::sql::like_pattern;

const COLUMNS: &str = "id, owner_id, name, color, link_count, created_at, updated_at";

/// The field error of a name another writer took between the check and the write.
fn name_taken(e: tokio_postgres::Error) -> Error {
    if is_unique_violation(&e) {
        Error::field("name", NAME_TAKEN)
    } else {
        pg_error(e)
    }
}

impl<C: GenericClient + Sync> Spaces for PgTx<'_, C> {
    fn space(&self, owner: Id, id: Id) -> Result<Option<Space>> {
        self.wait(one(
            self.c,
            &format!("SELECT {COLUMNS} FROM spaces WHERE id = $1 AND owner_id = $2"),
            &[&id, &owner],
            |r| rows::space(&Cols(r), 0),
        ))
    }

    fn space_named(&self, owner: Id, name: &str, except: Option<Id>) -> Result<Option<Id>> {
        self.wait(one(
            self.c,
            "SELECT id FROM spaces WHERE owner_id = $1 AND lower(name) = lower($2) \
             AND id IS DISTINCT FROM $3",
            &[&owner, &name, &except],
            |r| col(r, 0),
        ))
    }

    fn insert_space(&self, owner: Id, name: &str, color: Color, now: Timestamp) -> Result<Id> {
        self.wait(async move {
            let row = self
                .c
                .query_one(
                    "INSERT INTO spaces (owner_id, name, color, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $4) RETURNING id",
                    &[&owner, &name, &i32::from(color.number()), &now.as_second()],
                )
                .await
                .map_err(name_taken)?;
            col(&row, 0)
        })
    }

    fn update_space(
        &self,
        owner: Id,
        id: Id,
        name: Option<&str>,
        color: Option<Color>,
        now: Timestamp,
    ) -> Result<bool> {
        self.wait(async move {
            let n = self
                .c
                .execute(
                    "UPDATE spaces SET name = coalesce($3, name), color = coalesce($4, color), \
                     updated_at = $5 WHERE id = $1 AND owner_id = $2",
                    &[
                        &id,
                        &owner,
                        &name,
                        &color.map(|c| i32::from(c.number())),
                        &now.as_second(),
                    ],
                )
                .await
                .map_err(name_taken)?;
            Ok(n > 0)
        })
    }

    fn spaces(
        &self,
        owner: Id,
        search: Option<&str>,
        newest_first: bool,
        offset: u64,
        limit: u32,
    ) -> Result<(Vec<Space>, u64)> {
        let pattern = search.map(like_pattern);
        let filter = "owner_id = $1 AND ($2::text IS NULL OR name ILIKE $2 ESCAPE '\\')";
        let order = if newest_first { "DESC" } else { "ASC" };
        self.wait(page(
            self.c,
            (
                &format!("SELECT count(*) FROM spaces WHERE {filter}"),
                &[&owner, &pattern],
            ),
            (
                &format!(
                    "SELECT {COLUMNS} FROM spaces WHERE {filter} \
                     ORDER BY id {order} LIMIT $3 OFFSET $4"
                ),
                &[&owner, &pattern, &i64::from(limit), &(offset as i64)],
            ),
            |r| rows::space(&Cols(r), 0),
        ))
    }
}
