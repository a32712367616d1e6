//! The click writer's batches on SQLite (see the contract's `visits`): each link's clicks, the
//! raw log and the rollups in one transaction; and the upgrade that rolled the old visits table
//! up the same way.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use rusqlite::types::Value;
use rusqlite::{Connection, params};

use crate::error::db_error;
use crate::traffic::{self, DayTraffic, Intern, Interner, LinkHome, Rollup};
use crate::tx::SqliteTx;
use crate::visit_log;
use linkdeck_domain::{DIMENSIONS, Dimension, Id, Result};
use linkdeck_store::visits::{FlushedLink, FoldedDay, VisitBatch, VisitRow};

/// `folded` with each value turned into its code, stored first when new.
fn interned(folded: &FoldedDay, conn: &Connection, interner: &mut Interner) -> Result<DayTraffic> {
    folded.coded(|dim, value| interner.code(conn, Dimension::ALL[dim], value))
}

/// Writes a batch in one transaction: each link's clicks go up by its visits (less those the
/// database already counted, see [`VisitBatch::add_counted`]), the raw rows are logged, the rollups take in every visit, and rotation positions are saved. Visits of links
/// deleted meanwhile are dropped. Returns each touched link's new click count.
pub fn record_visits(
    conn: &Connection,
    batch: &VisitBatch,
    rotations: &[(Id, u32)],
    interner: &mut Interner,
) -> Result<Vec<FlushedLink>> {
    let per_link = batch.clicks_to_add();
    // Clicks first: RETURNING also tells which links still exist, and where they belong.
    let mut flushed = Vec::with_capacity(per_link.len());
    let mut homes: HashMap<Id, LinkHome> = HashMap::with_capacity(per_link.len());
    let mut found = |row: &rusqlite::Row<'_>| -> rusqlite::Result<()> {
        let id = row.get(0)?;
        let clicks: i64 = row.get(1)?;
        flushed.push(FlushedLink {
            link_id: id,
            clicks: clicks.max(0) as u64,
        });
        let home = LinkHome {
            owner: row.get(2)?,
            space: row.get(3)?,
            domain: row.get(4)?,
        };
        homes.insert(id, home);
        Ok(())
    };
    // The links grouped by the clicks they gain, one statement a group with its ids as one
    // array parameter: a batch costs a statement's start, halt and reset per group rather than
    // per link, and over many links nearly every link gains one click, so there are few groups.
    let mut gaining: BTreeMap<u64, Vec<Id>> = BTreeMap::new();
    for (&id, &add) in per_link.iter().filter(|&(_, &add)| add > 0) {
        gaining.entry(add).or_default().push(id);
    }
    if !gaining.is_empty() {
        let mut bump = conn
            .prepare_cached(
                "UPDATE links SET clicks = clicks + ?2 WHERE id IN rarray(?1) \
                 RETURNING id, clicks, owner_id, space_id, domain_id",
            )
            .map_err(db_error)?;
        for (add, mut ids) in gaining {
            // In id order, so the updates descend the table's tree in one direction.
            ids.sort_unstable();
            let ids: Vec<Value> = ids.into_iter().map(Value::Integer).collect();
            let add = i64::try_from(add).unwrap_or(i64::MAX);
            let mut rows = bump.query(params![Rc::new(ids), add]).map_err(db_error)?;
            while let Some(row) = rows.next().map_err(db_error)? {
                found(row).map_err(db_error)?;
            }
        }
    }
    // A link whose clicks were all reserved already is only read: its row is not written
    // again for nothing.
    let mut read = conn
        .prepare_cached("SELECT id, clicks, owner_id, space_id, domain_id FROM links WHERE id = ?1")
        .map_err(db_error)?;
    for (&id, _) in per_link.iter().filter(|&(_, &add)| add == 0) {
        let mut rows = read.query([id]).map_err(db_error)?;
        if let Some(row) = rows.next().map_err(db_error)? {
            found(row).map_err(db_error)?;
        }
    }
    flushed.sort_unstable_by_key(|f| f.link_id);
    log_and_roll_up(conn, batch, &homes, interner)?;
    crate::orphans::write(conn, batch.orphans())?;
    linkdeck_store::webhooks::queue_clicks(
        &SqliteTx { conn },
        batch.raw(),
        |link| homes.get(&link).map(|h| h.owner),
        jiff::Timestamp::now(),
    )?;
    let mut previewed = conn
        .prepare_cached("UPDATE links SET previews = previews + ?2 WHERE id = ?1")
        .map_err(db_error)?;
    for (link_id, n) in batch.previews() {
        previewed.execute(params![link_id, n]).map_err(db_error)?;
    }
    let mut rotate = conn
        .prepare_cached("UPDATE links SET last_rotation = ?2 WHERE id = ?1")
        .map_err(db_error)?;
    for (link_id, next) in rotations {
        rotate.execute(params![link_id, next]).map_err(db_error)?;
    }
    Ok(flushed)
}

/// Logs the raw rows of a batch and adds its visits to the rollups, for the links in `homes`.
fn log_and_roll_up(
    conn: &Connection,
    batch: &VisitBatch,
    homes: &HashMap<Id, LinkHome>,
    interner: &mut Interner,
) -> Result<()> {
    let kept: Vec<&VisitRow> = batch
        .raw()
        .iter()
        .filter(|v| homes.contains_key(&v.link_id))
        .collect();
    visit_log::append(conn, kept.iter().copied())?;
    // Link by link and day, so each stored day is read and written once.
    let mut order = kept;
    order.sort_by_key(|v| (v.link_id, traffic::day_of(v.at)));
    let mut rollup = Rollup::default();
    for group in order
        .chunk_by(|a, b| a.link_id == b.link_id && traffic::day_of(a.at) == traffic::day_of(b.at))
    {
        let (link, day) = (group[0].link_id, traffic::day_of(group[0].at));
        rollup.open(conn, homes[&link], link, day)?;
        for v in group {
            let mut codes = [traffic::day::NONE; DIMENSIONS];
            for (dim, value) in v.values().into_iter().enumerate() {
                codes[dim] = interner.code(conn, Dimension::ALL[dim], value)?;
            }
            rollup.add(traffic::hour_of(v.at), codes, 1);
        }
        if let Some(folded) = batch.folded().get(&(link, day)) {
            rollup.add_day(&interned(folded, conn, interner)?);
        }
        rollup.close(conn)?;
    }
    // Days that only folded visits had.
    for (&(link, day), folded) in batch.folded() {
        let Some(home) = homes.get(&link) else {
            continue;
        };
        let seen = order
            .binary_search_by_key(&(link, day), |v| (v.link_id, traffic::day_of(v.at)))
            .is_ok();
        if !seen {
            rollup.open(conn, *home, link, day)?;
            rollup.add_day(&interned(folded, conn, interner)?);
            rollup.close(conn)?;
        }
    }
    rollup.finish(conn)
}

/// Visits read per step of an upgrade.
const UPGRADE_CHUNK: i64 = 100_000;

/// The upgrade to rollups: every visit of the old `visits` table (whose values were stored as
/// received, so they are bounded now) goes to the raw log and the rollups; its clicks were
/// already counted. Runs inside the migration's transaction.
pub fn roll_up_old_visits(conn: &Connection) -> Result<()> {
    let mut interner = Interner::default();
    let mut homes: HashMap<Id, LinkHome> = HashMap::new();
    let mut after = 0i64;
    loop {
        let mut batch = VisitBatch::default();
        let mut last = None;
        {
            let mut stmt = conn
                .prepare(
                    "SELECT id, link_id, at, country, platform, browser, referrer, language
                     FROM visits WHERE id > ?1 ORDER BY id LIMIT ?2",
                )
                .map_err(db_error)?;
            let mut rows = stmt
                .query(params![after, UPGRADE_CHUNK])
                .map_err(db_error)?;
            while let Some(r) = rows.next().map_err(db_error)? {
                let text = |i: usize, dim: Dimension| -> rusqlite::Result<Option<String>> {
                    Ok(r.get::<_, Option<String>>(i)?.and_then(|v| dim.bound(&v)))
                };
                last = Some(r.get::<_, i64>(0).map_err(db_error)?);
                batch.add(VisitRow {
                    link_id: r.get(1).map_err(db_error)?,
                    at: r.get(2).map_err(db_error)?,
                    country: text(3, Dimension::Country).map_err(db_error)?,
                    platform: text(4, Dimension::Platform).map_err(db_error)?,
                    browser: text(5, Dimension::Browser).map_err(db_error)?,
                    referrer: text(6, Dimension::Referrer).map_err(db_error)?,
                    language: text(7, Dimension::Language).map_err(db_error)?,
                    address: None,
                    rule: None,
                });
            }
        }
        let Some(last) = last else { return Ok(()) };
        after = last;
        for link in batch.per_link().into_keys() {
            if let std::collections::hash_map::Entry::Vacant(slot) = homes.entry(link)
                && let Some(home) = traffic::link_home(conn, link)?
            {
                slot.insert(home);
            }
        }
        log_and_roll_up(conn, &batch, &homes, &mut interner)?;
    }
}
