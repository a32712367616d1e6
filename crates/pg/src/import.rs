//! An import's writes on PostgreSQL, in one transaction: the same rules as on SQLite (the
//! import's `Writer`), its questions answered over SQL. The import runs on a blocking thread
//! (its rows come from a reader there) and hands each statement to the runtime.
//!
//! - Aliases a batch of rows wants are looked up in one statement before the rows ask one by
//!   one ([`ImportStore::look_ahead`]); only generated and renamed ones cost a round trip each.
//! - Links wait in memory a chunk at a time, then go in with one binary `COPY`, their ids taken
//!   from the table's sequence first so their history can be written against them.
//! - Each link's history goes into its own rollup rows with its chunk. What it adds to the
//!   owner's, spaces' and domains' rows is summed over the whole import and written once at the
//!   end, those rows locked all at once in key order as every other writer of them does (see
//!   `traffic`): locked chunk by chunk, they would be taken out of order, and a click writer
//!   could wait for the import while the import waits for it.
//! - New visit values are stored on a connection of their own, outside the transaction, as the
//!   click writer stores them: they are never deleted, and a click writer wanting the same one
//!   never waits for the import.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use deadpool_postgres::Transaction;
use tokio::runtime::Handle;

use crate::pool::Pg;
use crate::sql::{all, col, plan_for_values, rows, write};
use crate::tx::{PgTx, end};
use crate::{links, traffic, visits};
use linkdeck_domain::{Dimension, Error, Id, LinkField, Result, TrafficHour};
use linkdeck_store::traffic::history_days;
use linkdeck_store::traffic::values::Interner;
use linkdeck_store::traffic::{DayTraffic, LinkHome, Scope};
use linkdeck_store::visits::RowDeltas;
use linkdeck_store::{Counted, ImportStore, LinkRow, Links, Tx};

/// Runs `body` over an import store in one transaction, committed when it succeeds.
pub fn run<T>(
    pg: &Pg,
    runtime: &Handle,
    body: impl FnOnce(PgImport<'_, '_>) -> Result<T>,
) -> Result<T> {
    let mut client = runtime.block_on(pg.client())?;
    let tx = runtime.block_on(write(&mut client))?;
    // The links table grows by the import within this one transaction, where no statistics
    // follow it: a plan made once and kept (as prepared statements' plans are) would go on
    // scanning the whole table for every alias. Each statement is planned for the table as it is.
    runtime.block_on(plan_for_values(&tx))?;
    let store = PgImport {
        pg,
        view: PgTx::new(&tx, runtime),
        staged: Vec::new(),
        known: HashMap::new(),
        scopes: BTreeMap::new(),
        interner: Interner::default(),
    };
    let done = body(store);
    end(runtime, tx, done)
}

/// A link waiting for its chunk's COPY: its row, its clicks besides its history's, its history.
type Staged = (LinkRow, Counted, Vec<TrafficHour>);

pub struct PgImport<'a, 't> {
    pg: &'a Pg,
    /// The import's transaction, driven from this thread.
    view: PgTx<'a, Transaction<'t>>,
    staged: Vec<Staged>,
    /// Aliases looked up ahead, by domain (0 for none) and in lower case: whether each is taken.
    /// Forgotten at every flush, which may take some.
    known: HashMap<(Id, String), bool>,
    /// What the imported history adds to owners', spaces' and domains' rows, written at the end.
    scopes: BTreeMap<(Scope, Id, i64), DayTraffic>,
    interner: Interner,
}

/// The COPY of a chunk found an alias taken: another program took it after the import looked.
fn taken_meanwhile(e: Error) -> Error {
    match e {
        Error::Validation(fields) if fields.contains(LinkField::Alias.name()) => Error::Conflict(
            "another program gave one of the imported aliases to a link during the import; \
             nothing was imported, try again"
                .into(),
        ),
        other => other,
    }
}

impl ImportStore for PgImport<'_, '_> {
    fn tx(&self) -> &dyn Tx {
        &self.view
    }

    fn space_names(&mut self, owner: Id) -> Result<Vec<(Id, String)>> {
        // Held against a delete (not against edits) until the import ends.
        self.view.wait(all(
            self.view.c,
            "SELECT id, name FROM spaces WHERE owner_id = $1 ORDER BY id FOR KEY SHARE",
            &[&owner],
            |r| Ok((col(r, 0)?, col(r, 1)?)),
        ))
    }

    fn domain_ids(&mut self, owner: Id) -> Result<Vec<Id>> {
        self.view.wait(all(
            self.view.c,
            "SELECT id FROM domains WHERE owner_id = $1 ORDER BY id FOR KEY SHARE",
            &[&owner],
            |r| col(r, 0),
        ))
    }

    fn look_ahead(&mut self, wanted: &[(Option<Id>, &str)]) -> Result<()> {
        let (domains, aliases): (Vec<Id>, Vec<String>) = wanted
            .iter()
            .map(|(d, a)| (d.unwrap_or(0), a.to_ascii_lowercase()))
            .filter(|key| !self.known.contains_key(key))
            .unzip();
        if domains.is_empty() {
            return Ok(());
        }
        // The expressions are those of the unique index `links_alias`.
        let taken: BTreeSet<(Id, String)> = self
            .view
            .wait(rows(
                self.view.c,
                "SELECT k.d, k.a FROM unnest($1::bigint[], $2::text[]) AS k(d, a) \
                 WHERE EXISTS (SELECT 1 FROM links l \
                               WHERE coalesce(l.domain_id, 0) = k.d \
                                 AND lower(l.alias) = lower(k.a))",
                &[&domains, &aliases],
            ))?
            .iter()
            .map(|r| Ok((col(r, 0)?, col(r, 1)?)))
            .collect::<Result<_>>()?;
        for key in domains.into_iter().zip(aliases) {
            let is_taken = taken.contains(&key);
            self.known.insert(key, is_taken);
        }
        Ok(())
    }

    fn alias_taken(&mut self, domain: Option<Id>, alias: &str) -> Result<bool> {
        let key = (domain.unwrap_or(0), alias.to_ascii_lowercase());
        if let Some(&taken) = self.known.get(&key) {
            return Ok(taken);
        }
        self.view.alias_taken(domain, alias, None)
    }

    fn stage(
        &mut self,
        link: &LinkRow,
        counted: Counted,
        history: Vec<TrafficHour>,
    ) -> Result<usize> {
        self.staged.push((link.clone(), counted, history));
        Ok(self.staged.len())
    }

    fn flush(&mut self) -> Result<(usize, u64)> {
        self.known.clear();
        if self.staged.is_empty() {
            return Ok((0, 0));
        }
        let staged = std::mem::take(&mut self.staged);
        self.intern(&staged)?;
        let n = staged.len() as i64;
        // Ids from the table's own sequence: never given out before, nor after, to anyone else.
        let mut ids: Vec<Id> = self.view.wait(all(
            self.view.c,
            "SELECT nextval(pg_get_serial_sequence('links', 'id')) \
             FROM generate_series(1, $1::bigint)",
            &[&n],
            |r| col(r, 0),
        ))?;
        ids.sort_unstable();
        let mut deltas = RowDeltas::default();
        let mut rows: Vec<(Id, &LinkRow, [i64; 2])> = Vec::with_capacity(staged.len());
        let mut history_clicks = 0u64;
        for (&id, (link, counted, hours)) in ids.iter().zip(&staged) {
            let (days, added) = history_days(hours, |dim, value| {
                self.interner.known(dim, Some(value)).ok_or_else(|| {
                    Error::Unavailable(format!("the visit value {value:?} has no code"))
                })
            })?;
            history_clicks += added;
            let home = LinkHome {
                owner: link.owner_id,
                space: link.space_id,
                domain: link.domain_id,
            };
            for (day, traffic) in days {
                for (scope, scope_id) in home.scopes() {
                    self.scopes
                        .entry((scope, scope_id, day))
                        .or_default()
                        .merge(&traffic);
                }
                deltas.links.insert((home.owner, day, id), traffic);
            }
            let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            let total = counted.clicks.saturating_add(added);
            rows.push((id, link, [count(total), count(counted.previews)]));
        }
        let written = self
            .view
            .wait(links::copy_in(self.view.c, &rows))
            .map_err(taken_meanwhile)?;
        self.view.wait(traffic::add(self.view.c, &deltas))?;
        Ok((written as usize, history_clicks))
    }

    fn finish(&mut self) -> Result<()> {
        let deltas = RowDeltas {
            links: BTreeMap::new(),
            scopes: std::mem::take(&mut self.scopes),
        };
        self.view.wait(traffic::add(self.view.c, &deltas))
    }
}

impl PgImport<'_, '_> {
    /// Gives every value of these links' histories a code, storing the new ones outside the
    /// import's transaction.
    fn intern(&mut self, staged: &[Staged]) -> Result<()> {
        let unknown: BTreeSet<(usize, &str)> = staged
            .iter()
            .flat_map(|(_, _, hours)| hours)
            .flat_map(|hour| {
                hour.values.iter().enumerate().flat_map(|(dim, values)| {
                    values.iter().map(move |(value, _)| (dim, value.as_str()))
                })
            })
            .filter(|&(dim, value)| {
                self.interner
                    .known(Dimension::ALL[dim], Some(value))
                    .is_none()
            })
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let (pg, view) = (self.pg, &self.view);
        let interner = &mut self.interner;
        view.wait(async {
            let client = pg.client().await?;
            visits::intern_values(&client, &unknown, interner).await
        })
    }
}
