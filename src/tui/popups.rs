//! Dialogs over the panes: confirm a destructive action, pick a filter value, read the keys.
//! A destructive command is queued as a [`ConfirmAction`] and runs only once confirmed.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

use super::filter::Named;
use super::keys::{Action, Key, KeyMap};
use super::qr_popup::QrPopup;
use super::theme::Theme;
use crate::domain::Id;

/// A destructive command waiting for a yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmAction {
    DeleteLink { id: Id, alias: String },
}

impl ConfirmAction {
    fn question(&self) -> String {
        match self {
            ConfirmAction::DeleteLink { alias, .. } => {
                format!("Delete link {alias}? Its clicks are deleted with it.")
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    Space,
    Domain,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub kind: PickerKind,
    /// `None` is "any".
    items: Vec<Option<Named>>,
    cursor: usize,
}

impl Picker {
    pub fn new(kind: PickerKind, choices: Vec<Named>, current: Option<Id>) -> Picker {
        let mut items = vec![None];
        items.extend(choices.into_iter().map(Some));
        let cursor = items
            .iter()
            .position(|i| i.as_ref().map(|n| n.id) == current)
            .unwrap_or(0);
        Picker {
            kind,
            items,
            cursor,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Modal {
    Confirm(ConfirmAction),
    Help { scroll: u16 },
    Picker(Picker),
    Qr(Box<QrPopup>),
}

/// What a dialog answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModalOutcome {
    /// Still open.
    Stay,
    Close,
    Confirmed(ConfirmAction),
    Picked(PickerKind, Option<Named>),
}

impl Modal {
    pub fn handle_key(&mut self, key: Key) -> ModalOutcome {
        match self {
            Modal::Confirm(action) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                    ModalOutcome::Confirmed(action.clone())
                }
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => ModalOutcome::Close,
                _ if key.action == Some(Action::Quit) => ModalOutcome::Close,
                _ => ModalOutcome::Stay,
            },
            Modal::Help { scroll } => match key.action {
                Some(Action::Down) => {
                    *scroll = scroll.saturating_add(1);
                    ModalOutcome::Stay
                }
                Some(Action::Up) => {
                    *scroll = scroll.saturating_sub(1);
                    ModalOutcome::Stay
                }
                Some(Action::Help | Action::Quit) => ModalOutcome::Close,
                _ if key.code == KeyCode::Esc => ModalOutcome::Close,
                _ => ModalOutcome::Stay,
            },
            // Any key but a movement closes the code.
            Modal::Qr(_) => match key.action {
                Some(Action::Down | Action::Up) => ModalOutcome::Stay,
                _ => ModalOutcome::Close,
            },
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
                            picker.items.get(picker.cursor).cloned().flatten(),
                        );
                    }
                    Some(Action::Quit) => return ModalOutcome::Close,
                    _ if key.code == KeyCode::Esc => return ModalOutcome::Close,
                    _ => {}
                }
                ModalOutcome::Stay
            }
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, keys: &KeyMap) {
        match self {
            Modal::Confirm(action) => {
                let lines = vec![
                    Line::raw(action.question()),
                    Line::raw(""),
                    Line::from(vec![
                        Span::styled("y", theme.accent),
                        Span::raw(" / Enter  yes      "),
                        Span::styled("n", theme.accent),
                        Span::raw(" / Esc  no"),
                    ]),
                ];
                let area = area.centered(
                    Constraint::Length(56.min(area.width)),
                    Constraint::Length(7),
                );
                if let Some(inner) = dialog(area, buf, " Confirm ", theme, theme.error) {
                    Paragraph::new(lines)
                        .wrap(Wrap { trim: true })
                        .render(inner, buf);
                }
            }
            Modal::Help { scroll } => {
                let entry = |action: Action| {
                    Line::from(vec![
                        Span::styled(format!("{:>10} ", keys.label(action)), theme.accent),
                        Span::raw(action.description()),
                    ])
                };
                // Two columns, so every key fits on one screen at 80×24.
                let half = Action::ALL.len().div_ceil(2);
                let left: Vec<Line> = Action::ALL[..half].iter().map(|a| entry(*a)).collect();
                let right: Vec<Line> = Action::ALL[half..].iter().map(|a| entry(*a)).collect();
                let footer = vec![
                    Line::styled(
                        "Search field: Enter keeps, Esc clears. ctrl-c quits anywhere.",
                        theme.dim,
                    ),
                    Line::styled(
                        "Keys are set in the [keys] section of the configuration.",
                        theme.dim,
                    ),
                ];
                let rows = u16::try_from(half).unwrap_or(u16::MAX);
                let height = (rows + 5).min(area.height);
                let area = area.centered(
                    Constraint::Length(area.width.min(90)),
                    Constraint::Length(height),
                );
                if let Some(inner) = dialog(area, buf, " Keys ", theme, theme.focused_border) {
                    let [columns, _, foot] = Layout::vertical([
                        Constraint::Length(rows),
                        Constraint::Length(1),
                        Constraint::Length(2),
                    ])
                    .areas(inner);
                    let [l, r] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)])
                        .areas(columns);
                    Paragraph::new(left).scroll((*scroll, 0)).render(l, buf);
                    Paragraph::new(right).scroll((*scroll, 0)).render(r, buf);
                    Paragraph::new(footer).render(foot, buf);
                }
            }
            Modal::Qr(popup) => popup.render(area, buf, theme),
            Modal::Picker(picker) => {
                let title = match picker.kind {
                    PickerKind::Space => " Filter by space ",
                    PickerKind::Domain => " Filter by domain ",
                };
                let visible = usize::from(area.height.saturating_sub(6)).max(1);
                let skip = picker.cursor.saturating_sub(visible - 1);
                let lines: Vec<Line> = picker
                    .items
                    .iter()
                    .enumerate()
                    .skip(skip)
                    .take(visible)
                    .map(|(i, item)| {
                        let name = item.as_ref().map_or("any", |n| n.name.as_str());
                        if i == picker.cursor {
                            Line::styled(format!("▶ {name}"), theme.selected)
                        } else {
                            Line::raw(format!("  {name}"))
                        }
                    })
                    .collect();
                let height = u16::try_from(lines.len()).unwrap_or(u16::MAX) + 2;
                let area = area.centered(
                    Constraint::Length(40.min(area.width)),
                    Constraint::Length(height),
                );
                if let Some(inner) = dialog(area, buf, title, theme, theme.focused_border) {
                    Paragraph::new(lines).render(inner, buf);
                }
            }
        }
    }
}

/// Clears `area`, draws a bordered dialog and returns its inside.
pub(super) fn dialog(
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
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(Span::styled(title.to_owned(), theme.header));
    let inner = block.inner(area);
    block.render(area, buf);
    Some(inner)
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

/// Draws the newest toasts bottom-right of `area`, newest lowest.
pub fn render_toasts(toasts: &[Toast], area: Rect, buf: &mut Buffer, theme: &Theme) {
    let mut bottom = area.bottom();
    for toast in toasts.iter().rev().take(3) {
        let width = (u16::try_from(toast.text.chars().count()).unwrap_or(u16::MAX) + 4)
            .min(area.width.saturating_sub(2))
            .max(10);
        if bottom < area.y + 3 {
            break;
        }
        let rect = Rect {
            x: area.right().saturating_sub(width + 1),
            y: bottom - 3,
            width,
            height: 3,
        };
        bottom -= 3;
        let style = match toast.kind {
            ToastKind::Info => theme.success,
            ToastKind::Error => theme.error,
        };
        if let Some(inner) = dialog(rect, buf, "", theme, style) {
            Paragraph::new(Span::styled(toast.text.clone(), style)).render(inner, buf);
        }
    }
}
