//! SQL for domains.

use jiff::Timestamp;
use linkdeck_store::rows;
use linkdeck_store::{DOMAIN_COLUMNS as COLUMNS, Domains, settings_cells};
use rusqlite::{Connection, params};

use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;
use linkdeck_domain::{Domain, HostSettings, Id, Result};

pub fn get(conn: &Connection, owner: Id, id: Id) -> Result<Option<Domain>> {
    conn.one(
        &format!("SELECT {COLUMNS} FROM domains WHERE id = ?1 AND owner_id = ?2"),
        params![id, owner],
        |r| rows::domain_with_settings(&Cols(r)),
    )
}

/// Every id of the owner's domains (for checking many links at once).
pub fn ids(conn: &Connection, owner: Id) -> Result<Vec<Id>> {
    conn.all("SELECT id FROM domains WHERE owner_id = ?1", [owner], |r| {
        r.get(0)
    })
}

impl Domains for SqliteTx<'_> {
    fn domain(&self, owner: Id, id: Id) -> Result<Option<Domain>> {
        get(self.conn, owner, id)
    }

    fn lock_domain(&self, owner: Id, id: Id) -> Result<Option<Domain>> {
        // One writer at a time: the write transaction holds the whole file.
        get(self.conn, owner, id)
    }

    fn domain_in_use(&self, name: &str, host: &str) -> Result<bool> {
        self.conn.exists(
            "SELECT 1 FROM domains WHERE name = ?1 OR host = ?2",
            params![name, host],
        )
    }

    fn insert_domain(&self, owner: Id, name: &str, host: &str, now: Timestamp) -> Result<Id> {
        self.conn.run(
            "INSERT INTO domains (owner_id, name, host, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?4)",
            params![owner, name, host, now.as_second()],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn set_domain_settings(
        &self,
        owner: Id,
        id: Id,
        settings: &HostSettings,
        now: Timestamp,
    ) -> Result<bool> {
        let (root, unknown, expired, robots, robots_txt) = settings_cells(settings);
        let n = self.conn.run(
            "UPDATE domains SET root_url = ?3, unknown_url = ?4, expired_url = ?5, robots = ?6, \
             robots_txt = ?7, updated_at = ?8 WHERE id = ?1 AND owner_id = ?2",
            params![
                id,
                owner,
                root,
                unknown,
                expired,
                robots,
                robots_txt,
                now.as_second()
            ],
        )?;
        Ok(n > 0)
    }

    fn delete_domain(&self, owner: Id, id: Id) -> Result<bool> {
        let n = self.conn.run(
            "DELETE FROM domains WHERE id = ?1 AND owner_id = ?2",
            params![id, owner],
        )?;
        if n > 0 {
            super::traffic::delete_scope(self.conn, super::traffic::Scope::Domain, id)?;
        }
        Ok(n > 0)
    }

    fn domain_uses(&self, owner: Id, id: Id) -> Result<(u64, u64)> {
        let count_in = |table: &str| {
            let sql =
                format!("SELECT count(*) FROM {table} WHERE owner_id = ?1 AND domain_id = ?2");
            self.conn.count(&sql, params![owner, id])
        };
        Ok((count_in("links")?, count_in("trash_links")?))
    }

    fn domains(&self, owner: Id, offset: u64, limit: u32) -> Result<(Vec<Domain>, u64)> {
        let total = self
            .conn
            .count("SELECT count(*) FROM domains WHERE owner_id = ?1", [owner])?;
        let items = self.conn.all(
            &format!(
                "SELECT {COLUMNS} FROM domains WHERE owner_id = ?1 \
                 ORDER BY id DESC LIMIT ?2 OFFSET ?3"
            ),
            params![owner, limit, offset as i64],
            |r| rows::domain_with_settings(&Cols(r)),
        )?;
        Ok((items, total))
    }
}
