//! The two reads every kind of record makes for its owner — one page of a list, and one record
//! by id — so the page arithmetic and the "not found" wording live once.

use rusqlite::Connection;

use super::LocalBackend;
use crate::domain::{Error, Id, Page, Result};

impl LocalBackend {
    /// Page `page` (1-based) of this owner's records. `list` is given a reader connection, the
    /// owner and the number of rows before the page; it answers the page's rows and the total.
    pub(super) async fn read_page<T, F>(&self, page: u32, per_page: u32, list: F) -> Result<Page<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, Id, u64) -> Result<(Vec<T>, u64)> + Send + 'static,
    {
        let owner = self.owner_id;
        let offset = rows_before(page, per_page);
        let (items, total) = self
            .service
            .db()?
            .read(move |conn| list(conn, owner, offset))
            .await?;
        Ok(Page {
            items,
            page,
            per_page,
            total,
        })
    }

    /// This owner's record `id` as `get` reads it, or not found, named as "`noun` `id`".
    pub(super) async fn read_owned<T, F>(&self, noun: &'static str, id: Id, get: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, Id, Id) -> Result<Option<T>> + Send + 'static,
    {
        let owner = self.owner_id;
        self.service
            .db()?
            .read(move |conn| get(conn, owner, id))
            .await?
            .ok_or_else(|| Error::not_found(format!("{noun} {id}")))
    }
}

/// How many rows come before page `page` (1-based) of `per_page` rows.
pub(super) fn rows_before(page: u32, per_page: u32) -> u64 {
    u64::from(page.max(1) - 1) * u64::from(per_page)
}
