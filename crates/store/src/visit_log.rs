//! The raw visit log's upkeep: one row per counted visit, kept for the retention the server is
//! configured with and pruned from its oldest end; the rows of deleted links are removed by a
//! pass over the log in the background. Statistics never read it (they read the rollups).

use linkdeck_domain::Result;

/// The upkeep of the visit log, a bounded step per transaction.
pub trait VisitLog {
    /// Deletes logged visits from before `before` (unix seconds), at most about `chunk` of the
    /// oldest; how many. A store where another server is at it already does nothing (0).
    fn prune_visit_log(&self, before: i64, chunk: usize) -> Result<usize>;

    /// One step of removing the logged visits of deleted links: those with a log id in
    /// `(after, after + chunk]`. Where to go on from, or `None` when every deleted link is done
    /// (or another server is at it).
    fn purge_forgotten_visits(&self, after: i64, chunk: i64) -> Result<Option<i64>>;
}
