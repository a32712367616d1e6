//! Visit values (a country code, a referring host, …) stored once each and referred to by
//! number, so a rollup holds small integers and the same host is never written twice. Values are
//! never deleted, so a number means the same value for as long as the database lives, in every
//! process: each process may cache them.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::day::{NONE, OTHER};
use crate::backend::local::store::db_error;
use crate::domain::{Dimension, Result};

/// Values cached per process before the cache starts over.
const CACHE_MAX: usize = 65_536;

/// Turns values into codes for one writer, remembering what it has looked up.
#[derive(Debug, Default)]
pub struct Interner {
    /// Per dimension: value → code.
    cache: [HashMap<Box<str>, u64>; 5],
    cached: usize,
}

impl Interner {
    /// The code of `value` in `dim` when it needs no lookup: [`NONE`] for `None`, [`OTHER`]
    /// for the bounded label "other", or a value this interner has looked up before.
    pub fn known(&self, dim: Dimension, value: Option<&str>) -> Option<u64> {
        let Some(value) = value else {
            return Some(NONE);
        };
        if value == crate::domain::OTHER {
            return Some(OTHER);
        }
        self.cache[dim.index()].get(value).copied()
    }

    /// Remembers that `value` in `dim` is stored as row `id`; returns its code.
    pub fn remember(&mut self, dim: Dimension, value: &str, id: i64) -> u64 {
        if self.cached >= CACHE_MAX {
            self.cache.iter_mut().for_each(HashMap::clear);
            self.cached = 0;
        }
        let code = code_of_row(id);
        self.cache[dim.index()].insert(Box::from(value), code);
        self.cached += 1;
        code
    }

    /// The code of `value` in `dim`, storing the value first if it is new. `None` is
    /// [`NONE`]; the bounded label "other" is [`OTHER`].
    pub fn code(&mut self, conn: &Connection, dim: Dimension, value: Option<&str>) -> Result<u64> {
        if let Some(code) = self.known(dim, value) {
            return Ok(code);
        }
        let Some(value) = value else {
            return Ok(NONE);
        };
        let dim_no = dim.index() as i64;
        let id: Option<i64> = conn
            .prepare_cached("SELECT id FROM traffic_values WHERE dimension = ?1 AND value = ?2")
            .map_err(db_error)?
            .query_row(params![dim_no, value], |r| r.get(0))
            .optional()
            .map_err(db_error)?;
        let id = match id {
            Some(id) => id,
            None => conn
                .prepare_cached(
                    "INSERT INTO traffic_values (dimension, value) VALUES (?1, ?2) RETURNING id",
                )
                .map_err(db_error)?
                .query_row(params![dim_no, value], |r| r.get(0))
                .map_err(db_error)?,
        };
        Ok(self.remember(dim, value, id))
    }
}

/// The code of the value stored as row `id` of `traffic_values` (codes 0 and 1 are taken).
pub fn code_of_row(id: i64) -> u64 {
    id as u64 + 2
}

/// The row of `traffic_values` a stored value's code names.
pub fn row_of_code(code: u64) -> i64 {
    code as i64 - 2
}

/// What a code stands for: `None` for [`NONE`], the label "other" for [`OTHER`], the stored
/// value otherwise (a code the table does not know reads as "other").
pub fn names(conn: &Connection, codes: &[u64]) -> Result<HashMap<u64, Option<String>>> {
    let mut out = HashMap::with_capacity(codes.len());
    let mut stmt = conn
        .prepare_cached("SELECT value FROM traffic_values WHERE id = ?1")
        .map_err(db_error)?;
    for &code in codes {
        let name = match code {
            NONE => None,
            OTHER => Some(crate::domain::OTHER.to_owned()),
            code => Some(
                stmt.query_row([row_of_code(code)], |r| r.get::<_, String>(0))
                    .optional()
                    .map_err(db_error)?
                    .unwrap_or_else(|| crate::domain::OTHER.to_owned()),
            ),
        };
        out.insert(code, name);
    }
    Ok(out)
}
