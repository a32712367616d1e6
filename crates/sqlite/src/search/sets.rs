//! A search's matches as a set of link ids in memory (a roaring bitmap): narrowed by a list's
//! status, space and domain, counted, and paged in the list's order. Searches whose matches are
//! known as ids up front use it: short terms (`short`) for everything, full-text searches when
//! every link is the owner's and the order is by clicks or there is a filter (in id order with
//! no filter the trigram index pages them itself).

use roaring::RoaringTreemap;
use rusqlite::{Connection, OptionalExtension, Params, params};

use super::bitmaps::set_of;
use super::facts;
use super::place_sets;
use super::ranking::{Ranking, Window};
use super::status::{BY_CLICKS_IDS, BY_DATE_IDS, DISABLED_IDS};
use super::{self as search, ListFilter};
use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{Id, LinkStatus, Result, Sort, SpaceFilter, StatusFilter, Total};
use linkdeck_store::time;

/// Below this many members, narrowing reads each member's row; from here on it reads the ids of
/// the space's or domain's links from their bitmaps, and the members' facts (`facts`).
const STREAM_FROM: u64 = facts::MEMBERS_FROM;

/// The ids `query` yields for its parameters, as a set.
fn ids_of(conn: &Connection, query: &str, params: impl Params) -> Result<RoaringTreemap> {
    let ids = conn.all(query, params, |r| r.get::<_, Id>(0).map(|id| id as u64))?;
    Ok(set_of(ids))
}

/// The members of `set` (links of `f.owner`) that pass the status, space and domain of `f`,
/// counted, and the ids of the page `f.offset`, `f.limit` of them in the order of `f.sort`.
pub fn select(
    conn: &Connection,
    f: &ListFilter<'_>,
    mut set: RoaringTreemap,
) -> Result<(Vec<Id>, u64)> {
    if set.len() < facts::MEMBERS_FROM {
        narrow(conn, f, &mut set)?;
        return Ok((page(conn, f, &set)?, set.len()));
    }
    narrow_by_place(conn, f, &mut set)?;
    if f.status == StatusFilter::All {
        return Ok((page(conn, f, &set)?, set.len()));
    }
    let by_clicks = matches!(f.sort, Sort::Max | Sort::Min);
    // A clicks-ordered page that the clicks index does not reach in a few steps comes from one
    // pass over the members' facts, which decides each member's status and its place at once:
    // crossing the inactive links off first cost as much again (4 ms of 850,000 members).
    // Except for the active links among most of the owner's: where their page lies is only
    // known from their count, and the last page (as near the fewest end as the first is to
    // the most) was ranked from 650,000 members' facts (19 ms) for want of it.
    let most_active =
        f.status == StatusFilter::Active && most_of_the_owners(conn, f.owner, set.len())?;
    if by_clicks && !most_active && !walks(conn, f, set.len())? {
        return ranked(conn, f, &set, status_test(conn, f)?);
    }
    if cross_off_inactive(conn, f, &mut set)? {
        if f.status == StatusFilter::Active || !by_clicks {
            return Ok((page(conn, f, &set)?, set.len()));
        }
        // Expired and disabled links are few and not spread evenly over the clicks (a link
        // at its click limit has many): a walk of the clicks index from the fewest end would
        // pass most links before the page filled. The few members' facts order them.
        return ranked(conn, f, &set, |_, _| true);
    }
    if !by_clicks {
        // In id order a member's place is its rank among those admitted: one pass keeps them
        // and the page is selected from what it kept, where a ranking's window, sampled from
        // one block in sixteen, missed a page near the front and passed over them twice.
        keep_admitted(conn, f, &mut set)?;
        return Ok((page(conn, f, &set)?, set.len()));
    }
    // The members' facts decide their status, and then their order too.
    ranked(conn, f, &set, status_test(conn, f)?)
}

/// The members of `set` that `admits`, counted, and the page `f.offset`, `f.limit` of them in
/// the order of `f.sort`, from one pass over their facts. A large set is first sampled — its
/// members in one block of ids in [`SAMPLE_EVERY`] — to bound the keys the page can have, so
/// the pass keeps only those; if the sample misled, a second pass ranks every member.
fn ranked(
    conn: &Connection,
    f: &ListFilter<'_>,
    set: &RoaringTreemap,
    admits: impl Fn(Id, facts::Facts) -> bool,
) -> Result<(Vec<Id>, u64)> {
    let pending = facts::Pending::read(conn, set)?;
    let limit = u64::from(f.limit);
    if set.len() >= WINDOW_FROM {
        let sampled = sample(set);
        let mut sample = Ranking::with_capacity(f.sort, sampled.len() as usize);
        each_admitted(conn, &pending, &sampled, &admits, |id, clicks| {
            sample.push(clicks, id)
        })?;
        // The sample's members against all: admitted or not, as the page counts only those
        // admitted and the sample did the same.
        let scale = set.len() * sample.len() as u64 / sampled.len().max(1);
        if let Some(mut window) = Window::around(sample, scale, f.offset, limit) {
            each_admitted(conn, &pending, set, &admits, |id, clicks| {
                window.push(clicks, id)
            })?;
            let total = window.total();
            if let Some(ids) = window.page(f.offset, limit) {
                return Ok((ids, total));
            }
        }
    }
    let mut ranking = Ranking::with_capacity(f.sort, set.len() as usize);
    each_admitted(conn, &pending, set, &admits, |id, clicks| {
        ranking.push(clicks, id)
    })?;
    let total = ranking.len() as u64;
    let offset = usize::try_from(f.offset).unwrap_or(usize::MAX);
    Ok((ranking.page(offset, f.limit as usize), total))
}

/// Every member of `set`, in the clicks order of `f.sort`, from one pass over their facts: how
/// a term's candidates are met in order when the clicks index would be walked far to meet them
/// (they are few among the owner's links). Their status is left to the check of each: deciding
/// it here needs the ids of every link ended by date, a read as long as the check of thousands
/// of candidates, and a list that asks for inactive links has its candidates narrowed to those
/// already.
pub fn in_clicks_order(
    conn: &Connection,
    f: &ListFilter<'_>,
    set: &RoaringTreemap,
) -> Result<Vec<Id>> {
    let pending = facts::Pending::read(conn, set)?;
    let mut ranking = Ranking::with_capacity(f.sort, set.len() as usize);
    facts::each(conn, &pending, set, |id, facts| {
        ranking.push(facts.clicks, id)
    })?;
    let len = ranking.len();
    Ok(ranking.page(0, len))
}

/// Calls `visit` with the id and clicks of each member of `part` that `admits`, in id order
/// (`pending` read for a set holding `part`).
fn each_admitted(
    conn: &Connection,
    pending: &facts::Pending,
    part: &RoaringTreemap,
    admits: &impl Fn(Id, facts::Facts) -> bool,
    mut visit: impl FnMut(Id, u64),
) -> Result<()> {
    facts::each(conn, pending, part, |id, facts| {
        if admits(id, facts) {
            visit(id, facts.clicks);
        }
    })
}

/// From this many members, [`ranked`] samples first (in tests, as soon as the facts are read,
/// so that the property tests of lists go through a window, and past one that misled).
const WINDOW_FROM: u64 = if cfg!(test) {
    facts::MEMBERS_FROM
} else {
    65_536
};

/// One block of this many ids in [`SAMPLE_EVERY`] is sampled: the facts snapshot's blocks, so
/// the sample reads a sixteenth of them.
const SAMPLE_BLOCK: u64 = if cfg!(test) { 4 } else { 4_096 };
const SAMPLE_EVERY: u64 = if cfg!(test) { 2 } else { 16 };

/// The members of `set` in every [`SAMPLE_EVERY`]th block of ids.
fn sample(set: &RoaringTreemap) -> RoaringTreemap {
    let (Some(min), Some(max)) = (set.min(), set.max()) else {
        return RoaringTreemap::new();
    };
    let block = SAMPLE_BLOCK;
    let mut mask = RoaringTreemap::new();
    let mut start = min - min % block;
    while start <= max {
        mask.insert_range(start..start + block);
        start = start.saturating_add(block * SAMPLE_EVERY);
    }
    mask & set
}

/// Keeps the members of `set` (links of `f.owner`) that pass the status, space and domain of `f`.
pub fn narrow(conn: &Connection, f: &ListFilter<'_>, set: &mut RoaringTreemap) -> Result<()> {
    if f.status == StatusFilter::All && f.space.is_any() && f.domain.is_none() {
        return Ok(());
    }
    if set.len() < STREAM_FROM {
        return narrow_by_reading(conn, f, set);
    }
    narrow_by_place(conn, f, set)?;
    if f.status != StatusFilter::All && !cross_off_inactive(conn, f, set)? {
        keep_admitted(conn, f, set)?;
    }
    Ok(())
}

/// Keeps the members of `set` whose status `f.status` admits, from one pass over their facts.
fn keep_admitted(conn: &Connection, f: &ListFilter<'_>, set: &mut RoaringTreemap) -> Result<()> {
    let admits = status_test(conn, f)?;
    let pending = facts::Pending::read(conn, set)?;
    let mut kept = Vec::with_capacity(set.len() as usize);
    each_admitted(conn, &pending, set, &admits, |id, _| kept.push(id as u64))?;
    *set = set_of(kept);
    Ok(())
}

/// Keeps the members of `set` in `f`'s space and domain, from the ids of the links there.
pub fn narrow_by_place(
    conn: &Connection,
    f: &ListFilter<'_>,
    set: &mut RoaringTreemap,
) -> Result<()> {
    if let Some(place) = place_ids(conn, f)? {
        *set &= place;
    }
    Ok(())
}

/// The ids of the owner's links in `f`'s space (one, several or none) and domain, from their
/// bitmaps; `None` when `f` asks for neither.
pub fn place_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<RoaringTreemap>> {
    let space = |key| place_sets::ids(conn, &place_sets::SPACES, f.owner, key);
    let mut place = match f.space {
        SpaceFilter::Any => None,
        SpaceFilter::NoSpace => Some(space(None)?),
        SpaceFilter::In(id) => Some(space(Some(id))?),
        SpaceFilter::Among(spaces) => {
            let mut among = RoaringTreemap::new();
            for &id in spaces.ids() {
                among |= space(Some(id))?;
            }
            Some(among)
        }
    };
    if let Some(domain) = f.domain {
        let domain = place_sets::ids(conn, &place_sets::DOMAINS, f.owner, Some(domain))?;
        place = Some(match place {
            Some(place) => place & domain,
            None => domain,
        });
    }
    Ok(place)
}

/// Keeps the members of `set` whose status `f.status` admits by crossing the owner's inactive
/// links off it — the ids of its disabled links, of those at their click limit and of those
/// ended by `f.now`, each read from its partial index — when the set holds most of the owner's
/// links (a one-character term matches 940,000 of a million): learning every member's facts
/// costs about 27 ns a member, 25 ms there, against 12 ms for the whole run crossing off 27,000
/// inactive links. For a smaller set the facts are the quicker way (109,000 members: 17.5 ms a
/// run against 19.5), and false is returned with `set` as it was. Deciding by the inactive
/// links' counts instead cost as much as it saved.
fn cross_off_inactive(
    conn: &Connection,
    f: &ListFilter<'_>,
    set: &mut RoaringTreemap,
) -> Result<bool> {
    if f.status == StatusFilter::All {
        return Ok(true);
    }
    if !most_of_the_owners(conn, f.owner, set.len())? {
        return Ok(false);
    }
    let ids = |query: &str| ids_of(conn, query, params![f.owner, f.now.as_second()]);
    match f.status {
        StatusFilter::All => {}
        StatusFilter::Disabled | StatusFilter::Expired => {
            *set &= inactive_ids(conn, f)?.unwrap_or_default();
        }
        StatusFilter::Active => {
            *set -= ids(DISABLED_IDS)?;
            *set -= ids(BY_CLICKS_IDS)?;
            *set -= ids(BY_DATE_IDS)?;
        }
    }
    Ok(true)
}

/// Whether a set of `len` of the owner's links holds at least half of them.
fn most_of_the_owners(conn: &Connection, owner: Id, len: u64) -> Result<bool> {
    Ok(len.saturating_mul(2) >= search::owner_link_count(conn, owner)?)
}

/// The ids of the owner's links that `f`'s status admits when it admits only inactive ones
/// (disabled, or expired by date or clicks), each set read from its partial index; `None` for
/// a status that admits the active links too.
pub fn inactive_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<RoaringTreemap>> {
    let ids = |query: &str| ids_of(conn, query, params![f.owner, f.now.as_second()]);
    Ok(match f.status {
        StatusFilter::All | StatusFilter::Active => None,
        StatusFilter::Disabled => Some(ids(DISABLED_IDS)?),
        StatusFilter::Expired => Some(ids(BY_CLICKS_IDS)? | ids(BY_DATE_IDS)?),
    })
}

/// Whether a member with these facts has a status `f.status` admits. Facts say all but whether
/// a link's end instant has come: the ids of the owner's links ended by `f.now` are read for
/// that (links with an end are few).
fn status_test(
    conn: &Connection,
    f: &ListFilter<'_>,
) -> Result<impl Fn(Id, facts::Facts) -> bool + use<>> {
    let status = f.status;
    let ended = match status {
        StatusFilter::All | StatusFilter::Disabled => Vec::new(),
        StatusFilter::Expired | StatusFilter::Active => {
            conn.all(BY_DATE_IDS, params![f.owner, f.now.as_second()], |r| {
                r.get::<_, Id>(0).map(|id| id as u64)
            })?
        }
    };
    let ended = Ascending::new(ended);
    Ok(move |id: Id, facts: facts::Facts| {
        status == StatusFilter::All || status.admits(facts.status(ended.contains(id as u64)))
    })
}

/// Ids looked up in ascending order, pass after pass — as members are visited — by a cursor
/// that gallops forward from the last one found. A set's own lookup for each member was most
/// of a large list's time at ten million links (2.4 million members, 500,000 links ended).
struct Ascending {
    ids: Vec<u64>,
    at: std::cell::Cell<usize>,
}

impl Ascending {
    fn new(mut ids: Vec<u64>) -> Ascending {
        ids.sort_unstable();
        Ascending {
            ids,
            at: std::cell::Cell::new(0),
        }
    }

    fn contains(&self, id: u64) -> bool {
        let ids = &self.ids;
        let mut at = self.at.get();
        // A new pass starts again from the front.
        if at > 0 && ids[at - 1] >= id {
            at = 0;
        }
        // The first position at or past `id`: doubling steps to a bound, then a binary search
        // below it, so a few members among many ids cost a few steps each as well.
        let mut step = 1;
        while at + step <= ids.len() && ids[at + step - 1] < id {
            at += step;
            step *= 2;
        }
        let end = (at + step).min(ids.len());
        at += ids[at..end].partition_point(|&x| x < id);
        self.at.set(at);
        ids.get(at) == Some(&id)
    }
}

/// [`narrow`] by reading each member's space, domain and status.
fn narrow_by_reading(
    conn: &Connection,
    f: &ListFilter<'_>,
    set: &mut RoaringTreemap,
) -> Result<()> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT space_id, domain_id, disabled, ends_at, expiration_clicks, clicks \
             FROM links WHERE id = ?1",
        )
        .map_err(db_error)?;
    let mut kept = RoaringTreemap::new();
    for id in set.iter() {
        let passes = stmt
            .query_row([id as i64], |r| {
                let status = LinkStatus::derive(
                    r.get(2)?,
                    r.get::<_, Option<i64>>(3)?.map(time),
                    r.get(4)?,
                    r.get::<_, i64>(5)?.max(0) as u64,
                    f.now,
                );
                let space: Option<Id> = r.get(0)?;
                let domain: Option<Id> = r.get(1)?;
                Ok(f.status.admits(status)
                    && f.space.admits(space)
                    && (f.domain.is_none() || domain == f.domain))
            })
            .optional()
            .map_err(db_error)?;
        if passes == Some(true) {
            kept.insert(id);
        }
    }
    *set = kept;
    Ok(())
}

/// The ids of the page `f.offset`, `f.limit` of `set` in the order of `f.sort`.
pub fn page(conn: &Connection, f: &ListFilter<'_>, set: &RoaringTreemap) -> Result<Vec<Id>> {
    let len = set.len();
    let end = (f.offset + u64::from(f.limit)).min(len);
    if f.offset >= end {
        return Ok(Vec::new());
    }
    let select = |rank: u64| set.select(rank).map(|id| id as Id);
    Ok(match f.sort {
        Sort::Desc => (f.offset..end)
            .filter_map(|i| select(len - 1 - i))
            .collect(),
        Sort::Asc => (f.offset..end).filter_map(select).collect(),
        Sort::Max | Sort::Min => by_clicks(conn, f, set)?,
    })
}

pub const MOST_CLICKS_FIRST: &str = "SELECT id FROM links INDEXED BY links_owner_clicks \
     WHERE owner_id = ?1 ORDER BY clicks DESC, id DESC";
pub const FEWEST_CLICKS_FIRST: &str = "SELECT id FROM links INDEXED BY links_owner_clicks \
     WHERE owner_id = ?1 ORDER BY clicks ASC, id ASC";

/// How many entries of the clicks index are stepped through in the time one link's row is read
/// by its id (a descent of the table's B-tree). Measured at a million links: 150,000 reads took
/// about 120 ms and 500,000 steps about 40 ms, so a read costs about ten steps; rounded down,
/// since the walk stops as soon as the page is full.
pub const ROW_READ_COST: u64 = 8;

/// How many members' facts are read and ranked (`ranked`) in the time the clicks index takes
/// one step: at 940,000 members of a million links both ways cost about the same when the walk
/// is 85,000–106,000 steps long (pages 4,000–5,000), about 100 ns a step against 10 a member.
pub const STEP_COST: u64 = 10;

/// Whether the page `f.offset`, `f.limit` of `len` members in clicks order is found sooner by
/// walking the owner's links in the clicks index from the nearer end (about `end × links / len`
/// steps until the page is full) than by learning each member's clicks — from the facts
/// snapshot for a large set, from its row for a small one.
pub fn walks(conn: &Connection, f: &ListFilter<'_>, len: u64) -> Result<bool> {
    if len == 0 {
        return Ok(true);
    }
    let slice = search::Slice::from_nearer_end(f, Total::exact(len));
    let links = search::owner_link_count(conn, f.owner)?;
    let walked = (slice.offset + slice.limit).saturating_mul(links) / len;
    Ok(if len >= facts::MEMBERS_FROM {
        walked.saturating_mul(STEP_COST) < len
    } else {
        walked < len.saturating_mul(ROW_READ_COST)
    })
}

/// [`page`] in clicks order: by walking the clicks index from the nearer end of the list when
/// [`walks`] says so, otherwise from each member's clicks.
fn by_clicks(conn: &Connection, f: &ListFilter<'_>, set: &RoaringTreemap) -> Result<Vec<Id>> {
    let len = set.len();
    let walk = walks(conn, f, len)?;
    if len >= facts::MEMBERS_FROM && !walk {
        return Ok(ranked(conn, f, set, |_, _| true)?.0);
    }
    let search::Slice {
        reverse,
        offset: skip,
        limit: take,
    } = search::Slice::from_nearer_end(f, Total::exact(len));
    let most_first = (f.sort == Sort::Max) != reverse;
    let mut ids = Vec::with_capacity(take as usize);
    if walk {
        let query = if most_first {
            MOST_CLICKS_FIRST
        } else {
            FEWEST_CLICKS_FIRST
        };
        let mut stmt = conn.prepare_cached(query).map_err(db_error)?;
        let mut rows = stmt.query([f.owner]).map_err(db_error)?;
        let mut skipped = 0;
        while let Some(row) = rows.next().map_err(db_error)? {
            let id: Id = row.get(0).map_err(db_error)?;
            if !set.contains(id as u64) {
                continue;
            }
            if skipped < skip {
                skipped += 1;
                continue;
            }
            ids.push(id);
            if ids.len() as u64 == take {
                break;
            }
        }
    } else {
        let mut stmt = conn
            .prepare_cached("SELECT clicks FROM links WHERE id = ?1")
            .map_err(db_error)?;
        let mut clicks = Vec::with_capacity(len as usize);
        for id in set.iter() {
            let n: i64 = stmt
                .query_row([id as i64], |r| r.get(0))
                .map_err(db_error)?;
            clicks.push((n, id as Id));
        }
        if most_first {
            clicks.sort_unstable_by(|a, b| b.cmp(a));
        } else {
            clicks.sort_unstable();
        }
        ids.extend(
            clicks
                .into_iter()
                .skip(skip as usize)
                .take(take as usize)
                .map(|(_, id)| id),
        );
    }
    if reverse {
        ids.reverse();
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Ascending;

    proptest! {
        /// Looked up pass after pass, each in ascending order, dense or sparse against the ids,
        /// the cursor says what a set says.
        #[test]
        fn ascending_lookups_agree_with_a_set(
            ids in proptest::collection::btree_set(0..2_000u64, 0..300),
            passes in proptest::collection::vec(
                proptest::collection::btree_set(0..2_100u64, 0..400), 1..4),
        ) {
            let cursor = Ascending::new(ids.iter().rev().copied().collect());
            for pass in &passes {
                for &id in pass {
                    prop_assert_eq!(cursor.contains(id), ids.contains(&id), "{}", id);
                }
            }
        }
    }
}
