//! `linkdeck stats`: the traffic of a link, a space, a domain or the whole account, as tables for
//! people, the API's stats record with `--json`, or CSV for spreadsheets.

use std::io;

use clap::Args;
use jiff::civil::Date;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::output::{Table, plural, print, print_json, thousands};
use super::scope_args::{ScopeArgs, parse_period};
use super::stats_words::{bar, bucket_date, period_words, share};
use crate::domain::{
    Breakdown, Dimension, Interval, PeriodSpec, Preset, Stats, StatsPart, StatsQuery, StatsScope,
    TOP_DEFAULT, TOP_MAX,
};

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// 24h, 7d, 30d, 90d, 12m or all, ending now.
    #[arg(long, value_parser = parse_period, conflicts_with_all = ["from", "to"])]
    pub period: Option<Preset>,
    /// Step the period this many periods back (`--period 7d --back 1`: the week before).
    #[arg(long, value_name = "N", default_value_t = 0, conflicts_with_all = ["from", "to"])]
    pub back: u32,
    /// The first day (YYYY-MM-DD, in the profile's time zone); with --to.
    #[arg(long, value_name = "DATE", requires = "to")]
    pub from: Option<Date>,
    /// The last day, included; with --from.
    #[arg(long, value_name = "DATE", requires = "from")]
    pub to: Option<Date>,
    /// Only one part: time (the clicks over time), country, platform, browser, referrer or
    /// language.
    #[arg(long, value_name = "PART", value_parser = parse_by)]
    pub by: Option<By>,
    /// How many values (and top links) to list, 1 to 100.
    #[arg(long, value_name = "N", default_value_t = TOP_DEFAULT)]
    pub top: u32,
    /// Rows for spreadsheets: the timeline, or the --by part.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Orphan visits instead: requests to the root, unknown aliases and other paths of the
    /// account's domains and the server's own host, which no link answered.
    #[arg(long, conflicts_with_all = ["link", "space", "domain", "tag", "by", "csv"])]
    pub orphans: bool,
}

/// What `--by` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Time,
    Dimension(Dimension),
}

fn parse_by(s: &str) -> Result<By, String> {
    if s.trim().eq_ignore_ascii_case("time") {
        return Ok(By::Time);
    }
    Dimension::parse(s)
        .map(By::Dimension)
        .ok_or_else(|| "expected time, country, platform, browser, referrer or language".into())
}

pub async fn run(ctx: &Context, args: StatsArgs) -> CliResult {
    if !(1..=TOP_MAX).contains(&args.top) {
        return Err(CliError::usage(format!(
            "--top must be from 1 to {TOP_MAX}, not {}",
            args.top
        )));
    }
    let period = match (args.from, args.to) {
        (Some(from), Some(to)) => PeriodSpec::Dates { from, to },
        _ => PeriodSpec::Preset {
            preset: args.period.unwrap_or_default(),
            back: args.back,
        },
    };
    if args.orphans {
        let mut query = StatsQuery::new(StatsScope::Account, period);
        query.top = args.top;
        return super::stats_orphans::run(ctx, query).await;
    }
    let backend = ctx.backend().await?;
    let scope = args.scope.scope(backend.as_ref()).await?;
    let query = StatsQuery {
        scope,
        period,
        only: args.by.map(|by| match by {
            By::Time => StatsPart::Clicks,
            By::Dimension(d) => StatsPart::Dimension(d),
        }),
        top: args.top,
    };
    let stats = backend.stats(&query).await?;
    let tz = ctx.timezone();
    if ctx.json {
        return Ok(print_json(&crate::wire::stats::record(&stats, tz)["data"])?);
    }
    if args.csv {
        return csv(&stats, args.by.unwrap_or(By::Time), tz);
    }
    let name = args.scope.name();
    Ok(print(&report(&stats, &name, period, args.by, tz))?)
}

/// The total, its change, and the period in words.
fn headline(stats: &Stats, name: &str, period: PeriodSpec, tz: &jiff::tz::TimeZone) -> String {
    let words = period_words((stats.from, stats.to, stats.interval), period, tz);
    let mut out = format!("{name} · {words}\n");
    out.push_str(&plural(stats.total, "click"));
    match (stats.change_percent(), stats.previous) {
        (Some(p), Some(before)) => {
            let arrow = match p {
                p if p > 0 => format!("▲ {p} %"),
                p if p < 0 => format!("▼ {} %", -p),
                _ => "±0 %".to_owned(),
            };
            out.push_str(&format!(
                "  {arrow} on the period before ({})",
                thousands(before)
            ));
        }
        (None, Some(0)) => out.push_str("  (none the period before)"),
        _ => {}
    }
    out.push('\n');
    out
}

fn report(
    stats: &Stats,
    name: &str,
    period: PeriodSpec,
    by: Option<By>,
    tz: &jiff::tz::TimeZone,
) -> String {
    let mut out = headline(stats, name, period, tz);
    if matches!(by, None | Some(By::Time)) && !stats.timeline.is_empty() {
        let max = stats.timeline.iter().map(|b| b.clicks).max().unwrap_or(0);
        let heading = match stats.interval {
            Interval::Hour => "HOUR",
            Interval::Day => "DAY",
            Interval::Month => "MONTH",
        };
        let mut table = Table::new(&[(heading, 16, false), ("CLICKS", 12, true), ("", 30, false)]);
        for b in &stats.timeline {
            table.row(vec![
                bucket_date(stats.interval, b.start, tz),
                thousands(b.clicks),
                bar(b.clicks, max, 30),
            ]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    for b in &stats.breakdowns {
        // Which rule sent the clicks says something only when a rule sent some (or asked).
        let unruled = b.dimension == Dimension::Rule
            && b.other == 0
            && b.top.iter().all(|v| v.value.is_none())
            && by != Some(By::Dimension(Dimension::Rule));
        if unruled {
            continue;
        }
        out.push('\n');
        out.push_str(&breakdown_table(b).render());
    }
    if let Some(links) = stats.top_links.as_ref().filter(|l| !l.is_empty()) {
        let mut table = Table::new(&[
            ("TOP LINKS", 24, false),
            ("CLICKS", 12, true),
            ("SHARE", 5, true),
            ("DESTINATION", 48, false),
        ]);
        for l in links {
            table.row(vec![
                l.alias.clone(),
                thousands(l.clicks),
                share(l.clicks, stats.total),
                l.url.clone(),
            ]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    out
}

fn breakdown_table(b: &Breakdown) -> Table {
    let total = b.total();
    let mut table = Table::new(&[
        (title(b.dimension), 32, false),
        ("CLICKS", 12, true),
        ("SHARE", 5, true),
    ]);
    for v in &b.top {
        table.row(vec![
            b.label(v),
            thousands(v.clicks),
            share(v.clicks, total),
        ]);
    }
    if b.other > 0 {
        table.row(vec![
            crate::domain::OTHER.to_owned(),
            thousands(b.other),
            share(b.other, total),
        ]);
    }
    table
}

/// Table headings are upper case, like the other commands'.
fn title(d: Dimension) -> &'static str {
    match d {
        Dimension::Country => "COUNTRY",
        Dimension::Platform => "PLATFORM",
        Dimension::Browser => "BROWSER",
        Dimension::Referrer => "REFERRER",
        Dimension::Language => "LANGUAGE",
        Dimension::Rule => "SENT BY",
    }
}

fn csv(stats: &Stats, by: By, tz: &jiff::tz::TimeZone) -> CliResult {
    let mut out = ::csv::Writer::from_writer(io::stdout().lock());
    let failed = |e: ::csv::Error| CliError::from(io::Error::from(e));
    match by {
        By::Time => {
            out.write_record(["start", "clicks"]).map_err(failed)?;
            for b in &stats.timeline {
                out.write_record([
                    bucket_date(stats.interval, b.start, tz),
                    b.clicks.to_string(),
                ])
                .map_err(failed)?;
            }
        }
        By::Dimension(d) => {
            out.write_record([d.as_str(), "clicks"]).map_err(failed)?;
            if let Some(b) = stats.breakdown(d) {
                for v in &b.top {
                    out.write_record([b.label(v), v.clicks.to_string()])
                        .map_err(failed)?;
                }
                if b.other > 0 {
                    out.write_record([crate::domain::OTHER.to_owned(), b.other.to_string()])
                        .map_err(failed)?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_shares_read_well() {
        assert_eq!(bar(0, 10, 30), "");
        assert_eq!(bar(1, 1000, 30), "█", "a click always shows");
        assert_eq!(bar(10, 10, 30).chars().count(), 30);
        assert_eq!(share(1, 3), "33 %");
        assert_eq!(share(0, 0), "-");
        assert_eq!(parse_by("Referrer"), Ok(By::Dimension(Dimension::Referrer)));
        assert!(parse_by("city").is_err());
    }
}
