//! The rollups as statistics and exports read them from SQLite: [`Rollups`] over one
//! connection (the caller holds a read transaction for a consistent snapshot).

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, params};

use super::{DaySink, LinkHome, Scope, StoredDay, scope_range};
use crate::error::db_error;
use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result, StatsScope};
use linkdeck_store::Rollups;
use linkdeck_store::traffic::{Members, members};

impl Rollups for SqliteTx<'_> {
    fn owns(&self, owner: Id, scope: &StatsScope) -> Result<bool> {
        let (sql, id) = match scope {
            StatsScope::Link(id) => ("SELECT 1 FROM links WHERE id = ?1 AND owner_id = ?2", id),
            StatsScope::Space(id) => ("SELECT 1 FROM spaces WHERE id = ?1 AND owner_id = ?2", id),
            StatsScope::Domain(id) => ("SELECT 1 FROM domains WHERE id = ?1 AND owner_id = ?2", id),
            StatsScope::Tag(tag) => {
                let found: Option<i64> = self.conn.one(
                    "SELECT 1 FROM link_tags WHERE owner_id = ?1 AND tag = ?2 LIMIT 1",
                    params![owner, tag],
                    |r| r.get(0),
                )?;
                return Ok(found.is_some());
            }
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
        let Some((first, last)) = scope_range(self.conn, Scope::Owner, owner)? else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT data FROM link_traffic WHERE owner_id = ?1 AND day = ?2 AND link_id = ?3",
            )
            .map_err(db_error)?;
        for day in first..=last {
            let data: Option<Vec<u8>> = stmt
                .query_row(params![owner, day, link], |r| r.get(0))
                .optional()
                .map_err(db_error)?;
            if let Some(data) = data {
                return Ok(Some((day, data)));
            }
        }
        Ok(None)
    }

    fn first_scope_day(&self, scope: Scope, id: Id) -> Result<Option<(i64, Vec<u8>)>> {
        self.conn.one(
            "SELECT day, data FROM scope_traffic WHERE scope = ?1 AND scope_id = ?2 \
             ORDER BY day LIMIT 1",
            params![scope as i64, id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn counted_clicks(&self, owner: Id, scope: &StatsScope) -> Result<u64> {
        let sum = match members(scope) {
            Members::All => self.conn.one(
                "SELECT coalesce(sum(clicks), 0) FROM links WHERE owner_id = ?1",
                params![owner],
                |r| r.get::<_, i64>(0),
            )?,
            Members::Tagged(tag) => self.conn.one(
                "SELECT coalesce(sum(l.clicks), 0) FROM link_tags t JOIN links l ON l.id = t.link_id
                 WHERE t.owner_id = ?1 AND t.tag = ?2",
                params![owner, tag],
                |r| r.get::<_, i64>(0),
            )?,
            Members::Column(column, id) => self.conn.one(
                &format!(
                    "SELECT coalesce(sum(clicks), 0) FROM links \
                     WHERE owner_id = ?1 AND {column} = ?2"
                ),
                params![owner, id],
                |r| r.get::<_, i64>(0),
            )?,
        };
        Ok(sum.unwrap_or(0).max(0) as u64)
    }

    fn owner_link_days(
        &self,
        owner: Id,
        first: i64,
        last: i64,
        f: &mut dyn FnMut(Id, StoredDay<'_>),
    ) -> Result<()> {
        self.conn.each(
            "SELECT link_id, day, clicks, data FROM link_traffic
             WHERE owner_id = ?1 AND day BETWEEN ?2 AND ?3",
            params![owner, first, last],
            |r| {
                let data = r.get_ref(3).map_err(db_error)?.as_blob().unwrap_or(&[]);
                let day = StoredDay {
                    day: r.get(1).map_err(db_error)?,
                    clicks: r.get::<_, i64>(2).map_err(db_error)?.max(0) as u64,
                    data,
                };
                f(r.get(0).map_err(db_error)?, day);
                Ok(())
            },
        )
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
        let column = scope.member_column();
        self.conn.all(
            &format!("SELECT id FROM links WHERE owner_id = ?1 AND {column} = ?2"),
            params![owner, id],
            |r| r.get(0),
        )
    }

    fn members_with_clicks(&self, owner: Id, scope: Scope, id: Id) -> Result<Vec<(Id, i64)>> {
        let column = scope.member_column();
        self.conn.all(
            &format!("SELECT id, clicks FROM links WHERE owner_id = ?1 AND {column} = ?2"),
            params![owner, id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn tagged_ids(&self, owner: Id, tag: &str) -> Result<Vec<Id>> {
        self.conn.all(
            "SELECT link_id FROM link_tags WHERE owner_id = ?1 AND tag = ?2",
            params![owner, tag],
            |r| r.get(0),
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
