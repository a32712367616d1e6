//! The SQLite end of a whole-database copy (see the contract's `copy`). Both ends run on a
//! blocking thread and talk to the other end over a channel of batches.

use rusqlite::Connection;
use tokio::sync::mpsc;

use crate as store;
use crate::db::Db;
use crate::error::db_error;
use linkdeck_domain::{Error, Id, Result};
use linkdeck_store::copy::{Batch, CHUNK, Cell, Kind, Moved, RECOUNT, Row, TABLES};

/// The rows of each table, counted in one snapshot.
pub fn counts(conn: &Connection) -> Result<Vec<u64>> {
    let tx = conn.unchecked_transaction().map_err(db_error)?;
    TABLES
        .iter()
        .map(|t| {
            tx.query_row(&format!("SELECT count(*) FROM {}", t.name), [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(db_error)
        })
        .collect()
}

/// The highest link id ever given out: stored, trashed, or deleted (migration 7's mark).
pub fn id_mark(conn: &Connection) -> Result<Id> {
    conn.query_row(
        "SELECT max(ifnull((SELECT max(id) FROM links), 0), \
                    ifnull((SELECT max(id) FROM trash_links), 0), \
                    ifnull((SELECT deleted_high FROM link_ids), 0))",
        [],
        |r| r.get(0),
    )
    .map_err(db_error)
}

/// Sends every table, in one read snapshot, then [`Batch::Done`]. Stops quietly when the
/// writer has gone (it failed, and says why).
pub fn read(db: &Db, out: mpsc::Sender<Batch>) -> Result<()> {
    db.read_blocking(|conn| {
        let tx = conn.unchecked_transaction().map_err(db_error)?;
        for (index, table) in TABLES.iter().enumerate() {
            if out.blocking_send(Batch::Start(index)).is_err() {
                return Ok(());
            }
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {} FROM {} ORDER BY {}",
                    table.column_list(),
                    table.name,
                    table.order
                ))
                .map_err(db_error)?;
            let mut rows = stmt.query([]).map_err(db_error)?;
            let mut chunk = Vec::with_capacity(CHUNK);
            while let Some(row) = rows.next().map_err(db_error)? {
                chunk.push(cells(row, table.columns).map_err(db_error)?);
                if chunk.len() == CHUNK
                    && out
                        .blocking_send(Batch::Rows(std::mem::take(&mut chunk)))
                        .is_err()
                {
                    return Ok(());
                }
            }
            if !chunk.is_empty() && out.blocking_send(Batch::Rows(chunk)).is_err() {
                return Ok(());
            }
        }
        let _ = out.blocking_send(Batch::Done);
        Ok(())
    })
}

fn cells(row: &rusqlite::Row<'_>, columns: &[(&str, Kind)]) -> rusqlite::Result<Row> {
    columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| {
            Ok(match kind {
                Kind::Text => row
                    .get::<_, Option<String>>(i)?
                    .map_or(Cell::Null, Cell::Text),
                Kind::Bytes => row
                    .get::<_, Option<Vec<u8>>>(i)?
                    .map_or(Cell::Null, Cell::Bytes),
                Kind::Big | Kind::Int | Kind::Small | Kind::Bool => {
                    row.get::<_, Option<i64>>(i)?.map_or(Cell::Null, Cell::Int)
                }
            })
        })
        .collect()
}

/// Writes what arrives in one transaction, committed only once [`Batch::Done`] has come; the
/// links' ids are kept above `mark`. Returns the rows written per table.
pub fn write(db: &Db, mut input: mpsc::Receiver<Batch>, mark: Id, moved: &Moved) -> Result<()> {
    db.write_large_blocking(|tx| {
        store::search::bulk_begin(tx)?;
        let mut insert = None;
        loop {
            match input.blocking_recv() {
                Some(Batch::Start(index)) => {
                    let table = &TABLES[index];
                    let marks = vec!["?"; table.columns.len()].join(", ");
                    insert = Some(format!(
                        "INSERT INTO {} ({}) VALUES ({marks})",
                        table.name,
                        table.column_list()
                    ));
                }
                Some(Batch::Rows(rows)) => {
                    let sql = insert.as_deref().ok_or_else(|| {
                        Error::Unavailable("copy: rows arrived before their table".into())
                    })?;
                    let mut stmt = tx.prepare_cached(sql).map_err(db_error)?;
                    for row in &rows {
                        stmt.execute(rusqlite::params_from_iter(row.iter().map(SqlCell)))
                            .map_err(db_error)?;
                    }
                    moved(rows.len() as u64);
                }
                Some(Batch::Done) => break,
                // The reader failed; its error is the one reported.
                None => return Err(Error::Unavailable("copy: the source stopped".into())),
            }
        }
        tx.execute_batch(RECOUNT).map_err(db_error)?;
        tx.execute(
            "UPDATE link_ids SET deleted_high = max(deleted_high, ?1)",
            [mark],
        )
        .map_err(db_error)?;
        store::search::bulk_end(tx)?;
        store::search::rebuild(tx)
    })
}

/// A copied value as SQLite stores it.
struct SqlCell<'a>(&'a Cell);

impl rusqlite::ToSql for SqlCell<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Cell::Null => ValueRef::Null,
            Cell::Int(i) => ValueRef::Integer(*i),
            Cell::Bool(b) => ValueRef::Integer(i64::from(*b)),
            Cell::Text(s) => ValueRef::Text(s.as_bytes()),
            Cell::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}
