//! How the traffic reports (`stats`, `stats --orphans`) say their figures: dates of buckets,
//! shares, bars and the period in words.

use crate::domain::{Interval, PeriodSpec, Preset};

/// A timeline bucket as a spreadsheet reads it: `2026-11-22T14:00`, `2026-11-22`, `2026-11`.
pub fn bucket_date(interval: Interval, start: jiff::Timestamp, tz: &jiff::tz::TimeZone) -> String {
    let z = start.to_zoned(tz.clone());
    match interval {
        Interval::Hour => z.strftime("%Y-%m-%dT%H:%M"),
        Interval::Day => z.strftime("%Y-%m-%d"),
        Interval::Month => z.strftime("%Y-%m"),
    }
    .to_string()
}

/// `45 %` of `total`.
pub fn share(n: u64, total: u64) -> String {
    if total == 0 {
        return "-".into();
    }
    format!("{:.0} %", n as f64 * 100.0 / total as f64)
}

/// A bar of up to `width` blocks for `n` out of `max`.
pub fn bar(n: u64, max: u64, width: usize) -> String {
    if max == 0 || n == 0 {
        return String::new();
    }
    let cells = ((n as f64 / max as f64) * width as f64).round().max(1.0) as usize;
    "█".repeat(cells.min(width))
}

/// The period in words: `the last 7 days (2026-11-21 – 2026-11-27, Europe/Berlin)`.
pub fn period_words(
    (from, to, interval): (jiff::Timestamp, jiff::Timestamp, Interval),
    period: PeriodSpec,
    tz: &jiff::tz::TimeZone,
) -> String {
    let range = crate::domain::Period {
        from,
        to,
        interval,
        buckets: Vec::new(),
        previous: None,
    }
    .dates(tz);
    let when = match period {
        PeriodSpec::Preset {
            preset: Preset::All,
            ..
        } => "all time".to_owned(),
        PeriodSpec::Preset { preset, back: 0 } => format!("the last {}", preset.words()),
        PeriodSpec::Preset { preset, back } => format!("{} × {} back", back, preset.words()),
        PeriodSpec::Dates { .. } => "dates".to_owned(),
    };
    let zone = tz.iana_name().unwrap_or("local time");
    format!("{when} ({} – {}, {zone})", range.0, range.1)
}
