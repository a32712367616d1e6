//! SQL for traffic rollups: one row per link per day (UTC), and one per day for each owner, space
//! and domain, each holding a [`DayTraffic`] blob. The click writer adds to them in the same
//! transaction that counts the clicks; statistics read them back.
//!
//! Link rows are keyed `(owner, day, link)`: each day's new rows land side by side (the writer
//! touches few pages), and an owner's links of a day are one range (the top links of a short
//! period). A link's days are found by one indexed lookup per day.
//!
//! The counts of a link are also in its owner's, space's and domain's rows, so this module keeps
//! them in step when a link goes to the trash ([`withdraw`]), comes back ([`reinstate`]), is
//! purged ([`forget`]) or changes space ([`move_link`]).

mod read;
pub mod values;

use std::collections::HashMap;
use std::sync::LazyLock;

use rusqlite::{Connection, OptionalExtension, ToSql, params};

pub use linkdeck_store::traffic::{
    DaySink, DayTraffic, LinkHome, Scope, Shift, StoredDay, day, day_of, history_days, hour_of,
};

use linkdeck_store::traffic::decode_or_empty;
pub use values::{Intern, Interner};

use crate::error::db_error;
use crate::sql::Statements;
use linkdeck_domain::{DIMENSIONS, Id, Result, TrafficHour};

/// The home of link `id` as stored.
pub fn link_home(conn: &Connection, id: Id) -> Result<Option<LinkHome>> {
    conn.one(
        "SELECT owner_id, space_id, domain_id FROM links WHERE id = ?1",
        [id],
        |r| {
            Ok(LinkHome {
                owner: r.get(0)?,
                space: r.get(1)?,
                domain: r.get(2)?,
            })
        },
    )
}

/// Where one day of one row is stored: its table and key.
#[derive(Debug, Clone, Copy)]
enum Row {
    Link { owner: Id, day: i64, link: Id },
    Scope { scope: Scope, id: Id, day: i64 },
}

/// The statements of one kind of [`Row`], written once from its table and key columns: the
/// click writer runs them for every link it counts.
struct RowSql {
    get: String,
    put: String,
    delete: String,
}

impl RowSql {
    fn new(table: &str, [a, b, c]: [&str; 3]) -> RowSql {
        let key = format!("{a} = ?1 AND {b} = ?2 AND {c} = ?3");
        RowSql {
            get: format!("SELECT data FROM {table} WHERE {key}"),
            put: format!(
                "INSERT INTO {table} ({a}, {b}, {c}, clicks, data) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT ({a}, {b}, {c}) \
                 DO UPDATE SET clicks = excluded.clicks, data = excluded.data"
            ),
            delete: format!("DELETE FROM {table} WHERE {key}"),
        }
    }
}

static LINK_ROWS: LazyLock<RowSql> =
    LazyLock::new(|| RowSql::new("link_traffic", ["owner_id", "day", "link_id"]));
static SCOPE_ROWS: LazyLock<RowSql> =
    LazyLock::new(|| RowSql::new("scope_traffic", ["scope", "scope_id", "day"]));

impl Row {
    /// The statements of its kind, and the key's values in their key order.
    fn key(self) -> (&'static RowSql, [i64; 3]) {
        match self {
            Row::Link { owner, day, link } => (&LINK_ROWS, [owner, day, link]),
            Row::Scope { scope, id, day } => (&SCOPE_ROWS, [scope as i64, id, day]),
        }
    }

    fn get(self, conn: &Connection) -> Result<Option<Vec<u8>>> {
        let (sql, key) = self.key();
        conn.one(&sql.get, params![key[0], key[1], key[2]], |r| r.get(0))
    }

    /// Stores `t` (an empty day deletes the row).
    fn put(self, conn: &Connection, t: &DayTraffic) -> Result<()> {
        if t.is_empty() {
            return self.put_encoded(conn, 0, &[]);
        }
        self.put_encoded(conn, t.clicks(), &t.encode())
    }

    /// Stores a day already encoded (no clicks deletes the row).
    fn put_encoded(self, conn: &Connection, clicks: u64, blob: &[u8]) -> Result<()> {
        let (sql, key) = self.key();
        if clicks == 0 {
            conn.run(&sql.delete, params![key[0], key[1], key[2]])?;
        } else {
            conn.run(
                &sql.put,
                params![key[0], key[1], key[2], clicks as i64, blob],
            )?;
        }
        Ok(())
    }

    /// Adds `delta` to the stored day, or (`subtract`) takes it away.
    fn change(self, conn: &Connection, delta: &DayTraffic, subtract: bool) -> Result<()> {
        let what = match self {
            Row::Link { .. } => "link",
            Row::Scope { .. } => "scope",
        };
        let mut row = decode_or_empty(self.get(conn)?.as_deref().unwrap_or_default(), what);
        Shift::apply(&mut row, delta, subtract);
        self.put(conn, &row)
    }
}

/// One link's traffic of one day, to be added.
pub struct LinkDay {
    pub link: Id,
    pub home: LinkHome,
    pub day: i64,
    pub traffic: DayTraffic,
}

/// Adds each day to its link's row and to its owner's, space's and domain's rows.
pub fn add(conn: &Connection, days: &[LinkDay]) -> Result<()> {
    let mut rollup = Rollup::default();
    for d in days {
        rollup.open(conn, d.home, d.link, d.day)?;
        rollup.add_day(&d.traffic);
        rollup.close(conn)?;
    }
    rollup.finish(conn)
}

/// Adds visits to the rollups a link day at a time, reusing its buffers: [`Rollup::open`] a
/// link's day, [`Rollup::add`] its visits, [`Rollup::close`] it; then [`Rollup::finish`] writes
/// the owner, space and domain rows, each once, with the sum of what was added.
#[derive(Default)]
pub struct Rollup {
    row: DayTraffic,
    open: Option<(Row, LinkHome, i64)>,
    blob: Vec<u8>,
    scratch: Vec<u8>,
    scopes: HashMap<(Scope, Id, i64), DayTraffic>,
}

impl Rollup {
    /// Reads the stored day `day` of link `link` (at `home`) to add to.
    pub fn open(&mut self, conn: &Connection, home: LinkHome, link: Id, day: i64) -> Result<()> {
        let row = Row::Link {
            owner: home.owner,
            day,
            link,
        };
        match row.get(conn)? {
            Some(blob) => {
                if let Err(e) = self.row.decode_into(&blob) {
                    tracing::warn!(error = %e, "damaged traffic row replaced");
                    self.row.clear();
                }
            }
            None => self.row.clear(),
        }
        self.open = Some((row, home, day));
        Ok(())
    }

    /// Counts `n` visits in `hour` of the open day, with these value codes.
    pub fn add(&mut self, hour: usize, codes: [u64; DIMENSIONS], n: u32) {
        let Some((_, home, day)) = self.open else {
            return;
        };
        self.row.add(hour, codes, n);
        for (scope, id) in home.scopes() {
            self.scopes
                .entry((scope, id, day))
                .or_default()
                .add(hour, codes, n);
        }
    }

    /// Adds a whole day's worth to the open day.
    pub fn add_day(&mut self, t: &DayTraffic) {
        let Some((_, home, day)) = self.open else {
            return;
        };
        self.row.merge(t);
        for (scope, id) in home.scopes() {
            self.scopes.entry((scope, id, day)).or_default().merge(t);
        }
    }

    /// Writes the open day.
    pub fn close(&mut self, conn: &Connection) -> Result<()> {
        let Some((row, _, _)) = self.open.take() else {
            return Ok(());
        };
        self.row.encode_into(&mut self.blob, &mut self.scratch);
        row.put_encoded(conn, self.row.clicks(), &self.blob)
    }

    /// Adds what was added to the owner, space and domain rows.
    pub fn finish(mut self, conn: &Connection) -> Result<()> {
        self.close(conn)?;
        for (&(scope, id, day), delta) in &self.scopes {
            Row::Scope { scope, id, day }.change(conn, delta, false)?;
        }
        Ok(())
    }
}

/// The first and last day with traffic of an owner, space or domain.
pub fn scope_range(conn: &Connection, scope: Scope, id: Id) -> Result<Option<(i64, i64)>> {
    let rows = "scope_traffic WHERE scope = ?1 AND scope_id = ?2";
    day_range(conn, rows, params![scope as i64, id])
}

/// The first and last day of any of `owner`'s links' own rows. Unlike the owner's sums, these
/// rows stay while a link is in the trash, so the days of a withdrawn link are within them.
fn link_range(conn: &Connection, owner: Id) -> Result<Option<(i64, i64)>> {
    day_range(conn, "link_traffic WHERE owner_id = ?1", params![owner])
}

/// The first and last day of the rows `rows` (a table and its condition) names.
fn day_range(conn: &Connection, rows: &str, key: &[&dyn ToSql]) -> Result<Option<(i64, i64)>> {
    let edge = |order: &str| -> Result<Option<i64>> {
        let sql = format!("SELECT day FROM {rows} ORDER BY day {order} LIMIT 1");
        conn.one(&sql, key, |r| r.get(0))
    };
    Ok(edge("ASC")?.zip(edge("DESC")?))
}

/// Calls `f` with each stored day of link `link` from `first` to `last` (UTC day numbers),
/// oldest first. Days outside the owner's links' traffic are not looked at.
pub fn link_days(
    conn: &Connection,
    owner: Id,
    link: Id,
    first: i64,
    last: i64,
    mut f: impl FnMut(StoredDay<'_>) -> Result<()>,
) -> Result<()> {
    let Some((owner_first, owner_last)) = link_range(conn, owner)? else {
        return Ok(());
    };
    let mut stmt = conn
        .prepare_cached(
            "SELECT clicks, data FROM link_traffic \
             WHERE owner_id = ?1 AND day = ?2 AND link_id = ?3",
        )
        .map_err(db_error)?;
    for day in first.max(owner_first)..=last.min(owner_last) {
        let row: Option<(i64, Vec<u8>)> = stmt
            .query_row(params![owner, day, link], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(db_error)?;
        if let Some((clicks, data)) = row {
            f(StoredDay {
                day,
                clicks: clicks.max(0) as u64,
                data: &data,
            })?;
        }
    }
    Ok(())
}

/// Calls `f` with each stored day of a scope from `first` to `last`, oldest first.
pub fn scope_days(
    conn: &Connection,
    scope: Scope,
    id: Id,
    first: i64,
    last: i64,
    mut f: impl FnMut(StoredDay<'_>) -> Result<()>,
) -> Result<()> {
    conn.each(
        "SELECT day, clicks, data FROM scope_traffic
         WHERE scope = ?1 AND scope_id = ?2 AND day BETWEEN ?3 AND ?4 ORDER BY day",
        params![scope as i64, id, first, last],
        |r| {
            let data = r.get_ref(2).map_err(db_error)?.as_blob().unwrap_or(&[]);
            f(StoredDay {
                day: r.get(0).map_err(db_error)?,
                clicks: r.get::<_, i64>(1).map_err(db_error)?.max(0) as u64,
                data,
            })
        },
    )
}

/// Every stored day of a link, for moving or deleting its traffic.
fn all_link_days(conn: &Connection, owner: Id, link: Id) -> Result<Vec<(i64, DayTraffic)>> {
    let mut out = Vec::new();
    link_days(conn, owner, link, i64::MIN, i64::MAX, |d| {
        out.push((d.day, decode_or_empty(d.data, "link")));
        Ok(())
    })?;
    Ok(out)
}

/// Takes a link's share out of its owner's, space's and domain's rows, keeping its own: a
/// trashed link stops counting in every figure but its own, and can come back ([`reinstate`]).
pub fn withdraw(conn: &Connection, link: Id, home: LinkHome) -> Result<()> {
    shift(conn, link, home.owner, Shift::Withdraw(home))
}

/// Puts a withdrawn link's share back into the rows of its (new) home.
pub fn reinstate(conn: &Connection, link: Id, home: LinkHome) -> Result<()> {
    shift(conn, link, home.owner, Shift::Reinstate(home))
}

/// A link moved from space `from` to space `to`: its traffic moves with it.
pub fn move_link(
    conn: &Connection,
    link: Id,
    owner: Id,
    from: Option<Id>,
    to: Option<Id>,
) -> Result<()> {
    shift(conn, link, owner, Shift::Move { from, to })
}

/// Applies each stored day of link `link` to the rows `how` names (see [`Shift`]).
fn shift(conn: &Connection, link: Id, owner: Id, how: Shift) -> Result<()> {
    let rows = how.rows();
    if rows.is_empty() {
        return Ok(());
    }
    for (day, traffic) in all_link_days(conn, owner, link)? {
        for &(scope, id, subtract) in &rows {
            Row::Scope { scope, id, day }.change(conn, &traffic, subtract)?;
        }
    }
    Ok(())
}

/// Deletes a withdrawn link's own rows and marks its raw visits for the pruner.
pub fn forget(conn: &Connection, link: Id, owner: Id) -> Result<()> {
    for (day, _) in all_link_days(conn, owner, link)? {
        Row::Link { owner, day, link }.put(conn, &DayTraffic::default())?;
    }
    super::visit_log::forget_link(conn, link)
}

/// A space or domain is gone: so are its rows.
pub fn delete_scope(conn: &Connection, scope: Scope, id: Id) -> Result<()> {
    conn.run(
        "DELETE FROM scope_traffic WHERE scope = ?1 AND scope_id = ?2",
        params![scope as i64, id],
    )?;
    Ok(())
}

/// Adds the traffic history of link `link` (just created, at `home`) to the rollups and its
/// click count; returns the clicks added. Used by imports.
pub fn add_history(
    conn: &Connection,
    link: Id,
    home: LinkHome,
    hours: &[TrafficHour],
    interner: &mut Interner,
) -> Result<u64> {
    let (days, clicks) = history_days(hours, |dim, value| interner.code(conn, dim, Some(value)))?;
    let days: Vec<LinkDay> = days
        .into_iter()
        .map(|(day, traffic)| LinkDay {
            link,
            home,
            day,
            traffic,
        })
        .collect();
    add(conn, &days)?;
    conn.run(
        "UPDATE links SET clicks = clicks + ?2 WHERE id = ?1",
        params![link, clicks as i64],
    )?;
    Ok(clicks)
}
