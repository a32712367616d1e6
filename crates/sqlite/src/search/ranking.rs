//! A page picked out of many members in a list's order. Each member becomes one number that
//! sorts as the list does — in clicks order its clicks above its id, in id order its id, the
//! bits flipped when the largest comes first — so the members before the page are set apart by
//! one selection (linear in the members), the page's by one pass keeping the few smallest after
//! them, and only the page is sorted. A number of 64 bits holds clicks and id both while each
//! fits in 32, as in any file seen yet; past that the members are kept in 128 bits instead. For
//! a large set, a [`Window`] keeps only the numbers a sample says the page can lie between.

use linkdeck_domain::{Id, Sort};

/// The members met so far, as keys of the list's order.
pub struct Ranking {
    sort: Sort,
    keys: Keys,
}

enum Keys {
    Narrow(Vec<u64>),
    Wide(Vec<u128>),
}

impl Ranking {
    /// Room for `members` keys up front: growing by doubling copied them over and over.
    pub fn with_capacity(sort: Sort, members: usize) -> Ranking {
        Ranking {
            sort,
            keys: Keys::Narrow(Vec::with_capacity(members)),
        }
    }

    /// Adds the link `id` with `clicks`.
    #[inline]
    pub fn push(&mut self, clicks: u64, id: Id) {
        let sort = self.sort;
        match &mut self.keys {
            Keys::Narrow(keys) => match u64::pack(sort, clicks, id) {
                Some(key) => keys.push(key),
                None => self.widen(clicks, id),
            },
            Keys::Wide(keys) => keys.extend(u128::pack(sort, clicks, id)),
        }
    }

    /// Moves every key to 128 bits, then adds the link that did not fit in 64.
    #[cold]
    fn widen(&mut self, clicks: u64, id: Id) {
        let sort = self.sort;
        if let Keys::Narrow(keys) = &self.keys {
            let wide = keys
                .iter()
                .filter_map(|&key| {
                    let (clicks, id) = key.unpack(sort);
                    u128::pack(sort, clicks, id)
                })
                .collect();
            self.keys = Keys::Wide(wide);
        }
        self.push(clicks, id);
    }

    pub fn len(&self) -> usize {
        match &self.keys {
            Keys::Narrow(keys) => keys.len(),
            Keys::Wide(keys) => keys.len(),
        }
    }

    /// The ids of the `limit` members from `offset` on, in the list's order.
    pub fn page(self, offset: usize, limit: usize) -> Vec<Id> {
        match self.keys {
            Keys::Narrow(keys) => page(keys, self.sort, offset, limit),
            Keys::Wide(keys) => page(keys, self.sort, offset, limit),
        }
    }
}

/// A ranking that keeps only the members whose keys fall between two bounds, and counts those
/// below: for a large set, bounds estimated from a sample of it (`Window::around`) leave a few
/// thousand keys to select from where there were 940,000 — whose 7.5 MB of fresh memory cost
/// more in page faults than the selection itself.
pub struct Window {
    sort: Sort,
    low: u64,
    high: u64,
    below: u64,
    kept: Vec<u64>,
    total: u64,
    /// A member did not fit in 64 bits: the window cannot say where it goes.
    spilled: bool,
}

/// A window's margin on each side, in sampled ranks: so many standard deviations of a sampled
/// rank, and a little more. Narrow in tests, so that the lists' property tests meet windows
/// that missed as well as windows that held.
const MARGIN: (f64, f64) = if cfg!(test) { (0.5, 0.0) } else { (3.0, 16.0) };

impl Window {
    /// Bounds around the page `offset`, `limit` of `members` members, from `sample`: the
    /// ranking of about one member in `members / sample.len()` taken evenly, and [`MARGIN`].
    pub fn around(sample: Ranking, members: u64, offset: u64, limit: u64) -> Option<Window> {
        let sort = sample.sort;
        let Keys::Narrow(mut keys) = sample.keys else {
            return None;
        };
        if keys.is_empty() || members == 0 {
            return None;
        }
        let scale = keys.len() as f64 / members as f64;
        let rank = |at: u64| at as f64 * scale;
        let (first, last) = (rank(offset), rank(offset + limit));
        let margin = MARGIN.0 * last.sqrt() + MARGIN.1;
        // Two selections, not a sort: only the keys at the two ranks are wanted.
        let last_rank = keys.len() - 1;
        let mut key_at = |rank: usize| *keys.select_nth_unstable(rank).1;
        let low = match (first - margin).floor() {
            r if r < 0.0 => 0,
            r => key_at((r as usize).min(last_rank)),
        };
        let high = match (last + margin).ceil() {
            r if r as usize > last_rank => u64::MAX,
            r => key_at(r as usize),
        };
        Some(Window {
            sort,
            low,
            high,
            below: 0,
            kept: Vec::new(),
            total: 0,
            spilled: false,
        })
    }

    /// Counts the link `id` with `clicks`, and keeps it when it falls between the bounds.
    #[inline]
    pub fn push(&mut self, clicks: u64, id: Id) {
        self.total += 1;
        match u64::pack(self.sort, clicks, id) {
            Some(key) if key < self.low => self.below += 1,
            Some(key) if key <= self.high => self.kept.push(key),
            Some(_) => {}
            None => self.spilled = true,
        }
    }

    /// Every member counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The ids of the `limit` members from `offset` on, or None when the page is not wholly
    /// between the bounds (the sample misled): the caller ranks every member then.
    pub fn page(self, offset: u64, limit: u64) -> Option<Vec<Id>> {
        let end = offset.saturating_add(limit).min(self.total);
        let kept = self.kept.len() as u64;
        if self.spilled || self.below > offset || self.below + kept < end {
            return None;
        }
        let from = (offset - self.below) as usize;
        Some(page(self.kept, self.sort, from, limit as usize))
    }
}

/// The ids of the `limit` keys from `offset` on, in ascending order of the keys.
fn page<K: Key>(mut keys: Vec<K>, sort: Sort, offset: usize, limit: usize) -> Vec<Id> {
    let offset = offset.min(keys.len());
    let end = offset.saturating_add(limit).min(keys.len());
    if offset >= end {
        return Vec::new();
    }
    if offset > 0 {
        keys.select_nth_unstable(offset);
    }
    let take = end - offset;
    let mut page = smallest(&mut keys[offset..], take);
    page.sort_unstable();
    page.iter().map(|key| key.unpack(sort).1).collect()
}

/// The `take` smallest of `keys`, in no order. A page is small beside the members after it: one
/// pass keeps the page's candidates sorted and sets a key aside with one comparison, where a
/// second selection moved the members around again.
fn smallest<K: Key>(keys: &mut [K], take: usize) -> Vec<K> {
    if take == 0 {
        return Vec::new();
    }
    if take > 1024 {
        if take < keys.len() {
            keys.select_nth_unstable(take - 1);
        }
        return keys[..take.min(keys.len())].to_vec();
    }
    let mut kept: Vec<K> = Vec::with_capacity(take + 1);
    for &key in keys.iter() {
        if kept.len() == take {
            if key >= kept[take - 1] {
                continue;
            }
            kept.pop();
        }
        let at = kept.partition_point(|&k| k < key);
        kept.insert(at, key);
    }
    kept
}

/// A member as a number that sorts as the list does.
trait Key: Ord + Copy {
    /// None when `clicks` or `id` do not fit.
    fn pack(sort: Sort, clicks: u64, id: Id) -> Option<Self>;
    /// The clicks (in clicks order; 0 in id order) and the id back.
    fn unpack(self, sort: Sort) -> (u64, Id);
}

/// Whether the list puts the largest first.
fn descending(sort: Sort) -> bool {
    matches!(sort, Sort::Desc | Sort::Max)
}

fn by_clicks(sort: Sort) -> bool {
    matches!(sort, Sort::Max | Sort::Min)
}

impl Key for u64 {
    fn pack(sort: Sort, clicks: u64, id: Id) -> Option<u64> {
        let id = u64::try_from(id).ok()?;
        let key = match by_clicks(sort) {
            true if clicks >> 32 == 0 && id >> 32 == 0 => (clicks << 32) | id,
            true => return None,
            false => id,
        };
        Some(if descending(sort) { !key } else { key })
    }

    fn unpack(self, sort: Sort) -> (u64, Id) {
        let key = if descending(sort) { !self } else { self };
        match by_clicks(sort) {
            true => (key >> 32, (key & u64::from(u32::MAX)) as Id),
            false => (0, key as Id),
        }
    }
}

impl Key for u128 {
    fn pack(sort: Sort, clicks: u64, id: Id) -> Option<u128> {
        let id = u128::from(u64::try_from(id).ok()?);
        let key = match by_clicks(sort) {
            true => (u128::from(clicks) << 64) | id,
            false => id,
        };
        Some(if descending(sort) { !key } else { key })
    }

    fn unpack(self, sort: Sort) -> (u64, Id) {
        let key = if descending(sort) { !self } else { self };
        ((key >> 64) as u64, (key as u64) as Id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page each way of ranking gives is the page of the members sorted as a list says:
    /// clicks then id, both in the sort's direction; ids alone for the id orders.
    #[test]
    fn pages_are_those_of_the_sorted_members() {
        let members: Vec<(u64, Id)> = (1..=500)
            .map(|id: Id| (((id * 7919) % 37) as u64, id))
            .collect();
        for sort in [Sort::Max, Sort::Min, Sort::Desc, Sort::Asc] {
            let mut sorted = members.clone();
            sorted.sort_by(|a, b| {
                let (a, b) = match by_clicks(sort) {
                    true => (*a, *b),
                    false => ((0, a.1), (0, b.1)),
                };
                if descending(sort) {
                    b.cmp(&a)
                } else {
                    a.cmp(&b)
                }
            });
            for (offset, limit) in [(0, 20), (13, 20), (480, 20), (495, 20), (500, 20), (0, 500)] {
                let mut ranking = Ranking::with_capacity(sort, 0);
                for &(clicks, id) in &members {
                    ranking.push(clicks, id);
                }
                assert_eq!(ranking.len(), members.len());
                let want: Vec<Id> = sorted
                    .iter()
                    .skip(offset)
                    .take(limit)
                    .map(|m| m.1)
                    .collect();
                assert_eq!(ranking.page(offset, limit), want, "{sort:?} {offset}");
            }
        }
    }

    /// A window from a sample gives the page ranking every member gives, and says so when the
    /// sample misled it.
    #[test]
    fn a_window_gives_the_page_or_declines() {
        let members: Vec<(u64, Id)> = (1..=20_000)
            .map(|id: Id| (((id * 7919) % 997) as u64, id))
            .collect();
        for sort in [Sort::Max, Sort::Min] {
            for (offset, limit) in [(0, 20), (9_990, 20), (19_990, 20), (5_000, 300)] {
                let mut all = Ranking::with_capacity(sort, 0);
                let mut sample = Ranking::with_capacity(sort, 0);
                for &(clicks, id) in &members {
                    all.push(clicks, id);
                    if id % 16 == 0 {
                        sample.push(clicks, id);
                    }
                }
                let mut window = Window::around(sample, 20_000, offset, limit).unwrap();
                for &(clicks, id) in &members {
                    window.push(clicks, id);
                }
                assert_eq!(window.total(), 20_000);
                assert!(window.kept.len() < 5_000, "{}", window.kept.len());
                let want = all.page(offset as usize, limit as usize);
                assert_eq!(window.page(offset, limit), Some(want), "{sort:?} {offset}");
            }
            // A sample of the members with the fewest clicks alone puts the bounds wrong.
            let mut sample = Ranking::with_capacity(sort, 0);
            for &(clicks, id) in members.iter().filter(|m| m.0 < 10) {
                sample.push(clicks, id);
            }
            let mut window = Window::around(sample, 20_000, 10_000, 20).unwrap();
            for &(clicks, id) in &members {
                window.push(clicks, id);
            }
            assert_eq!(window.page(10_000, 20), None, "{sort:?}");
        }
    }

    /// Clicks or ids past 32 bits move every member to wide keys, in the same order.
    #[test]
    fn clicks_past_32_bits_keep_the_order() {
        for sort in [Sort::Max, Sort::Min] {
            let mut ranking = Ranking::with_capacity(sort, 4);
            ranking.push(5, 1);
            ranking.push(1 << 40, 2);
            ranking.push(5, 3);
            ranking.push(0, 1 << 33);
            let ids = ranking.page(0, 10);
            match sort {
                Sort::Max => assert_eq!(ids, vec![2, 3, 1, 1 << 33]),
                _ => assert_eq!(ids, vec![1 << 33, 1, 3, 2]),
            }
        }
    }
}
