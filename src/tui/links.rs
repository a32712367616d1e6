//! The Links pane: a table paged from the backend around the cursor, and the details of the
//! selected link.

use std::collections::BTreeSet;

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Paragraph, Row, StatefulWidget, Table, TableState, Widget, Wrap};

use super::format;
use super::keys::{Action, Key};
use super::marks::Marks;
use super::msg::RequestId;
use super::paging::PagedList;
use super::view::{Ctx, Outcome};

use crate::config::Column;
use crate::domain::{Link, LinkOptions, Page, Sort, StatusFilter, TargetType, Total, into_shown};

/// Rows asked for per page: the most the v1 API allows.
const PER_PAGE: u32 = 100;

/// Seven lines of details and the border.
const DETAILS_HEIGHT: u16 = 9;

#[derive(Debug, Clone)]
pub struct LinksView {
    pub list: PagedList<Link>,
    /// Why the list could not be loaded: with nothing to show, instead of the table; with
    /// rows held, under them (the rows are then from before and marked stale).
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
            Some(Action::HalfPageDown) => self.list.move_by((page / 2).max(1)),
            Some(Action::HalfPageUp) => self.list.move_by(-(page / 2).max(1)),
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
                let total = Total {
                    n: p.total,
                    exact: p.total_exact,
                };
                let fresh = self.list.accept(req, page, p.per_page, total, p.items);
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
                self.error = Some(message.clone());
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

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx, extra: &Extra) {
        let (table_area, details_area) = self.split(area);
        let border = if ctx.focused {
            ctx.theme.focused_border
        } else {
            ctx.theme.border
        };
        // While a new question is unanswered, the last answer stays on screen, dimmed.
        let waiting = self
            .list
            .previous()
            .filter(|_| self.list.total().is_none() && self.error.is_none());
        let shown = waiting.unwrap_or(&self.list);
        let title = match shown.shown_total() {
            Some(total) if !shown.is_empty() => format!(
                " Links {} of {total} ",
                format::count(shown.cursor() as u64 + 1),
            ),
            _ => " Links ".to_owned(),
        };
        let stale = self.list.is_stale();
        let mut block = ctx.theme.panel(title, border);
        if stale {
            block = block.title(Span::styled(" stale ", ctx.theme.error));
        }
        if waiting.is_some() {
            block = block.title(Span::styled(
                format!(" {} searching ", ctx.spinner),
                ctx.theme.accent,
            ));
        }
        let inner = block.inner(table_area);
        block.render(table_area, buf);

        if let Some(previous) = waiting {
            self.render_table(previous, inner, buf, ctx, extra, true);
        } else if let Some(message) = self.state_message(ctx) {
            Paragraph::new(message)
                .alignment(Alignment::Center)
                .wrap(Wrap { trim: false })
                .render(centered_block(inner, 8), buf);
        } else if stale {
            // The last rows that loaded stay, under what went wrong.
            let [table, note] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
            self.render_table(&self.list, table, buf, ctx, extra, true);
            let why = self
                .error
                .as_deref()
                .unwrap_or("the backend did not answer");
            Line::from(vec![
                Span::styled(" Showing the last rows loaded: ", ctx.theme.error),
                Span::raw(format::clip(
                    why,
                    usize::from(note.width).saturating_sub(50),
                )),
                Span::raw(" · press "),
                Span::styled(ctx.keys.first(Action::Refresh), ctx.theme.accent),
                Span::raw(" to retry"),
            ])
            .render(note, buf);
        } else {
            self.render_table(&self.list, inner, buf, ctx, extra, false);
        }

        if let Some(details_area) = details_area {
            render_details(shown.selected(), details_area, buf, ctx);
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
                    Line::styled(into_shown(error.clone()), t.text),
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
                Span::raw(" to create your first link, or load the demo from a shell:"),
            ]),
            Line::styled("linkdeck demo", t.accent),
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

    /// Draws `list`'s rows on screen (this view's, or the one before its question changed);
    /// `dim` rows are from before (a failed refresh, a question not answered yet).
    fn render_table(
        &self,
        list: &PagedList<Link>,
        area: Rect,
        buf: &mut Buffer,
        ctx: &Ctx,
        extra: &Extra,
        dim: bool,
    ) {
        let t = ctx.theme;
        let shown: Vec<Option<&Link>> = list.visible().map(|(_, l)| l).collect();
        let columns = Columns::fit(&shown, area.width, extra, ctx);
        let mut header = vec![" alias"];
        header.extend(
            columns
                .shown
                .iter()
                .map(|(column, _)| match (column, extra.sort) {
                    (Column::Clicks, Sort::Max) => "clicks ▼",
                    (Column::Clicks, Sort::Min) => "clicks ▲",
                    (column, _) => column.as_str(),
                }),
        );
        let header = Row::new(header).style(t.header);
        let rows = shown.iter().map(|link| match link {
            Some(link) => {
                let row = link_row(link, ctx, &columns, extra);
                if dim { row.style(t.dim) } else { row }
            }
            None => Row::new([Cell::from(Span::styled(" …", t.dim))]),
        });
        let table = Table::new(rows, columns.constraints())
            .header(header)
            .column_spacing(1)
            .row_highlight_style(t.selected)
            .highlight_symbol("▶")
            .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
        let mut state = TableState::default();
        if !list.is_empty() {
            state.select(Some(list.cursor() - list.offset()));
        }
        StatefulWidget::render(table, area, buf, &mut state);
    }
}

/// What the table shows besides the rows themselves.
pub struct Extra<'a> {
    pub marks: &'a Marks,
    /// More than one host serves links: say which one each link is on.
    pub show_domain: bool,
    /// The list's order: the clicks column says when it is by clicks.
    pub sort: Sort,
    /// The columns chosen (`[ui] columns`, `C`); the alias always shows.
    pub columns: &'a BTreeSet<Column>,
}

/// Column widths sized from the rows on screen and the room there is: a column is as wide as
/// its widest cell (within a cap), the destination takes what is left, and every cut ends in
/// "…". Only the columns chosen are laid out, in the table's order.
struct Columns {
    alias: usize,
    shown: Vec<(Column, usize)>,
}

const STATUS_W: usize = 8;
const MARK_W: usize = 1;

impl Columns {
    fn fit(rows: &[Option<&Link>], width: u16, extra: &Extra, ctx: &Ctx) -> Columns {
        let links = || rows.iter().flatten();
        // A column of hosts says something only when the rows are on several.
        let several_hosts = extra.show_domain && {
            let mut hosts = links().map(|l| host(l));
            let first = hosts.next();
            hosts.any(|h| Some(h) != first)
        };
        let chosen: Vec<Column> = Column::ALL
            .into_iter()
            .filter(|c| extra.columns.contains(c) && (*c != Column::Domain || several_hosts))
            .collect();
        let widest = |f: &dyn Fn(&Link) -> usize, floor: usize| {
            links().map(|l| f(l)).max().unwrap_or(0).max(floor)
        };
        // Room after the highlight symbol, the mark and the spaces between columns.
        let room = usize::from(width).saturating_sub(1 + MARK_W + chosen.len() + 1);
        let alias = widest(&|l| format::width(&l.alias), 5).min(room / 4).max(5);
        let width_of = |column: Column| match column {
            Column::Domain => widest(&|l| format::width(host(l)), 6).min(room / 6),
            Column::Space => widest(
                &|l| l.space.as_ref().map_or(1, |s| format::width(&s.name) + 2),
                5,
            )
            .min(room / 6)
            .max(5),
            // Room for the header, with its sort arrow when the order is by clicks.
            Column::Clicks => widest(
                &|l| l.clicks_shown().len(),
                if matches!(extra.sort, Sort::Max | Sort::Min) {
                    8
                } else {
                    6
                },
            ),
            Column::Status => STATUS_W,
            Column::Expires => widest(&|l| format::width(&format::expiry_cell(l, ctx.now)), 7),
            Column::Destination => 0,
        };
        let mut shown: Vec<(Column, usize)> = chosen.iter().map(|c| (*c, width_of(*c))).collect();
        let fixed: usize = alias + shown.iter().map(|(_, w)| w).sum::<usize>();
        if let Some((_, destination)) = shown.iter_mut().find(|(c, _)| *c == Column::Destination) {
            *destination = room.saturating_sub(fixed).max(8);
        }
        Columns { alias, shown }
    }

    fn constraints(&self) -> Vec<Constraint> {
        let len = |w: usize| Constraint::Length(u16::try_from(w).unwrap_or(u16::MAX));
        std::iter::once(len(MARK_W + self.alias))
            .chain(self.shown.iter().map(|(_, w)| len(*w)))
            .collect()
    }
}

/// The host a link's short URL is on.
fn host(link: &Link) -> &str {
    let rest = link
        .short_url
        .split_once("://")
        .map_or(link.short_url.as_str(), |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

fn link_row(link: &Link, ctx: &Ctx, columns: &Columns, extra: &Extra) -> Row<'static> {
    let t = ctx.theme;
    let mark = if extra.marks.contains(link, ctx.now) {
        Span::styled("●", t.accent)
    } else {
        Span::raw(" ")
    };
    // The mark sits just before the alias, where a selected row's arrow leaves a cell free.
    let mut cells = vec![Cell::from(Line::from(vec![
        mark,
        Span::raw(format::clip(&link.alias, columns.alias)),
    ]))];
    cells.extend(columns.shown.iter().map(|(column, width)| match column {
        Column::Domain => Cell::from(Span::styled(format::clip(host(link), *width), t.dim)),
        Column::Destination => Cell::from(format::clip(&link.url, *width)),
        Column::Space => Cell::from(match &link.space {
            Some(space) => Line::from(vec![
                Span::styled("● ", t.space(space.color)),
                Span::raw(format::clip(&space.name, width.saturating_sub(2))),
            ]),
            None => Line::styled("–", t.dim),
        }),
        Column::Clicks => Cell::from(Line::from(link.clicks_shown()).right_aligned()),
        Column::Status => {
            let status = link.status(ctx.now);
            let style = match status.shown() {
                StatusFilter::Disabled => t.dim,
                StatusFilter::Expired => t.warning,
                StatusFilter::Active | StatusFilter::All => t.success,
            };
            Cell::from(Span::styled(status.label(), style))
        }
        Column::Expires => Cell::from(format::clip(&format::expiry_cell(link, ctx.now), *width)),
    }));
    Row::new(cells)
}

fn render_details(link: Option<&Link>, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
    let t = ctx.theme;
    let block = t.panel(" details ", t.border);
    let inner = block.inner(area);
    block.render(area, buf);
    let Some(link) = link else {
        Paragraph::new(Span::styled("Nothing selected.", t.dim)).render(inner, buf);
        return;
    };
    let label_w = 12;
    let room = usize::from(inner.width).saturating_sub(label_w);
    let label = |s: &'static str| Span::styled(format!("{s:<label_w$}"), t.dim);
    let fit = |s: &str| format::clip(s, room);
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let status = link.status(ctx.now);
    let mut where_line = vec![label("space")];
    match &link.space {
        Some(space) => where_line.extend([
            Span::styled("● ", t.space(space.color)),
            Span::raw(into_shown(space.name.clone())),
        ]),
        None => where_line.push(Span::styled("none", t.dim)),
    }
    where_line.push(Span::styled(" · domain ", t.dim));
    where_line.push(Span::raw(into_shown(match &link.domain {
        Some(domain) => domain.name.clone(),
        None => format!("none ({})", host(link)),
    })));
    let lines = vec![
        Line::from(vec![
            label("short URL"),
            Span::styled(fit(&link.short_url), t.accent),
        ]),
        Line::from(vec![label("destination"), Span::raw(fit(&link.url))]),
        Line::from(vec![
            label("title"),
            Span::raw(fit(link.title.as_deref().unwrap_or("–"))),
        ]),
        Line::from(where_line),
        Line::from(vec![
            label("targeting"),
            Span::raw(fit(&targeting_and_options(link))),
        ]),
        Line::from(vec![
            label("expires"),
            Span::raw(fit(&format::expiry_detail(link, ctx.now, ctx.tz))),
        ]),
        Line::from(vec![
            label("status"),
            Span::raw(fit(&format!(
                "{} · password {} · public {} · clicks {}{} · created {}",
                status.label(),
                yes_no(link.password),
                yes_no(link.public),
                format::count(link.clicks),
                // Previews by chat apps, apart from clicks; said once there are any.
                if link.previews > 0 {
                    format!(" · previews {}", format::count(link.previews))
                } else {
                    String::new()
                },
                format::datetime(link.created_at, ctx.tz)
            ))),
        ]),
    ];
    Paragraph::new(lines).render(inner, buf);
}

/// The targeting line of the details: the redirect rules by kind, the targeting's summary, and
/// the link's options where they are not the defaults (the switches, and whether chat apps get a
/// preview card).
fn targeting_and_options(link: &Link) -> String {
    // Redirect rules are asked before the targeting: named first, by kind, in their order.
    let rules = &link.options.rules;
    let mut text = if rules.is_empty() {
        String::new()
    } else {
        let kinds: Vec<&str> = rules.iter().map(|r| r.when.kind()).collect();
        format!("rules {}, then ", kinds.join(", "))
    };
    text.push_str(&targeting_summary(link));
    let switches = LinkOptions {
        rules: Vec::new(),
        ..link.options.clone()
    };
    if !switches.is_default() {
        text.push_str(" · ");
        text.push_str(&link.options.redirect_summary());
        if link.options.has_preview() {
            text.push_str(" · preview card");
        }
    }
    text
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

/// How many rows `lines` take when wrapped at word boundaries at `width` columns, as a
/// wrapping `Paragraph` draws them.
pub fn wrapped_height(lines: &[Line<'_>], width: u16) -> u16 {
    let width = usize::from(width.max(1));
    let rows: usize = lines
        .iter()
        .map(|l| textwrap::wrap(&l.to_string(), width).len().max(1))
        .sum();
    u16::try_from(rows).unwrap_or(u16::MAX)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_longer_than_its_pane_gets_the_rows_it_wraps_to() {
        let short = [Line::raw("stopped"), Line::raw(""), Line::raw("r again")];
        assert_eq!(wrapped_height(&short, 40), 3);
        let long = [Line::raw("stopped"), Line::raw("x ".repeat(50))];
        assert_eq!(wrapped_height(&long, 40), 1 + 3);
        // 80 columns at 20 but two words a row: five rows, not four.
        let words = [Line::raw("abcdefg ".repeat(10))];
        assert_eq!(wrapped_height(&words, 20), 5);
    }

    #[test]
    fn the_details_name_a_links_rules_before_its_targeting() {
        let mut link = Link::example();
        assert_eq!(targeting_and_options(&link), "none");
        link.options.rules = [
            "language de => https://example.de/",
            "query src => https://q.example/",
        ]
        .into_iter()
        .map(|text| crate::domain::parse_rule(text).unwrap())
        .collect();
        // Rules alone are not the switches: those stay unsaid while they are the defaults.
        assert_eq!(
            targeting_and_options(&link),
            "rules language, query, then none"
        );
    }
}
