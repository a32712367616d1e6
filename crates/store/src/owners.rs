//! Owners: the accounts every link, space, domain and key belongs to.

use jiff::Timestamp;
use linkdeck_domain::{Id, Owner, Result};

pub trait Owners {
    fn owner(&self, id: Id) -> Result<Option<Owner>>;
    /// Every owner, oldest first.
    fn owners(&self) -> Result<Vec<Owner>>;
    /// The owner named `name`, compared without case.
    fn owner_named(&self, name: &str) -> Result<Option<Owner>>;
    /// Adds an owner. A name taken meanwhile by another writer is a conflict.
    fn insert_owner(&self, name: &str, now: Timestamp) -> Result<Owner>;
}
