//! The Live pane: visits as they are counted, newest at the top, with their link, country,
//! platform, browser, referrer, language and the targeting rule that sent them. The feed runs while the pane is shown (from the
//! local database, or from a `linkdeck serve` through its live feed) and stops when it is left;
//! the pane keeps the last [`HELD`] visits.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Widget};

use super::format;
use super::keys::{Action, Key};
use super::links::centered_block;
use super::msg::RequestId;
use super::view::{Ctx, Outcome};
use crate::domain::{Visit, country_by_code, into_shown};

/// Visits held: a screenful many times over, a bounded amount of memory however busy.
pub const HELD: usize = 1_000;

#[derive(Debug, Clone, Default)]
pub struct LiveView {
    /// Newest first.
    visits: VecDeque<Visit>,
    /// Visits seen since the feed began, held or not.
    seen: u64,
    /// The feed whose visits are taken; others' (an earlier feed's) are passed over.
    feed: Option<RequestId>,
    /// Why the feed stopped, when it failed.
    pub error: Option<String>,
    /// Rows scrolled down from the newest.
    offset: usize,
    rows: usize,
}

impl LiveView {
    /// A new feed begins: its visits are taken from now on.
    pub fn follow(&mut self, feed: RequestId) {
        self.feed = Some(feed);
        self.error = None;
    }

    /// The feed stops (the pane was left).
    pub fn stop(&mut self) {
        self.feed = None;
    }

    /// The feed running, if any.
    pub fn feed(&self) -> Option<RequestId> {
        self.feed
    }

    /// A visit of feed `req`, or its failure (which ends it).
    pub fn accept(&mut self, req: RequestId, visit: crate::domain::Result<Visit>) {
        if self.feed != Some(req) {
            return;
        }
        match visit {
            Ok(visit) => {
                self.visits.push_front(visit);
                self.visits.truncate(HELD);
                self.seen += 1;
                // Someone reading further down keeps their place as new rows arrive above.
                if self.offset > 0 {
                    self.offset = (self.offset + 1).min(self.visits.len().saturating_sub(1));
                }
            }
            Err(e) => {
                self.feed = None;
                self.error = Some(e.to_string());
            }
        }
    }

    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows.max(1);
    }

    pub fn handle_key(&mut self, key: Key) -> Outcome {
        let last = self.visits.len().saturating_sub(1);
        let page = self.rows.saturating_sub(2).max(1);
        self.offset = match key.action {
            Some(Action::Down) => (self.offset + 1).min(last),
            Some(Action::Up) => self.offset.saturating_sub(1),
            Some(Action::PageDown) => (self.offset + page).min(last),
            Some(Action::PageUp) => self.offset.saturating_sub(page),
            Some(Action::Top) => 0,
            Some(Action::Bottom) => last,
            _ => return Outcome::Ignored,
        };
        Outcome::Handled
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let title = match self.seen {
            0 => " Live ".to_owned(),
            n => format!(" Live ({} since it began) ", format::count(n)),
        };
        let inner = ctx.pane(title, area, buf);
        // With nothing to list, the pane says why: the feed stopped, or no visit came yet.
        if self.visits.is_empty() {
            let lines = match &self.error {
                Some(error) => vec![
                    Line::styled("The live feed stopped", t.error),
                    Line::raw(into_shown(error.clone())),
                    Line::raw(""),
                    Line::from(vec![
                        Span::styled(ctx.keys.first(Action::Refresh), t.accent),
                        Span::raw(" starts it again"),
                    ]),
                ],
                None => vec![
                    Line::from(vec![
                        Span::styled(ctx.spinner.to_string(), t.accent),
                        Span::raw(" Waiting for visits…"),
                    ]),
                    Line::raw(""),
                    Line::raw("Each visit a server counts shows here within a second."),
                ],
            };
            let height = crate::tui::links::wrapped_height(&lines, inner.width);
            Paragraph::new(lines)
                .alignment(Alignment::Center)
                .wrap(ratatui::widgets::Wrap { trim: false })
                .render(centered_block(inner, height), buf);
            return;
        }
        let [list, foot] =
            ratatui::layout::Layout::vertical([Constraint::Min(1), Constraint::Length(1)])
                .areas(inner);
        // The browser's column goes first when the pane is narrow. The fixed columns and the
        // gaps between all of them come off the width; the rest is shared by the link, the
        // country, the referrer and the rule, 2 : 2 : 2 : 3.
        let wide = list.width >= 96;
        let fixed = if wide {
            8 + 9 + 9 + 4 + 7
        } else {
            8 + 9 + 4 + 6
        };
        let rest = usize::from(list.width).saturating_sub(fixed);
        let (link_w, country_w, rule_w) = (rest * 2 / 9, rest * 2 / 9, rest * 3 / 9);
        let referrer_w = rest - link_w - country_w - rule_w;
        let clip = |text: &str, width: usize| format::clip(&into_shown(text.to_owned()), width);
        let value = |v: &Option<String>, width: usize| {
            v.as_deref()
                .map_or_else(|| "–".to_owned(), |v| clip(v, width))
        };
        // Each column: its heading, its width, and what a visit shows in it.
        type Show<'a> = Box<dyn Fn(&Visit) -> Cell<'static> + 'a>;
        let mut columns: Vec<(&str, usize, Show)> = vec![
            (
                "time",
                8,
                Box::new(|v: &Visit| {
                    let at = v.at.to_zoned(ctx.tz.clone()).strftime("%H:%M:%S");
                    Cell::from(Span::styled(at.to_string(), t.dim))
                }),
            ),
            (
                "link",
                link_w,
                Box::new(|v: &Visit| Cell::from(clip(&v.alias, link_w))),
            ),
            (
                "country",
                country_w,
                Box::new(|v: &Visit| {
                    let country = v
                        .country
                        .as_deref()
                        .map(|code| country_by_code(code).map_or(code.to_owned(), |c| c.name));
                    Cell::from(value(&country, country_w))
                }),
            ),
            (
                "platform",
                9,
                Box::new(|v: &Visit| Cell::from(value(&v.platform, 9))),
            ),
        ];
        if wide {
            columns.push((
                "browser",
                9,
                Box::new(|v: &Visit| Cell::from(value(&v.browser, 9))),
            ));
        }
        columns.extend([
            (
                "referrer",
                referrer_w,
                Box::new(|v: &Visit| Cell::from(value(&v.referrer, referrer_w))) as Show,
            ),
            (
                "lang",
                4,
                Box::new(|v: &Visit| Cell::from(value(&v.language, 4))),
            ),
            (
                "rule",
                rule_w,
                Box::new(|v: &Visit| Cell::from(value(&v.rule, rule_w))),
            ),
        ]);
        let rows = self
            .visits
            .iter()
            .skip(self.offset)
            .take(usize::from(list.height).saturating_sub(1))
            .map(|v| {
                Row::new(
                    columns
                        .iter()
                        .map(|(_, _, show)| show(v))
                        .collect::<Vec<_>>(),
                )
            });
        let header =
            Row::new(columns.iter().map(|(name, _, _)| *name).collect::<Vec<_>>()).style(t.header);
        Table::new(
            rows,
            columns
                .iter()
                .map(|(_, width, _)| Constraint::Length(*width as u16))
                .collect::<Vec<_>>(),
        )
        .header(header)
        .render(list, buf);
        let status = match (&self.error, self.offset) {
            (Some(error), _) => {
                Span::styled(format!("stopped: {}", into_shown(error.clone())), t.error)
            }
            (None, 0) => Span::styled(
                format!("following · the newest {} kept", format::count(HELD as u64)),
                t.dim,
            ),
            (None, n) => Span::styled(
                format!(
                    "{} newer above · {} goes back to the top",
                    format::count(n as u64),
                    ctx.keys.first(Action::Top)
                ),
                t.dim,
            ),
        };
        Line::from(status).render(foot, buf);
    }
}
