//! Orphan visits on PostgreSQL (see the contract's `orphans`): a batch's rows added in the
//! click writer's transaction, after its traffic rows, and read back summed over the hosts
//! asked. Rows are written in key order (`COLLATE "C"`, as the batch sorts them), so two
//! servers' batches lock them in one order.

use std::collections::{HashMap, HashSet};

use deadpool_postgres::GenericClient;

use crate::sql::{col, execute, rows};
use crate::tx::PgTx;
use linkdeck_domain::{Id, Result};
use linkdeck_store::Orphans;
use linkdeck_store::orphans::{OrphanBatch, OrphanDim, OrphanKey, OrphanRow, settle};

/// Adds a batch's orphan visits, each group kept within its bound.
pub async fn write(c: &impl GenericClient, batch: &OrphanBatch) -> Result<()> {
    if batch.rows().is_empty() {
        return Ok(());
    }
    let keys: Vec<&OrphanKey> = batch.rows().keys().collect();
    let hosts: Vec<i64> = keys.iter().map(|k| k.0).collect();
    let days: Vec<i64> = keys.iter().map(|k| k.1).collect();
    let dims: Vec<i16> = keys.iter().map(|k| k.2.code() as i16).collect();
    let values: Vec<&str> = keys.iter().map(|k| k.3.as_str()).collect();
    let held = rows(
        c,
        "SELECT o.host_id, o.day, o.dim, o.value FROM orphan_traffic o
         JOIN unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::text[]) AS k(h, d, m, v)
           ON o.host_id = k.h AND o.day = k.d AND o.dim = k.m AND o.value = k.v",
        &[&hosts, &days, &dims, &values],
    )
    .await?;
    let mut stored: HashSet<OrphanKey> = HashSet::new();
    for row in held {
        let dim: i16 = col(&row, 2)?;
        if let Some(dim) = OrphanDim::from_code(i64::from(dim)) {
            stored.insert((col(&row, 0)?, col(&row, 1)?, dim, col(&row, 3)?));
        }
    }
    let groups = batch.groups();
    let g_hosts: Vec<i64> = groups.iter().map(|g| g.0).collect();
    let g_days: Vec<i64> = groups.iter().map(|g| g.1).collect();
    let g_dims: Vec<i16> = groups.iter().map(|g| g.2.code() as i16).collect();
    let counted = rows(
        c,
        "SELECT k.h, k.d, k.m,
                (SELECT count(*) FROM orphan_traffic o
                 WHERE o.host_id = k.h AND o.day = k.d AND o.dim = k.m)
         FROM unnest($1::bigint[], $2::bigint[], $3::smallint[]) AS k(h, d, m)",
        &[&g_hosts, &g_days, &g_dims],
    )
    .await?;
    let mut counts = HashMap::new();
    for row in counted {
        let dim: i16 = col(&row, 2)?;
        let n: i64 = col(&row, 3)?;
        if let Some(dim) = OrphanDim::from_code(i64::from(dim)) {
            counts.insert((col(&row, 0)?, col(&row, 1)?, dim), n.max(0) as u64);
        }
    }
    let settled = settle(batch, &stored, &counts);
    let hosts: Vec<i64> = settled.keys().map(|k| k.0).collect();
    let days: Vec<i64> = settled.keys().map(|k| k.1).collect();
    let dims: Vec<i16> = settled.keys().map(|k| k.2.code() as i16).collect();
    let values: Vec<&str> = settled.keys().map(|k| k.3.as_str()).collect();
    let visits: Vec<i64> = settled.values().map(|n| *n as i64).collect();
    execute(
        c,
        "INSERT INTO orphan_traffic AS o (host_id, day, dim, value, visits)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::text[],
                              $5::bigint[]) AS k(h, d, m, v, n)
         ORDER BY h, d, m, v COLLATE \"C\"
         ON CONFLICT (host_id, day, dim, value) DO UPDATE SET visits = o.visits + excluded.visits",
        &[&hosts, &days, &dims, &values, &visits],
    )
    .await?;
    Ok(())
}

impl<C: GenericClient + Sync> Orphans for PgTx<'_, C> {
    fn prune_orphans(&self, day: i64) -> Result<u64> {
        self.wait(execute(
            self.c,
            "DELETE FROM orphan_traffic WHERE day < $1",
            &[&day],
        ))
    }

    fn orphan_rows(&self, hosts: &[Id], first: i64, last: i64) -> Result<Vec<OrphanRow>> {
        let hosts: Vec<i64> = hosts.to_vec();
        let found = self.wait(rows(
            self.c,
            "SELECT day, dim, value, sum(visits)::bigint FROM orphan_traffic
             WHERE host_id = ANY($1) AND day BETWEEN $2 AND $3
             GROUP BY day, dim, value",
            &[&hosts, &first, &last],
        ))?;
        let mut out = Vec::with_capacity(found.len());
        for row in found {
            let dim: i16 = col(&row, 1)?;
            let visits: i64 = col(&row, 3)?;
            if let Some(dim) = OrphanDim::from_code(i64::from(dim)) {
                out.push(OrphanRow {
                    day: col(&row, 0)?,
                    dim,
                    value: col(&row, 2)?,
                    visits: visits.max(0) as u64,
                });
            }
        }
        Ok(out)
    }
}
