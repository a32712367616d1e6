//! The Links pane: a table paged from the backend around the cursor, and the details of the
//! selected link.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, BorderType, Borders, Cell, Paragraph, Row, StatefulWidget, Table, TableState, Widget,
    Wrap,
};

use super::format;
use super::keys::{Action, Key};
use super::msg::RequestId;
use super::paging::PagedList;
use super::view::{Ctx, Outcome};
use crate::domain::{Link, Page, TargetType};

/// Rows asked for per page: the most the v1 API allows.
const PER_PAGE: u32 = 100;

const DETAILS_HEIGHT: u16 = 8;

#[derive(Debug, Clone)]
pub struct LinksView {
    pub list: PagedList<Link>,
    /// Why the list could not be loaded, while there is nothing to show.
    pub error: Option<String>,
    pub show_details: bool,
    /// Whether the current question is filtered (changes the empty-state message).
    pub filtered: bool,
}

impl Default for LinksView {
    fn default() -> Self {
        LinksView {
            list: PagedList::new(PER_PAGE),
            error: None,
            show_details: true,
            filtered: false,
        }
    }
}

impl LinksView {
    pub fn selected(&self) -> Option<&Link> {
        self.list.selected()
    }

    pub fn handle_key(&mut self, key: Key) -> Outcome {
        let page = isize::try_from(self.list.rows().saturating_sub(1).max(1)).unwrap_or(1);
        match key.action {
            Some(Action::Down) => self.list.move_by(1),
            Some(Action::Up) => self.list.move_by(-1),
            Some(Action::PageDown) => self.list.move_by(page),
            Some(Action::PageUp) => self.list.move_by(-page),
            Some(Action::Top) => self.list.top(),
            Some(Action::Bottom) => self.list.bottom(),
            Some(Action::Select) => self.show_details = !self.show_details,
            _ => return Outcome::Ignored,
        }
        Outcome::Handled
    }

    /// Takes a page answer; false when it was stale.
    pub fn accept(
        &mut self,
        req: RequestId,
        page: u32,
        result: crate::domain::Result<Page<Link>>,
    ) -> Result<bool, String> {
        match result {
            Ok(p) => {
                let fresh = self.list.accept(req, page, p.per_page, p.total, p.items);
                if fresh {
                    self.error = None;
                }
                Ok(fresh)
            }
            Err(e) => {
                if !self.list.fail(req, page) {
                    return Ok(false);
                }
                let message = e.to_string();
                if self.list.total().is_none() {
                    self.error = Some(message.clone());
                }
                Err(message)
            }
        }
    }

    /// Table and details areas within the pane.
    pub fn split(&self, area: Rect) -> (Rect, Option<Rect>) {
        if self.show_details && area.height >= DETAILS_HEIGHT + 6 {
            let [table, details] =
                Layout::vertical([Constraint::Min(4), Constraint::Length(DETAILS_HEIGHT)])
                    .areas(area);
            (table, Some(details))
        } else {
            (area, None)
        }
    }

    /// How many rows of links the table shows in `area`.
    pub fn rows_for(&self, area: Rect) -> usize {
        let (table, _) = self.split(area);
        usize::from(table.height.saturating_sub(3))
    }

    /// The list index under a screen position, for mouse clicks.
    pub fn index_at(&self, area: Rect, x: u16, y: u16) -> Option<usize> {
        let (table, _) = self.split(area);
        let first_row = table.y + 2;
        if x <= table.x
            || x >= table.right().saturating_sub(1)
            || y < first_row
            || y >= table.bottom().saturating_sub(1)
        {
            return None;
        }
        let index = self.list.offset() + usize::from(y - first_row);
        (index < self.list.len()).then_some(index)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let (table_area, details_area) = self.split(area);
        let border = if ctx.focused {
            ctx.theme.focused_border
        } else {
            ctx.theme.border
        };
        let title = match self.list.total() {
            Some(total) if !self.list.is_empty() => format!(
                " Links {} of {} ",
                format::count(self.list.cursor() as u64 + 1),
                format::count(total)
            ),
            _ => " Links ".to_owned(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(border)
            .title(Span::styled(title, ctx.theme.header));
        let inner = block.inner(table_area);
        block.render(table_area, buf);

        if let Some(message) = self.state_message(ctx) {
            Paragraph::new(message)
                .alignment(Alignment::Center)
                .wrap(Wrap { trim: false })
                .render(centered_block(inner, 8), buf);
        } else {
            self.render_table(inner, buf, ctx);
        }

        if let Some(details_area) = details_area {
            render_details(self.selected(), details_area, buf, ctx);
        }
    }

    /// The message shown instead of the table: loading, error, empty.
    fn state_message(&self, ctx: &Ctx) -> Option<Text<'static>> {
        let t = ctx.theme;
        let key = |a: Action| Span::styled(ctx.keys.first(a), t.accent);
        if self.list.total().is_none() {
            if let Some(error) = &self.error {
                return Some(Text::from(vec![
                    Line::styled("Could not load links", t.error),
                    Line::raw(""),
                    Line::styled(error.clone(), t.text),
                    Line::raw(""),
                    Line::from(vec![
                        Span::raw("Press "),
                        key(Action::Refresh),
                        Span::raw(" to retry."),
                    ]),
                ]));
            }
            return Some(Text::from(vec![Line::from(vec![
                Span::styled(ctx.spinner.to_string(), t.accent),
                Span::raw(" Loading links…"),
            ])]));
        }
        if !self.list.is_empty() {
            return None;
        }
        if self.filtered {
            return Some(Text::from(vec![
                Line::styled("No links match these filters.", t.header),
                Line::raw(""),
                Line::from(vec![
                    Span::raw("Press "),
                    key(Action::ClearFilters),
                    Span::raw(" to clear them."),
                ]),
            ]));
        }
        Some(Text::from(vec![
            Line::styled("No links yet.", t.header),
            Line::raw(""),
            Line::from(vec![
                Span::raw("Press "),
                key(Action::New),
                Span::raw(" to create your first link, or import some from a shell:"),
            ]),
            Line::styled("linkdeck import assets/demo.json", t.accent),
            Line::raw(""),
            Line::from(vec![
                Span::raw("Press "),
                key(Action::Help),
                Span::raw(" for every key, "),
                key(Action::Quit),
                Span::raw(" to quit."),
            ]),
        ]))
    }

    fn render_table(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let header = Row::new([
            "alias",
            "destination",
            "space",
            "clicks",
            "status",
            "expires",
        ])
        .style(t.header);
        let rows = self.list.visible().map(|(_, link)| match link {
            Some(link) => link_row(link, ctx),
            None => Row::new([Cell::from(Span::styled("…", t.dim))]),
        });
        let widths = [
            Constraint::Length(12),
            Constraint::Fill(1),
            Constraint::Length(14),
            Constraint::Length(7),
            Constraint::Length(8),
            Constraint::Length(7),
        ];
        let table = Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .row_highlight_style(t.selected)
            .highlight_symbol("▶ ")
            .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
        let mut state = TableState::default();
        if !self.list.is_empty() {
            state.select(Some(self.list.cursor() - self.list.offset()));
        }
        StatefulWidget::render(table, area, buf, &mut state);
    }
}

fn link_row(link: &Link, ctx: &Ctx) -> Row<'static> {
    let t = ctx.theme;
    let status = link.status(ctx.now);
    let status_style = if status.disabled {
        t.dim
    } else if status.expired {
        t.warning
    } else {
        t.success
    };
    let space = match &link.space {
        Some(space) => Line::from(vec![
            Span::styled("● ", t.space(space.color)),
            Span::raw(space.name.clone()),
        ]),
        None => Line::styled("–", t.dim),
    };
    Row::new(vec![
        Cell::from(link.alias.clone()),
        Cell::from(link.url.clone()),
        Cell::from(space),
        Cell::from(Line::from(format::count(link.clicks)).right_aligned()),
        Cell::from(Span::styled(status.label(), status_style)),
        Cell::from(format::expiry_cell(link, ctx.now)),
    ])
}

fn render_details(link: Option<&Link>, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
    let t = ctx.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(t.border)
        .title(Span::styled(" details ", t.header));
    let inner = block.inner(area);
    block.render(area, buf);
    let Some(link) = link else {
        Paragraph::new(Span::styled("Nothing selected.", t.dim)).render(inner, buf);
        return;
    };
    let label = |s: &'static str| Span::styled(format!("{s:<12}"), t.dim);
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let status = link.status(ctx.now);
    let lines = vec![
        Line::from(vec![
            label("short URL"),
            Span::styled(link.short_url.clone(), t.accent),
        ]),
        Line::from(vec![label("destination"), Span::raw(link.url.clone())]),
        Line::from(vec![label("targeting"), Span::raw(targeting_summary(link))]),
        Line::from(vec![
            label("expires"),
            Span::raw(format::expiry_detail(link, ctx.now, ctx.tz)),
        ]),
        Line::from(vec![
            label("status"),
            Span::raw(status.label()),
            Span::styled(" · password ", t.dim),
            Span::raw(yes_no(link.password)),
            Span::styled(" · public stats ", t.dim),
            Span::raw(yes_no(link.public)),
            Span::styled(" · clicks ", t.dim),
            Span::raw(format::count(link.clicks)),
            Span::styled(
                format!(" ({} traffic)", ctx.keys.first(Action::Stats)),
                t.dim,
            ),
        ]),
        Line::from(vec![
            label("created"),
            Span::raw(format::datetime(link.created_at, ctx.tz)),
            Span::styled(" · updated ", t.dim),
            Span::raw(format::datetime(link.updated_at, ctx.tz)),
        ]),
    ];
    Paragraph::new(lines).render(inner, buf);
}

/// One line about where the link sends visitors besides its destination.
pub fn targeting_summary(link: &Link) -> String {
    let rules = link.active_rules();
    if link.target_type == TargetType::None || rules.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = rules
        .iter()
        .take(2)
        .map(|(key, url)| match key {
            Some(key) => format!("{key} → {url}"),
            None => (*url).to_owned(),
        })
        .collect();
    let more = rules.len().saturating_sub(2);
    let mut text = format!(
        "{} ({}): {}",
        link.target_type.label(),
        rules.len(),
        shown.join(", ")
    );
    if more > 0 {
        text.push_str(&format!(", +{more} more"));
    }
    text
}

/// A rectangle of `height` rows centred vertically in `area`.
pub fn centered_block(area: Rect, height: u16) -> Rect {
    let height = height.min(area.height);
    Rect {
        y: area.y + (area.height - height) / 2,
        height,
        ..area
    }
}
