//! Recording counted visits, from the server's click writer: the clicks of each link, the raw
//! visit log, and the traffic rollups, all in one transaction.
//!
//! A [`VisitBatch`] gathers visits between writes as raw rows. If the database cannot be written
//! for a while (a full disk) and the raw rows reach their bound, later visits are folded into
//! per link and day sums, which stay small however many arrive: clicks and statistics stay
//! exact and only the raw log loses rows, with a warning.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

use super::pg;
use super::store::traffic::{self, DayTraffic, Interner, LinkHome, Rollup, Scope, day::MAX_VALUES};
pub use super::store::visit_log::VisitRow;
use super::store::{db_error, visit_log};
use super::traffic::Rollups;
use crate::domain::{Dimension, Id, OTHER, Result, TrafficHour};
use linkdeck_store::quota::Reserved;

/// Clicks of one link after a batch was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushedLink {
    pub link_id: Id,
    /// The link's click count in the database after the batch.
    pub clicks: u64,
}

/// One link's visits of one UTC day past the raw rows' bound, by value (interned when
/// written).
#[derive(Debug, Clone, Default)]
struct FoldedDay {
    hours: [u32; 24],
    values: [HashMap<Option<Box<str>>, [u32; 24]>; 5],
}

impl FoldedDay {
    fn add(&mut self, hour: usize, values: [Option<&str>; 5]) {
        self.hours[hour] = self.hours[hour].saturating_add(1);
        for (dim, value) in values.into_iter().enumerate() {
            let map = &mut self.values[dim];
            let mut key = value.map(Box::from);
            // Bounded like a stored day: past the limit a new value counts as "other".
            if map.len() >= MAX_VALUES && !map.contains_key(&key) {
                key = Some(Box::from(OTHER));
            }
            let hours = map.entry(key).or_insert([0; 24]);
            hours[hour] = hours[hour].saturating_add(1);
        }
    }

    fn interned(&self, conn: &Connection, interner: &mut Interner) -> Result<DayTraffic> {
        self.coded(|dim, value| interner.code(conn, Dimension::ALL[dim], value))
    }

    /// The day with each value turned into its code by `code(dimension index, value)`.
    fn coded(
        &self,
        mut code: impl FnMut(usize, Option<&str>) -> Result<u64>,
    ) -> Result<DayTraffic> {
        let mut day = DayTraffic {
            hours: self.hours,
            ..DayTraffic::default()
        };
        for (dim, map) in self.values.iter().enumerate() {
            for (value, hours) in map {
                day.add_value(dim, code(dim, value.as_deref())?, hours);
            }
        }
        Ok(day)
    }
}

/// Raw rows a batch keeps at most while the database cannot be written.
pub const RAW_PENDING_MAX: usize = 200_000;

/// Visits waiting to be written.
#[derive(Debug)]
pub struct VisitBatch {
    raw: Vec<VisitRow>,
    /// Raw rows kept at most.
    raw_max: usize,
    /// Visits past the bound, summed per link and day.
    folded: BTreeMap<(Id, i64), FoldedDay>,
    /// Raw rows not kept because the batch was full.
    dropped: u64,
    /// Visits per link whose clicks the database already holds: reserved there at redirect
    /// time (see `server/clicks.rs`), so writing the batch adds their rollups and log rows but
    /// not their clicks again.
    precounted: HashMap<Id, u64>,
}

impl Default for VisitBatch {
    fn default() -> Self {
        VisitBatch::keeping(RAW_PENDING_MAX)
    }
}

impl VisitBatch {
    /// A batch that keeps at most `raw_max` raw rows.
    pub fn keeping(raw_max: usize) -> VisitBatch {
        VisitBatch {
            raw: Vec::new(),
            raw_max,
            folded: BTreeMap::new(),
            dropped: 0,
            precounted: HashMap::new(),
        }
    }

    /// An empty batch with the same bound.
    pub fn emptied(&self) -> VisitBatch {
        VisitBatch::keeping(self.raw_max)
    }

    /// Takes in one counted visit.
    pub fn add(&mut self, visit: VisitRow) {
        if self.raw.len() < self.raw_max {
            self.raw.push(visit);
            return;
        }
        self.dropped += 1;
        self.folded
            .entry((visit.link_id, traffic::day_of(visit.at)))
            .or_default()
            .add(traffic::hour_of(visit.at), visit.values());
    }

    /// Takes in one visit whose click the database has already counted.
    pub fn add_counted(&mut self, visit: VisitRow) {
        *self.precounted.entry(visit.link_id).or_default() += 1;
        self.add(visit);
    }

    /// Visits taken in since the batch was made.
    pub fn len(&self) -> u64 {
        self.raw.len() as u64 + self.dropped
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Raw rows given up since the batch was made.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Clicks per link.
    pub fn per_link(&self) -> HashMap<Id, u64> {
        let mut out: HashMap<Id, u64> = HashMap::new();
        for v in &self.raw {
            *out.entry(v.link_id).or_default() += 1;
        }
        for ((link, _), day) in &self.folded {
            *out.entry(*link).or_default() += day.hours.iter().map(|&n| u64::from(n)).sum::<u64>();
        }
        out
    }

    /// Clicks per link that writing the batch adds to the links' counts: its visits, less those
    /// the database already counted. Every link of the batch is in it (with 0 for a link whose
    /// clicks are all counted).
    pub fn clicks_to_add(&self) -> HashMap<Id, u64> {
        let mut out = self.per_link();
        for (link, n) in &self.precounted {
            if let Some(total) = out.get_mut(link) {
                *total = total.saturating_sub(*n);
            }
        }
        out
    }

    /// The values of the batch that `interner` has no code for yet, as (dimension index,
    /// value), in order.
    pub fn unknown_values<'a>(&'a self, interner: &Interner) -> BTreeSet<(usize, &'a str)> {
        let raw = self
            .raw
            .iter()
            .flat_map(|v| v.values().into_iter().enumerate());
        let folded = self.folded.values().flat_map(|day| {
            day.values
                .iter()
                .enumerate()
                .flat_map(|(dim, map)| map.keys().map(move |v| (dim, v.as_deref())))
        });
        raw.chain(folded)
            .filter_map(|(dim, value)| {
                let value = value?;
                interner
                    .known(Dimension::ALL[dim], Some(value))
                    .is_none()
                    .then_some((dim, value))
            })
            .collect()
    }

    /// The raw rows of the links in `homes`, to be logged.
    pub fn logged<'a>(
        &'a self,
        homes: &'a HashMap<Id, LinkHome>,
    ) -> impl Iterator<Item = &'a VisitRow> + 'a {
        self.raw.iter().filter(|v| homes.contains_key(&v.link_id))
    }

    /// What the batch adds to each stored row, for the links in `homes`: each link's days, and
    /// the sums of its owner's, space's and domain's days, keyed in each table's key order.
    /// Every value must be known to `interner` (see [`VisitBatch::unknown_values`]).
    pub fn rollup(&self, homes: &HashMap<Id, LinkHome>, interner: &Interner) -> Result<RowDeltas> {
        let code = |dim: usize, value: Option<&str>| {
            interner.known(Dimension::ALL[dim], value).ok_or_else(|| {
                crate::domain::Error::Unavailable("a visit value has no code".into())
            })
        };
        let mut links: BTreeMap<(Id, i64, Id), DayTraffic> = BTreeMap::new();
        for v in self.logged(homes) {
            let home = homes[&v.link_id];
            let mut codes = [traffic::day::NONE; 5];
            for (dim, value) in v.values().into_iter().enumerate() {
                codes[dim] = code(dim, value)?;
            }
            links
                .entry((home.owner, traffic::day_of(v.at), v.link_id))
                .or_default()
                .add(traffic::hour_of(v.at), codes, 1);
        }
        for (&(link, day), folded) in &self.folded {
            if let Some(home) = homes.get(&link) {
                let delta = folded.coded(code)?;
                links
                    .entry((home.owner, day, link))
                    .or_default()
                    .merge(&delta);
            }
        }
        let mut scopes: BTreeMap<(Scope, Id, i64), DayTraffic> = BTreeMap::new();
        for (&(_, day, link), delta) in &links {
            for (scope, id) in homes[&link].scopes() {
                scopes.entry((scope, id, day)).or_default().merge(delta);
            }
        }
        Ok(RowDeltas { links, scopes })
    }
}

/// What a batch adds to the rollup rows (see [`VisitBatch::rollup`]).
#[derive(Debug, Default)]
pub struct RowDeltas {
    /// Per `(owner, day, link)`: the key of `link_traffic`.
    pub links: BTreeMap<(Id, i64, Id), DayTraffic>,
    /// Per `(scope, scope id, day)`: the key of `scope_traffic`.
    pub scopes: BTreeMap<(Scope, Id, i64), DayTraffic>,
}

/// Writes a batch in one transaction: each link's clicks go up by its visits (less those the
/// database already counted, see [`VisitBatch::add_counted`]), the raw rows are logged, the rollups take in every visit, and rotation positions are saved. Visits of links
/// deleted meanwhile are dropped. Returns each touched link's new click count.
pub fn record_visits(
    conn: &Connection,
    batch: &VisitBatch,
    rotations: &[(Id, u32)],
    interner: &mut Interner,
) -> Result<Vec<FlushedLink>> {
    let per_link = batch.clicks_to_add();
    let mut ids: Vec<Id> = per_link.keys().copied().collect();
    ids.sort_unstable();
    // Clicks first: RETURNING also tells which links still exist, and where they belong.
    let mut flushed = Vec::with_capacity(ids.len());
    let mut homes: HashMap<Id, LinkHome> = HashMap::with_capacity(ids.len());
    {
        let mut bump = conn
            .prepare_cached(
                "UPDATE links SET clicks = clicks + ?2 WHERE id = ?1
                 RETURNING clicks, owner_id, space_id, domain_id",
            )
            .map_err(db_error)?;
        // A link whose clicks were all reserved already is only read: its row is not written
        // again for nothing.
        let mut read = conn
            .prepare_cached("SELECT clicks, owner_id, space_id, domain_id FROM links WHERE id = ?1")
            .map_err(db_error)?;
        let found = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(i64, LinkHome)> {
            Ok((
                r.get(0)?,
                LinkHome {
                    owner: r.get(1)?,
                    space: r.get(2)?,
                    domain: r.get(3)?,
                },
            ))
        };
        for id in ids {
            let row = match per_link[&id] {
                0 => read.query_row([id], found),
                add => bump.query_row(params![id, add as i64], found),
            }
            .optional()
            .map_err(db_error)?;
            if let Some((clicks, home)) = row {
                flushed.push(FlushedLink {
                    link_id: id,
                    clicks: clicks.max(0) as u64,
                });
                homes.insert(id, home);
            }
        }
    }
    log_and_roll_up(conn, batch, &homes, interner)?;
    let mut rotate = conn
        .prepare_cached("UPDATE links SET last_rotation = ?2 WHERE id = ?1")
        .map_err(db_error)?;
    for (link_id, next) in rotations {
        rotate.execute(params![link_id, next]).map_err(db_error)?;
    }
    Ok(flushed)
}

/// Logs the raw rows of a batch and adds its visits to the rollups, for the links in `homes`.
fn log_and_roll_up(
    conn: &Connection,
    batch: &VisitBatch,
    homes: &HashMap<Id, LinkHome>,
    interner: &mut Interner,
) -> Result<()> {
    let kept: Vec<&VisitRow> = batch
        .raw
        .iter()
        .filter(|v| homes.contains_key(&v.link_id))
        .collect();
    visit_log::append(conn, kept.iter().copied())?;
    // Link by link and day, so each stored day is read and written once.
    let mut order = kept;
    order.sort_by_key(|v| (v.link_id, traffic::day_of(v.at)));
    let mut rollup = Rollup::default();
    for group in order
        .chunk_by(|a, b| a.link_id == b.link_id && traffic::day_of(a.at) == traffic::day_of(b.at))
    {
        let (link, day) = (group[0].link_id, traffic::day_of(group[0].at));
        rollup.open(conn, homes[&link], link, day)?;
        for v in group {
            let mut codes = [traffic::day::NONE; 5];
            for (dim, value) in v.values().into_iter().enumerate() {
                codes[dim] = interner.code(conn, Dimension::ALL[dim], value)?;
            }
            rollup.add(traffic::hour_of(v.at), codes, 1);
        }
        if let Some(folded) = batch.folded.get(&(link, day)) {
            rollup.add_day(&folded.interned(conn, interner)?);
        }
        rollup.close(conn)?;
    }
    // Days that only folded visits had.
    for (&(link, day), folded) in &batch.folded {
        let Some(home) = homes.get(&link) else {
            continue;
        };
        let seen = order
            .binary_search_by_key(&(link, day), |v| (v.link_id, traffic::day_of(v.at)))
            .is_ok();
        if !seen {
            rollup.open(conn, *home, link, day)?;
            rollup.add_day(&folded.interned(conn, interner)?);
            rollup.close(conn)?;
        }
    }
    rollup.finish(conn)
}

/// The traffic history of the owner's links `ids`, an hour at a time (for exports). Links with
/// no traffic, or not the owner's, are left out.
pub(super) fn history(
    rollups: &dyn Rollups,
    owner: Id,
    ids: &[Id],
) -> Result<HashMap<Id, Vec<TrafficHour>>> {
    let mut out = HashMap::new();
    for &id in ids {
        if rollups.link_home(id)?.is_none_or(|h| h.owner != owner) {
            continue;
        }
        let mut days = Vec::new();
        rollups.link_days(owner, id, i64::MIN, i64::MAX, &mut |d| {
            let day = DayTraffic::decode(d.data).map_err(|e| {
                crate::domain::Error::Unavailable(format!("a traffic row is damaged: {e}"))
            })?;
            days.push((d.day, day));
            Ok(())
        })?;
        if days.is_empty() {
            continue;
        }
        let mut codes: Vec<u64> = days
            .iter()
            .flat_map(|(_, d)| d.dims.iter().flatten().map(|e| e.code))
            .collect();
        codes.sort_unstable();
        codes.dedup();
        let names = rollups.names(&codes)?;
        let mut hours = Vec::new();
        for (day, t) in days {
            for h in (0..24).filter(|&h| t.hours[h] > 0) {
                let values = std::array::from_fn(|dim| {
                    t.dims[dim]
                        .iter()
                        .filter(|e| e.hours[h] > 0)
                        .filter_map(|e| {
                            let name = names.get(&e.code).cloned().flatten()?;
                            Some((name, u64::from(e.hours[h])))
                        })
                        .collect()
                });
                hours.push(TrafficHour {
                    hour: jiff::Timestamp::from_second(day * traffic::DAY + h as i64 * 3600)
                        .unwrap_or_default(),
                    clicks: u64::from(t.hours[h]),
                    values,
                });
            }
        }
        out.insert(id, hours);
    }
    Ok(out)
}

/// Visits read per step of an upgrade.
const UPGRADE_CHUNK: i64 = 100_000;

/// The upgrade to rollups: every visit of the old `visits` table (whose values were stored as
/// received, so they are bounded now) goes to the raw log and the rollups; its clicks were
/// already counted. Runs inside the migration's transaction.
pub(super) fn roll_up_old_visits(conn: &Connection) -> Result<()> {
    let mut interner = Interner::default();
    let mut homes: HashMap<Id, LinkHome> = HashMap::new();
    let mut after = 0i64;
    loop {
        let mut batch = VisitBatch::default();
        let mut last = None;
        {
            let mut stmt = conn
                .prepare(
                    "SELECT id, link_id, at, country, platform, browser, referrer, language
                     FROM visits WHERE id > ?1 ORDER BY id LIMIT ?2",
                )
                .map_err(db_error)?;
            let mut rows = stmt
                .query(params![after, UPGRADE_CHUNK])
                .map_err(db_error)?;
            while let Some(r) = rows.next().map_err(db_error)? {
                let text = |i: usize, dim: Dimension| -> rusqlite::Result<Option<String>> {
                    Ok(r.get::<_, Option<String>>(i)?.and_then(|v| dim.bound(&v)))
                };
                last = Some(r.get::<_, i64>(0).map_err(db_error)?);
                batch.add(VisitRow {
                    link_id: r.get(1).map_err(db_error)?,
                    at: r.get(2).map_err(db_error)?,
                    country: text(3, Dimension::Country).map_err(db_error)?,
                    platform: text(4, Dimension::Platform).map_err(db_error)?,
                    browser: text(5, Dimension::Browser).map_err(db_error)?,
                    referrer: text(6, Dimension::Referrer).map_err(db_error)?,
                    language: text(7, Dimension::Language).map_err(db_error)?,
                });
            }
        }
        let Some(last) = last else { return Ok(()) };
        after = last;
        for link in batch.per_link().into_keys() {
            if let std::collections::hash_map::Entry::Vacant(slot) = homes.entry(link)
                && let Some(home) = traffic::link_home(conn, link)?
            {
                slot.insert(home);
            }
        }
        log_and_roll_up(conn, &batch, &homes, &mut interner)?;
    }
}

/// Rows deleted per transaction when pruning, so the click writer waits only briefly.
const PRUNE_CHUNK: usize = 10_000;

impl super::LocalBackend {
    /// The traffic history of these links of the owner, an hour at a time (for exports).
    pub async fn traffic_history(&self, ids: Vec<Id>) -> Result<HashMap<Id, Vec<TrafficHour>>> {
        let owner = self.owner_id();
        self.service()
            .read_rollups(move |rollups| history(rollups, owner, &ids))
            .await
    }
}

fn lock(interner: &Mutex<Interner>) -> std::sync::MutexGuard<'_, Interner> {
    interner.lock().unwrap_or_else(|e| e.into_inner())
}

impl super::LocalService {
    /// Deletes the raw visits logged before `before`, a chunk per transaction; returns how many.
    /// Statistics are unchanged: they read the rollups.
    pub async fn prune_visit_log(&self, before: jiff::Timestamp) -> Result<u64> {
        let before = before.as_second();
        let mut pruned = 0u64;
        loop {
            let n = self
                .store
                .write(move |tx| tx.prune_visit_log(before, PRUNE_CHUNK))
                .await?;
            pruned += n as u64;
            if n < PRUNE_CHUNK / 2 {
                return Ok(pruned);
            }
            tokio::task::yield_now().await;
        }
    }

    /// Counts `visits` in one transaction as the server's click writer does: clicks, log and
    /// rollups. For tools and tests; the server gathers visits in its own writer.
    pub async fn record_visits(&self, visits: Vec<VisitRow>) -> Result<Vec<FlushedLink>> {
        let mut batch = VisitBatch::keeping(visits.len());
        for v in visits {
            batch.add(v);
        }
        let interner = Arc::new(Mutex::new(Interner::default()));
        self.write_visits(batch, Vec::new(), &interner).await.0
    }

    /// Writes one batch of the click writer in one transaction ([`record_visits`] on SQLite),
    /// saving the rotation positions given. The batch comes back with the outcome, so that a
    /// batch the database refused can be tried again. `interner` is the writer's, kept between
    /// batches.
    pub async fn write_visits(
        &self,
        batch: VisitBatch,
        rotations: Vec<(Id, u32)>,
        interner: &Arc<Mutex<Interner>>,
    ) -> (Result<Vec<FlushedLink>>, VisitBatch) {
        if let Some(pg) = self.pg() {
            // The writer is one task, so nobody else wants the interner meanwhile; it is taken
            // out because a lock cannot be held across the writes. PostgreSQL stores new values
            // outside the batch's transaction, so their codes stay good even if it fails.
            let mut codes = std::mem::take(&mut *lock(interner));
            let out = pg::visits::record(pg, &batch, &rotations, &mut codes).await;
            *lock(interner) = codes;
            return (out, batch);
        }
        let db = match self.db() {
            Ok(db) => db.clone(),
            Err(e) => return (Err(e), batch),
        };
        let interner = interner.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut interner = lock(&interner);
            let out = db.write_blocking_checked_by_caller(|tx| {
                record_visits(tx, &batch, &rotations, &mut interner)
            });
            if out.is_err() {
                // Values it stored were rolled back: their numbers must not be reused.
                *interner = Interner::default();
            }
            (out, batch)
        })
        .await;
        joined.unwrap_or_else(|e| {
            tracing::error!(error = %e, "visit writer task failed");
            (
                Err(crate::domain::Error::Unavailable(format!(
                    "the visit writer failed: {e}"
                ))),
                VisitBatch::default(),
            )
        })
    }

    /// Whether several servers may count clicks on this database at once (PostgreSQL), so
    /// that a rotating link's turn, which they share, is kept in the database
    /// ([`LocalService::reserve_click`]) rather than in one server's memory.
    pub fn counts_are_shared(&self) -> bool {
        self.store.counts_are_shared()
    }

    /// Reserves one click of link `id` in the database before its visitor is answered, for a
    /// count that must hold whatever happens to the server afterwards and however many servers
    /// share it: stored at once, and refused once the link's click limit is reached. With
    /// `rotation` URLs (more than 0) the link's rotation position moves on too.
    pub async fn reserve_click(&self, id: Id, rotation: usize) -> Result<ClickReservation> {
        let n = u32::try_from(rotation).unwrap_or(u32::MAX);
        let reserved = self.store.reserve_click(id, n).await?;
        Ok(match reserved {
            Reserved::Counted { clicks, next } => ClickReservation::Counted {
                clicks,
                // The position saved is the next visit's; this one had the one before it.
                rotation: (n > 0).then(|| ((next % n + n - 1) % n) as usize),
            },
            Reserved::Refused => ClickReservation::Refused,
            Reserved::NoQuota => ClickReservation::NotShared,
        })
    }

    /// Removes the logged visits of deleted links, a stretch of the log per transaction.
    pub async fn purge_deleted_visits(&self) -> Result<()> {
        let chunk = PRUNE_CHUNK as i64 * 5;
        let mut after = 0;
        loop {
            let next = self
                .store
                .write(move |tx| tx.purge_forgotten_visits(after, chunk))
                .await?;
            let Some(next) = next else { return Ok(()) };
            after = next;
            tokio::task::yield_now().await;
        }
    }
}

/// What [`LocalService::reserve_click`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClickReservation {
    /// Counted in the database: the link's clicks after this one and, for a rotating link, the
    /// index of the URL this visit gets.
    Counted {
        clicks: u64,
        rotation: Option<usize>,
    },
    /// The link's click limit is reached.
    Refused,
    /// The database keeps no reserved count for the link (it has no limit there any more, nor
    /// a shared rotation, or it is gone): count the click as any other.
    NotShared,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(link: Id, at: i64, referrer: String) -> VisitRow {
        VisitRow {
            link_id: link,
            at,
            country: None,
            platform: None,
            browser: None,
            referrer: Some(referrer),
            language: None,
        }
    }

    #[test]
    fn counted_visits_add_rollups_but_not_clicks_again() {
        let mut batch = VisitBatch::keeping(100);
        batch.add(row(1, 86_400 * 3 + 7_200, "a.example".into()));
        batch.add_counted(row(1, 86_400 * 3 + 7_300, "b.example".into()));
        batch.add_counted(row(2, 86_400 * 4, "a.example".into()));
        assert_eq!(batch.per_link(), HashMap::from([(1, 2), (2, 1)]));
        assert_eq!(batch.clicks_to_add(), HashMap::from([(1, 1), (2, 0)]));

        let mut interner = Interner::default();
        let unknown: Vec<(usize, String)> = batch
            .unknown_values(&interner)
            .into_iter()
            .map(|(dim, v)| (dim, v.to_owned()))
            .collect();
        assert_eq!(
            unknown,
            [(3, "a.example".to_owned()), (3, "b.example".to_owned())]
        );
        for (i, (dim, value)) in unknown.iter().enumerate() {
            interner.remember(Dimension::ALL[*dim], value, i as i64 + 1);
        }
        let homes = HashMap::from([
            (
                1,
                LinkHome {
                    owner: 9,
                    space: Some(5),
                    domain: None,
                },
            ),
            (
                2,
                LinkHome {
                    owner: 9,
                    space: None,
                    domain: None,
                },
            ),
        ]);
        let deltas = batch.rollup(&homes, &interner).unwrap();
        let clicks = |t: &DayTraffic| t.clicks();
        assert_eq!(
            deltas
                .links
                .iter()
                .map(|(k, t)| (*k, clicks(t)))
                .collect::<Vec<_>>(),
            [((9, 3, 1), 2), ((9, 4, 2), 1)]
        );
        assert_eq!(
            deltas
                .scopes
                .iter()
                .map(|(k, t)| (*k, clicks(t)))
                .collect::<Vec<_>>(),
            [
                ((Scope::Owner, 9, 3), 2),
                ((Scope::Owner, 9, 4), 1),
                ((Scope::Space, 5, 3), 2)
            ]
        );
        // A link missing from `homes` (deleted meanwhile) adds nothing.
        let only_one = HashMap::from([(2, homes[&2])]);
        assert_eq!(batch.rollup(&only_one, &interner).unwrap().links.len(), 1);
        assert_eq!(batch.logged(&only_one).count(), 1);
    }

    #[test]
    fn a_full_batch_keeps_every_click_and_drops_only_raw_rows() {
        let mut batch = VisitBatch::keeping(10);
        for i in 0..1_000 {
            // A different referrer each time: the batch stays bounded all the same.
            batch.add(row(i % 3, 86_400 * 5 + i, format!("r{i}.example")));
        }
        assert_eq!(batch.len(), 1_000);
        assert_eq!(batch.dropped(), 990);
        assert_eq!(batch.raw.len(), 10);
        let per_link = batch.per_link();
        assert_eq!(per_link.values().sum::<u64>(), 1_000);
        assert_eq!(per_link[&0], 334);
        let day = &batch.folded[&(0, 5)];
        assert!(
            day.values[3].len() <= MAX_VALUES + 1,
            "values per day are bounded"
        );
        let referrers: u32 = day.values[3].values().flatten().sum();
        let raw = batch.raw.iter().filter(|v| v.link_id == 0).count() as u32;
        assert_eq!(referrers + raw, 334, "folded into other, not lost");
    }
}
