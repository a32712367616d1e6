//! Traffic statistics of the embedded service, read from the rollups (`store::traffic`): a
//! link's own rows, or the rows that sum up a space, a domain or an owner. A question reads one
//! row per day of its period, whatever the traffic, and decodes hours only at the period's
//! edges. A tag has no rows of its own (links take tags on and off, and their traffic stays
//! theirs): its figures are its links' rows summed when asked.
//!
//! Rows are kept per UTC hour, so a period that starts at a local midnight is exact in every
//! zone whose offset is a whole number of hours; in the few others (India, Nepal, …) an hour
//! that straddles the edge counts where it starts.

use std::collections::{HashMap, HashSet};

use super::traffic::day::{self, NONE, OTHER, Part};
use super::traffic::{self, DAY, Rollups, Scope, StoredDay};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use linkdeck_domain::{
    Bucket, DIMENSIONS, Dimension, Error, Id, Period, PeriodSpec, Preset, Result, Stats,
    StatsQuery, StatsScope, TopLink, ValueCount, top_values,
};

impl super::LocalService {
    /// Answers `query` for `owner`, reading dates in `tz` (the backend's own zone, or the one an
    /// API caller asked for).
    pub async fn stats_in(&self, owner: Id, query: &StatsQuery, tz: TimeZone) -> Result<Stats> {
        let (query, now) = (query.clone(), self.now());
        self.read_rollups(move |rollups| compute(rollups, owner, &query, now, &tz))
            .await
    }

    /// The clicks `owner`'s links in `scope` have counted in all, dated in the history or not.
    pub async fn counted_clicks(&self, owner: Id, scope: StatsScope) -> Result<u64> {
        self.read_rollups(move |rollups| {
            owned(rollups, owner, &scope)?;
            rollups.counted_clicks(owner, &scope)
        })
        .await
    }

    /// Runs `f` over the rollups in one snapshot of the database: consistent figures, and on
    /// SQLite one lock instead of one per statement.
    pub(super) async fn read_rollups<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Rollups) -> Result<T> + Send + 'static,
    {
        self.store.snapshot(move |tx| f(tx)).await
    }
}

/// Whose rows a question reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Source {
    Link {
        owner: Id,
        link: Id,
    },
    Scope(Scope, Id),
    /// A tag's links: their own rows, summed.
    Links {
        owner: Id,
        links: Vec<Id>,
    },
}

/// Up to this many links, a tag's rows are read link by link; past it, by one pass over every
/// link row of the owner in the period, kept where the link is the tag's.
const LINK_BY_LINK_MAX: usize = 256;

/// `[from, to)` in unix seconds.
#[derive(Debug, Clone, Copy)]
struct Window {
    from: i64,
    to: i64,
}

const ALL_HOURS: u32 = (1 << 24) - 1;

impl Window {
    fn of(from: Timestamp, to: Timestamp) -> Window {
        Window {
            from: from.as_second(),
            to: to.as_second(),
        }
    }

    /// The hours of UTC day `day` that start inside the window.
    fn mask(&self, day: i64) -> u32 {
        let start = day * DAY;
        if start >= self.from && start + DAY <= self.to {
            return ALL_HOURS;
        }
        (0..24)
            .filter(|h| {
                let t = start + h * 3600;
                t >= self.from && t < self.to
            })
            .fold(0, |m, h| m | 1 << h)
    }

    fn days(&self) -> (i64, i64) {
        (traffic::day_of(self.from), traffic::day_of(self.to - 1))
    }
}

/// The clicks of a stored day inside `mask`.
fn clicks_in(d: &StoredDay<'_>, mask: u32) -> Result<u64> {
    match mask {
        0 => Ok(0),
        ALL_HOURS => Ok(d.clicks),
        mask => {
            let hours = day::hours(d.data).map_err(damaged)?;
            Ok(hours
                .iter()
                .enumerate()
                .filter(|(h, _)| mask & 1 << h != 0)
                .map(|(_, &n)| u64::from(n))
                .sum())
        }
    }
}

fn damaged(e: String) -> Error {
    Error::Unavailable(format!("a traffic row is damaged: {e}"))
}

/// Whether `scope` is `owner`'s: another owner's (or a missing) link, space or domain, or a
/// tag none of the owner's links carries, is not found.
pub(super) fn owned(r: &dyn Rollups, owner: Id, scope: &StatsScope) -> Result<()> {
    if !r.owns(owner, scope)? {
        let what = match scope {
            StatsScope::Link(id) => format!("link {id}"),
            StatsScope::Space(id) => format!("space {id}"),
            StatsScope::Domain(id) => format!("domain {id}"),
            StatsScope::Tag(tag) => format!("tag {tag}"),
            StatsScope::Account => format!("account {owner}"),
        };
        return Err(Error::not_found(what));
    }
    Ok(())
}

/// Where `scope`'s rows are, once it is found to be `owner`'s.
pub(super) fn source(r: &dyn Rollups, owner: Id, scope: &StatsScope) -> Result<Source> {
    owned(r, owner, scope)?;
    Ok(match scope {
        StatsScope::Link(link) => Source::Link { owner, link: *link },
        StatsScope::Space(id) => Source::Scope(Scope::Space, *id),
        StatsScope::Domain(id) => Source::Scope(Scope::Domain, *id),
        StatsScope::Tag(tag) => Source::Links {
            owner,
            links: r.tagged_ids(owner, tag)?,
        },
        StatsScope::Account => Source::Scope(Scope::Owner, owner),
    })
}

/// Calls `f` with each stored day of `source` from `first` to `last`: the link's or the
/// scope's oldest first; a tag's links' in no set order, with the link it is of.
fn each_day(
    r: &dyn Rollups,
    source: &Source,
    first: i64,
    last: i64,
    mut f: impl FnMut(Option<Id>, StoredDay<'_>) -> Result<()>,
) -> Result<()> {
    match source {
        Source::Link { owner, link } => {
            r.link_days(*owner, *link, first, last, &mut |d| f(None, d))
        }
        Source::Scope(scope, id) => r.scope_days(*scope, *id, first, last, &mut |d| f(None, d)),
        Source::Links { owner, links } if links.len() <= LINK_BY_LINK_MAX => {
            for &link in links {
                r.link_days(*owner, link, first, last, &mut |d| f(Some(link), d))?;
            }
            Ok(())
        }
        Source::Links { owner, links } => {
            let members: HashSet<&Id> = links.iter().collect();
            let mut failed = None;
            r.owner_link_days(*owner, first, last, &mut |link, d| {
                if failed.is_none() && members.contains(&link) {
                    failed = f(Some(link), d).err();
                }
            })?;
            failed.map_or(Ok(()), Err)
        }
    }
}

/// The first hour with traffic of `source`.
fn first_traffic(r: &dyn Rollups, source: &Source) -> Result<Option<Timestamp>> {
    let first = match source {
        Source::Link { owner, link } => r.first_link_day(*owner, *link)?,
        Source::Scope(scope, id) => r.first_scope_day(*scope, *id)?,
        Source::Links { owner, .. } => {
            // The earliest day of any of its links, no earlier than the owner's first.
            let Some((from, _)) = r.first_scope_day(Scope::Owner, *owner)? else {
                return Ok(None);
            };
            let mut first: Option<(i64, Vec<u8>)> = None;
            each_day(r, source, from, i64::MAX, |_, d| {
                if d.clicks > 0 && first.as_ref().is_none_or(|f| d.day < f.0) {
                    first = Some((d.day, d.data.to_vec()));
                }
                Ok(())
            })?;
            first
        }
    };
    let Some((day, data)) = first else {
        return Ok(None);
    };
    let hours = day::hours(&data).map_err(damaged)?;
    let hour = hours.iter().position(|&n| n > 0).unwrap_or(0) as i64;
    Ok(Timestamp::from_second(day * DAY + hour * 3600).ok())
}

/// Answers `query` for `owner` at `now`, reading dates in `tz`.
fn compute(
    rollups: &dyn Rollups,
    owner: Id,
    query: &StatsQuery,
    now: Timestamp,
    tz: &TimeZone,
) -> Result<Stats> {
    query.validate()?;
    let source = source(rollups, owner, &query.scope)?;
    let first = match query.period {
        PeriodSpec::Preset {
            preset: Preset::All,
            ..
        } => first_traffic(rollups, &source)?,
        _ => None,
    };
    let period = Period::resolve(query.period, now, tz, first)?;
    let current = Window::of(period.from, period.to);
    let previous = period.previous.map(|(f, t)| Window::of(f, t));
    let first_day = previous.map_or(current.days().0, |p| p.days().0.min(current.days().0));
    let last_day = current.days().1;

    let mut total = 0u64;
    let mut before = 0u64;
    let mut timeline = vec![0u64; period.buckets.len()];
    // Codes are small, dense numbers: a vector indexed by code counts faster than a map.
    let mut values: [Vec<u64>; DIMENSIONS] = Default::default();
    let wanted: Vec<bool> = Dimension::ALL.iter().map(|d| query.wants(*d)).collect();
    let any_value = wanted.iter().any(|w| *w);
    // A tag's links' clicks in the period, for its top links.
    let mut per_link: HashMap<Id, u64> = HashMap::new();
    each_day(rollups, &source, first_day, last_day, |link, d| {
        if let Some(p) = previous {
            before += clicks_in(&d, p.mask(d.day))?;
        }
        let mask = current.mask(d.day);
        if mask == 0 {
            return Ok(());
        }
        if let Some(link) = link {
            *per_link.entry(link).or_default() += clicks_in(&d, mask)?;
        }
        day::read(d.data, mask, any_value, |part| match part {
            Part::Hour(h, n) => {
                total += u64::from(n);
                let at =
                    Timestamp::from_second(d.day * DAY + h as i64 * 3600).unwrap_or(period.from);
                if let Some(i) = period.bucket_of(at) {
                    timeline[i] += u64::from(n);
                }
            }
            Part::Value {
                dim, code, count, ..
            } if wanted[dim] => {
                let slot = usize::try_from(code).unwrap_or(usize::MAX);
                let counts = &mut values[dim];
                if slot >= counts.len() {
                    counts.resize(slot.saturating_add(1).min(MAX_CODE), 0);
                }
                if let Some(n) = counts.get_mut(slot) {
                    *n += count;
                }
            }
            Part::Value { .. } => {}
        })
        .map_err(damaged)
    })?;

    // Visits no rule sent are not stored by the rule (see `day::RULE`): they are the rest.
    let rule = Dimension::Rule.index();
    if wanted[rule] {
        let counts = &mut values[rule];
        let sent: u64 = counts.iter().sum();
        if counts.is_empty() {
            counts.push(0);
        }
        counts[day::NONE as usize] = total.saturating_sub(sent);
    }
    let mut breakdowns = Vec::new();
    for dim in Dimension::ALL {
        if !wanted[dim.index()] {
            continue;
        }
        breakdowns.push(breakdown(
            rollups,
            dim,
            &values[dim.index()],
            query.top as usize,
        )?);
    }
    let top_links = if query.wants_top_links() {
        Some(top_links(
            rollups,
            owner,
            &source,
            current,
            total,
            per_link,
            query.top as usize,
        )?)
    } else {
        None
    };
    Ok(Stats {
        scope: query.scope.clone(),
        from: period.from,
        to: period.to,
        interval: period.interval,
        total,
        previous: previous.map(|_| before),
        timeline: if query.wants_timeline() {
            period
                .buckets
                .iter()
                .zip(timeline)
                .map(|(&start, clicks)| Bucket { start, clicks })
                .collect()
        } else {
            Vec::new()
        },
        breakdowns,
        top_links,
    })
}

/// Value codes counted at most (a damaged row naming a larger one counts nothing).
const MAX_CODE: usize = 1 << 24;

/// The top `top` values of one dimension, named; [`OTHER`] joins the remainder.
fn breakdown(
    rollups: &dyn Rollups,
    dim: Dimension,
    counts: &[u64],
    top: usize,
) -> Result<linkdeck_domain::Breakdown> {
    let other = counts.get(OTHER as usize).copied().unwrap_or(0);
    let mut ranked: Vec<(u64, u64)> = counts
        .iter()
        .enumerate()
        .filter(|(code, n)| *code as u64 != OTHER && **n > 0)
        .map(|(c, &n)| (c as u64, n))
        .collect();
    ranked.sort_by_key(|r| std::cmp::Reverse(r.1));
    // Name only what can make the list: the top, and values tied with its last.
    let cutoff = ranked.get(top.saturating_sub(1)).map_or(0, |r| r.1);
    let (named, rest): (Vec<_>, Vec<_>) = ranked.into_iter().partition(|r| r.1 >= cutoff);
    let codes: Vec<u64> = named.iter().map(|r| r.0).collect();
    let names = rollups.names(&codes)?;
    let list = named
        .into_iter()
        .map(|(code, clicks)| ValueCount {
            value: if code == NONE {
                None
            } else {
                names.get(&code).cloned().flatten()
            },
            clicks,
        })
        .collect();
    Ok(top_values(
        dim,
        list,
        other + rest.iter().map(|r| r.1).sum::<u64>(),
        top,
    ))
}

/// Below this many clicks of the owner in a period, the top links are found by reading every
/// link row of the period; above it, by asking the links with the most clicks first.
const SCAN_MAX: u64 = 100_000;

/// The links of a space, domain, tag or account with the most clicks in `window` (`total` of
/// them in all), most first; a tag's are `per_link`, summed as its figures were.
fn top_links(
    rollups: &dyn Rollups,
    owner: Id,
    source: &Source,
    window: Window,
    total: u64,
    per_link: HashMap<Id, u64>,
    k: usize,
) -> Result<Vec<TopLink>> {
    if total == 0 {
        return Ok(Vec::new());
    }
    let (scope, scope_id) = match *source {
        Source::Link { .. } => return Ok(Vec::new()),
        Source::Links { .. } => return named(rollups, per_link.into_iter().collect(), k),
        Source::Scope(scope, id) => (scope, id),
    };
    let (first, last) = window.days();
    let owner_total = if scope == Scope::Owner {
        total
    } else {
        let mut n = 0;
        rollups.scope_days(Scope::Owner, owner, first, last, &mut |d| {
            n += clicks_in(&d, window.mask(d.day))?;
            Ok(())
        })?;
        n
    };
    let counts: Vec<(Id, u64)> = if owner_total <= SCAN_MAX {
        scan(rollups, owner, scope, scope_id, window)?
    } else {
        walk(rollups, owner, scope, scope_id, window, total, k)?
    };
    named(rollups, counts, k)
}

/// The `k` links of `counts` with the most clicks, most first (ties by id), with their aliases
/// and URLs.
fn named(rollups: &dyn Rollups, mut counts: Vec<(Id, u64)>, k: usize) -> Result<Vec<TopLink>> {
    counts.retain(|c| c.1 > 0);
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts.truncate(k);
    let mut out = Vec::with_capacity(counts.len());
    for (id, clicks) in counts {
        if let Some((alias, url)) = rollups.alias_and_url(id)? {
            out.push(TopLink {
                id,
                alias,
                url,
                clicks,
            });
        }
    }
    Ok(out)
}

/// Every link row of the owner in the window, summed per link of the scope.
fn scan(
    rollups: &dyn Rollups,
    owner: Id,
    scope: Scope,
    scope_id: Id,
    window: Window,
) -> Result<Vec<(Id, u64)>> {
    let members: Option<HashSet<Id>> = match scope {
        Scope::Owner => None,
        Scope::Space | Scope::Domain => Some(rollups.member_ids(owner, scope, scope_id)?),
    };
    let (first, last) = window.days();
    let mut sums: HashMap<Id, u64> = HashMap::new();
    let mut failed = None;
    rollups.owner_link_days(owner, first, last, &mut |link, d| {
        if members.as_ref().is_some_and(|m| !m.contains(&link)) {
            return;
        }
        match clicks_in(&d, window.mask(d.day)) {
            Ok(0) => {}
            Ok(n) => *sums.entry(link).or_default() += n,
            Err(e) => failed = Some(e),
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(sums.into_iter().collect())
}

/// Links of the scope in order of all-time clicks, each summed over the window, until no link
/// left can beat the `k`th found (its all-time clicks are fewer) or every click of the window
/// (`total`) is accounted for.
fn walk(
    rollups: &dyn Rollups,
    owner: Id,
    scope: Scope,
    scope_id: Id,
    window: Window,
    total: u64,
    k: usize,
) -> Result<Vec<(Id, u64)>> {
    let (first, last) = window.days();
    let mut found: Vec<(Id, u64)> = Vec::new();
    // The k best so far, for the stop rule.
    let mut best: Vec<u64> = Vec::new();
    let mut seen = 0u64;
    let mut consider = |link: Id, clicks: i64| -> Result<bool> {
        let bound = clicks.max(0) as u64;
        if seen >= total || (best.len() >= k && bound < best[k - 1]) {
            return Ok(false);
        }
        let mut n = 0;
        rollups.link_days(owner, link, first, last, &mut |d| {
            n += clicks_in(&d, window.mask(d.day))?;
            Ok(())
        })?;
        if n > 0 {
            seen += n;
            found.push((link, n));
            let at = best.partition_point(|&b| b >= n);
            best.insert(at, n);
            best.truncate(k);
        }
        Ok(true)
    };
    if scope != Scope::Owner {
        // A space's or domain's links, most clicks first, from its own index.
        let mut members = rollups.members_with_clicks(owner, scope, scope_id)?;
        members.sort_by_key(|(id, clicks)| (std::cmp::Reverse(*clicks), std::cmp::Reverse(*id)));
        for (link, clicks) in members {
            if !consider(link, clicks)? {
                break;
            }
        }
        return Ok(found);
    }
    // The owner's links, most clicks first, read from the clicks index in steps.
    let mut cursor = (i64::MAX, i64::MAX);
    loop {
        let batch = rollups.links_by_clicks(owner, cursor, 256)?;
        if batch.is_empty() {
            return Ok(found);
        }
        for (link, clicks) in batch {
            cursor = (clicks, link);
            if !consider(link, clicks)? {
                return Ok(found);
            }
        }
    }
}
