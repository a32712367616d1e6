//! The Trash pane (local databases): deleted links and spaces, newest first, with when each is
//! purged. `R` brings the selected one back with its id and clicks, or every marked one; delete
//! removes them for good; emptying the trash removes everything in it.

use std::collections::BTreeSet;

use jiff::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, StatefulWidget, Table, TableState, Widget};

use super::format;
use super::keys::{Action, Key};
use super::links::centered_block;
use super::msg::RequestId;
use super::scroll::offset_showing;
use super::view::{Ctx, Outcome};
use crate::backend::{TrashPage, Trashed, TrashedKind};
use crate::domain::{Id, into_shown};

/// Items held: the newest of the trash (the CLI lists the rest).
pub const HELD: usize = 100;

#[derive(Debug, Clone, Default)]
pub struct TrashView {
    items: Vec<Trashed>,
    total: Option<u64>,
    /// The backend keeps no trash (a remote server).
    none: bool,
    cursor: usize,
    offset: usize,
    rows: usize,
    expected: Option<RequestId>,
    pub error: Option<String>,
    /// The items marked (`space`, `*`), by kind and id: they outlive a reload of the list.
    marked: BTreeSet<(TrashedKind, Id)>,
}

impl TrashView {
    pub fn expect(&mut self, req: RequestId) {
        self.expected = Some(req);
    }

    pub fn selected(&self) -> Option<&Trashed> {
        self.items.get(self.cursor)
    }

    /// What `R` and delete act on: the marked items, else the selected one.
    pub fn chosen(&self) -> Vec<Trashed> {
        if self.marked.is_empty() {
            return self.selected().cloned().into_iter().collect();
        }
        self.items
            .iter()
            .filter(|i| self.marked.contains(&(i.kind, i.id)))
            .cloned()
            .collect()
    }

    /// How many items the trash holds, once known.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    /// `space`: marks or unmarks the selected item and moves on.
    pub fn toggle_mark(&mut self) {
        if let Some(item) = self.selected() {
            let key = (item.kind, item.id);
            if !self.marked.remove(&key) {
                self.marked.insert(key);
            }
            self.cursor = (self.cursor + 1).min(self.items.len().saturating_sub(1));
            self.scroll();
        }
    }

    /// `*`: marks every item shown.
    pub fn mark_all(&mut self) {
        self.marked = self.items.iter().map(|i| (i.kind, i.id)).collect();
    }

    /// Clears the marks; false when there were none.
    pub fn clear_marks(&mut self) -> bool {
        !std::mem::take(&mut self.marked).is_empty()
    }

    pub fn accept(
        &mut self,
        req: RequestId,
        result: crate::domain::Result<Option<TrashPage>>,
    ) -> Result<(), String> {
        if self.expected != Some(req) {
            return Ok(());
        }
        self.expected = None;
        match result {
            Ok(Some(page)) => {
                self.total = Some(page.total);
                self.items = page.items;
                // Marks of items that left the trash (restored, purged) go with them.
                let held: BTreeSet<(TrashedKind, Id)> =
                    self.items.iter().map(|i| (i.kind, i.id)).collect();
                self.marked.retain(|m| held.contains(m));
                self.none = false;
                self.error = None;
                self.cursor = self.cursor.min(self.items.len().saturating_sub(1));
                self.scroll();
                Ok(())
            }
            Ok(None) => {
                self.none = true;
                self.total = Some(0);
                self.items.clear();
                Ok(())
            }
            Err(e) => {
                self.error = Some(e.to_string());
                Err(e.to_string())
            }
        }
    }

    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows.max(1);
        self.scroll();
    }

    fn scroll(&mut self) {
        self.offset = offset_showing(self.cursor, self.offset, self.rows);
    }

    pub fn handle_key(&mut self, key: Key) -> Outcome {
        let last = self.items.len().saturating_sub(1);
        let page = self.rows.saturating_sub(1).max(1);
        self.cursor = match key.action {
            Some(Action::Down) => (self.cursor + 1).min(last),
            Some(Action::Up) => self.cursor.saturating_sub(1),
            Some(Action::PageDown) => (self.cursor + page).min(last),
            Some(Action::PageUp) => self.cursor.saturating_sub(page),
            Some(Action::HalfPageDown) => (self.cursor + (page / 2).max(1)).min(last),
            Some(Action::HalfPageUp) => self.cursor.saturating_sub((page / 2).max(1)),
            Some(Action::Top) => 0,
            Some(Action::Bottom) => last,
            _ => return Outcome::Ignored,
        };
        self.scroll();
        Outcome::Handled
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let title = match self.total {
            Some(total) if total > self.items.len() as u64 => format!(
                " Trash ({}; the newest {} shown) ",
                format::count(total),
                self.items.len()
            ),
            Some(total) => format!(" Trash ({}) ", format::count(total)),
            None => " Trash ".into(),
        };
        let inner = ctx.pane(title, area, buf);
        let key = |a| Span::styled(ctx.keys.first(a), t.accent);
        let message: Option<Vec<Line>> = if self.none {
            Some(vec![
                Line::styled("This server keeps no trash.", t.header),
                Line::raw(""),
                Line::raw("A delete there is final; undo makes the links again, without clicks."),
            ])
        } else if let (Some(error), None) = (&self.error, self.total) {
            Some(vec![
                Line::styled("Could not load the trash", t.error),
                Line::raw(into_shown(error.clone())),
            ])
        } else if self.total.is_none() {
            Some(vec![Line::from(vec![
                Span::styled(ctx.spinner.to_string(), t.accent),
                Span::raw(" Loading the trash…"),
            ])])
        } else if self.items.is_empty() {
            Some(vec![
                Line::styled("The trash is empty.", t.header),
                Line::raw(""),
                Line::raw("Deleted links and spaces wait here, with their clicks."),
            ])
        } else {
            None
        };
        if let Some(lines) = message {
            Paragraph::new(lines)
                .alignment(Alignment::Center)
                .render(centered_block(inner, 4), buf);
            return;
        }
        let name_w = 16;
        let when_w = 10;
        // Everything but the destination: the arrow, the other columns and the gaps between.
        let what_w = usize::from(inner.width).saturating_sub(2 + 6 + name_w + 7 + 2 * when_w + 5);
        let rows = self
            .items
            .iter()
            .skip(self.offset)
            .take(self.rows.saturating_sub(1))
            .map(|item| {
                let mark = if self.marked.contains(&(item.kind, item.id)) {
                    Span::styled("●", t.accent)
                } else {
                    Span::raw(" ")
                };
                Row::new(vec![
                    Cell::from(Line::from(vec![
                        mark,
                        Span::styled(item.kind.as_str(), t.dim),
                    ])),
                    Cell::from(format::clip(&item.name, name_w)),
                    Cell::from(format::clip(&item.detail, what_w)),
                    Cell::from(
                        Line::from(match item.kind {
                            TrashedKind::Link => format::count(item.clicks),
                            TrashedKind::Space => String::new(),
                        })
                        .right_aligned(),
                    ),
                    Cell::from(ago(item.deleted_at, ctx.now)),
                    Cell::from(
                        item.purge_at
                            .map_or("never".to_owned(), |at| until(at, ctx.now)),
                    ),
                ])
            });
        let header = Row::new(["", "name", "what", "clicks", "deleted", "purged"]).style(t.header);
        let table = Table::new(
            rows,
            [
                Constraint::Length(6),
                Constraint::Length(name_w as u16),
                Constraint::Fill(1),
                Constraint::Length(7),
                Constraint::Length(when_w as u16),
                Constraint::Length(when_w as u16),
            ],
        )
        .header(header)
        .row_highlight_style(t.selected)
        .highlight_symbol("▶ ")
        .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
        let mut state = TableState::default().with_selected(Some(self.cursor - self.offset));
        let [list, hint] =
            ratatui::layout::Layout::vertical([Constraint::Min(1), Constraint::Length(1)])
                .areas(inner);
        StatefulWidget::render(table, list, buf, &mut state);
        let which = if self.marked.is_empty() {
            String::new()
        } else {
            format!(" the {} marked", format::count(self.marked.len() as u64))
        };
        Line::from(vec![
            key(Action::Restore),
            Span::styled(format!(" restores{which}  "), t.dim),
            key(Action::Delete),
            Span::styled(" deletes for good  ", t.dim),
            key(Action::Mark),
            Span::styled(" marks  ", t.dim),
            key(Action::EmptyTrash),
            Span::styled(" empties the trash", t.dim),
        ])
        .render(hint, buf);
    }
}

fn ago(at: Timestamp, now: Timestamp) -> String {
    format!("{} ago", format::short_duration(now.duration_since(at)))
}

fn until(at: Timestamp, now: Timestamp) -> String {
    if at <= now {
        "soon".into()
    } else {
        format!("in {}", format::short_duration(at.duration_since(now)))
    }
}
