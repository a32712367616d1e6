//! Bulk work: many of an owner's links changed or moved to the trash in one transaction, a
//! chunk of ids per statement.

use std::collections::BTreeSet;

use jiff::Timestamp;
use linkdeck_domain::{Id, Result};
use roaring::RoaringTreemap;

/// Ids per statement: large enough that SQLite's full-text index works in big steps (5,000 a
/// statement made a bulk delete a third slower), small enough that progress moves and a
/// cancel is heard within a fraction of a second.
pub const CHUNK: usize = 20_000;

/// A value a bulk update sets, or a link had before it: as both stores bind and read it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    Null,
    Integer(i64),
    Text(String),
}

/// A column a bulk update sets (`disabled`, `public`, `space_id`, `ends_at`,
/// `expiration_clicks`, `expiration_url`), and its new value.
pub type Change = (&'static str, Value);

/// A changed link and the values it had, in the order of the changes.
pub type Earlier = (Id, Vec<Value>);

/// `ids` in chunks of [`CHUNK`], in id order.
pub fn chunks(ids: &RoaringTreemap) -> impl Iterator<Item = Vec<Id>> + '_ {
    let mut ids = ids.iter().map(|id| id as Id).peekable();
    std::iter::from_fn(move || {
        ids.peek()?;
        Some(ids.by_ref().take(CHUNK).collect())
    })
}

/// Told the size of each chunk as it is done; an error from it ends the work (a cancel).
pub type Step<'a> = dyn FnMut(u64) -> Result<()> + 'a;

pub trait Bulk {
    /// Which of `ids` are the owner's links.
    fn owned_links(&self, owner: Id, ids: &BTreeSet<Id>) -> Result<RoaringTreemap>;
    /// Sets each group's changes (and `updated_at`) on those of its links that differ in any
    /// of them, a chunk at a time; answers, group by group, each changed link with its earlier
    /// values. A change of space moves the links' counts and traffic with them.
    fn update_links(
        &self,
        owner: Id,
        groups: &[(RoaringTreemap, Vec<Change>)],
        now: Timestamp,
        step: &mut Step<'_>,
    ) -> Result<Vec<Vec<Earlier>>>;
    /// Moves the owner's links `ids` into trash batch `batch`, a chunk at a time; how many
    /// moved. Run as [`Access::Unchecked`](crate::Access::Unchecked): what belongs to a link
    /// (its visits) stays where it is, waiting for it.
    fn trash_links(
        &self,
        owner: Id,
        ids: &RoaringTreemap,
        batch: Id,
        step: &mut Step<'_>,
    ) -> Result<u64>;
}
