//! Bulk work on the embedded service: every selected link changed (or moved to the trash) in
//! one transaction, a chunk of ids per statement, with progress; a cancel rolls it all back.
//! The service's rules are those of a single update: the same validation, the same ownership
//! checks, `updated_at` set.

use std::collections::HashMap;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use roaring::RoaringTreemap;
use rusqlite::Connection;
use rusqlite::types::Value;

use deadpool_postgres::GenericClient;

use super::LocalBackend;
use super::links::list_filter;
use super::pg::{
    self, Pg, bulk as pg_bulk, links as pg_links, search as pg_search, spaces as pg_spaces,
    trash as pg_trash,
};
use super::store::bulk::{self as store, CHUNK, Change};
use super::store::links as link_store;
use super::store::search;
use super::store::{spaces, trash};
use crate::backend::bulk::{
    BulkAction, BulkFailure, BulkReport, Preview, Progress, Selection, Undo,
};
use crate::domain::{
    Error, Id, LinkInput, LinkPatch, Mode, Result, format_expiry_input, validate_link_input,
};
use linkdeck_store::words::NOT_YOUR_SPACE;

/// What a cancelled transaction answers inside; never seen outside (see [`finish`]).
const CANCELLED: &str = "cancelled";

/// The links `selection` holds, and the ids it names that are not the owner's links.
fn resolve(
    conn: &Connection,
    owner: Id,
    selection: &Selection,
    now: Timestamp,
) -> Result<(RoaringTreemap, Vec<Id>)> {
    let ids = match &selection.filter {
        Some(query) => search::matching_ids(
            conn,
            // Every match: no offset, and 0 is no limit.
            &list_filter(owner, query, now, 0, 0),
        )?,
        None => RoaringTreemap::new(),
    };
    let named = store::existing(conn, owner, &selection.ids)?;
    Ok(combine(ids, selection, named))
}

/// [`resolve`] on PostgreSQL.
async fn resolve_pg<C: GenericClient>(
    c: &C,
    owner: Id,
    selection: &Selection,
    now: Timestamp,
) -> Result<(RoaringTreemap, Vec<Id>)> {
    let matched = match &selection.filter {
        Some(query) => pg_search::matching_ids(c, &list_filter(owner, query, now, 0, 0))
            .await?
            .into_iter()
            .map(|id| id as u64)
            .collect(),
        None => RoaringTreemap::new(),
    };
    let named = pg_bulk::existing(c, owner, &selection.ids)
        .await?
        .into_iter()
        .map(|id| id as u64)
        .collect();
    Ok(combine(matched, selection, named))
}

/// The links a selection holds — those its filter `matched` but its exceptions, and the `named`
/// ones (the owner's among its ids) — and the ids it names that are not the owner's links.
fn combine(
    mut matched: RoaringTreemap,
    selection: &Selection,
    named: RoaringTreemap,
) -> (RoaringTreemap, Vec<Id>) {
    for id in &selection.except {
        matched.remove(*id as u64);
    }
    let missing = selection
        .ids
        .iter()
        .copied()
        .filter(|id| !named.contains(*id as u64))
        .collect();
    matched |= named;
    (matched, missing)
}

/// The links of a bulk update grouped by the earlier values that would put them back: one
/// group per distinct set of values, in the order first seen.
#[derive(Default)]
struct Earlier {
    groups: Vec<(LinkInput, Vec<Id>)>,
    index: HashMap<String, usize>,
}

impl Earlier {
    fn add(&mut self, id: Id, changes: &[Change], values: &[Value], zone: &TimeZone) {
        let key = format!("{values:?}");
        let groups = &mut self.groups;
        let at = *self.index.entry(key).or_insert_with(|| {
            groups.push((earlier_input(changes, values, zone), Vec::new()));
            groups.len() - 1
        });
        self.groups[at].1.push(id);
    }

    fn into_undo(self) -> Undo {
        if self.groups.is_empty() {
            Undo::Nothing
        } else {
            Undo::Revert(self.groups)
        }
    }
}

/// `ids` in chunks of [`CHUNK`], in id order.
fn chunks(ids: &RoaringTreemap) -> impl Iterator<Item = Vec<Id>> + '_ {
    let mut ids = ids.iter().map(|id| id as Id).peekable();
    std::iter::from_fn(move || {
        ids.peek()?;
        Some(ids.by_ref().take(CHUNK).collect())
    })
}

fn not_found(missing: Vec<Id>) -> Vec<BulkFailure> {
    missing
        .into_iter()
        .map(|id| BulkFailure {
            id,
            alias: None,
            error: Error::not_found(format!("link {id}")),
        })
        .collect()
}

/// The columns and values a validated bulk patch sets.
fn changes(patch: &LinkPatch) -> Vec<Change> {
    let mut changes = Vec::new();
    if let Some(on) = patch.disabled {
        changes.push(("disabled", Value::Integer(on.into())));
    }
    if let Some(on) = patch.public {
        changes.push(("public", Value::Integer(on.into())));
    }
    if let Some(space) = patch.space {
        changes.push(("space_id", space.map_or(Value::Null, Value::Integer)));
    }
    if let Some(ends) = patch.ends_at {
        changes.push((
            "ends_at",
            ends.map_or(Value::Null, |t| Value::Integer(t.as_second())),
        ));
    }
    if let Some(n) = patch.expiration_clicks {
        changes.push(("expiration_clicks", Value::Integer(n.into())));
    }
    if let Some(url) = &patch.expiration_url {
        changes.push((
            "expiration_url",
            url.clone().map_or(Value::Null, Value::Text),
        ));
    }
    changes
}

/// Earlier column values as the input that would put them back.
fn earlier_input(changes: &[Change], values: &[Value], zone: &TimeZone) -> LinkInput {
    let mut input = LinkInput::default();
    let text = |v: &Value| match v {
        Value::Integer(n) => n.to_string(),
        Value::Text(s) => s.clone(),
        _ => String::new(),
    };
    for ((column, _), value) in changes.iter().zip(values) {
        match *column {
            "disabled" => input.disabled = Some(text(value)),
            "public" => input.public = Some(text(value)),
            "space_id" => input.space = Some(text(value)),
            "ends_at" => {
                let (date, time) = match value {
                    Value::Integer(s) => Timestamp::from_second(*s)
                        .map(|t| format_expiry_input(t, zone))
                        .unwrap_or_default(),
                    _ => Default::default(),
                };
                input.expiration_date = Some(date);
                input.expiration_time = Some(time);
            }
            "expiration_clicks" => input.expiration_clicks = Some(text(value)),
            "expiration_url" => input.expiration_url = Some(text(value)),
            _ => {}
        }
    }
    input
}

/// A cancelled transaction becomes a report that says so; other failures stay failures.
fn finish(result: Result<BulkReport>, progress: &Progress, matched: u64) -> Result<BulkReport> {
    match result {
        Err(Error::Unavailable(m)) if m == CANCELLED && progress.is_cancelled() => Ok(BulkReport {
            matched,
            cancelled: true,
            ..BulkReport::default()
        }),
        other => other,
    }
}

fn check_cancel(progress: &Progress) -> Result<()> {
    if progress.is_cancelled() {
        Err(Error::Unavailable(CANCELLED.into()))
    } else {
        Ok(())
    }
}

/// Works through `ids` a chunk at a time, so a million links never sit in one statement: each
/// chunk is staged (`store::stage_ids`), handed to `work` with its size, and counted on
/// `progress`; a cancel is noticed between chunks.
fn in_staged_chunks(
    conn: &Connection,
    ids: &RoaringTreemap,
    progress: &Progress,
    mut work: impl FnMut(u64) -> Result<()>,
) -> Result<()> {
    let mut ids = ids.iter().map(|id| id as Id).peekable();
    while ids.peek().is_some() {
        check_cancel(progress)?;
        let chunk: Vec<Id> = ids.by_ref().take(CHUNK).collect();
        let n = chunk.len() as u64;
        store::stage_ids(conn, chunk)?;
        work(n)?;
        progress.advance(n);
    }
    Ok(())
}

impl LocalBackend {
    /// Checks a bulk update once, as a single update would be checked, including that its space
    /// is the owner's.
    async fn bulk_patch(&self, input: &LinkInput) -> Result<LinkPatch> {
        let zone = self.service.options().timezone.clone();
        BulkAction::Update(input.clone()).check(&zone)?;
        let patch = validate_link_input(input, Mode::Update, &zone)?;
        if let Some(Some(space)) = patch.space {
            let owner = self.owner_id;
            let mine = match self.service.pg() {
                Some(pg) => {
                    let client = pg.client().await?;
                    pg_spaces::get(&client, owner, space).await?.is_some()
                }
                None => self
                    .service
                    .db()?
                    .read(move |conn| spaces::get(conn, owner, space))
                    .await?
                    .is_some(),
            };
            if !mine {
                return Err(Error::field("space", NOT_YOUR_SPACE));
            }
        }
        Ok(patch)
    }

    pub(super) async fn bulk_local(
        &self,
        selection: &Selection,
        action: &BulkAction,
        progress: &Progress,
    ) -> Result<BulkReport> {
        match action {
            BulkAction::Delete => self.trash_links(selection, progress).await,
            BulkAction::Update(input) => {
                let patch = self.bulk_patch(input).await?;
                self.update_links(vec![(selection.clone(), patch)], progress)
                    .await
            }
        }
    }

    /// Applies each `(selection, patch)` in turn, all in one transaction.
    async fn update_links(
        &self,
        work: Vec<(Selection, LinkPatch)>,
        progress: &Progress,
    ) -> Result<BulkReport> {
        let owner = self.owner_id;
        let now = self.service.now();
        let zone = self.service.options().timezone.clone();
        if let Some(pg) = self.service.pg() {
            let result = update_links_pg(pg, owner, now, &zone, work, progress).await;
            return finish(result, progress, 0);
        }
        let watch = progress.clone();
        let result = self
            .service
            .db()?
            .write(move |tx| {
                let mut report = BulkReport::default();
                let mut resolved = Vec::new();
                for (selection, patch) in work {
                    let (ids, missing) = resolve(tx, owner, &selection, now)?;
                    report.matched += ids.len() + missing.len() as u64;
                    report.failed.extend(not_found(missing));
                    resolved.push((ids, changes(&patch)));
                }
                watch.set_total(resolved.iter().map(|(ids, _)| ids.len()).sum());
                let mut earlier = Earlier::default();
                for (ids, changes) in resolved {
                    in_staged_chunks(tx, &ids, &watch, |n| {
                        let changed = store::update_staged(tx, owner, &changes, now.as_second())?;
                        report.changed += changed.len() as u64;
                        report.unchanged += n - changed.len() as u64;
                        for (id, values) in changed {
                            earlier.add(id, &changes, &values, &zone);
                        }
                        Ok(())
                    })?;
                }
                report.undo = earlier.into_undo();
                Ok(report)
            })
            .await;
        finish(result, progress, 0)
    }

    /// Moves the selected links to the trash, in one new batch.
    async fn trash_links(&self, selection: &Selection, progress: &Progress) -> Result<BulkReport> {
        self.purge_due().await?;
        let owner = self.owner_id;
        let now = self.service.now();
        if let Some(pg) = self.service.pg() {
            let result = trash_links_pg(pg, owner, now, selection, progress).await;
            return finish(result, progress, 0);
        }
        let selection = selection.clone();
        let watch = progress.clone();
        let result = self
            .service
            .db()?
            .write_keeping_references(move |tx| {
                let (ids, missing) = resolve(tx, owner, &selection, now)?;
                let mut report = BulkReport {
                    matched: ids.len() + missing.len() as u64,
                    failed: not_found(missing),
                    ..BulkReport::default()
                };
                watch.set_total(ids.len());
                if ids.is_empty() {
                    return Ok(report);
                }
                let batch = trash::new_batch(tx, owner, now)?;
                in_staged_chunks(tx, &ids, &watch, |_| {
                    report.changed += trash::move_staged_links(tx, owner, batch)?;
                    Ok(())
                })?;
                report.undo = Undo::Restore { batch };
                Ok(report)
            })
            .await;
        finish(result, progress, 0)
    }

    pub(super) async fn revert_local(
        &self,
        undo: &Undo,
        progress: &Progress,
    ) -> Result<BulkReport> {
        match undo {
            Undo::Nothing => Ok(BulkReport::default()),
            Undo::Restore { batch } => {
                self.restore_scope(linkdeck_store::Scope::Batch(*batch), progress)
                    .await
            }
            Undo::Revert(groups) => {
                let mut work = Vec::new();
                for (input, ids) in groups {
                    let patch = self.bulk_patch(input).await?;
                    work.push((Selection::of_ids(ids.iter().copied()), patch));
                }
                self.update_links(work, progress).await
            }
            // Links deleted elsewhere than this trash (another backend's record).
            Undo::Recreate(_) => {
                crate::backend::bulk::revert_one_by_one(self, undo, progress).await
            }
        }
    }

    pub(super) async fn preview_local(&self, selection: &Selection, first: u32) -> Result<Preview> {
        let owner = self.owner_id;
        let now = self.service.now();
        if let Some(pg) = self.service.pg() {
            let mut client = pg.client().await?;
            let tx = pg::snapshot(&mut client).await?;
            let (ids, _) = resolve_pg(&tx, owner, selection, now).await?;
            let mut links = Vec::new();
            // Newest first, as lists are.
            for id in ids.iter().rev().take(first as usize) {
                links.extend(pg_links::get(&tx, owner, id as Id).await?);
            }
            return Ok(Preview {
                total: ids.len(),
                first: links.into_iter().map(|l| self.finish(l)).collect(),
            });
        }
        let selection = selection.clone();
        let links = self
            .service
            .db()?
            .read(move |conn| {
                let (ids, _) = resolve(conn, owner, &selection, now)?;
                let mut links = Vec::new();
                // Newest first, as lists are.
                for id in ids.iter().rev().take(first as usize) {
                    links.extend(link_store::get(conn, owner, id as Id)?);
                }
                Ok((ids.len(), links))
            })
            .await?;
        Ok(Preview {
            total: links.0,
            first: links.1.into_iter().map(|l| self.finish(l)).collect(),
        })
    }
}

/// [`LocalBackend::update_links`] on PostgreSQL: one transaction, a chunk of ids per
/// statement; a cancel between chunks rolls everything back.
async fn update_links_pg(
    pg: &Pg,
    owner: Id,
    now: Timestamp,
    zone: &TimeZone,
    work: Vec<(Selection, LinkPatch)>,
    progress: &Progress,
) -> Result<BulkReport> {
    let mut client = pg.client().await?;
    let tx = pg::write(&mut client).await?;
    let mut report = BulkReport::default();
    let mut resolved = Vec::new();
    for (selection, patch) in work {
        let (ids, missing) = resolve_pg(&tx, owner, &selection, now).await?;
        report.matched += ids.len() + missing.len() as u64;
        report.failed.extend(not_found(missing));
        resolved.push((ids, changes(&patch)));
    }
    progress.set_total(resolved.iter().map(|(ids, _)| ids.len()).sum());
    // Every link first, in id order (an undo's groups are not), then the work.
    let all = resolved
        .iter()
        .fold(RoaringTreemap::new(), |all, (ids, _)| all | ids);
    for chunk in chunks(&all) {
        check_cancel(progress)?;
        pg_bulk::lock(&tx, owner, &chunk).await?;
    }
    let mut earlier = Earlier::default();
    let mut moves = pg_bulk::SpaceMoves::default();
    for (ids, changes) in &resolved {
        for chunk in chunks(ids) {
            check_cancel(progress)?;
            let n = chunk.len() as u64;
            let changed = pg_bulk::update(&tx, owner, &chunk, changes, now.as_second()).await?;
            report.changed += changed.len() as u64;
            report.unchanged += n - changed.len() as u64;
            moves.note(changes, &changed);
            for (id, values) in changed {
                earlier.add(id, changes, &values, zone);
            }
            progress.advance(n);
        }
    }
    check_cancel(progress)?;
    moves.apply(&tx, owner).await?;
    report.undo = earlier.into_undo();
    tx.commit().await.map_err(pg::pg_error)?;
    Ok(report)
}

/// [`LocalBackend::trash_links`] on PostgreSQL: the selected links move to one new batch.
async fn trash_links_pg(
    pg: &Pg,
    owner: Id,
    now: Timestamp,
    selection: &Selection,
    progress: &Progress,
) -> Result<BulkReport> {
    let mut client = pg.client().await?;
    let tx = pg::write(&mut client).await?;
    let (ids, missing) = resolve_pg(&tx, owner, selection, now).await?;
    let mut report = BulkReport {
        matched: ids.len() + missing.len() as u64,
        failed: not_found(missing),
        ..BulkReport::default()
    };
    progress.set_total(ids.len());
    if ids.is_empty() {
        return Ok(report);
    }
    let batch = pg_trash::new_batch(&tx, owner, now).await?;
    // The links' rows are locked chunk by chunk in id order, their traffic's rows after all of
    // them (see `pg::traffic::shift`).
    let mut homes = Vec::new();
    for chunk in chunks(&ids) {
        check_cancel(progress)?;
        homes.extend(pg_trash::move_links(&tx, owner, &chunk, batch).await?);
        progress.advance(chunk.len() as u64);
    }
    report.changed = homes.len() as u64;
    check_cancel(progress)?;
    pg_trash::withdraw(&tx, owner, &homes).await?;
    report.undo = Undo::Restore { batch };
    tx.commit().await.map_err(pg::pg_error)?;
    Ok(report)
}
