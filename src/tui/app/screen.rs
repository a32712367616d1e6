//! What the app draws: the header, the pane and status tabs, the pane itself, the hints, and
//! the dialogs and toasts over them, from the state alone. The tabs' layout is shared with the
//! mouse (`pane_tabs`, `status_tabs`), so a click lands where a tab is drawn.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{App, MIN_HEIGHT, MIN_WIDTH, Pane, areas};
use crate::tui::dialog::PickerKind;
use crate::tui::format;
use crate::tui::keys::Action;
use crate::tui::links::Extra;
use crate::tui::popups::{Modal, render_toasts};
use crate::tui::view::{Ctx, SPINNER};

impl App {
    pub fn render(&self, frame: &mut Frame) {
        let area = frame.area();
        if let Some(position) = self.render_buffer(area, frame.buffer_mut()) {
            frame.set_cursor_position(position);
        }
    }

    /// Draws the whole screen; returns where the text cursor goes, if anywhere.
    pub fn render_buffer(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        let theme = &self.cfg.theme;
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            let text = vec![
                Line::styled("The terminal is too small", theme.error),
                Line::raw(format!(
                    "{}×{} — linkdeck needs at least {MIN_WIDTH}×{MIN_HEIGHT}",
                    area.width, area.height
                )),
                // With a form open only enlarging helps: quitting would lose what was typed.
                Line::raw(if self.form_is_open() {
                    "Enlarge the window to go on with the form: what you typed is kept.".to_owned()
                } else {
                    format!(
                        "Enlarge the window, or press {} to quit.",
                        self.cfg.keys.first(Action::Quit)
                    )
                }),
            ];
            let y = area.y + area.height.saturating_sub(4) / 2;
            let rect = Rect {
                y,
                height: 4.min(area.height),
                ..area
            };
            Paragraph::new(text)
                .alignment(Alignment::Center)
                .wrap(Wrap { trim: true })
                .render(rect, buf);
            return None;
        }
        let a = areas(area);
        let ctx = |focused| Ctx {
            theme,
            keys: &self.cfg.keys,
            now: self.clock.now(),
            tz: &self.cfg.timezone,
            focused,
            spinner: SPINNER[self.spinner],
        };
        self.render_header(a.header, buf);
        if self.stats_is_open() {
            let body = a.stats_body();
            self.render_stats(body, buf, &ctx(true));
            self.render_hints(a.hints, buf);
            if let Some(modal) = &self.modal {
                modal.render(body, buf, theme, &self.cfg.keys);
            }
            render_toasts(&self.toasts, body, buf, theme);
            return None;
        }
        self.render_tabs(a.tabs, buf);
        let cursor = self.filter.render(a.filter, buf, theme);
        match self.pane {
            Pane::Links => {
                let extra = Extra {
                    marks: &self.marks,
                    show_domain: self.domains.as_ref().is_some_and(|d| !d.is_empty()),
                    sort: self.filter.sort,
                    columns: &self.columns,
                };
                self.links
                    .render(a.main, buf, &ctx(!self.filter.is_focused()), &extra)
            }
            Pane::Spaces => self.spaces.render(a.main, buf, &ctx(true)),
            Pane::Trash => self.trash.render(a.main, buf, &ctx(true)),
            Pane::Live => self.live.render(a.main, buf, &ctx(true)),
            Pane::Domains => self.domains_view.render(a.main, buf, &ctx(true)),
        }
        self.render_hints(a.hints, buf);
        let modal_cursor = self.modal.as_ref().and_then(|modal| {
            // A QR code needs every row it can get (at 80×24 the panes' area is too short).
            let over = match modal {
                Modal::Qr(_) => area,
                _ => a.main,
            };
            modal.render(over, buf, theme, &self.cfg.keys)
        });
        let form_cursor = self.render_form(area, buf);
        render_toasts(&self.toasts, a.main, buf, theme);
        if self.form_is_open() {
            return form_cursor;
        }
        if self.modal.is_some() {
            return modal_cursor;
        }
        cursor
    }

    fn render_header(&self, area: Rect, buf: &mut Buffer) {
        let t = &self.cfg.theme;
        let mut right = Vec::new();
        if !self.marks.is_empty() {
            right.push(Span::styled(
                format!("● {} marked  ", self.marks.count()),
                t.accent,
            ));
        }
        if self.is_busy() {
            right.push(Span::styled(
                format!("{} working  ", SPINNER[self.spinner]),
                t.accent,
            ));
        }
        match self.links.list.shown_total() {
            Some(total) => right.push(Span::raw(format!("{} ", total.plural("link")))),
            None => right.push(Span::styled("– links ", t.dim)),
        }
        let right = Line::from(right);
        let right_width = u16::try_from(right.width()).unwrap_or(0).min(area.width);
        // The location gives way to what the right side says, cut with "…", a space apart.
        let before = format::width(" linkdeck ·  · ")
            + format::width(&self.cfg.profile)
            + if self.cfg.read_only {
                " read-only".len()
            } else {
                0
            };
        let room = usize::from(area.width.saturating_sub(right_width + 1)).saturating_sub(before);
        let left = Line::from(vec![
            Span::styled(" linkdeck", t.header),
            Span::styled(" · ", t.dim),
            Span::styled(self.cfg.profile.clone(), t.accent),
            Span::styled(
                if self.cfg.read_only { " read-only" } else { "" },
                t.warning,
            ),
            Span::styled(" · ", t.dim),
            Span::raw(format::clip(&self.cfg.location, room)),
        ]);
        left.render(
            Rect {
                width: area.width - right_width,
                ..area
            },
            buf,
        );
        right.right_aligned().render(area, buf);
    }

    /// The pane tabs, each with the pane a click on it shows.
    pub(super) fn pane_tabs(&self) -> Vec<(Span<'static>, Option<Pane>)> {
        let t = &self.cfg.theme;
        let tab = |name: &'static str, pane: Pane| {
            let span = if self.pane == pane {
                Span::styled(format!("[{name}]"), t.tab_active)
            } else {
                Span::styled(format!(" {name} "), t.dim)
            };
            (span, Some(pane))
        };
        let mut tabs = vec![
            (Span::raw(" "), None),
            tab("Links", Pane::Links),
            (Span::raw(" "), None),
            tab("Spaces", Pane::Spaces),
            (Span::raw(" "), None),
            tab("Live", Pane::Live),
            (Span::raw(" "), None),
            tab("Domains", Pane::Domains),
        ];
        if self.cfg.has_trash {
            tabs.extend([(Span::raw(" "), None), tab("Trash", Pane::Trash)]);
        }
        tabs
    }

    /// The status tabs right of the pane tabs, each with the action a click on it runs.
    /// Shortened, without their label, where the full ones would not fit beside the pane tabs
    /// (80 columns with every pane).
    pub(super) fn status_tabs(&self, width: u16) -> Vec<(Span<'static>, Option<Action>)> {
        let panes: usize = self.pane_tabs().iter().map(|(s, _)| s.width()).sum();
        let mut status = self.filter.status_tabs(&self.cfg.theme, false);
        status.insert(0, (Span::styled("status ", self.cfg.theme.dim), None));
        let full: usize = status.iter().map(|(s, _)| s.width()).sum();
        if panes + full > usize::from(width) {
            status = self.filter.status_tabs(&self.cfg.theme, true);
        }
        status
    }

    fn render_tabs(&self, area: Rect, buf: &mut Buffer) {
        let panes: Vec<Span> = self.pane_tabs().into_iter().map(|(s, _)| s).collect();
        Line::from(panes).render(area, buf);
        let status: Vec<Span> = self
            .status_tabs(area.width)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        Line::from(status).right_aligned().render(area, buf);
    }

    fn render_hints(&self, area: Rect, buf: &mut Buffer) {
        let t = &self.cfg.theme;
        let keys = &self.cfg.keys;
        let fixed = |k: &str, label: &str| {
            vec![
                Span::styled(k.to_owned(), t.accent),
                Span::styled(format!(" {label}  "), t.dim),
            ]
        };
        let read_only = self.cfg.read_only;
        let hint = |a: Action, label: &str| {
            if read_only && a.changes_data() {
                Vec::new()
            } else {
                fixed(&keys.first(a), label)
            }
        };
        let spans: Vec<Span> = if let Some(modal) = &self.modal {
            match modal {
                Modal::Confirm(_) => [hint(Action::Yes, "yes"), hint(Action::No, "no")].concat(),
                Modal::Help(_) => [
                    fixed("type", "to filter"),
                    fixed("↑/↓", "scroll"),
                    hint(Action::Cancel, "close"),
                ]
                .concat(),
                Modal::Palette(_) => [
                    fixed("type", "to find"),
                    fixed("↑/↓", "move"),
                    hint(Action::Select, "run"),
                    hint(Action::Cancel, "close"),
                ]
                .concat(),
                Modal::Picker(picker) if picker.kind.has_traffic() => [
                    hint(Action::Down, "move"),
                    hint(Action::Select, "pick"),
                    hint(Action::Stats, "its traffic"),
                    if picker.kind == PickerKind::Tag {
                        hint(Action::Edit, "rename")
                    } else {
                        Vec::new()
                    },
                    hint(Action::Cancel, "cancel"),
                ]
                .concat(),
                Modal::Picker(_) | Modal::Menu(_) => [
                    hint(Action::Down, "move"),
                    hint(Action::Select, "pick"),
                    hint(Action::Cancel, "cancel"),
                ]
                .concat(),
                Modal::Prompt(_) => [
                    hint(Action::Select, "apply"),
                    hint(Action::Cancel, "cancel"),
                ]
                .concat(),
                Modal::Progress(_) => hint(Action::Cancel, "stop"),
                Modal::Qr(_) => fixed("any key", "close"),
                Modal::Webhooks(_) => [fixed("↑/↓", "scroll"), fixed("any key", "close")].concat(),
            }
        } else if let Some(view) = &self.stats.view {
            let mut hints = vec![
                hint(Action::CyclePeriod, "period"),
                hint(Action::EarlierPeriod, "earlier"),
                hint(Action::LaterPeriod, "later"),
                hint(Action::NextPane, "panel"),
            ];
            if view.selected_link().is_some() {
                hints.push(hint(Action::Select, "link's traffic"));
            }
            hints.extend([
                fixed("esc", "back"),
                hint(Action::Help, "help"),
                hint(Action::Quit, "quit"),
            ]);
            hints.concat()
        } else if self.filter.is_focused() {
            [
                fixed("enter", "keep search"),
                fixed("esc", "clear search"),
                fixed("ctrl-u", "erase"),
            ]
            .concat()
        } else {
            match self.pane {
                Pane::Links if !self.marks.is_empty() => [
                    hint(Action::Delete, "delete"),
                    hint(Action::ToggleDisabled, "disable/enable"),
                    hint(Action::MoveToSpace, "move"),
                    hint(Action::SetExpiry, "expiry"),
                    hint(Action::TogglePublic, "public"),
                    hint(Action::Mark, "mark"),
                    hint(Action::ClearMarks, "clear marks"),
                    hint(Action::Palette, "actions"),
                    hint(Action::Help, "help"),
                    hint(Action::Quit, "quit"),
                ]
                .concat(),
                Pane::Links => [
                    hint(Action::New, "new"),
                    hint(Action::Edit, "edit"),
                    hint(Action::Search, "search"),
                    hint(Action::CycleStatus, "status"),
                    hint(Action::Mark, "mark"),
                    hint(Action::Delete, "delete"),
                    hint(Action::ToggleDisabled, "disable"),
                    hint(Action::Undo, "undo"),
                    hint(Action::CopyShortUrl, "copy"),
                    hint(Action::Stats, "traffic"),
                    hint(Action::Palette, "actions"),
                    hint(Action::Help, "help"),
                    hint(Action::Quit, "quit"),
                ]
                .concat(),
                Pane::Spaces => [
                    hint(Action::Select, "show links"),
                    hint(Action::Stats, "traffic"),
                    hint(Action::New, "new"),
                    hint(Action::Edit, "edit"),
                    hint(Action::Delete, "delete"),
                    hint(Action::Undo, "undo"),
                    hint(Action::NextPane, "next pane"),
                    hint(Action::Help, "help"),
                    hint(Action::Quit, "quit"),
                ]
                .concat(),
                Pane::Live => [
                    hint(Action::Top, "newest"),
                    hint(Action::Refresh, "restart"),
                    hint(Action::Dashboard, "traffic"),
                    hint(Action::NextPane, "next pane"),
                    hint(Action::Help, "help"),
                    hint(Action::Quit, "quit"),
                ]
                .concat(),
                Pane::Domains => [
                    hint(Action::Edit, "edit fallbacks"),
                    hint(Action::Refresh, "refresh"),
                    hint(Action::NextPane, "next pane"),
                    hint(Action::Help, "help"),
                    hint(Action::Quit, "quit"),
                ]
                .concat(),
                Pane::Trash => [
                    hint(Action::Restore, "restore"),
                    hint(Action::Delete, "delete for good"),
                    hint(Action::Mark, "mark"),
                    hint(Action::EmptyTrash, "empty"),
                    hint(Action::Undo, "undo"),
                    hint(Action::NextPane, "next pane"),
                    hint(Action::Help, "help"),
                    hint(Action::Quit, "quit"),
                ]
                .concat(),
            }
        };
        // Drop hints from the middle until the rest fits; help and quit stay last.
        let mut pairs: Vec<Vec<Span>> = spans.chunks(2).map(<[Span]>::to_vec).collect();
        let width =
            |pairs: &[Vec<Span>]| pairs.iter().flatten().map(Span::width).sum::<usize>() + 1;
        while width(&pairs) > usize::from(area.width) && pairs.len() > 2 {
            pairs.remove(pairs.len() - 3);
        }
        let mut line = vec![Span::raw(" ")];
        line.extend(pairs.into_iter().flatten());
        Line::from(line).render(area, buf);
    }
}
