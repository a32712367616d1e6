//! Lists of links: what a list asks a store for, and which rows a page takes.

use jiff::Timestamp;
use linkdeck_domain::{Id, Link, Result, SearchBy, Sort, SpaceFilter, StatusFilter, TagMatch};
use roaring::RoaringTreemap;

/// What a list asks for, already validated; `now` decides which links count as expired.
#[derive(Debug, Clone)]
pub struct ListFilter<'a> {
    pub owner: Id,
    pub search: Option<(SearchBy, &'a str)>,
    pub status: StatusFilter,
    pub space: SpaceFilter,
    pub domain: Option<Id>,
    /// Links carrying every one of these tags, or any of them (`tag_match`); empty: any link.
    pub tags: &'a [String],
    pub tag_match: TagMatch,
    pub sort: Sort,
    pub offset: u64,
    pub limit: u32,
    pub now: Timestamp,
}

/// Which rows a page takes, counted from the nearer end of `total`: past the middle the list is
/// read backwards, so the last page of a million links is as quick as the first.
pub struct Slice {
    pub reverse: bool,
    pub offset: u64,
    pub limit: u64,
}

impl Slice {
    pub fn from_nearer_end(f: &ListFilter<'_>, total: u64) -> Slice {
        let end = f.offset + u64::from(f.limit);
        let reverse = f.offset.saturating_mul(2) > total;
        let (offset, limit) = if reverse {
            (total.saturating_sub(end), end.min(total) - f.offset)
        } else {
            (f.offset, u64::from(f.limit))
        };
        Slice {
            reverse,
            offset,
            limit,
        }
    }
}

pub trait Search {
    /// One page of links matching `f` and the number of all matching links, in one snapshot.
    fn list_links(&self, f: &ListFilter<'_>) -> Result<(Vec<Link>, u64)>;
    /// The ids of every link matching `f`, its paging and order aside.
    fn matching_ids(&self, f: &ListFilter<'_>) -> Result<RoaringTreemap>;
}
