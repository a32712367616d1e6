//! Drawing the Stats view: a title with the period picker, the total against the period before,
//! a chart of clicks over time with labelled axes in the profile's zone, and a grid of panels
//! that shows as many of them as the screen holds (Tab brings the others in).

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, BorderType, Borders, Chart, Dataset, GraphType, Paragraph, Widget, Wrap,
};

use super::{Panel, Shown, StatsView};
use crate::domain::Shown as ShownText;
use crate::domain::{
    Dimension, OrphanKind, Period, PeriodSpec, Preset, Stats, into_shown, shown, thousands,
};
use crate::tui::keys::Action;
use crate::tui::view::Ctx;

/// The fewest rows a panel is drawn with: its borders and five values. When fewer rows of
/// panels fit, Tab brings the others in.
const PANEL_MIN_HEIGHT: u16 = 7;
/// Below this width panels go two abreast instead of three.
const THREE_ABREAST: u16 = 96;

fn block<'a>(title: impl Into<Line<'a>>, focused: bool, ctx: &Ctx) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(if focused {
            ctx.theme.focused_border
        } else {
            ctx.theme.border
        })
        .title(title)
}

impl StatsView {
    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let [title, summary, body] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(0),
        ])
        .areas(area);
        self.render_title(title, buf, ctx);
        let stats = match &self.shown {
            Shown::Loaded(stats) => stats,
            Shown::Loading => {
                return message(
                    body,
                    buf,
                    vec![Line::from(vec![
                        Span::styled(ctx.spinner.to_string(), ctx.theme.accent),
                        Span::raw(" Loading traffic…"),
                    ])],
                );
            }
            Shown::Failed(error) => {
                let heading = Line::styled("Could not load the traffic", ctx.theme.error);
                let keys = key_line(ctx, &[(Action::Refresh, "retry")], true);
                return notice(body, buf, heading, error.clone(), keys);
            }
            Shown::Unsupported(why) => {
                let heading = Line::styled("No statistics on this server", ctx.theme.header);
                return notice(body, buf, heading, why.clone(), key_line(ctx, &[], true));
            }
        };
        self.render_summary(stats, summary, buf, ctx);
        let chart_height = (body.height * 2 / 5).clamp(6, 12).min(body.height);
        let [chart, panels] =
            Layout::vertical([Constraint::Length(chart_height), Constraint::Min(0)]).areas(body);
        render_chart(stats, chart, buf, ctx);
        self.render_panels(stats, panels, buf, ctx);
    }

    fn render_title(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let mut left = vec![Span::styled(" Traffic of ", t.header)];
        if let Some(kind) = self.target.kind() {
            left.push(Span::styled(format!("{kind} "), t.dim));
        }
        left.push(Span::styled(into_shown(self.target.name.clone()), t.accent));
        let detail_at = left.len();
        if let Some(detail) = &self.target.detail {
            left.push(Span::styled(format!(" → {}", ShownText(detail)), t.dim));
        }
        if self.is_loading() && matches!(self.shown, Shown::Loaded(_)) {
            left.push(Span::styled(format!("  {}", ctx.spinner), t.accent));
        }
        let current = match self.period {
            PeriodSpec::Preset { preset, .. } => Some(preset),
            PeriodSpec::Dates { .. } => None,
        };
        let mut right: Vec<Span> = Vec::new();
        for preset in Preset::ALL {
            if Some(preset) == current {
                right.push(Span::styled(format!(" {} ", preset.as_str()), t.tab_active));
            } else {
                right.push(Span::styled(format!(" {} ", preset.as_str()), t.dim));
            }
        }
        right.push(Span::raw(" "));
        let right = Line::from(right);
        let right_width = u16::try_from(right.width()).unwrap_or(0).min(area.width);
        // The destination gives way to the period picker, cut with "…" where it is cut.
        let room = usize::from(area.width - right_width).saturating_sub(1);
        let used: usize = left.iter().map(Span::width).sum();
        if used > room
            && let Some(detail) = left
                .get_mut(detail_at)
                .filter(|_| self.target.detail.is_some())
        {
            let keep = detail.width().saturating_sub(used - room);
            detail.content = crate::domain::clip(&detail.content, keep).into();
        }
        Line::from(left).render(
            Rect {
                width: area.width - right_width,
                ..area
            },
            buf,
        );
        right.right_aligned().render(area, buf);
    }

    fn render_summary(&self, stats: &Stats, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let t = ctx.theme;
        let (from, to) = period_of(stats).dates(ctx.tz);
        let range = if stats.interval == crate::domain::Interval::Hour {
            let at = |t: jiff::Timestamp| {
                t.to_zoned(ctx.tz.clone())
                    .strftime("%b %-d %H:%M")
                    .to_string()
            };
            format!("{} – {}", at(stats.from), at(stats.to))
        } else if from == to {
            from.strftime("%b %-d %Y").to_string()
        } else if from.year() == to.year() {
            format!("{} – {}", from.strftime("%b %-d"), to.strftime("%b %-d %Y"))
        } else {
            format!(
                "{} – {}",
                from.strftime("%b %-d %Y"),
                to.strftime("%b %-d %Y")
            )
        };
        // Each part with the order in which it gives way when the line is too narrow (0: never).
        let mut parts: Vec<(u8, Vec<Span>)> = vec![(
            0,
            vec![
                Span::raw(" "),
                Span::styled(thousands(stats.total), t.header),
                Span::raw(if stats.total == 1 {
                    " click"
                } else {
                    " clicks"
                }),
            ],
        )];
        match (stats.change_percent(), stats.previous) {
            (Some(p), Some(before)) => {
                let (text, style) = match p {
                    p if p > 0 => (format!("▲ {p} %"), t.success),
                    p if p < 0 => (format!("▼ {} %", -p), t.warning),
                    _ => ("±0 %".to_owned(), t.dim),
                };
                parts.push((0, vec![Span::raw("  "), Span::styled(text, style)]));
                let before = format!(" on the period before ({})", thousands(before));
                parts.push((4, vec![Span::styled(before, t.dim)]));
            }
            (None, Some(0)) if stats.total > 0 => {
                parts.push((4, vec![Span::styled("  0 in the period before", t.dim)]));
            }
            _ => {}
        }
        parts.push((3, vec![Span::styled(format!("  ·  {range}"), t.dim)]));
        if let Some(orphans) = self.shown_orphans() {
            let noun = if orphans.total == 1 {
                "visit"
            } else {
                "visits"
            };
            let said = format!("  ·  {} orphan {noun}", thousands(orphans.total));
            parts.push((2, vec![Span::styled(said, t.dim)]));
        }
        // Clicks the target counted that the history has no date for (imported, or from before
        // it was kept): said, so that "0 clicks" beside links of millions reads right.
        if let Some(counted) = self.target.counted.filter(|c| *c > stats.total) {
            let in_all = format!("  ·  {} in all", thousands(counted));
            parts.push((1, vec![Span::styled(in_all, t.dim)]));
            if stats.previous.is_none() {
                let undated = format!(
                    ", {} of them with no date",
                    thousands(counted - stats.total)
                );
                parts.push((2, vec![Span::styled(undated, t.dim)]));
            }
        }
        let width = |parts: &[(u8, Vec<Span>)]| -> usize {
            parts.iter().flat_map(|(_, s)| s).map(Span::width).sum()
        };
        while width(&parts) > usize::from(area.width) {
            let Some(last) = parts
                .iter()
                .enumerate()
                .filter(|(_, (order, _))| *order > 0)
                .max_by_key(|(_, (order, _))| *order)
                .map(|(i, _)| i)
            else {
                break;
            };
            parts.remove(last);
        }
        let spans: Vec<Span> = parts.into_iter().flat_map(|(_, s)| s).collect();
        Line::from(spans).render(area, buf);
    }

    fn render_panels(&self, stats: &Stats, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        let panels = self.panels();
        if panels.is_empty() {
            return;
        }
        let columns: u16 = if area.width >= THREE_ABREAST { 3 } else { 2 };
        let needed_rows = (panels.len() as u16).div_ceil(columns);
        let rows = needed_rows.min(area.height / PANEL_MIN_HEIGHT).max(1);
        if area.height < PANEL_MIN_HEIGHT {
            return;
        }
        let shown = usize::from(rows * columns);
        // The focused panel is always on screen: the grid starts at its row when it must.
        let focus = panels
            .iter()
            .position(|p| *p == self.focused())
            .unwrap_or(0);
        let first = if focus < shown {
            0
        } else {
            (focus / usize::from(columns) + 1) * usize::from(columns) - shown
        };
        let row_areas = Layout::vertical(vec![Constraint::Fill(1); usize::from(rows)]).split(area);
        for (r, row) in row_areas.iter().enumerate() {
            let cells =
                Layout::horizontal(vec![Constraint::Fill(1); usize::from(columns)]).split(*row);
            for (c, cell) in cells.iter().enumerate() {
                let i = first + r * usize::from(columns) + c;
                if let Some(panel) = panels.get(i) {
                    self.render_panel(*panel, stats, *cell, buf, ctx, i == focus);
                }
            }
        }
    }

    fn render_panel(
        &self,
        panel: Panel,
        stats: &Stats,
        area: Rect,
        buf: &mut Buffer,
        ctx: &Ctx,
        focused: bool,
    ) {
        let t = ctx.theme;
        let title = match panel {
            Panel::Values(d) => d.title(),
            Panel::TopLinks => "Top links",
            Panel::OrphanKinds => "Orphan visits",
            Panel::OrphanPaths => "Unanswered paths",
        };
        let title_style = if focused { t.accent } else { t.header };
        let outer = block(
            Span::styled(format!(" {title} "), title_style),
            focused,
            ctx,
        );
        let inner = outer.inner(area);
        outer.render(area, buf);
        let rows: Vec<(String, u64)> = match panel {
            Panel::Values(d) => match stats.breakdown(d) {
                Some(b) => {
                    let mut rows: Vec<(String, u64)> =
                        b.top.iter().map(|v| (b.label(v), v.clicks)).collect();
                    if b.other > 0 {
                        rows.push((crate::domain::OTHER.to_owned(), b.other));
                    }
                    rows
                }
                None => Vec::new(),
            },
            Panel::TopLinks => stats
                .top_links
                .iter()
                .flatten()
                .map(|l| (l.alias.clone(), l.clicks))
                .collect(),
            Panel::OrphanKinds | Panel::OrphanPaths => {
                let kinds = panel == Panel::OrphanKinds;
                let values = self
                    .shown_orphans()
                    .map_or(&[][..], |o| if kinds { &o.kinds[..] } else { &o.paths[..] });
                values
                    .iter()
                    .map(|v| {
                        let value = v.value.as_deref().unwrap_or_default();
                        let label = if kinds {
                            OrphanKind::label_of(value)
                        } else {
                            value
                        };
                        (label.to_owned(), v.clicks)
                    })
                    .collect()
            }
        };
        if rows.is_empty() {
            Paragraph::new(Span::styled("No visits in this period", t.dim)).render(inner, buf);
            return;
        }
        let total = match panel {
            Panel::Values(_) => rows.iter().map(|r| r.1).sum::<u64>(),
            Panel::TopLinks => stats.total,
            Panel::OrphanKinds | Panel::OrphanPaths => self.shown_orphans().map_or(0, |o| o.total),
        };
        let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
        let visible = usize::from(inner.height);
        // Keep the selected top link in view.
        let skip = if panel == Panel::TopLinks && focused {
            self.cursor.saturating_sub(visible.saturating_sub(1))
        } else {
            0
        };
        let numbers = 12usize;
        let width = usize::from(inner.width);
        let mut bar_width = (width / 5).clamp(2, 10);
        // Rules and what visitors asked for are read, not compared: the bar gives them room.
        if matches!(
            panel,
            Panel::OrphanKinds | Panel::OrphanPaths | Panel::Values(Dimension::Rule)
        ) {
            let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
            bar_width = bar_width
                .min(width.saturating_sub(numbers + 2 + longest))
                .max(2);
        }
        let label_width = width.saturating_sub(numbers + bar_width + 2).max(3);
        let lines: Vec<Line> = rows
            .iter()
            .enumerate()
            .skip(skip)
            .take(visible)
            .map(|(i, (label, n))| {
                let share = match (total, *n) {
                    (0, _) => "  0%".to_owned(),
                    // A few clicks among many are not none.
                    (total, n) if n > 0 && n * 200 < total => " <1%".to_owned(),
                    (total, n) => {
                        format!(" {:>3}%", (n as f64 * 100.0 / total as f64).round() as u64)
                    }
                };
                let cells = ((*n as f64 / max as f64) * bar_width as f64)
                    .round()
                    .max(1.0) as usize;
                let line = Line::from(vec![
                    Span::raw(format!("{:<label_width$} ", cut(label, label_width))),
                    Span::styled(
                        format!("{:<bar_width$}", "▇".repeat(cells.min(bar_width))),
                        t.accent,
                    ),
                    Span::raw(format!(" {:>7}", thousands(*n))),
                    Span::styled(share, t.dim),
                ]);
                if panel == Panel::TopLinks && focused && i == self.cursor {
                    line.style(t.selected)
                } else {
                    line
                }
            })
            .collect();
        Paragraph::new(lines).render(inner, buf);
    }
}

/// `text` as a terminal may show it, cut to `width` characters, `…` marking the cut.
fn cut(text: &str, width: usize) -> String {
    let text = shown(text);
    if text.chars().count() <= width {
        text.into_owned()
    } else {
        let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The answer's period, for its dates.
fn period_of(stats: &Stats) -> Period {
    Period {
        from: stats.from,
        to: stats.to,
        interval: stats.interval,
        buckets: Vec::new(),
        previous: None,
    }
}

fn render_chart(stats: &Stats, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
    let t = ctx.theme;
    let unit = match stats.interval {
        crate::domain::Interval::Hour => " Clicks by hour ",
        crate::domain::Interval::Day => " Clicks by day ",
        crate::domain::Interval::Month => " Clicks by month ",
    };
    let outer = block(Span::styled(unit, t.header), false, ctx);
    if stats.timeline.is_empty() {
        outer.render(area, buf);
        return;
    }
    let max = stats.timeline.iter().map(|b| b.clicks).max().unwrap_or(0);
    let n = stats.timeline.len();
    // On a wide screen a bar is as wide as its bucket less about three columns, so that bars
    // are bars rather than lines far apart, and a column or more stays between two of them
    // however a bar's ends fall on the cells (a span of s columns touches up to s + 2). The bar graph draws a column per point: points a quarter of a
    // column apart fill every column of the bar. The plot is about the block's width less the
    // y labels'.
    let plot = usize::from(area.width)
        .saturating_sub(2 + thousands(max.max(1)).len() + 1)
        .max(1);
    let cells_per_bucket = plot as f64 / n as f64;
    let step = 0.25 / cells_per_bucket;
    let per_bar = ((cells_per_bucket - 3.2).max(0.0) * 4.0).floor() as usize;
    // Empty buckets draw nothing (a bar of zero would still show a dot).
    let points: Vec<(f64, f64)> = stats
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, b)| b.clicks > 0)
        .flat_map(|(i, b)| {
            (0..=per_bar).map(move |k| {
                let x = i as f64 + 0.5 + (k as f64 - per_bar as f64 / 2.0) * step;
                (x, b.clicks as f64)
            })
        })
        .collect();
    let top = if max == 0 { 1.0 } else { max as f64 };
    let label =
        |i: usize| Span::styled(stats.interval.label(stats.timeline[i].start, ctx.tz), t.dim);
    let x_labels = if n > 2 {
        vec![label(0), label(n / 2), label(n - 1)]
    } else {
        vec![label(0), label(n - 1)]
    };
    let y_labels = if max < 2 {
        vec![
            Span::styled("0", t.dim),
            Span::styled(thousands(max.max(1)), t.dim),
        ]
    } else {
        vec![
            Span::styled("0", t.dim),
            Span::styled(thousands(max.div_ceil(2)), t.dim),
            Span::styled(thousands(max), t.dim),
        ]
    };
    let data = Dataset::default()
        .marker(Marker::HalfBlock)
        .graph_type(GraphType::Bar)
        .style(t.accent)
        .data(&points);
    Chart::new(vec![data])
        .block(outer)
        .x_axis(
            Axis::default()
                .bounds([0.0, n as f64])
                .labels(x_labels)
                .labels_alignment(Alignment::Left)
                .style(t.dim),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(y_labels)
                .style(t.dim),
        )
        .render(area, buf);
}

/// `Press r to retry, esc to go back.`
fn key_line(ctx: &Ctx, keys: &[(Action, &str)], back: bool) -> Line<'static> {
    let mut spans = vec![Span::raw("Press ")];
    for (i, (action, what)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw(", "));
        }
        spans.push(Span::styled(ctx.keys.first(*action), ctx.theme.accent));
        spans.push(Span::raw(format!(" to {what}")));
    }
    if back {
        if !keys.is_empty() {
            spans.push(Span::raw(", "));
        }
        spans.push(Span::styled("esc", ctx.theme.accent));
        spans.push(Span::raw(" to go back"));
    }
    spans.push(Span::raw("."));
    Line::from(spans)
}

/// Figures that cannot be shown: a heading, why, and the keys that help.
fn notice(area: Rect, buf: &mut Buffer, heading: Line<'static>, why: String, keys: Line<'static>) {
    let lines = vec![
        heading,
        Line::raw(""),
        Line::raw(into_shown(why)),
        Line::raw(""),
        keys,
    ];
    message(area, buf, lines);
}

fn message(area: Rect, buf: &mut Buffer, lines: Vec<Line<'static>>) {
    let height = crate::tui::links::wrapped_height(&lines, area.width);
    let rect = crate::tui::links::centered_block(area, height);
    Paragraph::new(lines)
        .alignment(Alignment::Center)
        .wrap(Wrap { trim: false })
        .render(rect, buf);
}
