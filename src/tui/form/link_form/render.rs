//! Drawing the link form: the sections as lines, the rule tables, the key hints.

use jiff::tz::TimeZone;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

use super::{LinkForm, PasswordMode, Popup, Stop};
use crate::domain::{Domain, Shown, Space, TargetType, into_shown};
use crate::tui::form::field::{TextField, clip};
use crate::tui::form::rules::RuleList;
use crate::tui::form::{
    Body, Frame, INDENT, LABEL_WIDTH, label, render_discard, render_frame, status_line,
};
use crate::tui::keys::{Action, KeyMap};
use crate::tui::view::Ctx;

impl LinkForm {
    fn space_name(&self) -> Option<&Space> {
        self.space
            .and_then(|id| self.spaces.iter().find(|s| s.id == id))
    }

    fn domain_name(&self) -> Option<&Domain> {
        self.domain
            .and_then(|id| self.domains.iter().find(|d| d.id == id))
    }

    fn body(&self, width: u16, ctx: &Ctx) -> Body {
        let t = ctx.theme;
        let mut body = Body::default();
        let value_x = INDENT + LABEL_WIDTH;
        let value_w = width.saturating_sub(value_x + 1).max(8);
        let editing = self.original.is_some();

        // One line per stop, with its error under it.
        let stop_line =
            |body: &mut Body, stop: Stop, value: Vec<Span<'static>>, cursor: Option<u16>| {
                let focused = self.focus == stop && self.popup.is_none();
                let first = body.next();
                let mut spans = label(self.stop_label(stop), self.focus == stop, ctx);
                spans.extend(value);
                body.push(Line::from(spans));
                if focused && let Some(col) = cursor {
                    body.cursor = Some((first, value_x + col));
                }
                let messages: Vec<String> = self
                    .errors
                    .iter()
                    .filter(|(n, _)| stop.owns(n))
                    .map(|(_, m)| m)
                    .collect();
                if !messages.is_empty() {
                    body.push_error(&messages.join("; "), value_x, width, ctx);
                }
                if self.focus == stop {
                    body.focus = (first, body.next() - 1);
                }
            };
        let text = |stop: Stop, field: &TextField, placeholder: &str| {
            let focused = self.focus == stop;
            let (span, col) = field.span(value_w, focused, placeholder, t.selected, t.dim);
            (vec![span], col)
        };
        let choice = |stop: Stop, text: Span<'static>| {
            if self.focus == stop {
                vec![
                    Span::styled("◀ ", t.accent),
                    text,
                    Span::styled(" ▶", t.accent),
                    Span::styled("   enter: list", t.dim),
                ]
            } else {
                vec![text]
            }
        };

        body.push(Line::styled("Basics", t.header));
        let (v, c) = text(Stop::Url, &self.url, "https://… (required)");
        stop_line(&mut body, Stop::Url, v, c);
        let (v, c) = text(
            Stop::Alias,
            &self.alias,
            if editing { "" } else { "blank = generated" },
        );
        stop_line(&mut body, Stop::Alias, v, c);
        let space = match self.space_name() {
            Some(s) => Span::styled(format!("● {}", Shown(&s.name)), t.space(s.color)),
            None => Span::styled("none", t.dim),
        };
        stop_line(&mut body, Stop::Space, choice(Stop::Space, space), None);
        let (v, c) = text(Stop::Tags, &self.tags, "none (separate them with commas)");
        stop_line(&mut body, Stop::Tags, v, c);
        if self.focus == Stop::Tags
            && let Some(rest) = self.tag_completion()
        {
            let pad = " ".repeat(usize::from(value_x));
            body.push(Line::from(vec![
                Span::raw(pad),
                Span::styled(format!("…{rest}   → completes"), t.dim),
            ]));
        }
        let domain = match self.domain_name() {
            Some(d) => Span::raw(into_shown(d.name.clone())),
            None => Span::styled("none (the profile's public URL)", t.dim),
        };
        if editing {
            let mut spans = label(Stop::Domain.label(), false, ctx);
            spans.push(domain);
            spans.push(Span::styled("  fixed once created", t.dim));
            body.push(Line::from(spans));
        } else {
            stop_line(&mut body, Stop::Domain, choice(Stop::Domain, domain), None);
        }

        body.blank();
        body.push(Line::styled("Protection", t.header));
        if self.had_password() {
            let mut spans = Vec::new();
            for mode in PasswordMode::ALL {
                let style = if mode == self.password_mode {
                    if self.focus == Stop::PasswordMode {
                        t.tab_active
                    } else {
                        t.accent
                    }
                } else {
                    t.dim
                };
                spans.push(Span::styled(format!(" {} ", mode.label()), style));
                spans.push(Span::raw(" "));
            }
            stop_line(&mut body, Stop::PasswordMode, spans, None);
            if self.password_mode == PasswordMode::Change {
                let (v, c) = text(Stop::Password, &self.password, "type the new password");
                stop_line(&mut body, Stop::Password, v, c);
            }
        } else {
            let (v, c) = text(Stop::Password, &self.password, "none");
            stop_line(&mut body, Stop::Password, v, c);
        }
        let switch = |on: bool, what: &str| {
            vec![
                Span::styled(if on { "[x] " } else { "[ ] " }, t.accent),
                Span::styled(what.to_owned(), if on { t.text } else { t.dim }),
            ]
        };
        stop_line(
            &mut body,
            Stop::Disabled,
            switch(self.disabled, "visitors get a \"link disabled\" page"),
            None,
        );
        stop_line(
            &mut body,
            Stop::Public,
            switch(self.public, "anyone can read /alias/stats"),
            None,
        );

        body.blank();
        let zone = format!("times in {}", zone_name(&self.tz));
        body.push(heading("Expiry", &zone, ctx));
        let (v, c) = text(Stop::Date, &self.date, "YYYY-MM-DD");
        stop_line(&mut body, Stop::Date, v, c);
        let (v, c) = text(Stop::Time, &self.time, "HH:MM");
        stop_line(&mut body, Stop::Time, v, c);
        let (v, c) = text(Stop::Clicks, &self.clicks, "blank or 0 = no limit");
        stop_line(&mut body, Stop::Clicks, v, c);
        let (v, c) = text(
            Stop::ExpirationUrl,
            &self.expiration_url,
            "blank = a \"link expired\" page",
        );
        stop_line(&mut body, Stop::ExpirationUrl, v, c);

        body.blank();
        body.push(Line::styled("Targeting", t.header));
        let mut spans = Vec::new();
        for kind in TargetType::ALL {
            let style = if kind == self.target {
                if self.focus == Stop::TargetType {
                    t.tab_active
                } else {
                    t.accent
                }
            } else {
                t.dim
            };
            spans.push(Span::styled(format!(" {} ", kind.label()), style));
            spans.push(Span::raw(" "));
        }
        stop_line(&mut body, Stop::TargetType, spans, None);
        if let Some(rules) = self.active_rules() {
            rules.render_into(
                &mut body,
                width,
                self.focus == Stop::Rules,
                &self.errors,
                ctx,
            );
        }

        body.blank();
        body.push(heading(
            "Redirect rules",
            "asked in order before targeting; the first match wins",
            ctx,
        ));
        self.redirect.render_into(
            &mut body,
            width,
            self.focus == Stop::RedirectRules,
            &self.errors,
            ctx,
        );

        body.blank();
        body.push(heading(
            "Visitors",
            "what the link passes on, and its card in chat apps",
            ctx,
        ));
        let mut spans = Vec::new();
        for (i, (field, name)) in super::SWITCHES
            .into_iter()
            .zip(["query", "rest of path", "indexing"])
            .enumerate()
        {
            let on = self.switch(field);
            let here = self.focus == Stop::Redirect && self.switch_at == i;
            let style = if here { t.tab_active } else { t.accent };
            spans.push(Span::styled(if on { "[x] " } else { "[ ] " }, style));
            spans.push(Span::styled(name, if on { t.text } else { t.dim }));
            spans.push(Span::raw("  "));
        }
        stop_line(&mut body, Stop::Redirect, spans, None);
        let (v, c) = text(
            Stop::PreviewTitle,
            &self.preview_title,
            "none (up to 200 characters)",
        );
        stop_line(&mut body, Stop::PreviewTitle, v, c);
        let (v, c) = text(
            Stop::PreviewDescription,
            &self.preview_description,
            "none (up to 500 characters)",
        );
        stop_line(&mut body, Stop::PreviewDescription, v, c);
        let (v, c) = text(Stop::PreviewImage, &self.preview_image, "none (https://…)");
        stop_line(&mut body, Stop::PreviewImage, v, c);
        body
    }

    /// The keys of what can be done at the focused stop, from the live key map.
    fn hints(&self, keys: &KeyMap) -> Vec<(String, &'static str)> {
        let key = |a: Action| keys.first(a);
        let picking = matches!(self.popup, Some(Popup::Pick(..)))
            || self.focused_list().and_then(RuleList::picker).is_some();
        if picking {
            return vec![
                ("↑/↓".into(), "move"),
                (key(Action::Select), "pick"),
                (key(Action::Cancel), "cancel"),
            ];
        }
        let mut hints = vec![
            (key(Action::Submit), "save"),
            (key(Action::Cancel), "cancel"),
            (key(Action::NextField), "next"),
        ];
        match self.focus {
            Stop::Space | Stop::Domain => hints.push((key(Action::Select), "list  ←/→ change")),
            Stop::PasswordMode => hints.push(("←/→".into(), "change")),
            Stop::TargetType => {
                hints.push(("←/→".into(), "change"));
                if self.target != TargetType::None {
                    hints.push((key(Action::AddRow), "add a rule"));
                }
            }
            Stop::Disabled | Stop::Public => hints.push((key(Action::Toggle), "toggle")),
            Stop::Redirect => hints.push(("←/→".into(), "choose  space toggle")),
            Stop::Rules | Stop::RedirectRules => {
                if self.focused_list().is_some_and(RuleList::is_editing) {
                    hints = vec![("enter".into(), "keep"), (key(Action::Cancel), "undo")];
                } else {
                    hints.extend([
                        (key(Action::AddRow), "add"),
                        (key(Action::Select), "edit"),
                        (key(Action::RemoveRow), "remove"),
                        (
                            format!("{}/{}", key(Action::MoveRowUp), key(Action::MoveRowDown)),
                            "move",
                        ),
                    ]);
                }
            }
            _ => {}
        }
        hints
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) -> Option<Position> {
        let inner_width = area.width.saturating_sub(3);
        let body = self.body(inner_width, ctx);
        let title = match &self.original {
            Some(link) => format!(" Edit link {} ", clip(&link.alias, 40)),
            None => " New link ".to_owned(),
        };
        let message = status_line(self.saving, self.message.as_deref(), ctx);
        let owned = self.hints(ctx.keys);
        let hints: Vec<(&str, &str)> = owned.iter().map(|(k, w)| (k.as_str(), *w)).collect();
        let frame = Frame {
            title,
            message,
            hints: &hints,
        };
        let cursor = render_frame(area, buf, ctx, &frame, &body);
        match &self.popup {
            Some(Popup::Discard { quit }) => {
                render_discard(area, buf, ctx, "link", *quit);
                None
            }
            Some(Popup::Pick(_, picker)) => picker.render(area, buf, ctx),
            None => match self.focused_list().and_then(RuleList::picker) {
                Some(picker) => picker.render(area, buf, ctx),
                None => cursor,
            },
        }
    }
}

/// A section's title with a note after it.
fn heading(title: &'static str, note: &str, ctx: &Ctx) -> Line<'static> {
    Line::from(vec![
        Span::styled(title, ctx.theme.header),
        Span::styled(format!("  {note}"), ctx.theme.dim),
    ])
}

/// The zone's IANA name, or its offset when it has none.
fn zone_name(tz: &TimeZone) -> String {
    tz.iana_name()
        .map(str::to_owned)
        .unwrap_or_else(|| "UTC".to_owned())
}
