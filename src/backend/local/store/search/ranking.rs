//! A page picked out of many members in a list's order. Each member becomes one number that
//! sorts as the list does — in clicks order its clicks above its id, in id order its id, the
//! bits flipped when the largest comes first — so the members before the page and after it are
//! set apart by two selections (each linear in the members) and only the page is sorted. A
//! number of 64 bits holds clicks and id both while each fits in 32, as in any file seen yet;
//! past that the members are kept in 128 bits instead.

use crate::domain::{Id, Sort};

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
    let mut page = smallest(&keys[offset..], take);
    page.sort_unstable();
    page.iter().map(|key| key.unpack(sort).1).collect()
}

/// The `take` smallest of `keys`, in no order. A page is small beside the members after it: one
/// pass keeps the page's candidates sorted and sets a key aside with one comparison, where a
/// second selection moved the members around again.
fn smallest<K: Key>(keys: &[K], take: usize) -> Vec<K> {
    if take == 0 {
        return Vec::new();
    }
    if take > 1024 {
        let mut keys = keys.to_vec();
        if take < keys.len() {
            keys.select_nth_unstable(take - 1);
        }
        keys.truncate(take);
        return keys;
    }
    let mut kept: Vec<K> = Vec::with_capacity(take + 1);
    for &key in keys {
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
