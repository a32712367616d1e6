//! The status rules of [`LinkStatus::derive`](linkdeck_domain::LinkStatus::derive) in SQL: every
//! statement that selects or counts links by status is built here from the same three
//! predicates, and the tests below hold them to the Rust rule link by link. The partial indexes
//! these statements name were created by shipped migrations, whose text never changes; a test
//! checks that their `WHERE` clauses are these predicates, so the planner can use them.
//!
//! The predicates are written once and spelled in each store's dialect: SQLite's with `?2` and
//! flags as 0/1 here, PostgreSQL's with `$2` and booleans in its store. In every statement `?1` (`$1`)
//! is the owner and `?2` (`$2`) the current unix time.

use linkdeck_store::sql::Predicates;
use linkdeck_store::{click_limit_reached, disabled, expired_by_date, predicates};

/// SQLite's.
pub const SQLITE: Predicates = predicates!("?2", "1", "0");
// ---- over `links l` (lists) ---------------------------------------------------------------

pub const EXPIRED: &str = SQLITE.expired;
pub const DISABLED: &str = SQLITE.disabled;
pub const ACTIVE: &str = SQLITE.active;

// ---- the ids of an owner's links ended by a time, from the partial index ------------------

pub const BY_DATE_IDS: &str = concat!(
    "SELECT id FROM links INDEXED BY links_owner_ends WHERE owner_id = ?1 AND ",
    expired_by_date!("")
);

// ---- the ids of an owner's disabled links and of those whose click limit is reached, each
// from its partial index alone (?2 is named, unused, so every status query takes the same
// values) ------------------------------------------------------------------------------------

pub const DISABLED_IDS: &str = concat!(
    "SELECT id FROM links INDEXED BY links_owner_disabled WHERE owner_id = ?1 AND ",
    disabled!(""),
    " AND ?2 IS NOT NULL"
);
pub const BY_CLICKS_IDS: &str = concat!(
    "SELECT id FROM links INDEXED BY links_owner_click_expired WHERE owner_id = ?1 AND ",
    click_limit_reached!(""),
    " AND ?2 IS NOT NULL"
);

// ---- counts, as index range counts (inclusion-exclusion over the small inactive sets) ------

pub const COUNT_BY_DATE: &str = concat!(
    "SELECT count(*) FROM links INDEXED BY links_owner_ends WHERE owner_id = ?1 AND ",
    expired_by_date!("")
);
pub const COUNT_DISABLED: &str = concat!(
    "SELECT count(*) FROM links INDEXED BY links_owner_disabled WHERE owner_id = ?1 AND ",
    disabled!(""),
    " AND ?2 IS NOT NULL"
);
pub const COUNT_BY_CLICKS: &str = concat!(
    "SELECT count(*) FROM links INDEXED BY links_owner_click_expired_ends WHERE owner_id = ?1 AND ",
    click_limit_reached!(""),
    " AND ?2 IS NOT NULL"
);
pub const COUNT_BY_CLICKS_AND_DATE: &str = concat!(
    "SELECT count(*) FROM links INDEXED BY links_owner_click_expired_ends WHERE owner_id = ?1 AND ",
    click_limit_reached!(""),
    " AND ",
    expired_by_date!("")
);
pub const COUNT_INACTIVE: &str = concat!(
    "SELECT count(*) FROM links INDEXED BY links_owner_inactive_ends WHERE owner_id = ?1 AND (",
    disabled!(""),
    " OR (",
    click_limit_reached!(""),
    ")) AND ?2 IS NOT NULL"
);
pub const COUNT_INACTIVE_AND_DATE: &str = concat!(
    "SELECT count(*) FROM links INDEXED BY links_owner_inactive_ends WHERE owner_id = ?1 AND (",
    disabled!(""),
    " OR (",
    click_limit_reached!(""),
    ")) AND ",
    expired_by_date!("")
);

/// The `WHERE` clause of each partial index a statement above names, as the predicates say it.
#[cfg(test)]
const PARTIAL_INDEXES: &[(&str, &str)] = &[
    ("links_owner_ends", "ends_at IS NOT NULL"),
    ("links_owner_disabled", disabled!("")),
    ("links_owner_click_expired", click_limit_reached!("")),
    ("links_owner_click_expired_ends", click_limit_reached!("")),
    (
        "links_owner_inactive_ends",
        concat!(disabled!(""), " OR (", click_limit_reached!(""), ")"),
    ),
];

#[cfg(test)]
mod tests;
