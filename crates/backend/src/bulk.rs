//! Acting on many links at once: which links ([`Selection`]), what to do to them
//! ([`BulkAction`]), how far the work has come ([`Progress`], which also carries a cancel), what
//! came of it ([`BulkReport`]) and how to take it back ([`Undo`]).
//!
//! Any backend can do this link by link through the one-record methods ([`one_by_one`]): the
//! matching links are read first, then changed with a bounded number of requests in flight,
//! going on past a failure and listing it. That is what a remote server gets. The embedded
//! service does it in one transaction instead (`local::bulk`).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use futures::StreamExt;
use jiff::tz::TimeZone;

use super::Backend;
use linkdeck_domain::{
    Error, FieldErrors, Id, Link, LinkField, LinkInput, LinkQuery, Mode, PER_PAGE_MAX, Result,
    RuleInput, TargetType, format_expiry_input, retagged, tags_text, validate_link_input,
};

/// Requests a remote bulk operation keeps in flight: enough to hide the round trips, few enough
/// that a server's rate limit and a person's patience both survive.
pub const CONCURRENCY: usize = 8;

/// Which links an operation acts on: those `filter` admits (its search, status, space and domain;
/// sort and paging mean nothing here) apart from `except`, and `ids` besides. A filter is held as
/// a filter, so "every link that matches" costs the same for ten links or a million.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    pub filter: Option<LinkQuery>,
    pub except: BTreeSet<Id>,
    pub ids: BTreeSet<Id>,
}

impl Selection {
    pub fn of_ids(ids: impl IntoIterator<Item = Id>) -> Selection {
        Selection {
            ids: ids.into_iter().collect(),
            ..Selection::default()
        }
    }

    pub fn matching(filter: LinkQuery) -> Selection {
        Selection {
            filter: Some(filter),
            ..Selection::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.filter.is_none() && self.ids.is_empty()
    }
}

/// What a bulk operation does to each selected link.
// Made once per operation: boxing the input would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum BulkAction {
    /// Deletes them (into the trash, where the backend keeps one).
    Delete,
    /// Changes the given fields, the same for every link: only those that make sense for many
    /// links at once (see [`BulkAction::check`]).
    Update(LinkInput),
    /// Puts tags on and takes tags off, leaving each link's other tags as they are (tags as
    /// stored: see `linkdeck_domain::tag`).
    Tag {
        add: Vec<String>,
        remove: Vec<String>,
    },
}

/// The fields one value of which suits many links: an alias is unique, a destination or its
/// rules belong to one link, and a password is typed for one.
const BULK_FIELDS: &str = "disabled, public, space, tags, expiry (date and time), \
                           expiration_clicks and expiration_url";

impl BulkAction {
    /// Refuses fields that cannot be given to many links at once, and anything the service's
    /// rules refuse, before a single link is touched.
    pub fn check(&self, tz: &TimeZone) -> Result<()> {
        let input = match self {
            BulkAction::Delete => return Ok(()),
            BulkAction::Tag { add, remove } => return check_tags(add, remove),
            BulkAction::Update(input) => input,
        };
        let mut errors = FieldErrors::default();
        let options = input
            .options()
            .map(|(field, value)| (field, value.is_some()));
        let single = [
            (LinkField::Url, input.url.is_some()),
            (LinkField::Alias, input.alias.is_some()),
            (LinkField::Password, input.password.is_some()),
            (LinkField::Domain, input.domain.is_some()),
            (LinkField::TargetType, input.target_type.is_some()),
            (LinkField::Geo, input.geo.is_some()),
            (LinkField::Platform, input.platform.is_some()),
            (LinkField::Rotation, input.rotation.is_some()),
            (LinkField::Rules, input.rules.is_some()),
        ];
        for (field, given) in single.into_iter().chain(options) {
            if given {
                errors.add(
                    field.name(),
                    format!("cannot be given to many links at once (only {BULK_FIELDS})"),
                );
            }
        }
        if *input == LinkInput::default() {
            errors.add(
                "fields",
                format!("nothing to change: give one of {BULK_FIELDS}"),
            );
        }
        if let Err(invalid) = validate_link_input(input, Mode::Update, tz) {
            for (field, messages) in invalid.iter() {
                for message in messages {
                    errors.add(field, message.clone());
                }
            }
        }
        errors.into_result(()).map_err(Error::from)
    }

    /// A few words for toasts and prompts: "delete", "disable", "move to a space".
    pub fn verb(&self) -> String {
        let input = match self {
            BulkAction::Delete => return "delete".into(),
            BulkAction::Tag { add, remove } => return tag_verb(add, remove),
            BulkAction::Update(input) => input,
        };
        let mut parts = Vec::new();
        match input.disabled.as_deref() {
            Some("1") => parts.push("disable".to_owned()),
            Some(_) => parts.push("enable".to_owned()),
            None => {}
        }
        match input.public.as_deref() {
            Some("1") => parts.push("make public".to_owned()),
            Some(_) => parts.push("make private".to_owned()),
            None => {}
        }
        match input.space.as_deref() {
            Some("") => parts.push("take out of spaces".to_owned()),
            Some(_) => parts.push("move to a space".to_owned()),
            None => {}
        }
        match input.expiration_date.as_deref() {
            Some("") => parts.push("clear the expiry of".to_owned()),
            Some(_) => parts.push("set the expiry of".to_owned()),
            None => {}
        }
        if input.expiration_clicks.is_some() {
            parts.push("set the click limit of".to_owned());
        }
        if input.expiration_url.is_some() {
            parts.push("set the expiration URL of".to_owned());
        }
        if input.tags.is_some() {
            parts.push("set the tags of".to_owned());
        }
        if parts.is_empty() {
            "change".into()
        } else {
            parts.join(" and ")
        }
    }
}

/// Tags to put on and take off: each as stored, at least one given, none in both.
fn check_tags(add: &[String], remove: &[String]) -> Result<()> {
    let mut errors = FieldErrors::default();
    for (field, tags) in [("add", add), ("remove", remove)] {
        for t in tags {
            if linkdeck_domain::tag(t).as_deref() != Ok(t.as_str()) {
                errors.add(field, format!("{t:?} is not a tag as stored"));
            }
        }
    }
    if add.is_empty() && remove.is_empty() {
        errors.add(
            "tags",
            "nothing to change: give a tag to put on or take off",
        );
    }
    if let Some(both) = add.iter().find(|t| remove.contains(t)) {
        errors.add("tags", format!("{both:?} is both put on and taken off"));
    }
    errors.into_result(()).map_err(Error::from)
}

/// "tag with promo and untag old", for toasts and prompts.
fn tag_verb(add: &[String], remove: &[String]) -> String {
    let mut parts = Vec::new();
    if !add.is_empty() {
        parts.push(format!("tag with {}", add.join(", ")));
    }
    if !remove.is_empty() {
        parts.push(format!("untag {}", remove.join(", ")));
    }
    parts.join(" and ")
}

/// How far a long operation has come, shared between the work and whoever watches it (the app's
/// progress dialog, a CLI progress bar through [`Progress::with_callback`]). Cancelling asks the
/// work to stop at its next step: the embedded service then rolls back; a remote operation stops
/// sending and reports what was done.
#[derive(Clone, Default)]
pub struct Progress(Arc<ProgressInner>);

#[derive(Default)]
struct ProgressInner {
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
    callback: Option<Callback>,
}

type Callback = Box<dyn Fn(u64, u64) + Send + Sync>;

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (done, total) = self.get();
        write!(f, "Progress({done}/{total})")
    }
}

impl PartialEq for Progress {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Calls `f(done, total)` at every step.
    pub fn with_callback(f: impl Fn(u64, u64) + Send + Sync + 'static) -> Progress {
        Progress(Arc::new(ProgressInner {
            callback: Some(Box::new(f)),
            ..ProgressInner::default()
        }))
    }

    /// `(done, total)`.
    pub fn get(&self) -> (u64, u64) {
        (
            self.0.done.load(Ordering::Relaxed),
            self.0.total.load(Ordering::Relaxed),
        )
    }

    pub fn set_total(&self, total: u64) {
        self.0.total.store(total, Ordering::Relaxed);
        self.0.done.store(0, Ordering::Relaxed);
        self.notify();
    }

    pub fn advance(&self, by: u64) {
        self.0.done.fetch_add(by, Ordering::Relaxed);
        self.notify();
    }

    fn notify(&self) {
        if let Some(f) = &self.0.callback {
            let (done, total) = self.get();
            f(done, total);
        }
    }

    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }
}

/// A link the operation could not act on, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkFailure {
    pub id: Id,
    /// When known.
    pub alias: Option<String>,
    pub error: Error,
}

impl std::fmt::Display for BulkFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.alias {
            Some(alias) => write!(f, "link {} ({alias}): {}", self.id, self.error),
            None => write!(f, "link {}: {}", self.id, self.error),
        }
    }
}

/// What a bulk operation (or an undo) did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BulkReport {
    /// The links the selection held when the work began.
    pub matched: u64,
    /// Links changed (or deleted, or restored).
    pub changed: u64,
    /// Links that already were as asked: left alone.
    pub unchanged: u64,
    pub failed: Vec<BulkFailure>,
    /// Stopped on request: on the embedded service nothing was changed.
    pub cancelled: bool,
    /// How to take back what was done.
    pub undo: Undo,
    /// What could not be put back by an undo (a password the API never returns, clicks a
    /// recreated link starts without).
    pub notes: Vec<String>,
}

impl BulkReport {
    /// One line: "12 links disabled, 3 already were, 1 failed".
    pub fn summary(&self, done: &str) -> String {
        let n = self.changed;
        let mut parts = vec![format!(
            "{n} {} {done}",
            if n == 1 { "link" } else { "links" }
        )];
        match self.unchanged {
            0 => {}
            1 => parts.push("1 already was".into()),
            n => parts.push(format!("{n} already were")),
        }
        if !self.failed.is_empty() {
            parts.push(format!("{} failed", self.failed.len()));
        }
        if self.cancelled {
            parts.push("cancelled".into());
        }
        parts.join(", ")
    }
}

/// How to take a change back. Made by the operation that did it, carried out by
/// [`Backend::revert`].
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Undo {
    #[default]
    Nothing,
    /// Put these fields back on these links: one group per earlier value.
    Revert(Vec<(LinkInput, Vec<Id>)>),
    /// Bring back what one trash batch holds, ids, clicks and traffic included (the embedded
    /// service).
    Restore { batch: Id },
    /// Create these links again from their last state (a server without a trash): new ids, no
    /// clicks, no password.
    Recreate(Vec<Link>),
}

impl Undo {
    pub fn is_nothing(&self) -> bool {
        matches!(self, Undo::Nothing)
    }
}

/// The first links of a selection and how many it holds, for a dry run or a confirmation.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub total: u64,
    pub first: Vec<Link>,
}

/// Reads every selected link (records are needed to know what to put back). Ids that are not
/// found become failures.
pub async fn selected_links<B: Backend + ?Sized>(
    backend: &B,
    selection: &Selection,
    failures: &mut Vec<BulkFailure>,
) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    let mut seen = BTreeSet::new();
    if let Some(filter) = &selection.filter {
        // Every page is read before anything changes: changing as we go would move links
        // between pages (a disabled link leaves the "active" filter) and skip some.
        let mut query = LinkQuery {
            page: 1,
            per_page: PER_PAGE_MAX,
            sort: linkdeck_domain::Sort::Asc,
            ..filter.clone()
        };
        loop {
            let page = backend.list_links(&query).await?;
            let more = page.has_next() && !page.items.is_empty();
            for link in page.items {
                if !selection.except.contains(&link.id) && seen.insert(link.id) {
                    links.push(link);
                }
            }
            if !more {
                break;
            }
            query.page += 1;
        }
    }
    let wanted: Vec<Id> = selection
        .ids
        .iter()
        .copied()
        .filter(|id| !seen.contains(id))
        .collect();
    let mut found = futures::stream::iter(wanted)
        .map(|id| async move { (id, backend.show_link(id).await) })
        .buffer_unordered(CONCURRENCY);
    while let Some((id, result)) = found.next().await {
        match result {
            Ok(link) => links.push(link),
            Err(error) => failures.push(BulkFailure {
                id,
                alias: None,
                error,
            }),
        }
    }
    Ok(links)
}

/// [`Backend::preview`] through the one-record methods.
pub async fn preview_by_listing<B: Backend + ?Sized>(
    backend: &B,
    selection: &Selection,
    first: u32,
) -> Result<Preview> {
    if selection.except.is_empty()
        && selection.ids.is_empty()
        && let Some(filter) = &selection.filter
    {
        let page = backend
            .list_links(&LinkQuery {
                page: 1,
                per_page: first.clamp(linkdeck_domain::PER_PAGE_MIN, PER_PAGE_MAX),
                ..filter.clone()
            })
            .await?;
        let total = page.total;
        let mut items = page.items;
        items.truncate(first as usize);
        return Ok(Preview {
            total,
            first: items,
        });
    }
    let mut failures = Vec::new();
    let mut links = selected_links(backend, selection, &mut failures).await?;
    let total = links.len() as u64;
    links.truncate(first as usize);
    Ok(Preview {
        total,
        first: links,
    })
}

/// [`Backend::bulk`] through the one-record methods: every selected link is read, then those
/// not already as asked are changed (or deleted) with up to [`CONCURRENCY`] requests in flight.
/// A failure is listed and the work goes on; a cancel stops new requests.
pub async fn one_by_one<B: Backend + ?Sized>(
    backend: &B,
    selection: &Selection,
    action: &BulkAction,
    progress: &Progress,
) -> Result<BulkReport> {
    action.check(&backend.input_zone())?;
    let mut report = BulkReport::default();
    let links = selected_links(backend, selection, &mut report.failed).await?;
    report.matched = links.len() as u64 + report.failed.len() as u64;
    progress.set_total(links.len() as u64);
    let zone = backend.input_zone();
    let work: Vec<(Link, Option<LinkInput>)> = links
        .into_iter()
        .map(|link| {
            let before = match action {
                BulkAction::Delete => None,
                BulkAction::Update(input) => Some(earlier_values(&link, input, &zone)),
                BulkAction::Tag { .. } => Some(LinkInput {
                    tags: Some(tags_text(&link.tags)),
                    ..LinkInput::default()
                }),
            };
            (link, before)
        })
        .collect();
    let mut revert: Vec<(LinkInput, Vec<Id>)> = Vec::new();
    let mut groups: HashMap<String, usize> = HashMap::new();
    let mut recreate = Vec::new();
    let mut results = futures::stream::iter(work)
        .map(|(link, before)| async move {
            if progress.is_cancelled() {
                return (link, before, None);
            }
            let result = match (action, &before) {
                (BulkAction::Delete, _) => backend.delete_link(link.id).await.map(|()| true),
                (BulkAction::Update(input), Some(before)) => {
                    if earlier_values_equal(before, input) {
                        Ok(false)
                    } else {
                        backend.update_link(link.id, input).await.map(|_| true)
                    }
                }
                (BulkAction::Tag { add, remove }, _) => {
                    let after = retagged(&link.tags, add, remove);
                    if after == link.tags {
                        Ok(false)
                    } else {
                        let input = LinkInput {
                            tags: Some(tags_text(&after)),
                            ..LinkInput::default()
                        };
                        backend.update_link(link.id, &input).await.map(|_| true)
                    }
                }
                (BulkAction::Update(_), None) => Ok(false),
            };
            (link, before, Some(result))
        })
        .buffer_unordered(CONCURRENCY);
    while let Some((link, before, result)) = results.next().await {
        match result {
            None => report.cancelled = true,
            Some(Ok(true)) => {
                report.changed += 1;
                match before {
                    Some(before) => {
                        let key = serde_json::to_string(&before).unwrap_or_default();
                        let at = *groups.entry(key).or_insert_with(|| {
                            revert.push((before, Vec::new()));
                            revert.len() - 1
                        });
                        revert[at].1.push(link.id);
                    }
                    None => recreate.push(link),
                }
            }
            Some(Ok(false)) => report.unchanged += 1,
            Some(Err(error)) => report.failed.push(BulkFailure {
                id: link.id,
                alias: Some(link.alias),
                error,
            }),
        }
        progress.advance(1);
    }
    report.undo = match action {
        BulkAction::Delete if !recreate.is_empty() => Undo::Recreate(recreate),
        BulkAction::Update(_) | BulkAction::Tag { .. } if !revert.is_empty() => {
            Undo::Revert(revert)
        }
        _ => Undo::Nothing,
    };
    Ok(report)
}

/// The values `link` has for the fields `input` sets, as an input that would put them back.
pub fn earlier_values(link: &Link, input: &LinkInput, zone: &TimeZone) -> LinkInput {
    let flag = |on: bool| if on { "1" } else { "0" }.to_owned();
    let mut before = LinkInput::default();
    if input.disabled.is_some() {
        before.disabled = Some(flag(link.disabled));
    }
    if input.public.is_some() {
        before.public = Some(flag(link.public));
    }
    if input.space.is_some() {
        before.space = Some(
            link.space
                .as_ref()
                .map(|s| s.id.to_string())
                .unwrap_or_default(),
        );
    }
    if input.expiration_date.is_some() || input.expiration_time.is_some() {
        let (date, time) = link
            .ends_at
            .map(|at| format_expiry_input(at, zone))
            .unwrap_or_default();
        before.expiration_date = Some(date);
        before.expiration_time = Some(time);
    }
    if input.expiration_clicks.is_some() {
        before.expiration_clicks = Some(link.expiration_clicks.to_string());
    }
    if input.expiration_url.is_some() {
        before.expiration_url = Some(link.expiration_url.clone().unwrap_or_default());
    }
    if input.tags.is_some() {
        before.tags = Some(tags_text(&link.tags));
    }
    before
}

/// Whether a link's earlier values already are what `input` asks (so nothing needs sending).
fn earlier_values_equal(before: &LinkInput, input: &LinkInput) -> bool {
    let norm = |v: &Option<String>| v.as_deref().map(str::trim).map(str::to_owned);
    let clicks = |v: &Option<String>| norm(v).map(|s| if s.is_empty() { "0".into() } else { s });
    norm(&before.disabled) == norm(&input.disabled).map(|v| flag_of(&v))
        && norm(&before.public) == norm(&input.public).map(|v| flag_of(&v))
        && norm(&before.space) == norm(&input.space)
        && norm(&before.expiration_date) == norm(&input.expiration_date)
        && norm(&before.expiration_time) == norm(&input.expiration_time)
        && clicks(&before.expiration_clicks) == clicks(&input.expiration_clicks)
        && norm(&before.expiration_url) == norm(&input.expiration_url)
        && tags(&before.tags) == tags(&input.tags)
}

/// A text of tags as the tag rules read it, `None` when not given.
fn tags(v: &Option<String>) -> Option<Vec<String>> {
    v.as_deref()
        .map(|t| linkdeck_domain::tags_of_text(t, "tags", &mut FieldErrors::default()))
}

/// `1`/`true`/`yes`/`on` → `1`, anything else → `0`, as the service reads a flag.
fn flag_of(v: &str) -> String {
    if matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on") {
        "1".into()
    } else {
        "0".into()
    }
}

/// [`Backend::revert`] through the one-record methods.
pub async fn revert_one_by_one<B: Backend + ?Sized>(
    backend: &B,
    undo: &Undo,
    progress: &Progress,
) -> Result<BulkReport> {
    let mut report = BulkReport::default();
    match undo {
        Undo::Nothing => {}
        Undo::Restore { .. } => {
            return Err(Error::Unavailable(
                "this backend keeps no trash to restore from".into(),
            ));
        }
        Undo::Revert(groups) => {
            // Owned items: a stream of borrowed ones is not `Send` for every lifetime.
            let work: Vec<(LinkInput, Id)> = groups
                .iter()
                .flat_map(|(input, ids)| ids.iter().map(move |id| (input.clone(), *id)))
                .collect();
            report.matched = work.len() as u64;
            progress.set_total(report.matched);
            let mut results = futures::stream::iter(work)
                .map(|(input, id)| async move {
                    if progress.is_cancelled() {
                        return (id, None);
                    }
                    (id, Some(backend.update_link(id, &input).await))
                })
                .buffer_unordered(CONCURRENCY);
            while let Some((id, result)) = results.next().await {
                match result {
                    None => report.cancelled = true,
                    Some(Ok(_)) => report.changed += 1,
                    Some(Err(error)) => report.failed.push(BulkFailure {
                        id,
                        alias: None,
                        error,
                    }),
                }
                progress.advance(1);
            }
        }
        Undo::Recreate(links) => {
            report.matched = links.len() as u64;
            progress.set_total(report.matched);
            let zone = backend.input_zone();
            let mut results = futures::stream::iter(links.to_vec())
                .map(|link| {
                    let input = recreate_input(&link, &zone);
                    async move {
                        if progress.is_cancelled() {
                            return (link, None);
                        }
                        (link, Some(backend.create_link(&input).await))
                    }
                })
                .buffer_unordered(CONCURRENCY);
            let mut passwords = 0;
            let mut clicks = 0;
            while let Some((link, result)) = results.next().await {
                match result {
                    None => report.cancelled = true,
                    Some(Ok(_)) => {
                        report.changed += 1;
                        passwords += usize::from(link.password);
                        clicks += usize::from(link.clicks > 0);
                    }
                    Some(Err(error)) => report.failed.push(BulkFailure {
                        id: link.id,
                        alias: Some(link.alias.clone()),
                        error,
                    }),
                }
                progress.advance(1);
            }
            if passwords > 0 {
                report.notes.push(format!(
                    "{passwords} had a password, which the server never gives back: set it again"
                ));
            }
            if clicks > 0 {
                report
                    .notes
                    .push(format!("{clicks} start again from 0 clicks under a new id"));
            }
        }
    }
    Ok(report)
}

/// A create request that makes `link` again as it was (its password aside: only a hash
/// exists, and a server never returns even that).
pub fn recreate_input(link: &Link, zone: &TimeZone) -> LinkInput {
    let flag = |on: bool| Some(if on { "1" } else { "0" }.to_owned());
    let (date, time) = link
        .ends_at
        .map(|at| format_expiry_input(at, zone))
        .map_or((None, None), |(d, t)| (Some(d), Some(t)));
    let rules = |rules: &[linkdeck_domain::TargetRule]| {
        rules
            .iter()
            .map(|r| RuleInput::new(r.key.clone(), r.value.clone()))
            .collect::<Vec<_>>()
    };
    let mut input = LinkInput {
        url: Some(link.url.clone()),
        alias: Some(link.alias.clone()),
        password: None,
        space: link.space.as_ref().map(|s| s.id.to_string()),
        domain: link.domain.as_ref().map(|d| d.id.to_string()),
        disabled: flag(link.disabled),
        public: flag(link.public),
        expiration_url: link.expiration_url.clone(),
        expiration_date: date,
        expiration_time: time,
        expiration_clicks: (link.expiration_clicks > 0).then(|| link.expiration_clicks.to_string()),
        target_type: (link.target_type != TargetType::None)
            .then(|| u8::from(link.target_type).to_string()),
        geo: (link.target_type == TargetType::Geo).then(|| rules(&link.geo)),
        platform: (link.target_type == TargetType::Platform).then(|| rules(&link.platform)),
        rotation: (link.target_type == TargetType::Rotation)
            .then(|| link.rotation.iter().map(RuleInput::value).collect()),
        tags: (!link.tags.is_empty()).then(|| tags_text(&link.tags)),
        ..LinkInput::default()
    };
    input.set_options(&link.options);
    input
}

/// An update that puts back the fields `request` changed on `link`, and whether the password
/// was among them and cannot come back (only its hash was ever stored).
pub fn revert_of_edit(link: &Link, request: &LinkInput, zone: &TimeZone) -> (LinkInput, bool) {
    let was = recreate_input(link, zone);
    let or_empty = |v: Option<String>| Some(v.unwrap_or_default());
    let mut back = LinkInput::default();
    if request.url.is_some() {
        back.url = was.url.clone();
    }
    if request.alias.is_some() {
        back.alias = was.alias.clone();
    }
    if request.space.is_some() {
        back.space = or_empty(was.space.clone());
    }
    if request.disabled.is_some() {
        back.disabled = was.disabled.clone();
    }
    if request.public.is_some() {
        back.public = was.public.clone();
    }
    if request.expiration_url.is_some() {
        back.expiration_url = or_empty(was.expiration_url.clone());
    }
    if request.expiration_date.is_some() || request.expiration_time.is_some() {
        back.expiration_date = or_empty(was.expiration_date.clone());
        back.expiration_time = or_empty(was.expiration_time.clone());
    }
    if request.expiration_clicks.is_some() {
        back.expiration_clicks = Some(was.expiration_clicks.clone().unwrap_or_else(|| "0".into()));
    }
    if request.tags.is_some() {
        back.tags = or_empty(was.tags.clone());
    }
    if request.target_type.is_some() {
        back.target_type = Some(was.target_type.clone().unwrap_or_else(|| "0".into()));
        back.geo = Some(was.geo.clone().unwrap_or_default());
        back.platform = Some(was.platform.clone().unwrap_or_default());
        back.rotation = Some(was.rotation.clone().unwrap_or_default());
    }
    back.restore_options(request, &link.options);
    let mut lost = false;
    if request.password.is_some() {
        if link.password {
            lost = true;
        } else {
            // It had none: taking the new one away is putting it back.
            back.password = Some(String::new());
        }
    }
    (back, lost)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(input: LinkInput) -> BulkAction {
        BulkAction::Update(input)
    }

    #[test]
    fn only_fields_that_suit_many_links_are_accepted() {
        let zone = TimeZone::UTC;
        let ok = update(LinkInput {
            disabled: Some("1".into()),
            space: Some(String::new()),
            ..LinkInput::default()
        });
        assert!(ok.check(&zone).is_ok());
        let err = update(LinkInput {
            alias: Some("same".into()),
            url: Some("https://example.com".into()),
            ..LinkInput::default()
        })
        .check(&zone)
        .unwrap_err();
        let fields = err.field_errors().unwrap();
        assert!(
            fields.get("alias").is_some() && fields.get("url").is_some(),
            "{err}"
        );
        assert!(update(LinkInput::default()).check(&zone).is_err());
        let bad_date = update(LinkInput {
            expiration_date: Some("tomorrow".into()),
            expiration_time: Some("10:00".into()),
            ..LinkInput::default()
        });
        assert!(bad_date.check(&zone).is_err());
    }

    #[test]
    fn verbs_name_what_changes() {
        assert_eq!(BulkAction::Delete.verb(), "delete");
        let disable = update(LinkInput {
            disabled: Some("1".into()),
            ..LinkInput::default()
        });
        assert_eq!(disable.verb(), "disable");
    }

    #[test]
    fn progress_counts_and_cancels() {
        let seen = Arc::new(AtomicU64::new(0));
        let s = seen.clone();
        let progress = Progress::with_callback(move |done, _| s.store(done, Ordering::Relaxed));
        progress.set_total(3);
        progress.advance(2);
        assert_eq!(progress.get(), (2, 3));
        assert_eq!(seen.load(Ordering::Relaxed), 2);
        assert!(!progress.is_cancelled());
        progress.clone().cancel();
        assert!(progress.is_cancelled());
    }
}
