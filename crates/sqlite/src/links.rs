//! SQL for links: rows in and out, list queries with their totals, alias lookups.

use linkdeck_store::sql::WRITE_COLUMNS;
use linkdeck_store::{
    Counted, LinkRow, Links, options_json, rotation_json, rows, rules_json, tags_json,
};
use rusqlite::types::Value;
use rusqlite::{Connection, params, params_from_iter};

use crate::error::db_error;
use crate::link_rows::{after, get};
use crate::search;
use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;
use crate::{domains, spaces, traffic};
use linkdeck_domain::{Id, Link, Result};

/// The searchable texts of a row: title, alias, url.
fn texts(row: &LinkRow) -> search::Texts<'_> {
    [row.title.as_deref(), Some(&row.alias), Some(&row.url)]
}

fn write_values(row: &LinkRow) -> [Value; 20] {
    fn text(s: &Option<String>) -> Value {
        s.clone().map_or(Value::Null, Value::Text)
    }
    fn json(s: Option<String>) -> Value {
        s.map_or(Value::Null, Value::Text)
    }
    [
        Value::Integer(row.owner_id),
        row.domain_id.map_or(Value::Null, Value::Integer),
        row.space_id.map_or(Value::Null, Value::Integer),
        Value::Text(row.alias.clone()),
        Value::Text(row.url.clone()),
        text(&row.title),
        text(&row.password_hash),
        Value::Integer(row.disabled.into()),
        Value::Integer(row.public.into()),
        text(&row.expiration_url),
        Value::Integer(row.expiration_clicks.into()),
        row.ends_at
            .map_or(Value::Null, |t| Value::Integer(t.as_second())),
        Value::Integer(u8::from(row.target_type).into()),
        json(rules_json(&row.geo)),
        json(rules_json(&row.platform)),
        json(rotation_json(&row.rotation)),
        Value::Integer(row.created_at.as_second()),
        Value::Integer(row.updated_at.as_second()),
        json(tags_json(&row.tags)),
        json(options_json(&row.options)),
    ]
}

/// The id the next new link takes: above every id given out so far — a stored link's, and any
/// deleted one's (trashed or gone; see migration 7's `link_ids`) — so no id ever names two
/// links, and a link restored from the trash always finds its own id free.
pub fn next_id(conn: &Connection) -> Result<Id> {
    conn.row(
        "SELECT max(ifnull((SELECT max(id) FROM links), 0), \
         ifnull((SELECT deleted_high FROM link_ids), 0)) + 1",
        [],
        |r| r.get(0),
    )
}

pub fn insert(tx: &Connection, row: &LinkRow) -> Result<Id> {
    let id = next_id(tx)?;
    let mut values = write_values(row).to_vec();
    values.push(Value::Integer(id));
    tx.run(
        &format!(
            "INSERT INTO links ({WRITE_COLUMNS}, id) VALUES \
             (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
              ?20, ?21)"
        ),
        params_from_iter(values),
    )?;
    move_counters(tx, row.owner_id, row.space_id, 1)?;
    Ok(id)
}

/// Moves the link counters of `owner` and of `space` (if any) by `by`. The store keeps them on
/// every write of a link, in bulk for imports (see [`stage_insert`]), so totals and space sizes
/// never need a count.
fn move_counters(tx: &Connection, owner: Id, space: Option<Id>, by: i64) -> Result<()> {
    tx.run(
        "UPDATE owners SET link_count = link_count + ?2 WHERE id = ?1",
        params![owner, by],
    )?;
    if let Some(space) = space {
        tx.run(
            "UPDATE spaces SET link_count = link_count + ?2 WHERE id = ?1",
            params![space, by],
        )?;
    }
    Ok(())
}

/// Bulk inserts go through a staging table and then into `links` with one statement. Row by
/// row, each statement would make the full-text index flush its pending data (a tiny segment per
/// link, several times slower); as one statement the triggers still keep the index right. Call
/// [`stage_start`], [`stage`] for each row, then [`stage_insert`]. Staged links may carry a click
/// total (an import keeps the count a link had before).
pub fn stage_start(tx: &Connection) -> Result<Staged> {
    let first = empty_stage(tx)?;
    Ok(Staged {
        first,
        grams: search::Batch::new(tx, first)?,
        count: 0,
    })
}

/// Empties the staging table; returns the id the first staged link will take (the staged links
/// take the ids from the next one on, in staging order).
fn empty_stage(tx: &Connection) -> Result<Id> {
    tx.execute_batch(&format!(
        "CREATE TEMP TABLE IF NOT EXISTS link_import AS SELECT {STAGE_COLUMNS} FROM links WHERE 0;
         DELETE FROM temp.link_import;"
    ))
    .map_err(db_error)?;
    next_id(tx)
}

/// The columns of a staged link: the service's, and the click total.
const STAGE_COLUMNS: &str = "owner_id, domain_id, space_id, alias, url, title, password_hash, \
     disabled, public, expiration_url, expiration_clicks, ends_at, target_type, geo_target, \
     platform_target, rotation_target, created_at, updated_at, tags, options, clicks, previews";

/// The links staged so far, for the short-term index.
pub struct Staged {
    first: Id,
    grams: search::Batch,
    count: usize,
}

impl Staged {
    /// The id the first staged link takes; the others follow in staging order.
    pub fn first_id(&self) -> Id {
        self.first
    }

    /// How many links wait in the staging table.
    pub fn len(&self) -> usize {
        self.count
    }
}

pub fn stage(tx: &Connection, staged: &mut Staged, row: &LinkRow, counted: Counted) -> Result<()> {
    let [
        a,
        b,
        c,
        d,
        e,
        f,
        g,
        h,
        i,
        j,
        k,
        l,
        m,
        n,
        o,
        p,
        q,
        r,
        tags,
        options,
    ] = write_values(row);
    let count = |n: u64| Value::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    let (clicks, previews) = (count(counted.clicks), count(counted.previews));
    tx.run(
        &format!(
            "INSERT INTO temp.link_import ({STAGE_COLUMNS}) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, \
          ?21, ?22)"
        ),
        params![
            a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, tags, options, clicks, previews
        ],
    )?;
    staged.count += 1;
    staged.grams.add(row.owner_id, texts(row))
}

/// [`stage_start`] for the next chunk of a bulk write, carrying on with the short-term index's
/// batch of the chunks before it ([`stage_insert_more`]).
pub fn stage_start_after(tx: &Connection, grams: search::Batch) -> Result<Staged> {
    let first = empty_stage(tx)?;
    if first != grams.next_id() {
        return Err(linkdeck_domain::Error::Unavailable(format!(
            "the next links would take ids from {first}, not {} as the search index expected",
            grams.next_id()
        )));
    }
    Ok(Staged {
        first,
        grams,
        count: 0,
    })
}

/// Moves the staged rows into `links`, in staging order, and returns how many: a bulk write of
/// one chunk.
#[cfg(test)]
pub fn stage_insert(tx: &Connection, staged: Staged) -> Result<usize> {
    let (n, last, grams) = move_staged(tx, staged)?;
    grams.finish(tx, last)?;
    Ok(n)
}

/// [`stage_insert`] when more chunks follow ([`stage_start_after`]): the short-term index
/// writes the blocks these links filled and keeps gathering the one they are filling, and its
/// batch is returned to carry on with; [`search::Batch::end`] ends it.
pub fn stage_insert_more(tx: &Connection, staged: Staged) -> Result<(usize, search::Batch)> {
    let (n, last, mut grams) = move_staged(tx, staged)?;
    grams.checkpoint(tx, last)?;
    Ok((n, grams))
}

/// Moves the staged rows into `links`: how many, the last one's id, and the index's batch.
fn move_staged(tx: &Connection, staged: Staged) -> Result<(usize, Id, search::Batch)> {
    // Staged rows are numbered from 1 (the table was emptied first), so row n takes first + n - 1.
    let n = tx
        .execute(
            &format!(
                "INSERT INTO links (id, {STAGE_COLUMNS}) \
                 SELECT ?1 + rowid - (SELECT min(rowid) FROM temp.link_import), {STAGE_COLUMNS} \
                 FROM temp.link_import ORDER BY rowid"
            ),
            [staged.first],
        )
        .map_err(db_error)?;
    let last = staged.first + n as Id - 1;
    // The counters once per owner and space, not once per link.
    tx.execute_batch(
        "UPDATE owners SET link_count = link_count + staged.n FROM \
             (SELECT owner_id, count(*) AS n FROM temp.link_import GROUP BY owner_id) AS staged \
             WHERE owners.id = staged.owner_id;
         UPDATE spaces SET link_count = link_count + staged.n FROM \
             (SELECT space_id, count(*) AS n FROM temp.link_import WHERE space_id IS NOT NULL \
              GROUP BY space_id) AS staged \
             WHERE spaces.id = staged.space_id;
         DELETE FROM temp.link_import;",
    )
    .map_err(db_error)?;
    Ok((n, last, staged.grams))
}

/// What the store keeps up to date when a link changes: its owner, space and searchable texts
/// (title, alias, url).
struct Stored {
    owner: Id,
    space: Option<Id>,
    texts: [Option<String>; 3],
}

fn stored(tx: &Connection, id: Id) -> Result<Option<Stored>> {
    tx.one(
        "SELECT owner_id, space_id, title, alias, url FROM links WHERE id = ?1",
        [id],
        |r| {
            Ok(Stored {
                owner: r.get(0)?,
                space: r.get(1)?,
                texts: [r.get(2)?, r.get(3)?, r.get(4)?],
            })
        },
    )
}

/// Writes every service-owned column of link `id` (owner and creation time stay).
pub fn update(tx: &Connection, id: Id, row: &LinkRow) -> Result<()> {
    let [
        _,
        domain,
        space,
        alias,
        url,
        title,
        hash,
        disabled,
        public,
        exp_url,
        exp_clicks,
        ends,
        tt,
        geo,
        platform,
        rotation,
        _,
        updated,
        tags,
        options,
    ] = write_values(row);
    let old = stored(tx, id)?;
    tx.run(
        "UPDATE links SET domain_id = ?2, space_id = ?3, alias = ?4, url = ?5, title = ?6,
         password_hash = ?7, disabled = ?8, public = ?9, expiration_url = ?10,
         expiration_clicks = ?11, ends_at = ?12, target_type = ?13, geo_target = ?14,
         platform_target = ?15, rotation_target = ?16, updated_at = ?17, tags = ?18,
         options = ?19 WHERE id = ?1",
        params![
            id, domain, space, alias, url, title, hash, disabled, public, exp_url, exp_clicks,
            ends, tt, geo, platform, rotation, updated, tags, options
        ],
    )?;
    if let Some(old) = old.filter(|old| old.space != row.space_id) {
        move_counters(tx, old.owner, old.space, -1)?;
        move_counters(tx, old.owner, row.space_id, 1)?;
        traffic::move_link(tx, id, old.owner, old.space, row.space_id)?;
    }
    Ok(())
}

/// Sets the title of link `id` if its url is still `url` (a fetched title that arrives after
/// the link was edited is dropped). Returns whether it was set.
pub fn set_title(tx: &Connection, id: Id, url: &str, title: &str) -> Result<bool> {
    let Some(Stored { texts: old, .. }) = stored(tx, id)? else {
        return Ok(false);
    };
    if old[2].as_deref() != Some(url) {
        return Ok(false);
    }
    tx.run(
        "UPDATE links SET title = ?1 WHERE id = ?2",
        params![title, id],
    )?;
    Ok(true)
}

impl Links for SqliteTx<'_> {
    fn link(&self, owner: Id, id: Id) -> Result<Option<Link>> {
        get(self.conn, owner, id)
    }

    fn links_after(&self, owner: Id, after: Id, limit: u32) -> Result<Vec<Link>> {
        self::after(self.conn, owner, after, limit)
    }

    fn link_row(&self, owner: Id, id: Id) -> Result<Option<LinkRow>> {
        self.conn.one(
            &format!("SELECT {WRITE_COLUMNS} FROM links WHERE id = ?1 AND owner_id = ?2"),
            params![id, owner],
            |r| rows::link_row(&Cols(r)),
        )
    }

    fn space_is_mine(&self, owner: Id, id: Id) -> Result<bool> {
        Ok(spaces::get(self.conn, owner, id)?.is_some())
    }

    fn domain_is_mine(&self, owner: Id, id: Id) -> Result<bool> {
        Ok(domains::get(self.conn, owner, id)?.is_some())
    }

    fn alias_taken(&self, domain: Option<Id>, alias: &str, except: Option<Id>) -> Result<bool> {
        // The expression matches the unique index `links_alias`.
        self.conn.exists(
            "SELECT 1 FROM links WHERE ifnull(domain_id, 0) = ?1 AND alias = ?2 AND id IS NOT ?3",
            params![domain.unwrap_or(0), alias, except],
        )
    }

    fn own_link_url(&self, owner: Id, domain: Option<Id>, alias: &str) -> Result<Option<String>> {
        self.conn.one(
            "SELECT url FROM links \
             WHERE ifnull(domain_id, 0) = ?1 AND alias = ?2 AND owner_id = ?3",
            params![domain.unwrap_or(0), alias, owner],
            |r| r.get(0),
        )
    }

    fn insert_link(&self, row: &LinkRow) -> Result<Option<Id>> {
        // One writer at a time: the alias was found free in this transaction.
        insert(self.conn, row).map(Some)
    }

    fn update_link(&self, id: Id, row: &LinkRow) -> Result<()> {
        update(self.conn, id, row)
    }

    fn set_title(&self, id: Id, url: &str, title: &str) -> Result<bool> {
        set_title(self.conn, id, url, title)
    }
}
