//! SQL for traffic rollups on PostgreSQL: the same rows as SQLite's (`store/traffic`), each a
//! [`DayTraffic`] blob, added to by every server's click writer at once, moved when a link
//! changes space or goes to the trash and back ([`shift`]), deleted with purged links, spaces
//! and domains, and read back for statistics and exports.
//!
//! Changing a row is read, change, write: two writers must not both read the old blob. Each
//! change makes sure its rows exist (`INSERT … ON CONFLICT DO NOTHING`), then locks them with
//! `SELECT … FOR UPDATE` in key order, so a second writer waits for the first's commit and then
//! reads its result, and two writers taking overlapping rows always take them in the same order.
//! Whoever also changes links locks the links' rows first (by id), as the click writer does.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::{FromSql, ToSql};

use crate::sql::{all, col, execute, exists, one, rows};
use crate::tx::PgTx;
use linkdeck_domain::{Id, Result, StatsScope};
use linkdeck_store::traffic::day::{NONE, OTHER};
use linkdeck_store::traffic::values::{self, code_of_row, row_of_code};
use linkdeck_store::traffic::{
    DaySink, DayTraffic, LinkHome, Members, Rollups, Scope, Shift, StoredDay, decode_or_empty,
    members,
};
use linkdeck_store::visits::RowDeltas;

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
    let keys: Vec<[i64; 3]> = rows.iter().map(|(k, _)| *k).collect();
    let mut current = lock_rows(client, table, &keys).await?;
    for (key, delta) in &rows {
        if let Some(day) = current.get_mut(key) {
            day.merge(delta);
        }
    }
    write_rows(client, table, &current).await
}

/// Locks the rows of `table` with these keys, in key order, and answers what each holds. A
/// key without a row gets an empty one to lock; [`write_rows`] writes or deletes it in the
/// same transaction, so nobody ever sees it empty.
async fn lock_rows(
    client: &impl GenericClient,
    table: &Table,
    keys: &[[i64; 3]],
) -> Result<BTreeMap<[i64; 3], DayTraffic>> {
    if keys.is_empty() {
        return Ok(BTreeMap::new());
    }
    let Table {
        name,
        key: [a, b, c],
    } = table;
    let column = |i: usize| -> Vec<i64> { keys.iter().map(|k| k[i]).collect() };
    let columns = [column(0), column(1), column(2)];
    let key_params: [&(dyn ToSql + Sync); 3] = [&columns[0], &columns[1], &columns[2]];
    execute(
        client,
        &format!(
            "INSERT INTO {name} ({a}, {b}, {c}, clicks, data)
             SELECT k.a, k.b, k.c, 0, ''::bytea
             FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS k(a, b, c)
             ORDER BY 1, 2, 3
             ON CONFLICT DO NOTHING"
        ),
        &key_params,
    )
    .await?;
    let stored = rows(
        client,
        &format!(
            "SELECT t.{a}::bigint, t.{b}, t.{c}, t.data
             FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS k(a, b, c)
             JOIN {name} t ON t.{a} = k.a AND t.{b} = k.b AND t.{c} = k.c
             ORDER BY 1, 2, 3
             FOR UPDATE OF t"
        ),
        &key_params,
    )
    .await?;
    stored
        .iter()
        .map(|r| {
            let key = [col::<i64>(r, 0)?, col(r, 1)?, col(r, 2)?];
            Ok((key, decode_or_empty(col(r, 3)?, name)))
        })
        .collect()
}

/// Writes the rows [`lock_rows`] locked: a day with clicks replaces its row, an empty day
/// deletes it.
async fn write_rows(
    client: &impl GenericClient,
    table: &Table,
    rows: &BTreeMap<[i64; 3], DayTraffic>,
) -> Result<()> {
    let Table {
        name,
        key: [a, b, c],
    } = table;
    let mut kept: ([Vec<i64>; 3], Vec<i64>, Vec<Vec<u8>>) = Default::default();
    let mut gone: [Vec<i64>; 3] = Default::default();
    for (key, day) in rows {
        let into = if day.is_empty() {
            &mut gone
        } else {
            kept.1.push(day.clicks() as i64);
            kept.2.push(day.encode());
            &mut kept.0
        };
        for (i, part) in key.iter().enumerate() {
            into[i].push(*part);
        }
    }
    let [ka, kb, kc] = &kept.0;
    if !ka.is_empty() {
        execute(
            client,
            &format!(
                "UPDATE {name} t SET clicks = v.n, data = v.d
                 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],
                             $5::bytea[]) AS v(a, b, c, n, d)
                 WHERE t.{a} = v.a AND t.{b} = v.b AND t.{c} = v.c"
            ),
            &[ka, kb, kc, &kept.1, &kept.2],
        )
        .await?;
    }
    let [ga, gb, gc] = &gone;
    if !ga.is_empty() {
        execute(
            client,
            &format!(
                "DELETE FROM {name} t
                 USING unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS v(a, b, c)
                 WHERE t.{a} = v.a AND t.{b} = v.b AND t.{c} = v.c"
            ),
            &[ga, gb, gc],
        )
        .await?;
    }
    Ok(())
}

/// Links whose stored days one statement reads when their traffic moves.
const LINKS_PER_READ: usize = 1_000;

/// The first and last day of any of `owner`'s links' own rows (which stay while a link is in
/// the trash, unlike the owner's sums): a link's rows are found by one index probe per day
/// between them, the key leading with the owner and the day, as on SQLite.
async fn link_range(client: &impl GenericClient, owner: Id) -> Result<Option<(i64, i64)>> {
    let range = rows(
        client,
        "SELECT min(day), max(day) FROM link_traffic WHERE owner_id = $1",
        &[&owner],
    )
    .await?;
    let Some(r) = range.first() else {
        return Ok(None);
    };
    Ok(col::<Option<i64>>(r, 0)?.zip(col::<Option<i64>>(r, 1)?))
}

/// Every day of [`link_range`].
async fn owner_link_days(client: &impl GenericClient, owner: Id) -> Result<Vec<i64>> {
    let range = link_range(client, owner).await?;
    Ok(range.map_or_else(Vec::new, |(first, last)| (first..=last).collect()))
}

/// A row a [`Shift`] changes, and whether it takes away (see [`Shift::rows`]).
type ShiftedRow = (Scope, Id, bool);

/// Applies the traffic of each of `owner`'s `links` to the rows its [`Shift`] names, as SQLite
/// does link by link (`store::traffic`). The caller has locked the links' rows (its move or
/// delete of them does), so no click writer adds to their days meanwhile; the rows changed are
/// locked here after them, all at once and in key order — the click writer's order — so a
/// link's clicks never land where it was, and neither side waits for the other in a circle.
pub async fn shift(client: &impl GenericClient, owner: Id, links: &[(Id, Shift)]) -> Result<()> {
    let links: Vec<(Id, Vec<ShiftedRow>)> = links
        .iter()
        .map(|(id, how)| (*id, how.rows()))
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    if links.is_empty() {
        return Ok(());
    }
    let days = owner_link_days(client, owner).await?;
    if days.is_empty() {
        return Ok(());
    }
    let targets: HashMap<Id, &[ShiftedRow]> = links
        .iter()
        .map(|(id, rows)| (*id, rows.as_slice()))
        .collect();
    // First which rows change, to lock them all before any is read…
    let mut keys = BTreeSet::new();
    for chunk in links.chunks(LINKS_PER_READ) {
        let ids: Vec<Id> = chunk.iter().map(|(id, _)| *id).collect();
        for r in rows(
            client,
            "SELECT link_id, day FROM link_traffic
             WHERE owner_id = $1 AND day = ANY($2) AND link_id = ANY($3)",
            &[&owner, &days, &ids],
        )
        .await?
        {
            let (link, day): (Id, i64) = (col(&r, 0)?, col(&r, 1)?);
            for &(scope, id, _) in targets[&link] {
                keys.insert([scope as i64, id, day]);
            }
        }
    }
    let keys: Vec<[i64; 3]> = keys.into_iter().collect();
    let mut locked = lock_rows(client, &SCOPE_ROWS, &keys).await?;
    // …then the links' days, link by link in id order, each day to the shift's rows in order.
    for chunk in links.chunks(LINKS_PER_READ) {
        let ids: Vec<Id> = chunk.iter().map(|(id, _)| *id).collect();
        let stored = rows(
            client,
            "SELECT link_id, day, data FROM link_traffic
             WHERE owner_id = $1 AND day = ANY($2) AND link_id = ANY($3)
             ORDER BY link_id, day",
            &[&owner, &days, &ids],
        )
        .await?;
        for r in &stored {
            let (link, day): (Id, i64) = (col(r, 0)?, col(r, 1)?);
            let traffic = decode_or_empty(col(r, 2)?, LINK_ROWS.name);
            for &(scope, id, subtract) in targets[&link] {
                if let Some(row) = locked.get_mut(&[scope as i64, id, day]) {
                    Shift::apply(row, &traffic, subtract);
                }
            }
        }
    }
    write_rows(client, &SCOPE_ROWS, &locked).await
}

/// Deletes the own rows of `owner`'s purged `links` (withdrawn when they were trashed) and marks
/// their raw visits for the pruner (`VisitLog::purge_forgotten_visits`): those logged so far, as on
/// SQLite (`store::visit_log::forget_link`).
pub async fn forget(client: &impl GenericClient, owner: Id, links: &[Id]) -> Result<()> {
    if links.is_empty() {
        return Ok(());
    }
    let days = owner_link_days(client, owner).await?;
    for chunk in links.chunks(LINKS_PER_READ) {
        if !days.is_empty() {
            execute(
                client,
                "DELETE FROM link_traffic
                 WHERE owner_id = $1 AND day = ANY($2) AND link_id = ANY($3)",
                &[&owner, &days, &chunk],
            )
            .await?;
        }
        execute(
            client,
            "INSERT INTO visit_log_purge (link_id, upto)
             SELECT l, (SELECT coalesce(max(id), 0) FROM visit_log)
             FROM unnest($1::bigint[]) AS l ORDER BY l
             ON CONFLICT (link_id) DO UPDATE SET upto = excluded.upto",
            &[&chunk],
        )
        .await?;
    }
    Ok(())
}

/// Spaces or domains are gone: so are their rows.
pub async fn delete_scope(client: &impl GenericClient, scope: Scope, ids: &[Id]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    execute(
        client,
        "DELETE FROM scope_traffic WHERE scope = $1 AND scope_id = ANY($2)",
        &[&(scope as i32), &ids],
    )
    .await?;
    Ok(())
}

/// The rollups as the work's transaction sees them.
impl<C: GenericClient + Sync> PgTx<'_, C> {
    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        self.wait(rows(self.c, sql, params))
    }

    /// The days from `first` to `last` within the owner's links' days: a link's rows are
    /// found by one index probe per day (the key leads with the owner and the day).
    fn link_day_list(&self, owner: Id, first: i64, last: i64) -> Result<Vec<i64>> {
        let Some((lo, hi)) = self.wait(link_range(self.c, owner))? else {
            return Ok(Vec::new());
        };
        Ok((first.max(lo)..=last.min(hi)).collect())
    }
}

/// Columns 0 and 1 of `r`.
fn pair<A: for<'a> FromSql<'a>, B: for<'a> FromSql<'a>>(r: &Row) -> Result<(A, B)> {
    Ok((col(r, 0)?, col(r, 1)?))
}

fn clicks_of(row: &Row, i: usize) -> Result<u64> {
    Ok(col::<i64>(row, i)?.max(0) as u64)
}

/// Hands `f` each of `rows` (columns `day, clicks, data`) as a stored day.
fn send_days(rows: &[Row], f: &mut DaySink) -> Result<()> {
    for r in rows {
        f(StoredDay {
            day: col(r, 0)?,
            clicks: clicks_of(r, 1)?,
            data: col(r, 2)?,
        })?;
    }
    Ok(())
}

impl<C: GenericClient + Sync> Rollups for PgTx<'_, C> {
    fn owns(&self, owner: Id, scope: &StatsScope) -> Result<bool> {
        let (sql, id) = match scope {
            StatsScope::Link(id) => ("SELECT 1 FROM links WHERE id = $1 AND owner_id = $2", id),
            StatsScope::Space(id) => ("SELECT 1 FROM spaces WHERE id = $1 AND owner_id = $2", id),
            StatsScope::Domain(id) => ("SELECT 1 FROM domains WHERE id = $1 AND owner_id = $2", id),
            StatsScope::Tag(tag) => {
                let sql = "SELECT 1 FROM link_tags WHERE owner_id = $1 AND tag = $2 LIMIT 1";
                return self.wait(exists(self.c, sql, &[&owner, tag]));
            }
            StatsScope::Account => return Ok(true),
        };
        self.wait(exists(self.c, sql, &[&id, &owner]))
    }

    fn link_home(&self, id: Id) -> Result<Option<LinkHome>> {
        let sql = "SELECT owner_id, space_id, domain_id FROM links WHERE id = $1";
        self.wait(one(self.c, sql, &[&id], |r| {
            Ok(LinkHome {
                owner: col(r, 0)?,
                space: col(r, 1)?,
                domain: col(r, 2)?,
            })
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
        send_days(&rows, f)
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
        send_days(&rows, f)
    }

    fn first_link_day(&self, owner: Id, link: Id) -> Result<Option<(i64, Vec<u8>)>> {
        let days = self.link_day_list(owner, i64::MIN, i64::MAX)?;
        if days.is_empty() {
            return Ok(None);
        }
        self.wait(one(
            self.c,
            "SELECT day, data FROM link_traffic
             WHERE owner_id = $1 AND day = ANY($2) AND link_id = $3 ORDER BY day LIMIT 1",
            &[&owner, &days, &link],
            pair,
        ))
    }

    fn first_scope_day(&self, scope: Scope, id: Id) -> Result<Option<(i64, Vec<u8>)>> {
        self.wait(one(
            self.c,
            "SELECT day, data FROM scope_traffic WHERE scope = $1 AND scope_id = $2
             ORDER BY day LIMIT 1",
            &[&(scope as i32), &id],
            pair,
        ))
    }

    fn counted_clicks(&self, owner: Id, scope: &StatsScope) -> Result<u64> {
        const SUM: &str = "SELECT coalesce(sum(clicks), 0)::bigint FROM links WHERE owner_id = $1";
        let rows = match members(scope) {
            Members::All => self.query(SUM, &[&owner])?,
            Members::Tagged(tag) => self.query(
                &format!("{SUM} AND id IN (SELECT link_id FROM link_tags WHERE owner_id = $1 AND tag = $2)"),
                &[&owner, &tag],
            )?,
            Members::Column(column, id) => {
                self.query(&format!("{SUM} AND {column} = $2"), &[&owner, &id])?
            }
        };
        let sum: i64 = rows.first().map(|r| col(r, 0)).transpose()?.unwrap_or(0);
        Ok(sum.max(0) as u64)
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
                col(r, 0)?,
                StoredDay {
                    day: col(r, 1)?,
                    clicks: clicks_of(r, 2)?,
                    data: col(r, 3)?,
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
                found.insert(code_of_row(col(&r, 0)?), col(&r, 1)?);
            }
        }
        values::names(codes, |code| Ok(found.get(&code).cloned()))
    }

    fn alias_and_url(&self, link: Id) -> Result<Option<(String, String)>> {
        let sql = "SELECT alias, url FROM links WHERE id = $1";
        self.wait(one(self.c, sql, &[&link], pair))
    }

    fn member_ids(&self, owner: Id, scope: Scope, id: Id) -> Result<HashSet<Id>> {
        let column = scope.member_column();
        let rows = self.query(
            &format!("SELECT id FROM links WHERE owner_id = $1 AND {column} = $2"),
            &[&owner, &id],
        )?;
        rows.iter().map(|r| col(r, 0)).collect()
    }

    fn members_with_clicks(&self, owner: Id, scope: Scope, id: Id) -> Result<Vec<(Id, i64)>> {
        let column = scope.member_column();
        let sql = format!("SELECT id, clicks FROM links WHERE owner_id = $1 AND {column} = $2");
        self.wait(all(self.c, &sql, &[&owner, &id], pair))
    }

    fn tagged_ids(&self, owner: Id, tag: &str) -> Result<Vec<Id>> {
        let sql = "SELECT link_id FROM link_tags WHERE owner_id = $1 AND tag = $2";
        let rows = self.query(sql, &[&owner, &tag])?;
        rows.iter().map(|r| col(r, 0)).collect()
    }

    fn links_by_clicks(&self, owner: Id, before: (i64, i64), n: usize) -> Result<Vec<(Id, i64)>> {
        self.wait(all(
            self.c,
            "SELECT id, clicks FROM links WHERE owner_id = $1 AND (clicks, id) < ($2, $3)
             ORDER BY clicks DESC, id DESC LIMIT $4",
            &[&owner, &before.0, &before.1, &(n as i64)],
            pair,
        ))
    }
}
