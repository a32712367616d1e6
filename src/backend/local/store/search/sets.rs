//! A search's matches as a set of link ids in memory (a roaring bitmap): narrowed by a list's
//! status, space and domain, counted, and paged in the list's order. Searches whose matches are
//! known as ids up front use it: short terms (`short`) for everything, full-text searches when
//! every link is the owner's and the order is by clicks or there is a filter (in id order with
//! no filter the trigram index pages them itself).

use roaring::RoaringTreemap;
use rusqlite::{Connection, OptionalExtension, params};

use super::super::{db_error, time};
use super::status::{BY_CLICKS_IDS, BY_DATE_IDS, DISABLED_IDS};
use super::{self as search, ListFilter};
use crate::domain::{Id, LinkStatus, Result, Sort, StatusFilter};

/// Below this many members, narrowing reads each member's row; from here on it streams the ids
/// of each filter's links from their indexes instead (inactive links are a few per cent).
const STREAM_FROM: u64 = 8_192;

// The ids of an owner's links in a space or a domain (the inactive states' are in `status`).
// ?1 owner, ?2 the space or domain.
const SPACE_IDS: &str = "SELECT id FROM links INDEXED BY links_owner_space \
     WHERE owner_id = ?1 AND space_id = ?2";
const DOMAIN_IDS: &str = "SELECT id FROM links INDEXED BY links_owner_domain \
     WHERE owner_id = ?1 AND domain_id = ?2";

/// The set of `ids`, in any order and with repeats.
pub fn set_of(mut ids: Vec<u64>) -> RoaringTreemap {
    ids.sort_unstable();
    ids.dedup();
    match RoaringTreemap::from_sorted_iter(ids.iter().copied()) {
        Ok(set) => set,
        // Not reached: the ids were just sorted and made unique.
        Err(_) => ids.into_iter().collect(),
    }
}

/// Keeps the members of `set` (links of `f.owner`) that pass the status, space and domain of `f`.
pub fn narrow(conn: &Connection, f: &ListFilter<'_>, set: &mut RoaringTreemap) -> Result<()> {
    if f.status == StatusFilter::All && f.space.is_none() && f.domain.is_none() {
        return Ok(());
    }
    if set.len() < STREAM_FROM {
        return narrow_by_reading(conn, f, set);
    }
    // The ids of the links the queries yield, as a set (sorted first: building a bitmap in
    // order is several times quicker than inserting at random).
    let ids = |queries: &[(&str, i64)]| -> Result<RoaringTreemap> {
        let mut ids = Vec::new();
        for &(query, param) in queries {
            let mut stmt = conn.prepare_cached(query).map_err(db_error)?;
            let mut rows = stmt.query(params![f.owner, param]).map_err(db_error)?;
            while let Some(row) = rows.next().map_err(db_error)? {
                ids.push(row.get::<_, Id>(0).map_err(db_error)? as u64);
            }
        }
        Ok(set_of(ids))
    };
    let now = f.now.as_second();
    match f.status {
        StatusFilter::All => {}
        StatusFilter::Disabled => *set &= ids(&[(DISABLED_IDS, now)])?,
        StatusFilter::Expired => *set &= ids(&[(BY_DATE_IDS, now), (BY_CLICKS_IDS, now)])?,
        StatusFilter::Active => {
            *set -= ids(&[
                (BY_DATE_IDS, now),
                (BY_CLICKS_IDS, now),
                (DISABLED_IDS, now),
            ])?
        }
    }
    if let Some(space) = f.space {
        *set &= ids(&[(SPACE_IDS, space)])?;
    }
    if let Some(domain) = f.domain {
        *set &= ids(&[(DOMAIN_IDS, domain)])?;
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

/// [`page`] in clicks order: the owner's links are walked in the clicks index until the page
/// is full (about `end × links / len` rows), or, when that is the dearer read, each member's
/// clicks are read and sorted. Past the middle both go from the other end.
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
    let mut ids = Vec::with_capacity(take as usize);
    if walked < len.saturating_mul(ROW_READ_COST) {
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
