//! The spaces an API key is limited to: a small set, kept inline so that the filter carrying
//! it ([`SpaceFilter::Among`](super::SpaceFilter)) stays `Copy` like the rest of a query.

use std::fmt;

use super::Id;

/// The most spaces one key can be limited to: a key for "these few teams", not a second account.
pub const SPACE_SET_MAX: usize = 8;

/// Up to [`SPACE_SET_MAX`] space ids, ascending and distinct. An empty set admits nothing: a
/// limit is never widened by losing its spaces.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpaceSet {
    ids: [Id; SPACE_SET_MAX],
    len: u8,
}

impl SpaceSet {
    /// The set of `ids` (in any order, repeats dropped); `None` when there are more than
    /// [`SPACE_SET_MAX`] distinct ones.
    pub fn new(ids: impl IntoIterator<Item = Id>) -> Option<SpaceSet> {
        let mut all: Vec<Id> = ids.into_iter().collect();
        all.sort_unstable();
        all.dedup();
        if all.len() > SPACE_SET_MAX {
            return None;
        }
        let mut set = SpaceSet {
            ids: [0; SPACE_SET_MAX],
            len: all.len() as u8,
        };
        set.ids[..all.len()].copy_from_slice(&all);
        Some(set)
    }

    pub fn ids(&self) -> &[Id] {
        &self.ids[..usize::from(self.len)]
    }

    pub fn contains(&self, id: Id) -> bool {
        self.ids().binary_search(&id).is_ok()
    }

    /// The one space of a set of one.
    pub fn single(&self) -> Option<Id> {
        match self.ids() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// As stored and sent: the ids joined by commas (`3,5`).
    pub fn joined(&self) -> String {
        let ids: Vec<String> = self.ids().iter().map(Id::to_string).collect();
        ids.join(",")
    }

    /// Reads [`joined`](Self::joined) back. Anything unreadable is the empty set, so a damaged
    /// value limits a key to nothing rather than to everything.
    pub fn parse_stored(text: &str) -> SpaceSet {
        let ids: Option<Vec<Id>> = text
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse().ok().filter(|&id: &Id| id > 0))
            .collect();
        ids.and_then(SpaceSet::new).unwrap_or(SpaceSet {
            ids: [0; SPACE_SET_MAX],
            len: 0,
        })
    }

    /// "space 3" or "spaces 3, 5 and 8", for messages.
    pub fn described(&self) -> String {
        match self.ids() {
            [] => "no space".to_owned(),
            [one] => format!("space {one}"),
            [first @ .., last] => {
                let first: Vec<String> = first.iter().map(Id::to_string).collect();
                format!("spaces {} and {last}", first.join(", "))
            }
        }
    }
}

impl fmt::Debug for SpaceSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.ids()).finish()
    }
}

impl serde::Serialize for SpaceSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.ids())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_sorted_distinct_and_bounded() {
        let set = SpaceSet::new([5, 3, 5]).unwrap();
        assert_eq!(set.ids(), [3, 5]);
        assert!(set.contains(3) && !set.contains(4));
        assert_eq!(set.joined(), "3,5");
        assert_eq!(set.described(), "spaces 3 and 5");
        assert_eq!(SpaceSet::new([9]).unwrap().single(), Some(9));
        assert!(SpaceSet::new(1..=SPACE_SET_MAX as Id).is_some());
        assert!(SpaceSet::new(1..=SPACE_SET_MAX as Id + 1).is_none());
    }

    #[test]
    fn a_damaged_stored_set_admits_nothing() {
        assert_eq!(SpaceSet::parse_stored("3,5").ids(), [3, 5]);
        for damaged in ["3,x", "-1", "0", "1,2,3,4,5,6,7,8,9"] {
            assert!(
                SpaceSet::parse_stored(damaged).ids().is_empty(),
                "{damaged}"
            );
        }
    }
}
