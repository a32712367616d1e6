//! The trash: deleted links and spaces kept whole, grouped by the delete that put them there,
//! and what both stores share of moving them back.

use std::collections::HashSet;

use jiff::Timestamp;
use linkdeck_domain::{Error, Id, Result, Trashed, TrashedKind};
use roaring::RoaringTreemap;

use crate::time;

/// What a restore or purge acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Everything one delete put in the trash.
    Batch(Id),
    /// These trashed links and spaces.
    Items { links: Vec<Id>, spaces: Vec<Id> },
    /// The owner's whole trash.
    All,
}

/// What a restore did: how many came back, and what could not, with the reason.
#[derive(Debug, Default)]
pub struct Restored {
    pub links: u64,
    pub spaces: u64,
    pub failed: Vec<(TrashedKind, Id, String, Error)>,
}

impl Restored {
    /// Notes that trashed space `id` stays in the trash: another space is named `name` now.
    pub fn space_name_taken(&mut self, id: Id, name: String) {
        let why = Error::Conflict(format!("another space is named {name} now"));
        self.failed.push((TrashedKind::Space, id, name, why));
    }
}

/// The aliases (per domain, without case) of the links a restore brings back so far.
pub type Aliases = HashSet<(Id, String)>;

/// What the store found in the way of one trashed link coming back as it was.
#[derive(Debug, Clone, Copy)]
pub struct Blocking {
    /// A live link has its id.
    pub id_taken: bool,
    /// A live link in its domain has its alias.
    pub alias_taken: bool,
    /// Its domain is no longer its owner's.
    pub domain_gone: bool,
}

impl Blocking {
    /// Why link `id` (alias `alias` in `domain`, 0 for none) stays in the trash, if it does.
    /// Restores take links in id order: two trashed links may share an alias (one deleted, a
    /// new one made, deleted too), and the older comes back while the other waits.
    pub fn why(self, id: Id, domain: Id, alias: &str, aliases: &mut Aliases) -> Option<String> {
        let twin = !aliases.insert((domain, alias.to_ascii_lowercase()));
        if self.domain_gone {
            Some("its domain was removed".to_owned())
        } else if self.alias_taken || twin {
            Some(format!("another link uses the alias {alias} now"))
        } else if self.id_taken {
            Some(format!("another link has id {id} now"))
        } else {
            None
        }
    }
}

/// One row of a trash listing as either store reads it.
pub struct ListedRow {
    pub link: bool,
    pub id: Id,
    pub name: String,
    /// A link's destination (a space's is ignored).
    pub url: String,
    pub clicks: i64,
    pub deleted_at: i64,
    pub batch: Id,
    /// A space's members, serialized.
    pub members: Option<Vec<u8>>,
}

impl ListedRow {
    /// The item as front ends see it, purged `keep_days` after its delete (0: never).
    pub fn into_trashed(self, keep_days: u32) -> Trashed {
        let deleted_at = time(self.deleted_at);
        let (kind, detail) = if self.link {
            (TrashedKind::Link, self.url)
        } else {
            let n = self
                .members
                .and_then(|blob| RoaringTreemap::deserialize_from(blob.as_slice()).ok())
                .map_or(0, |m| m.len());
            (
                TrashedKind::Space,
                format!("{n} link{}", if n == 1 { "" } else { "s" }),
            )
        };
        Trashed {
            kind,
            id: self.id,
            name: self.name,
            detail,
            clicks: self.clicks.max(0) as u64,
            deleted_at,
            purge_at: (keep_days > 0).then(|| {
                deleted_at
                    .checked_add(jiff::SignedDuration::from_hours(24 * i64::from(keep_days)))
                    .unwrap_or(deleted_at)
            }),
            batch: self.batch,
        }
    }
}

/// The ids a trashed space held, serialized as `trash_spaces.members` keeps them.
pub fn members_blob(members: &RoaringTreemap) -> Result<Vec<u8>> {
    let mut blob = Vec::with_capacity(members.serialized_size());
    members
        .serialize_into(&mut blob)
        .map_err(|e| Error::Unavailable(format!("cannot record the space's links: {e}")))?;
    Ok(blob)
}

/// The ids `members_blob` wrote.
pub fn members_of(blob: &[u8]) -> Result<RoaringTreemap> {
    RoaringTreemap::deserialize_from(blob)
        .map_err(|e| Error::Unavailable(format!("a trashed space's record is damaged: {e}")))
}

pub trait Trash {
    /// Whether anything was deleted before `cutoff`.
    fn trash_due(&self, cutoff: Timestamp) -> Result<bool>;
    /// Deletes for good, with their traffic, what was deleted before `cutoff`; how many links.
    fn purge_trash_before(&self, cutoff: Timestamp) -> Result<u64>;
    /// A new delete of the owner's, which the links and spaces it trashes are grouped under.
    fn new_trash_batch(&self, owner: Id, now: Timestamp) -> Result<Id>;
    /// Moves the owner's space `id` to the trash under `batch`; its links stay, without a
    /// space, until it comes back. `false` when there is no such space.
    fn trash_space(&self, owner: Id, id: Id, batch: Id) -> Result<bool>;
    /// Moves the owner's trashed links and spaces in `scope` back, with their ids. A link whose
    /// alias was taken meanwhile, or whose domain was removed, stays in the trash and is
    /// reported ([`Blocking::why`]); so is a space whose name was taken. A link whose space is
    /// gone comes back without one.
    fn restore_trash(&self, owner: Id, scope: &Scope) -> Result<Restored>;
    /// Deletes the owner's trashed links and spaces in `scope` for good; how many.
    fn purge_trash(&self, owner: Id, scope: &Scope) -> Result<u64>;
    /// One page of the owner's trash, newest deletes first, purged `keep_days` after their
    /// delete (0: never), and how many items it holds.
    fn trash(
        &self,
        owner: Id,
        offset: u64,
        limit: u32,
        keep_days: u32,
    ) -> Result<(Vec<Trashed>, u64)>;
}
