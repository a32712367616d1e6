//! Lists and searches on PostgreSQL. A search is `ILIKE '%term%'` on the searched column, which
//! the trigram indexes (`pg_trgm`, see `schema.rs`) answer for terms of three characters and
//! more; wildcards in the term are made literal by the contract's `like_pattern`, as on SQLite.
//! A term longer than [`WHOLE_MAX`] is looked up by its distinct pieces ([`pieces`]) and each
//! row they leave checked against the whole.
//! What a list asks ([`ListFilter`]), its order and which end a deep page is read from
//! ([`Slice`]) are the contract's, and so are the status rules, spelled for
//! PostgreSQL.

use std::cmp::Reverse;

use deadpool_postgres::GenericClient;

use linkdeck_store::sql::{
    Predicates, READ_COLUMNS, READ_FROM, WHOLE_MAX, column, like_pattern, order_by,
};
use linkdeck_store::{
    ListFilter, Search, Slice, click_limit_reached, disabled, expired_by_date, predicates, tag_json,
};
use roaring::RoaringTreemap;

mod driven;
mod walk;

use crate::links::link_from_row;
use crate::sql::{Args, all, col, count, one, plan_for_values, rows, value};
use crate::tx::PgTx;
use linkdeck_domain::{
    COUNT_BOUND, Id, Link, Result, SearchBy, Sort, SpaceFilter, StatusFilter, TagMatch, Total,
};

/// PostgreSQL's: the same rules, with booleans and `$2`.
pub const PG: Predicates = predicates!("$2", "true", "false");

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

/// Pieces a long term is looked up by at most: each narrows the rows the trigram index leaves,
/// and each is checked on every row it leaves until one is not there.
const PIECES: usize = 8;

fn status_sql(status: StatusFilter) -> Option<&'static str> {
    match status {
        StatusFilter::All => None,
        StatusFilter::Disabled => Some(PG.disabled),
        StatusFilter::Expired => Some(PG.expired),
        StatusFilter::Active => Some(PG.active),
    }
}

/// How a list's search term or tags are looked for: through their index (the trigram index,
/// the tags' `links_tags`), or checked on each row the other filters leave (see
/// [`term_lookup`] and [`driven`]).
#[derive(Clone, Copy, PartialEq)]
enum Lookup {
    Indexed,
    OnRows,
}

/// The `WHERE` clause over `links l` of what `f` asks (paging aside) and its values: `$1` the
/// owner, `$2` the current time when the status asked depends on it (the predicates name it
/// so), then the space, domain, tags and search.
fn filter(f: &ListFilter<'_>, term: Lookup, tags: Lookup) -> (String, Args) {
    let mut args = Args::default();
    let mut sql = format!("l.owner_id = {}", args.push(f.owner));
    if let Some(status) = status_sql(f.status) {
        // A statement must use every value it is given, and "disabled" needs no time.
        if status.contains("$2") {
            args.push(f.now.as_second());
        }
        sql.push_str(" AND ");
        sql.push_str(status);
    }
    match f.space {
        SpaceFilter::Any => {}
        SpaceFilter::NoSpace => sql.push_str(" AND l.space_id IS NULL"),
        SpaceFilter::In(space) => {
            sql.push_str(&format!(" AND l.space_id = {}", args.push(space)));
        }
        SpaceFilter::Among(set) => {
            let ids = args.push(set.ids().to_vec());
            sql.push_str(&format!(" AND l.space_id = ANY({ids})"));
        }
    }
    if let Some(domain) = f.domain {
        sql.push_str(&format!(" AND l.domain_id = {}", args.push(domain)));
    }
    let (tagged, as_json) = tags_sql(f, tags, &mut args);
    sql.push_str(&tagged);
    if let (Some((by, term)), Lookup::OnRows) = (f.search, term) {
        sql.push_str(&format!(" AND {}", holds(column(by), term, &mut args)));
    } else if let Some((by, term)) = f.search {
        let column = column(by);
        if paired(by, term) {
            sql.push_str(&format!(
                " AND link_pairs(l.{column}) @> link_pairs({})",
                args.push(term.to_owned())
            ));
        }
        let whole = [term];
        let long = term.chars().count() > WHOLE_MAX;
        for piece in if long { pieces(term) } else { whole.to_vec() } {
            sql.push_str(&format!(
                " AND l.{column} ILIKE {} ESCAPE '\\'",
                args.push(like_pattern(piece))
            ));
        }
        if long {
            // The rows every piece is in, checked against the whole term.
            sql.push_str(&format!(" AND {}", holds(column, term, &mut args)));
        }
    }
    sql.push_str(&as_json.unwrap_or_default());
    (sql, args)
}

/// What `f`'s tags ask, over `links l`: the conditions that go with the other filters and,
/// for tags checked on each row, the one read last.
fn tags_sql(f: &ListFilter<'_>, lookup: Lookup, args: &mut Args) -> (String, Option<String>) {
    if f.tags.is_empty() {
        return (String::new(), None);
    }
    let (op, or) = match f.tag_match {
        TagMatch::All => ("?&", " AND "),
        TagMatch::Any => ("?|", " OR "),
    };
    let alone = f.search.is_none()
        && f.status == StatusFilter::All
        && f.space.is_any()
        && f.domain.is_none();
    if let (Lookup::Indexed, true) = (lookup, alone) {
        // Tags alone: the tag index's own rows, as semi-joins the planner can size, each
        // tag's `EXISTS` (every tag) or one over all of them (any), met with the links'
        // indexes without reading a link: two tags 4 % of a million links carry, page 1,001,
        // 33 ms, against 60 read as JSON (page 1: 28 against 14; a deep page keeps the
        // slower side of the two under 40 ms). A `GROUP BY … HAVING count(*)` of the
        // rows, which said the same, was estimated at a small part of what the tag held and
        // planned as a loop over every one of them: seconds for a common tag.
        let exists = |tags: String| {
            format!(
                " AND EXISTS (SELECT 1 FROM link_tags t WHERE t.owner_id = $1 \
                 AND t.tag {tags} AND t.link_id = l.id)"
            )
        };
        let sql = match f.tag_match {
            TagMatch::All => (f.tags.iter())
                .map(|tag| exists(format!("= {}", args.push(tag.clone()))))
                .collect(),
            TagMatch::Any => exists(format!("= ANY({})", args.push(f.tags.to_vec()))),
        };
        return (sql, None);
    }
    // The row's own list of its tags, which `link_tags` is kept from, read as JSON: the
    // operators the tags' index answers (`links_tags`), which the planner combines with a
    // status's, a term's or a space's index.
    let tags = args.push(f.tags.to_vec());
    let as_json = format!(" AND l.tags::jsonb {op} {tags}");
    match lookup {
        Lookup::Indexed => (as_json, None),
        Lookup::OnRows => {
            // Each tag's spelling in the text is looked for first: a substring costs a
            // fraction of reading the text as JSON, which only the rows that hold one are (a
            // tag with a quote in it can be spelled inside another's). The JSON is read last,
            // after the term, which costs less to check on a row (the planner keeps the
            // order it is given for these).
            let spelled: Vec<String> = (f.tags.iter())
                .map(|tag| {
                    format!(
                        "l.tags LIKE {} ESCAPE '\\'",
                        args.push(like_pattern(&tag_json(tag)))
                    )
                })
                .collect();
            (format!(" AND ({})", spelled.join(or)), Some(as_json))
        }
    }
}

/// Whether `term` is looked up by its pairs of characters (`link_pairs`, PostgreSQL migration
/// 16): a term of two characters, which the trigram index cannot look up, in the alias.
/// `"k3"` in alias took 155 ms (every link read) and takes 6 to 7.5 through its pair. Longer
/// terms stay with the trigram index alone: looked up by their pairs beside it, every row the
/// two left had its pairs worked out again, about a microsecond a character (`".shop"` in
/// title: 30 → 2,500 ms).
fn paired(by: SearchBy, term: &str) -> bool {
    by == SearchBy::Alias && term.chars().count() == 2
}

/// SQL that the link's `column` holds `term` in any case, as `ILIKE` finds it, for a row
/// already read: the term lowered once, as `ILIKE` lowers both sides (no index answers
/// `strpos`).
fn holds(column: &str, term: &str, args: &mut Args) -> String {
    format!(
        "strpos(lower(l.{column}), (SELECT lower({}::text))) > 0",
        args.push(term.to_owned())
    )
}

/// Distinct pieces of [`WHOLE_MAX`] characters at most that a long term is looked up by: from
/// its start on, then its end, the first [`PIECES`] of them.
fn pieces(term: &str) -> Vec<&str> {
    let starts: Vec<usize> = term.char_indices().map(|(i, _)| i).collect();
    let piece_at = |n: usize| {
        let end = starts.get(n + WHOLE_MAX).copied().unwrap_or(term.len());
        &term[starts[n]..end]
    };
    let last = starts.len().saturating_sub(WHOLE_MAX);
    let mut pieces: Vec<&str> = Vec::new();
    for n in (0..last).step_by(WHOLE_MAX).chain([last]) {
        let piece = piece_at(n);
        if !pieces.contains(&piece) {
            pieces.push(piece);
        }
        if pieces.len() == PIECES {
            break;
        }
    }
    pieces
}

/// A list's matches, each as its id and its clicks (0 when the list is in id order).
type Matches = Vec<(Id, i64)>;

/// The most matches a count brings back beside its number (see [`total`]): 16 bytes each.
const MATCHES_HELD_MAX: u64 = 5 * COUNT_BOUND + 1;

/// How many links match `f`, and the matches counted when they hold the page: every match
/// when they were counted one by one and are fewer than the bound, the list's first ones when
/// a deep page had them counted in its order. The owner's total is kept by the schema's
/// triggers, so a list without filters is not counted row by row; a status without other
/// filters counts the ids of the (few) inactive links, each set read from its partial index
/// alone, and the active ones as the total less those. Any other filter is counted by reading
/// each matching row (the trigram index's recheck, a tag's or a space's rows): those stop at
/// the contract's bound and say "at least", where counting a tenth of a million links took
/// most of a second. The rows read for such a count are the list's matches, so they come back
/// with it: under the bound, the page is taken from them rather than found by a second
/// statement that reads them all again (half of the time of a URL term's list of a few
/// thousand links beside a tag).
async fn total<C: GenericClient>(
    c: &C,
    f: &ListFilter<'_>,
    sql: &str,
    args: &Args,
    looked_up: bool,
) -> Result<(Total, Option<Matches>)> {
    let unfiltered =
        f.search.is_none() && f.tags.is_empty() && f.space.is_any() && f.domain.is_none();
    if unfiltered {
        let owner_total = || owner_links(c, f.owner);
        let now = f.now.as_second();
        let total = Total::exact(match f.status {
            StatusFilter::All => owner_total().await?,
            StatusFilter::Disabled => {
                let sql = format!("SELECT count(*) FROM ({PG_DISABLED_IDS}) s");
                count(value(c, &sql, &[&f.owner]).await?)
            }
            StatusFilter::Expired => {
                let expired: i64 = value(
                    c,
                    &format!("SELECT count(*) FROM ({PG_BY_DATE_IDS} UNION {PG_BY_CLICKS_IDS}) s"),
                    &[&f.owner, &now],
                )
                .await?;
                count(expired)
            }
            _ => {
                let inactive: i64 = value(
                    c,
                    &format!(
                        "SELECT count(*) FROM ({PG_DISABLED_IDS} UNION {PG_BY_DATE_IDS} \
                         UNION {PG_BY_CLICKS_IDS}) s"
                    ),
                    &[&f.owner, &now],
                )
                .await?;
                owner_total().await?.saturating_sub(count(inactive))
            }
        });
        return Ok((total, None));
    }
    // A space alone: its counter, kept by the same triggers as the owner's.
    if let (SpaceFilter::In(space), StatusFilter::All, None, None, true) =
        (f.space, f.status, f.search, f.domain, f.tags.is_empty())
    {
        let sql = "SELECT link_count FROM spaces WHERE id = $1 AND owner_id = $2";
        let links: Option<i64> = one(c, sql, &[&space, &f.owner], |r| col(r, 0)).await?;
        return Ok((Total::exact(count(links.unwrap_or(0))), None));
    }
    let mut refs = args.refs();
    let limit = f.count_limit() as i64;
    refs.push(&limit);
    let limit = refs.len();
    if f.count_limit() > MATCHES_HELD_MAX {
        let sql =
            format!("SELECT count(*) FROM (SELECT 1 FROM links l WHERE {sql} LIMIT ${limit}) s");
        let n: i64 = value(c, &sql, &refs).await?;
        return Ok((f.bounded_total(count(n)), None));
    }
    // Clicks only for a clicks order: the ids alone may come from an index, with no row read.
    let clicks = match f.sort {
        Sort::Max | Sort::Min => "l.clicks",
        Sort::Desc | Sort::Asc => "0::BIGINT",
    };
    // A page as deep as half the bound or more reads as many matches, in the list's order, as
    // the count: counted in that order, the matches counted are the list's first ones, and the
    // page is among them whether or not the count reaches the bound.
    let deep = f.offset.saturating_mul(2) >= COUNT_BOUND;
    let order = match deep {
        true => {
            // Walking the clicks index reads every link between two matches at random and
            // checks it, which the planner prices far below its cost: `"cha"` in the titles of
            // 6 % of a million links, most clicks, page 1,001, took 274 ms walked and 89 ms
            // found through the trigram index and sorted. An id order is walked in the table's
            // own order, for about a third of that a row, so it is left for a third as many
            // matches: `"/wool-coat"` in 5 % of the URLs, oldest first, page 1,001, read
            // 200,000 links walked (175 ms, 112 sorted). A disabled or expired status's own
            // index is walked in id order, its links alone, and stays with the planner
            // (`"ttp"`, disabled, page 1,001: 13 ms walked, 25 sorted).
            let order = order_by(f.sort, false, false);
            let walked = match f.sort {
                Sort::Max | Sort::Min => Some(f.count_limit()),
                Sort::Desc | Sort::Asc if !inactive(f.status) => {
                    Some(f.count_limit() / ID_WALK_CHEAPER)
                }
                Sort::Desc | Sort::Asc => None,
            };
            let few = match (looked_up, walked) {
                (true, Some(walked)) => {
                    let links = owner_links(c, f.owner).await?;
                    let matches = expected_matches(c, f, links).await? as u64;
                    sorting_costs_less(matches, walked, links)
                }
                _ => false,
            };
            match few {
                true => format!("ORDER BY {}", unwalkable(order)),
                false => format!("ORDER BY {order}"),
            }
        }
        false => String::new(),
    };
    let sql = format!(
        "SELECT count(*), array_agg(s.id), array_agg(s.clicks) FROM \
         (SELECT l.id, {clicks} AS clicks FROM links l WHERE {sql} {order} LIMIT ${limit}) s"
    );
    type Row = (i64, Option<Vec<Id>>, Option<Vec<i64>>);
    let read = |r: &_| -> Result<Row> { Ok((col(r, 0)?, col(r, 1)?, col(r, 2)?)) };
    let (n, ids, clicks) = one(c, &sql, &refs, read).await?.unwrap_or_default();
    let total = f.bounded_total(count(n));
    let matches = (total.exact || deep).then(|| {
        let (ids, clicks) = (ids.unwrap_or_default(), clicks.unwrap_or_default());
        ids.into_iter().zip(clicks).collect()
    });
    Ok((total, matches))
}

/// How many times less a link costs walked in id order (the table's own order, about 0.85 µs
/// with a term's check) than found at random through an index and checked (2.5 µs).
const ID_WALK_CHEAPER: u64 = 3;

/// `order` in expressions no index is sorted by, so the planner cannot walk one: the matches
/// are found through their own indexes and sorted.
fn unwalkable(order: &str) -> String {
    order
        .replace("l.clicks", "(l.clicks + 0)")
        .replace("l.id", "(l.id + 0)")
}

/// `found` in the list's order, as `order_by` orders a list: ties in clicks broken by id, in
/// the same direction.
fn in_order(mut found: Matches, sort: Sort) -> Vec<Id> {
    match sort {
        Sort::Desc => found.sort_unstable_by_key(|&(id, _)| Reverse(id)),
        Sort::Asc => found.sort_unstable_by_key(|&(id, _)| id),
        Sort::Max => found.sort_unstable_by_key(|&(id, clicks)| Reverse((clicks, id))),
        Sort::Min => found.sort_unstable_by_key(|&(id, clicks)| (clicks, id)),
    }
    found.into_iter().map(|(id, _)| id).collect()
}

/// The page `f` asks for of `matches`, in the list's order.
fn page_of(matches: &[Id], f: &ListFilter<'_>) -> Vec<Id> {
    (matches.iter())
        .skip(usize::try_from(f.offset).unwrap_or(usize::MAX))
        .take(f.limit as usize)
        .copied()
        .collect()
}

/// Whether `status` leaves few of an owner's links, found at once through its partial indexes
/// (`links_owner_disabled`, `links_owner_ends`, `links_owner_click_expired`).
fn inactive(status: StatusFilter) -> bool {
    matches!(status, StatusFilter::Disabled | StatusFilter::Expired)
}

/// What checking a row costs, in postings of the trigram index read: a URL term half of a
/// million links hold, 23 triples, read its 11.5 million postings in about 200 ms (17 ns
/// each), where a row read and checked costs about 3 µs.
const ROW_CHECK_POSTINGS: u64 = 150;

/// Whether `f`'s search term is looked up in the trigram index, or checked on the rows its
/// disabled or expired status and its tags leave. Their indexes find those rows at once (a
/// status's partial index, the tags' `links_tags`, intersected as bitmaps); the trigram index
/// reads every posting of each of the term's triples, and the planner prices that far below
/// its cost: it took the index for a term in half the URLs beside an expired status, 500 ms a
/// statement, and beside a tag and a status, 190 ms where the rows those two leave were
/// checked in 60. Each side is sized by the planner's own estimates (`EXPLAIN`, from the
/// columns' statistics): the term's [`postings`] against the rows the status and tags leave
/// times [`ROW_CHECK_POSTINGS`]. A term a tenth of the links hold, of a few triples, stays
/// with the index, which answers it in milliseconds where checking every disabled row took
/// 100 ms and more.
async fn term_lookup<C: GenericClient>(c: &C, f: &ListFilter<'_>) -> Result<Lookup> {
    let narrowed = inactive(f.status) || !f.tags.is_empty();
    if f.search.is_none() || !narrowed {
        return Ok(Lookup::Indexed);
    }
    let rest = ListFilter {
        search: None,
        space: SpaceFilter::Any,
        domain: None,
        ..f.clone()
    };
    let (rest, args) = filter(&rest, Lookup::Indexed, Lookup::Indexed);
    let rest = format!("SELECT 1 FROM links l WHERE {rest}");
    let checks = estimated_rows(c, &rest, &args).await? * ROW_CHECK_POSTINGS;
    Ok(match postings(c, f).await? {
        Some(postings) if postings <= checks => Lookup::Indexed,
        _ => Lookup::OnRows,
    })
}

/// How many postings of the trigram index looking up `f`'s term reads, as the planner's
/// estimates size it: for each pattern the term is looked up by (itself, or a long term's
/// [`pieces`]), the rows it is in times its triples. `None` without a term, or for one of fewer
/// than three characters, which the index cannot look up.
async fn postings<C: GenericClient>(c: &C, f: &ListFilter<'_>) -> Result<Option<u64>> {
    match f.search {
        Some((_, text)) if text.chars().count() >= 3 => {}
        _ => return Ok(None),
    }
    let triples = |&(chars, rows): &(u64, u64)| rows * chars.saturating_sub(2);
    Ok(Some(pattern_rows(c, f).await?.iter().map(triples).sum()))
}

/// How many of the owner's links the planner expects `f`'s term in: those of its rarest
/// pattern. `None` without a term.
async fn term_rows<C: GenericClient>(c: &C, f: &ListFilter<'_>) -> Result<Option<u64>> {
    let sized = pattern_rows(c, f).await?;
    Ok(sized.iter().map(|&(_, rows)| rows).min())
}

/// Each pattern `f`'s term is looked up by (itself, or a long term's [`pieces`]): its
/// characters and the rows the planner expects it in. Each pattern is sized alone, by trying
/// it on the column's sampled values; sized together, a long term's pieces would be taken as
/// independent.
async fn pattern_rows<C: GenericClient>(c: &C, f: &ListFilter<'_>) -> Result<Vec<(u64, u64)>> {
    let Some((by, text)) = f.search else {
        return Ok(Vec::new());
    };
    let whole = [text];
    let patterns = if text.chars().count() > WHOLE_MAX {
        pieces(text)
    } else {
        whole.to_vec()
    };
    let mut sized = Vec::new();
    for pattern in patterns {
        let mut args = Args::default();
        let sql = format!(
            "SELECT 1 FROM links l WHERE l.owner_id = {} AND l.{} ILIKE {} ESCAPE '\\'",
            args.push(f.owner),
            column(by),
            args.push(like_pattern(pattern))
        );
        let chars = pattern.chars().count() as u64;
        sized.push((chars, estimated_rows(c, &sql, &args).await?));
    }
    Ok(sized)
}

/// How many of the owner's `links` the planner expects to match `f`, its term sized apart from
/// the rest: its estimate of both together takes a long term's pieces as independent of each
/// other, and a term in half the URLs was then taken for a few hundred links.
async fn expected_matches<C: GenericClient>(c: &C, f: &ListFilter<'_>, links: u64) -> Result<f64> {
    let rest = ListFilter {
        search: None,
        ..f.clone()
    };
    let (rest, args) = filter(&rest, Lookup::Indexed, Lookup::Indexed);
    let rest = format!("SELECT 1 FROM links l WHERE {rest}");
    let mut expected = estimated_rows(c, &rest, &args).await? as f64;
    if let Some(term) = term_rows(c, f).await? {
        expected *= term as f64 / links.max(1) as f64;
    }
    Ok(expected)
}

/// How many rows the planner expects the statement `select` to answer: the `rows=` of its
/// plan's top line.
async fn estimated_rows<C: GenericClient>(c: &C, select: &str, args: &Args) -> Result<u64> {
    let plan = rows(c, &format!("EXPLAIN {select}"), &args.refs()).await?;
    let top: String = match plan.first() {
        Some(row) => col(row, 0)?,
        None => return Ok(0),
    };
    let after = top.split_once("rows=").map_or("", |(_, rest)| rest);
    let digits = after
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after.len());
    Ok(after[..digits].parse().unwrap_or(0))
}

/// Whether a page of `f` is read by finding every match through the partial index of its
/// inactive status and sorting them, rather than by walking the clicks index until `end`
/// matches have passed. Both read rows at random: a walk meets a match every `links / n` rows,
/// so it reads about `end × links / n`, and disabled or expired links are few among an owner's
/// links and found through their own indexes. The planner cannot weigh the two, because it
/// sizes a term and a status apart, as if they were independent: ten of the 140 expired links
/// holding "gd", fewest clicks first, were read by walking the clicks index across a million
/// links (240 ms, against 47 sorted). Only an exact total says how many matches there are.
/// An id order is left to the planner: walking it reads the table in its own order, which
/// costs a fraction of reading the inactive links at random.
async fn sorts_every_match<C: GenericClient>(
    c: &C,
    f: &ListFilter<'_>,
    total: Total,
    end: u64,
) -> Result<bool> {
    if !inactive(f.status) || !matches!(f.sort, Sort::Max | Sort::Min) || !total.exact {
        return Ok(false);
    }
    // All the matches within the page's end are never more than a walk would read.
    if total.n <= end {
        return Ok(true);
    }
    Ok(sorting_costs_less(
        total.n,
        end,
        owner_links(c, f.owner).await?,
    ))
}

/// Whether finding a list's `matches` through their own index and sorting them costs less
/// than walking an index in the list's order until `end` of them have passed: the walk meets a
/// match every `links / matches` links, so it reads about `end × links / matches` rows.
fn sorting_costs_less(matches: u64, end: u64, links: u64) -> bool {
    matches.saturating_mul(matches) <= end.saturating_mul(links)
}

/// How many links `owner` has: the counter the schema's triggers keep.
async fn owner_links<C: GenericClient>(c: &C, owner: Id) -> Result<u64> {
    let sql = "SELECT link_count FROM owners WHERE id = $1";
    let links: Option<i64> = one(c, sql, &[&owner], |r| col(r, 0)).await?;
    Ok(count(links.unwrap_or(0)))
}

impl<C: GenericClient + Sync> PgTx<'_, C> {
    /// The links of `page`, in the list's order.
    fn links_by_id(&self, page: &[Id], sort: Sort) -> Result<Vec<Link>> {
        if page.is_empty() {
            return Ok(Vec::new());
        }
        let query = format!(
            "SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.id = ANY($1) ORDER BY {}",
            order_by(sort, false, false)
        );
        self.wait(all(self.c, &query, &[&page], link_from_row))
    }
}

impl<C: GenericClient + Sync> Search for PgTx<'_, C> {
    fn list_links(&self, f: &ListFilter<'_>) -> Result<(Vec<Link>, Total)> {
        self.wait(plan_for_values(self.c))?;
        let found = match self.wait(driven::matches(self.c, f))? {
            Some(matches) => Some((page_of(&matches, f), Total::exact(matches.len() as u64))),
            None => self.wait(walk::page(self.c, f))?,
        };
        if let Some((page, total)) = found {
            return Ok((self.links_by_id(&page, f.sort)?, total));
        }
        let term = self.wait(term_lookup(self.c, f))?;
        let (sql, mut args) = filter(f, term, Lookup::Indexed);
        // A term the trigram index looks up (three characters or more), or the pairs' index,
        // finds its matches without walking the list.
        let looked_up = term == Lookup::Indexed
            && f.search
                .is_some_and(|(by, text)| text.chars().count() >= 3 || paired(by, text));
        let (total, matches) = self.wait(total(self.c, f, &sql, &args, looked_up))?;
        if let Some(matches) = matches {
            let page = page_of(&in_order(matches, f.sort), f);
            return Ok((self.links_by_id(&page, f.sort)?, total));
        }
        if f.offset >= total.n {
            return Ok((Vec::new(), total));
        }
        let Slice {
            reverse,
            offset,
            limit,
        } = Slice::from_nearer_end(f, total);
        let sorted = self.wait(sorts_every_match(self.c, f, total, offset + limit))?;
        let limit = args.push(limit as i64);
        let offset = args.push(offset as i64);
        // The page's ids first (from an index, without reading the rows an OFFSET skips), then
        // only its own links, as on SQLite.
        let order = order_by(f.sort, reverse, false);
        let ids_order = match sorted {
            true => unwalkable(order),
            false => order.to_owned(),
        };
        let query = format!(
            "SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.id IN \
             (SELECT l.id FROM links l WHERE {sql} ORDER BY {ids_order} LIMIT {limit} \
             OFFSET {offset}) ORDER BY {order}"
        );
        let mut items = self.wait(all(self.c, &query, &args.refs(), link_from_row))?;
        if reverse {
            items.reverse();
        }
        Ok((items, total))
    }

    fn matching_ids(&self, f: &ListFilter<'_>) -> Result<RoaringTreemap> {
        self.wait(plan_for_values(self.c))?;
        if let Some(matches) = self.wait(driven::matches(self.c, f))? {
            return Ok(matches.into_iter().map(|id| id as u64).collect());
        }
        let term = self.wait(term_lookup(self.c, f))?;
        let (sql, args) = filter(f, term, Lookup::Indexed);
        let ids: Vec<Id> = self.wait(all(
            self.c,
            &format!("SELECT l.id FROM links l WHERE {sql} ORDER BY l.id"),
            &args.refs(),
            |r| col(r, 0),
        ))?;
        Ok(ids.into_iter().map(|id| id as u64).collect())
    }
}
