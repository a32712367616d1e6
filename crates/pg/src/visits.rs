//! SQL for counting visits on PostgreSQL: the click writer's batches (clicks, the raw log,
//! rollups) and the log's upkeep. Clicks reserved at redirect time are `quota.rs`'s.
//!
//! Several servers write at once, so every batch takes its row locks in one order — its links
//! by id, then their `click_quota` rows, then `link_traffic` rows, then `scope_traffic` rows,
//! each by key — and two writers can wait for each other but never deadlock. New visit values are stored before the batch's
//! transaction, in statements of their own (see [`intern`]).

use std::collections::{BTreeSet, HashMap};

use deadpool_postgres::GenericClient;

use linkdeck_store::{LogWindow, VisitLog};

use crate::error::pg_error;
use crate::pool::Pg;
use crate::sql::{all, col, execute, rows, value};
use crate::traffic;
use crate::tx::PgTx;
use linkdeck_domain::{Dimension, Id, Result, Visit};
use linkdeck_store::traffic::LinkHome;
use linkdeck_store::traffic::values::Interner;
use linkdeck_store::visits::{FlushedLink, VisitBatch, VisitRow};

/// A number for `pg_try_advisory_xact_lock`: "linkdeck upkeep". One server at a time prunes;
/// the others find the lock taken and leave the work to it.
const UPKEEP_LOCK: i64 = 0x6c64_6b5f_7570_6b70;

/// Log rows per INSERT, so no statement grows without bound.
const LOG_ROWS_PER_INSERT: usize = 10_000;

/// Writes a batch: see `Store::write_visits` for what it does. Returns each link's clicks
/// after the batch; visits of links deleted meanwhile are dropped.
pub async fn record(
    pg: &Pg,
    batch: &VisitBatch,
    rotations: &[(Id, u32)],
    interner: &mut Interner,
) -> Result<Vec<FlushedLink>> {
    let mut client = pg.client().await?;
    intern(&client, batch, interner).await?;
    let adds = batch.clicks_to_add();
    let mut ids: Vec<Id> = adds.keys().copied().collect();
    ids.sort_unstable();
    let tx = client.transaction().await.map_err(pg_error)?;
    // Locking every link of the batch, in id order, before anything else: a trash, a move or a
    // delete of one of them waits for the batch (or the batch for it), so its visits are
    // counted where the link is. Reservations (`quota.rs`) lock no link row: they never wait
    // for a batch, unless it adds clicks counted in memory to their quota row.
    let locked = rows(
        &tx,
        "SELECT id, clicks, owner_id, space_id, domain_id FROM links
         WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE",
        &[&ids],
    )
    .await?;
    let mut clicks: HashMap<Id, i64> = HashMap::with_capacity(ids.len());
    let mut homes: HashMap<Id, LinkHome> = HashMap::with_capacity(ids.len());
    for row in locked {
        let id: Id = col(&row, 0)?;
        clicks.insert(id, col(&row, 1)?);
        homes.insert(
            id,
            LinkHome {
                owner: col(&row, 2)?,
                space: col(&row, 3)?,
                domain: col(&row, 4)?,
            },
        );
    }
    let (bump_ids, bump_by): (Vec<Id>, Vec<i64>) = ids
        .iter()
        .filter(|id| homes.contains_key(id))
        .map(|id| (*id, adds[id] as i64))
        .unzip();
    // A link with a quota row (`quota.rs`) has its exact count there: clicks counted here in
    // memory (the server's copy of the link predates an edit that gave it a limit or a
    // rotation) are added to that count, never beside it.
    // Only those rows are locked (in id order, as reservations lock them), and only in that
    // rare case: a reservation never waits for an ordinary batch.
    let (counted_ids, counted_by): (Vec<Id>, Vec<i64>) = bump_ids
        .iter()
        .zip(&bump_by)
        .filter(|(_, n)| **n > 0)
        .map(|(id, n)| (*id, *n))
        .unzip();
    tx.execute(
        "WITH held AS MATERIALIZED (
             SELECT link_id FROM click_quota WHERE link_id = ANY($1)
             ORDER BY link_id FOR UPDATE
         )
         UPDATE click_quota q SET used = q.used + v.n
         FROM unnest($1::bigint[], $2::bigint[]) AS v(id, n)
         JOIN held h ON h.link_id = v.id
         WHERE q.link_id = v.id",
        &[&counted_ids, &counted_by],
    )
    .await
    .map_err(pg_error)?;
    // Then every link of the batch: its clicks counted here added, or brought up to its quota
    // row's (reserved there, by any server, this batch's visits among them; never backwards,
    // as another server's batch may have brought it further meanwhile).
    let bumped = rows(
        &tx,
        "UPDATE links l SET
             clicks = CASE WHEN q.link_id IS NULL THEN l.clicks + v.n
                           ELSE GREATEST(l.clicks, q.used) END,
             last_rotation = coalesce(q.position, l.last_rotation)
         FROM unnest($1::bigint[], $2::bigint[]) AS v(id, n)
              LEFT JOIN click_quota q ON q.link_id = v.id
         WHERE l.id = v.id
           AND ((q.link_id IS NULL AND v.n > 0)
                OR l.clicks < q.used OR l.last_rotation <> q.position)
         RETURNING l.id, l.clicks",
        &[&bump_ids, &bump_by],
    )
    .await?;
    for row in bumped {
        clicks.insert(col(&row, 0)?, col(&row, 1)?);
    }
    log(&tx, batch.logged(&homes)).await?;
    traffic::add(&tx, &batch.rollup(&homes, interner)?).await?;
    crate::orphans::write(&tx, batch.orphans()).await?;
    crate::webhooks::queue_clicks(&tx, batch.raw(), &homes, jiff::Timestamp::now()).await?;
    if !rotations.is_empty() {
        let (rotate_ids, positions): (Vec<Id>, Vec<i64>) = rotations
            .iter()
            .map(|(id, next)| (*id, i64::from(*next)))
            .unzip();
        execute(
            &tx,
            "UPDATE links l SET last_rotation = v.p
             FROM unnest($1::bigint[], $2::bigint[]) AS v(id, p) WHERE l.id = v.id",
            &[&rotate_ids, &positions],
        )
        .await?;
    }
    let (preview_ids, previews): (Vec<Id>, Vec<i64>) = batch.previews().into_iter().unzip();
    if !preview_ids.is_empty() {
        execute(
            &tx,
            "UPDATE links l SET previews = l.previews + v.n
             FROM unnest($1::bigint[], $2::bigint[]) AS v(id, n) WHERE l.id = v.id",
            &[&preview_ids, &previews],
        )
        .await?;
    }
    tx.commit().await.map_err(pg_error)?;
    let mut flushed: Vec<FlushedLink> = clicks
        .into_iter()
        .map(|(link_id, clicks)| FlushedLink {
            link_id,
            clicks: clicks.max(0) as u64,
        })
        .collect();
    flushed.sort_unstable_by_key(|f| f.link_id);
    Ok(flushed)
}

/// Gives every value of the batch a code, storing the new ones. In statements of their own,
/// committed at once: values are never deleted, so one stored for a batch that then fails is
/// harmless, and two writers storing the same new value wait for each other only for the
/// moment of one statement, never while holding a batch's locks. Rows go in sorted, so two
/// such statements cannot deadlock either.
async fn intern(
    client: &impl GenericClient,
    batch: &VisitBatch,
    interner: &mut Interner,
) -> Result<()> {
    let unknown = batch.unknown_values(interner);
    intern_values(client, &unknown, interner).await
}

/// Gives each of these values (dimension index, value) a code, storing the new ones, as
/// [`intern`] does: on a connection outside any transaction that holds rollup locks.
pub(super) async fn intern_values(
    client: &impl GenericClient,
    unknown: &BTreeSet<(usize, &str)>,
    interner: &mut Interner,
) -> Result<()> {
    if unknown.is_empty() {
        return Ok(());
    }
    let dims: Vec<i32> = unknown.iter().map(|(dim, _)| *dim as i32).collect();
    let values: Vec<&str> = unknown.iter().map(|(_, value)| *value).collect();
    execute(
        client,
        "INSERT INTO traffic_values (dimension, value)
         SELECT d, v FROM unnest($1::int[], $2::text[]) AS x(d, v) ORDER BY d, v
         ON CONFLICT DO NOTHING",
        &[&dims, &values],
    )
    .await?;
    let stored = rows(
        client,
        "SELECT t.id, t.dimension, t.value
         FROM unnest($1::int[], $2::text[]) AS x(d, v)
         JOIN traffic_values t ON t.dimension = x.d AND t.value = x.v",
        &[&dims, &values],
    )
    .await?;
    for row in stored {
        let dim: i32 = col(&row, 1)?;
        if let Some(&dim) = usize::try_from(dim)
            .ok()
            .and_then(|d| Dimension::ALL.get(d))
        {
            interner.remember(dim, col(&row, 2)?, col(&row, 0)?);
        }
    }
    Ok(())
}

/// Appends rows to the raw log.
async fn log<'a>(
    client: &impl GenericClient,
    rows: impl Iterator<Item = &'a VisitRow>,
) -> Result<()> {
    let rows: Vec<&VisitRow> = rows.collect();
    for chunk in rows.chunks(LOG_ROWS_PER_INSERT) {
        let links: Vec<Id> = chunk.iter().map(|v| v.link_id).collect();
        let at: Vec<i64> = chunk.iter().map(|v| v.at).collect();
        let column =
            |i: usize| -> Vec<Option<&str>> { chunk.iter().map(|v| v.values()[i]).collect() };
        let (country, platform, browser, referrer, language) =
            (column(0), column(1), column(2), column(3), column(4));
        let address: Vec<Option<&str>> = chunk.iter().map(|v| v.address.as_deref()).collect();
        let rule: Vec<Option<&str>> = chunk.iter().map(|v| v.rule.as_deref()).collect();
        execute(
            client,
            "INSERT INTO visit_log (link_id, at, country, platform, browser, referrer, \
             language, address, rule)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[],
                                  $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])",
            &[
                &links, &at, &country, &platform, &browser, &referrer, &language, &address, &rule,
            ],
        )
        .await?;
    }
    Ok(())
}

/// Whether this transaction holds the upkeep lock (taken if free, never waited for).
async fn upkeep_lock(client: &impl GenericClient) -> Result<bool> {
    value(
        client,
        "SELECT pg_try_advisory_xact_lock($1)",
        &[&UPKEEP_LOCK],
    )
    .await
}

/// Links marked for purging (the trash's purge marks them: `visit_log_purge`) handled per pass.
const PURGE_LINKS: i64 = 100;

impl<C: GenericClient + Sync> VisitLog for PgTx<'_, C> {
    fn prune_visit_log(&self, before: i64, chunk: usize) -> Result<usize> {
        if !self.wait(upkeep_lock(self.c))? {
            return Ok(0);
        }
        // The log is in about the order of time, so the old rows are at the front: look only there.
        let upto: Option<i64> = self.wait(value(
            self.c,
            "SELECT max(id) FROM (SELECT id, at FROM visit_log ORDER BY id LIMIT $2) s
             WHERE at < $1",
            &[&before, &(chunk as i64)],
        ))?;
        let Some(upto) = upto else {
            return Ok(0);
        };
        let n = self.wait(execute(
            self.c,
            "DELETE FROM visit_log WHERE id <= $1 AND at < $2",
            &[&upto, &before],
        ))?;
        Ok(n as usize)
    }

    fn purge_forgotten_visits(&self, after: i64, chunk: i64) -> Result<Option<i64>> {
        if !self.wait(upkeep_lock(self.c))? {
            return Ok(None);
        }
        let marked: Vec<(Id, i64)> = self.wait(all(
            self.c,
            "SELECT link_id, upto FROM visit_log_purge ORDER BY link_id LIMIT $1",
            &[&PURGE_LINKS],
            |r| Ok((col(r, 0)?, col(r, 1)?)),
        ))?;
        let Some(end) = marked.iter().map(|m| m.1).max() else {
            return Ok(None);
        };
        let (links, uptos): (Vec<Id>, Vec<i64>) = marked.into_iter().unzip();
        if after >= end {
            self.wait(execute(
                self.c,
                "DELETE FROM visit_log_purge p USING unnest($1::bigint[], $2::bigint[]) AS m(l, u)
                 WHERE p.link_id = m.l AND p.upto <= m.u",
                &[&links, &uptos],
            ))?;
            return Ok(Some(0));
        }
        let until = after.saturating_add(chunk).min(end);
        self.wait(execute(
            self.c,
            "DELETE FROM visit_log v USING unnest($3::bigint[], $4::bigint[]) AS m(l, u)
             WHERE v.id > $1 AND v.id <= $2 AND v.link_id = m.l AND v.id <= m.u",
            &[&after, &until, &links, &uptos],
        ))?;
        Ok(Some(until))
    }

    fn last_visit_id(&self) -> Result<i64> {
        self.wait(value(
            self.c,
            "SELECT coalesce(max(id), 0) FROM visit_log",
            &[],
        ))
    }

    fn logged_visits(&self, w: &LogWindow, limit: usize) -> Result<Vec<Visit>> {
        let [link, space, domain] = w.scope_ids();
        self.wait(all(
            self.c,
            "SELECT v.id, v.at, v.link_id, l.alias, v.country, v.platform, v.browser,
                    v.referrer, v.language, v.address, v.rule
             FROM visit_log v JOIN links l ON l.id = v.link_id
             WHERE v.id > $1 AND v.id <= $2 AND l.owner_id = $3 AND v.at >= $4 AND v.at < $5
               AND ($6::bigint IS NULL OR v.link_id = $6) AND ($7::bigint IS NULL OR l.space_id = $7)
               AND ($8::bigint IS NULL OR l.domain_id = $8)
               AND ($10::text IS NULL OR v.link_id IN
                    (SELECT link_id FROM link_tags WHERE owner_id = $3 AND tag = $10))
             ORDER BY v.id LIMIT $9",
            &[
                &w.after,
                &w.upto,
                &w.owner,
                &w.since,
                &w.until,
                &link,
                &space,
                &domain,
                &(limit as i64),
                &w.scope_tag(),
            ],
            |r| {
                Ok(Visit {
                    id: col(r, 0)?,
                    at: linkdeck_store::time(col(r, 1)?),
                    link_id: col(r, 2)?,
                    alias: col(r, 3)?,
                    country: col(r, 4)?,
                    platform: col(r, 5)?,
                    browser: col(r, 6)?,
                    referrer: col(r, 7)?,
                    language: col(r, 8)?,
                    address: col(r, 9)?,
                    rule: col(r, 10)?,
                })
            },
        ))
    }
}
