//! SQL both stores speak alike: the status rules of [`LinkStatus::derive`] as predicates, written
//! once and spelled in each store's dialect (SQLite's with `?2` and flags as 0/1, PostgreSQL's
//! with `$2` and booleans), a list's order, and the columns a search reads. In every status
//! statement `?1` (`$1`) is the owner and `?2` (`$2`) the current unix time.
//!
//! [`LinkStatus::derive`]: linkdeck_domain::LinkStatus::derive

use linkdeck_domain::{SearchBy, Sort};

/// Expired by date: `ends_at` is NULL for links without an expiry, and NULL compares false.
#[macro_export]
macro_rules! expired_by_date {
    ($t:literal) => {
        $crate::expired_by_date!($t, "?2")
    };
    ($t:literal, $now:literal) => {
        concat!($t, "ends_at <= ", $now)
    };
}

/// The click limit is reached: 0 means no limit.
#[macro_export]
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

/// Expired by date or by clicks, as one parenthesised predicate.
#[macro_export]
macro_rules! expired_link {
    ($t:literal, $now:literal) => {
        concat!(
            "(",
            $crate::expired_by_date!($t, $now),
            " OR (",
            $crate::click_limit_reached!($t),
            "))"
        )
    };
}

/// The first `$limit` links of owner `$owner` expired by `$now` and not yet marked in
/// `webhook_expired`, by id: each rule through its own partial index, so the work grows with
/// the owner's expired links rather than with all of them.
#[macro_export]
macro_rules! newly_expired {
    ($owner:literal, $now:literal, $limit:literal) => {
        concat!(
            "SELECT x.id FROM (SELECT l.id FROM links l WHERE l.owner_id = ",
            $owner,
            " AND ",
            $crate::expired_by_date!("l.", $now),
            " UNION SELECT l.id FROM links l WHERE l.owner_id = ",
            $owner,
            " AND ",
            $crate::click_limit_reached!("l."),
            ") x WHERE NOT EXISTS (SELECT 1 FROM webhook_expired e WHERE e.link_id = x.id) \
             ORDER BY x.id LIMIT ",
            $limit
        )
    };
}

#[macro_export]
macro_rules! disabled {
    ($t:literal) => {
        $crate::disabled!($t, "1")
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

#[macro_export]
macro_rules! predicates {
    ($now:literal, $on:literal, $off:literal) => {
        $crate::sql::Predicates {
            expired: $crate::expired_link!("l.", $now),
            disabled: $crate::disabled!("l.", $on),
            active: concat!(
                $crate::disabled!("l.", $off),
                " AND (l.ends_at IS NULL OR l.ends_at > ",
                $now,
                ") AND NOT (",
                $crate::click_limit_reached!("l."),
                ")"
            ),
        }
    };
}

/// The column a search by `by` reads.
pub fn column(by: SearchBy) -> &'static str {
    match by {
        SearchBy::Title => "title",
        SearchBy::Alias => "alias",
        SearchBy::Url => "url",
    }
}

/// The longest term a trigram index is asked for whole. Both stores answer a term from the
/// matches of each of its trigrams, and their work grows with its length: an FTS5 phrase steps
/// one iterator per trigram — a word said a thousand times is a thousand iterators over the same
/// matches — and PostgreSQL checks `ILIKE` on every row its index leaves, lowering the whole
/// pattern each time. A longer term is looked up by pieces of it, and each candidate checked
/// against the whole: on SQLite by its distinct triples in the short-term index, on PostgreSQL
/// by its distinct pieces of this length.
pub const WHOLE_MAX: usize = 24;

/// The `ORDER BY` of a list over `links l`, read backwards when `reverse`; `full_text`: the
/// matches come from SQLite's full-text index `f`, which keeps them by id.
pub fn order_by(sort: Sort, reverse: bool, full_text: bool) -> &'static str {
    let newest_first = matches!(sort, Sort::Desc | Sort::Max) != reverse;
    // The trigram index yields its matches by id in either direction, so an id order is read
    // straight from it and stops after one page.
    match (sort, newest_first, full_text) {
        (Sort::Desc | Sort::Asc, true, true) => "f.rowid DESC",
        (Sort::Desc | Sort::Asc, false, true) => "f.rowid ASC",
        (Sort::Desc | Sort::Asc, true, false) => "l.id DESC",
        (Sort::Desc | Sort::Asc, false, false) => "l.id ASC",
        (Sort::Max | Sort::Min, true, _) => "l.clicks DESC, l.id DESC",
        (Sort::Max | Sort::Min, false, _) => "l.clicks ASC, l.id ASC",
    }
}

/// The columns of a link the service writes, in the order both stores bind them.
pub const WRITE_COLUMNS: &str = "owner_id, domain_id, space_id, alias, url, title, password_hash, \
     disabled, public, expiration_url, expiration_clicks, ends_at, target_type, geo_target, \
     platform_target, rotation_target, created_at, updated_at, tags, options";

/// Every column a [`Link`] needs, with its space and domain joined.
pub const READ_COLUMNS: &str = "l.id, l.alias, l.url, l.title, l.target_type, l.geo_target, \
     l.platform_target, l.rotation_target, l.last_rotation, l.disabled, l.public, \
     l.password_hash IS NOT NULL, l.expiration_url, l.expiration_clicks, l.clicks, l.owner_id, \
     l.ends_at, l.created_at, l.updated_at, \
     s.id, s.owner_id, s.name, s.color, s.link_count, s.created_at, s.updated_at, \
     d.id, d.owner_id, d.name, d.created_at, d.updated_at, l.tags, l.options, l.previews";
pub const READ_FROM: &str = "links l LEFT JOIN spaces s ON s.id = l.space_id \
     LEFT JOIN domains d ON d.id = l.domain_id";

/// Every column of a link, in the order both tables are written: a test keeps this list and
/// the `links` table in step.
pub const LINK_COLUMNS: &str = "id, owner_id, domain_id, space_id, alias, url, title, \
     password_hash, disabled, public, expiration_url, expiration_clicks, ends_at, clicks, \
     target_type, geo_target, platform_target, rotation_target, last_rotation, created_at, \
     updated_at, tags, options, previews";

/// [`LINK_COLUMNS`] as a restore reads them from `trash_links t`: a link whose space is gone
/// (or is no longer its owner's) comes back without one.
pub fn restored_columns() -> String {
    LINK_COLUMNS.replace(
        "space_id,",
        "CASE WHEN EXISTS (SELECT 1 FROM spaces s WHERE s.id = t.space_id \
         AND s.owner_id = t.owner_id) THEN t.space_id END,",
    )
}

/// `%`, `_` and the escape character itself made literal for `LIKE … ESCAPE '\'`.
pub fn like_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

#[cfg(test)]
mod tests {
    use super::like_pattern;

    /// PostgreSQL's predicates are SQLite's rules, only spelled in its dialect (each store's
    /// tests run its own against `LinkStatus::derive`).
    #[test]
    fn both_dialects_spell_the_same_rules() {
        let sqlite = predicates!("?2", "1", "0");
        let pg = predicates!("$2", "true", "false");
        let as_sqlite = |p: &str| {
            p.replace("$2", "?2")
                .replace("= true", "= 1")
                .replace("= false", "= 0")
        };
        assert_eq!(as_sqlite(pg.expired), sqlite.expired);
        assert_eq!(as_sqlite(pg.disabled), sqlite.disabled);
        assert_eq!(as_sqlite(pg.active), sqlite.active);
        for p in [pg.expired, pg.disabled, pg.active] {
            assert!(!p.contains('?'), "{p}");
        }
    }

    #[test]
    fn like_pattern_escapes_wildcards() {
        assert_eq!(like_pattern("a%b_c\\"), "%a\\%b\\_c\\\\%");
    }
}
