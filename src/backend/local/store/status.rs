//! The status rules of [`LinkStatus::derive`](crate::domain::LinkStatus::derive) in SQL: every
//! statement that selects or counts links by status is built here from the same three
//! predicates, and the tests below hold them to the Rust rule link by link. The partial indexes
//! these statements name were created by shipped migrations, whose text never changes; a test
//! checks that their `WHERE` clauses are these predicates, so the planner can use them.
//!
//! The predicates are written once and spelled in each store's dialect: SQLite's with `?2` and
//! flags as 0/1, PostgreSQL's ([`PG`]) with `$2` and booleans. In every statement `?1` (`$1`)
//! is the owner and `?2` (`$2`) the current unix time.

/// Expired by date: `ends_at` is NULL for links without an expiry, and NULL compares false.
macro_rules! expired_by_date {
    ($t:literal) => {
        expired_by_date!($t, "?2")
    };
    ($t:literal, $now:literal) => {
        concat!($t, "ends_at <= ", $now)
    };
}

/// The click limit is reached: 0 means no limit.
macro_rules! click_limit_reached {
    ($t:literal) => {
        concat!(
            $t,
            "expiration_clicks > 0 AND ",
            $t,
            "clicks >= ",
            $t,
            "expiration_clicks"
        )
    };
}

macro_rules! disabled {
    ($t:literal) => {
        disabled!($t, "1")
    };
    ($t:literal, $on:literal) => {
        concat!($t, "disabled = ", $on)
    };
}

/// The three list predicates over `links l` in one dialect.
#[derive(Debug, Clone, Copy)]
pub struct Predicates {
    /// Expired by date or by clicks.
    pub expired: &'static str,
    pub disabled: &'static str,
    /// Neither disabled nor expired. NOT of a NULL `ends_at` comparison is NULL, so the date
    /// rule names links without an expiry explicitly.
    pub active: &'static str,
}

macro_rules! predicates {
    ($now:literal, $on:literal, $off:literal) => {
        Predicates {
            expired: concat!(
                "(",
                expired_by_date!("l.", $now),
                " OR (",
                click_limit_reached!("l."),
                "))"
            ),
            disabled: disabled!("l.", $on),
            active: concat!(
                disabled!("l.", $off),
                " AND (l.ends_at IS NULL OR l.ends_at > ",
                $now,
                ") AND NOT (",
                click_limit_reached!("l."),
                ")"
            ),
        }
    };
}

/// SQLite's.
pub const SQLITE: Predicates = predicates!("?2", "1", "0");
/// PostgreSQL's: the same rules, with booleans and `$2`.
pub const PG: Predicates = predicates!("$2", "true", "false");

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

// ---- PostgreSQL: the ids of an owner's inactive links, each set read from its partial index
// alone (an index-only scan: `links_owner_disabled`, `links_owner_click_expired`, and
// `links_owner_ends`, which holds the ids since PostgreSQL migration 4) ----------------------

pub const PG_DISABLED_IDS: &str = concat!(
    "SELECT id FROM links WHERE owner_id = $1 AND ",
    disabled!("", "true")
);
pub const PG_BY_DATE_IDS: &str = concat!(
    "SELECT id FROM links WHERE owner_id = $1 AND ",
    expired_by_date!("", "$2")
);
pub const PG_BY_CLICKS_IDS: &str = concat!(
    "SELECT id FROM links WHERE owner_id = $1 AND ",
    click_limit_reached!("")
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
