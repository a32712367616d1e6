//! Counted visits as the service sees them: the click writer's batches (written by the store,
//! see the contract's `visits`), click reservations, the visit log's upkeep, and a link's
//! traffic history for exports.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::traffic::{self, DayTraffic, Rollups, values::Interner};
use linkdeck_domain::{Id, Result, TrafficHour};
use linkdeck_store::quota::Reserved;
pub use linkdeck_store::visits::{FlushedLink, RAW_PENDING_MAX, VisitBatch, VisitRow};

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
                linkdeck_domain::Error::Unavailable(format!("a traffic row is damaged: {e}"))
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
                // Orphan rollups go with the log's days: bounded by day, so one statement.
                let day = linkdeck_store::traffic::day_of(before);
                self.store
                    .write(move |tx| linkdeck_store::orphans::Orphans::prune_orphans(tx, day))
                    .await?;
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

    /// Writes one batch of the click writer in one transaction, saving the rotation positions
    /// given (see [`Store::write_visits`](linkdeck_store::Store::write_visits)). The batch comes
    /// back with the outcome, so that a batch the database refused can be tried again.
    /// `interner` is the writer's, kept between batches.
    pub async fn write_visits(
        &self,
        batch: VisitBatch,
        rotations: Vec<(Id, u32)>,
        interner: &Arc<Mutex<Interner>>,
    ) -> (Result<Vec<FlushedLink>>, VisitBatch) {
        self.store.write_visits(batch, rotations, interner).await
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
