//! The raw visit log's upkeep: one row per counted visit, kept for the retention the server is
//! configured with and pruned from its oldest end; the rows of deleted links are removed by a
//! pass over the log in the background. Statistics never read it (they read the rollups); an
//! export of visits does, a window of log ids at a time.

use linkdeck_domain::{Id, Result, StatsScope, Visit};

/// The upkeep of the visit log, a bounded step per transaction.
pub trait VisitLog {
    /// Deletes logged visits from before `before` (unix seconds), at most about `chunk` of the
    /// oldest; how many. A store where another server is at it already does nothing (0).
    fn prune_visit_log(&self, before: i64, chunk: usize) -> Result<usize>;

    /// One step of removing the logged visits of deleted links: those with a log id in
    /// `(after, after + chunk]`. Where to go on from, or `None` when every deleted link is done
    /// (or another server is at it).
    fn purge_forgotten_visits(&self, after: i64, chunk: i64) -> Result<Option<i64>>;

    /// The id of the newest logged visit, 0 for an empty log: where an export that began now
    /// ends, so visits arriving meanwhile do not keep it going.
    fn last_visit_id(&self) -> Result<i64>;

    /// `owner`'s logged visits in `scope` at `[since, until)` (unix seconds) with log ids in
    /// `(after, upto]`, oldest first, at most `limit`. Visits of links no longer there (deleted
    /// or in the trash) are left out.
    fn logged_visits(&self, window: &LogWindow, limit: usize) -> Result<Vec<Visit>>;
}

/// A window of the visit log as [`VisitLog::logged_visits`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogWindow {
    pub owner: Id,
    pub scope: StatsScope,
    pub since: i64,
    pub until: i64,
    pub after: i64,
    pub upto: i64,
}

impl LogWindow {
    /// The scope as the three ids a statement binds (link, space, domain), each `None` where
    /// the scope is not of that kind: `(? IS NULL OR column = ?)` keeps every row for it.
    pub fn scope_ids(&self) -> [Option<Id>; 3] {
        match self.scope {
            StatsScope::Link(id) => [Some(id), None, None],
            StatsScope::Space(id) => [None, Some(id), None],
            StatsScope::Domain(id) => [None, None, Some(id)],
            StatsScope::Tag(_) | StatsScope::Account => [None, None, None],
        }
    }

    /// The tag a statement binds beside [`scope_ids`](Self::scope_ids), `None` but for a tag's
    /// scope.
    pub fn scope_tag(&self) -> Option<&str> {
        match &self.scope {
            StatsScope::Tag(tag) => Some(tag),
            _ => None,
        }
    }
}
