//! Visit values (a country code, a referring host, …) stored once each and referred to by
//! number, so a rollup holds small integers and the same host is never written twice. Values are
//! never deleted, so a number means the same value for as long as the database lives, in every
//! process: each process may cache them. The codes and the cache are the contract's
//! (`linkdeck_store::traffic::values`); here is where SQLite keeps the values.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::day::NONE;
use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{Dimension, Result};
pub use linkdeck_store::traffic::values::Interner;
use linkdeck_store::traffic::values::{self, row_of_code};

/// Looking values up in the file for an [`Interner`].
pub trait Intern {
    /// The code of `value` in `dim`, storing the value first if it is new. `None` is
    /// [`NONE`]; the bounded label "other" is [`OTHER`](super::day::OTHER).
    fn code(&mut self, conn: &Connection, dim: Dimension, value: Option<&str>) -> Result<u64>;
}

impl Intern for Interner {
    fn code(&mut self, conn: &Connection, dim: Dimension, value: Option<&str>) -> Result<u64> {
        if let Some(code) = self.known(dim, value) {
            return Ok(code);
        }
        let Some(value) = value else {
            return Ok(NONE);
        };
        let dim_no = dim.index() as i64;
        let id: Option<i64> = conn.one(
            "SELECT id FROM traffic_values WHERE dimension = ?1 AND value = ?2",
            params![dim_no, value],
            |r| r.get(0),
        )?;
        let id = match id {
            Some(id) => id,
            None => conn.row(
                "INSERT INTO traffic_values (dimension, value) VALUES (?1, ?2) RETURNING id",
                params![dim_no, value],
                |r| r.get(0),
            )?,
        };
        Ok(self.remember(dim, value, id))
    }
}

/// What each code stands for (the contract's `values::names`), each stored value read by itself.
pub fn names(conn: &Connection, codes: &[u64]) -> Result<HashMap<u64, Option<String>>> {
    let mut stmt = conn
        .prepare_cached("SELECT value FROM traffic_values WHERE id = ?1")
        .map_err(db_error)?;
    values::names(codes, |code| {
        stmt.query_row([row_of_code(code)], |r| r.get(0))
            .optional()
            .map_err(db_error)
    })
}
