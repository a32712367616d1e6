//! SQL for links on PostgreSQL: rows in and out, alias lookups. A link is written from the same
//! [`LinkRow`] and read into the same [`Link`] as on SQLite, with the same column lists and
//! JSON encodings (the contract's); only the SQL and the value types are PostgreSQL's.

use deadpool_postgres::{GenericClient, Transaction};
use tokio_postgres::Row;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

use linkdeck_store::sql::{READ_COLUMNS, READ_FROM, WRITE_COLUMNS};
use linkdeck_store::words::{ALIAS_TAKEN, NOT_YOUR_DOMAIN, NOT_YOUR_SPACE};
use linkdeck_store::{LinkRow, Links, options_json, rotation_json, rows, rules_json, tags_json};

use crate::error::{is_foreign_key_violation, is_unique_violation, pg_error};
use crate::sql::{Cols, all, col, execute, exists, one, row};
use crate::traffic;
use crate::tx::PgTx;
use linkdeck_domain::{Error, Id, Link, LinkField, Result};
use linkdeck_store::traffic::Shift;

/// A link as read with [`READ_COLUMNS`]; `short_url` is left empty for the service to fill in.
pub fn link_from_row(r: &Row) -> Result<Link> {
    rows::link(&Cols(r))
}

/// Up to `limit` links of `owner` with ids above `after`, oldest first (a keyset scan).
pub async fn after<C: GenericClient>(c: &C, owner: Id, after: Id, limit: u32) -> Result<Vec<Link>> {
    all(
        c,
        &format!(
            "SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.owner_id = $1 AND l.id > $2 \
             ORDER BY l.id ASC LIMIT $3"
        ),
        &[&owner, &after, &i64::from(limit)],
        link_from_row,
    )
    .await
}

/// The types of [`WRITE_COLUMNS`] on PostgreSQL, in order.
const WRITE_TYPES: [Type; 20] = [
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::BOOL,
    Type::BOOL,
    Type::TEXT,
    Type::INT8,
    Type::INT8,
    Type::INT2,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::INT8,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
];

/// Writes new links in one `COPY … (FORMAT binary)`, the fastest way rows go into PostgreSQL:
/// each with the id given (taken from the table's sequence by the caller) and its click total.
/// Returns how many. A taken alias fails the whole statement, as the unique index says.
pub async fn copy_in(tx: &Transaction<'_>, links: &[(Id, &LinkRow, [i64; 2])]) -> Result<u64> {
    let sink = tx
        .copy_in(&format!(
            "COPY links (id, {WRITE_COLUMNS}, clicks, previews) FROM STDIN (FORMAT binary)"
        ))
        .await
        .map_err(pg_error)?;
    let mut types = vec![Type::INT8];
    types.extend(WRITE_TYPES);
    types.extend([Type::INT8, Type::INT8]);
    let writer = BinaryCopyInWriter::new(sink, &types);
    let mut writer = std::pin::pin!(writer);
    for (id, row, [clicks, previews]) in links {
        let values = WriteValues::of(row);
        let mut cells: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(23);
        cells.push(id);
        cells.extend(values.refs());
        cells.push(clicks);
        cells.push(previews);
        writer.as_mut().write(&cells).await.map_err(write_error)?;
    }
    writer.finish().await.map_err(write_error)
}

/// A [`LinkRow`]'s values in the order of [`WRITE_COLUMNS`], typed as the columns are.
struct WriteValues {
    owner_id: Id,
    domain_id: Option<Id>,
    space_id: Option<Id>,
    alias: String,
    url: String,
    title: Option<String>,
    password_hash: Option<String>,
    disabled: bool,
    public: bool,
    expiration_url: Option<String>,
    expiration_clicks: i64,
    ends_at: Option<i64>,
    target_type: i16,
    geo: Option<String>,
    platform: Option<String>,
    rotation: Option<String>,
    created_at: i64,
    updated_at: i64,
    tags: Option<String>,
    options: Option<String>,
}

impl WriteValues {
    fn of(row: &LinkRow) -> WriteValues {
        WriteValues {
            owner_id: row.owner_id,
            domain_id: row.domain_id,
            space_id: row.space_id,
            alias: row.alias.clone(),
            url: row.url.clone(),
            title: row.title.clone(),
            password_hash: row.password_hash.clone(),
            disabled: row.disabled,
            public: row.public,
            expiration_url: row.expiration_url.clone(),
            expiration_clicks: i64::from(row.expiration_clicks),
            ends_at: row.ends_at.map(|t| t.as_second()),
            target_type: i16::from(u8::from(row.target_type)),
            geo: rules_json(&row.geo),
            platform: rules_json(&row.platform),
            rotation: rotation_json(&row.rotation),
            created_at: row.created_at.as_second(),
            updated_at: row.updated_at.as_second(),
            tags: tags_json(&row.tags),
            options: options_json(&row.options),
        }
    }

    fn refs(&self) -> [&(dyn ToSql + Sync); 20] {
        [
            &self.owner_id,
            &self.domain_id,
            &self.space_id,
            &self.alias,
            &self.url,
            &self.title,
            &self.password_hash,
            &self.disabled,
            &self.public,
            &self.expiration_url,
            &self.expiration_clicks,
            &self.ends_at,
            &self.target_type,
            &self.geo,
            &self.platform,
            &self.rotation,
            &self.created_at,
            &self.updated_at,
            &self.tags,
            &self.options,
        ]
    }
}

/// The error of a write the database refused for a reason a person can act on: the alias was
/// taken, or the space or domain removed, by another writer since the checks.
fn write_error(e: tokio_postgres::Error) -> Error {
    if is_unique_violation(&e) {
        Error::field(LinkField::Alias.name(), ALIAS_TAKEN)
    } else if is_foreign_key_violation(&e, "links_space_id_fkey") {
        Error::field(LinkField::Space.name(), NOT_YOUR_SPACE)
    } else if is_foreign_key_violation(&e, "links_domain_id_fkey") {
        Error::field(LinkField::Domain.name(), NOT_YOUR_DOMAIN)
    } else {
        pg_error(e)
    }
}

impl<C: GenericClient + Sync> Links for PgTx<'_, C> {
    fn link(&self, owner: Id, id: Id) -> Result<Option<Link>> {
        self.wait(one(
            self.c,
            &format!("SELECT {READ_COLUMNS} FROM {READ_FROM} WHERE l.id = $1 AND l.owner_id = $2"),
            &[&id, &owner],
            link_from_row,
        ))
    }

    fn links_after(&self, owner: Id, after: Id, limit: u32) -> Result<Vec<Link>> {
        self.wait(self::after(self.c, owner, after, limit))
    }

    fn link_row(&self, owner: Id, id: Id) -> Result<Option<LinkRow>> {
        // Locked, so that a patch is applied to what is stored, not to what another writer is
        // replacing.
        let Some(r) = self.wait(row(
            self.c,
            &format!(
                "SELECT {WRITE_COLUMNS} FROM links WHERE id = $1 AND owner_id = $2 FOR UPDATE"
            ),
            &[&id, &owner],
        ))?
        else {
            return Ok(None);
        };
        rows::link_row(&Cols(&r)).map(Some)
    }

    fn space_is_mine(&self, owner: Id, id: Id) -> Result<bool> {
        // Held against a delete (not against edits): a link written in this transaction keeps it.
        self.wait(exists(
            self.c,
            "SELECT 1 FROM spaces WHERE id = $1 AND owner_id = $2 FOR KEY SHARE",
            &[&id, &owner],
        ))
    }

    fn domain_is_mine(&self, owner: Id, id: Id) -> Result<bool> {
        // Held against a delete (not against edits): a link written in this transaction keeps it.
        self.wait(exists(
            self.c,
            "SELECT 1 FROM domains WHERE id = $1 AND owner_id = $2 FOR KEY SHARE",
            &[&id, &owner],
        ))
    }

    fn alias_taken(&self, domain: Option<Id>, alias: &str, except: Option<Id>) -> Result<bool> {
        // The expressions are those of the unique index `links_alias`.
        self.wait(exists(
            self.c,
            "SELECT 1 FROM links WHERE coalesce(domain_id, 0) = $1 AND lower(alias) = lower($2) \
             AND id IS DISTINCT FROM $3",
            &[&domain.unwrap_or(0), &alias, &except],
        ))
    }

    fn own_link_url(&self, owner: Id, domain: Option<Id>, alias: &str) -> Result<Option<String>> {
        // The expressions are those of the unique index `links_alias`.
        self.wait(one(
            self.c,
            "SELECT url FROM links WHERE coalesce(domain_id, 0) = $1 AND lower(alias) = lower($2) \
             AND owner_id = $3",
            &[&domain.unwrap_or(0), &alias, &owner],
            |r| col(r, 0),
        ))
    }

    fn insert_link(&self, row: &LinkRow) -> Result<Option<Id>> {
        // Its id comes from the table's identity sequence, which never gives one out twice.
        let values = WriteValues::of(row);
        let placeholders = (1..=20).map(|i| format!("${i}")).collect::<Vec<_>>();
        let found = self
            .wait(self.c.query_opt(
                &format!(
                    "INSERT INTO links ({WRITE_COLUMNS}) VALUES ({}) \
                     ON CONFLICT (coalesce(domain_id, 0), lower(alias)) DO NOTHING RETURNING id",
                    placeholders.join(", ")
                ),
                &values.refs(),
            ))
            .map_err(write_error)?;
        found.map(|r| col(&r, 0)).transpose()
    }

    fn update_link(&self, id: Id, row: &LinkRow) -> Result<()> {
        let values = WriteValues::of(row);
        let v = values.refs();
        let old = self
            .wait(self.c.query_opt(
                "WITH old AS (SELECT id, owner_id, space_id FROM links WHERE id = $1 FOR UPDATE) \
                 UPDATE links l SET domain_id = $2, space_id = $3, alias = $4, url = $5, \
                 title = $6, password_hash = $7, disabled = $8, public = $9, expiration_url = $10, \
                 expiration_clicks = $11, ends_at = $12, target_type = $13, geo_target = $14, \
                 platform_target = $15, rotation_target = $16, updated_at = $17, tags = $18, options = $19 \
                 FROM old WHERE l.id = old.id RETURNING old.owner_id, old.space_id",
                &[
                    &id, v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12],
                    v[13], v[14], v[15], v[17], v[18], v[19],
                ],
            ))
            .map_err(write_error)?;
        // The link counters follow a change of space by the schema's triggers; its traffic moves
        // here, after the link's row is locked by this update (see `traffic::shift`).
        if let Some(old) = old {
            let (owner, from): (Id, Option<Id>) = (col(&old, 0)?, col(&old, 1)?);
            let to = row.space_id;
            self.wait(traffic::shift(
                self.c,
                owner,
                &[(id, Shift::Move { from, to })],
            ))?;
        }
        Ok(())
    }

    fn set_title(&self, id: Id, url: &str, title: &str) -> Result<bool> {
        let n = self.wait(execute(
            self.c,
            "UPDATE links SET title = $1 WHERE id = $2 AND url = $3",
            &[&title, &id, &url],
        ))?;
        Ok(n > 0)
    }
}
