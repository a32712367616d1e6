//! Orphan visits: requests to a host that no link answers — its root, an alias it does not
//! have, any other path. Recorded per host (a domain, or the server's own host) and rolled up
//! per UTC day like a link's traffic, every value bounded as visitors send what they like: a
//! path or referrer is cut to [`ORPHAN_VALUE_MAX`] characters, and a host keeps at most
//! [`ORPHAN_VALUES_PER_DAY`] distinct values of each kind a day, the rest counted as
//! [`OTHER`](crate::OTHER). See docs/SERVER.md, *Orphan visits*.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::{Bucket, Interval, ValueCount};

/// Characters kept of a path or a referrer.
pub const ORPHAN_VALUE_MAX: usize = 100;

/// Distinct values of one dimension a host keeps a day; more become "other".
pub const ORPHAN_VALUES_PER_DAY: usize = 200;

/// What a request without a link asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrphanKind {
    /// `/`.
    Root,
    /// A path shaped like an alias that the host does not have.
    UnknownAlias,
    /// Any other path no route takes.
    OtherPath,
}

impl OrphanKind {
    pub const ALL: [OrphanKind; 3] = [
        OrphanKind::Root,
        OrphanKind::UnknownAlias,
        OrphanKind::OtherPath,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrphanKind::Root => "root",
            OrphanKind::UnknownAlias => "unknown_alias",
            OrphanKind::OtherPath => "other_path",
        }
    }

    /// How reports and the app name the kind.
    pub fn label(self) -> &'static str {
        match self {
            OrphanKind::Root => "root (/)",
            OrphanKind::UnknownAlias => "unknown alias",
            OrphanKind::OtherPath => "other path",
        }
    }

    /// A kind's wire name as reports show it; an unknown name as it came.
    pub fn label_of(name: &str) -> &str {
        match OrphanKind::parse(name) {
            Some(kind) => kind.label(),
            None => name,
        }
    }

    pub fn parse(s: &str) -> Option<OrphanKind> {
        OrphanKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What is kept of a visitor's path or referrer: control characters left out, at most
/// [`ORPHAN_VALUE_MAX`] characters.
pub fn orphan_value(raw: &str) -> String {
    raw.chars()
        .filter(|c| !c.is_control())
        .take(ORPHAN_VALUE_MAX)
        .collect()
}

/// The rollups of orphan visits over a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrphanStats {
    pub from: Timestamp,
    pub to: Timestamp,
    pub interval: Interval,
    /// Visits in the period.
    pub total: u64,
    /// Every bucket of the period, empty ones included.
    pub timeline: Vec<Bucket>,
    /// Visits by kind (`root`, `unknown_alias`, `other_path`), most first.
    pub kinds: Vec<ValueCount>,
    /// Most visited paths first; `other` holds the rest.
    pub paths: Vec<ValueCount>,
    pub referrers: Vec<ValueCount>,
    pub countries: Vec<ValueCount>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_and_cleaned() {
        assert_eq!(orphan_value("/a\u{1b}[2Jb\n"), "/a[2Jb");
        let long = "é".repeat(500);
        assert_eq!(orphan_value(&long).chars().count(), ORPHAN_VALUE_MAX);
        for k in OrphanKind::ALL {
            assert_eq!(OrphanKind::parse(k.as_str()), Some(k));
        }
    }
}
