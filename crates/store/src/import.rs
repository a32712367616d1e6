//! What an import asks of the database it writes, inside its one transaction: the service's
//! import writer holds the rules, each store answers these questions and keeps the rows.

use linkdeck_domain::{Id, Result, TrafficHour};

use crate::{LinkRow, Tx};

/// What an import asks of the database it writes, all inside its one transaction. The rules —
/// which alias a row gets, which space, what is an error — are the service's import writer's, the same on
/// every store; each store answers these.
pub trait ImportStore {
    /// The import's transaction, for what it asks and writes as any other work does (its
    /// spaces).
    fn tx(&self) -> &dyn Tx;
    /// The owner's spaces, id and name; they stay the owner's until the import ends.
    fn space_names(&mut self, owner: Id) -> Result<Vec<(Id, String)>>;
    /// The owner's domains; they stay the owner's until the import ends.
    fn domain_ids(&mut self, owner: Id) -> Result<Vec<Id>>;
    /// Told the aliases (with their domains) a batch of rows wants, before the rows ask one by
    /// one: a store whose every question is a round trip answers them all at once.
    fn look_ahead(&mut self, _wanted: &[(Option<Id>, &str)]) -> Result<()> {
        Ok(())
    }
    /// Whether a link in the domain has `alias` (without case); the links of earlier chunks
    /// included, those staged in this one not.
    fn alias_taken(&mut self, domain: Option<Id>, alias: &str) -> Result<bool> {
        self.tx().alias_taken(domain, alias, None)
    }
    /// Stages a link with its counts (`clicks` besides its history's) and its traffic history.
    /// Returns how many links are staged.
    fn stage(
        &mut self,
        link: &LinkRow,
        counted: Counted,
        history: Vec<TrafficHour>,
    ) -> Result<usize>;
    /// Writes the staged links, in staging order, and their history. Returns how many links,
    /// and the clicks of their history.
    fn flush(&mut self) -> Result<(usize, u64)>;
    /// Completes what the flushes left to the end.
    fn finish(&mut self) -> Result<()>;
}

/// An import's writer, run over the store's import transaction.
pub type ImportWork<'a> =
    Box<dyn FnOnce(&mut dyn ImportStore) -> Result<Box<dyn std::any::Any + Send>> + Send + 'a>;

/// The counters an imported link arrives with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    /// Clicks beyond those of the history staged with it.
    pub clicks: u64,
    /// Visits of chat apps' preview agents.
    pub previews: u64,
}
