//! SQL for owners on PostgreSQL.

use jiff::Timestamp;
use tokio_postgres::Row;

use super::{Pg, is_unique_violation, pg_error};
use crate::domain::{Error, Owner, Result};

fn owner(row: &Row) -> Owner {
    Owner {
        id: row.get(0),
        name: row.get(1),
        created_at: Timestamp::from_second(row.get(2)).unwrap_or_default(),
    }
}

/// Adds an owner; a name taken (without case) is a conflict, also when another process adds
/// the same name at the same moment.
pub async fn add(pg: &Pg, name: &str, now: Timestamp) -> Result<Owner> {
    let client = pg.client().await?;
    let row = client
        .query_one(
            "INSERT INTO owners (name, created_at) VALUES ($1, $2) RETURNING id, name, created_at",
            &[&name, &now.as_second()],
        )
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                Error::Conflict(format!("an owner named {name} already exists"))
            } else {
                pg_error(e)
            }
        })?;
    Ok(owner(&row))
}

pub async fn list(pg: &Pg) -> Result<Vec<Owner>> {
    let client = pg.client().await?;
    let rows = client
        .query("SELECT id, name, created_at FROM owners ORDER BY id", &[])
        .await
        .map_err(pg_error)?;
    Ok(rows.iter().map(owner).collect())
}

pub async fn by_name(pg: &Pg, name: &str) -> Result<Option<Owner>> {
    let client = pg.client().await?;
    let row = client
        .query_opt(
            "SELECT id, name, created_at FROM owners WHERE lower(name) = lower($1)",
            &[&name],
        )
        .await
        .map_err(pg_error)?;
    Ok(row.as_ref().map(owner))
}
