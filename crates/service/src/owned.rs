//! The two reads every kind of record makes for its owner — one page of a list, and one record
//! by id — so the page arithmetic and the "not found" wording live once.

use super::LocalBackend;
use linkdeck_store::Tx;

use linkdeck_domain::{Error, Id, Page, Result, Total};

impl LocalBackend {
    /// Page `page` (1-based) of this owner's records: `read` is given a snapshot of the store,
    /// the owner and the number of rows before the page, and answers the page's rows and the
    /// total (a count, or a [`Total`] that may be a bound).
    pub(super) async fn page<T: Send + 'static, N: Into<Total> + Send + 'static>(
        &self,
        page: u32,
        per_page: u32,
        read: impl FnOnce(&dyn Tx, Id, u64) -> Result<(Vec<T>, N)> + Send + 'static,
    ) -> Result<Page<T>> {
        let owner = self.owner_id;
        let offset = rows_before(page, per_page);
        let (items, total) = self
            .store()
            .snapshot(move |tx| read(tx, owner, offset))
            .await?;
        Ok(Page::new(items, page, per_page, total))
    }

    /// This owner's record `id` as `read` finds it, or not found, named as "`noun` `id`".
    pub(super) async fn one<T: Send + 'static>(
        &self,
        noun: &'static str,
        id: Id,
        read: impl FnOnce(&dyn Tx, Id, Id) -> Result<Option<T>> + Send + 'static,
    ) -> Result<T> {
        let owner = self.owner_id;
        self.store()
            .read(move |tx| read(tx, owner, id))
            .await?
            .ok_or_else(|| Error::not_found(format!("{noun} {id}")))
    }
}

/// How many rows come before page `page` (1-based) of `per_page` rows.
pub(super) fn rows_before(page: u32, per_page: u32) -> u64 {
    u64::from(page.max(1) - 1) * u64::from(per_page)
}
