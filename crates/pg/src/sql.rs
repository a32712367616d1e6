//! Running statements: each prepared once per connection, its columns read as errors rather
//! than panics, its parameters built piece by piece; and the two kinds of transaction a piece
//! of work opens.

use deadpool_postgres::{GenericClient, Object, Transaction};
use linkdeck_domain::Result;
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::{IsolationLevel, Row};

use crate::error::pg_error;

/// A read-only transaction on `client` that sees one snapshot: a list's total and its page
/// agree even while others write.
pub async fn snapshot(client: &mut Object) -> Result<Transaction<'_>> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(pg_error)
}

/// Plans each statement after it, to the end of the transaction, for the values it is given
/// (`plan_cache_mode`). A statement prepared once per connection is otherwise planned once for
/// any values after its fifth run, and how many rows a term, a tag or a status leaves is what
/// decides where a list should start: planned blind, a term in 336 of a million URLs was
/// looked for by walking all million in clicks order.
pub async fn plan_for_values<C: GenericClient>(c: &C) -> Result<()> {
    c.batch_execute("SET LOCAL plan_cache_mode = force_custom_plan")
        .await
        .map_err(pg_error)
}

/// A write transaction on `client`.
pub async fn write(client: &mut Object) -> Result<Transaction<'_>> {
    client.transaction().await.map_err(pg_error)
}

/// The rows `sql` answers, its statement prepared once per connection.
pub async fn rows<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    c.query(&stmt, args).await.map_err(pg_error)
}

/// The row `sql` answers, if any.
pub async fn row<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<Option<Row>> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    c.query_opt(&stmt, args).await.map_err(pg_error)
}

/// The first column of the one row `sql` answers: a count, an id.
pub async fn value<C: GenericClient, T: for<'a> FromSql<'a>>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<T> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    let row = c.query_one(&stmt, args).await.map_err(pg_error)?;
    col(&row, 0)
}

/// Runs `sql`; how many rows it changed.
pub async fn execute<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<u64> {
    let stmt = c.prepare_cached(sql).await.map_err(pg_error)?;
    c.execute(&stmt, args).await.map_err(pg_error)
}

/// A stored count as the unsigned number it is.
pub fn count(n: i64) -> u64 {
    n.max(0) as u64
}

/// Column `i` of `row`; a column of an unexpected type is an error, not a panic.
pub fn col<'a, T: FromSql<'a>>(row: &'a Row, i: usize) -> Result<T> {
    row.try_get(i).map_err(pg_error)
}

/// The parameters of a statement built piece by piece: each [`Args::push`] answers the
/// placeholder (`$n`) that names the value, so the SQL and its values cannot drift apart.
#[derive(Default)]
pub struct Args {
    values: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Args {
    pub fn push(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.values.push(Box::new(value));
        format!("${}", self.values.len())
    }

    /// Like [`Args::push`], for a value already boxed (its type chosen at run time).
    pub fn push_boxed(&mut self, value: Box<dyn ToSql + Sync + Send>) -> String {
        self.values.push(value);
        format!("${}", self.values.len())
    }

    /// The values, as the client's query methods take them.
    pub fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

/// Each row `sql` answers, as `read` reads it.
pub async fn all<C: GenericClient, T>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
    read: impl FnMut(&Row) -> Result<T>,
) -> Result<Vec<T>> {
    rows(c, sql, args).await?.iter().map(read).collect()
}

/// The row `sql` answers, if any, as `read` reads it.
pub async fn one<C: GenericClient, T>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
    read: impl FnOnce(&Row) -> Result<T>,
) -> Result<Option<T>> {
    row(c, sql, args).await?.as_ref().map(read).transpose()
}

/// Whether `sql` answers a row.
pub async fn exists<C: GenericClient>(
    c: &C,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<bool> {
    Ok(row(c, sql, args).await?.is_some())
}

/// A page of a list, as `read` reads the rows `page` answers, and how many items the list
/// holds, as `total` counts them; both in the same transaction, so they agree in a snapshot.
pub async fn page<C: GenericClient, T>(
    c: &C,
    total: (&str, &[&(dyn ToSql + Sync)]),
    page: (&str, &[&(dyn ToSql + Sync)]),
    read: impl FnMut(&Row) -> Result<T>,
) -> Result<(Vec<T>, u64)> {
    let n: i64 = value(c, total.0, total.1).await?;
    Ok((all(c, page.0, page.1, read).await?, count(n)))
}

/// A row as the contract's record readers take it ([`linkdeck_store::rows`]): an integer
/// column of any width reads as an `i64`.
pub struct Cols<'a>(pub &'a Row);

impl Cols<'_> {
    fn width(&self, i: usize) -> Option<&Type> {
        self.0.columns().get(i).map(|c| c.type_())
    }
}

impl linkdeck_store::rows::Cells for Cols<'_> {
    type Error = linkdeck_domain::Error;
    fn int(&self, i: usize) -> Result<i64> {
        match self.width(i) {
            Some(&Type::INT2) => col::<i16>(self.0, i).map(i64::from),
            Some(&Type::INT4) => col::<i32>(self.0, i).map(i64::from),
            _ => col(self.0, i),
        }
    }
    fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.width(i) {
            Some(&Type::INT2) => Ok(col::<Option<i16>>(self.0, i)?.map(i64::from)),
            Some(&Type::INT4) => Ok(col::<Option<i32>>(self.0, i)?.map(i64::from)),
            _ => col(self.0, i),
        }
    }
    fn text(&self, i: usize) -> Result<String> {
        col(self.0, i)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        col(self.0, i)
    }
    fn flag(&self, i: usize) -> Result<bool> {
        col(self.0, i)
    }
}
