//! Orphan visits on SQLite (see the contract's `orphans`): a batch's rows added in the click
//! writer's transaction, and read back summed over the hosts asked.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::db_error;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result};
use linkdeck_store::Orphans;
use linkdeck_store::orphans::{OrphanBatch, OrphanDim, OrphanKey, OrphanRow, settle};

/// Adds a batch's orphan visits, each group kept within its bound.
pub fn write(conn: &Connection, batch: &OrphanBatch) -> Result<()> {
    if batch.rows().is_empty() {
        return Ok(());
    }
    let mut held = conn
        .prepare_cached(
            "SELECT 1 FROM orphan_traffic
             WHERE host_id = ?1 AND day = ?2 AND dim = ?3 AND value = ?4",
        )
        .map_err(db_error)?;
    let mut stored: HashSet<OrphanKey> = HashSet::new();
    for key in batch.rows().keys() {
        let found: Option<i64> = held
            .query_row(params![key.0, key.1, key.2.code(), key.3], |r| r.get(0))
            .optional()
            .map_err(db_error)?;
        if found.is_some() {
            stored.insert(key.clone());
        }
    }
    let mut count = conn
        .prepare_cached(
            "SELECT count(*) FROM orphan_traffic WHERE host_id = ?1 AND day = ?2 AND dim = ?3",
        )
        .map_err(db_error)?;
    let mut counts = HashMap::new();
    for group in batch.groups() {
        let n: i64 = count
            .query_row(params![group.0, group.1, group.2.code()], |r| r.get(0))
            .map_err(db_error)?;
        counts.insert(group, n.max(0) as u64);
    }
    let mut add = conn
        .prepare_cached(
            "INSERT INTO orphan_traffic (host_id, day, dim, value, visits)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (host_id, day, dim, value) DO UPDATE SET visits = visits + excluded.visits",
        )
        .map_err(db_error)?;
    for (key, n) in settle(batch, &stored, &counts) {
        add.execute(params![key.0, key.1, key.2.code(), key.3, n as i64])
            .map_err(db_error)?;
    }
    Ok(())
}

impl Orphans for SqliteTx<'_> {
    fn prune_orphans(&self, day: i64) -> Result<u64> {
        let n = self
            .conn
            .execute("DELETE FROM orphan_traffic WHERE day < ?1", [day])
            .map_err(db_error)?;
        Ok(n as u64)
    }

    fn orphan_rows(&self, hosts: &[Id], first: i64, last: i64) -> Result<Vec<OrphanRow>> {
        // The ids as a JSON array, one parameter however many there are.
        let ids: Vec<String> = hosts.iter().map(Id::to_string).collect();
        let hosts = format!("[{}]", ids.join(","));
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT day, dim, value, sum(visits) FROM orphan_traffic
                 WHERE host_id IN (SELECT value FROM json_each(?1)) AND day BETWEEN ?2 AND ?3
                 GROUP BY day, dim, value",
            )
            .map_err(db_error)?;
        let rows = stmt
            .query_map(params![hosts, first, last], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .map_err(db_error)?;
        let mut out = Vec::new();
        for row in rows {
            let (day, dim, value, visits) = row.map_err(db_error)?;
            if let Some(dim) = OrphanDim::from_code(dim) {
                out.push(OrphanRow {
                    day,
                    dim,
                    value,
                    visits: visits.max(0) as u64,
                });
            }
        }
        Ok(out)
    }
}
