//! Traffic statistics: what is asked (a scope, a period in the profile's time zone, optionally
//! one part), how a period becomes instants and buckets, and the shape of the answer. Every
//! backend answers the same [`Stats`] for the same [`StatsQuery`].

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan, Zoned};
use serde::{Deserialize, Serialize};

use super::traffic::Dimension;
use super::{FieldErrors, Id};

/// Whose traffic.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "id")]
pub enum StatsScope {
    Link(Id),
    Space(Id),
    Domain(Id),
    /// The links that carry a tag (as [`tag`](super::tag) keeps it) now, their clicks from
    /// before it was put on included: a tag groups links, it does not date their traffic.
    Tag(String),
    /// Every link of the owner.
    Account,
}

/// The period choices of the app and the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Preset {
    #[serde(rename = "24h")]
    Hours24,
    #[serde(rename = "7d")]
    Days7,
    #[default]
    #[serde(rename = "30d")]
    Days30,
    #[serde(rename = "90d")]
    Days90,
    #[serde(rename = "12m")]
    Months12,
    #[serde(rename = "all")]
    All,
}

impl Preset {
    pub const ALL: [Preset; 6] = [
        Preset::Hours24,
        Preset::Days7,
        Preset::Days30,
        Preset::Days90,
        Preset::Months12,
        Preset::All,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Hours24 => "24h",
            Preset::Days7 => "7d",
            Preset::Days30 => "30d",
            Preset::Days90 => "90d",
            Preset::Months12 => "12m",
            Preset::All => "all",
        }
    }

    /// How the period reads in a sentence: "the previous 7 days".
    pub fn words(self) -> &'static str {
        match self {
            Preset::Hours24 => "24 hours",
            Preset::Days7 => "7 days",
            Preset::Days30 => "30 days",
            Preset::Days90 => "90 days",
            Preset::Months12 => "12 months",
            Preset::All => "all time",
        }
    }

    pub fn parse(s: &str) -> Option<Preset> {
        let s = s.trim();
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
    }

    /// The next choice, round.
    pub fn next(self) -> Preset {
        let i = Self::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
}

/// A period as asked: a preset (`back` steps it into the past, one period length at a time) or
/// two dates, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PeriodSpec {
    Preset { preset: Preset, back: u32 },
    Dates { from: Date, to: Date },
}

impl Default for PeriodSpec {
    fn default() -> Self {
        PeriodSpec::Preset {
            preset: Preset::default(),
            back: 0,
        }
    }
}

impl PeriodSpec {
    pub fn preset(preset: Preset) -> PeriodSpec {
        PeriodSpec::Preset { preset, back: 0 }
    }

    /// One period further back (`steps` > 0) or forward, never past the present. All time and
    /// dates do not step.
    pub fn stepped(self, steps: i32) -> PeriodSpec {
        match self {
            PeriodSpec::Preset { preset, back } if preset != Preset::All => PeriodSpec::Preset {
                preset,
                back: back.saturating_add_signed(steps),
            },
            other => other,
        }
    }
}

/// The longest span two dates may cover: bounds the work of one question.
pub const MAX_DAYS: i64 = 366 * 20;

/// The size of a timeline's buckets, chosen from the period's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interval {
    Hour,
    Day,
    Month,
}

impl Interval {
    /// Hours for a day or two, days up to about three months, months beyond.
    pub fn for_days(days: i64) -> Interval {
        match days {
            ..=2 => Interval::Hour,
            3..=92 => Interval::Day,
            _ => Interval::Month,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Hour => "hour",
            Interval::Day => "day",
            Interval::Month => "month",
        }
    }

    pub fn parse(s: &str) -> Option<Interval> {
        [Interval::Hour, Interval::Day, Interval::Month]
            .into_iter()
            .find(|i| i.as_str() == s.trim())
    }

    /// A bucket's start as a person reads it in `tz`: `14:00`, `Mar 3`, `Mar 2026`.
    pub fn label(self, start: Timestamp, tz: &TimeZone) -> String {
        let z = start.to_zoned(tz.clone());
        match self {
            Interval::Hour => z.strftime("%H:%M").to_string(),
            Interval::Day => z.strftime("%b %-d").to_string(),
            Interval::Month => z.strftime("%b %Y").to_string(),
        }
    }
}

/// A period resolved against a clock and a zone: `[from, to)`, its buckets and the period just
/// before it of the same length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub from: Timestamp,
    pub to: Timestamp,
    pub interval: Interval,
    /// Each bucket's start; the first is `from`, each runs to the next (the last to `to`).
    pub buckets: Vec<Timestamp>,
    /// `None` for all time.
    pub previous: Option<(Timestamp, Timestamp)>,
}

fn start_of(date: Date, tz: &TimeZone) -> Result<Timestamp, String> {
    date.to_zoned(tz.clone())
        .map(|z| z.timestamp())
        .map_err(|e| format!("is out of range: {e}"))
}

fn add_days(date: Date, days: i64) -> Result<Date, String> {
    date.checked_add(days.days())
        .map_err(|_| "is out of range".to_owned())
}

fn add_months(date: Date, months: i64) -> Result<Date, String> {
    date.checked_add(months.months())
        .map_err(|_| "is out of range".to_owned())
}

/// Bucket starts from `from` to `to` in `interval` steps of the zone's calendar: days and months
/// follow daylight-saving changes (a day may be 23 or 25 hours).
fn buckets(from: Timestamp, to: Timestamp, interval: Interval, tz: &TimeZone) -> Vec<Timestamp> {
    let mut out = Vec::new();
    match interval {
        Interval::Hour => {
            let mut at = from;
            while at < to {
                out.push(at);
                at += SignedDuration::from_hours(1);
            }
        }
        Interval::Day | Interval::Month => {
            let mut date = from.to_zoned(tz.clone()).date();
            let mut at = from;
            while at < to {
                out.push(at);
                let next = match interval {
                    Interval::Day => date.tomorrow().ok(),
                    _ => date.first_of_month().checked_add(1.month()).ok(),
                };
                let Some(next) = next else { break };
                let Ok(next_at) = start_of(next, tz) else {
                    break;
                };
                date = next;
                at = next_at;
            }
        }
    }
    out
}

/// `n` steps of the calendar (days, or months with `add` = [`add_months`]) ending with the one
/// that holds `anchor`, moved `back` periods into the past: the starts of the period before, of
/// the period, and of the step after it.
fn calendar(
    anchor: Date,
    n: i64,
    back: u32,
    add: fn(Date, i64) -> Result<Date, String>,
    tz: &TimeZone,
) -> Result<(Timestamp, Timestamp, Timestamp), FieldErrors> {
    let start_at = |date: Result<Date, String>| {
        date.and_then(|d| start_of(d, tz)).map_err(|e| {
            let mut errors = FieldErrors::default();
            errors.add("period", e);
            errors
        })
    };
    let end = add(anchor, 1 - n * i64::from(back));
    let start = end.clone().and_then(|e| add(e, -n));
    let before = start.clone().and_then(|s| add(s, -n));
    Ok((start_at(before)?, start_at(start)?, start_at(end)?))
}

impl Period {
    /// Resolves `spec` at `now` in `tz`. `first_traffic` is the earliest instant with recorded
    /// traffic, which is where all time starts.
    pub fn resolve(
        spec: PeriodSpec,
        now: Timestamp,
        tz: &TimeZone,
        first_traffic: Option<Timestamp>,
    ) -> Result<Period, FieldErrors> {
        let field = |name: &str, e: String| {
            let mut errors = FieldErrors::default();
            errors.add(name, e);
            errors
        };
        let today = now.to_zoned(tz.clone()).date();
        let (from, to, interval, previous) = match spec {
            PeriodSpec::Preset {
                preset: Preset::Hours24,
                back,
            } => {
                let z: Zoned = now.to_zoned(tz.clone());
                let hour = z
                    .with()
                    .minute(0)
                    .second(0)
                    .subsec_nanosecond(0)
                    .build()
                    .map(|z| z.timestamp())
                    .unwrap_or(now);
                let day = SignedDuration::from_hours(24);
                let to = hour + SignedDuration::from_hours(1)
                    - day * i32::try_from(back).unwrap_or(i32::MAX);
                (to - day, to, Interval::Hour, Some((to - day * 2, to - day)))
            }
            PeriodSpec::Preset {
                preset: preset @ (Preset::Days7 | Preset::Days30 | Preset::Days90),
                back,
            } => {
                let n = match preset {
                    Preset::Days7 => 7,
                    Preset::Days30 => 30,
                    _ => 90,
                };
                let (before, start, end) = calendar(today, n, back, add_days, tz)?;
                (start, end, Interval::Day, Some((before, start)))
            }
            PeriodSpec::Preset {
                preset: Preset::Months12,
                back,
            } => {
                let (before, start, end) =
                    calendar(today.first_of_month(), 12, back, add_months, tz)?;
                (start, end, Interval::Month, Some((before, start)))
            }
            PeriodSpec::Preset {
                preset: Preset::All,
                ..
            } => {
                let first = first_traffic.unwrap_or(now).min(now);
                let first_day = first.to_zoned(tz.clone()).date();
                let end = add_days(today, 1).map_err(|e| field("period", e))?;
                let days = (end - first_day).get_days().max(1) as i64;
                let interval = Interval::for_days(days);
                let start = match interval {
                    Interval::Month => first_day.first_of_month(),
                    _ => first_day,
                };
                let end = match interval {
                    Interval::Month => {
                        add_months(today.first_of_month(), 1).map_err(|e| field("period", e))?
                    }
                    _ => end,
                };
                let start = start_of(start, tz).map_err(|e| field("period", e))?;
                let end = start_of(end, tz).map_err(|e| field("period", e))?;
                (start, end, interval, None)
            }
            PeriodSpec::Dates { from, to } => {
                let mut errors = FieldErrors::default();
                if to < from {
                    errors.add("to", "must not be before from");
                } else if (to - from).get_days() as i64 >= MAX_DAYS {
                    errors.add(
                        "to",
                        format!("must be less than {MAX_DAYS} days after from"),
                    );
                }
                if !errors.is_empty() {
                    return Err(errors);
                }
                let days = (to - from).get_days() as i64 + 1;
                let end = add_days(to, 1).map_err(|e| field("to", e))?;
                let before = add_days(from, -days).map_err(|e| field("from", e))?;
                let start_at = start_of(from, tz).map_err(|e| field("from", e))?;
                let end_at = start_of(end, tz).map_err(|e| field("to", e))?;
                let before_at = start_of(before, tz).map_err(|e| field("from", e))?;
                (
                    start_at,
                    end_at,
                    Interval::for_days(days),
                    Some((before_at, start_at)),
                )
            }
        };
        Ok(Period {
            from,
            to,
            interval,
            buckets: buckets(from, to, interval, tz),
            previous,
        })
    }

    /// The index of the bucket holding `at`, if it is inside the period.
    pub fn bucket_of(&self, at: Timestamp) -> Option<usize> {
        if at < self.from || at >= self.to {
            return None;
        }
        Some(self.buckets.partition_point(|b| *b <= at).saturating_sub(1))
    }

    /// The first and last day of the period, as dates in `tz` (the last is included).
    pub fn dates(&self, tz: &TimeZone) -> (Date, Date) {
        let from = self.from.to_zoned(tz.clone()).date();
        let last = (self.to - SignedDuration::from_secs(1))
            .to_zoned(tz.clone())
            .date();
        (from, last.max(from))
    }
}

/// What a question asks for besides the totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatsPart {
    /// The timeline only (`name=clicks`).
    Clicks,
    /// One breakdown only.
    Dimension(Dimension),
}

impl StatsPart {
    /// The API's `name` values: `clicks`, `country`, `platform`, …
    pub fn parse(s: &str) -> Option<StatsPart> {
        if s.trim().eq_ignore_ascii_case("clicks") {
            return Some(StatsPart::Clicks);
        }
        Dimension::parse(s).map(StatsPart::Dimension)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StatsPart::Clicks => "clicks",
            StatsPart::Dimension(d) => d.as_str(),
        }
    }
}

/// Values listed per breakdown (and links per top list) unless asked otherwise.
pub const TOP_DEFAULT: u32 = 10;
/// The most a question may ask for.
pub const TOP_MAX: u32 = 100;

/// A question about traffic.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StatsQuery {
    pub scope: StatsScope,
    pub period: PeriodSpec,
    /// Everything when `None`.
    pub only: Option<StatsPart>,
    /// How many values each breakdown (and the top links) lists: 1 to [`TOP_MAX`].
    pub top: u32,
}

impl StatsQuery {
    pub fn new(scope: StatsScope, period: PeriodSpec) -> StatsQuery {
        StatsQuery {
            scope,
            period,
            only: None,
            top: TOP_DEFAULT,
        }
    }

    pub fn validate(&self) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::default();
        if !(1..=TOP_MAX).contains(&self.top) {
            errors.add("limit", format!("must be from 1 to {TOP_MAX}"));
        }
        errors.into_result(())
    }

    pub fn wants_timeline(&self) -> bool {
        matches!(self.only, None | Some(StatsPart::Clicks))
    }

    pub fn wants(&self, d: Dimension) -> bool {
        self.only.is_none() || self.only == Some(StatsPart::Dimension(d))
    }

    /// Top links are part of a space's, a domain's and the account's full answer.
    pub fn wants_top_links(&self) -> bool {
        self.only.is_none() && !matches!(self.scope, StatsScope::Link(_))
    }
}

/// One bucket of a timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub start: Timestamp,
    pub clicks: u64,
}

/// One value of a breakdown; `None` is a visit without it (unknown, or direct for referrers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueCount {
    pub value: Option<String>,
    pub clicks: u64,
}

/// The top values of one dimension and what the rest add up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breakdown {
    pub dimension: Dimension,
    /// Most clicks first, ties by value.
    pub top: Vec<ValueCount>,
    /// Clicks of every value not in `top` (values past the list, and values too many or too
    /// long to keep, which count as [`OTHER`](super::traffic::OTHER)).
    pub other: u64,
}

impl Breakdown {
    pub fn total(&self) -> u64 {
        self.top.iter().map(|v| v.clicks).sum::<u64>() + self.other
    }

    /// The value as a person reads it.
    pub fn label(&self, value: &ValueCount) -> String {
        match &value.value {
            Some(v) if self.dimension == Dimension::Country => super::country_by_code(v)
                .map(|c| c.name)
                .unwrap_or_else(|| v.clone()),
            Some(v) => v.clone(),
            None => self.dimension.none_label().to_owned(),
        }
    }
}

/// A link among the top links of a space, a domain or the account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopLink {
    pub id: Id,
    pub alias: String,
    pub url: String,
    pub clicks: u64,
}

/// The answer to a [`StatsQuery`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub scope: StatsScope,
    pub from: Timestamp,
    pub to: Timestamp,
    pub interval: Interval,
    /// Clicks in the period.
    pub total: u64,
    /// Clicks in the period of the same length just before; `None` for all time.
    pub previous: Option<u64>,
    /// Every bucket of the period, empty ones included (empty when not asked for).
    pub timeline: Vec<Bucket>,
    /// In [`Dimension::ALL`] order; only those asked for.
    pub breakdowns: Vec<Breakdown>,
    /// Most clicks in the period first; `None` for a link, or when not asked for.
    pub top_links: Option<Vec<TopLink>>,
}

impl Stats {
    pub fn breakdown(&self, d: Dimension) -> Option<&Breakdown> {
        self.breakdowns.iter().find(|b| b.dimension == d)
    }

    /// The change against the previous period in whole per cent, when there is one to compare.
    pub fn change_percent(&self) -> Option<i64> {
        let previous = self.previous.filter(|p| *p > 0)?;
        let change = (self.total as f64 - previous as f64) / previous as f64 * 100.0;
        Some(change.round() as i64)
    }
}

/// Sorts values most clicks first (ties by value) and keeps `top`, folding the rest into `other`.
pub fn top_values(
    dimension: Dimension,
    mut values: Vec<ValueCount>,
    mut other: u64,
    top: usize,
) -> Breakdown {
    values.retain(|v| v.clicks > 0);
    values.sort_by(|a, b| b.clicks.cmp(&a.clicks).then_with(|| a.value.cmp(&b.value)));
    if values.len() > top {
        other += values.drain(top..).map(|v| v.clicks).sum::<u64>();
    }
    Breakdown {
        dimension,
        top: values,
        other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ny() -> TimeZone {
        TimeZone::get("America/New_York").unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn seven_days_are_local_midnights_and_follow_a_daylight_saving_change() {
        // 2026-03-08 02:00 local: clocks go forward, that day has 23 hours.
        let now = at("2026-03-10T15:00:00Z");
        let p = Period::resolve(PeriodSpec::preset(Preset::Days7), now, &ny(), None).unwrap();
        assert_eq!(p.interval, Interval::Day);
        assert_eq!(p.from, at("2026-03-04T05:00:00Z"), "midnight EST");
        assert_eq!(p.to, at("2026-03-11T04:00:00Z"), "midnight EDT");
        assert_eq!(p.buckets.len(), 7);
        assert_eq!(p.buckets[4], at("2026-03-08T05:00:00Z"));
        assert_eq!(p.buckets[5], at("2026-03-09T04:00:00Z"), "23 hours later");
        assert_eq!(p.previous, Some((at("2026-02-25T05:00:00Z"), p.from)));
        assert_eq!(p.bucket_of(at("2026-03-09T03:59:59Z")), Some(4));
        assert_eq!(p.bucket_of(at("2026-03-09T04:00:00Z")), Some(5));
        assert_eq!(p.bucket_of(p.to), None);
    }

    #[test]
    fn twenty_four_hours_end_with_the_current_hour_and_step_back() {
        let now = at("2026-06-01T10:35:00Z");
        let p = Period::resolve(PeriodSpec::preset(Preset::Hours24), now, &ny(), None).unwrap();
        assert_eq!(p.to, at("2026-06-01T11:00:00Z"));
        assert_eq!(p.from, at("2026-05-31T11:00:00Z"));
        assert_eq!(p.buckets.len(), 24);
        let back = PeriodSpec::preset(Preset::Hours24).stepped(1);
        let q = Period::resolve(back, now, &ny(), None).unwrap();
        assert_eq!(q.to, p.from);
        assert_eq!(
            PeriodSpec::preset(Preset::Hours24).stepped(-1),
            PeriodSpec::preset(Preset::Hours24),
            "never past the present"
        );
    }

    #[test]
    fn twelve_months_are_calendar_months() {
        let now = at("2026-11-22T12:00:00Z");
        let p = Period::resolve(PeriodSpec::preset(Preset::Months12), now, &ny(), None).unwrap();
        assert_eq!(p.interval, Interval::Month);
        assert_eq!(p.from, at("2025-12-01T05:00:00Z"));
        assert_eq!(p.to, at("2026-12-01T05:00:00Z"));
        assert_eq!(p.buckets.len(), 12);
        assert_eq!(p.buckets[5], at("2026-05-01T04:00:00Z"));
        assert_eq!(Interval::Month.label(p.buckets[5], &ny()), "May 2026");
    }

    #[test]
    fn dates_include_both_ends_and_pick_their_interval() {
        let now = at("2026-11-22T12:00:00Z");
        let spec = PeriodSpec::Dates {
            from: "2026-11-01".parse().unwrap(),
            to: "2026-11-01".parse().unwrap(),
        };
        let p = Period::resolve(spec, now, &TimeZone::UTC, None).unwrap();
        assert_eq!((p.interval, p.buckets.len()), (Interval::Hour, 24));
        let spec = PeriodSpec::Dates {
            from: "2026-01-01".parse().unwrap(),
            to: "2026-11-30".parse().unwrap(),
        };
        let p = Period::resolve(spec, now, &TimeZone::UTC, None).unwrap();
        assert_eq!((p.interval, p.buckets.len()), (Interval::Month, 11));
        let bad = PeriodSpec::Dates {
            from: "2026-02-01".parse().unwrap(),
            to: "2026-01-01".parse().unwrap(),
        };
        let errors = Period::resolve(bad, now, &TimeZone::UTC, None).unwrap_err();
        assert!(errors.contains("to"));
    }

    #[test]
    fn all_time_starts_at_the_first_traffic() {
        let now = at("2026-11-22T12:00:00Z");
        let all = PeriodSpec::preset(Preset::All);
        let p =
            Period::resolve(all, now, &TimeZone::UTC, Some(at("2026-11-20T08:00:00Z"))).unwrap();
        assert_eq!((p.interval, p.buckets.len()), (Interval::Day, 3));
        assert_eq!(p.previous, None);
        let p =
            Period::resolve(all, now, &TimeZone::UTC, Some(at("2024-02-10T08:00:00Z"))).unwrap();
        assert_eq!(p.interval, Interval::Month);
        assert_eq!(p.from, at("2024-02-01T00:00:00Z"));
        assert_eq!(p.buckets.len(), 34);
        assert_eq!(all.stepped(3), all);
    }

    #[test]
    fn breakdowns_keep_the_top_and_fold_the_rest() {
        let v = |s: &str, n| ValueCount {
            value: Some(s.into()),
            clicks: n,
        };
        let b = top_values(
            Dimension::Referrer,
            vec![
                v("b", 3),
                v("a", 3),
                v("c", 1),
                ValueCount {
                    value: None,
                    clicks: 5,
                },
            ],
            2,
            3,
        );
        assert_eq!(b.top[0].value, None);
        assert_eq!(b.label(&b.top[0]), "direct");
        assert_eq!(b.top[1].value.as_deref(), Some("a"), "ties by value");
        assert_eq!(b.other, 3);
        assert_eq!(b.total(), 14);
    }
}
