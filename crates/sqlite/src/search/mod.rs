//! Search and lists: every way links are found, in one place. A term of up to three
//! characters, or a longer one that many links contain, is answered by the short-term index
//! ([`short`]), which holds their matches as bitmaps, and so is a term longer than
//! [`WHOLE_MAX`](linkdeck_store::sql::WHOLE_MAX) (from its triples' bitmaps, each candidate checked); any other by the trigram
//! full-text index of its field ([`fts_table`]), unless its triples' bitmaps answer it for
//! less (a rare term holding a stretch every link has); the database keeps both in step with every
//! write by its own triggers, so no writer has to remember them. [`sets`] narrows and pages
//! matches known as ids, by a tag's, a space's and a domain's links kept as bitmaps too
//! ([`tag_sets`], [`place_sets`]); [`in_order`] pages many unchecked candidates of a term by checking
//! them in the list's order up to the count's bound; the status rules come from
//! [`super::status`].

mod bitmaps;
mod facts;
mod in_order;
mod place_sets;
mod ranking;
mod sets;
mod short;
mod stored_sets;
mod tag_sets;
#[cfg(test)]
mod tests;

/// Links added a chunk at a time (an import, a copy): the short-term index gathers their texts
/// on a thread of its own and writes each block of ids once.
pub use short::{Batch, Texts};

/// What a write transaction noted for the indexes (its triggers' notes) is taken in before it
/// commits: every write path of the store ends here, so no writer has to remember the index.
pub fn settle(tx: &Connection) -> Result<()> {
    short::settle(tx)?;
    tag_sets::settle(tx)?;
    place_sets::settle(tx)?;
    facts::settle(tx)
}

/// Builds the short-term index and the facts from the links the database holds, from wherever
/// they stopped: after rows arrived without the triggers (a copy), or to finish any build.
pub fn rebuild(tx: &Connection) -> Result<()> {
    short::catch_up(tx)?;
    facts::catch_up(tx)
}

/// The builds a schema migration asks for, each for the tables its version has.
pub mod upgrade {
    /// The facts large searches are filtered and sorted by (migration 9).
    pub use super::facts::catch_up as facts;
    /// Each domain's links, and those on the default domain, as bitmaps (migration 24).
    pub use super::place_sets::rebuild_domains as domain_sets;
    /// Each space's links, and those in no space, as bitmaps (migration 23).
    pub use super::place_sets::rebuild_spaces as space_sets;
    /// The short-term index, on a schema from before common terms (migrations 4 and 11).
    pub use super::short::catch_up_before_common as short_term_index;
    /// The first choice of common longer terms (migration 12).
    pub use super::short::common::choose_on_upgrade as common_terms;
    /// Each tag's links as bitmaps (migration 18).
    pub use super::tag_sets::rebuild as tag_sets;
}

/// The full-text index writes the terms it holds as a new segment whenever they pass its
/// `hashsize` (1 MiB by default: every hundred or so imported links), and merging those small
/// segments was a third of an import's cost. A bulk write raises it for its transaction, which
/// bounds the memory each field's index holds to this, and puts it back with [`bulk_end`]
/// before committing.
const BULK_FTS_HASH: i64 = 64 << 20;
/// FTS5's own default.
const FTS_HASH: i64 = 1 << 20;

/// Readies the full-text indexes for many links in one transaction.
pub fn bulk_begin(tx: &Connection) -> Result<()> {
    fts_hash(tx, BULK_FTS_HASH)
}

/// Puts the full-text indexes back as [`bulk_begin`] found them.
pub fn bulk_end(tx: &Connection) -> Result<()> {
    fts_hash(tx, FTS_HASH)
}

fn fts_hash(tx: &Connection, bytes: i64) -> Result<()> {
    for by in [SearchBy::Title, SearchBy::Alias, SearchBy::Url] {
        let table = fts_table(by);
        tx.execute(
            &format!("INSERT INTO {table}({table}, rank) VALUES ('hashsize', ?1)"),
            [bytes],
        )
        .map_err(db_error)?;
    }
    Ok(())
}

/// What tests of the upgrades and of the status rules read of the indexes' insides.
#[cfg(test)]
pub(crate) mod inside {
    pub use super::facts::{catch_up as catch_up_facts, of as facts_of};
    pub use super::short::matching as short_term_matching;
}

use linkdeck_store::sql::{column, order_by};
use linkdeck_store::{ListFilter, Search, Slice};
use roaring::RoaringTreemap;
use rusqlite::types::Value;
use rusqlite::{Connection, params, params_from_iter};

use super::status;
use super::tx::SqliteTx;
use crate::error::db_error;
use crate::link_rows::get;
use crate::sql::Statements;
use linkdeck_domain::{
    Id, Link, Result, SearchBy, Sort, SpaceFilter, StatusFilter, TagMatch, Total,
};
use short::Matches;

fn status_sql(status: StatusFilter) -> Option<&'static str> {
    match status {
        StatusFilter::All => None,
        StatusFilter::Disabled => Some(status::DISABLED),
        StatusFilter::Expired => Some(status::EXPIRED),
        StatusFilter::Active => Some(status::ACTIVE),
    }
}

/// The trigram full-text index of the field a search by `by` reads: one per field, so a
/// term's postings are that field's matches alone (schema migration 10).
fn fts_table(by: SearchBy) -> &'static str {
    match by {
        SearchBy::Title => "links_title_fts",
        SearchBy::Alias => "links_alias_fts",
        SearchBy::Url => "links_url_fts",
    }
}

/// The FROM and WHERE clauses of a list and their parameters: ?1 owner, ?2 now, then the filters
/// in order. A search is driven by the trigram index, so only the matching links are ever read
/// (terms the short-term index holds never come here: `list` answers them from it).
struct ListSql {
    from: &'static str,
    filter: String,
    values: Vec<Value>,
    full_text: bool,
}

/// A search's matches joined to their links.
fn search_from(by: SearchBy) -> &'static str {
    match by {
        SearchBy::Title => "links_title_fts f CROSS JOIN links l ON l.id = f.rowid",
        SearchBy::Alias => "links_alias_fts f CROSS JOIN links l ON l.id = f.rowid",
        SearchBy::Url => "links_url_fts f CROSS JOIN links l ON l.id = f.rowid",
    }
}

/// How a search of four characters or more reads its matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// The index's matches drive the query: each is read and checked (few matches, or id
    /// order, which the index yields itself).
    Matches,
    /// The links are walked in the sort's own index and each is looked up among the matches
    /// (many matches, sorted by clicks: the page fills after a few rows instead of reading and
    /// sorting every match).
    Walk,
}

fn list_sql(f: &ListFilter<'_>, plan: Plan) -> ListSql {
    let mut sql = String::from("l.owner_id = ?1");
    let mut values = vec![Value::Integer(f.owner), Value::Integer(f.now.as_second())];
    let mut full_text = false;
    let mut from = "links l";
    if let Some(status) = status_sql(f.status) {
        sql.push_str(" AND ");
        sql.push_str(status);
    }
    // `IS` matches a bound NULL too, and uses the index as `=` does.
    let spaces = match f.space {
        SpaceFilter::Any => Vec::new(),
        SpaceFilter::NoSpace => vec![Value::Null],
        SpaceFilter::In(space) => vec![Value::Integer(space)],
        // No space at all admits no link: `IS NULL` would admit the links in none.
        SpaceFilter::Among(set) if set.ids().is_empty() => vec![Value::Integer(0)],
        SpaceFilter::Among(set) => set.ids().iter().map(|&s| Value::Integer(s)).collect(),
    };
    if !spaces.is_empty() {
        let mut each = Vec::with_capacity(spaces.len());
        for space in spaces {
            values.push(space);
            each.push(format!("l.space_id IS ?{}", values.len()));
        }
        sql.push_str(&format!(" AND ({})", each.join(" OR ")));
    }
    if let Some(domain) = f.domain {
        values.push(Value::Integer(domain));
        sql.push_str(&format!(" AND l.domain_id = ?{}", values.len()));
    }
    if let Some((by, term)) = f.search {
        full_text = plan == Plan::Matches;
        from = match plan {
            Plan::Matches => search_from(by),
            // Named, so the planner cannot read every match and sort after all.
            Plan::Walk => "links l INDEXED BY links_owner_clicks",
        };
        let table = fts_table(by);
        values.push(Value::Text(fts_phrase(term)));
        sql.push_str(&match plan {
            Plan::Matches => format!(" AND f.{table} MATCH ?{}", values.len()),
            Plan::Walk => format!(
                " AND l.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?{})",
                values.len()
            ),
        });
    }
    ListSql {
        from,
        filter: sql,
        values,
        full_text,
    }
}

/// A quoted FTS5 phrase: every character is literal once quotes are doubled, so operators,
/// column names and wildcards in the term mean nothing.
fn fts_phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// How many links `owner` has (kept by the writes, so never counted).
pub(super) fn owner_link_count(conn: &Connection, owner: Id) -> Result<u64> {
    let sql = "SELECT link_count FROM owners WHERE id = ?1";
    let n: Option<i64> = conn.one(sql, [owner], |r| r.get(0))?;
    Ok(n.unwrap_or(0).max(0) as u64)
}

/// Whether a clicks-sorted search page is found sooner by walking the clicks index (about
/// `rows × links / total` rows until the page is full, `total` being the links that pass every
/// filter) than by reading every match of the search and sorting those that pass.
fn walk_is_cheaper(
    conn: &Connection,
    f: &ListFilter<'_>,
    sql: &ListSql,
    total: u64,
    rows: u64,
) -> Result<bool> {
    if !matches!(f.sort, Sort::Max | Sort::Min) || total == 0 {
        return Ok(false);
    }
    let links = owner_link_count(conn, f.owner)?;
    let walked = rows.saturating_mul(links) / total;
    if walked <= total {
        // The matches include every link that passes: reading them all is dearer still.
        return Ok(true);
    }
    let Some((by, _)) = f.search else {
        return Ok(false);
    };
    Ok(walked < search_matches(conn, by, &sql.values[sql.values.len() - 1])?)
}

/// How many links (of any owner) the full-text search matches, counted up to `limit`: the index
/// yields them in id order, so it stops there.
fn search_matches_up_to(
    conn: &Connection,
    by: SearchBy,
    phrase: &Value,
    limit: u64,
) -> Result<u64> {
    let table = fts_table(by);
    let sql = format!(
        "SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?1 \
         ORDER BY rowid LIMIT ?2)"
    );
    let n: i64 = conn.row(&sql, params![phrase, limit as i64], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// How many links (of any owner) the full-text search matches: the index alone answers.
fn search_matches(conn: &Connection, by: SearchBy, phrase: &Value) -> Result<u64> {
    search_matches_up_to(conn, by, phrase, i64::MAX as u64)
}

/// One page of links matching `f` and the number of all matching links (exact, but for a
/// search the full-text index pages alone: see [`search_in_id_order`]), read from the caller's
/// snapshot.
fn list(tx: &Connection, f: &ListFilter<'_>) -> Result<(Vec<Link>, Total)> {
    let tagged = tagged_ids(tx, f)?;
    let within = || admitted_as_sets(tx, f, tagged.as_ref());
    let asked = in_order::asked(tx, f)?;
    let indexed = match short_term_matches(tx, f, &within, Some(&asked))? {
        Some(Matches::Unchecked(mut candidates)) => {
            in_order::keep_tagged(&mut candidates, tagged.as_ref());
            sets::narrow_by_place(tx, f, candidates.ids_mut())?;
            if let Some((ids, total)) = in_order::select(tx, f, &asked, &candidates)? {
                return Ok((links(tx, f.owner, ids)?, f.bounded_total(total)));
            }
            Some(candidates.checked(tx)?)
        }
        Some(Matches::Known(set)) => Some(set),
        None => None,
    };
    if indexed.is_none()
        && f.tags.is_empty()
        && let Some(found) = search_in_id_order(tx, f)?
    {
        return Ok(found);
    }
    if let Some(set) = matches_as_ids(tx, f, indexed, tagged)? {
        let (ids, total) = sets::select(tx, f, set)?;
        return Ok((links(tx, f.owner, ids)?, Total::exact(total)));
    }
    if let Some((ids, total)) = placed(tx, f)? {
        return Ok((links(tx, f.owner, ids)?, Total::exact(total)));
    }
    let sql = list_sql(f, Plan::Matches);
    let total = count(tx, f, &sql)?;
    if f.offset >= total {
        return Ok((Vec::new(), Total::exact(total)));
    }
    if let Some(set) = inactive_by_clicks(tx, f, total)? {
        let (ids, total) = sets::select(tx, f, set)?;
        return Ok((links(tx, f.owner, ids)?, Total::exact(total)));
    }
    let Slice {
        reverse,
        offset,
        limit,
    } = Slice::from_nearer_end(f, Total::exact(total));
    let sql = if sql.full_text && walk_is_cheaper(tx, f, &sql, total, offset + limit)? {
        list_sql(f, Plan::Walk)
    } else {
        sql
    };
    let mut values = sql.values;
    values.push(Value::Integer(limit as i64));
    values.push(Value::Integer(offset as i64));
    // The page's ids first, then its links: SQLite builds every row an OFFSET skips, so a page
    // deep in a list would read and join 100,000 links to throw them away; the ids alone come
    // from an index (owner and id, or owner, clicks and id) without reading a link.
    let query = format!(
        "SELECT l.id FROM {} WHERE {} ORDER BY {} LIMIT ?{} OFFSET ?{}",
        sql.from,
        sql.filter,
        order_by(f.sort, reverse, sql.full_text),
        values.len() - 1,
        values.len()
    );
    let mut ids: Vec<Id> = tx.all(&query, params_from_iter(values), |r| r.get(0))?;
    if reverse {
        ids.reverse();
    }
    Ok((links(tx, f.owner, ids)?, Total::exact(total)))
}

/// The owner's links with these ids, in their order.
fn links(conn: &Connection, owner: Id, ids: Vec<Id>) -> Result<Vec<Link>> {
    let mut items = Vec::with_capacity(ids.len());
    for id in ids {
        items.extend(get(conn, owner, id)?);
    }
    Ok(items)
}

/// A page of a full-text search (one the short-term index did not answer) in id order with
/// nothing else to filter and every match the owner's: the index alone counts the matches and
/// yields the page's ids (it keeps them in id order), skipping rows without reading a link;
/// only the page's links are read. It counts up to the contract's bound
/// ([`ListFilter::count_limit`]): a stretch in a sixth of a million URLs took 300 ms to count
/// whole, and 12 ms to its first 10,001.
fn search_in_id_order(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<(Vec<Link>, Total)>> {
    let Some((by, term)) = f.search else {
        return Ok(None);
    };
    if !paged_by_full_text(conn, f)? {
        return Ok(None);
    }
    let phrase = Value::Text(fts_phrase(term));
    let total = f.bounded_total(search_matches_up_to(conn, by, &phrase, f.count_limit())?);
    if f.offset >= total.n {
        return Ok(Some((Vec::new(), total)));
    }
    let slice = Slice::from_nearer_end(f, total);
    let direction = match (f.sort == Sort::Desc) != slice.reverse {
        true => "DESC",
        false => "ASC",
    };
    let table = fts_table(by);
    let mut ids: Vec<Id> = conn.all(
        &format!(
            "SELECT rowid FROM {table} WHERE {table} MATCH ?1 \
             ORDER BY rowid {direction} LIMIT ?2 OFFSET ?3"
        ),
        params![phrase, slice.limit as i64, slice.offset as i64],
        |r| r.get(0),
    )?;
    if slice.reverse {
        ids.reverse();
    }
    Ok(Some((links(conn, f.owner, ids)?, total)))
}

/// Whether the full-text index alone pages the list `f` when it answers its search
/// ([`search_in_id_order`]): in id order, with nothing else to filter, every link the owner's.
fn paged_by_full_text(conn: &Connection, f: &ListFilter<'_>) -> Result<bool> {
    let unfiltered = f.status == StatusFilter::All
        && f.space.is_any()
        && f.domain.is_none()
        && f.tags.is_empty();
    Ok(unfiltered && matches!(f.sort, Sort::Desc | Sort::Asc) && sole_owner(conn, f.owner)?)
}

/// The ids of every link matching `f` (its paging and order aside), read the way a list reads
/// its matches.
fn matching_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<RoaringTreemap> {
    let tagged = tagged_ids(conn, f)?;
    let within = || admitted_as_sets(conn, f, tagged.as_ref());
    let indexed = match short_term_matches(conn, f, &within, None)? {
        Some(matches) => Some(matches.known(conn)?),
        None => None,
    };
    if let Some(mut set) = matches_as_ids(conn, f, indexed, tagged)? {
        sets::narrow(conn, f, &mut set)?;
        return Ok(set);
    }
    let sql = list_sql(f, Plan::Matches);
    // `?2 IS NOT NULL` names the time parameter, which not every filter uses.
    let ids = conn.all(
        &format!(
            "SELECT l.id FROM {} WHERE {} AND ?2 IS NOT NULL",
            sql.from, sql.filter
        ),
        params_from_iter(&sql.values),
        |r| r.get::<_, i64>(0).map(|id| id as u64),
    )?;
    Ok(bitmaps::set_of(ids))
}

/// The ids of the owner's links that the search and the tags of `f` ask for, when they are
/// known as a set: a search the short-term index answered (`indexed`), one the full-text index
/// yields as ids, and the links carrying the tags, intersected. A tag filter makes every list a
/// set: its links come from the tag index alone, however few, and the search — any of its
/// matches, the owner's or not — only narrows them.
fn matches_as_ids(
    conn: &Connection,
    f: &ListFilter<'_>,
    indexed: Option<RoaringTreemap>,
    tagged: Option<RoaringTreemap>,
) -> Result<Option<RoaringTreemap>> {
    let searched = match indexed {
        Some(set) => Some(set),
        None if f.tags.is_empty() => full_text_matches_as_ids(conn, f)?,
        None => full_text_ids(conn, f)?,
    };
    let Some(mut tagged) = tagged else {
        return Ok(searched);
    };
    if let Some(searched) = searched {
        tagged &= searched;
    }
    Ok(Some(tagged))
}

/// The ids of the owner's disabled or expired links, when a list asks for them alone in clicks
/// order deeper than a short walk of the clicks index reaches (`total` of them): read from their
/// partial indexes, they are ranked by their facts in one pass, where the walk passed every
/// link with more clicks than the page's (page 1,000 of the disabled ones, most clicks first:
/// 470 ms).
fn inactive_by_clicks(
    conn: &Connection,
    f: &ListFilter<'_>,
    total: u64,
) -> Result<Option<RoaringTreemap>> {
    let inactive = matches!(f.status, StatusFilter::Disabled | StatusFilter::Expired);
    if f.search.is_some() || !inactive || !matches!(f.sort, Sort::Max | Sort::Min) {
        return Ok(None);
    }
    if sets::walks(conn, f, total)? {
        return Ok(None);
    }
    sets::inactive_ids(conn, f)
}

/// The page and total of a list without a search or tags in a place — a space, no space,
/// several spaces, a domain — selected from the place's links ([`sets::place_ids`], kept as
/// bitmaps). In SQL such a list read every link of the place to count it (7,000,000 in no
/// space at ten million links: 150 ms), and in clicks order walked the clicks index past every
/// other link to reach a space's page (page 100 of a space holding one link in 145: 360 ms).
fn placed(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<(Vec<Id>, u64)>> {
    let plain = f.search.is_none() && f.tags.is_empty();
    if !plain {
        return Ok(None);
    }
    let Some(place) = sets::place_ids(conn, f)? else {
        return Ok(None);
    };
    let in_place = ListFilter {
        space: SpaceFilter::Any,
        domain: None,
        ..f.clone()
    };
    sets::select(conn, &in_place, place).map(Some)
}

/// The links a list's tags and an inactive status admit, as one set, when it asks for either:
/// all a search that checks links one by one needs to check.
fn admitted_as_sets(
    conn: &Connection,
    f: &ListFilter<'_>,
    tagged: Option<&RoaringTreemap>,
) -> Result<Option<RoaringTreemap>> {
    let inactive = sets::inactive_ids(conn, f)?;
    Ok(match (tagged, inactive) {
        (None, inactive) => inactive,
        (Some(tagged), None) => Some(tagged.clone()),
        (Some(tagged), Some(inactive)) => Some(inactive & tagged),
    })
}

/// The ids of the owner's links carrying every tag of `f` (or any, as `f.tag_match` says);
/// `None` when `f` asks for no tag.
fn tagged_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<RoaringTreemap>> {
    if f.tags.is_empty() {
        return Ok(None);
    }
    let mut found: Option<RoaringTreemap> = None;
    for tag in f.tags {
        let ids = tag_sets::ids(conn, f.owner, tag)?;
        found = Some(match (found, f.tag_match) {
            (None, _) => ids,
            (Some(all), TagMatch::All) => all & ids,
            (Some(any), TagMatch::Any) => any | ids,
        });
    }
    Ok(found)
}

/// The ids of the owner's links that a search matches, when the short-term index answers it:
/// a term it holds the matches of, or one whose triples' rows answer it for less than the
/// full-text index would ([`short::matching_by_triples`]).
/// Links it checks one by one are checked only among those `within` reads, and may be left
/// unchecked for a list that `asked`.
fn short_term_matches(
    conn: &Connection,
    f: &ListFilter<'_>,
    within: short::Within<'_>,
    asked: Option<&short::Asked>,
) -> Result<Option<Matches>> {
    let Some((by, term)) = f.search else {
        return Ok(None);
    };
    if let Some(term) = short::indexed_term(conn, by, term)? {
        return short::matching_within(conn, f.owner, by, &term, Some(within), asked).map(Some);
    }
    short::matching_by_triples(conn, f.owner, by, term, Some(within), asked)
}

/// The ids of the owner's links that a full-text search matches, when they are best read up
/// front: when every match is the owner's. Like the short-term index's matches, they are then
/// read once, narrowed in memory and paged from the set — in clicks order by walking the
/// clicks index from the nearer end — instead of being read by SQL for the total and again for
/// the page, where a clicks order needed a temporary table of every match and a deep page
/// stepped through every row before it.
fn full_text_matches_as_ids(
    conn: &Connection,
    f: &ListFilter<'_>,
) -> Result<Option<RoaringTreemap>> {
    if f.search.is_none() || !sole_owner(conn, f.owner)? {
        return Ok(None);
    }
    full_text_ids(conn, f)
}

/// Every link's id (of any owner) that the full-text search of `f` matches.
fn full_text_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<RoaringTreemap>> {
    let Some((by, term)) = f.search else {
        return Ok(None);
    };
    // In id order, which the index yields without sorting and the set is built quickest from;
    // a large search is mostly this loop, so it reads each id as plainly as it can.
    let table = fts_table(by);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid"
        ))
        .map_err(db_error)?;
    let mut rows = stmt.query([fts_phrase(term)]).map_err(db_error)?;
    // Room for every link the owner has (when every match is the owner's, for all of them):
    // only what is filled is ever touched, and growing a list of 100,000 ids by doubling copied
    // it over and over.
    let mut ids = Vec::with_capacity(owner_link_count(conn, f.owner)? as usize);
    while let Some(row) = rows.next().map_err(db_error)? {
        let id = row
            .get_ref(0)
            .and_then(|v| Ok(v.as_i64()?))
            .map_err(db_error)?;
        ids.push(id as u64);
    }
    Ok(Some(bitmaps::set_of(ids)))
}

/// The number of links matching `f`. A status filter alone is answered from the partial indexes
/// by inclusion-exclusion over the (small) sets of expired and disabled links, so the totals stay
/// quick at a million links.
fn count(conn: &Connection, f: &ListFilter<'_>, sql: &ListSql) -> Result<u64> {
    if f.search.is_some() || !f.space.is_any() || f.domain.is_some() {
        let count = format!("SELECT count(*) FROM {} WHERE {}", sql.from, sql.filter);
        let n: i64 = conn.row(&count, params_from_iter(&sql.values), |r| r.get(0))?;
        return Ok(n as u64);
    }
    let owner = f.owner;
    let now = f.now.as_second();
    let n = |sql: &str| -> Result<u64> {
        let n: i64 = conn.row(sql, params![owner, now], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    };
    // Each query names its index so a planner change cannot turn it into a scan.
    const TOTAL: &str = "SELECT link_count FROM owners WHERE id = ?1 AND ?2 IS NOT NULL";
    let total = || -> Result<u64> {
        let n: Option<i64> = conn.one(TOTAL, params![owner, now], |r| r.get(0))?;
        Ok(n.unwrap_or(0).max(0) as u64)
    };
    Ok(match f.status {
        StatusFilter::All => total()?,
        StatusFilter::Disabled => n(status::COUNT_DISABLED)?,
        StatusFilter::Expired => (n(status::COUNT_BY_DATE)? + n(status::COUNT_BY_CLICKS)?)
            .saturating_sub(n(status::COUNT_BY_CLICKS_AND_DATE)?),
        StatusFilter::Active => {
            let inactive = (n(status::COUNT_BY_DATE)? + n(status::COUNT_INACTIVE)?)
                .saturating_sub(n(status::COUNT_INACTIVE_AND_DATE)?);
            total()?.saturating_sub(inactive)
        }
    })
}

/// Whether no other owner has any link.
fn sole_owner(conn: &Connection, owner: Id) -> Result<bool> {
    conn.row(
        "SELECT NOT EXISTS (SELECT 1 FROM owners WHERE id <> ?1 AND link_count > 0)",
        [owner],
        |r| r.get(0),
    )
}

impl Search for SqliteTx<'_> {
    fn list_links(&self, f: &ListFilter<'_>) -> Result<(Vec<Link>, Total)> {
        list(self.conn, f)
    }

    fn matching_ids(&self, f: &ListFilter<'_>) -> Result<RoaringTreemap> {
        matching_ids(self.conn, f)
    }
}
