//! The PostgreSQL end of a whole-database copy: `COPY … (FORMAT binary)` both ways, the fastest
//! way rows go in and out of PostgreSQL.

use std::pin::Pin;

use bytes::BytesMut;
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use crate::error::pg_error;
use crate::pool::Pg;
use crate::sql::{all, col, execute, snapshot, value};
use linkdeck_domain::{Error, Id, Result};
use linkdeck_store::copy::{Batch, CHUNK, Cell, Kind, Moved, RECOUNT, Row, TABLES, Table};

fn types(table: &Table) -> Vec<Type> {
    table.columns.iter().map(|(_, k)| pg_type(*k)).collect()
}

/// The rows of each table, counted in one snapshot.
pub async fn counts(pg: &Pg) -> Result<Vec<u64>> {
    let mut client = pg.client().await?;
    let tx = snapshot(&mut client).await?;
    let mut counts = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let n: i64 = value(&tx, &format!("SELECT count(*) FROM {}", table.name), &[]).await?;
        counts.push(n as u64);
    }
    Ok(counts)
}

/// The highest link id ever given out: stored, trashed, or taken from the sequence and deleted.
pub async fn id_mark(pg: &Pg) -> Result<Id> {
    let client = pg.client().await?;
    value(
        &client,
        "SELECT GREATEST(coalesce((SELECT max(id) FROM links), 0),
                         coalesce((SELECT max(id) FROM trash_links), 0),
                         coalesce(pg_sequence_last_value(
                             pg_get_serial_sequence('links', 'id')::regclass), 0))",
        &[],
    )
    .await
}

/// Sends every table, in one read snapshot, then [`Batch::Done`].
pub async fn read(pg: &Pg, out: mpsc::Sender<Batch>) -> Result<()> {
    // Limited links' clicks are exact in their quota rows; the copy carries them in the links.
    crate::quota::settle_all(pg).await?;
    let mut client = pg.client().await?;
    let tx = snapshot(&mut client).await?;
    for (index, table) in TABLES.iter().enumerate() {
        if out.send(Batch::Start(index)).await.is_err() {
            return Ok(());
        }
        let sql = format!(
            "COPY (SELECT {} FROM {} ORDER BY {}) TO STDOUT (FORMAT binary)",
            table.column_list(),
            table.name,
            table.order
        );
        let stream = tx.copy_out(&sql).await.map_err(pg_error)?;
        let rows = BinaryCopyOutStream::new(stream, &types(table));
        let mut rows = std::pin::pin!(rows);
        let mut chunk = Vec::with_capacity(CHUNK);
        while let Some(row) = rows.next().await {
            let row = row.map_err(pg_error)?;
            chunk.push(cells(&row, table.columns).map_err(pg_error)?);
            if chunk.len() == CHUNK
                && out
                    .send(Batch::Rows(std::mem::take(&mut chunk)))
                    .await
                    .is_err()
            {
                return Ok(());
            }
        }
        if !chunk.is_empty() && out.send(Batch::Rows(chunk)).await.is_err() {
            return Ok(());
        }
    }
    let _ = out.send(Batch::Done).await;
    Ok(())
}

fn cells(
    row: &tokio_postgres::binary_copy::BinaryCopyOutRow,
    columns: &[(&str, Kind)],
) -> std::result::Result<Row, tokio_postgres::Error> {
    columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| {
            Ok(match kind {
                Kind::Big => row.try_get::<Option<i64>>(i)?.map_or(Cell::Null, Cell::Int),
                Kind::Int => row
                    .try_get::<Option<i32>>(i)?
                    .map_or(Cell::Null, |v| Cell::Int(v.into())),
                Kind::Small => row
                    .try_get::<Option<i16>>(i)?
                    .map_or(Cell::Null, |v| Cell::Int(v.into())),
                Kind::Bool => row
                    .try_get::<Option<bool>>(i)?
                    .map_or(Cell::Null, Cell::Bool),
                Kind::Text => row
                    .try_get::<Option<String>>(i)?
                    .map_or(Cell::Null, Cell::Text),
                Kind::Bytes => row
                    .try_get::<Option<Vec<u8>>>(i)?
                    .map_or(Cell::Null, Cell::Bytes),
            })
        })
        .collect()
}

/// Writes what arrives in one transaction, committed only once [`Batch::Done`] has come; every
/// identity sequence is moved past the copied ids, the links' past `mark`.
pub async fn write(
    pg: &Pg,
    mut input: mpsc::Receiver<Batch>,
    mark: Id,
    moved: &Moved,
) -> Result<()> {
    let mut client = pg.client().await?;
    let tx = client.transaction().await.map_err(pg_error)?;
    // The inverted indexes (the trigrams', the tags') are built once from the copied rows
    // rather than row by row, which is several times faster; they are read from the schema,
    // not written out a second time.
    let inverted: Vec<(String, String)> = all(
        &tx,
        "SELECT indexname, indexdef FROM pg_indexes
         WHERE schemaname = current_schema() AND indexdef LIKE '% USING gin %'",
        &[],
        |r| Ok((col(r, 0)?, col(r, 1)?)),
    )
    .await?;
    for (name, _) in &inverted {
        tx.batch_execute(&format!("DROP INDEX \"{name}\""))
            .await
            .map_err(pg_error)?;
    }
    // The link counters' row triggers would update the owner's row once per copied link (a
    // million updates of one row for a million links); the counters are recounted at the end
    // instead. The target is empty, so holding its links table this long blocks nobody.
    tx.batch_execute("ALTER TABLE links DISABLE TRIGGER USER")
        .await
        .map_err(pg_error)?;
    let mut writer: Option<Pin<Box<BinaryCopyInWriter>>> = None;
    loop {
        match input.recv().await {
            Some(Batch::Start(index)) => {
                if let Some(w) = writer.take() {
                    finish(w).await?;
                }
                let table = &TABLES[index];
                let sink = tx
                    .copy_in(&format!(
                        "COPY {} ({}) FROM STDIN (FORMAT binary)",
                        table.name,
                        table.column_list()
                    ))
                    .await
                    .map_err(pg_error)?;
                writer = Some(Box::pin(BinaryCopyInWriter::new(sink, &types(table))));
            }
            Some(Batch::Rows(rows)) => {
                let w = writer.as_mut().ok_or_else(|| {
                    Error::Unavailable("copy: rows arrived before their table".into())
                })?;
                for row in &rows {
                    let cells: Vec<PgCell<'_>> = row.iter().map(PgCell).collect();
                    let values: Vec<&(dyn ToSql + Sync)> =
                        cells.iter().map(|c| c as &(dyn ToSql + Sync)).collect();
                    w.as_mut().write(&values).await.map_err(pg_error)?;
                }
                moved(rows.len() as u64);
            }
            Some(Batch::Done) => break,
            None => return Err(Error::Unavailable("copy: the source stopped".into())),
        }
    }
    if let Some(w) = writer.take() {
        finish(w).await?;
    }
    for (_, definition) in &inverted {
        tx.batch_execute(definition).await.map_err(pg_error)?;
    }
    tx.batch_execute("ALTER TABLE links ENABLE TRIGGER USER")
        .await
        .map_err(pg_error)?;
    tx.batch_execute(RECOUNT).await.map_err(pg_error)?;
    // The quota rows of limited and rotating links and the tag index, which the triggers set
    // aside make.
    tx.batch_execute(crate::quota::FILL)
        .await
        .map_err(pg_error)?;
    tx.batch_execute(crate::schema::TAGS_FILL)
        .await
        .map_err(pg_error)?;
    for table in TABLES.iter().filter(|t| t.identity) {
        // `setval(…, n, false)` makes n the next value: one above every copied id (and, for
        // links, above every id the source ever gave out).
        let floor = if table.name == "links" { mark } else { 0 };
        execute(
            &tx,
            &format!(
                "SELECT setval(pg_get_serial_sequence('{0}', 'id'),
                               GREATEST(coalesce((SELECT max(id) FROM {0}), 0), $1) + 1, false)",
                table.name
            ),
            &[&floor],
        )
        .await?;
    }
    tx.commit().await.map_err(pg_error)?;
    // The planner's statistics of the copied tables: without them, until autovacuum's next
    // round, it takes a million links for a few hundred and a tag filter over a search can be
    // planned a hundred times slower than with them.
    client.batch_execute("ANALYZE").await.map_err(pg_error)
}

async fn finish(mut writer: Pin<Box<BinaryCopyInWriter>>) -> Result<()> {
    writer.as_mut().finish().await.map_err(pg_error).map(|_| ())
}

/// The type a column of `kind` has in PostgreSQL: three widths of integer and real booleans,
/// where SQLite has one 64-bit integer.
fn pg_type(kind: Kind) -> Type {
    match kind {
        Kind::Big => Type::INT8,
        Kind::Int => Type::INT4,
        Kind::Small => Type::INT2,
        Kind::Bool => Type::BOOL,
        Kind::Text => Type::TEXT,
        Kind::Bytes => Type::BYTEA,
    }
}

/// A copied value as PostgreSQL takes it, in the width its column has.
#[derive(Debug)]
struct PgCell<'a>(&'a Cell);

impl ToSql for PgCell<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Cell::Null => Ok(IsNull::Yes),
            Cell::Int(i) if *ty == Type::BOOL => (*i != 0).to_sql(ty, out),
            Cell::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Cell::Int(i) if *ty == Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
            Cell::Int(i) => i.to_sql(ty, out),
            Cell::Bool(b) => b.to_sql(ty, out),
            Cell::Text(s) => s.to_sql(ty, out),
            Cell::Bytes(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}
