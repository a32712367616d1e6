//! The Spaces pane: every space with its colour and how many links it holds; Enter shows its
//! links. Spaces are few (a person names each one), so all of them are held, fetched page by
//! page.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Widget};

use super::format;
use super::keys::{Action, Key};
use super::links::centered_block;
use super::msg::RequestId;
use super::named::Named;
use super::scroll::ListCursor;
use super::view::{Ctx, Outcome};
use crate::domain::{Space, into_shown};

#[derive(Debug, Clone, Default)]
pub struct SpacesView {
    items: Vec<Space>,
    total: Option<u64>,
    list: ListCursor,
    expected: Option<RequestId>,
    pub error: Option<String>,
}

impl SpacesView {
    pub fn spaces(&self) -> &[Space] {
        &self.items
    }

    pub fn selected(&self) -> Option<&Space> {
        self.items.get(self.list.cursor)
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
                self.list.select(self.list.cursor, self.items.len());
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
        self.list.set_rows(rows);
    }

    pub fn select(&mut self, index: usize) {
        self.list.select(index, self.items.len());
    }

    pub fn index_at(&self, area: Rect, y: u16) -> Option<usize> {
        self.list.index_at(area, y, self.items.len())
    }

    pub fn rows_for(area: Rect) -> usize {
        usize::from(area.height.saturating_sub(3))
    }

    pub fn handle_key(&mut self, key: Key) -> Outcome {
        if self.list.handle_move(key.action, self.items.len()) {
            return Outcome::Handled;
        }
        match key.action {
            Some(Action::Select) => match self.selected() {
                Some(space) => Outcome::OpenSpace(Named::from(space)),
                None => Outcome::Handled,
            },
            _ => Outcome::Ignored,
        }
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
            .skip(self.list.offset)
            .take(self.list.rows)
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
        .header(header);
        self.list.render(table, inner, buf, t);
    }
}
