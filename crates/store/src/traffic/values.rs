//! Visit values (a country code, a referring host, …) stored once each and referred to by
//! number, so a rollup holds small integers and the same host is never written twice. Values are
//! never deleted, so a number means the same value for as long as the database lives, in every
//! process: each process may cache them. Each store keeps the values in its own table and looks
//! them up for an [`Interner`]; the codes and the cache are the same on both.

use std::collections::HashMap;

use linkdeck_domain::{DIMENSIONS, Dimension, Result};

use super::day::{NONE, OTHER};

/// Values cached per process before the cache starts over.
const CACHE_MAX: usize = 65_536;

/// Turns values into codes for one writer, remembering what it has looked up.
#[derive(Debug, Default)]
pub struct Interner {
    /// Per dimension: value → code.
    cache: [HashMap<Box<str>, u64>; DIMENSIONS],
    cached: usize,
}

impl Interner {
    /// The code of `value` in `dim` when it needs no lookup: [`NONE`] for `None`, [`OTHER`]
    /// for the bounded label "other", or a value this interner has looked up before.
    pub fn known(&self, dim: Dimension, value: Option<&str>) -> Option<u64> {
        let Some(value) = value else {
            return Some(NONE);
        };
        if value == linkdeck_domain::OTHER {
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
}

/// What each of `codes` stands for: `None` for [`NONE`], the label "other" for [`OTHER`], the
/// value `stored` finds for a code otherwise (a code the table does not know reads as "other").
pub fn names(
    codes: &[u64],
    mut stored: impl FnMut(u64) -> Result<Option<String>>,
) -> Result<HashMap<u64, Option<String>>> {
    let other = || linkdeck_domain::OTHER.to_owned();
    let mut name = |code| -> Result<Option<String>> {
        Ok(match code {
            NONE => None,
            OTHER => Some(other()),
            code => Some(stored(code)?.unwrap_or_else(other)),
        })
    };
    codes.iter().map(|&code| Ok((code, name(code)?))).collect()
}

/// The code of the value stored as row `id` of `traffic_values` (codes 0 and 1 are taken).
pub fn code_of_row(id: i64) -> u64 {
    id as u64 + 2
}

/// The row of `traffic_values` a stored value's code names.
pub fn row_of_code(code: u64) -> i64 {
    code as i64 - 2
}
