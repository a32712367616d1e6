//! How values read on screen: counts with thousands separators, expiry as "3d" or "expired",
//! dates in the profile's time zone.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use unicode_width::UnicodeWidthStr;

use crate::domain::{Link, LinkStatus, shown};

/// The cells `text` takes on screen, its control characters written out ([`shown`]).
pub fn width(text: &str) -> usize {
    shown(text).width()
}

pub use crate::domain::clip;

pub use crate::domain::thousands as count;

/// A duration in the largest unit that fits: `45m`, `5h`, `3d`, `8mo`, `2y`.
pub fn short_duration(d: SignedDuration) -> String {
    let secs = d.as_secs().max(0);
    let (minute, hour, day) = (60, 3600, 86_400);
    match secs {
        s if s < hour => format!("{}m", (s / minute).max(1)),
        s if s < day => format!("{}h", s / hour),
        s if s < 100 * day => format!("{}d", s / day),
        s if s < 730 * day => format!("{}mo", s / (30 * day)),
        s => format!("{}y", s / (365 * day)),
    }
}

/// The table's expiry column: when the link stops working, in the shortest form. A click
/// limit shows in the clicks column ([`Link::clicks_shown`]), as the CLI shows it.
pub fn expiry_cell(link: &Link, now: Timestamp) -> String {
    if link.status(now).expired {
        return "expired".into();
    }
    match (link.ends_at, link.expiration_clicks) {
        (Some(end), _) => short_duration(end.duration_since(now)),
        (None, 0) => "never".into(),
        (None, _) => "clicks".into(),
    }
}

/// A full date and time for the details panel: `2026-11-25 14:00 CET`.
pub fn datetime(at: Timestamp, tz: &TimeZone) -> String {
    at.to_zoned(tz.clone())
        .strftime("%Y-%m-%d %H:%M %Z")
        .to_string()
}

/// The details panel's expiry line.
pub fn expiry_detail(link: &Link, now: Timestamp, tz: &TimeZone) -> String {
    let mut parts = Vec::new();
    if let Some(end) = link.ends_at {
        if LinkStatus::expired_by_date(Some(end), now) {
            parts.push(format!("{} (passed)", datetime(end, tz)));
        } else {
            parts.push(format!(
                "{} (in {})",
                datetime(end, tz),
                short_duration(end.duration_since(now))
            ));
        }
    }
    if link.expiration_clicks > 0 {
        parts.push(format!(
            "after {}",
            crate::domain::plural(u64::from(link.expiration_clicks), "click")
        ));
    }
    if parts.is_empty() {
        return "never".into();
    }
    let mut text = parts.join(", ");
    if let Some(url) = &link.expiration_url {
        text.push_str(&format!(" → {url}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_ends_in_an_ellipsis_and_counts_cells() {
        assert_eq!(clip("Spring Launch", 20), "Spring Launch");
        assert_eq!(clip("Spring Launch", 12), "Spring Laun…");
        assert_eq!(clip("日本語のテキスト", 7), "日本語…");
        assert_eq!(width("日本"), 4);
    }

    #[test]
    fn a_single_click_limit_reads_as_one_click() {
        let now = Timestamp::UNIX_EPOCH;
        let mut link = Link {
            expiration_clicks: 1,
            ..Link::example()
        };
        assert_eq!(expiry_detail(&link, now, &TimeZone::UTC), "after 1 click");
        link.expiration_clicks = 2;
        assert_eq!(expiry_detail(&link, now, &TimeZone::UTC), "after 2 clicks");
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1204), "1,204");
        assert_eq!(count(1_000_000), "1,000,000");
    }

    #[test]
    fn durations_pick_the_largest_unit() {
        assert_eq!(short_duration(SignedDuration::from_secs(30)), "1m");
        assert_eq!(short_duration(SignedDuration::from_mins(45)), "45m");
        assert_eq!(short_duration(SignedDuration::from_hours(5)), "5h");
        assert_eq!(short_duration(SignedDuration::from_hours(72)), "3d");
        assert_eq!(short_duration(SignedDuration::from_hours(24 * 240)), "8mo");
        assert_eq!(short_duration(SignedDuration::from_hours(24 * 800)), "2y");
    }
}
