//! Lists of links: what a list asks a store for, and which rows a page takes.

use jiff::Timestamp;
use linkdeck_domain::{
    COUNT_BOUND, Id, Link, Result, SearchBy, Sort, SpaceFilter, StatusFilter, TagMatch, Total,
};
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
/// read backwards, so the last page of a million links is as quick as the first. A total that
/// is only a bound has no far end to count from: the page is read from the front.
pub struct Slice {
    pub reverse: bool,
    pub offset: u64,
    pub limit: u64,
}

impl Slice {
    pub fn from_nearer_end(f: &ListFilter<'_>, total: Total) -> Slice {
        let end = f.offset + u64::from(f.limit);
        let reverse = total.exact && f.offset.saturating_mul(2) > total.n;
        let (offset, limit) = if reverse {
            (
                total.n.saturating_sub(end),
                end.min(total.n).saturating_sub(f.offset),
            )
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

impl ListFilter<'_> {
    /// How many matches a store counts at most before it stops and says "at least": the bound,
    /// or one past the page's end when the page is deeper, so the next page is always known to
    /// be there or not.
    pub fn count_limit(&self) -> u64 {
        COUNT_BOUND.max(self.offset + u64::from(self.limit)) + 1
    }

    /// The total of `counted` matches, counted with at most [`ListFilter::count_limit`] rows.
    pub fn bounded_total(&self, counted: u64) -> Total {
        if counted >= self.count_limit() {
            Total::at_least(counted)
        } else {
            Total::exact(counted)
        }
    }
}

pub trait Search {
    /// One page of links matching `f` and how many links match (exactly, or at least — see
    /// [`ListFilter::count_limit`]), in one snapshot.
    fn list_links(&self, f: &ListFilter<'_>) -> Result<(Vec<Link>, Total)>;
    /// The ids of every link matching `f`, its paging and order aside.
    fn matching_ids(&self, f: &ListFilter<'_>) -> Result<RoaringTreemap>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: u64) -> ListFilter<'static> {
        ListFilter {
            owner: 1,
            search: None,
            status: StatusFilter::All,
            space: SpaceFilter::Any,
            domain: None,
            tags: &[],
            tag_match: TagMatch::All,
            sort: Sort::Desc,
            offset,
            limit: 20,
            now: Timestamp::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_page_past_the_middle_is_read_from_the_far_end_and_one_past_the_end_is_empty() {
        let last = Slice::from_nearer_end(&at(90), Total::exact(100));
        assert_eq!((last.reverse, last.offset, last.limit), (true, 0, 10));
        // Asked for by a stale page number after links went away: nothing, not an underflow.
        let gone = Slice::from_nearer_end(&at(400), Total::exact(100));
        assert_eq!((gone.reverse, gone.offset, gone.limit), (true, 0, 0));
        let bounded = Slice::from_nearer_end(&at(90), Total::at_least(100));
        assert_eq!(
            (bounded.reverse, bounded.offset, bounded.limit),
            (false, 90, 20)
        );
    }
}
