//! Traffic rollups as both stores keep them, without SQL: a day of one row ([`DayTraffic`], the
//! blob both stores hold), the UTC days and hours rows are keyed by, and where a link's clicks
//! are also counted ([`LinkHome`]). The SQL is in `store::traffic` (SQLite) and `pg::traffic`.

pub mod day;
pub mod values;

pub use day::DayTraffic;

use std::collections::{BTreeMap, HashMap, HashSet};

use linkdeck_domain::{Dimension, Id, Result, StatsScope, TrafficHour};

/// Seconds in a UTC day.
pub const DAY: i64 = 86_400;

/// The UTC day number (days since 1970-01-01) of a unix time.
pub fn day_of(at: i64) -> i64 {
    at.div_euclid(DAY)
}

/// The UTC hour (0–23) of a unix time.
pub fn hour_of(at: i64) -> usize {
    (at.rem_euclid(DAY) / 3600) as usize
}

/// The kinds of rows that sum up many links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Owner = 1,
    Space = 2,
    Domain = 3,
}

/// Which of an owner's links a question about `scope` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Members<'a> {
    /// Every one.
    All,
    /// Those whose column of `links` equals the id.
    Column(&'static str, Id),
    /// Those carrying the tag (rows of `link_tags`).
    Tagged(&'a str),
}

/// The links [`Rollups::counted_clicks`] sums for `scope`.
pub fn members(scope: &StatsScope) -> Members<'_> {
    match scope {
        StatsScope::Link(id) => Members::Column("id", *id),
        StatsScope::Space(id) => Members::Column("space_id", *id),
        StatsScope::Domain(id) => Members::Column("domain_id", *id),
        StatsScope::Tag(tag) => Members::Tagged(tag),
        StatsScope::Account => Members::All,
    }
}

impl Scope {
    /// The column of `links` that places a link in a space or a domain.
    pub fn member_column(self) -> &'static str {
        if self == Scope::Space {
            "space_id"
        } else {
            "domain_id"
        }
    }
}

/// Where a link's traffic is also counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkHome {
    pub owner: Id,
    pub space: Option<Id>,
    pub domain: Option<Id>,
}

impl LinkHome {
    /// The owner's, space's and domain's rows, in that order.
    pub fn scopes(self) -> impl Iterator<Item = (Scope, Id)> {
        [
            Some((Scope::Owner, self.owner)),
            self.space.map(|s| (Scope::Space, s)),
            self.domain.map(|d| (Scope::Domain, d)),
        ]
        .into_iter()
        .flatten()
    }
}

/// What a change to a link does to the rows that also count its traffic: its share leaves its
/// owner's, space's and domain's rows when it goes to the trash and comes back when it is
/// restored; a move between spaces takes it from one space's rows to the other's. Both stores
/// apply each of the link's days to each row [`Shift::rows`] names, in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shift {
    Withdraw(LinkHome),
    Reinstate(LinkHome),
    Move { from: Option<Id>, to: Option<Id> },
}

impl Shift {
    /// The rows each day of the link changes, in order, and whether the day is taken from
    /// (`true`) or added to the row.
    pub fn rows(self) -> Vec<(Scope, Id, bool)> {
        match self {
            Shift::Withdraw(home) => home.scopes().map(|(s, id)| (s, id, true)).collect(),
            Shift::Reinstate(home) => home.scopes().map(|(s, id)| (s, id, false)).collect(),
            Shift::Move { from, to } if from == to => Vec::new(),
            Shift::Move { from, to } => [(from, true), (to, false)]
                .into_iter()
                .filter_map(|(space, subtract)| space.map(|id| (Scope::Space, id, subtract)))
                .collect(),
        }
    }

    /// Applies one of the link's days to a row [`Shift::rows`] named.
    pub fn apply(row: &mut DayTraffic, day: &DayTraffic, subtract: bool) {
        if subtract {
            row.subtract(day);
        } else {
            row.merge(day);
        }
    }
}

/// A stored day read back; no bytes (a row a writer has just made) is an empty day, and so is a
/// damaged one, which cannot be added to: starting it over keeps the clicks flowing.
pub fn decode_or_empty(data: &[u8], what: &str) -> DayTraffic {
    if data.is_empty() {
        return DayTraffic::default();
    }
    DayTraffic::decode(data).unwrap_or_else(|e| {
        tracing::warn!(row = what, error = %e, "damaged traffic row replaced");
        DayTraffic::default()
    })
}

/// A day a row holds, as stored.
pub struct StoredDay<'a> {
    pub day: i64,
    pub clicks: u64,
    pub data: &'a [u8],
}

/// Callbacks given each stored day in turn.
pub type DaySink<'f> = dyn FnMut(StoredDay<'_>) -> Result<()> + 'f;

/// What statistics and exports read of the rollups, answered by either store inside one
/// consistent snapshot. Statistics are computed once (`stats.rs`) over this; each store says
/// how to fetch. Synchronous on purpose: SQLite answers on the blocking pool from a connection,
/// PostgreSQL from a blocking thread that hands each query to the runtime.
pub trait Rollups {
    /// Whether the link, space or domain `scope` names is `owner`'s, or (a tag) one of
    /// `owner`'s links carries it; the account always is.
    fn owns(&self, owner: Id, scope: &StatsScope) -> Result<bool>;
    /// Where link `id` is counted, if it exists.
    fn link_home(&self, id: Id) -> Result<Option<LinkHome>>;
    /// Calls `f` with each stored day of link `link` from `first` to `last` (UTC day numbers),
    /// oldest first.
    fn link_days(&self, owner: Id, link: Id, first: i64, last: i64, f: &mut DaySink) -> Result<()>;
    /// Calls `f` with each stored day of a scope from `first` to `last`, oldest first.
    fn scope_days(
        &self,
        scope: Scope,
        id: Id,
        first: i64,
        last: i64,
        f: &mut DaySink,
    ) -> Result<()>;
    /// The first stored day of a link, with its blob.
    fn first_link_day(&self, owner: Id, link: Id) -> Result<Option<(i64, Vec<u8>)>>;
    /// The first stored day of a scope, with its blob.
    fn first_scope_day(&self, scope: Scope, id: Id) -> Result<Option<(i64, Vec<u8>)>>;
    /// Calls `f` with every link row of an owner from day `first` to `last`.
    fn owner_link_days(
        &self,
        owner: Id,
        first: i64,
        last: i64,
        f: &mut dyn FnMut(Id, StoredDay<'_>),
    ) -> Result<()>;
    /// The clicks `owner`'s links in `scope` have counted by their own counters, dated or not:
    /// imported clicks, and those from before the history was kept, are in it. A scan of the
    /// scope's links, so asked for once per view, never per period.
    fn counted_clicks(&self, owner: Id, scope: &StatsScope) -> Result<u64>;
    /// What each value code stands for (see `store::traffic::values::names`).
    fn names(&self, codes: &[u64]) -> Result<HashMap<u64, Option<String>>>;
    /// A link's alias and URL, if it exists.
    fn alias_and_url(&self, link: Id) -> Result<Option<(String, String)>>;
    /// The ids of the owner's links in a space or domain.
    fn member_ids(&self, owner: Id, scope: Scope, id: Id) -> Result<HashSet<Id>>;
    /// The owner's links in a space or domain, with their all-time clicks.
    fn members_with_clicks(&self, owner: Id, scope: Scope, id: Id) -> Result<Vec<(Id, i64)>>;
    /// The ids of the owner's links carrying `tag`.
    fn tagged_ids(&self, owner: Id, tag: &str) -> Result<Vec<Id>>;
    /// Up to `n` of the owner's links whose (clicks, id) is below `before`, most clicks first.
    fn links_by_clicks(&self, owner: Id, before: (i64, i64), n: usize) -> Result<Vec<(Id, i64)>>;
}

/// A link's traffic history as the days its rollup rows hold, with the clicks in all: each
/// hour's clicks in its UTC day and hour, each value by its code (`code` answers it, storing
/// new ones), and the clicks an hour's values do not account for as having none.
pub fn history_days(
    hours: &[TrafficHour],
    mut code: impl FnMut(Dimension, &str) -> Result<u64>,
) -> Result<(BTreeMap<i64, DayTraffic>, u64)> {
    let mut days: BTreeMap<i64, DayTraffic> = BTreeMap::new();
    let mut clicks = 0u64;
    for hour in hours {
        let at = hour.hour.as_second();
        let h = hour_of(at);
        let n = u32::try_from(hour.clicks).unwrap_or(u32::MAX);
        let day = days.entry(day_of(at)).or_default();
        day.hours[h] = day.hours[h].saturating_add(n);
        clicks += u64::from(n);
        for (dim, values) in hour.values.iter().enumerate() {
            let mut counted = 0u32;
            for (value, n) in values {
                let n = u32::try_from(*n).unwrap_or(u32::MAX);
                let code = code(Dimension::ALL[dim], value)?;
                let mut at_hour = [0; 24];
                at_hour[h] = n;
                day.add_value(dim, code, &at_hour);
                counted = counted.saturating_add(n);
            }
            // The rest of the hour's clicks had no value.
            let mut rest = [0; 24];
            rest[h] = n.saturating_sub(counted);
            if rest[h] > 0 {
                day.add_value(dim, day::NONE, &rest);
            }
        }
    }
    Ok((days, clicks))
}
