//! Tags: what a store answers about the labels an owner's links carry. The tags themselves are
//! a column of the link (its row's `tags`); each store keeps an index of them, by owner and tag,
//! from that column with its own triggers, so no writer has to remember it.

use linkdeck_domain::{Id, Result, TagCount};

pub trait Tags {
    /// Every tag of `owner`'s links and how many carry it, by name.
    fn tags(&self, owner: Id) -> Result<Vec<TagCount>>;
    /// The ids and tags of `owner`'s links carrying `tag`, in id order.
    fn tagged(&self, owner: Id, tag: &str) -> Result<Vec<(Id, Vec<String>)>>;
    /// Sets the tags of link `id` (as stored: sorted, each once), leaving the rest of it alone.
    fn set_tags(&self, id: Id, tags: &[String]) -> Result<()>;
}
