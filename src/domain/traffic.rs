//! What a counted visit says about its visitor, and the bounds every such value is held to.
//!
//! Everything here comes from a stranger's request (headers) or an import file, so each value is
//! reduced to a short canonical form before it is stored, cached or shown: a host name no longer
//! than a DNS name allows, a language's primary tag, a browser or platform name of at most 32
//! characters. What does not fit becomes [`OTHER`] (or unknown), never a longer string.

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
}

impl Dimension {
    pub const ALL: [Dimension; 5] = [
        Dimension::Country,
        Dimension::Platform,
        Dimension::Browser,
        Dimension::Referrer,
        Dimension::Language,
    ];

    /// The wire name (`name=` in the API, `--by` in the CLI, keys in export files).
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Country => "country",
            Dimension::Platform => "platform",
            Dimension::Browser => "browser",
            Dimension::Referrer => "referrer",
            Dimension::Language => "language",
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
        }
    }

    /// What a visit without this value is called: no referrer means the visitor came directly.
    pub fn none_label(self) -> &'static str {
        match self {
            Dimension::Referrer => "direct",
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
            Dimension::Country => crate::domain::country_by_code(value).map(|c| c.code.to_owned()),
            Dimension::Platform | Dimension::Browser => bound_name(value),
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
    fn names_and_countries_are_bounded() {
        assert_eq!(bound_name("Chrome").as_deref(), Some("Chrome"));
        assert_eq!(bound_name(&"B".repeat(33)).as_deref(), Some(OTHER));
        assert_eq!(Dimension::Country.bound("de").as_deref(), Some("DE"));
        assert_eq!(Dimension::Country.bound("XX"), None);
        assert_eq!(Dimension::parse(" Referrer "), Some(Dimension::Referrer));
    }
}
