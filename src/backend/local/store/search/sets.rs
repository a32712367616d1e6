//! A search's matches as a set of link ids in memory (a roaring bitmap): narrowed by a list's
//! status, space and domain, counted, and paged in the list's order. Searches whose matches are
//! known as ids up front use it: short terms (`short`) for everything, full-text searches when
//! every link is the owner's and the order is by clicks or there is a filter (in id order with
//! no filter the trigram index pages them itself).

use roaring::{RoaringBitmap, RoaringTreemap};
use rusqlite::{Connection, OptionalExtension, params};

use super::super::{db_error, time};
use super::facts;
use super::status::{BY_CLICKS_IDS, BY_DATE_IDS, DISABLED_IDS};
use super::{self as search, ListFilter};
use crate::domain::{Id, LinkStatus, Result, Sort, StatusFilter};

/// Below this many members, narrowing reads each member's row; from here on it reads the ids of
/// the space's or domain's links from their indexes, and the members' facts (`facts`).
const STREAM_FROM: u64 = facts::MEMBERS_FROM;

// The ids of an owner's links in a space or a domain (the inactive states' are in `status`).
// ?1 owner, ?2 the space or domain.
const SPACE_IDS: &str = "SELECT id FROM links INDEXED BY links_owner_space \
     WHERE owner_id = ?1 AND space_id = ?2";
const DOMAIN_IDS: &str = "SELECT id FROM links INDEXED BY links_owner_domain \
     WHERE owner_id = ?1 AND domain_id = ?2";

/// The set of `ids`, in any order and with repeats.
pub fn set_of(mut ids: Vec<u64>) -> RoaringTreemap {
    if !ids.is_sorted() {
        ids.sort_unstable();
    }
    ids.dedup();
    // A bitmap per 2³² ids, each built in order: several times quicker than the treemap's own
    // building, which looks its bitmap up for every id.
    let mut bitmaps = Vec::new();
    for run in ids.chunk_by(|a, b| a >> 32 == b >> 32) {
        let low = run.iter().map(|&id| id as u32);
        match RoaringBitmap::from_sorted_iter(low) {
            Ok(bitmap) => bitmaps.push(((run[0] >> 32) as u32, bitmap)),
            // Not reached: the ids were just sorted and made unique.
            Err(_) => return ids.into_iter().collect(),
        }
    }
    RoaringTreemap::from_bitmaps(bitmaps)
}

/// The ids `query` yields for the owner and a second value (?1, ?2), as a set.
fn ids_of(conn: &Connection, query: &str, owner: Id, second: i64) -> Result<RoaringTreemap> {
    let mut ids = Vec::new();
    let mut stmt = conn.prepare_cached(query).map_err(db_error)?;
    let mut rows = stmt.query(params![owner, second]).map_err(db_error)?;
    while let Some(row) = rows.next().map_err(db_error)? {
        ids.push(row.get::<_, Id>(0).map_err(db_error)? as u64);
    }
    Ok(set_of(ids))
}

/// The members of `set` in order: bitmap by bitmap, several times quicker than the treemap's
/// own iterator.
pub fn members(set: &RoaringTreemap) -> impl Iterator<Item = u64> + '_ {
    set.bitmaps().flat_map(|(high, bitmap)| {
        bitmap
            .iter()
            .map(move |low| (u64::from(high) << 32) | u64::from(low))
    })
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
    if cross_off_inactive(conn, f, &mut set)? {
        let by_clicks = matches!(f.sort, Sort::Max | Sort::Min);
        if f.status == StatusFilter::Active || !by_clicks {
            return Ok((page(conn, f, &set)?, set.len()));
        }
        // Expired and disabled links are few and not spread evenly over the clicks (a link
        // at its click limit has many): a walk of the clicks index from the fewest end would
        // pass most links before the page filled. The few members' facts order them.
        let members = facts::of(conn, &set)?;
        let total = members.len() as u64;
        return Ok((page_of(f, members), total));
    }
    // The members' facts decide their status, and then their order too.
    let mut members = facts::of(conn, &set)?;
    keep_status(conn, f, &mut members)?;
    let total = members.len() as u64;
    Ok((page_of(f, members), total))
}

/// Keeps the members of `set` (links of `f.owner`) that pass the status, space and domain of `f`.
pub fn narrow(conn: &Connection, f: &ListFilter<'_>, set: &mut RoaringTreemap) -> Result<()> {
    if f.status == StatusFilter::All && f.space.is_none() && f.domain.is_none() {
        return Ok(());
    }
    if set.len() < STREAM_FROM {
        return narrow_by_reading(conn, f, set);
    }
    narrow_by_place(conn, f, set)?;
    if f.status != StatusFilter::All && !cross_off_inactive(conn, f, set)? {
        let mut members = facts::of(conn, set)?;
        keep_status(conn, f, &mut members)?;
        *set = set_of(members.into_iter().map(|(id, _)| id as u64).collect());
    }
    Ok(())
}

/// Keeps the members of `set` in `f`'s space and domain, from the ids of the links there.
fn narrow_by_place(conn: &Connection, f: &ListFilter<'_>, set: &mut RoaringTreemap) -> Result<()> {
    let ids = |query: &str, param: Id| ids_of(conn, query, f.owner, param);
    if let Some(space) = f.space {
        *set &= ids(SPACE_IDS, space)?;
    }
    if let Some(domain) = f.domain {
        *set &= ids(DOMAIN_IDS, domain)?;
    }
    Ok(())
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
    if set.len().saturating_mul(2) < search::owner_link_count(conn, f.owner)? {
        return Ok(false);
    }
    let ids = |query: &str| ids_of(conn, query, f.owner, f.now.as_second());
    match f.status {
        StatusFilter::All => {}
        StatusFilter::Disabled => *set &= ids(DISABLED_IDS)?,
        StatusFilter::Expired => *set &= ids(BY_CLICKS_IDS)? | ids(BY_DATE_IDS)?,
        StatusFilter::Active => {
            *set -= ids(DISABLED_IDS)?;
            *set -= ids(BY_CLICKS_IDS)?;
            *set -= ids(BY_DATE_IDS)?;
        }
    }
    Ok(true)
}

/// Keeps the members whose status `f.status` admits. Their facts say all but whether their end
/// instant has come: the ids of the owner's links ended by `f.now` are read for that (links
/// with an end are few).
fn keep_status(
    conn: &Connection,
    f: &ListFilter<'_>,
    members: &mut Vec<(Id, facts::Facts)>,
) -> Result<()> {
    if f.status == StatusFilter::All {
        return Ok(());
    }
    let ended = if f.status == StatusFilter::Disabled {
        RoaringTreemap::new()
    } else {
        ids_of(conn, BY_DATE_IDS, f.owner, f.now.as_second())?
    };
    if ended.is_empty() {
        members.retain(|&(_, facts)| f.status.admits(facts.status(false)));
    } else {
        members.retain(|&(id, facts)| f.status.admits(facts.status(ended.contains(id as u64))));
    }
    Ok(())
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
                    && (f.space.is_none() || space == f.space)
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
        Sort::Max | Sort::Min => by_clicks(conn, f, set, end)?,
    })
}

const MOST_CLICKS_FIRST: &str = "SELECT id FROM links INDEXED BY links_owner_clicks \
     WHERE owner_id = ?1 ORDER BY clicks DESC, id DESC";
const FEWEST_CLICKS_FIRST: &str = "SELECT id FROM links INDEXED BY links_owner_clicks \
     WHERE owner_id = ?1 ORDER BY clicks ASC, id ASC";

/// How many entries of the clicks index are stepped through in the time one link's row is read
/// by its id (a descent of the table's B-tree). Measured at a million links: 150,000 reads took
/// about 120 ms and 500,000 steps about 40 ms, so a read costs about ten steps; rounded down,
/// since the walk stops as soon as the page is full.
const ROW_READ_COST: u64 = 8;

/// How many members' facts are read and ordered (`facts::of`, then a selection) in the time
/// the clicks index takes one step (about 80 ns, with the member lookup, against 15–20 ns).
const STEP_COST: u64 = 4;

/// [`page`] in clicks order: the owner's links are walked in the clicks index until the page
/// is full (about `end × links / len` rows), or, when that is the dearer read, each member's
/// clicks are learnt — from the facts snapshot for a large set, from its row for a small one —
/// and the page selected. Past the middle the walk goes from the other end.
fn by_clicks(
    conn: &Connection,
    f: &ListFilter<'_>,
    set: &RoaringTreemap,
    end: u64,
) -> Result<Vec<Id>> {
    let len = set.len();
    let reverse = f.offset.saturating_mul(2) > len;
    let (skip, take) = if reverse {
        (len - end, end - f.offset)
    } else {
        (f.offset, end - f.offset)
    };
    let most_first = (f.sort == Sort::Max) != reverse;
    let links = search::owner_link_count(conn, f.owner)?;
    let walked = (skip + take).saturating_mul(links) / len;
    let large = len >= facts::MEMBERS_FROM;
    let walk = if large {
        walked.saturating_mul(STEP_COST) < len
    } else {
        walked < len.saturating_mul(ROW_READ_COST)
    };
    if !walk && large {
        return Ok(page_of(f, facts::of(conn, set)?));
    }
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

/// The ids of the page `f.offset`, `f.limit` of `members` (in id order) in the order of
/// `f.sort`. In clicks order only the page is sorted: the members before it and after it are
/// set apart by two selections, each linear in the members.
fn page_of(f: &ListFilter<'_>, members: Vec<(Id, facts::Facts)>) -> Vec<Id> {
    let len = members.len();
    let offset = usize::try_from(f.offset).unwrap_or(usize::MAX).min(len);
    let end = offset.saturating_add(f.limit as usize).min(len);
    if offset >= end {
        return Vec::new();
    }
    match f.sort {
        Sort::Desc => (offset..end).map(|i| members[len - 1 - i].0).collect(),
        Sort::Asc => members[offset..end].iter().map(|&(id, _)| id).collect(),
        Sort::Max | Sort::Min => {
            let mut keys: Vec<(u64, Id)> = members
                .into_iter()
                .map(|(id, facts)| (facts.clicks, id))
                .collect();
            // The list's order: ties in clicks broken by id in the same direction.
            let most_first = f.sort == Sort::Max;
            let order = |a: &(u64, Id), b: &(u64, Id)| {
                if most_first { b.cmp(a) } else { a.cmp(b) }
            };
            if offset > 0 {
                keys.select_nth_unstable_by(offset, order);
            }
            let page = &mut keys[offset..];
            let take = end - offset;
            if take < page.len() {
                page.select_nth_unstable_by(take - 1, order);
            }
            let page = &mut page[..take];
            page.sort_unstable_by(order);
            page.iter().map(|&(_, id)| id).collect()
        }
    }
}
