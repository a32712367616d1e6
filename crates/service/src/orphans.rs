//! Orphan visits as an owner reads them: the rows of the owner's domains and of the server's
//! own host (which every owner's links share), over a period. The rows are per UTC day, so a
//! period's kinds, paths, referrers and countries take in whole UTC days; its total and
//! timeline are exact to the UTC hour.

use std::collections::HashMap;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use linkdeck_domain::{
    Bucket, Id, OTHER, OrphanStats, Period, PeriodSpec, Preset, Result, StatsQuery, ValueCount,
};
use linkdeck_store::Tx;
use linkdeck_store::orphans::{OWN_HOST, OrphanDim, OrphanRow};
use linkdeck_store::traffic::{self, DAY};

/// Domains read per page while gathering an owner's hosts.
const DOMAIN_PAGE: u32 = 500;

impl super::LocalService {
    /// Answers `query`'s period (its scope is the account) for `owner`, in `tz`.
    pub async fn orphan_stats_in(
        &self,
        owner: Id,
        query: &StatsQuery,
        tz: TimeZone,
    ) -> Result<OrphanStats> {
        query
            .validate()
            .map_err(linkdeck_domain::Error::Validation)?;
        let (period, top, now) = (query.period, query.top as usize, self.now());
        self.store
            .snapshot(move |tx| compute(tx, owner, period, top, now, &tz))
            .await
    }
}

fn hosts(tx: &dyn Tx, owner: Id) -> Result<Vec<Id>> {
    let mut out = vec![OWN_HOST];
    let mut offset = 0u64;
    loop {
        let (page, total) = tx.domains(owner, offset, DOMAIN_PAGE)?;
        offset += page.len() as u64;
        out.extend(page.iter().map(|d| d.id));
        if page.is_empty() || offset >= total {
            return Ok(out);
        }
    }
}

fn compute(
    tx: &dyn Tx,
    owner: Id,
    spec: PeriodSpec,
    top: usize,
    now: Timestamp,
    tz: &TimeZone,
) -> Result<OrphanStats> {
    let hosts = hosts(tx, owner)?;
    let today = traffic::day_of(now.as_second());
    let mut all: Option<Vec<OrphanRow>> = None;
    let first_traffic = match spec {
        PeriodSpec::Preset {
            preset: Preset::All,
            ..
        } => {
            let rows = tx.orphan_rows(&hosts, 0, today + 1)?;
            let first = rows.iter().map(|r| r.day).min();
            all = Some(rows);
            first.and_then(|d| Timestamp::from_second(d * DAY).ok())
        }
        _ => None,
    };
    let period = Period::resolve(spec, now, tz, first_traffic)
        .map_err(linkdeck_domain::Error::Validation)?;
    let (from, to) = (period.from.as_second(), period.to.as_second());
    let rows = match all {
        Some(rows) => rows,
        None => tx.orphan_rows(&hosts, traffic::day_of(from), traffic::day_of(to - 1))?,
    };
    let mut timeline: Vec<Bucket> = period
        .buckets
        .iter()
        .map(|&start| Bucket { start, clicks: 0 })
        .collect();
    let mut total = 0u64;
    let mut sums: HashMap<OrphanDim, HashMap<String, u64>> = HashMap::new();
    for row in rows {
        if row.dim == OrphanDim::Hour {
            let Ok(hour) = row.value.parse::<i64>() else {
                continue;
            };
            let at = row.day * DAY + hour * 3600;
            let Some(i) = Timestamp::from_second(at)
                .ok()
                .and_then(|t| period.bucket_of(t))
            else {
                continue;
            };
            timeline[i].clicks += row.visits;
            total += row.visits;
        } else {
            *sums
                .entry(row.dim)
                .or_default()
                .entry(row.value)
                .or_default() += row.visits;
        }
    }
    let mut top_of = |dim| ranked(sums.remove(&dim).unwrap_or_default(), top);
    Ok(OrphanStats {
        from: period.from,
        to: period.to,
        interval: period.interval,
        total,
        kinds: top_of(OrphanDim::Kind),
        paths: top_of(OrphanDim::Path),
        referrers: top_of(OrphanDim::Referrer),
        countries: top_of(OrphanDim::Country),
        timeline,
    })
}

/// Most visits first (ties by value), `top` of them; the rest summed into [`OTHER`].
fn ranked(values: HashMap<String, u64>, top: usize) -> Vec<ValueCount> {
    let mut list: Vec<(String, u64)> = values.into_iter().filter(|(_, n)| *n > 0).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let rest: u64 = list.iter().skip(top).map(|(_, n)| n).sum();
    list.truncate(top);
    if rest > 0 {
        match list.iter_mut().find(|(v, _)| v == OTHER) {
            Some(other) => other.1 += rest,
            None => list.push((OTHER.to_owned(), rest)),
        }
    }
    list.into_iter()
        .map(|(value, clicks)| ValueCount {
            value: Some(value),
            clicks,
        })
        .collect()
}
