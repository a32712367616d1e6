//! Lists in id order with a term and tags and many matches, found by walking the owner's links
//! in that order a range of ids at a time and checking each row, until the page and the
//! count's bound are reached. The rows of an id range lie together in the table: each costs
//! 0.45 to 0.7 µs to read and check (the more with the tags read off the row), where a row the
//! trigram index's bitmap points at costs about 2.5 µs with its recheck. Left to the planner,
//! such a list was counted by one statement and paged by another, each reading every row the
//! term's trigrams point at: a URL term in 8 % of a million links beside a tag half of them
//! carry took 0.2 to 0.56 s a page, where the walk to the bound reads about 240,000 rows in
//! 0.16 s and answers the count and the page together.

use deadpool_postgres::GenericClient;
use linkdeck_domain::{Id, Result, Sort, Total};
use linkdeck_store::ListFilter;

use super::{Lookup, expected_matches, filter, owner_links, page_of};
use crate::sql::{all, col, one};

/// The most ids a walk is expected to pass over, the owner's links among them: 0.15 to 0.2 s
/// of rows. A list whose matches are expected too thin for that is left to the planner.
const ROWS_MAX: u64 = 300_000;

/// The ids of the first range walked, which tells how thick the matches really are: the
/// planner's estimate takes a term and a tag as independent.
const FIRST_RANGE: i64 = 20_000;

/// The largest range of ids one statement walks.
const RANGE_MAX: i64 = 160_000;

/// The ids of `f`'s page and its total counted to the bound, when `f` is in id order, asks for
/// a term and tags, and its matches are thick enough among the owner's links for a walk to
/// reach the bound within [`ROWS_MAX`]; `None` leaves the list to the planner.
pub(super) async fn page<C: GenericClient>(
    c: &C,
    f: &ListFilter<'_>,
) -> Result<Option<(Vec<Id>, Total)>> {
    let descending = match f.sort {
        Sort::Desc => true,
        Sort::Asc => false,
        Sort::Max | Sort::Min => return Ok(None),
    };
    // A term alone the trigram index counts for less than a walk, unless the page is deep,
    // where the planner walks the same rows; tags alone are semi-joins on their own index.
    // Beside each other, the term's rows are read for the count and again for the page.
    if f.search.is_none() || f.tags.is_empty() {
        return Ok(None);
    }
    let wanted = f.count_limit();
    let links = owner_links(c, f.owner).await?.max(1);
    // The rows a walk to the bound would read among the matches the planner expects.
    let expected = expected_matches(c, f, links).await?;
    if links as f64 * wanted as f64 / expected.max(1.0) > ROWS_MAX as f64 {
        return Ok(None);
    }
    let span = "SELECT min(id), max(id) FROM links WHERE owner_id = $1";
    let span: Option<(Option<Id>, Option<Id>)> =
        one(c, span, &[&f.owner], |r| Ok((col(r, 0)?, col(r, 1)?))).await?;
    let Some((Some(low), Some(high))) = span else {
        return Ok(None);
    };
    let mut found: Vec<Id> = Vec::new();
    let mut walked: u64 = 0;
    let mut range = FIRST_RANGE;
    let mut next = if descending { high } else { low };
    while (found.len() as u64) < wanted && (low..=high).contains(&next) {
        let (a, b) = match descending {
            true => ((next - range + 1).max(low), next),
            false => (next, (next + range - 1).min(high)),
        };
        let missing = wanted - found.len() as u64;
        let (checked, mut args) = filter(f, Lookup::OnRows, Lookup::OnRows);
        let select = format!(
            "SELECT l.id FROM links l WHERE l.id BETWEEN {} AND {} AND {checked} \
             ORDER BY l.id {} LIMIT {}",
            args.push(a),
            args.push(b),
            if descending { "DESC" } else { "ASC" },
            args.push(missing as i64),
        );
        found.extend(all(c, &select, &args.refs(), |r| col::<Id>(r, 0)).await?);
        walked += (b - a + 1) as u64;
        next = if descending { a - 1 } else { b + 1 };
        // The rows still to read at the thickness met so far: past the most, the planner's
        // road costs less than going on.
        let missing = wanted.saturating_sub(found.len() as u64);
        let ahead = missing.saturating_mul(walked) / (found.len() as u64).max(1);
        if missing > 0 && walked.saturating_add(ahead) > ROWS_MAX {
            return Ok(None);
        }
        range = (range * 2).min(RANGE_MAX);
    }
    Ok(Some((
        page_of(&found, f),
        f.bounded_total(found.len() as u64),
    )))
}
