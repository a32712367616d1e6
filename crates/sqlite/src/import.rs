//! An import's writes on SQLite: links staged in a temporary table and moved into `links` a
//! chunk at a time (see `links::stage_start`), each link's history added to the rollups
//! once the chunk's links have their ids.

use rusqlite::Transaction;

use crate::links::{self as link_store, Staged};
use crate::search;
use crate::traffic::{Interner, LinkHome, add_history};
use crate::tx::SqliteTx;
use crate::{domains, spaces};
use linkdeck_domain::{Id, Result, TrafficHour};
use linkdeck_store::{Counted, ImportStore, LinkRow, Tx};

pub struct SqliteImport<'a, 't> {
    tx: &'a Transaction<'t>,
    /// The same transaction, as other work sees it.
    view: SqliteTx<'a>,
    staged: Option<Staged>,
    /// The short-term index's batch between chunks: it carries on from one to the next.
    grams: Option<search::Batch>,
    /// The traffic history of each staged link, in staging order, written once the chunk's
    /// links have their ids.
    histories: Vec<(LinkHome, Vec<TrafficHour>)>,
    interner: Interner,
}

impl<'a, 't> SqliteImport<'a, 't> {
    pub fn new(tx: &'a Transaction<'t>) -> Result<Self> {
        search::bulk_begin(tx)?;
        Ok(SqliteImport {
            tx,
            view: SqliteTx { conn: tx },
            staged: None,
            grams: None,
            histories: Vec::new(),
            interner: Interner::default(),
        })
    }
}

impl ImportStore for SqliteImport<'_, '_> {
    fn tx(&self) -> &dyn Tx {
        &self.view
    }

    fn space_names(&mut self, owner: Id) -> Result<Vec<(Id, String)>> {
        spaces::names(self.tx, owner)
    }

    fn domain_ids(&mut self, owner: Id) -> Result<Vec<Id>> {
        domains::ids(self.tx, owner)
    }

    fn stage(
        &mut self,
        link: &LinkRow,
        counted: Counted,
        history: Vec<TrafficHour>,
    ) -> Result<usize> {
        let staged = match self.staged.as_mut() {
            Some(staged) => staged,
            None => self.staged.insert(match self.grams.take() {
                Some(grams) => link_store::stage_start_after(self.tx, grams)?,
                None => link_store::stage_start(self.tx)?,
            }),
        };
        link_store::stage(self.tx, staged, link, counted)?;
        self.histories.push((
            LinkHome {
                owner: link.owner_id,
                space: link.space_id,
                domain: link.domain_id,
            },
            history,
        ));
        Ok(staged.len())
    }

    fn flush(&mut self) -> Result<(usize, u64)> {
        let Some(staged) = self.staged.take() else {
            return Ok((0, 0));
        };
        let first = staged.first_id();
        let (links, grams) = link_store::stage_insert_more(self.tx, staged)?;
        self.grams = Some(grams);
        let mut clicks = 0;
        for (k, (home, hours)) in self.histories.drain(..).enumerate() {
            if !hours.is_empty() {
                clicks += add_history(self.tx, first + k as Id, home, &hours, &mut self.interner)?;
            }
        }
        Ok((links, clicks))
    }

    fn finish(&mut self) -> Result<()> {
        if let Some(grams) = self.grams.take() {
            grams.end(self.tx)?;
        }
        search::bulk_end(self.tx)
    }
}
