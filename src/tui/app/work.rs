//! Acting on links beyond the one under the cursor: marks (`space`, `V`, `*`, `esc`), the
//! actions that take them (delete, disable/enable, public, move to a space, expiry), the work in
//! flight with its progress dialog, undo, space deletes and the Trash pane. Kept apart from
//! `app.rs`, which routes keys and draws; this half decides what a key means for the data.

use jiff::tz::TimeZone;

use super::{App, Pane};
use crate::backend::{BulkAction, BulkReport, Progress, Selection, Trashed};
use crate::domain::{Link, LinkInput, Space, TAG_SEPARATOR, name_excerpt, tag};
use crate::tui::errors::{Failed, describe};
use crate::tui::format;
use crate::tui::keys::Action;
use crate::tui::msg::{Command, Msg};
use crate::tui::named::Named;
use crate::tui::popups::{
    Asks, ConfirmAction, Menu, Modal, Pick, Picker, PickerKind, ProgressDialog, Prompt, ToastKind,
    Work,
};
use crate::tui::undo::{DEPTH, UndoEntry, UndoWhat};
use crate::tui::webhooks::WebhooksPopup;

/// What a refused answer to a prompt says: its first field's messages, or the whole error.
fn first_problem(e: &crate::domain::Error) -> String {
    e.field_errors()
        .and_then(|f| f.iter().next().map(|(_, m)| m.join("; ")))
        .unwrap_or_else(|| e.to_string())
}

/// The prompt again, with what was typed and why it was refused.
fn asked_again(
    asks: Asks,
    reason: &str,
    text: String,
    selection: Selection,
    what: String,
    many: bool,
) -> Modal {
    let title = match asks {
        Asks::Expiry => format!("Expiry of {what}"),
        Asks::Tags => format!("Tags of {what}"),
        Asks::TagName => return tag_name_prompt(&what, text, Some(reason)),
    };
    Modal::Prompt(Box::new(Prompt {
        asks,
        title,
        hint: format!("✗ {reason}"),
        field: crate::tui::form::TextField::new(text),
        selection,
        what,
        many,
    }))
}

/// The prompt for a new name of `tag`, holding `text`, and why the last one was refused.
pub(super) fn tag_name_prompt(tag: &str, text: String, refused: Option<&str>) -> Modal {
    Modal::Prompt(Box::new(Prompt {
        asks: Asks::TagName,
        title: format!("Rename the tag {}", name_excerpt(tag)),
        hint: match refused {
            Some(reason) => format!("✗ {reason}"),
            None => "on every link; a tag in use already merges them".into(),
        },
        field: crate::tui::form::TextField::new(text),
        selection: Selection::default(),
        what: tag.to_owned(),
        many: true,
    }))
}

/// What the tags prompt says under its field.
const TAGS_HINT: &str = "tags to put on, -tag to take one off, commas between";

/// `s` with its first letter in capitals.
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Rows a range mark reads at most: past that, `*` marks every match for free.
const RANGE_MAX: u64 = 10_000;

/// What an action applies to: the marked links, or else the link under the cursor.
struct Targets {
    selection: Selection,
    /// "the 3 marked links" or "x7k2p".
    what: String,
    /// "3 links" or "x7k2p", after a verb in the past tense.
    done: String,
    many: bool,
}

fn flag(on: bool) -> Option<String> {
    Some(if on { "1" } else { "0" }.to_owned())
}

impl App {
    fn targets(&self) -> Option<Targets> {
        if !self.marks.is_empty() {
            let links = self.marks.count().plural("link");
            return Some(Targets {
                selection: self.marks.selection(),
                what: format!("the {links} marked"),
                done: links,
                many: true,
            });
        }
        let link = self.links.selected()?;
        Some(Targets {
            selection: Selection::of_ids([link.id]),
            what: link.alias.clone(),
            done: link.alias.clone(),
            many: false,
        })
    }

    fn update_work(targets: &Targets, verb: &str, past: &str, input: LinkInput) -> Work {
        Work {
            label: format!("{verb} {}", targets.what),
            done: format!("{past} {}", targets.done),
            notes: Vec::new(),
            selection: targets.selection.clone(),
            action: BulkAction::Update(input),
            many: targets.many,
        }
    }

    /// The keys that act on links: with marks they act on every marked link.
    pub(super) fn link_work(&mut self, action: Action) {
        if self.pane != Pane::Links {
            return;
        }
        let Some(targets) = self.targets() else {
            return;
        };
        let selected = self.links.selected().cloned();
        match action {
            Action::Delete => {
                let notes = if self.cfg.has_trash {
                    vec!["They go to the trash with their clicks; u brings them back.".into()]
                } else {
                    vec![
                        "The server keeps no trash: u makes them again, but their clicks cannot \
                         come back."
                            .into(),
                    ]
                };
                let noun = if targets.many { "" } else { "link " };
                let work = Work {
                    label: format!("Delete {noun}{}", targets.what),
                    done: format!("Deleted {}", targets.done),
                    notes,
                    selection: targets.selection,
                    action: BulkAction::Delete,
                    many: targets.many,
                };
                self.modal = Some(Modal::Confirm(ConfirmAction::Bulk(Box::new(work))));
            }
            Action::ToggleDisabled | Action::TogglePublic => {
                let disabled = action == Action::ToggleDisabled;
                let field = |on: bool| {
                    if disabled {
                        LinkInput {
                            disabled: flag(on),
                            ..LinkInput::default()
                        }
                    } else {
                        LinkInput {
                            public: flag(on),
                            ..LinkInput::default()
                        }
                    }
                };
                let (on, off) = if disabled {
                    (("Disable", "Disabled"), ("Enable", "Enabled"))
                } else {
                    (
                        ("Make public", "Made public"),
                        ("Make private", "Made private"),
                    )
                };
                match (targets.many, selected) {
                    (false, Some(link)) => {
                        let now_on = if disabled { link.disabled } else { link.public };
                        let ((verb, past), value) = if now_on { (off, false) } else { (on, true) };
                        let work = Self::update_work(&targets, verb, past, field(value));
                        self.run_work(work);
                    }
                    _ => {
                        let items = vec![
                            Self::update_work(&targets, on.0, on.1, field(true)),
                            Self::update_work(&targets, off.0, off.1, field(false)),
                        ];
                        self.modal = Some(Modal::Menu(Menu::new(
                            format!("{} marked", targets.done),
                            items,
                        )));
                    }
                }
            }
            Action::MoveToSpace => {
                if !self.spaces.is_loaded() {
                    self.toast(ToastKind::Error, "Spaces are not loaded yet");
                    return;
                }
                let choices = self.spaces.spaces().iter().map(Named::from).collect();
                let current = match (&targets.many, &selected) {
                    (false, Some(link)) => link
                        .space
                        .as_ref()
                        .map_or(Pick::First, |s| Pick::One(Named::from(s))),
                    _ => Pick::First,
                };
                self.modal = Some(Modal::Picker(
                    Picker::new(PickerKind::MoveTo, choices, &current)
                        .titled(format!(" Move {} to ", targets.what)),
                ));
            }
            Action::SetExpiry => {
                let current = match (&targets.many, &selected) {
                    (false, Some(link)) => link.ends_at.map(|at| {
                        let (d, t) = crate::domain::format_expiry_input(at, &self.cfg.timezone);
                        format!("{d} {t}")
                    }),
                    _ => None,
                };
                self.modal = Some(Modal::Prompt(Box::new(Prompt {
                    asks: Asks::Expiry,
                    title: format!("Expiry of {}", targets.what),
                    hint: format!(
                        "YYYY-MM-DD HH:MM in {}; empty clears it",
                        zone_name(&self.cfg.timezone)
                    ),
                    field: crate::tui::form::TextField::new(current.unwrap_or_default()),
                    selection: targets.selection,
                    what: targets.done,
                    many: targets.many,
                })));
            }
            Action::TagLinks => {
                self.modal = Some(Modal::Prompt(Box::new(Prompt {
                    asks: Asks::Tags,
                    title: format!("Tags of {}", targets.what),
                    hint: TAGS_HINT.into(),
                    field: crate::tui::form::TextField::default(),
                    selection: targets.selection,
                    what: targets.done,
                    many: targets.many,
                })));
            }
            _ => {}
        }
    }

    /// The tags typed in the prompt (`promo, -old`): each checked by the tag rules, the prompt
    /// kept open with the reason when one is refused; the others stay on the links.
    pub(super) fn typed_tags(
        &mut self,
        text: String,
        selection: Selection,
        what: String,
        many: bool,
    ) {
        let (mut add, mut remove) = (Vec::new(), Vec::new());
        let mut refused = None;
        for part in text
            .split(TAG_SEPARATOR)
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let (list, raw) = match part.strip_prefix('-') {
                Some(raw) => (&mut remove, raw),
                None => (&mut add, part.strip_prefix('+').unwrap_or(part)),
            };
            match tag(raw) {
                Ok(t) => list.push(t),
                Err(reason) => {
                    refused = refused.or(Some(format!("{reason}: {}", name_excerpt(raw))))
                }
            }
        }
        let action = BulkAction::Tag { add, remove };
        let reason = refused.or_else(|| {
            let e = action.check(&self.cfg.timezone).err()?;
            Some(first_problem(&e))
        });
        if let Some(reason) = reason {
            self.modal = Some(asked_again(
                Asks::Tags,
                &reason,
                text,
                selection,
                what,
                many,
            ));
            return;
        }
        let verb = action.verb();
        self.run_work(Work {
            label: format!("{} {what}", capitalized(&verb)),
            done: format!("{what}: {verb}"),
            notes: Vec::new(),
            selection,
            action,
            many,
        });
    }

    /// The new name typed for tag `from`: checked by the tag rules (the prompt kept open with
    /// the reason), then renamed on every link that carries it.
    pub(super) fn typed_tag_name(&mut self, from: String, text: String) {
        match tag(&text) {
            Ok(to) if to == from => {}
            Ok(to) => {
                let req = self.request();
                self.commands.push(Command::RenameTag { req, from, to });
            }
            Err(reason) => self.modal = Some(tag_name_prompt(&from, text, Some(&reason))),
        }
    }

    /// The answer to a rename: the filter follows the tag to its new name, the list and the
    /// tags are asked again; a refusal reopens the prompt with the reason.
    pub(super) fn tag_renamed(
        &mut self,
        from: String,
        to: String,
        result: crate::domain::Result<u64>,
    ) {
        match result {
            Ok(links) => {
                let merged = self
                    .tags
                    .as_ref()
                    .is_some_and(|tags| tags.iter().any(|t| t.name == to));
                let verb = if merged { "merged into" } else { "renamed" };
                self.toast(
                    ToastKind::Info,
                    format!(
                        "{from} {verb} {to} on {}",
                        crate::domain::plural(links, "link")
                    ),
                );
                if self.filter.tags.contains(&from) {
                    self.filter.tags.retain(|t| *t != from && *t != to);
                    self.filter.tags.push(to);
                    self.filter.tags.sort();
                }
                self.fetch_tags();
                self.query_changed();
            }
            Err(e @ crate::domain::Error::Validation(_)) => {
                self.modal = Some(tag_name_prompt(&from, to, Some(&first_problem(&e))));
            }
            Err(e) => self.toast(ToastKind::Error, format!("Renaming {from} failed: {e}")),
        }
    }

    /// A space picked to move the targets to.
    pub(super) fn move_to(&mut self, space: Option<Named>) {
        let Some(targets) = self.targets() else {
            return;
        };
        let (verb, past, input) = match &space {
            Some(space) => (
                format!("Move to {}:", space.name),
                format!("Moved to {}:", space.name),
                space.id.to_string(),
            ),
            None => (
                "Take out of spaces:".to_owned(),
                "Took out of spaces:".to_owned(),
                String::new(),
            ),
        };
        let work = Self::update_work(
            &targets,
            &verb,
            &past,
            LinkInput {
                space: Some(input),
                ..LinkInput::default()
            },
        );
        self.run_work(work);
    }

    /// The expiry typed in the prompt: checked as the service checks it, the prompt kept open
    /// with the reason when it is refused.
    pub(super) fn typed_expiry(
        &mut self,
        text: String,
        selection: Selection,
        what: String,
        many: bool,
    ) {
        let (date, time) = text
            .split_once(|c: char| c.is_whitespace() || c == 'T')
            .map_or((text.as_str(), ""), |(d, t)| (d, t));
        let input = LinkInput {
            expiration_date: Some(date.trim().to_owned()),
            expiration_time: Some(time.trim().to_owned()),
            ..LinkInput::default()
        };
        let action = BulkAction::Update(input);
        if let Err(e) = action.check(&self.cfg.timezone) {
            let reason = first_problem(&e);
            self.modal = Some(asked_again(
                Asks::Expiry,
                &reason,
                text,
                selection,
                what,
                many,
            ));
            return;
        }
        let (label, done) = if text.trim().is_empty() {
            (
                format!("Clear the expiry of {what}"),
                format!("Cleared the expiry of {what}"),
            )
        } else {
            (
                format!("Set the expiry of {what} to {}", text.trim()),
                format!("Set the expiry of {what} to {}", text.trim()),
            )
        };
        self.run_work(Work {
            label,
            done,
            notes: Vec::new(),
            selection,
            action,
            many,
        });
    }

    /// Sends `work`; many links get a progress dialog that can stop it.
    pub(super) fn run_work(&mut self, work: Work) {
        let req = self.request();
        let progress = Progress::new();
        if work.many {
            self.modal = Some(Modal::Progress(ProgressDialog {
                label: work.label.clone(),
                progress: progress.clone(),
                cancelling: false,
            }));
            self.work = Some(req);
        }
        self.commands.push(Command::Bulk {
            req,
            selection: Box::new(work.selection),
            action: Box::new(work.action),
            progress,
            label: work.done,
        });
    }

    /// The answer to a bulk operation.
    pub(super) fn work_done(&mut self, msg: Msg) {
        let Msg::Bulk { req, label, result } = msg else {
            return;
        };
        self.answered(req);
        if self.work == Some(req) {
            self.work = None;
            if matches!(self.modal, Some(Modal::Progress(_))) {
                self.modal = None;
            }
            if !matches!(&result, Ok(r) if r.cancelled) {
                self.marks.clear();
            }
        }
        match result {
            Ok(report) => {
                self.report(&label, &report);
                if !report.undo.is_nothing() {
                    self.remember(label, UndoWhat::Backend(report.undo.clone()));
                }
                self.refresh();
            }
            Err(e) => self.toast(ToastKind::Error, describe(&e, Failed::Action("the links"))),
        }
    }

    /// Toasts what a report says: what changed, and each failure.
    fn report(&mut self, label: &str, report: &BulkReport) {
        if report.cancelled {
            self.toast(
                ToastKind::Info,
                format!("Stopped: {label} — nothing changed"),
            );
            return;
        }
        let mut text = label.to_owned();
        if report.unchanged > 0 || !report.failed.is_empty() || report.changed != report.matched {
            let done = if label.starts_with("Deleted") {
                "deleted"
            } else {
                "changed"
            };
            text = format!("{label}: {}", report.summary(done));
        }
        self.toast(ToastKind::Info, text);
        for failure in report.failed.iter().take(3) {
            self.toast(ToastKind::Error, failure.to_string());
        }
        if report.failed.len() > 3 {
            self.toast(
                ToastKind::Error,
                format!("…and {} more failed", report.failed.len() - 3),
            );
        }
        for note in &report.notes {
            self.toast(ToastKind::Info, note.clone());
        }
    }

    /// Keeps what `u` can take back.
    pub(super) fn remember(&mut self, label: String, what: UndoWhat) {
        self.undo.push(UndoEntry { label, what });
        if self.undo.len() > DEPTH {
            self.undo.remove(0);
        }
    }

    pub(super) fn undo_last(&mut self) {
        let Some(entry) = self.undo.pop() else {
            self.toast(ToastKind::Info, "Nothing to undo");
            return;
        };
        let req = self.request();
        self.commands.push(Command::Undo {
            req,
            entry: Box::new(entry),
            progress: Progress::new(),
        });
    }

    pub(super) fn undone(&mut self, msg: Msg) {
        let Msg::Undone { req, entry, result } = msg else {
            return;
        };
        self.answered(req);
        match result {
            Ok(report) => {
                match crate::tui::undo::failed_entirely(&report) {
                    Some(e) => self.toast(
                        ToastKind::Error,
                        format!("Could not undo {}: {e}", entry.label),
                    ),
                    None => self.report(&format!("Undid: {}", entry.label), &report),
                }
                self.refresh();
            }
            Err(e) => {
                self.toast(
                    ToastKind::Error,
                    format!(
                        "Could not undo {}: {}",
                        entry.label,
                        describe(&e, Failed::Action("it"))
                    ),
                );
            }
        }
    }

    /// `space`: marks or unmarks the row under the cursor, then moves down.
    pub(super) fn mark_row(&mut self) {
        let now = self.clock.now();
        if let Some(link) = self.links.selected().cloned() {
            self.marks.toggle(&link, now);
            self.marks.anchor = Some(self.links.list.cursor());
            self.links.list.move_by(1);
        }
    }

    /// `V`: marks every row from the last one marked to the cursor.
    pub(super) fn mark_range(&mut self) {
        let cursor = self.links.list.cursor();
        let anchor = self.marks.anchor.unwrap_or(cursor);
        let (from, to) = (anchor.min(cursor), anchor.max(cursor));
        self.marks.anchor = Some(cursor);
        let held: Option<Vec<Link>> = (from..=to)
            .map(|i| self.links.list.get(i).cloned())
            .collect();
        match held {
            Some(links) => self.mark_all_of(&links),
            None if (to - from) as u64 >= RANGE_MAX => self.toast(
                ToastKind::Error,
                format!(
                    "That range is over {} rows: {} marks every link that matches",
                    format::count(RANGE_MAX),
                    self.cfg.keys.first(Action::MarkAll)
                ),
            ),
            None => {
                let req = self.request();
                self.range_req = Some(req);
                let query = self.filter.query(1, crate::domain::PER_PAGE_MAX);
                self.commands.push(Command::FetchRange {
                    req,
                    query,
                    from: from as u64,
                    to: to as u64,
                });
            }
        }
    }

    pub(super) fn mark_all_of(&mut self, links: &[Link]) {
        let now = self.clock.now();
        for link in links {
            self.marks.set(link, true, now);
        }
    }

    /// `*`: every link the list's filter matches, held as the filter.
    pub(super) fn mark_all(&mut self) {
        match self.links.list.counted() {
            Some(total) if total.n > 0 => {
                let query = self.filter.query(1, crate::domain::PER_PAGE_MAX);
                self.marks.all_matching(&query, total);
            }
            Some(_) => {}
            None => self.toast(
                ToastKind::Info,
                "The list is still loading: mark every match once it shows",
            ),
        }
    }

    pub(super) fn ask_delete_space(&mut self) {
        if let Some(space) = self.spaces.selected().cloned() {
            self.modal = Some(Modal::Confirm(ConfirmAction::DeleteSpace(Box::new(space))));
        }
    }

    pub(super) fn space_deleted(&mut self, space: Space, result: crate::domain::Result<()>) {
        match result {
            Ok(()) => {
                self.toast(ToastKind::Info, format!("Deleted space {}", space.name));
                if self.filter.space.id() == Some(space.id) {
                    self.filter.space = Pick::First;
                    self.query_changed();
                }
                self.remember(
                    format!("Deleted space {}", space.name),
                    UndoWhat::SpaceDelete(space.clone()),
                );
                self.refresh();
            }
            Err(e) => self.toast(ToastKind::Error, describe(&e, Failed::Action("the space"))),
        }
    }

    /// The webhooks popup, loading until its answer comes.
    pub(super) fn open_webhooks(&mut self) {
        let req = self.request();
        self.modal = Some(Modal::Webhooks(Box::new(WebhooksPopup::loading(req))));
        self.commands.push(Command::FetchWebhooks { req });
    }

    pub(super) fn fetch_trash(&mut self) {
        let req = self.request();
        self.trash.expect(req);
        self.commands.push(Command::FetchTrash { req });
    }

    /// `R` in the Trash pane.
    /// `R` in the Trash pane: the marked items back, else the selected one.
    pub(super) fn restore_selected(&mut self) {
        if self.pane != Pane::Trash {
            return;
        }
        let items = self.trash.chosen();
        if !items.is_empty() {
            let req = self.request();
            self.commands.push(Command::Restore { req, items });
        }
    }

    /// Delete in the Trash pane: the marked items, else the selected one, once confirmed.
    pub(super) fn ask_purge(&mut self) {
        let items = self.trash.chosen();
        if !items.is_empty() {
            self.modal = Some(Modal::Confirm(ConfirmAction::Purge(items)));
        }
    }

    /// `X` in the Trash pane: everything in it, once confirmed with its count.
    pub(super) fn ask_empty_trash(&mut self) {
        if self.pane != Pane::Trash {
            return;
        }
        match self.trash.total() {
            Some(0) => self.toast(ToastKind::Info, "The trash is empty"),
            Some(total) => self.modal = Some(Modal::Confirm(ConfirmAction::EmptyTrash(total))),
            None => {}
        }
    }

    pub(super) fn purge(&mut self, items: Vec<Trashed>) {
        let req = self.request();
        self.commands.push(Command::Purge { req, items });
    }

    pub(super) fn trash_done(&mut self, purged: bool, result: crate::domain::Result<BulkReport>) {
        match result {
            Ok(report) if purged => self.toast(
                ToastKind::Info,
                format!("Deleted {} for good", format::count(report.changed)),
            ),
            Ok(report) => self.report(
                &format!("Restored {}", format::count(report.changed)),
                &report,
            ),
            Err(e) => self.toast(ToastKind::Error, describe(&e, Failed::Action("the item"))),
        }
        self.refresh();
    }

    pub(super) fn range_marked(&mut self, result: crate::domain::Result<Vec<Link>>) {
        match result {
            Ok(links) => self.mark_all_of(&links),
            Err(e) => self.toast(ToastKind::Error, describe(&e, Failed::Action("the range"))),
        }
    }
}

/// The zone's name for prompts.
fn zone_name(tz: &TimeZone) -> String {
    tz.iana_name().unwrap_or("UTC").to_owned()
}
