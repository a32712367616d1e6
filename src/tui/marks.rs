//! Marks: which links the next action applies to. Rows marked by hand are held as ids;
//! "every link that matches" is held as the filter itself (with the rows unmarked since as
//! exceptions), so marking a million links costs nothing per link.

use std::collections::BTreeSet;

use jiff::Timestamp;

use crate::backend::Selection;
use crate::domain::{Id, Link, LinkQuery, ListTotal, SearchBy, StatusFilter, TagMatch, Total};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    /// Every link this filter admits (sort and paging cleared), and how many there were (or at
    /// least, when the backend stopped counting).
    filter: Option<(LinkQuery, Total)>,
    /// Links the filter admits that were unmarked by hand.
    except: BTreeSet<Id>,
    /// Links marked by hand that the filter does not admit.
    ids: BTreeSet<Id>,
    /// The list position of the last row marked, where a range starts.
    pub anchor: Option<usize>,
}

/// A list query reduced to what decides membership.
fn membership(query: &LinkQuery) -> LinkQuery {
    LinkQuery {
        search: query.search_term().map(str::to_owned),
        by: query.by,
        status: query.status,
        space: query.space,
        domain: query.domain,
        tags: query.tags.clone(),
        tag_match: query.tag_match,
        ..LinkQuery::default()
    }
}

/// Whether `link` is one `query` lists, judged from the record (for rows shown under another
/// filter than the marked one). Searching is a case-insensitive substring, as the services do.
pub fn admits(query: &LinkQuery, link: &Link, now: Timestamp) -> bool {
    let text = match query.by {
        SearchBy::Title => link.title.as_deref().unwrap_or(""),
        SearchBy::Alias => &link.alias,
        SearchBy::Url => &link.url,
    };
    let searched = query
        .search_term()
        .is_none_or(|term| text.to_lowercase().contains(&term.to_lowercase()));
    searched
        && (query.status == StatusFilter::All || query.status.admits(link.status(now)))
        && query.space.admits(link.space.as_ref().map(|s| s.id))
        && query
            .domain
            .is_none_or(|id| link.domain.as_ref().is_some_and(|d| d.id == id))
        && tagged(query, link)
}

/// Whether `link` carries the tags `query` asks for: every one, or any.
fn tagged(query: &LinkQuery, link: &Link) -> bool {
    let has = |tag: &String| link.tags.iter().any(|t| t.eq_ignore_ascii_case(tag));
    match query.tag_match {
        _ if query.tags.is_empty() => true,
        TagMatch::All => query.tags.iter().all(has),
        TagMatch::Any => query.tags.iter().any(has),
    }
}

impl Marks {
    pub fn is_empty(&self) -> bool {
        self.filter.is_none() && self.ids.is_empty()
    }

    /// How many links are marked: `10,000+` when they are every match of a list whose total
    /// is a bound.
    pub fn count(&self) -> ListTotal {
        let (by_filter, exact) = self.filter.as_ref().map_or((0, true), |(_, total)| {
            (
                total.n.saturating_sub(self.except.len() as u64),
                total.exact,
            )
        });
        ListTotal::of(by_filter + self.ids.len() as u64, exact)
    }

    fn in_filter(&self, link: &Link, now: Timestamp) -> bool {
        self.filter
            .as_ref()
            .is_some_and(|(query, _)| admits(query, link, now))
    }

    pub fn contains(&self, link: &Link, now: Timestamp) -> bool {
        self.ids.contains(&link.id)
            || (self.in_filter(link, now) && !self.except.contains(&link.id))
    }

    /// Marks or unmarks one row.
    pub fn toggle(&mut self, link: &Link, now: Timestamp) {
        let marked = self.contains(link, now);
        self.set(link, !marked, now);
    }

    pub fn set(&mut self, link: &Link, on: bool, now: Timestamp) {
        if self.in_filter(link, now) {
            if on {
                self.except.remove(&link.id);
            } else {
                self.except.insert(link.id);
            }
        } else if on {
            self.ids.insert(link.id);
        } else {
            self.ids.remove(&link.id);
        }
    }

    /// Marks every link `query` lists (`total` of them).
    pub fn all_matching(&mut self, query: &LinkQuery, total: Total) {
        let query = membership(query);
        if self.filter.as_ref().is_some_and(|(q, _)| *q == query) {
            // `*` again over the same list marks back what was unmarked.
            self.except.clear();
            return;
        }
        *self = Marks {
            filter: Some((query, total)),
            ..Marks::default()
        };
    }

    pub fn clear(&mut self) {
        *self = Marks::default();
    }

    /// What a bulk operation should act on.
    pub fn selection(&self) -> Selection {
        Selection {
            filter: self.filter.as_ref().map(|(q, _)| q.clone()),
            except: self.except.clone(),
            ids: self.ids.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Link;

    fn link(id: Id, alias: &str) -> Link {
        Link {
            id,
            alias: alias.into(),
            url: format!("https://example.com/{alias}"),
            short_url: String::new(),
            title: Some(format!("example.com/{alias}")),
            created_at: Timestamp::UNIX_EPOCH,
            updated_at: Timestamp::UNIX_EPOCH,
            ..Link::example()
        }
    }

    #[test]
    fn marking_everything_that_matches_holds_no_ids() {
        let now = Timestamp::UNIX_EPOCH;
        let mut marks = Marks::default();
        let query = LinkQuery {
            search: Some("spring".into()),
            page: 7,
            ..LinkQuery::default()
        };
        marks.all_matching(&query, Total::exact(1_000_000));
        assert_eq!(marks.count().to_string(), "1,000,000");
        assert!(marks.selection().ids.is_empty() && marks.selection().except.is_empty());
        let inside = link(1, "spring-sale");
        let outside = link(2, "winter");
        assert!(marks.contains(&inside, now));
        assert!(!marks.contains(&outside, now));
        marks.toggle(&inside, now);
        marks.toggle(&outside, now);
        assert_eq!(marks.count().to_string(), "1,000,000");
        assert!(!marks.contains(&inside, now) && marks.contains(&outside, now));
        let selection = marks.selection();
        assert_eq!(selection.except.into_iter().collect::<Vec<_>>(), [1]);
        assert_eq!(selection.ids.into_iter().collect::<Vec<_>>(), [2]);
        assert_eq!(
            selection.filter.unwrap().page,
            1,
            "paging is not part of it"
        );
    }

    /// Marking every link of a tag's list marks that list, not every link the search matches:
    /// a bulk delete would otherwise reach links without the tag.
    #[test]
    fn marking_everything_keeps_the_tags_asked_for() {
        let now = Timestamp::UNIX_EPOCH;
        let mut marks = Marks::default();
        let query = LinkQuery {
            tags: vec!["sale".into(), "spring".into()],
            tag_match: TagMatch::Any,
            ..LinkQuery::default()
        };
        marks.all_matching(&query, Total::at_least(10_001));
        assert_eq!(marks.count().plural("link"), "10,000+ links");
        let filter = marks.selection().filter.unwrap();
        assert_eq!(filter.tags, ["sale", "spring"]);
        assert_eq!(filter.tag_match, TagMatch::Any);
        let tagged = Link {
            tags: vec!["spring".into()],
            ..link(1, "a")
        };
        assert!(marks.contains(&tagged, now));
        assert!(!marks.contains(&link(2, "b"), now));
    }
}
