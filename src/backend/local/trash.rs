//! The trash of the embedded service: a deleted link or space waits there, whole, for
//! `trash_days` (a profile setting) and can come back with its id, clicks and traffic. The SQL is
//! in `store::trash` (SQLite) and `pg::trash` (PostgreSQL).

use jiff::{SignedDuration, Timestamp};

use super::LocalBackend;
use super::pg::{self, trash as pg_trash};
use super::store::trash::{self as store, Scope};
use crate::backend::bulk::{BulkFailure, BulkReport, Progress};
use crate::backend::trash::{TrashPage, Trashed, TrashedKind};
use crate::domain::{Error, Id, Result};

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
        if let Some(pg) = self.pg() {
            let Some(cutoff) = self.purge_cutoff() else {
                return Ok(0);
            };
            let mut client = pg.client().await?;
            // Most deletes find nothing due: look before writing.
            if !pg_trash::any_due(&client, cutoff).await? {
                return Ok(0);
            }
            let tx = pg::write(&mut client).await?;
            let n = pg_trash::purge_before(&tx, cutoff).await?;
            tx.commit().await.map_err(pg::pg_error)?;
            return Ok(n);
        }
        let service = self.clone();
        tokio::task::spawn_blocking(move || service.purge_due_blocking())
            .await
            .map_err(|e| Error::Unavailable(format!("database task failed: {e}")))?
    }

    /// [`LocalService::purge_due`] on a SQLite file, from a thread that may block: opening a
    /// file purges at once. PostgreSQL is reached from the async runtime only; use `purge_due`.
    pub fn purge_due_blocking(&self) -> Result<u64> {
        if self.pg().is_some() {
            return Err(Error::Unavailable(
                "purge_due_blocking works on a SQLite file; on PostgreSQL use purge_due".into(),
            ));
        }
        let Some(cutoff) = self.purge_cutoff() else {
            return Ok(0);
        };
        // Most opens find nothing due: look before taking the write lock.
        let due = self.db()?.read_blocking(|conn| {
            conn.prepare_cached("SELECT 1 FROM trash_batches WHERE deleted_at < ?1 LIMIT 1")
                .map_err(super::db_error)?
                .exists([cutoff.as_second()])
                .map_err(super::db_error)
        })?;
        if !due {
            return Ok(0);
        }
        self.db()?
            .write_blocking(|tx| store::purge_before(tx, cutoff))
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
        let moved = match self.service.pg() {
            Some(pg) => {
                let mut client = pg.client().await?;
                let tx = pg::write(&mut client).await?;
                let batch = pg_trash::new_batch(&tx, owner, now).await?;
                let moved = pg_trash::move_space(&tx, owner, id, batch).await?;
                if moved {
                    tx.commit().await.map_err(pg::pg_error)?;
                }
                moved
            }
            None => {
                self.service
                    .db()?
                    .write(move |tx| {
                        let batch = store::new_batch(tx, owner, now)?;
                        store::move_space(tx, owner, id, batch)
                    })
                    .await?
            }
        };
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
        let done = match self.service.pg() {
            Some(pg) => {
                let mut client = pg.client().await?;
                let tx = pg::write(&mut client).await?;
                let done = pg_trash::restore(&tx, owner, &scope).await?;
                tx.commit().await.map_err(pg::pg_error)?;
                done
            }
            None => {
                self.service
                    .db()?
                    .write(move |tx| store::restore(tx, owner, &scope))
                    .await?
            }
        };
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
        let (items, total) = match self.service.pg() {
            Some(pg) => {
                let mut client = pg.client().await?;
                let tx = pg::snapshot(&mut client).await?;
                pg_trash::list(&tx, owner, offset, per_page, keep).await?
            }
            None => {
                self.service
                    .db()?
                    .read(move |conn| store::list(conn, owner, offset, per_page, keep))
                    .await?
            }
        };
        Ok(TrashPage {
            items,
            page: page.max(1),
            per_page,
            total,
        })
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
        if let Some(pg) = self.service.pg() {
            let mut client = pg.client().await?;
            let tx = pg::write(&mut client).await?;
            let n = pg_trash::purge(&tx, owner, &scope).await?;
            tx.commit().await.map_err(pg::pg_error)?;
            return Ok(n);
        }
        self.service
            .db()?
            .write(move |tx| store::purge(tx, owner, &scope))
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
