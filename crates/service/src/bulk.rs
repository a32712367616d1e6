//! Bulk work on the embedded service: every selected link changed (or moved to the trash) in
//! one transaction, a chunk of ids per statement, with progress; a cancel rolls it all back.
//! The service's rules are those of a single update: the same validation, the same ownership
//! checks, `updated_at` set.

use std::collections::HashMap;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use linkdeck_store::Tx;
use linkdeck_store::bulk::{Change, Value};
use linkdeck_store::words::NOT_YOUR_SPACE;
use roaring::RoaringTreemap;

use super::LocalBackend;
use super::links::list_filter;
use super::webhooks::link_events;
use linkdeck_backend::bulk::{
    BulkAction, BulkFailure, BulkReport, Preview, Progress, Selection, Undo,
};
use linkdeck_domain::{
    Error, Id, LinkInput, LinkPatch, LinkQuery, Mode, Result, SpaceFilter, SpaceSet, WebhookEvent,
    format_expiry_input, retagged, tags_text, validate_link_input,
};
use linkdeck_store::{parse_tags, tags_json};

/// What a cancelled transaction answers inside; never seen outside (see [`finish`]).
const CANCELLED: &str = "cancelled";

/// The links `selection` holds, and the ids it names that are not the owner's links.
fn resolve(
    tx: &dyn Tx,
    whose: Whose,
    selection: &Selection,
    now: Timestamp,
) -> Result<(RoaringTreemap, Vec<Id>)> {
    let owner = whose.owner;
    let mut ids = match &selection.filter {
        // Every match: no offset, and 0 is no limit.
        Some(query) => tx.matching_ids(&list_filter(owner, query, now, 0, 0))?,
        None => RoaringTreemap::new(),
    };
    let mut named = tx.owned_links(owner, &selection.ids)?;
    if let Some(spaces) = whose.reach {
        // Read in the transaction that writes: a link moved out of the key's spaces since the
        // key's wrapper looked is not found.
        if !ids.is_empty() {
            let within = LinkQuery {
                space: SpaceFilter::Among(spaces),
                ..LinkQuery::default()
            };
            ids &= tx.matching_ids(&list_filter(owner, &within, now, 0, 0))?;
        }
        let mut outside = Vec::new();
        for id in named.iter().map(|id| id as Id) {
            let space = tx.link_row(owner, id)?.and_then(|row| row.space_id);
            if !super::reaches(whose.reach, space) {
                outside.push(id as u64);
            }
        }
        for id in outside {
            named.remove(id);
        }
    }
    Ok(combine(ids, selection, named))
}

/// Whose links a bulk change may touch: the owner's, within the reach of a limited key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Whose {
    owner: Id,
    reach: Option<SpaceSet>,
}

impl LocalBackend {
    fn whose(&self) -> Whose {
        Whose {
            owner: self.owner_id,
            reach: self.reach,
        }
    }
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

/// The start of work on a selection's links, one by one: the links it holds, and a report that
/// counts them and lists the ids that are not the owner's links; `watch` is told how many.
fn begin(
    tx: &dyn Tx,
    whose: Whose,
    selection: &Selection,
    now: Timestamp,
    watch: &Progress,
) -> Result<(RoaringTreemap, BulkReport)> {
    check_cancel(watch)?;
    let (ids, missing) = resolve(tx, whose, selection, now)?;
    let report = BulkReport {
        matched: ids.len() + missing.len() as u64,
        failed: not_found(missing),
        ..BulkReport::default()
    };
    watch.set_total(ids.len());
    Ok((ids, report))
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
    if let Some(tags) = &patch.tags {
        changes.push(("tags", tags_json(tags).map_or(Value::Null, Value::Text)));
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
            "tags" => {
                let stored = match value {
                    Value::Text(json) => parse_tags(Some(json.clone())),
                    _ => Vec::new(),
                };
                input.tags = Some(tags_text(&stored));
            }
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

/// What a store is told as each chunk is done: `progress` moves, and a cancel ends the work.
fn step(progress: &Progress) -> impl FnMut(u64) -> Result<()> + '_ {
    move |n| {
        progress.advance(n);
        check_cancel(progress)
    }
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
            let mine = self
                .store()
                .read(move |tx| tx.space_is_mine(owner, space))
                .await?;
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
            BulkAction::Tag { add, remove } => {
                action.check(&self.service.options().timezone)?;
                self.tag_links(selection, add, remove, progress).await
            }
        }
    }

    /// Puts `add` on and takes `remove` off every selected link, in one transaction; the undo
    /// puts each link's earlier tags back, one group per earlier set.
    async fn tag_links(
        &self,
        selection: &Selection,
        add: &[String],
        remove: &[String],
        progress: &Progress,
    ) -> Result<BulkReport> {
        let (owner, whose) = (self.owner_id, self.whose());
        let now = self.service.now();
        let (selection, add, remove) = (selection.clone(), add.to_vec(), remove.to_vec());
        let watch = progress.clone();
        let result = self
            .store()
            .write(move |tx| {
                let (ids, mut report) = begin(tx, whose, &selection, now, &watch)?;
                let mut earlier: Vec<(LinkInput, Vec<Id>)> = Vec::new();
                let mut groups: HashMap<Vec<String>, usize> = HashMap::new();
                let mut step = step(&watch);
                for id in ids.iter().map(|id| id as Id) {
                    let Some(row) = tx.link_row(owner, id)? else {
                        continue;
                    };
                    let after = retagged(&row.tags, &add, &remove);
                    if after != row.tags {
                        tx.set_tags(id, &after)?;
                        link_events(tx, owner, [id], WebhookEvent::Updated, now)?;
                        report.changed += 1;
                        let at = *groups.entry(row.tags.clone()).or_insert_with(|| {
                            let input = LinkInput {
                                tags: Some(tags_text(&row.tags)),
                                ..LinkInput::default()
                            };
                            earlier.push((input, Vec::new()));
                            earlier.len() - 1
                        });
                        earlier[at].1.push(id);
                    }
                    step(1)?;
                }
                report.unchanged = ids.len() - report.changed;
                if !earlier.is_empty() {
                    report.undo = Undo::Revert(earlier);
                }
                Ok(report)
            })
            .await;
        finish(result, progress, 0)
    }

    /// Applies each `(selection, patch)` in turn, all in one transaction.
    async fn update_links(
        &self,
        work: Vec<(Selection, LinkPatch)>,
        progress: &Progress,
    ) -> Result<BulkReport> {
        let (owner, whose) = (self.owner_id, self.whose());
        let now = self.service.now();
        let zone = self.service.options().timezone.clone();
        let watch = progress.clone();
        let result = self
            .store()
            .write(move |tx| {
                check_cancel(&watch)?;
                let mut report = BulkReport::default();
                let mut groups = Vec::new();
                for (selection, patch) in work {
                    let (ids, missing) = resolve(tx, whose, &selection, now)?;
                    report.matched += ids.len() + missing.len() as u64;
                    report.failed.extend(not_found(missing));
                    groups.push((ids, changes(&patch)));
                }
                let total = groups.iter().map(|(ids, _)| ids.len()).sum::<u64>();
                watch.set_total(total);
                let done = tx.update_links(owner, &groups, now, &mut step(&watch))?;
                let mut earlier = Earlier::default();
                for ((_, changes), changed) in groups.iter().zip(done) {
                    report.changed += changed.len() as u64;
                    link_events(
                        tx,
                        owner,
                        changed.iter().map(|(id, _)| *id),
                        WebhookEvent::Updated,
                        now,
                    )?;
                    for (id, values) in changed {
                        earlier.add(id, changes, &values, &zone);
                    }
                }
                report.unchanged = total - report.changed;
                report.undo = earlier.into_undo();
                Ok(report)
            })
            .await;
        finish(result, progress, 0)
    }

    /// Moves the selected links to the trash, in one new batch.
    async fn trash_links(&self, selection: &Selection, progress: &Progress) -> Result<BulkReport> {
        self.purge_due().await?;
        let (owner, whose) = (self.owner_id, self.whose());
        let now = self.service.now();
        let selection = selection.clone();
        let watch = progress.clone();
        let result = self
            .store()
            .write_unchecked(move |tx| {
                let (ids, mut report) = begin(tx, whose, &selection, now, &watch)?;
                if ids.is_empty() {
                    return Ok(report);
                }
                link_events(
                    tx,
                    owner,
                    ids.iter().map(|id| id as Id),
                    WebhookEvent::Deleted,
                    now,
                )?;
                let batch = tx.new_trash_batch(owner, now)?;
                report.changed = tx.trash_links(owner, &ids, batch, &mut step(&watch))?;
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
                linkdeck_backend::bulk::revert_one_by_one(self, undo, progress).await
            }
        }
    }

    pub(super) async fn preview_local(&self, selection: &Selection, first: u32) -> Result<Preview> {
        let (owner, whose) = (self.owner_id, self.whose());
        let now = self.service.now();
        let selection = selection.clone();
        let (total, links) = self
            .store()
            .snapshot(move |tx| {
                let (ids, _) = resolve(tx, whose, &selection, now)?;
                let mut links = Vec::new();
                // Newest first, as lists are.
                for id in ids.iter().rev().take(first as usize) {
                    links.extend(tx.link(owner, id as Id)?);
                }
                Ok((ids.len(), links))
            })
            .await?;
        Ok(Preview {
            total,
            first: links.into_iter().map(|l| self.finish(l)).collect(),
        })
    }
}
