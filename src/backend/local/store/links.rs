//! SQL for links: rows in and out, list queries with their totals, alias lookups.

use std::fmt;

use jiff::Timestamp;
use roaring::RoaringTreemap;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params, params_from_iter};
use serde::{Deserialize, Serialize};

use super::{db_error, domains, grams, sets, spaces, time, traffic};
use crate::domain::{Id, Link, Result, SearchBy, Sort, StatusFilter, TargetRule, TargetType};

/// The stored columns of a link that the service writes (clicks and rotation are the server's).
/// Its own shape, not a [`Link`]: ids instead of joined records, the password's hash.
#[derive(Clone, PartialEq)]
pub struct LinkRow {
    pub owner_id: Id,
    pub domain_id: Option<Id>,
    pub space_id: Option<Id>,
    pub alias: String,
    pub url: String,
    pub title: Option<String>,
    pub password_hash: Option<String>,
    pub disabled: bool,
    pub public: bool,
    pub expiration_url: Option<String>,
    pub expiration_clicks: u32,
    pub ends_at: Option<Timestamp>,
    pub target_type: TargetType,
    pub geo: Vec<TargetRule>,
    pub platform: Vec<TargetRule>,
    pub rotation: Vec<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl fmt::Debug for LinkRow {
    // The password hash stays out of logs too.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkRow")
            .field("owner_id", &self.owner_id)
            .field("alias", &self.alias)
            .field("url", &self.url)
            .field("password", &self.password_hash.is_some())
            .finish_non_exhaustive()
    }
}

impl LinkRow {
    /// The searchable texts: title, alias, url.
    fn texts(&self) -> grams::Texts<'_> {
        [self.title.as_deref(), Some(&self.alias), Some(&self.url)]
    }
}

/// Rotation entries are stored in the wire shape, `{"value": …}`.
#[derive(Serialize, Deserialize)]
struct RotationEntry {
    value: String,
}

fn rules_json(rules: &[TargetRule]) -> Option<String> {
    (!rules.is_empty()).then(|| serde_json::to_string(rules).unwrap_or_default())
}

fn rotation_json(urls: &[String]) -> Option<String> {
    (!urls.is_empty()).then(|| {
        let entries: Vec<RotationEntry> = urls
            .iter()
            .map(|u| RotationEntry { value: u.clone() })
            .collect();
        serde_json::to_string(&entries).unwrap_or_default()
    })
}

fn parse_rules(json: Option<String>) -> Vec<TargetRule> {
    json.and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default()
}

fn parse_rotation(json: Option<String>) -> Vec<String> {
    json.and_then(|j| serde_json::from_str::<Vec<RotationEntry>>(&j).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.value)
        .collect()
}

const WRITE_COLUMNS: &str = "owner_id, domain_id, space_id, alias, url, title, password_hash, \
     disabled, public, expiration_url, expiration_clicks, ends_at, target_type, geo_target, \
     platform_target, rotation_target, created_at, updated_at";

fn write_values(row: &LinkRow) -> [Value; 18] {
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
    ]
}

/// The id the next new link takes: above every id given out so far — a stored link's, and any
/// deleted one's (trashed or gone; see migration 7's `link_ids`) — so no id ever names two
/// links, and a link restored from the trash always finds its own id free.
pub fn next_id(conn: &Connection) -> Result<Id> {
    conn.prepare_cached(
        "SELECT max(ifnull((SELECT max(id) FROM links), 0), \
                    ifnull((SELECT deleted_high FROM link_ids), 0)) + 1",
    )
    .map_err(db_error)?
    .query_row([], |r| r.get(0))
    .map_err(db_error)
}

pub fn insert(tx: &Transaction<'_>, row: &LinkRow) -> Result<Id> {
    let id = next_id(tx)?;
    let mut values = write_values(row).to_vec();
    values.push(Value::Integer(id));
    tx.prepare_cached(&format!(
        "INSERT INTO links ({WRITE_COLUMNS}, id) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    ))
    .map_err(db_error)?
    .execute(params_from_iter(values))
    .map_err(db_error)?;
    grams::added(tx, id)?;
    move_counters(tx, row.owner_id, row.space_id, 1)?;
    Ok(id)
}

/// Moves the link counters of `owner` and of `space` (if any) by `by`. The store keeps them on
/// every write of a link, in bulk for imports (see [`stage_insert`]), so totals and space sizes
/// never need a count.
fn move_counters(tx: &Transaction<'_>, owner: Id, space: Option<Id>, by: i64) -> Result<()> {
    tx.prepare_cached("UPDATE owners SET link_count = link_count + ?2 WHERE id = ?1")
        .map_err(db_error)?
        .execute(params![owner, by])
        .map_err(db_error)?;
    if let Some(space) = space {
        tx.prepare_cached("UPDATE spaces SET link_count = link_count + ?2 WHERE id = ?1")
            .map_err(db_error)?
            .execute(params![space, by])
            .map_err(db_error)?;
    }
    Ok(())
}

/// Bulk inserts go through a staging table and then into `links` with one statement. Row by
/// row, each statement would make the full-text index flush its pending data (a tiny segment per
/// link, several times slower); as one statement the triggers still keep the index right. Call
/// [`stage_start`], [`stage`] for each row, then [`stage_insert`]. Staged links may carry a click
/// total (an import keeps the count a link had before).
pub fn stage_start(tx: &Transaction<'_>) -> Result<Staged> {
    tx.execute_batch(&format!(
        "CREATE TEMP TABLE IF NOT EXISTS link_import AS SELECT {STAGE_COLUMNS} FROM links WHERE 0;
         DELETE FROM temp.link_import;"
    ))
    .map_err(db_error)?;
    // The staged links will take the ids from the next one on, in staging order.
    let first = next_id(tx)?;
    Ok(Staged {
        first,
        grams: grams::Batch::new(first),
        count: 0,
    })
}

/// The columns of a staged link: the service's, and the click total.
const STAGE_COLUMNS: &str = "owner_id, domain_id, space_id, alias, url, title, password_hash, \
     disabled, public, expiration_url, expiration_clicks, ends_at, target_type, geo_target, \
     platform_target, rotation_target, created_at, updated_at, clicks";

/// The links staged so far, for the short-term index.
pub struct Staged {
    first: Id,
    grams: grams::Batch,
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

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

pub fn stage(tx: &Transaction<'_>, staged: &mut Staged, row: &LinkRow, clicks: u64) -> Result<()> {
    let [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r] = write_values(row);
    let clicks = Value::Integer(i64::try_from(clicks).unwrap_or(i64::MAX));
    tx.prepare_cached(&format!(
        "INSERT INTO temp.link_import ({STAGE_COLUMNS}) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    ))
    .map_err(db_error)?
    .execute(params![
        a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, clicks
    ])
    .map_err(db_error)?;
    staged.count += 1;
    staged.grams.add(tx, row.owner_id, row.texts())
}

/// Moves the staged rows into `links`, in staging order, and returns how many.
pub fn stage_insert(tx: &Transaction<'_>, staged: Staged) -> Result<usize> {
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
    staged.grams.finish(tx, last)?;
    Ok(n)
}

/// What the store keeps up to date when a link changes: its owner, space and searchable texts
/// (title, alias, url).
struct Stored {
    owner: Id,
    space: Option<Id>,
    texts: [Option<String>; 3],
}

fn stored(tx: &Transaction<'_>, id: Id) -> Result<Option<Stored>> {
    tx.prepare_cached("SELECT owner_id, space_id, title, alias, url FROM links WHERE id = ?1")
        .map_err(db_error)?
        .query_row([id], |r| {
            Ok(Stored {
                owner: r.get(0)?,
                space: r.get(1)?,
                texts: [r.get(2)?, r.get(3)?, r.get(4)?],
            })
        })
        .optional()
        .map_err(db_error)
}

fn as_texts(texts: &[Option<String>; 3]) -> grams::Texts<'_> {
    texts.each_ref().map(Option::as_deref)
}

/// Writes every service-owned column of link `id` (owner and creation time stay).
pub fn update(tx: &Transaction<'_>, id: Id, row: &LinkRow) -> Result<()> {
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
    ] = write_values(row);
    let old = stored(tx, id)?;
    tx.prepare_cached(
        "UPDATE links SET domain_id = ?2, space_id = ?3, alias = ?4, url = ?5, title = ?6,
         password_hash = ?7, disabled = ?8, public = ?9, expiration_url = ?10,
         expiration_clicks = ?11, ends_at = ?12, target_type = ?13, geo_target = ?14,
         platform_target = ?15, rotation_target = ?16, updated_at = ?17 WHERE id = ?1",
    )
    .map_err(db_error)?
    .execute(params![
        id, domain, space, alias, url, title, hash, disabled, public, exp_url, exp_clicks, ends,
        tt, geo, platform, rotation, updated
    ])
    .map_err(db_error)?;
    if let Some(old) = old {
        grams::changed(tx, old.owner, id, as_texts(&old.texts), row.texts())?;
        if old.space != row.space_id {
            move_counters(tx, old.owner, old.space, -1)?;
            move_counters(tx, old.owner, row.space_id, 1)?;
            traffic::move_link(tx, id, old.owner, old.space, row.space_id)?;
        }
    }
    Ok(())
}

/// Sets the title of link `id` if its url is still `url` (a fetched title that arrives after
/// the link was edited is dropped). Returns whether it was set.
pub fn set_title(tx: &Transaction<'_>, id: Id, url: &str, title: &str) -> Result<bool> {
    let Some(Stored {
        owner, texts: old, ..
    }) = stored(tx, id)?
    else {
        return Ok(false);
    };
    if old[2].as_deref() != Some(url) {
        return Ok(false);
    }
    tx.prepare_cached("UPDATE links SET title = ?1 WHERE id = ?2")
        .map_err(db_error)?
        .execute(params![title, id])
        .map_err(db_error)?;
    let new = [Some(title), old[1].as_deref(), old[2].as_deref()];
    grams::changed(tx, owner, id, as_texts(&old), new)?;
    Ok(true)
}

/// The writable columns of the owner's link `id`, for applying a patch.
pub fn get_row(conn: &Connection, owner: Id, id: Id) -> Result<Option<LinkRow>> {
    conn.prepare_cached(&format!(
        "SELECT {WRITE_COLUMNS} FROM links WHERE id = ?1 AND owner_id = ?2"
    ))
    .map_err(db_error)?
    .query_row(params![id, owner], |r| {
        Ok(LinkRow {
            owner_id: r.get(0)?,
            domain_id: r.get(1)?,
            space_id: r.get(2)?,
            alias: r.get(3)?,
            url: r.get(4)?,
            title: r.get(5)?,
            password_hash: r.get(6)?,
            disabled: r.get(7)?,
            public: r.get(8)?,
            expiration_url: r.get(9)?,
            expiration_clicks: r.get(10)?,
            ends_at: r.get::<_, Option<i64>>(11)?.map(time),
            target_type: target_type(r.get(12)?),
            geo: parse_rules(r.get(13)?),
            platform: parse_rules(r.get(14)?),
            rotation: parse_rotation(r.get(15)?),
            created_at: time(r.get(16)?),
            updated_at: time(r.get(17)?),
        })
    })
    .optional()
    .map_err(db_error)
}

fn target_type(n: u8) -> TargetType {
    TargetType::try_from(n).unwrap_or_default()
}

pub fn delete(tx: &Transaction<'_>, owner: Id, id: Id) -> Result<bool> {
    type Deleted = (Option<Id>, Option<Id>, [Option<String>; 3]);
    let old: Option<Deleted> = tx
        .prepare_cached(
            "DELETE FROM links WHERE id = ?1 AND owner_id = ?2 \
             RETURNING space_id, domain_id, title, alias, url",
        )
        .map_err(db_error)?
        .query_row(params![id, owner], |r| {
            Ok((r.get(0)?, r.get(1)?, [r.get(2)?, r.get(3)?, r.get(4)?]))
        })
        .optional()
        .map_err(db_error)?;
    let Some((space, domain, old)) = old else {
        return Ok(false);
    };
    grams::removed(tx, owner, id, as_texts(&old))?;
    traffic::delete_link(
        tx,
        id,
        traffic::LinkHome {
            owner,
            space,
            domain,
        },
    )?;
    move_counters(tx, owner, space, -1)?;
    Ok(true)
}

/// Whether `alias` is used in the domain (case-insensitively) by a link other than `except`.
pub fn alias_taken(
    conn: &Connection,
    domain: Option<Id>,
    alias: &str,
    except: Option<Id>,
) -> Result<bool> {
    // The expression matches the unique index `links_alias`.
    conn.prepare_cached(
        "SELECT 1 FROM links WHERE ifnull(domain_id, 0) = ?1 AND alias = ?2 AND id IS NOT ?3",
    )
    .map_err(db_error)?
    .exists(params![domain.unwrap_or(0), alias, except])
    .map_err(db_error)
}

/// Every column a [`Link`] needs, with its space and domain joined.
const READ_COLUMNS: &str = "l.id, l.alias, l.url, l.title, l.target_type, l.geo_target, \
     l.platform_target, l.rotation_target, l.last_rotation, l.disabled, l.public, \
     l.password_hash IS NOT NULL, l.expiration_url, l.expiration_clicks, l.clicks, l.owner_id, \
     l.ends_at, l.created_at, l.updated_at, \
     s.id, s.owner_id, s.name, s.color, s.link_count, s.created_at, s.updated_at, \
     d.id, d.owner_id, d.name, d.created_at, d.updated_at";
const READ_FROM: &str = "links l LEFT JOIN spaces s ON s.id = l.space_id \
     LEFT JOIN domains d ON d.id = l.domain_id";

/// A link as read; `short_url` is left empty for the service to fill in.
fn link_from_row(r: &Row<'_>) -> rusqlite::Result<Link> {
    let space_id: Option<Id> = r.get(19)?;
    let domain_id: Option<Id> = r.get(26)?;
    let clicks: i64 = r.get(14)?;
    let last_rotation: i64 = r.get(8)?;
    Ok(Link {
        id: r.get(0)?,
        alias: r.get(1)?,
        url: r.get(2)?,
        short_url: String::new(),
        title: r.get(3)?,
        target_type: target_type(r.get(4)?),
        geo: parse_rules(r.get(5)?),
        platform: parse_rules(r.get(6)?),
        rotation: parse_rotation(r.get(7)?),
        last_rotation: u32::try_from(last_rotation).unwrap_or(0),
        disabled: r.get(9)?,
        public: r.get(10)?,
        password: r.get(11)?,
        expiration_url: r.get(12)?,
        expiration_clicks: r.get(13)?,
        clicks: clicks.max(0) as u64,
        owner_id: r.get(15)?,
        ends_at: r.get::<_, Option<i64>>(16)?.map(time),
        created_at: time(r.get(17)?),
        updated_at: time(r.get(18)?),
        space: space_id.map(|_| spaces::from_row(r, 19)).transpose()?,
        domain: domain_id.map(|_| domains::from_row(r, 26)).transpose()?,
    })
}

pub fn get(conn: &Connection, owner: Id, id: Id) -> Result<Option<Link>> {
    conn.prepare_cached(&format!(
        "SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.id = ?1 AND l.owner_id = ?2"
    ))
    .map_err(db_error)?
    .query_row(params![id, owner], link_from_row)
    .optional()
    .map_err(db_error)
}

/// Up to `limit` links of `owner` with ids above `after`, oldest first: a keyset scan that
/// costs the same on the last batch of a million links as on the first (exports use it).
pub fn after(conn: &Connection, owner: Id, after: Id, limit: u32) -> Result<Vec<Link>> {
    conn.prepare_cached(&format!(
        "SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.owner_id = ?1 AND l.id > ?2 \
         ORDER BY l.id ASC LIMIT ?3"
    ))
    .map_err(db_error)?
    .query_map(params![owner, after, limit], link_from_row)
    .map_err(db_error)?
    .collect::<rusqlite::Result<Vec<_>>>()
    .map_err(db_error)
}

/// What a list asks for, already validated; `now` decides which links count as expired.
#[derive(Debug, Clone)]
pub struct ListFilter<'a> {
    pub owner: Id,
    pub search: Option<(SearchBy, &'a str)>,
    pub status: StatusFilter,
    pub space: Option<Id>,
    pub domain: Option<Id>,
    pub sort: Sort,
    pub offset: u64,
    pub limit: u32,
    pub now: Timestamp,
}

// The status rules of `LinkStatus::derive`, in SQL. `ends_at` is NULL for links that never
// expire by date, so the active rule names that case explicitly (NOT of NULL is NULL).
const CLICK_EXPIRED: &str = "(l.expiration_clicks > 0 AND l.clicks >= l.expiration_clicks)";

fn status_sql(status: StatusFilter) -> Option<String> {
    match status {
        StatusFilter::All => None,
        StatusFilter::Disabled => Some("l.disabled = 1".into()),
        StatusFilter::Expired => Some(format!("(l.ends_at <= ?2 OR {CLICK_EXPIRED})")),
        StatusFilter::Active => Some(format!(
            "l.disabled = 0 AND (l.ends_at IS NULL OR l.ends_at > ?2) AND NOT {CLICK_EXPIRED}"
        )),
    }
}

/// The column a search by `by` reads.
pub(super) fn column(by: SearchBy) -> &'static str {
    match by {
        SearchBy::Title => "title",
        SearchBy::Alias => "alias",
        SearchBy::Url => "url",
    }
}

/// The FROM and WHERE clauses of a list and their parameters: ?1 owner, ?2 now, then the filters
/// in order. A search is driven by the trigram index, so only the matching links are ever read
/// (terms too short for it never come here: `list` answers them from the short-term index).
struct ListSql {
    from: &'static str,
    filter: String,
    values: Vec<Value>,
    full_text: bool,
}

const SEARCH_FROM: &str = "links_fts f CROSS JOIN links l ON l.id = f.rowid";

/// How a search of three characters or more reads its matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// The index's matches drive the query: each is read and checked (few matches, or id
    /// order, which the index yields itself).
    Matches,
    /// The links are walked in the sort's own index and each is looked up among the matches
    /// (many matches, sorted by clicks: the page fills after a few rows instead of reading and
    /// sorting every match).
    Walk,
}

fn list_sql(f: &ListFilter<'_>, plan: Plan) -> ListSql {
    let mut sql = String::from("l.owner_id = ?1");
    let mut values = vec![Value::Integer(f.owner), Value::Integer(f.now.as_second())];
    let mut full_text = false;
    let mut from = "links l";
    if let Some(status) = status_sql(f.status) {
        sql.push_str(" AND ");
        sql.push_str(&status);
    }
    if let Some(space) = f.space {
        values.push(Value::Integer(space));
        sql.push_str(&format!(" AND l.space_id = ?{}", values.len()));
    }
    if let Some(domain) = f.domain {
        values.push(Value::Integer(domain));
        sql.push_str(&format!(" AND l.domain_id = ?{}", values.len()));
    }
    if let Some((by, term)) = f.search {
        full_text = plan == Plan::Matches;
        from = match plan {
            Plan::Matches => SEARCH_FROM,
            // Named, so the planner cannot read every match and sort after all.
            Plan::Walk => "links l INDEXED BY links_owner_clicks",
        };
        values.push(Value::Text(fts_phrase(column(by), term)));
        sql.push_str(&match plan {
            Plan::Matches => format!(" AND f.links_fts MATCH ?{}", values.len()),
            Plan::Walk => format!(
                " AND l.id IN (SELECT rowid FROM links_fts WHERE links_fts MATCH ?{})",
                values.len()
            ),
        });
    }
    ListSql {
        from,
        filter: sql,
        values,
        full_text,
    }
}

/// A quoted FTS5 phrase limited to one column: every character is literal once quotes are
/// doubled, so operators and wildcards in the term mean nothing.
fn fts_phrase(col: &str, term: &str) -> String {
    format!("{col} : \"{}\"", term.replace('"', "\"\""))
}

fn order_by(sort: Sort, reverse: bool, full_text: bool) -> &'static str {
    let newest_first = matches!(sort, Sort::Desc | Sort::Max) != reverse;
    // The trigram index yields its matches by id in either direction, so an id order is read
    // straight from it and stops after one page.
    match (sort, newest_first, full_text) {
        (Sort::Desc | Sort::Asc, true, true) => "f.rowid DESC",
        (Sort::Desc | Sort::Asc, false, true) => "f.rowid ASC",
        (Sort::Desc | Sort::Asc, true, false) => "l.id DESC",
        (Sort::Desc | Sort::Asc, false, false) => "l.id ASC",
        (Sort::Max | Sort::Min, true, _) => "l.clicks DESC, l.id DESC",
        (Sort::Max | Sort::Min, false, _) => "l.clicks ASC, l.id ASC",
    }
}

/// How many links `owner` has (kept by the writes, so never counted).
pub(super) fn owner_link_count(conn: &Connection, owner: Id) -> Result<u64> {
    let n: Option<i64> = conn
        .prepare_cached("SELECT link_count FROM owners WHERE id = ?1")
        .map_err(db_error)?
        .query_row([owner], |r| r.get(0))
        .optional()
        .map_err(db_error)?;
    Ok(n.unwrap_or(0).max(0) as u64)
}

/// Whether a clicks-sorted search page is found sooner by walking the clicks index (about
/// `rows × links / total` rows until the page is full, `total` being the links that pass every
/// filter) than by reading every match of the search and sorting those that pass.
fn walk_is_cheaper(
    conn: &Connection,
    f: &ListFilter<'_>,
    sql: &ListSql,
    matches: Option<u64>,
    total: u64,
    rows: u64,
) -> Result<bool> {
    if !matches!(f.sort, Sort::Max | Sort::Min) || total == 0 {
        return Ok(false);
    }
    let links = owner_link_count(conn, f.owner)?;
    let walked = rows.saturating_mul(links) / total;
    if walked <= total {
        // The matches include every link that passes: reading them all is dearer still.
        return Ok(true);
    }
    let matches = match matches {
        Some(n) => n,
        None => search_matches(conn, sql)?,
    };
    Ok(walked < matches)
}

/// How many links (of any owner) the full-text search matches: the index alone answers.
fn search_matches(conn: &Connection, sql: &ListSql) -> Result<u64> {
    let phrase = &sql.values[sql.values.len() - 1];
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM links_fts WHERE links_fts MATCH ?1")
        .map_err(db_error)?
        .query_row([phrase], |r| r.get(0))
        .map_err(db_error)?;
    Ok(n.max(0) as u64)
}

/// One page of links matching `f` and the number of all matching links, read from one snapshot.
pub fn list(conn: &Connection, f: &ListFilter<'_>) -> Result<(Vec<Link>, u64)> {
    let tx = conn.unchecked_transaction().map_err(db_error)?;
    if let Some(mut set) = matches_as_ids(&tx, f)? {
        sets::narrow(&tx, f, &mut set)?;
        let mut items = Vec::new();
        for id in sets::page(&tx, f, &set)? {
            items.extend(get(&tx, f.owner, id)?);
        }
        return Ok((items, set.len()));
    }
    let sql = list_sql(f, Plan::Matches);
    let Counts { total, matches } = count(&tx, f, &sql)?;
    if f.offset >= total {
        return Ok((Vec::new(), total));
    }
    // Past the middle, walk from the other end: the last page of a million links is then as
    // quick as the first.
    let end = f.offset + u64::from(f.limit);
    let reverse = f.offset.saturating_mul(2) > total;
    let (offset, limit) = if reverse {
        (total.saturating_sub(end), end.min(total) - f.offset)
    } else {
        (f.offset, u64::from(f.limit))
    };
    let sql = if sql.full_text && walk_is_cheaper(&tx, f, &sql, matches, total, offset + limit)? {
        list_sql(f, Plan::Walk)
    } else {
        sql
    };
    let mut values = sql.values;
    values.push(Value::Integer(limit as i64));
    values.push(Value::Integer(offset as i64));
    let query = format!(
        "SELECT {READ_COLUMNS} FROM {} LEFT JOIN spaces s ON s.id = l.space_id \
         LEFT JOIN domains d ON d.id = l.domain_id WHERE {} ORDER BY {} LIMIT ?{} OFFSET ?{}",
        sql.from,
        sql.filter,
        order_by(f.sort, reverse, sql.full_text),
        values.len() - 1,
        values.len()
    );
    let mut stmt = tx.prepare_cached(&query).map_err(db_error)?;
    let mut items = stmt
        .query_map(params_from_iter(values), link_from_row)
        .map_err(db_error)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(db_error)?;
    if reverse {
        items.reverse();
    }
    Ok((items, total))
}

/// The ids of every link matching `f` (its paging and order aside), read the way a list reads
/// its matches.
pub fn matching_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<RoaringTreemap> {
    if let Some(mut set) = matches_as_ids(conn, f)? {
        sets::narrow(conn, f, &mut set)?;
        return Ok(set);
    }
    let sql = list_sql(f, Plan::Matches);
    // `?2 IS NOT NULL` names the time parameter, which not every filter uses.
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT l.id FROM {} WHERE {} AND ?2 IS NOT NULL",
            sql.from, sql.filter
        ))
        .map_err(db_error)?;
    let ids = stmt
        .query_map(params_from_iter(&sql.values), |r| r.get::<_, i64>(0))
        .map_err(db_error)?
        .map(|id| id.map(|id| id as u64))
        .collect::<rusqlite::Result<Vec<u64>>>()
        .map_err(db_error)?;
    Ok(sets::set_of(ids))
}

/// The ids of the owner's links that a search matches, when they are best read up front: a term
/// too short for the trigram index (the short-term index holds its matches), or a full-text
/// search with a filter when every match is the owner's (the matches are then narrowed in memory
/// once, instead of being read by SQL for the total and again for the page).
fn matches_as_ids(conn: &Connection, f: &ListFilter<'_>) -> Result<Option<RoaringTreemap>> {
    let Some((by, term)) = f.search else {
        return Ok(None);
    };
    if let Some(term) = grams::short_term(term) {
        return grams::matching(conn, f.owner, by, &term).map(Some);
    }
    let filtered = f.status != StatusFilter::All || f.space.is_some() || f.domain.is_some();
    if !filtered || !sole_owner(conn, f.owner)? {
        return Ok(None);
    }
    let ids = conn
        .prepare_cached("SELECT rowid FROM links_fts WHERE links_fts MATCH ?1")
        .map_err(db_error)?
        .query_map([fts_phrase(column(by), term)], |r| r.get::<_, i64>(0))
        .map_err(db_error)?
        .map(|id| id.map(|id| id as u64))
        .collect::<rusqlite::Result<Vec<u64>>>()
        .map_err(db_error)?;
    Ok(Some(sets::set_of(ids)))
}

/// The number of links matching `f`. A status filter alone is answered from the partial indexes
/// by inclusion-exclusion over the (small) sets of expired and disabled links, so the totals stay
/// quick at a million links.
fn count(conn: &Connection, f: &ListFilter<'_>, sql: &ListSql) -> Result<Counts> {
    let only_search = f.status == StatusFilter::All && f.space.is_none() && f.domain.is_none();
    if sql.full_text && only_search && sole_owner(conn, f.owner)? {
        // Every match is this owner's: the index alone knows how many there are, without
        // reading a single link.
        let n = search_matches(conn, sql)?;
        return Ok(Counts {
            total: n,
            matches: Some(n),
        });
    }
    count_by_reading(conn, f, sql).map(|total| Counts {
        total,
        matches: None,
    })
}

/// The number of links passing the filters, and how many links of any owner the full-text
/// search matches when that came for free.
struct Counts {
    total: u64,
    matches: Option<u64>,
}

/// [`count`] by reading the links (driven by the full-text index when there is a search).
fn count_by_reading(conn: &Connection, f: &ListFilter<'_>, sql: &ListSql) -> Result<u64> {
    if f.search.is_some() || f.space.is_some() || f.domain.is_some() {
        let n: i64 = conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM {} WHERE {}",
                sql.from, sql.filter
            ))
            .map_err(db_error)?
            .query_row(params_from_iter(&sql.values), |r| r.get(0))
            .map_err(db_error)?;
        return Ok(n as u64);
    }
    let owner = f.owner;
    let now = f.now.as_second();
    let n = |sql: &str| -> Result<u64> {
        let n: i64 = conn
            .prepare_cached(sql)
            .map_err(db_error)?
            .query_row(params![owner, now], |r| r.get(0))
            .map_err(db_error)?;
        Ok(n.max(0) as u64)
    };
    // Each query names its index so a planner change cannot turn it into a scan.
    const TOTAL: &str = "SELECT link_count FROM owners WHERE id = ?1 AND ?2 IS NOT NULL";
    const BY_DATE: &str = "SELECT count(*) FROM links INDEXED BY links_owner_ends \
         WHERE owner_id = ?1 AND ends_at <= ?2";
    const DISABLED: &str = "SELECT count(*) FROM links INDEXED BY links_owner_disabled \
         WHERE owner_id = ?1 AND disabled = 1 AND ?2 IS NOT NULL";
    const BY_CLICKS: &str = "SELECT count(*) FROM links INDEXED BY links_owner_click_expired_ends \
         WHERE owner_id = ?1 AND expiration_clicks > 0 AND clicks >= expiration_clicks \
         AND ?2 IS NOT NULL";
    const BY_CLICKS_AND_DATE: &str = "SELECT count(*) FROM links \
         INDEXED BY links_owner_click_expired_ends \
         WHERE owner_id = ?1 AND expiration_clicks > 0 AND clicks >= expiration_clicks \
         AND ends_at <= ?2";
    const INACTIVE: &str = "SELECT count(*) FROM links INDEXED BY links_owner_inactive_ends \
         WHERE owner_id = ?1 AND (disabled = 1 OR (expiration_clicks > 0 AND clicks >= expiration_clicks)) \
         AND ?2 IS NOT NULL";
    const INACTIVE_AND_DATE: &str = "SELECT count(*) FROM links \
         INDEXED BY links_owner_inactive_ends \
         WHERE owner_id = ?1 AND (disabled = 1 OR (expiration_clicks > 0 AND clicks >= expiration_clicks)) \
         AND ends_at <= ?2";
    let total = || -> Result<u64> {
        conn.prepare_cached(TOTAL)
            .map_err(db_error)?
            .query_row(params![owner, now], |r| r.get::<_, i64>(0))
            .optional()
            .map_err(db_error)
            .map(|n| n.unwrap_or(0).max(0) as u64)
    };
    Ok(match f.status {
        StatusFilter::All => total()?,
        StatusFilter::Disabled => n(DISABLED)?,
        StatusFilter::Expired => {
            (n(BY_DATE)? + n(BY_CLICKS)?).saturating_sub(n(BY_CLICKS_AND_DATE)?)
        }
        StatusFilter::Active => {
            let inactive = (n(BY_DATE)? + n(INACTIVE)?).saturating_sub(n(INACTIVE_AND_DATE)?);
            total()?.saturating_sub(inactive)
        }
    })
}

/// Whether no other owner has any link.
fn sole_owner(conn: &Connection, owner: Id) -> Result<bool> {
    conn.prepare_cached(
        "SELECT NOT EXISTS (SELECT 1 FROM owners WHERE id <> ?1 AND link_count > 0)",
    )
    .map_err(db_error)?
    .query_row([owner], |r| r.get(0))
    .map_err(db_error)
}
