//! The click writer's batches, as both stores write them: the clicks of each link, the raw
//! visit log, and the traffic rollups, all in one transaction.
//!
//! A [`VisitBatch`] gathers visits between writes as raw rows. If the database cannot be written
//! for a while (a full disk) and the raw rows reach their bound, later visits are folded into
//! per link and day sums, which stay small however many arrive: clicks and statistics stay
//! exact and only the raw log loses rows, with a warning.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use linkdeck_domain::{DIMENSIONS, Dimension, Error, Id, OTHER, Result};

use crate::orphans::{OrphanBatch, OrphanVisit};
use crate::traffic::day::MAX_VALUES;
use crate::traffic::values::Interner;
use crate::traffic::{self, DayTraffic, LinkHome, Scope};

/// One counted visit, as logged. Every value is already bounded (see `domain::traffic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisitRow {
    pub link_id: Id,
    /// Unix seconds.
    pub at: i64,
    /// Upper-case ISO 3166-1 alpha-2 code.
    pub country: Option<String>,
    /// A canonical platform name, or the user agent's OS when it is none of them.
    pub platform: Option<String>,
    pub browser: Option<String>,
    /// The referring page's host, or "other".
    pub referrer: Option<String>,
    /// A primary language tag.
    pub language: Option<String>,
    /// The visitor's address as `[serve] visitor_addresses` keeps it (`AddressLog`); never
    /// rolled up.
    pub address: Option<String>,
    /// The targeting rule that sent the visitor (`country DE`, `platform iOS`, `rotation 2`);
    /// `None` for the link's own URL.
    pub rule: Option<String>,
}

impl VisitRow {
    /// The values in `Dimension::ALL` order.
    pub fn values(&self) -> [Option<&str>; DIMENSIONS] {
        [
            self.country.as_deref(),
            self.platform.as_deref(),
            self.browser.as_deref(),
            self.referrer.as_deref(),
            self.language.as_deref(),
            self.rule.as_deref(),
        ]
    }
}

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
pub struct FoldedDay {
    hours: [u32; 24],
    values: [HashMap<Option<Box<str>>, [u32; 24]>; DIMENSIONS],
}

impl FoldedDay {
    fn add(&mut self, hour: usize, values: [Option<&str>; DIMENSIONS]) {
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

    /// The day with each value turned into its code by `code(dimension index, value)`.
    pub fn coded(
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
    /// Previews per link: fetches by link-preview agents, counted apart from clicks.
    previews: HashMap<Id, u64>,
    /// Requests no link answered, summed by row (bounded: see `orphans`).
    orphans: OrphanBatch,
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
            previews: HashMap::new(),
            orphans: OrphanBatch::default(),
        }
    }

    /// An empty batch with the same bound, with room for as many raw visits as this one holds:
    /// the next batch is likely as large, and growing it a visit at a time copies it again and
    /// again.
    pub fn emptied(&self) -> VisitBatch {
        VisitBatch {
            raw: Vec::with_capacity(self.raw.len()),
            ..VisitBatch::keeping(self.raw_max)
        }
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

    /// Takes in one preview of `link`: only its count goes up (no log row, no rollup).
    pub fn add_preview(&mut self, link: Id) {
        *self.previews.entry(link).or_default() += 1;
    }

    /// Takes in one request no link answered.
    pub fn add_orphan(&mut self, visit: &OrphanVisit) {
        self.orphans.add(visit);
    }

    /// The orphan visits taken in.
    pub fn orphans(&self) -> &OrphanBatch {
        &self.orphans
    }

    /// Previews per link, in id order (the order both stores lock rows in).
    pub fn previews(&self) -> Vec<(Id, i64)> {
        let mut out: Vec<(Id, i64)> = self
            .previews
            .iter()
            .map(|(id, n)| (*id, i64::try_from(*n).unwrap_or(i64::MAX)))
            .collect();
        out.sort_unstable();
        out
    }

    /// Visits, previews and orphan visits taken in since the batch was made.
    pub fn len(&self) -> u64 {
        self.raw.len() as u64
            + self.dropped
            + self.previews.values().sum::<u64>()
            + self.orphans.visits()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw rows, in the order they came.
    pub fn raw(&self) -> &[VisitRow] {
        &self.raw
    }

    /// The visits past the raw rows' bound, per link and UTC day.
    pub fn folded(&self) -> &BTreeMap<(Id, i64), FoldedDay> {
        &self.folded
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
            interner
                .known(Dimension::ALL[dim], value)
                .ok_or_else(|| Error::Unavailable("a visit value has no code".into()))
        };
        let mut links: BTreeMap<(Id, i64, Id), DayTraffic> = BTreeMap::new();
        for v in self.logged(homes) {
            let home = homes[&v.link_id];
            let mut codes = [traffic::day::NONE; DIMENSIONS];
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
            address: None,
            rule: None,
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
