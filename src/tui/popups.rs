//! Dialogs over the panes: confirm a destructive action, pick a value, choose between actions,
//! type a value, watch long work, read the keys or run one by name (`help.rs`). A destructive
//! command is queued as a [`ConfirmAction`] and runs only once confirmed. Keys reach a dialog
//! with the actions of the dialog context; typing fields take printable characters first.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Widget, Wrap};

pub use super::dialog::{Asks, ConfirmAction, ModalOutcome, Pick, PickerKind, Work, dialog};
use super::form::TextField;
use super::format;
use super::help::{Help, Palette};
use super::hit::clicked;
use super::keys::{Action, Key, KeyMap};
use super::named::Named;
use super::qr_popup::QrPopup;
use super::theme::Theme;
use super::webhooks::WebhooksPopup;
use crate::backend::{Progress, Selection};
use crate::domain::{Shown, into_shown};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub kind: PickerKind,
    /// Says what the pick is for, when the kind alone does not ("Move the 3 links marked to").
    title: Option<String>,
    items: Vec<Pick>,
    cursor: usize,
}

impl Picker {
    /// The first line, then "no space" in the space filter, then `choices`; the cursor on
    /// `current`.
    pub fn new(kind: PickerKind, choices: Vec<Named>, current: &Pick) -> Picker {
        let mut items = vec![Pick::First];
        if kind == PickerKind::Space {
            items.push(Pick::NoSpace);
        }
        items.extend(choices.into_iter().map(Pick::One));
        let cursor = items.iter().position(|i| i.same(current)).unwrap_or(0);
        Picker {
            kind,
            title: None,
            items,
            cursor,
        }
    }

    /// The picker with `pick` as its second line.
    pub fn with_second(mut self, pick: Pick) -> Picker {
        self.items.insert(1, pick);
        if self.cursor > 0 {
            self.cursor += 1;
        }
        self
    }

    pub fn titled(mut self, title: String) -> Picker {
        self.title = Some(title);
        self
    }

    fn label(&self, item: &Pick) -> String {
        match (item, self.kind) {
            (Pick::One(named), _) => named.name.clone(),
            (Pick::Match(line), _) => line.clone(),
            (Pick::NoSpace, _) | (Pick::First, PickerKind::MoveTo) => "no space".to_owned(),
            (Pick::First, PickerKind::Column) => "(leave them as they are)".to_owned(),
            (Pick::First, PickerKind::Tag) => "any (no tag filter)".to_owned(),
            (Pick::First, _) => "any".to_owned(),
        }
    }
}

/// A choice between a few actions on the marked links ("disable or enable?").
#[derive(Debug, Clone, PartialEq)]
pub struct Menu {
    pub title: String,
    pub items: Vec<Work>,
    cursor: usize,
}

impl Menu {
    pub fn new(title: impl Into<String>, items: Vec<Work>) -> Menu {
        Menu {
            title: title.into(),
            items,
            cursor: 0,
        }
    }
}

/// A value typed for an action: the expiry to set on links.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub asks: Asks,
    pub title: String,
    pub hint: String,
    pub field: TextField,
    /// The links it applies to, and how to name them ("3 links", "x7k2p").
    pub selection: Selection,
    pub what: String,
    pub many: bool,
}

/// Long work in progress: how far it has come, and a way to stop it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressDialog {
    pub label: String,
    pub progress: Progress,
    pub cancelling: bool,
}

#[derive(Debug, Clone)]
pub enum Modal {
    Confirm(ConfirmAction),
    Help(Help),
    Picker(Picker),
    Qr(Box<QrPopup>),
    Webhooks(Box<WebhooksPopup>),
    Menu(Menu),
    Prompt(Box<Prompt>),
    Progress(ProgressDialog),
    Palette(Palette),
}

impl Modal {
    pub fn handle_key(&mut self, key: Key) -> ModalOutcome {
        match self {
            Modal::Confirm(action) => match key.action {
                Some(Action::Yes | Action::Select) => ModalOutcome::Confirmed(action.clone()),
                Some(Action::No | Action::Cancel) => ModalOutcome::Close,
                _ => ModalOutcome::Stay,
            },
            // Any key but a movement closes the code.
            Modal::Qr(_) => match key.action {
                Some(Action::Down | Action::Up) => ModalOutcome::Stay,
                _ => ModalOutcome::Close,
            },
            Modal::Webhooks(popup) => match key.action {
                Some(Action::Down | Action::Up) => {
                    popup.scroll(key.action == Some(Action::Down));
                    ModalOutcome::Stay
                }
                _ => ModalOutcome::Close,
            },
            Modal::Help(help) => help.handle_key(&key),
            Modal::Palette(palette) => palette.handle_key(&key),
            Modal::Picker(picker) => {
                let last = picker.items.len().saturating_sub(1);
                match key.action {
                    Some(Action::Down) => picker.cursor = (picker.cursor + 1).min(last),
                    Some(Action::Up) => picker.cursor = picker.cursor.saturating_sub(1),
                    Some(Action::Top) => picker.cursor = 0,
                    Some(Action::Bottom) => picker.cursor = last,
                    Some(Action::Select) => {
                        return ModalOutcome::Picked(
                            picker.kind,
                            picker.items.get(picker.cursor).cloned().unwrap_or_default(),
                        );
                    }
                    Some(Action::Stats) if picker.kind.has_traffic() => {
                        if let Some(pick @ Pick::One(_)) = picker.items.get(picker.cursor) {
                            return ModalOutcome::StatsOf(picker.kind, pick.clone());
                        }
                    }
                    Some(Action::Edit) if picker.kind == PickerKind::Tag => {
                        if let Some(pick @ Pick::One(_)) = picker.items.get(picker.cursor) {
                            return ModalOutcome::Rename(pick.clone());
                        }
                    }
                    Some(Action::Cancel) => return ModalOutcome::Close,
                    _ => {}
                }
                ModalOutcome::Stay
            }
            Modal::Menu(menu) => {
                let last = menu.items.len().saturating_sub(1);
                match key.action {
                    Some(Action::Down) => menu.cursor = (menu.cursor + 1).min(last),
                    Some(Action::Up) => menu.cursor = menu.cursor.saturating_sub(1),
                    Some(Action::Select) => {
                        if let Some(work) = menu.items.get(menu.cursor) {
                            return ModalOutcome::Chosen(Box::new(work.clone()));
                        }
                    }
                    Some(Action::Cancel) => return ModalOutcome::Close,
                    _ => {}
                }
                ModalOutcome::Stay
            }
            Modal::Prompt(prompt) => {
                if key.is_text() {
                    prompt.field.handle_key(&key);
                    return ModalOutcome::Stay;
                }
                match key.action {
                    Some(Action::Select) => ModalOutcome::Typed {
                        asks: prompt.asks,
                        text: prompt.field.value().trim().to_owned(),
                        selection: Box::new(prompt.selection.clone()),
                        what: prompt.what.clone(),
                        many: prompt.many,
                    },
                    Some(Action::Cancel) => ModalOutcome::Close,
                    _ => {
                        prompt.field.handle_key(&key);
                        ModalOutcome::Stay
                    }
                }
            }
            Modal::Progress(dialog) => {
                if key.action == Some(Action::Cancel) && !dialog.cancelling {
                    dialog.progress.cancel();
                    dialog.cancelling = true;
                }
                ModalOutcome::Stay
            }
        }
    }

    /// Pasted text, for dialogs that take typing.
    pub fn paste(&mut self, text: &str) -> bool {
        match self {
            Modal::Prompt(prompt) => prompt.field.paste(text),
            Modal::Palette(palette) => palette.paste(text),
            Modal::Help(help) => help.paste(text),
            _ => false,
        }
    }

    /// What a click at (`column`, `row`) on the dialog drawn over `area` answers: a confirm
    /// dialog's yes or no.
    pub fn click(&self, area: Rect, column: u16, row: u16, keys: &KeyMap) -> Option<ModalOutcome> {
        let Modal::Confirm(action) = self else {
            return None;
        };
        let (_, answer) = confirm_layout(action, area);
        if row != answer.y {
            return None;
        }
        // Styles do not move anything: any theme lays the answers out alike.
        let spans = answer_spans(keys, &Theme::new(crate::config::Theme::Mono));
        Some(match clicked(&spans, answer, column, false)? {
            true => ModalOutcome::Confirmed(action.clone()),
            false => ModalOutcome::Close,
        })
    }

    /// Draws the dialog over `area`; returns where the text cursor goes, if it takes typing.
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        keys: &KeyMap,
    ) -> Option<ratatui::layout::Position> {
        match self {
            Modal::Confirm(action) => {
                // The question names what it acts on: a space's or an item's name.
                let lines: Vec<Line> = action
                    .question()
                    .into_iter()
                    .map(|line| Line::raw(into_shown(line)))
                    .collect();
                let (outer, answer) = confirm_layout(action, area);
                if let Some(inner) = dialog(outer, buf, " Confirm ", theme, theme.error) {
                    let question = Rect {
                        height: inner.height.saturating_sub(1),
                        ..inner
                    };
                    Paragraph::new(lines)
                        .wrap(Wrap { trim: true })
                        .render(question, buf);
                    let spans: Vec<Span> = answer_spans(keys, theme)
                        .into_iter()
                        .map(|(s, _)| s)
                        .collect();
                    Line::from(spans).render(answer, buf);
                }
                None
            }
            Modal::Qr(popup) => {
                popup.render(area, buf, theme);
                None
            }
            Modal::Webhooks(popup) => {
                popup.render(area, buf, theme);
                None
            }
            Modal::Help(help) => help.render(area, buf, theme, keys),
            Modal::Palette(palette) => palette.render(area, buf, theme, keys),
            Modal::Picker(picker) => {
                let title = match (&picker.title, picker.kind) {
                    (Some(title), _) => title.as_str(),
                    (None, PickerKind::Space) => " Filter by space ",
                    (None, PickerKind::Domain) => " Filter by domain ",
                    (None, PickerKind::Tag) => " Filter by tags ",
                    (None, PickerKind::MoveTo) => " Move to space ",
                    (None, PickerKind::Column) => " Show or hide a column ",
                };
                let labels: Vec<String> =
                    picker.items.iter().map(|item| picker.label(item)).collect();
                list_dialog(area, buf, theme, title, &labels, picker.cursor, 48);
                None
            }
            Modal::Menu(menu) => {
                let labels: Vec<String> = menu.items.iter().map(|w| w.label.clone()).collect();
                list_dialog(
                    area,
                    buf,
                    theme,
                    &format!(" {} ", menu.title),
                    &labels,
                    menu.cursor,
                    56,
                );
                None
            }
            Modal::Prompt(prompt) => {
                let width = 60.min(area.width);
                let area = area.centered(Constraint::Length(width), Constraint::Length(6));
                let inner = dialog(
                    area,
                    buf,
                    &format!(" {} ", prompt.title),
                    theme,
                    theme.focused_border,
                )?;
                let field_width = inner.width.saturating_sub(2);
                let view = prompt.field.view(field_width);
                let lines = vec![
                    Line::styled(into_shown(prompt.hint.clone()), theme.dim),
                    Line::from(vec![
                        Span::styled("> ", theme.accent),
                        Span::styled(view.text, theme.text),
                    ]),
                    Line::raw(""),
                    Line::from(vec![
                        Span::styled(keys.first(Action::Select), theme.accent),
                        Span::styled(" apply  ", theme.dim),
                        Span::styled(keys.first(Action::Cancel), theme.accent),
                        Span::styled(" cancel", theme.dim),
                    ]),
                ];
                Paragraph::new(lines).render(inner, buf);
                Some(ratatui::layout::Position::new(
                    inner.x + 2 + view.cursor,
                    inner.y + 1,
                ))
            }
            Modal::Progress(progress) => {
                let (done, total) = progress.progress.get();
                let width = 60.min(area.width);
                let area = area.centered(Constraint::Length(width), Constraint::Length(7));
                let inner = dialog(area, buf, " Working ", theme, theme.focused_border)?;
                let ratio = if total == 0 {
                    0.0
                } else {
                    (done as f64 / total as f64).clamp(0.0, 1.0)
                };
                let status = if progress.cancelling {
                    "Cancelling…".to_owned()
                } else {
                    format!("{}…", Shown(&progress.label))
                };
                Paragraph::new(Line::raw(status)).render(Rect { height: 1, ..inner }, buf);
                Gauge::default()
                    .gauge_style(theme.accent)
                    .ratio(ratio)
                    .label(format!(
                        "{} / {}",
                        format::count(done),
                        format::count(total)
                    ))
                    .render(
                        Rect {
                            y: inner.y + 2,
                            height: 1,
                            ..inner
                        },
                        buf,
                    );
                Line::from(vec![
                    Span::styled(keys.first(Action::Cancel), theme.accent),
                    Span::styled(" stop", theme.dim),
                ])
                .render(
                    Rect {
                        y: inner.y + 4,
                        height: 1,
                        ..inner
                    },
                    buf,
                );
                None
            }
        }
    }
}

/// "y / enter  yes      n / esc  no", from the key map.
/// The confirm dialog's answers, each with what a click on it answers.
fn answer_spans(keys: &KeyMap, theme: &Theme) -> Vec<(Span<'static>, Option<bool>)> {
    vec![
        (
            Span::styled(keys.label(Action::Yes), theme.accent),
            Some(true),
        ),
        (Span::raw("  yes"), Some(true)),
        (Span::raw("      "), None),
        (
            Span::styled(
                format!("{}/{}", keys.label(Action::No), keys.label(Action::Cancel)),
                theme.accent,
            ),
            Some(false),
        ),
        (Span::raw("  no"), Some(false)),
    ]
}

/// Where the confirm dialog of `action` goes in `area`, and the row of its answers (the last
/// inside it): one layout for drawing it and for clicking on it.
fn confirm_layout(action: &ConfirmAction, area: Rect) -> (Rect, Rect) {
    // The question, a blank line (where one long line of it may wrap), the answers, and the
    // borders.
    let lines = u16::try_from(action.question().len()).unwrap_or(6) + 2;
    let width = 64.min(area.width);
    let height = (lines + 2).min(area.height);
    let outer = area.centered(Constraint::Length(width), Constraint::Length(height));
    let answer = Rect {
        x: outer.x + 1,
        y: (outer.bottom()).saturating_sub(2),
        width: outer.width.saturating_sub(2),
        height: 1,
    };
    (outer, answer)
}

/// A bordered list of `labels` with `cursor` marked, scrolled to keep it in view.
fn list_dialog(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    title: &str,
    labels: &[String],
    cursor: usize,
    width: u16,
) {
    let visible = usize::from(area.height.saturating_sub(6)).max(1);
    let skip = cursor.saturating_sub(visible - 1);
    let inner_width = usize::from(width.min(area.width).saturating_sub(4));
    let lines: Vec<Line> = labels
        .iter()
        .enumerate()
        .skip(skip)
        .take(visible)
        .map(|(i, label)| {
            let label = format::clip(label, inner_width);
            if i == cursor {
                Line::styled(format!("▶ {label}"), theme.selected)
            } else {
                Line::raw(format!("  {label}"))
            }
        })
        .collect();
    let height = u16::try_from(lines.len()).unwrap_or(u16::MAX) + 2;
    let area = area.centered(
        Constraint::Length(width.min(area.width)),
        Constraint::Length(height),
    );
    if let Some(inner) = dialog(area, buf, title, theme, theme.focused_border) {
        Paragraph::new(lines).render(inner, buf);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToastKind {
    Info,
    Error,
}

/// A short message that goes away by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toast {
    pub text: String,
    pub kind: ToastKind,
    pub until: Instant,
}

/// The most lines one toast takes.
const TOAST_LINES: usize = 3;

/// Draws the newest toasts bottom-right of `area`, newest lowest. A long one wraps, up to
/// [`TOAST_LINES`] lines, so an error's reason is read rather than cut at the edge.
pub fn render_toasts(toasts: &[Toast], area: Rect, buf: &mut Buffer, theme: &Theme) {
    let mut bottom = area.bottom();
    for toast in toasts.iter().rev().take(3) {
        let room = usize::from(area.width.saturating_sub(6)).max(1);
        let text = crate::domain::shown(&toast.text);
        let wrapped = textwrap::wrap(&text, room);
        let mut lines: Vec<String> = wrapped
            .iter()
            .take(TOAST_LINES)
            .map(|l| l.to_string())
            .collect();
        if wrapped.len() > TOAST_LINES
            && let Some(last) = lines.last_mut()
        {
            *last = format::clip(&format!("{last} …"), room);
        }
        let widest = lines.iter().map(|l| format::width(l)).max().unwrap_or(0);
        let width = (u16::try_from(widest).unwrap_or(u16::MAX).saturating_add(4))
            .min(area.width.saturating_sub(2))
            .max(10);
        let height = u16::try_from(lines.len()).unwrap_or(1) + 2;
        if bottom < area.y + height {
            break;
        }
        let rect = Rect {
            x: area.right().saturating_sub(width + 1),
            y: bottom - height,
            width,
            height,
        };
        bottom -= height;
        let style = match toast.kind {
            ToastKind::Info => theme.success,
            ToastKind::Error => theme.error,
        };
        if let Some(inner) = dialog(rect, buf, "", theme, style) {
            let lines: Vec<Line> = lines.into_iter().map(|l| Line::styled(l, style)).collect();
            Paragraph::new(lines).render(inner, buf);
        }
    }
}
