//! SQL for the raw visit log: one row per counted visit, appended in time order and kept for the
//! retention the server is configured with. Statistics never read it (they read the rollups);
//! it is the record of what happened, and what an upgrade builds rollups from.
//!
//! Appends are cheap because the log has no index but its row id: rows are pruned from the
//! oldest end, and the rows of a deleted link are found by a pass over the log in the
//! background ([`purge_forgotten`]) rather than by an index every visit would pay for.

use rusqlite::{Connection, params};

use crate::error::db_error;
use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result, Visit};
use linkdeck_store::visits::VisitRow;
use linkdeck_store::{LogWindow, VisitLog};

/// Rows per multi-row INSERT: fewer statement runs for the same rows.
const ROWS_PER_INSERT: usize = 50;

/// Appends `rows` to the log. Rows with neither an address (kept only as `[serve]
/// visitor_addresses` says) nor a targeting rule are written without those columns: that is
/// also the shape an upgrade writes in when migration 6 logs the old visits, before migrations
/// 14 and 15 add them.
pub fn append<'a>(
    conn: &Connection,
    rows: impl ExactSizeIterator<Item = &'a VisitRow>,
) -> Result<()> {
    let rows: Vec<&VisitRow> = rows.collect();
    let extras = rows.iter().any(|v| v.address.is_some() || v.rule.is_some());
    let (columns, marks) = if extras {
        (
            "link_id, at, country, platform, browser, referrer, language, address, rule",
            "(?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
    } else {
        (
            "link_id, at, country, platform, browser, referrer, language",
            "(?, ?, ?, ?, ?, ?, ?)",
        )
    };
    let values = |n: usize| {
        format!(
            "INSERT INTO visit_log ({columns}) VALUES {}",
            vec![marks; n].join(", ")
        )
    };
    let params = |v: &'a VisitRow| {
        let all = row_params(v);
        all.into_iter().take(if extras { 9 } else { 7 })
    };
    let mut chunks = rows.chunks_exact(ROWS_PER_INSERT);
    {
        let mut many = conn
            .prepare_cached(&values(ROWS_PER_INSERT))
            .map_err(db_error)?;
        for chunk in &mut chunks {
            let params: Vec<&dyn rusqlite::ToSql> = chunk.iter().flat_map(|v| params(v)).collect();
            many.execute(params.as_slice()).map_err(db_error)?;
        }
    }
    let mut one = conn.prepare_cached(&values(1)).map_err(db_error)?;
    for v in chunks.remainder() {
        let params: Vec<&dyn rusqlite::ToSql> = params(v).collect();
        one.execute(params.as_slice()).map_err(db_error)?;
    }
    Ok(())
}

fn row_params(v: &VisitRow) -> [&dyn rusqlite::ToSql; 9] {
    [
        &v.link_id,
        &v.at,
        &v.country,
        &v.platform,
        &v.browser,
        &v.referrer,
        &v.language,
        &v.address,
        &v.rule,
    ]
}

/// Marks the logged visits of a deleted link for removal by [`purge_forgotten`]: those logged
/// so far (a later link that reuses the id keeps its own).
pub fn forget_link(conn: &Connection, link: Id) -> Result<()> {
    conn.run(
        "INSERT INTO visit_log_purge (link_id, upto)
         SELECT ?1, ifnull(max(id), 0) FROM visit_log WHERE true
         ON CONFLICT (link_id) DO UPDATE SET upto = excluded.upto",
        [link],
    )?;
    Ok(())
}

/// Links marked by [`forget_link`] handled per pass.
const PURGE_LINKS: usize = 100;

impl VisitLog for SqliteTx<'_> {
    fn prune_visit_log(&self, before: i64, chunk: usize) -> Result<usize> {
        // The log is in time order, so the old rows are at the front: look only there.
        let upto: Option<i64> = self.conn.row(
            "SELECT max(id) FROM (SELECT id, at FROM visit_log ORDER BY id LIMIT ?2) WHERE at < ?1",
            params![before, chunk as i64],
            |r| r.get(0),
        )?;
        let Some(upto) = upto else { return Ok(0) };
        self.conn.run(
            "DELETE FROM visit_log WHERE id <= ?1 AND at < ?2",
            params![upto, before],
        )
    }

    fn purge_forgotten_visits(&self, after: i64, chunk: i64) -> Result<Option<i64>> {
        let marked: Vec<(Id, i64)> = self.conn.all(
            "SELECT link_id, upto FROM visit_log_purge ORDER BY link_id LIMIT ?1",
            [PURGE_LINKS as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let Some(end) = marked.iter().map(|m| m.1).max() else {
            return Ok(None);
        };
        if after >= end {
            let mut done = self
                .conn
                .prepare_cached("DELETE FROM visit_log_purge WHERE link_id = ?1 AND upto <= ?2")
                .map_err(db_error)?;
            for (link, upto) in &marked {
                done.execute(params![link, upto]).map_err(db_error)?;
            }
            return Ok(Some(0));
        }
        let until = after.saturating_add(chunk).min(end);
        let which = vec!["(link_id = ? AND id <= ?)"; marked.len()].join(" OR ");
        let sql = format!("DELETE FROM visit_log WHERE id > ? AND id <= ? AND ({which})");
        let mut values: Vec<i64> = vec![after, until];
        for (link, upto) in &marked {
            values.extend([*link, *upto]);
        }
        self.conn
            .execute(&sql, rusqlite::params_from_iter(values))
            .map_err(db_error)?;
        Ok(Some(until))
    }

    fn last_visit_id(&self) -> Result<i64> {
        self.conn
            .row("SELECT ifnull(max(id), 0) FROM visit_log", [], |r| r.get(0))
    }

    fn logged_visits(&self, w: &LogWindow, limit: usize) -> Result<Vec<Visit>> {
        // The log's row ids drive the read (it has no other index); each row's link is then
        // found by its id.
        let [link, space, domain] = w.scope_ids();
        self.conn.all(
            "SELECT v.id, v.at, v.link_id, l.alias, v.country, v.platform, v.browser,
                    v.referrer, v.language, v.address, v.rule
             FROM visit_log v JOIN links l ON l.id = v.link_id
             WHERE v.id > ?1 AND v.id <= ?2 AND l.owner_id = ?3 AND v.at >= ?4 AND v.at < ?5
               AND (?6 IS NULL OR v.link_id = ?6) AND (?7 IS NULL OR l.space_id = ?7)
               AND (?8 IS NULL OR l.domain_id = ?8)
               AND (?10 IS NULL OR v.link_id IN
                    (SELECT link_id FROM link_tags WHERE owner_id = ?3 AND tag = ?10))
             ORDER BY v.id LIMIT ?9",
            params![
                w.after,
                w.upto,
                w.owner,
                w.since,
                w.until,
                link,
                space,
                domain,
                limit as i64,
                w.scope_tag()
            ],
            |r| {
                Ok(Visit {
                    id: r.get(0)?,
                    at: linkdeck_store::time(r.get(1)?),
                    link_id: r.get(2)?,
                    alias: r.get(3)?,
                    country: r.get(4)?,
                    platform: r.get(5)?,
                    browser: r.get(6)?,
                    referrer: r.get(7)?,
                    language: r.get(8)?,
                    address: r.get(9)?,
                    rule: r.get(10)?,
                })
            },
        )
    }
}
