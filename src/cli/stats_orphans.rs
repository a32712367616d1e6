//! `linkdeck stats --orphans`: requests no link answered (the root, unknown aliases, other
//! paths) on the account's domains and the server's own host, over the same periods as
//! `stats`; a table, or `--json` (the record `GET /api/linkdeck/orphans` answers).

use super::context::Context;
use super::error::CliResult;
use super::output::{Table, plural, print, print_json, thousands};
use super::stats_words::{bar, bucket_date, period_words, share};
use crate::domain::{OrphanKind, OrphanStats, PeriodSpec, StatsQuery, ValueCount};

pub async fn run(ctx: &Context, query: StatsQuery) -> CliResult {
    let backend = ctx.backend().await?;
    let stats = backend.orphan_stats(&query).await?;
    if ctx.json {
        return Ok(print_json(&stats)?);
    }
    Ok(print(&report(&stats, query.period, ctx.timezone()))?)
}

fn report(stats: &OrphanStats, period: PeriodSpec, tz: &jiff::tz::TimeZone) -> String {
    let words = period_words((stats.from, stats.to, stats.interval), period, tz);
    let mut out = format!(
        "orphan visits · {words}\n{}\n",
        plural(stats.total, "visit")
    );
    if stats.total == 0 {
        return out;
    }
    let max = stats.timeline.iter().map(|b| b.clicks).max().unwrap_or(0);
    let mut table = Table::new(&[("WHEN", 16, false), ("VISITS", 12, true), ("", 30, false)]);
    for b in stats.timeline.iter().filter(|b| b.clicks > 0) {
        table.row(vec![
            bucket_date(stats.interval, b.start, tz),
            thousands(b.clicks),
            bar(b.clicks, max, 30),
        ]);
    }
    out.push('\n');
    out.push_str(&table.render());
    let kinds: Vec<ValueCount> = stats
        .kinds
        .iter()
        .map(|v| ValueCount {
            value: v
                .value
                .as_deref()
                .map(|k| OrphanKind::label_of(k).to_owned()),
            clicks: v.clicks,
        })
        .collect();
    for (heading, values) in [
        ("KIND", &kinds),
        ("PATH", &stats.paths),
        ("REFERRER", &stats.referrers),
        ("COUNTRY", &stats.countries),
    ] {
        if values.is_empty() {
            continue;
        }
        let mut table = Table::new(&[
            (heading, 40, false),
            ("VISITS", 12, true),
            ("SHARE", 5, true),
        ]);
        for v in values {
            table.row(vec![
                v.value.clone().unwrap_or_default(),
                thousands(v.clicks),
                share(v.clicks, stats.total),
            ]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    out
}
