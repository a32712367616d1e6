//! A window onto a list too long to hold: the pages around the cursor are fetched as it moves and
//! a few are kept, so memory stays the same for a thousand links or a million.

use std::collections::{BTreeMap, BTreeSet};

use super::msg::RequestId;
use super::scroll::offset_showing;
use crate::domain::{ListTotal, Total};

/// How many pages are kept at most. The viewport spans at most two pages (rows < page size), so
/// four leave room for the page being scrolled into and the one just left.
pub const MAX_PAGES: usize = 4;

/// Rows of a paged list: cursor, scroll offset, and the fetched pages.
#[derive(Debug, Clone)]
pub struct PagedList<T> {
    per_page: u32,
    pages: BTreeMap<u32, Vec<T>>,
    /// Pages asked for and not yet answered, with the request that must answer them.
    expected: BTreeMap<u32, RequestId>,
    /// Pages whose fetch failed: not asked again until a refresh, or a dead backend would be
    /// asked in a loop.
    failed: BTreeSet<u32>,
    /// Held pages from before a refresh: shown until their fresh copy arrives, and kept (as
    /// stale) when it cannot.
    stale: BTreeSet<u32>,
    /// The list's length: every match, or as many as are known of when the backend stopped
    /// counting at a bound (it grows as pages further down are asked for).
    total: Option<Total>,
    cursor: usize,
    offset: usize,
    rows: usize,
    /// The list as it was before the question changed, shown (dimmed) until the new question's
    /// first answer comes, so the rows do not blank out on every keystroke of a search.
    previous: Option<Box<PagedList<T>>>,
}

impl<T> PagedList<T> {
    pub fn new(per_page: u32) -> Self {
        PagedList {
            per_page: per_page.max(1),
            pages: BTreeMap::new(),
            expected: BTreeMap::new(),
            failed: BTreeSet::new(),
            stale: BTreeSet::new(),
            total: None,
            cursor: 0,
            offset: 0,
            rows: 1,
            previous: None,
        }
    }

    pub fn per_page(&self) -> u32 {
        self.per_page
    }

    /// The total count (or what is known of it), once the first answer has come.
    pub fn total(&self) -> Option<u64> {
        self.total.map(|t| t.n)
    }

    /// The total as the backend counted it.
    pub fn counted(&self) -> Option<Total> {
        self.total
    }

    /// The total as it is said: `1,204`, or `10,000+` when the backend stopped counting.
    pub fn shown_total(&self) -> Option<ListTotal> {
        self.total.map(|t| ListTotal::of(t.n, t.exact))
    }

    pub fn len(&self) -> usize {
        self.total()
            .map_or(0, |t| usize::try_from(t).unwrap_or(usize::MAX))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn offset(&self) -> usize {
        self.offset
    }

    pub fn cached_pages(&self) -> usize {
        self.pages.len()
    }

    /// Starts over: the question changed (new filter, new search). What was answered last
    /// stays as [`PagedList::previous`] until the new question's first answer; while several
    /// questions follow each other unanswered, the last answered one is what stays.
    pub fn reset(&mut self) {
        let fresh = PagedList {
            rows: self.rows,
            ..PagedList::new(self.per_page)
        };
        let last = std::mem::replace(self, fresh);
        self.previous = if last.total.is_some() {
            Some(Box::new(last))
        } else {
            last.previous
        };
    }

    /// The list before the question changed, while the new one is unanswered.
    pub fn previous(&self) -> Option<&PagedList<T>> {
        self.previous.as_deref()
    }

    /// Forgets the rows but keeps the place, to fetch them again.
    pub fn clear(&mut self) {
        self.pages.clear();
        self.expected.clear();
        self.failed.clear();
        self.stale.clear();
    }

    /// Asks for every row again while still showing the rows held: they are replaced as the
    /// fresh pages arrive, and stay (marked stale) if the backend cannot answer.
    pub fn refresh(&mut self) {
        self.expected.clear();
        self.failed.clear();
        self.stale = self.pages.keys().copied().collect();
    }

    /// Whether some row on screen is from before a refresh that could not be answered.
    pub fn is_stale(&self) -> bool {
        !self.failed.is_empty() && self.visible_pages().any(|p| self.stale.contains(&p))
    }

    fn visible_pages(&self) -> impl Iterator<Item = u32> + '_ {
        let end = (self.offset + self.rows).min(self.len());
        (self.offset..end).map(|i| self.page_of(i))
    }

    /// Whether the cursor's row is from the latest answer.
    pub fn cursor_is_fresh(&self) -> bool {
        let page = self.page_of(self.cursor);
        self.pages.contains_key(&page) && !self.stale.contains(&page)
    }

    /// The held index of the row `found` picks, searching outward from the cursor.
    pub fn find(&self, found: impl Fn(&T) -> bool) -> Option<usize> {
        let mut held: Vec<usize> = self
            .pages
            .iter()
            .flat_map(|(page, rows)| {
                let start = (*page as usize - 1) * self.per_page as usize;
                rows.iter()
                    .enumerate()
                    .filter(|(_, row)| found(row))
                    .map(move |(i, _)| start + i)
            })
            .collect();
        held.sort_by_key(|i| i.abs_diff(self.cursor));
        held.first().copied()
    }

    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows.max(1);
        self.scroll_to_cursor();
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
        self.scroll_to_cursor();
    }

    pub fn select(&mut self, index: usize) {
        self.cursor = index.min(self.len().saturating_sub(1));
        self.scroll_to_cursor();
    }

    pub fn top(&mut self) {
        self.select(0);
    }

    pub fn bottom(&mut self) {
        self.select(self.len().saturating_sub(1));
    }

    fn scroll_to_cursor(&mut self) {
        self.offset = offset_showing(self.cursor, self.offset, self.rows);
        // Never leave blank rows at the bottom when the list could fill them.
        let max_offset = self.len().saturating_sub(self.rows);
        self.offset = self.offset.min(max_offset);
    }

    fn page_of(&self, index: usize) -> u32 {
        u32::try_from(index / self.per_page as usize + 1).unwrap_or(u32::MAX)
    }

    /// The pages the viewport and cursor need.
    fn needed(&self) -> BTreeSet<u32> {
        // An empty list still holds its (empty) first page: after a refresh clears it, asking
        // again is how links created elsewhere show up.
        if self.total.is_none() || self.is_empty() {
            return BTreeSet::from([1]);
        }
        let last = self.len() - 1;
        let first_row = self.offset.min(last);
        let last_row = (self.offset + self.rows - 1).min(last);
        let mut needed: BTreeSet<u32> =
            (self.page_of(first_row)..=self.page_of(last_row)).collect();
        needed.insert(self.page_of(self.cursor.min(last)));
        needed
    }

    /// Pages to fetch now: needed, not held, not already asked for.
    pub fn wanted(&self) -> Vec<u32> {
        self.needed()
            .into_iter()
            .filter(|p| {
                (!self.pages.contains_key(p) || self.stale.contains(p))
                    && !self.expected.contains_key(p)
                    && !self.failed.contains(p)
            })
            .collect()
    }

    pub fn expect(&mut self, page: u32, req: RequestId) {
        self.expected.insert(page, req);
    }

    /// Whether `req` is the request this list waits on for `page`; anything else is stale.
    pub fn is_expected(&self, page: u32, req: RequestId) -> bool {
        self.expected.get(&page) == Some(&req)
    }

    /// Takes an answer for `page`. Stale answers are ignored (returns false).
    pub fn accept(
        &mut self,
        req: RequestId,
        page: u32,
        per_page: u32,
        total: impl Into<Total>,
        items: Vec<T>,
    ) -> bool {
        if !self.is_expected(page, req) {
            return false;
        }
        self.expected.remove(&page);
        let total = total.into();
        // A bound found further down says more than one found near the top: keep the longer,
        // so the rows below the cursor do not vanish when a page near the top comes back.
        self.total = match self.total {
            Some(held) if !held.exact && !total.exact && held.n > total.n => Some(held),
            _ => Some(total),
        };
        self.previous = None;
        if per_page != self.per_page && per_page > 0 {
            // The backend pages differently than asked (a phpShort server always sends 10):
            // follow it. Only page 1 starts at the same row under both sizes.
            self.per_page = per_page;
            self.clear();
            if page != 1 {
                self.scroll_to_cursor();
                return true;
            }
        }
        self.pages.insert(page, items);
        self.stale.remove(&page);
        let last = self.len().saturating_sub(1);
        self.cursor = self.cursor.min(last);
        self.scroll_to_cursor();
        self.evict();
        true
    }

    /// A failed fetch of `page`, if it is still the one waited for.
    pub fn fail(&mut self, req: RequestId, page: u32) -> bool {
        if !self.is_expected(page, req) {
            return false;
        }
        self.expected.remove(&page);
        self.failed.insert(page);
        self.previous = None;
        true
    }

    fn evict(&mut self) {
        let needed = self.needed();
        let cursor_page = i64::from(self.page_of(self.cursor));
        while self.pages.len() > MAX_PAGES {
            let farthest = self
                .pages
                .keys()
                .filter(|p| !needed.contains(p))
                .max_by_key(|p| (i64::from(**p) - cursor_page).abs())
                .copied();
            match farthest {
                Some(p) => {
                    self.pages.remove(&p);
                    self.stale.remove(&p);
                }
                None => break,
            }
        }
    }

    /// The row at `index`, when its page is held.
    pub fn get(&self, index: usize) -> Option<&T> {
        let page = self.page_of(index);
        let within = index % self.per_page as usize;
        self.pages.get(&page)?.get(within)
    }

    pub fn selected(&self) -> Option<&T> {
        self.get(self.cursor)
    }

    /// The visible rows: `(index, row if held)`.
    pub fn visible(&self) -> impl Iterator<Item = (usize, Option<&T>)> {
        let end = (self.offset + self.rows).min(self.len());
        (self.offset..end).map(|i| (i, self.get(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(list: &mut PagedList<u64>, req: u64, total: u64) {
        for page in list.wanted() {
            list.expect(page, RequestId(req));
            let start = u64::from(page - 1) * u64::from(list.per_page());
            let items = (start..(start + u64::from(list.per_page())).min(total)).collect();
            assert!(list.accept(RequestId(req), page, list.per_page(), total, items));
        }
    }

    #[test]
    fn the_first_question_is_page_one() {
        let list = PagedList::<u64>::new(100);
        assert_eq!(list.wanted(), vec![1]);
    }

    #[test]
    fn bottom_of_a_million_fetches_only_the_last_page() {
        let mut list = PagedList::new(100);
        list.set_rows(20);
        answer(&mut list, 1, 1_000_000);
        list.bottom();
        assert_eq!(list.wanted(), vec![10_000]);
        answer(&mut list, 2, 1_000_000);
        assert_eq!(list.selected(), Some(&999_999));
        assert_eq!(list.offset(), 999_980);
    }

    #[test]
    fn memory_is_bounded_while_scrolling() {
        let mut list = PagedList::new(100);
        list.set_rows(25);
        answer(&mut list, 1, 100_000);
        for step in 0..2_000u64 {
            list.move_by(7);
            answer(&mut list, step + 2, 100_000);
            assert!(list.cached_pages() <= MAX_PAGES);
            assert_eq!(list.selected().copied(), Some(list.cursor() as u64));
        }
    }

    #[test]
    fn stale_answers_are_dropped() {
        let mut list = PagedList::<u64>::new(100);
        list.expect(1, RequestId(1));
        list.reset();
        list.expect(1, RequestId(2));
        assert!(!list.accept(RequestId(1), 1, 100, 5, vec![9; 5]));
        assert!(list.accept(RequestId(2), 1, 100, 3, vec![1, 2, 3]));
        assert_eq!(list.len(), 3);
    }

    #[test]
    fn a_new_question_keeps_the_last_answer_until_its_own_comes() {
        let mut list = PagedList::<u64>::new(100);
        list.set_rows(10);
        answer(&mut list, 1, 500);
        list.move_by(3);
        list.reset();
        assert_eq!(list.total(), None);
        assert_eq!(list.previous().and_then(|p| p.selected()), Some(&3));
        // Typing on: the last answered list is what stays.
        list.reset();
        assert_eq!(list.previous().and_then(|p| p.selected()), Some(&3));
        assert_eq!(list.rows(), 10);
        answer(&mut list, 2, 7);
        assert!(list.previous().is_none());
        assert_eq!(list.len(), 7);
    }

    #[test]
    fn a_failed_page_waits_for_a_refresh() {
        let mut list = PagedList::<u64>::new(100);
        list.expect(1, RequestId(1));
        assert!(list.fail(RequestId(1), 1));
        assert!(list.wanted().is_empty());
        list.clear();
        assert_eq!(list.wanted(), vec![1]);
    }

    #[test]
    fn a_refresh_keeps_showing_the_rows_until_fresh_ones_come() {
        let mut list = PagedList::<u64>::new(100);
        list.set_rows(10);
        answer(&mut list, 1, 500);
        list.refresh();
        assert_eq!(list.wanted(), vec![1]);
        assert_eq!(list.selected(), Some(&0), "the old rows still show");
        list.expect(1, RequestId(9));
        assert!(list.fail(RequestId(9), 1));
        assert!(list.is_stale());
        assert_eq!(list.selected(), Some(&0), "and stay when the refresh fails");
        list.refresh();
        answer(&mut list, 10, 500);
        assert!(!list.is_stale());
    }

    #[test]
    fn a_smaller_server_page_size_is_followed() {
        let mut list = PagedList::<u64>::new(100);
        list.set_rows(15);
        list.expect(1, RequestId(1));
        assert!(list.accept(RequestId(1), 1, 10, 30, (0..10).collect()));
        assert_eq!(list.per_page(), 10);
        assert_eq!(list.wanted(), vec![2]);
    }
}
