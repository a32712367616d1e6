//! Recording visits (in batches, from the server's click writer) and reading them back as
//! statistics.

use rusqlite::{Connection, Transaction, params};

use super::{LocalService, db_error};
use crate::domain::{Id, Result};

/// One counted visit, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisitRow {
    pub link_id: Id,
    /// Unix seconds.
    pub at: i64,
    /// Upper-case ISO 3166-1 alpha-2 code.
    pub country: Option<String>,
    /// A canonical platform name, or the user agent's OS when it is none of them.
    pub platform: Option<String>,
    pub browser: Option<String>,
    /// The referring page's host.
    pub referrer: Option<String>,
    /// Two lower-case letters.
    pub language: Option<String>,
}

/// Clicks of one link after a batch was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushedLink {
    pub link_id: Id,
    /// The link's click count in the database after the batch.
    pub clicks: u64,
}

/// Writes `visits` (their links' clicks go up by one per row) and the rotation positions in one
/// transaction. Visits of links deleted meanwhile are dropped. Returns each touched link's new
/// click count.
pub fn record_visits(
    tx: &Transaction<'_>,
    visits: &[VisitRow],
    rotations: &[(Id, u32)],
) -> Result<Vec<FlushedLink>> {
    let mut per_link: std::collections::BTreeMap<Id, u64> = std::collections::BTreeMap::new();
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO visits (link_id, at, country, platform, browser, referrer, language)
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM links WHERE id = ?1)",
            )
            .map_err(db_error)?;
        for v in visits {
            insert
                .execute(params![
                    v.link_id, v.at, v.country, v.platform, v.browser, v.referrer, v.language
                ])
                .map_err(db_error)?;
            *per_link.entry(v.link_id).or_default() += 1;
        }
    }
    let mut bump = tx
        .prepare_cached("UPDATE links SET clicks = clicks + ?2 WHERE id = ?1 RETURNING clicks")
        .map_err(db_error)?;
    let mut flushed = Vec::with_capacity(per_link.len());
    for (link_id, n) in per_link {
        let clicks: Option<i64> = bump
            .query_row(params![link_id, n as i64], |r| r.get(0))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(db_error(e)),
            })?;
        if let Some(clicks) = clicks {
            flushed.push(FlushedLink {
                link_id,
                clicks: clicks.max(0) as u64,
            });
        }
    }
    let mut rotate = tx
        .prepare_cached("UPDATE links SET last_rotation = ?2 WHERE id = ?1")
        .map_err(db_error)?;
    for (link_id, next) in rotations {
        rotate.execute(params![link_id, next]).map_err(db_error)?;
    }
    Ok(flushed)
}

/// A link's visits summed up for its stats page.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LinkStats {
    pub clicks: u64,
    /// `(YYYY-MM-DD, visits)` in UTC, oldest first.
    pub by_day: Vec<(String, u64)>,
    /// Most visits first; `None` when unknown.
    pub by_country: Vec<(Option<String>, u64)>,
    pub by_platform: Vec<(Option<String>, u64)>,
    pub by_referrer: Vec<(Option<String>, u64)>,
}

/// How many groups each breakdown keeps, largest first.
const TOP: i64 = 50;
/// Days shown, counted back from the latest visit.
const DAYS: i64 = 90;

fn grouped(
    conn: &Connection,
    sql: &str,
    link_id: Id,
    limit: i64,
) -> Result<Vec<(Option<String>, u64)>> {
    let mut stmt = conn.prepare_cached(sql).map_err(db_error)?;
    let rows = stmt
        .query_map(params![link_id, limit], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, i64>(1)?.max(0) as u64,
            ))
        })
        .map_err(db_error)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_error)
}

impl LocalService {
    /// Visits of one link by day, country, platform and referrer.
    pub async fn link_stats(&self, link_id: Id) -> Result<LinkStats> {
        self.db()
            .read(move |conn| {
                let clicks: i64 = conn
                    .query_row("SELECT clicks FROM links WHERE id = ?1", [link_id], |r| {
                        r.get(0)
                    })
                    .map_err(db_error)?;
                let mut by_day: Vec<(String, u64)> = grouped(
                    conn,
                    "SELECT date(at, 'unixepoch') AS day, count(*) FROM visits WHERE link_id = ?1
                     GROUP BY day ORDER BY day DESC LIMIT ?2",
                    link_id,
                    DAYS,
                )?
                .into_iter()
                .map(|(d, n)| (d.unwrap_or_default(), n))
                .collect();
                by_day.reverse();
                let by = |column: &str| {
                    grouped(
                        conn,
                        &format!(
                            "SELECT {column}, count(*) AS n FROM visits WHERE link_id = ?1
                             GROUP BY {column} ORDER BY n DESC, {column} LIMIT ?2"
                        ),
                        link_id,
                        TOP,
                    )
                };
                Ok(LinkStats {
                    clicks: clicks.max(0) as u64,
                    by_day,
                    by_country: by("country")?,
                    by_platform: by("platform")?,
                    by_referrer: by("referrer")?,
                })
            })
            .await
    }
}
