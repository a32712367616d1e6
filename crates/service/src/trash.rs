//! The trash of the embedded service: a deleted link or space waits there, whole, for
//! `trash_days` (a profile setting) and can come back with its id, clicks and traffic.

use jiff::{SignedDuration, Timestamp};

use linkdeck_store::Scope;

use super::LocalBackend;
use linkdeck_backend::bulk::{BulkFailure, BulkReport, Progress};
use linkdeck_domain::{Error, Id, Result, TrashPage, Trashed, TrashedKind};

/// How long deleted things are kept when the profile does not say.
pub const DEFAULT_TRASH_DAYS: u32 = 30;

impl super::LocalService {
    /// The time before which trashed things are due to go, if the profile purges at all.
    fn purge_cutoff(&self) -> Option<Timestamp> {
        let days = self.options().trash_days;
        if days == 0 {
            return None;
        }
        Some(
            self.now()
                .checked_sub(SignedDuration::from_hours(24 * i64::from(days)))
                .unwrap_or_default(),
        )
    }

    /// Deletes for good what has been in the trash longer than the profile keeps it, with its
    /// traffic; returns how many links. Every look at the trash and every delete does this
    /// first, so nothing overdue is ever shown.
    pub async fn purge_due(&self) -> Result<u64> {
        let Some(cutoff) = self.purge_cutoff() else {
            return Ok(0);
        };
        // Most deletes find nothing due: look before writing.
        if !self.store.read(move |tx| tx.trash_due(cutoff)).await? {
            return Ok(0);
        }
        self.store
            .write(move |tx| tx.purge_trash_before(cutoff))
            .await
    }

    /// [`LocalService::purge_due`] from a thread that may block: opening a file purges at once.
    pub fn purge_due_blocking(&self) -> Result<u64> {
        let Some(cutoff) = self.purge_cutoff() else {
            return Ok(0);
        };
        if !self.store.read_blocking(move |tx| tx.trash_due(cutoff))? {
            return Ok(0);
        }
        self.store
            .write_blocking(move |tx| tx.purge_trash_before(cutoff))
    }
}

impl LocalBackend {
    pub(super) async fn purge_due(&self) -> Result<()> {
        self.service.purge_due().await.map(drop)
    }

    /// Moves space `id` to the trash; its links stay, without a space, until it comes back.
    pub(super) async fn trash_space(&self, id: Id) -> Result<()> {
        self.purge_due().await?;
        let owner = self.owner_id;
        let now = self.service.now();
        let moved = self
            .store()
            .write(move |tx| {
                let batch = tx.new_trash_batch(owner, now)?;
                tx.trash_space(owner, id, batch)
            })
            .await?;
        if moved {
            Ok(())
        } else {
            Err(Error::not_found(format!("space {id}")))
        }
    }

    pub(super) async fn restore_scope(
        &self,
        scope: Scope,
        progress: &Progress,
    ) -> Result<BulkReport> {
        let owner = self.owner_id;
        progress.set_total(0);
        let done = self
            .store()
            .write(move |tx| tx.restore_trash(owner, &scope))
            .await?;
        let changed = done.links + done.spaces;
        progress.set_total(changed + done.failed.len() as u64);
        progress.advance(changed + done.failed.len() as u64);
        Ok(BulkReport {
            matched: changed + done.failed.len() as u64,
            changed,
            failed: done
                .failed
                .into_iter()
                .map(|(kind, id, name, error)| BulkFailure {
                    id,
                    alias: Some(match kind {
                        TrashedKind::Link => name,
                        TrashedKind::Space => format!("space {name}"),
                    }),
                    error,
                })
                .collect(),
            ..BulkReport::default()
        })
    }

    pub(super) async fn trash_page(&self, page: u32, per_page: u32) -> Result<TrashPage> {
        self.purge_due().await?;
        let owner = self.owner_id;
        let keep = self.service.options().trash_days;
        let offset = super::owned::rows_before(page, per_page);
        let (items, total) = self
            .store()
            .snapshot(move |tx| tx.trash(owner, offset, per_page, keep))
            .await?;
        Ok(TrashPage::new(items, page.max(1), per_page, total))
    }

    pub(super) async fn restore_items(&self, items: &[Trashed]) -> Result<BulkReport> {
        self.restore_scope(items_scope(items), &Progress::new())
            .await
    }

    pub(super) async fn purge_items(&self, items: &[Trashed]) -> Result<u64> {
        self.purge_scope(items_scope(items)).await
    }

    /// Deletes this owner's trashed links and spaces in `scope` for good; returns how many.
    async fn purge_scope(&self, scope: Scope) -> Result<u64> {
        let owner = self.owner_id;
        self.store()
            .write(move |tx| tx.purge_trash(owner, &scope))
            .await
    }

    /// Brings back everything in this owner's trash.
    pub async fn restore_all(&self) -> Result<BulkReport> {
        self.restore_scope(Scope::All, &Progress::new()).await
    }

    /// Deletes everything in this owner's trash for good; returns how many links and spaces.
    pub async fn empty_trash(&self) -> Result<u64> {
        self.purge_scope(Scope::All).await
    }
}

fn items_scope(items: &[Trashed]) -> Scope {
    let of = |kind| {
        items
            .iter()
            .filter(|t| t.kind == kind)
            .map(|t| t.id)
            .collect()
    };
    Scope::Items {
        links: of(TrashedKind::Link),
        spaces: of(TrashedKind::Space),
    }
}
