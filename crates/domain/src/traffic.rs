//! What a counted visit says about its visitor, and the bounds every such value is held to.
//!
//! Everything here comes from a stranger's request (headers) or an import file, so each value is
//! reduced to a short canonical form before it is stored, cached or shown: a host name no longer
//! than a DNS name allows, a language's primary tag, a browser or platform name of at most 32
//! characters. What does not fit becomes [`OTHER`] (or unknown), never a longer string. The
//! rule that sent a visit is named by the server (`rule 2 language`, `country DE`) and held to
//! the same bound as a name.

use serde::{Deserialize, Serialize};

/// The longest host name DNS allows (RFC 1035, without the trailing dot).
pub const HOST_MAX: usize = 253;
/// The longest browser or platform name kept.
pub const NAME_MAX: usize = 32;
/// The label of values that do not fit their bounds, and of the remainder past a top list.
pub const OTHER: &str = "other";

/// The dimensions a visit is counted by, besides time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dimension {
    Country,
    Platform,
    Browser,
    Referrer,
    Language,
    /// The rule that sent the visit: one of the link's redirect rules (`rule 2 language`) or
    /// its targeting (`country DE`, `platform iOS`, `rotation 2`); none, the link's own URL.
    Rule,
}

/// How many dimensions a visit is counted by.
pub const DIMENSIONS: usize = Dimension::ALL.len();

impl Dimension {
    pub const ALL: [Dimension; 6] = [
        Dimension::Country,
        Dimension::Platform,
        Dimension::Browser,
        Dimension::Referrer,
        Dimension::Language,
        Dimension::Rule,
    ];

    /// The wire name (`name=` in the API, `--by` in the CLI, keys in export files).
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Country => "country",
            Dimension::Platform => "platform",
            Dimension::Browser => "browser",
            Dimension::Referrer => "referrer",
            Dimension::Language => "language",
            Dimension::Rule => "rule",
        }
    }

    /// A heading for a breakdown: "Countries".
    pub fn title(self) -> &'static str {
        match self {
            Dimension::Country => "Countries",
            Dimension::Platform => "Platforms",
            Dimension::Browser => "Browsers",
            Dimension::Referrer => "Referrers",
            Dimension::Language => "Languages",
            Dimension::Rule => "Sent by",
        }
    }

    /// What a visit without this value is called: no referrer means the visitor came directly.
    pub fn none_label(self) -> &'static str {
        match self {
            Dimension::Referrer => "direct",
            Dimension::Rule => "the link's URL",
            _ => "unknown",
        }
    }

    /// The position in [`Dimension::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn parse(s: &str) -> Option<Dimension> {
        let s = s.trim();
        Self::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s))
    }

    /// Brings a value of this dimension within its bounds: `None` for an empty value, the
    /// canonical form otherwise ([`OTHER`] when it cannot be kept).
    pub fn bound(self, value: &str) -> Option<String> {
        match self {
            Dimension::Country => crate::country_by_code(value).map(|c| c.code.to_owned()),
            Dimension::Platform | Dimension::Browser | Dimension::Rule => bound_name(value),
            Dimension::Referrer => bound_host(value),
            Dimension::Language => primary_language(value),
        }
    }
}

/// A referring host: lower-case, at most [`HOST_MAX`] characters of letters, digits, `-`, `.`,
/// `_` and `:` (IPv6 literals); anything else is [`OTHER`]. Empty is no referrer.
pub fn bound_host(host: &str) -> Option<String> {
    let host = host.trim().trim_end_matches('.');
    if host.is_empty() {
        return None;
    }
    let fits = host.len() <= HOST_MAX
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':' | b'[' | b']')
        });
    Some(if fits {
        host.to_ascii_lowercase()
    } else {
        OTHER.to_owned()
    })
}

/// The primary language subtag of an `Accept-Language` value's first entry, lower-case: `de`
/// of `de-CH,de;q=0.9`. Two or three letters (ISO 639); anything else is unknown.
pub fn primary_language(value: &str) -> Option<String> {
    let first = value.split(',').next()?.split(';').next()?.trim();
    let primary = first.split(['-', '_']).next()?.trim();
    ((2..=3).contains(&primary.len()) && primary.bytes().all(|b| b.is_ascii_alphabetic()))
        .then(|| primary.to_ascii_lowercase())
}

/// A browser or platform name: printable, at most [`NAME_MAX`] characters, else [`OTHER`].
pub fn bound_name(name: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let fits = name.chars().count() <= NAME_MAX && !name.chars().any(char::is_control);
    Some(if fits {
        name.to_owned()
    } else {
        OTHER.to_owned()
    })
}

/// The clicks of one link in one hour, by value: the portable form of its traffic history
/// (export files carry it). A visit without a value of a dimension is counted in `clicks` only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficHour {
    /// The start of a UTC hour.
    pub hour: jiff::Timestamp,
    pub clicks: u64,
    /// Per dimension (in [`Dimension::ALL`] order): each value's clicks, values bounded.
    pub values: [Vec<(String, u64)>; DIMENSIONS],
}

/// Clicks one hour of history may hold: far beyond any real link, small enough that sums of
/// many hours never overflow.
pub const HOUR_CLICKS_MAX: u64 = 1_000_000_000;

impl TrafficHour {
    /// Checks an hour read from a file and brings its values within their bounds. Errors are
    /// keyed under `prefix` (`traffic.3`).
    pub fn checked(
        hour: jiff::Timestamp,
        clicks: u64,
        values: [Vec<(String, u64)>; DIMENSIONS],
        prefix: &str,
    ) -> Result<TrafficHour, crate::FieldErrors> {
        let mut errors = crate::FieldErrors::default();
        if hour.as_second().rem_euclid(3600) != 0 || hour.subsec_nanosecond() != 0 {
            errors.add(
                &format!("{prefix}.hour"),
                "must be the start of an hour (minutes and seconds 0)",
            );
        }
        if !(1..=HOUR_CLICKS_MAX).contains(&clicks) {
            errors.add(
                &format!("{prefix}.clicks"),
                format!("must be from 1 to {HOUR_CLICKS_MAX}"),
            );
        }
        let mut bounded: [Vec<(String, u64)>; DIMENSIONS] = Default::default();
        for (dim, list) in Dimension::ALL.into_iter().zip(values) {
            let field = format!("{prefix}.{}", dim.as_str());
            let mut sum = 0u64;
            for (value, n) in list {
                // "other" is what an export writes for values too many to keep apart.
                let kept = if value == OTHER {
                    Some(value.clone())
                } else {
                    dim.bound(&value)
                };
                match kept {
                    Some(kept) => {
                        sum = sum.saturating_add(n);
                        match bounded[dim.index()].iter_mut().find(|(v, _)| *v == kept) {
                            Some(entry) => entry.1 += n,
                            None => bounded[dim.index()].push((kept, n)),
                        }
                    }
                    None => errors.add(
                        &field,
                        format!(
                            "\"{}\" is not a {} value",
                            super::excerpt(&value),
                            dim.as_str()
                        ),
                    ),
                }
            }
            if sum > clicks {
                errors.add(
                    &field,
                    format!("counts {sum} clicks, more than the hour's {clicks}"),
                );
            }
        }
        errors.into_result(TrafficHour {
            hour,
            clicks,
            values: bounded,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_longer_than_dns_allows_are_other() {
        assert_eq!(
            bound_host("News.Example.COM.").as_deref(),
            Some("news.example.com")
        );
        assert_eq!(bound_host(&"a".repeat(253)).unwrap().len(), 253);
        assert_eq!(bound_host(&"a".repeat(254)).as_deref(), Some(OTHER));
        assert_eq!(bound_host("evil<script>").as_deref(), Some(OTHER));
        assert_eq!(bound_host("  "), None);
    }

    #[test]
    fn language_is_the_primary_tag() {
        assert_eq!(primary_language("de-CH,de;q=0.9").as_deref(), Some("de"));
        assert_eq!(primary_language("FIL;q=0.8").as_deref(), Some("fil"));
        assert_eq!(primary_language("zh_Hant_TW").as_deref(), Some("zh"));
        assert_eq!(primary_language("*"), None);
        assert_eq!(primary_language(&"x".repeat(400_000)), None);
        assert_eq!(primary_language("x1"), None);
    }

    #[test]
    fn history_hours_are_checked_and_bounded() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        let mut values: [Vec<(String, u64)>; DIMENSIONS] = Default::default();
        values[0] = vec![("de".into(), 2)];
        values[3] = vec![("T.CO".into(), 1), ("t.co".into(), 1)];
        let hour = TrafficHour::checked(at("2026-11-01T13:00:00Z"), 3, values.clone(), "traffic.0")
            .unwrap();
        assert_eq!(hour.values[0], [("DE".to_owned(), 2)]);
        assert_eq!(hour.values[3], [("t.co".to_owned(), 2)]);
        values[0] = vec![("XX".into(), 1)];
        values[1] = vec![("iOS".into(), 9)];
        let errors =
            TrafficHour::checked(at("2026-11-01T13:30:00Z"), 3, values, "traffic.4").unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|(f, _)| f).collect();
        assert_eq!(
            fields,
            ["traffic.4.country", "traffic.4.hour", "traffic.4.platform"]
        );
    }

    #[test]
    fn names_and_countries_are_bounded() {
        assert_eq!(bound_name("Chrome").as_deref(), Some("Chrome"));
        assert_eq!(bound_name(&"B".repeat(33)).as_deref(), Some(OTHER));
        assert_eq!(Dimension::Country.bound("de").as_deref(), Some("DE"));
        assert_eq!(Dimension::Country.bound("XX"), None);
        assert_eq!(Dimension::parse(" Referrer "), Some(Dimension::Referrer));
    }
}
