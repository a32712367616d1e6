//! SQL for traffic rollups on PostgreSQL: the same rows as SQLite's (`store/traffic`), each a
//! [`DayTraffic`] blob, added to by every server's click writer at once, and read back for
//! statistics and exports.
//!
//! Adding to a row is read, merge, write: two writers must not both read the old blob. Each
//! change makes sure its rows exist (`INSERT … ON CONFLICT DO NOTHING`), then locks them with
//! `SELECT … FOR UPDATE` in key order, so a second writer waits for the first's commit and then
//! reads its result, and two writers taking overlapping rows always take them in the same order.

use std::collections::{BTreeMap, HashMap, HashSet};

use deadpool_postgres::GenericClient;
use tokio::runtime::Handle;
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, Row};

use super::{Pg, pg_error};
use crate::backend::local::store::traffic::values::{code_of_row, row_of_code};
use crate::backend::local::traffic::day::{NONE, OTHER};
use crate::backend::local::traffic::{DaySink, DayTraffic, LinkHome, Rollups, Scope, StoredDay};
use crate::backend::local::visits::RowDeltas;
use crate::domain::{Error, Id, Result, StatsScope};

/// One of the two rollup tables: its name and key columns, in key order.
struct Table {
    name: &'static str,
    key: [&'static str; 3],
}

const LINK_ROWS: Table = Table {
    name: "link_traffic",
    key: ["owner_id", "day", "link_id"],
};
const SCOPE_ROWS: Table = Table {
    name: "scope_traffic",
    key: ["scope", "scope_id", "day"],
};

/// Adds what a batch brings to every row it touches: the links' rows first, then the scopes'.
pub async fn add(client: &impl GenericClient, deltas: &RowDeltas) -> Result<()> {
    let links = deltas.links.iter().map(|(&(o, d, l), t)| ([o, d, l], t));
    merge(client, &LINK_ROWS, links.collect()).await?;
    let scopes = deltas
        .scopes
        .iter()
        .map(|(&(s, id, d), t)| ([s as i64, id, d], t));
    merge(client, &SCOPE_ROWS, scopes.collect()).await
}

/// Adds each delta to its row of `table`. `rows` are in key order.
async fn merge(
    client: &impl GenericClient,
    table: &Table,
    rows: Vec<([i64; 3], &DayTraffic)>,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let Table {
        name,
        key: [a, b, c],
    } = table;
    let column = |i: usize| -> Vec<i64> { rows.iter().map(|(k, _)| k[i]).collect() };
    let keys = [column(0), column(1), column(2)];
    let key_params: [&(dyn ToSql + Sync); 3] = [&keys[0], &keys[1], &keys[2]];
    // An empty row to lock where there is none yet; it is written below, in this transaction,
    // so nobody ever sees it empty.
    client
        .execute(
            &format!(
                "INSERT INTO {name} ({a}, {b}, {c}, clicks, data)
                 SELECT k.a, k.b, k.c, 0, ''::bytea
                 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS k(a, b, c)
                 ORDER BY 1, 2, 3
                 ON CONFLICT DO NOTHING"
            ),
            &key_params,
        )
        .await
        .map_err(pg_error)?;
    let stored = client
        .query(
            &format!(
                "SELECT t.{a}::bigint, t.{b}, t.{c}, t.data
                 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS k(a, b, c)
                 JOIN {name} t ON t.{a} = k.a AND t.{b} = k.b AND t.{c} = k.c
                 ORDER BY 1, 2, 3
                 FOR UPDATE OF t"
            ),
            &key_params,
        )
        .await
        .map_err(pg_error)?;
    let mut current: HashMap<[i64; 3], DayTraffic> = stored
        .iter()
        .map(|r| {
            let key = [r.get::<_, i64>(0), r.get(1), r.get(2)];
            (key, decode_or_empty(r.get(3), name))
        })
        .collect();
    let mut written: ([Vec<i64>; 3], Vec<i64>, Vec<Vec<u8>>) = Default::default();
    for (key, delta) in &rows {
        let Some(day) = current.get_mut(key) else {
            continue;
        };
        day.merge(delta);
        for (i, part) in key.iter().enumerate() {
            written.0[i].push(*part);
        }
        written.1.push(day.clicks() as i64);
        written.2.push(day.encode());
    }
    let [wa, wb, wc] = &written.0;
    client
        .execute(
            &format!(
                "UPDATE {name} t SET clicks = v.n, data = v.d
                 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],
                             $5::bytea[]) AS v(a, b, c, n, d)
                 WHERE t.{a} = v.a AND t.{b} = v.b AND t.{c} = v.c"
            ),
            &[wa, wb, wc, &written.1, &written.2],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

/// The stored day, or an empty one for a row just made (no bytes) or a damaged one (which
/// cannot be added to: starting it over keeps the clicks flowing).
fn decode_or_empty(data: &[u8], table: &str) -> DayTraffic {
    if data.is_empty() {
        return DayTraffic::default();
    }
    DayTraffic::decode(data).unwrap_or_else(|e| {
        tracing::warn!(table, error = %e, "damaged traffic row replaced");
        DayTraffic::default()
    })
}

/// Runs `f` over the rollups inside one read-only snapshot (`REPEATABLE READ`), on a blocking
/// thread: statistics are computed by synchronous code shared with SQLite, and each query it
/// asks is handed to the runtime from there.
pub async fn reading<T, F>(pg: &Pg, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&dyn Rollups) -> Result<T> + Send + 'static,
{
    let mut client = pg.client().await?;
    let runtime = Handle::current();
    tokio::task::spawn_blocking(move || {
        let tx = runtime
            .block_on(
                client
                    .build_transaction()
                    .isolation_level(IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start(),
            )
            .map_err(pg_error)?;
        let out = f(&Snapshot {
            runtime: &runtime,
            tx: &tx,
        });
        let done = runtime.block_on(tx.commit()).map_err(pg_error);
        let value = out?;
        done?;
        Ok(value)
    })
    .await
    .map_err(|e| Error::Unavailable(format!("reading traffic failed: {e}")))?
}

/// The rollups as one read-only transaction sees them.
struct Snapshot<'a> {
    runtime: &'a Handle,
    tx: &'a deadpool_postgres::Transaction<'a>,
}

impl Snapshot<'_> {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        self.runtime.block_on(async {
            let stmt = self.tx.prepare_cached(sql).await.map_err(pg_error)?;
            self.tx.query(&stmt, params).await.map_err(pg_error)
        })
    }

    /// The first and last day of any of `owner`'s links' own rows (which stay while a link is
    /// in the trash, unlike the owner's sums).
    fn link_range(&self, owner: Id) -> Result<Option<(i64, i64)>> {
        let rows = self.query(
            "SELECT min(day), max(day) FROM link_traffic WHERE owner_id = $1",
            &[&owner],
        )?;
        Ok(rows
            .first()
            .and_then(|r| r.get::<_, Option<i64>>(0).zip(r.get::<_, Option<i64>>(1))))
    }

    /// The days from `first` to `last` within the owner's links' days: a link's rows are
    /// found by one index probe per day (the key leads with the owner and the day).
    fn link_day_list(&self, owner: Id, first: i64, last: i64) -> Result<Vec<i64>> {
        let Some((lo, hi)) = self.link_range(owner)? else {
            return Ok(Vec::new());
        };
        Ok((first.max(lo)..=last.min(hi)).collect())
    }
}

fn clicks_of(row: &Row, i: usize) -> u64 {
    row.get::<_, i64>(i).max(0) as u64
}

/// The column of `links` that places a link in a space or a domain.
fn member_column(scope: Scope) -> &'static str {
    if scope == Scope::Space {
        "space_id"
    } else {
        "domain_id"
    }
}

impl Rollups for Snapshot<'_> {
    fn owns(&self, owner: Id, scope: StatsScope) -> Result<bool> {
        let (sql, id) = match scope {
            StatsScope::Link(id) => ("SELECT 1 FROM links WHERE id = $1 AND owner_id = $2", id),
            StatsScope::Space(id) => ("SELECT 1 FROM spaces WHERE id = $1 AND owner_id = $2", id),
            StatsScope::Domain(id) => ("SELECT 1 FROM domains WHERE id = $1 AND owner_id = $2", id),
            StatsScope::Account => return Ok(true),
        };
        Ok(!self.query(sql, &[&id, &owner])?.is_empty())
    }

    fn link_home(&self, id: Id) -> Result<Option<LinkHome>> {
        let rows = self.query(
            "SELECT owner_id, space_id, domain_id FROM links WHERE id = $1",
            &[&id],
        )?;
        Ok(rows.first().map(|r| LinkHome {
            owner: r.get(0),
            space: r.get(1),
            domain: r.get(2),
        }))
    }

    fn link_days(&self, owner: Id, link: Id, first: i64, last: i64, f: &mut DaySink) -> Result<()> {
        let days = self.link_day_list(owner, first, last)?;
        if days.is_empty() {
            return Ok(());
        }
        let rows = self.query(
            "SELECT day, clicks, data FROM link_traffic
             WHERE owner_id = $1 AND day = ANY($2) AND link_id = $3 ORDER BY day",
            &[&owner, &days, &link],
        )?;
        for r in &rows {
            f(StoredDay {
                day: r.get(0),
                clicks: clicks_of(r, 1),
                data: r.get(2),
            })?;
        }
        Ok(())
    }

    fn scope_days(
        &self,
        scope: Scope,
        id: Id,
        first: i64,
        last: i64,
        f: &mut DaySink,
    ) -> Result<()> {
        let rows = self.query(
            "SELECT day, clicks, data FROM scope_traffic
             WHERE scope = $1 AND scope_id = $2 AND day BETWEEN $3 AND $4 ORDER BY day",
            &[&(scope as i32), &id, &first, &last],
        )?;
        for r in &rows {
            f(StoredDay {
                day: r.get(0),
                clicks: clicks_of(r, 1),
                data: r.get(2),
            })?;
        }
        Ok(())
    }

    fn first_link_day(&self, owner: Id, link: Id) -> Result<Option<(i64, Vec<u8>)>> {
        let days = self.link_day_list(owner, i64::MIN, i64::MAX)?;
        if days.is_empty() {
            return Ok(None);
        }
        let rows = self.query(
            "SELECT day, data FROM link_traffic
             WHERE owner_id = $1 AND day = ANY($2) AND link_id = $3 ORDER BY day LIMIT 1",
            &[&owner, &days, &link],
        )?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    fn first_scope_day(&self, scope: Scope, id: Id) -> Result<Option<(i64, Vec<u8>)>> {
        let rows = self.query(
            "SELECT day, data FROM scope_traffic WHERE scope = $1 AND scope_id = $2
             ORDER BY day LIMIT 1",
            &[&(scope as i32), &id],
        )?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    fn owner_link_days(
        &self,
        owner: Id,
        first: i64,
        last: i64,
        f: &mut dyn FnMut(Id, StoredDay<'_>),
    ) -> Result<()> {
        let rows = self.query(
            "SELECT link_id, day, clicks, data FROM link_traffic
             WHERE owner_id = $1 AND day BETWEEN $2 AND $3",
            &[&owner, &first, &last],
        )?;
        for r in &rows {
            f(
                r.get(0),
                StoredDay {
                    day: r.get(1),
                    clicks: clicks_of(r, 2),
                    data: r.get(3),
                },
            );
        }
        Ok(())
    }

    fn names(&self, codes: &[u64]) -> Result<HashMap<u64, Option<String>>> {
        let stored: Vec<i64> = codes
            .iter()
            .filter(|&&c| c != NONE && c != OTHER)
            .map(|&c| row_of_code(c))
            .collect();
        let mut found: BTreeMap<u64, String> = BTreeMap::new();
        if !stored.is_empty() {
            for r in self.query(
                "SELECT id, value FROM traffic_values WHERE id = ANY($1)",
                &[&stored],
            )? {
                found.insert(code_of_row(r.get(0)), r.get(1));
            }
        }
        Ok(codes
            .iter()
            .map(|&code| {
                let name = match code {
                    NONE => None,
                    OTHER => Some(crate::domain::OTHER.to_owned()),
                    // A code the table does not know reads as "other", as on SQLite.
                    code => Some(
                        found
                            .get(&code)
                            .cloned()
                            .unwrap_or_else(|| crate::domain::OTHER.to_owned()),
                    ),
                };
                (code, name)
            })
            .collect())
    }

    fn alias_and_url(&self, link: Id) -> Result<Option<(String, String)>> {
        let rows = self.query("SELECT alias, url FROM links WHERE id = $1", &[&link])?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    fn member_ids(&self, owner: Id, scope: Scope, id: Id) -> Result<HashSet<Id>> {
        let column = member_column(scope);
        let rows = self.query(
            &format!("SELECT id FROM links WHERE owner_id = $1 AND {column} = $2"),
            &[&owner, &id],
        )?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn members_with_clicks(&self, owner: Id, scope: Scope, id: Id) -> Result<Vec<(Id, i64)>> {
        let column = member_column(scope);
        let rows = self.query(
            &format!("SELECT id, clicks FROM links WHERE owner_id = $1 AND {column} = $2"),
            &[&owner, &id],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn links_by_clicks(&self, owner: Id, before: (i64, i64), n: usize) -> Result<Vec<(Id, i64)>> {
        let rows = self.query(
            "SELECT id, clicks FROM links WHERE owner_id = $1 AND (clicks, id) < ($2, $3)
             ORDER BY clicks DESC, id DESC LIMIT $4",
            &[&owner, &before.0, &before.1, &(n as i64)],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}
