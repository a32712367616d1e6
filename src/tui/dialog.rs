//! What every dialog shares: its frame ([`dialog`]), what it answers ([`ModalOutcome`]) and
//! the work an answer carries. Below the dialogs themselves (`popups.rs`, `help.rs`,
//! `qr_popup.rs`), which all draw and answer this way.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::keys::Action;
use super::named::Named;
use super::theme::Theme;
use crate::backend::{BulkAction, Selection, Trashed};
use crate::domain::{Id, Space, SpaceFilter, plural};

/// A destructive command waiting for a yes.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmAction {
    /// A bulk operation (or the delete of one link, which runs the same way).
    Bulk(Box<Work>),
    DeleteSpace(Box<Space>),
    /// Trashed items to delete for good.
    Purge(Vec<Trashed>),
    /// Everything in the trash, this many items, to delete for good.
    EmptyTrash(u64),
}

/// Work on links that runs once confirmed: what, on which, and what to say about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// "Disable the 3 links marked": the question, or the menu's line.
    pub label: String,
    /// "Disabled 3 links": the toast, and the undo entry's name.
    pub done: String,
    /// Further lines for the question (what undo can and cannot bring back).
    pub notes: Vec<String>,
    pub selection: Selection,
    pub action: BulkAction,
    /// Show a progress dialog (many links); a single link shows only the spinner.
    pub many: bool,
}

impl ConfirmAction {
    pub fn question(&self) -> Vec<String> {
        match self {
            ConfirmAction::Bulk(work) => {
                let mut lines = vec![format!("{}?", work.label)];
                lines.extend(work.notes.iter().cloned());
                lines
            }
            ConfirmAction::DeleteSpace(space) => {
                let links = space.links.unwrap_or(0);
                vec![
                    format!("Delete space {}?", space.name),
                    format!(
                        "Its {} stay, without a space; u brings the space back.",
                        plural(links, "link")
                    ),
                ]
            }
            ConfirmAction::Purge(items) => vec![
                format!(
                    "Delete {} for good?",
                    match items.as_slice() {
                        [one] => format!("{} {}", one.kind.as_str(), one.name),
                        many => format!("{} items", many.len()),
                    }
                ),
                "Their clicks and visits go too; this cannot be undone.".into(),
            ],
            ConfirmAction::EmptyTrash(total) => vec![
                format!(
                    "Empty the trash: delete its {} for good?",
                    plural(*total, "item")
                ),
                "Their clicks and visits go too; this cannot be undone.".into(),
            ],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    /// The list's space filter.
    Space,
    /// The list's domain filter.
    Domain,
    /// A tag to add to the list's tag filter, or take out of it.
    Tag,
    /// The space to move links to.
    MoveTo,
    /// A column of the links table to show or hide.
    Column,
}

impl PickerKind {
    /// Whether the picker's lines have traffic of their own to show.
    pub fn has_traffic(self) -> bool {
        matches!(
            self,
            PickerKind::Space | PickerKind::Domain | PickerKind::Tag
        )
    }
}

/// One line of a picker, and what it picked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Pick {
    /// The first line: "any" in a filter, "no space" for a move, nothing for a column.
    #[default]
    First,
    /// The space filter's "no space": links in none.
    NoSpace,
    /// The tag filter's switch between links with every tag checked and with any, as it reads.
    Match(String),
    One(Named),
}

impl Pick {
    pub fn named(self) -> Option<Named> {
        match self {
            Pick::One(named) => Some(named),
            Pick::First | Pick::NoSpace | Pick::Match(_) => None,
        }
    }

    pub fn id(&self) -> Option<Id> {
        match self {
            Pick::One(named) => Some(named.id),
            Pick::First | Pick::NoSpace | Pick::Match(_) => None,
        }
    }

    /// Whether two lines stand for the same thing (a space renamed since is the same space).
    pub fn same(&self, other: &Pick) -> bool {
        match (self, other) {
            (Pick::One(a), Pick::One(b)) => a.id == b.id,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }

    /// The space filter it stands for, in the filter bar (where the first line is "any").
    pub fn space_filter(&self) -> SpaceFilter {
        match self {
            Pick::First | Pick::Match(_) => SpaceFilter::Any,
            Pick::NoSpace => SpaceFilter::NoSpace,
            Pick::One(space) => SpaceFilter::In(space.id),
        }
    }
}

/// What a dialog answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ModalOutcome {
    /// Still open.
    Stay,
    Close,
    Confirmed(ConfirmAction),
    Picked(PickerKind, Pick),
    /// The traffic of a space, a domain or a tag a filter's picker lists.
    StatsOf(PickerKind, Pick),
    /// A new name for the tag the tag picker lists there.
    Rename(Pick),
    /// A menu's choice, to confirm or run.
    Chosen(Box<Work>),
    /// A prompt's text, with the links it is for.
    Typed {
        asks: Asks,
        text: String,
        selection: Box<Selection>,
        what: String,
        many: bool,
    },
    /// The palette's action, to run as if its key was pressed.
    Run(Action),
}

/// Clears `area`, draws a bordered dialog and returns its inside.
pub fn dialog(
    area: Rect,
    buf: &mut Buffer,
    title: &str,
    theme: &Theme,
    border: ratatui::style::Style,
) -> Option<Rect> {
    if area.width < 4 || area.height < 3 {
        return None;
    }
    Clear.render(area, buf);
    let block = theme.panel(title.to_owned(), border);
    let inner = block.inner(area);
    block.render(area, buf);
    Some(inner)
}

/// What a prompt asks for the links it is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asks {
    /// A date and time, or nothing.
    Expiry,
    /// Tags to put on, and (`-tag`) to take off.
    Tags,
    /// A tag's new name (the prompt's `what` is the tag): another tag's merges them.
    TagName,
}
