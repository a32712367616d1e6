//! Running statements on a connection: each prepared once per connection (`prepare_cached`),
//! its failure said as the store's error; the same few shapes as the PostgreSQL store's
//! `sql.rs`. Above `error.rs`, below every area file.

use linkdeck_domain::Result;
use rusqlite::{Connection, OptionalExtension, Params, Row};

use crate::error::db_error;

pub trait Statements {
    /// Runs `sql`; how many rows it changed.
    fn run(&self, sql: &str, params: impl Params) -> Result<usize>;

    /// Whether `sql` answers a row.
    fn exists(&self, sql: &str, params: impl Params) -> Result<bool>;

    /// The one row `sql` answers, as `read` reads it.
    fn row<T>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<T>;

    /// The row `sql` answers, if any, as `read` reads it.
    fn one<T>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>>;

    /// Each row `sql` answers, as `read` reads it.
    fn all<T, B: FromIterator<T>>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<B>;

    /// Hands `f` each row `sql` answers, in order, where it stands (nothing copied out first).
    fn each(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<()>;

    /// The number a `SELECT count(*)` statement answers.
    fn count(&self, sql: &str, params: impl Params) -> Result<u64> {
        let n: i64 = self.row(sql, params, |r| r.get(0))?;
        Ok(n as u64)
    }
}

impl Statements for Connection {
    fn each(
        &self,
        sql: &str,
        params: impl Params,
        mut f: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.prepare_cached(sql).map_err(db_error)?;
        let mut rows = stmt.query(params).map_err(db_error)?;
        while let Some(row) = rows.next().map_err(db_error)? {
            f(row)?;
        }
        Ok(())
    }

    fn run(&self, sql: &str, params: impl Params) -> Result<usize> {
        self.prepare_cached(sql)
            .map_err(db_error)?
            .execute(params)
            .map_err(db_error)
    }

    fn exists(&self, sql: &str, params: impl Params) -> Result<bool> {
        self.prepare_cached(sql)
            .map_err(db_error)?
            .exists(params)
            .map_err(db_error)
    }

    fn row<T>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        self.prepare_cached(sql)
            .map_err(db_error)?
            .query_row(params, read)
            .map_err(db_error)
    }

    fn one<T>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        self.prepare_cached(sql)
            .map_err(db_error)?
            .query_row(params, read)
            .optional()
            .map_err(db_error)
    }

    fn all<T, B: FromIterator<T>>(
        &self,
        sql: &str,
        params: impl Params,
        read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<B> {
        self.prepare_cached(sql)
            .map_err(db_error)?
            .query_map(params, read)
            .map_err(db_error)?
            .collect::<rusqlite::Result<B>>()
            .map_err(db_error)
    }
}

/// A row as the contract's record readers take it ([`linkdeck_store::rows`]).
pub struct Cols<'a, 'r>(pub &'a rusqlite::Row<'r>);

impl linkdeck_store::rows::Cells for Cols<'_, '_> {
    type Error = rusqlite::Error;
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.0.get(i)
    }
    fn opt_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.0.get(i)
    }
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.0.get(i)
    }
    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.0.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.0.get(i)
    }
}
