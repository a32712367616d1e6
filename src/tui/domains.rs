//! The Domains pane: every domain with where it sends visitors no link takes (its root, an
//! unknown alias, a disabled or expired link) and its robots.txt policy; `e` edits them. The
//! domains are the app's own list (fetched whole, as for the link form and the domain filter),
//! handed in on every answer; domains are added and removed with `linkdeck domains`.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Widget};

use super::keys::Key;
use super::links::centered_block;
use super::scroll::ListCursor;
use super::view::{Ctx, Outcome};
use crate::domain::{Domain, into_shown};

#[derive(Debug, Clone, Default)]
pub struct DomainsView {
    items: Option<Vec<Domain>>,
    list: ListCursor,
}

impl DomainsView {
    /// The domains as last fetched.
    pub fn set(&mut self, domains: Vec<Domain>) {
        let len = domains.len();
        self.items = Some(domains);
        self.list.select(self.list.cursor, len);
    }

    pub fn selected(&self) -> Option<&Domain> {
        self.items.as_ref()?.get(self.list.cursor)
    }

    fn len(&self) -> usize {
        self.items.as_ref().map_or(0, Vec::len)
    }

    pub fn set_rows(&mut self, rows: usize) {
        self.list.set_rows(rows);
    }

    pub fn select(&mut self, index: usize) {
        self.list.select(index, self.len());
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
        self.list.index_at(area, y, self.len())
    }

    pub fn handle_key(&mut self, key: Key) -> Outcome {
        match self.list.handle_move(key.action, self.len()) {
            true => Outcome::Handled,
            false => Outcome::Ignored,
        }
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
            .skip(self.list.offset)
            .take(self.list.rows)
            .map(|d| {
                let name = Cell::from(into_shown(d.name.clone()));
                match &d.settings {
                    Some(s) => Row::new(vec![
                        name,
                        url(&s.root_url),
                        url(&s.unknown_url),
                        url(&s.expired_url),
                        Cell::from(s.robots.word()),
                    ]),
                    // A server without them (phpShort).
                    None => {
                        Row::new([name, Cell::from(Span::styled("none on this server", t.dim))])
                    }
                }
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
        .header(header);
        self.list.render(table, inner, buf, t);
    }
}
