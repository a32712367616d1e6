//! The Spaces pane: every space with its colour and how many links it holds; Enter shows its
//! links. Spaces are few (a person names each one), so all of them are held, fetched page by
//! page.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, StatefulWidget, Table, TableState, Widget};

use super::filter::Named;
use super::format;
use super::keys::{Action, Key};
use super::links::centered_block;
use super::msg::RequestId;
use super::scroll::offset_showing;
use super::view::{Ctx, Outcome};
use crate::domain::{Space, into_shown};

#[derive(Debug, Clone, Default)]
pub struct SpacesView {
    items: Vec<Space>,
    total: Option<u64>,
    cursor: usize,
    offset: usize,
    rows: usize,
    expected: Option<RequestId>,
    pub error: Option<String>,
}

impl SpacesView {
    pub fn spaces(&self) -> &[Space] {
        &self.items
    }

    pub fn selected(&self) -> Option<&Space> {
        self.items.get(self.cursor)
    }

    pub fn expect(&mut self, req: RequestId) {
        self.expected = Some(req);
    }

    pub fn is_loaded(&self) -> bool {
        self.total.is_some()
    }

    /// Takes an answer; false when it was stale.
    pub fn accept(
        &mut self,
        req: RequestId,
        result: crate::domain::Result<Vec<Space>>,
    ) -> Result<bool, String> {
        if self.expected != Some(req) {
            return Ok(false);
        }
        self.expected = None;
        match result {
            Ok(spaces) => {
                self.total = Some(spaces.len() as u64);
                self.items = spaces;
                self.error = None;
                self.cursor = self.cursor.min(self.items.len().saturating_sub(1));
                self.scroll();
                Ok(true)
            }
            Err(e) => {
                let message = e.to_string();
                if self.total.is_none() {
                    self.error = Some(message.clone());
                }
                Err(message)
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

    fn move_to(&mut self, index: isize) {
        let last = self.items.len().saturating_sub(1);
        self.cursor = usize::try_from(index.max(0)).unwrap_or(0).min(last);
        self.scroll();
    }

    pub fn select(&mut self, index: usize) {
        self.move_to(isize::try_from(index).unwrap_or(isize::MAX));
    }

    pub fn index_at(&self, area: Rect, y: u16) -> Option<usize> {
        let first_row = area.y + 2;
        if y < first_row || y >= area.bottom().saturating_sub(1) {
            return None;
        }
        let index = self.offset + usize::from(y - first_row);
        (index < self.items.len()).then_some(index)
    }

    pub fn rows_for(area: Rect) -> usize {
        usize::from(area.height.saturating_sub(3))
    }

    pub fn handle_key(&mut self, key: Key) -> Outcome {
        let cursor = isize::try_from(self.cursor).unwrap_or(0);
        let page = isize::try_from(self.rows.saturating_sub(1).max(1)).unwrap_or(1);
        match key.action {
            Some(Action::Down) => self.move_to(cursor + 1),
            Some(Action::Up) => self.move_to(cursor - 1),
            Some(Action::PageDown) => self.move_to(cursor + page),
            Some(Action::PageUp) => self.move_to(cursor - page),
            Some(Action::HalfPageDown) => self.move_to(cursor + (page / 2).max(1)),
            Some(Action::HalfPageUp) => self.move_to(cursor - (page / 2).max(1)),
            Some(Action::Top) => self.move_to(0),
            Some(Action::Bottom) => self.move_to(isize::MAX),
            Some(Action::Select) => {
                return match self.items.get(self.cursor) {
                    Some(space) => Outcome::OpenSpace(Named::from(space)),
                    None => Outcome::Handled,
                };
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Handled
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let title = match self.total {
            Some(total) => format!(" Spaces ({}) ", format::count(total)),
            None => " Spaces ".into(),
        };
        let inner = ctx.pane(title, area, buf);

        let message: Option<Vec<Line>> = match (&self.error, self.total) {
            (Some(error), None) => Some(vec![
                Line::styled("Could not load spaces", t.error),
                Line::raw(""),
                Line::raw(into_shown(error.clone())),
                Line::raw(""),
                Line::from(vec![
                    Span::raw("Press "),
                    Span::styled(ctx.keys.first(Action::Refresh), t.accent),
                    Span::raw(" to retry."),
                ]),
            ]),
            (None, None) => Some(vec![Line::from(vec![
                Span::styled(ctx.spinner.to_string(), t.accent),
                Span::raw(" Loading spaces…"),
            ])]),
            (_, Some(_)) if self.items.is_empty() => Some(vec![
                Line::styled("No spaces yet.", t.header),
                Line::raw(""),
                Line::raw("Spaces group links under a name and a colour."),
                Line::from(vec![
                    Span::raw("Press "),
                    Span::styled(ctx.keys.first(Action::New), t.accent),
                    Span::raw(" to create one."),
                ]),
            ]),
            _ => None,
        };
        if let Some(lines) = message {
            Paragraph::new(lines)
                .alignment(Alignment::Center)
                .render(centered_block(inner, 5), buf);
            return;
        }

        let header = Row::new(["name", "colour", "links"]).style(t.header);
        let rows = self
            .items
            .iter()
            .skip(self.offset)
            .take(self.rows)
            .map(|space| {
                Row::new(vec![
                    Cell::from(into_shown(space.name.clone())),
                    Cell::from(Line::from(vec![
                        Span::styled("● ", t.space(space.color)),
                        Span::raw(space.color.name()),
                    ])),
                    Cell::from(
                        Line::from(space.links.map_or("–".to_owned(), format::count))
                            .right_aligned(),
                    ),
                ])
            });
        let table = Table::new(
            rows,
            [
                Constraint::Length(34),
                Constraint::Length(10),
                Constraint::Length(9),
            ],
        )
        .header(header)
        .row_highlight_style(t.selected)
        .highlight_symbol("▶ ")
        .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
        let mut state = TableState::default().with_selected(Some(self.cursor - self.offset));
        StatefulWidget::render(table, inner, buf, &mut state);
    }
}
