//! What the trash holds, as every front end sees it: what was deleted, when, and until when it
//! can come back.

use jiff::Timestamp;

use super::{Id, Page};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrashedKind {
    Link,
    Space,
}

impl TrashedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TrashedKind::Link => "link",
            TrashedKind::Space => "space",
        }
    }
}

/// One deleted link or space.
#[derive(Debug, Clone, PartialEq)]
pub struct Trashed {
    pub kind: TrashedKind,
    /// Its own id, which it keeps when restored.
    pub id: Id,
    /// A link's alias or a space's name.
    pub name: String,
    /// A link's destination, or how many links a space held.
    pub detail: String,
    /// A link's clicks (a space's: 0).
    pub clicks: u64,
    pub deleted_at: Timestamp,
    /// When it is deleted for good, if ever.
    pub purge_at: Option<Timestamp>,
    /// The delete it went with: one undo brings the whole batch back.
    pub batch: Id,
}

pub type TrashPage = Page<Trashed>;
