//! The rollups as statistics and exports read them from SQLite: [`Rollups`] over one
//! connection (the caller holds a read transaction for a consistent snapshot).

use std::collections::{HashMap, HashSet};

use rusqlite::params;

use super::{DaySink, LinkHome, Scope, StoredDay};
use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result, StatsScope};
use linkdeck_store::Rollups;

/// The column of `links` that places a link in a space or a domain.
fn member_column(scope: Scope) -> &'static str {
    if scope == Scope::Space {
        "space_id"
    } else {
        "domain_id"
    }
}

impl Rollups for SqliteTx<'_> {
    fn owns(&self, owner: Id, scope: StatsScope) -> Result<bool> {
        let (sql, id) = match scope {
            StatsScope::Link(id) => ("SELECT 1 FROM links WHERE id = ?1 AND owner_id = ?2", id),
            StatsScope::Space(id) => ("SELECT 1 FROM spaces WHERE id = ?1 AND owner_id = ?2", id),
            StatsScope::Domain(id) => ("SELECT 1 FROM domains WHERE id = ?1 AND owner_id = ?2", id),
            StatsScope::Account => return Ok(true),
        };
        let found: Option<i64> = self.conn.one(sql, params![id, owner], |r| r.get(0))?;
        Ok(found.is_some())
    }

    fn link_home(&self, id: Id) -> Result<Option<LinkHome>> {
        super::link_home(self.conn, id)
    }

    fn link_days(&self, owner: Id, link: Id, first: i64, last: i64, f: &mut DaySink) -> Result<()> {
        super::link_days(self.conn, owner, link, first, last, f)
    }

    fn scope_days(
        &self,
        scope: Scope,
        id: Id,
        first: i64,
        last: i64,
        f: &mut DaySink,
    ) -> Result<()> {
        super::scope_days(self.conn, scope, id, first, last, f)
    }

    fn first_link_day(&self, owner: Id, link: Id) -> Result<Option<(i64, Vec<u8>)>> {
        super::first_link_day(self.conn, owner, link)
    }

    fn first_scope_day(&self, scope: Scope, id: Id) -> Result<Option<(i64, Vec<u8>)>> {
        super::first_scope_day(self.conn, scope, id)
    }

    fn owner_link_days(
        &self,
        owner: Id,
        first: i64,
        last: i64,
        f: &mut dyn FnMut(Id, StoredDay<'_>),
    ) -> Result<()> {
        super::owner_link_days(self.conn, owner, first, last, f)
    }

    fn names(&self, codes: &[u64]) -> Result<HashMap<u64, Option<String>>> {
        super::values::names(self.conn, codes)
    }

    fn alias_and_url(&self, link: Id) -> Result<Option<(String, String)>> {
        self.conn
            .one("SELECT alias, url FROM links WHERE id = ?1", [link], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
    }

    fn member_ids(&self, owner: Id, scope: Scope, id: Id) -> Result<HashSet<Id>> {
        let column = member_column(scope);
        self.conn.all(
            &format!("SELECT id FROM links WHERE owner_id = ?1 AND {column} = ?2"),
            params![owner, id],
            |r| r.get(0),
        )
    }

    fn members_with_clicks(&self, owner: Id, scope: Scope, id: Id) -> Result<Vec<(Id, i64)>> {
        let column = member_column(scope);
        self.conn.all(
            &format!("SELECT id, clicks FROM links WHERE owner_id = ?1 AND {column} = ?2"),
            params![owner, id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn links_by_clicks(&self, owner: Id, before: (i64, i64), n: usize) -> Result<Vec<(Id, i64)>> {
        self.conn.all(
            "SELECT id, clicks FROM links WHERE owner_id = ?1 AND (clicks, id) < (?2, ?3)
             ORDER BY clicks DESC, id DESC LIMIT ?4",
            params![owner, before.0, before.1, n as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }
}
