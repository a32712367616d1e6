//! The Domains pane: every domain with where it sends visitors no link takes (its root, an
//! unknown alias, a disabled or expired link) and its robots.txt policy; `e` edits them. The
//! domains are the app's own list (fetched whole, as for the link form and the domain filter),
//! handed in on every answer; domains are added and removed with `linkdeck domains`.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, StatefulWidget, Table, TableState, Widget};

use super::keys::{Action, Key};
use super::links::centered_block;
use super::scroll::offset_showing;
use super::view::{Ctx, Outcome};
use crate::domain::{Domain, into_shown};

#[derive(Debug, Clone, Default)]
pub struct DomainsView {
    items: Option<Vec<Domain>>,
    cursor: usize,
    offset: usize,
    rows: usize,
}

impl DomainsView {
    /// The domains as last fetched.
    pub fn set(&mut self, domains: Vec<Domain>) {
        self.cursor = self.cursor.min(domains.len().saturating_sub(1));
        self.items = Some(domains);
        self.scroll();
    }

    pub fn selected(&self) -> Option<&Domain> {
        self.items.as_ref()?.get(self.cursor)
    }

    fn len(&self) -> usize {
        self.items.as_ref().map_or(0, Vec::len)
    }

    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows.max(1);
        self.scroll();
    }

    fn scroll(&mut self) {
        self.offset = offset_showing(self.cursor, self.offset, self.rows);
    }

    fn move_to(&mut self, index: isize) {
        let last = self.len().saturating_sub(1);
        self.cursor = usize::try_from(index.max(0)).unwrap_or(0).min(last);
        self.scroll();
    }

    pub fn select(&mut self, index: usize) {
        self.move_to(isize::try_from(index).unwrap_or(isize::MAX));
    }

    /// Selects the domain `id`, if it is listed.
    pub fn select_id(&mut self, id: crate::domain::Id) -> bool {
        let at = self.items.iter().flatten().position(|d| d.id == id);
        if let Some(index) = at {
            self.select(index);
        }
        at.is_some()
    }

    pub fn index_at(&self, area: Rect, y: u16) -> Option<usize> {
        let first_row = area.y + 2;
        if y < first_row || y >= area.bottom().saturating_sub(1) {
            return None;
        }
        let index = self.offset + usize::from(y - first_row);
        (index < self.len()).then_some(index)
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
            _ => return Outcome::Ignored,
        }
        Outcome::Handled
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let title = match &self.items {
            Some(items) => format!(" Domains ({}) ", items.len()),
            None => " Domains ".into(),
        };
        let inner = ctx.pane(title, area, buf);
        let message: Option<Vec<Line>> = match &self.items {
            None => Some(vec![Line::from(vec![
                Span::styled(ctx.spinner.to_string(), t.accent),
                Span::raw(" Loading domains…"),
            ])]),
            Some(items) if items.is_empty() => Some(vec![
                Line::styled("No domains.", t.header),
                Line::raw(""),
                Line::raw("Links use the profile's public URL."),
                Line::raw("Add a domain with `linkdeck domains add sho.rt`."),
            ]),
            Some(_) => None,
        };
        if let Some(lines) = message {
            Paragraph::new(lines)
                .alignment(Alignment::Center)
                .render(centered_block(inner, 4), buf);
            return;
        }
        let header = Row::new([
            "name",
            "root",
            "unknown alias",
            "disabled/expired",
            "robots",
        ])
        .style(t.header);
        // A fallback unset: linkdeck's own page.
        let url = |u: &Option<String>| match u {
            Some(url) => Cell::from(into_shown(url.clone())),
            None => Cell::from(Span::styled("own page", t.dim)),
        };
        let rows = self
            .items
            .iter()
            .flatten()
            .skip(self.offset)
            .take(self.rows)
            .map(|d| {
                let s = &d.settings;
                Row::new(vec![
                    Cell::from(into_shown(d.name.clone())),
                    url(&s.root_url),
                    url(&s.unknown_url),
                    url(&s.expired_url),
                    Cell::from(s.robots.word()),
                ])
            });
        let table = Table::new(
            rows,
            [
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Fill(2),
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
