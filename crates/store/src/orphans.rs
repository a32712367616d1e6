//! Orphan visits as both stores keep them (see `domain::orphans`): one row per host, UTC day,
//! dimension and value, holding its visits. A batch of the click writer gathers them
//! ([`OrphanBatch`]); [`settle`] decides, from what a store holds already, which rows the
//! batch adds to, so that a host never keeps more than [`ORPHAN_VALUES_PER_DAY`] distinct
//! values of a dimension a day (plus [`OTHER`]) however many visitors invent.

use std::collections::{BTreeMap, HashMap, HashSet};

use linkdeck_domain::{Id, ORPHAN_VALUES_PER_DAY, OTHER, OrphanKind, Result};

use crate::traffic;

/// The server's own host, where no domain is.
pub const OWN_HOST: Id = 0;

/// The dimensions of a host's day, as stored in `orphan_traffic.dim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i64)]
pub enum OrphanDim {
    Kind = 0,
    /// The UTC hour, `00` to `23`: the timeline.
    Hour = 1,
    Country = 2,
    Referrer = 3,
    Path = 4,
}

impl OrphanDim {
    pub const ALL: [OrphanDim; 5] = [
        OrphanDim::Kind,
        OrphanDim::Hour,
        OrphanDim::Country,
        OrphanDim::Referrer,
        OrphanDim::Path,
    ];

    pub fn code(self) -> i64 {
        self as i64
    }

    pub fn from_code(code: i64) -> Option<OrphanDim> {
        OrphanDim::ALL.into_iter().find(|d| d.code() == code)
    }
}

/// One orphan visit, every value already bounded (`domain::orphan_value`, `bound_host`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanVisit {
    /// The domain the request came to; `None` for the server's own host.
    pub domain: Option<Id>,
    /// Unix seconds.
    pub at: i64,
    pub kind: OrphanKind,
    pub path: String,
    pub referrer: Option<String>,
    pub country: Option<String>,
}

/// A row's key: host (a domain's id, or [`OWN_HOST`]), UTC day, dimension, value.
pub type OrphanKey = (Id, i64, OrphanDim, String);

/// The rows one host's dimension keeps for a day.
pub type OrphanGroup = (Id, i64, OrphanDim);

/// Orphan visits waiting for the click writer's next batch, summed by row. Bounded as the
/// store is: past [`ORPHAN_VALUES_PER_DAY`] values of a group, new ones are summed as
/// [`OTHER`].
#[derive(Debug, Default)]
pub struct OrphanBatch {
    rows: BTreeMap<OrphanKey, u64>,
    values: HashMap<OrphanGroup, usize>,
    visits: u64,
}

impl OrphanBatch {
    pub fn add(&mut self, v: &OrphanVisit) {
        let host = v.domain.unwrap_or(OWN_HOST);
        let day = traffic::day_of(v.at);
        self.visits += 1;
        let hour = format!("{:02}", traffic::hour_of(v.at));
        let values = [
            (OrphanDim::Kind, Some(v.kind.as_str())),
            (OrphanDim::Hour, Some(hour.as_str())),
            (OrphanDim::Country, v.country.as_deref()),
            (OrphanDim::Referrer, v.referrer.as_deref()),
            (OrphanDim::Path, Some(v.path.as_str())),
        ];
        for (dim, value) in values {
            let Some(value) = value else { continue };
            let mut key = (host, day, dim, value.to_owned());
            if !self.rows.contains_key(&key) {
                let kept = self.values.entry((host, day, dim)).or_default();
                if *kept >= ORPHAN_VALUES_PER_DAY && value != OTHER {
                    key.3 = OTHER.to_owned();
                } else {
                    *kept += 1;
                }
            }
            *self.rows.entry(key).or_default() += 1;
        }
    }

    /// Visits taken in.
    pub fn visits(&self) -> u64 {
        self.visits
    }

    /// What the batch adds, by row, in key order.
    pub fn rows(&self) -> &BTreeMap<OrphanKey, u64> {
        &self.rows
    }

    /// The groups the batch touches, in key order.
    pub fn groups(&self) -> Vec<OrphanGroup> {
        let mut out: Vec<OrphanGroup> = self.rows.keys().map(|k| (k.0, k.1, k.2)).collect();
        out.dedup();
        out
    }
}

/// What a batch adds to each stored row, given the batch's rows a store holds already
/// (`stored`) and how many values each touched group holds (`counts`): a new value goes in
/// while its group has room, else it is added to the group's [`OTHER`].
pub fn settle(
    batch: &OrphanBatch,
    stored: &HashSet<OrphanKey>,
    counts: &HashMap<OrphanGroup, u64>,
) -> BTreeMap<OrphanKey, u64> {
    let mut kept: HashMap<OrphanGroup, u64> = counts.clone();
    let mut out: BTreeMap<OrphanKey, u64> = BTreeMap::new();
    for (key, n) in &batch.rows {
        let group = (key.0, key.1, key.2);
        let mut key = key.clone();
        if !stored.contains(&key) {
            let held = kept.entry(group).or_default();
            if *held >= ORPHAN_VALUES_PER_DAY as u64 && key.3 != OTHER {
                key.3 = OTHER.to_owned();
            }
            if !stored.contains(&key) && !out.contains_key(&key) {
                *held += 1;
            }
        }
        *out.entry(key).or_default() += n;
    }
    out
}

/// One stored row as read back, summed over the hosts asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanRow {
    pub day: i64,
    pub dim: OrphanDim,
    pub value: String,
    pub visits: u64,
}

/// What statistics read of orphan visits, answered by either store.
pub trait Orphans {
    /// The rows of `hosts` (domain ids, [`OWN_HOST`] for the server's own) from UTC day
    /// `first` to `last`, summed over the hosts.
    fn orphan_rows(&self, hosts: &[Id], first: i64, last: i64) -> Result<Vec<OrphanRow>>;

    /// Deletes every host's rows of UTC days before `day`: orphan rollups are kept as long as
    /// the raw visit log, so a flood of paths does not stay for good. How many rows.
    fn prune_orphans(&self, day: i64) -> Result<u64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(path: String) -> OrphanVisit {
        OrphanVisit {
            domain: None,
            at: 86_400 * 10 + 3_600 * 5,
            kind: OrphanKind::OtherPath,
            path,
            referrer: None,
            country: Some("DE".into()),
        }
    }

    #[test]
    fn a_flood_of_paths_keeps_a_bounded_number_of_rows() {
        let mut batch = OrphanBatch::default();
        for i in 0..10_000 {
            batch.add(&visit(format!("/r{i}")));
        }
        let paths = |rows: &BTreeMap<OrphanKey, u64>| {
            rows.keys().filter(|k| k.2 == OrphanDim::Path).count()
        };
        assert_eq!(paths(batch.rows()), ORPHAN_VALUES_PER_DAY + 1);
        assert_eq!(batch.rows().len(), ORPHAN_VALUES_PER_DAY + 4);
        let other = (OWN_HOST, 10, OrphanDim::Path, OTHER.to_owned());
        assert_eq!(batch.rows()[&other], 10_000 - ORPHAN_VALUES_PER_DAY as u64);

        // A store already full for the day: only what it holds, and "other", take more.
        let held: HashSet<OrphanKey> = [(OWN_HOST, 10, OrphanDim::Path, "/r7".to_owned())].into();
        let counts = HashMap::from([(
            (OWN_HOST, 10, OrphanDim::Path),
            ORPHAN_VALUES_PER_DAY as u64,
        )]);
        let out = settle(&batch, &held, &counts);
        assert_eq!(paths(&out), 2);
        assert_eq!(out[&(OWN_HOST, 10, OrphanDim::Path, "/r7".to_owned())], 1);
        assert_eq!(out[&other], 10_000 - 1);
        // An empty store takes the batch as it is.
        assert_eq!(
            &settle(&batch, &HashSet::new(), &HashMap::new()),
            batch.rows()
        );
    }
}
