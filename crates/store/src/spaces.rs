//! Spaces: an owner's named, coloured groups of links.

use jiff::Timestamp;
use linkdeck_domain::{Color, Id, Result, Space};

pub trait Spaces {
    fn space(&self, owner: Id, id: Id) -> Result<Option<Space>>;
    /// The owner's space named `name` (without case), other than `except`.
    fn space_named(&self, owner: Id, name: &str, except: Option<Id>) -> Result<Option<Id>>;
    /// Adds a space; a name taken meanwhile by another writer is [`NAME_TAKEN`] on `name`.
    ///
    /// [`NAME_TAKEN`]: crate::words::NAME_TAKEN
    fn insert_space(&self, owner: Id, name: &str, color: Color, now: Timestamp) -> Result<Id>;
    /// Changes what is given of the owner's space `id`; `false` when there is none.
    fn update_space(
        &self,
        owner: Id,
        id: Id,
        name: Option<&str>,
        color: Option<Color>,
        now: Timestamp,
    ) -> Result<bool>;
    /// A page of the owner's spaces whose name contains `search`, by id, and how many match.
    fn spaces(
        &self,
        owner: Id,
        search: Option<&str>,
        newest_first: bool,
        offset: u64,
        limit: u32,
    ) -> Result<(Vec<Space>, u64)>;
}
