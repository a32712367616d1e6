//! The raw visit log as it leaves linkdeck: which visits an export asks for, and one visit as
//! every backend answers it. A visit carries only what the click writer logged: the visitor's
//! address only as `[serve] visitor_addresses` said to keep it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Id, StatsScope};

/// Which logged visits to read: the owner's in one scope, in a window of time, after a visit
/// already read. Visits are answered oldest first (in the order they were logged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisitQuery {
    pub scope: StatsScope,
    /// From this instant, included.
    pub since: Option<Timestamp>,
    /// Until this instant, excluded.
    pub until: Option<Timestamp>,
    /// Only visits logged after this one (its `id`): where an earlier export stopped.
    pub after: Option<Id>,
}

impl VisitQuery {
    /// Every visit the log keeps in `scope`.
    pub fn all(scope: StatsScope) -> VisitQuery {
        VisitQuery {
            scope,
            since: None,
            until: None,
            after: None,
        }
    }
}

/// One counted visit. `id` grows with every visit logged, so the largest one read is where the
/// next export starts (`after`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Visit {
    pub id: Id,
    pub at: Timestamp,
    pub link_id: Id,
    pub alias: String,
    /// Upper-case ISO 3166-1 alpha-2 code.
    pub country: Option<String>,
    pub platform: Option<String>,
    pub browser: Option<String>,
    /// The referring page's host, or "other".
    pub referrer: Option<String>,
    /// A primary language tag.
    pub language: Option<String>,
    /// The visitor's address or its network, where the server kept it ([`AddressLog`]).
    ///
    /// [`AddressLog`]: crate::AddressLog
    #[serde(default)]
    pub address: Option<String>,
    /// The targeting rule that sent the visitor (`country DE`, `platform iOS`, `rotation 2`);
    /// `None` when the link's own URL did.
    #[serde(default)]
    pub rule: Option<String>,
}

impl Visit {
    /// The names of a visit's fields in the order of a CSV row.
    pub const FIELDS: [&'static str; 11] = [
        "id", "at", "link_id", "alias", "country", "platform", "browser", "referrer", "language",
        "address", "rule",
    ];
}
