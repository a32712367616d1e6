//! The editing half of the terminal app: the link form, the space form and the domain form.
//!
//! A form is a plain component: keys and pastes in, a [`FormOutcome`] out, `render` reads its
//! state. It never calls the backend: saving answers [`FormOutcome::Save`] with the request the
//! app should send, and the app hands the answer back ([`Form::save_failed`]) or closes the form.
//! Validation is the service's own (`domain::validate_link_input` / `validate_space_input`), so
//! the form refuses exactly what the backend would refuse, and a server's 422 lands on the same
//! fields.

mod domain_form;
mod field;
mod link_form;
mod picker;
mod redirect_rules;
mod rules;
mod space_form;

#[cfg(test)]
mod snapshot_tests;

use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

pub use domain_form::DomainForm;
pub use field::TextField;
pub use link_form::LinkForm;
pub use space_form::SpaceForm;

use super::keys::{Action, Key};
use super::view::Ctx;
use crate::domain::{DomainInput, Error, FieldErrors, Id, LinkInput, Shown, SpaceInput};

/// Width of the label column; values start after it.
pub const LABEL_WIDTH: u16 = 18;
/// Room for the focus marker before a label.
pub const INDENT: u16 = 2;

/// What the app should do after a key reached a form.
// Answered once per key press and consumed at once: boxing the request would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum FormOutcome {
    /// The form is still open.
    Stay,
    /// Close it (cancelled, discarded, or nothing to save).
    Close,
    /// Send this request; the form now shows progress and takes no second save.
    Save(SaveRequest),
    /// The person asked to quit the app and agreed to lose the changes.
    Quit,
}

/// A request a form wants sent, already checked with the service's rules.
#[derive(Debug, Clone, PartialEq)]
pub enum SaveRequest {
    CreateLink(LinkInput),
    /// Only the fields that changed.
    UpdateLink(Id, LinkInput),
    CreateSpace(SpaceInput),
    UpdateSpace(Id, SpaceInput),
    /// A domain's settings: only those that changed.
    UpdateDomain(Id, DomainInput),
}

/// An open form.
#[derive(Debug, Clone)]
pub enum Form {
    Link(Box<LinkForm>),
    Space(Box<SpaceForm>),
    Domain(Box<DomainForm>),
}

impl Form {
    pub fn handle_key(&mut self, key: Key) -> FormOutcome {
        match self {
            Form::Link(form) => form.handle_key(key),
            Form::Space(form) => form.handle_key(key),
            Form::Domain(form) => form.handle_key(key),
        }
    }

    /// How to take back the save `request` would make (an edit's earlier values), with a
    /// note when part of it cannot come back.
    pub fn undo_of(
        &self,
        request: &SaveRequest,
    ) -> Option<(crate::tui::undo::UndoWhat, Option<String>)> {
        use crate::tui::undo::UndoWhat;
        match (self, request) {
            (Form::Link(form), SaveRequest::UpdateLink(id, input)) => {
                let link = form.original()?;
                let (back, lost) = crate::backend::bulk::revert_of_edit(link, input, form.zone());
                let note = lost.then(|| "its earlier password cannot come back".to_owned());
                Some((
                    UndoWhat::Edit {
                        id: *id,
                        input: back,
                    },
                    note,
                ))
            }
            (Form::Space(form), SaveRequest::UpdateSpace(id, input)) => {
                let space = form.original()?;
                let back = crate::domain::SpaceInput {
                    name: input.name.as_ref().map(|_| space.name.clone()),
                    color: input
                        .color
                        .as_ref()
                        .map(|_| space.color.number().to_string()),
                };
                Some((
                    UndoWhat::SpaceEdit {
                        id: *id,
                        input: back,
                    },
                    None,
                ))
            }
            _ => None,
        }
    }

    /// ctrl-c: true when the app may quit now; otherwise the form asks first.
    pub fn quit_requested(&mut self) -> bool {
        match self {
            Form::Link(form) => form.quit_requested(),
            Form::Space(form) => form.quit_requested(),
            Form::Domain(form) => form.quit_requested(),
        }
    }

    /// Whether the form's keys are a dialog's just now (its discard question is open).
    pub fn asks(&self) -> bool {
        match self {
            Form::Link(form) => form.asks(),
            Form::Space(form) => form.asks(),
            Form::Domain(form) => form.asks(),
        }
    }

    /// Bracketed paste into the focused input.
    pub fn paste(&mut self, text: &str) {
        match self {
            Form::Link(form) => form.paste(text),
            Form::Space(form) => form.paste(text),
            Form::Domain(form) => form.paste(text),
        }
    }

    /// The save failed: field errors go beside their fields, anything else to the form's
    /// message line. Everything typed stays.
    pub fn save_failed(&mut self, error: &Error) {
        match self {
            Form::Link(form) => form.save_failed(error),
            Form::Space(form) => form.save_failed(error),
            Form::Domain(form) => form.save_failed(error),
        }
    }

    /// Draws the form over `area`; returns where the text cursor goes.
    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) -> Option<Position> {
        match self {
            Form::Link(form) => form.render(area, buf, ctx),
            Form::Space(form) => form.render(area, buf, ctx),
            Form::Domain(form) => form.render(area, buf, ctx),
        }
    }
}

/// The errors a form shows, by wire field name (`url`, `geo.0.key`). Unlike [`FieldErrors`] they
/// are replaced field by field: leaving a field refreshes only that field's messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Errors(BTreeMap<String, Vec<String>>);

impl Errors {
    pub fn all(errors: &FieldErrors) -> Errors {
        Errors(
            errors
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_vec()))
                .collect(),
        )
    }

    /// Replaces the messages of every field `matches` accepts with those in `fresh`.
    pub fn refresh(&mut self, fresh: &FieldErrors, matches: impl Fn(&str) -> bool) {
        self.0.retain(|k, _| !matches(k));
        for (k, v) in fresh.iter().filter(|(k, _)| matches(k)) {
            self.0.insert(k.to_owned(), v.to_vec());
        }
    }

    pub fn clear(&mut self, matches: impl Fn(&str) -> bool) {
        self.0.retain(|k, _| !matches(k));
    }

    /// The messages of one field, joined.
    pub fn get(&self, field: &str) -> Option<String> {
        self.0.get(field).map(|v| v.join("; "))
    }

    pub fn any(&self, matches: impl Fn(&str) -> bool) -> bool {
        self.0.keys().any(|k| matches(k))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, String)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.join("; ")))
    }

    /// A refused save's message line: the errors of fields the form does not show (`shown`
    /// says which it does), or where to look.
    pub fn not_saved(&self, shown: impl Fn(&str) -> bool) -> String {
        let other: Vec<String> = self
            .iter()
            .filter(|(n, _)| !shown(n))
            .map(|(n, m)| format!("{n}: {m}"))
            .collect();
        if other.is_empty() {
            "Not saved: check the fields marked ✗".into()
        } else {
            format!("Not saved: {}", other.join("; "))
        }
    }
}

/// The most lines one field's errors take.
const ERROR_LINES: usize = 4;

/// A form's body as lines, with the focused stop's lines (kept in view) and the text cursor.
#[derive(Debug, Default)]
pub struct Body {
    pub lines: Vec<Line<'static>>,
    /// First and last line of the focused stop, its errors included: shown whole when they fit.
    pub focus: (usize, usize),
    /// A line that must show whatever else does (the selected row of a long rule list).
    pub keep: Option<usize>,
    /// Line and column of the text cursor.
    pub cursor: Option<(usize, u16)>,
}

impl Body {
    /// Pushes `message` as the error under a field: `✗` at column `indent`, wrapped to `width`
    /// so that a long one is read whole, not cut at the window's edge.
    pub fn push_error(&mut self, message: &str, indent: u16, width: u16, ctx: &Ctx) {
        let room = usize::from(width.saturating_sub(indent + 2)).max(1);
        let text = crate::domain::shown(message);
        let lines = textwrap::wrap(&text, room);
        let shown = lines.len().min(ERROR_LINES);
        for (i, line) in lines.iter().take(shown).enumerate() {
            let mark = if i == 0 { "✗ " } else { "  " };
            let line = if i + 1 == shown && lines.len() > shown {
                // A server's endless message stops here; the first lines say what is wrong.
                field::clip(
                    &format!("{line} …"),
                    u16::try_from(room).unwrap_or(u16::MAX),
                )
            } else {
                line.to_string()
            };
            self.push(Line::from(vec![
                Span::raw(" ".repeat(usize::from(indent))),
                Span::styled(format!("{mark}{line}"), ctx.theme.error),
            ]));
        }
    }

    pub fn push(&mut self, line: Line<'static>) {
        self.lines.push(line);
    }

    pub fn blank(&mut self) {
        self.lines.push(Line::raw(""));
    }

    pub fn next(&self) -> usize {
        self.lines.len()
    }
}

/// The label column: a marker on the focused stop, then the label.
pub fn label(text: &str, focused: bool, ctx: &Ctx) -> Vec<Span<'static>> {
    let width = usize::from(LABEL_WIDTH);
    if focused {
        vec![
            Span::styled("▶ ", ctx.theme.accent),
            Span::styled(format!("{text:<width$}"), ctx.theme.accent),
        ]
    } else {
        vec![Span::raw("  "), Span::raw(format!("{text:<width$}"))]
    }
}

/// Everything a form frame shows besides its body.
pub struct Frame<'a> {
    pub title: String,
    /// A line over the hints: progress, or what went wrong.
    pub message: Option<Line<'static>>,
    pub hints: &'a [(&'a str, &'a str)],
}

/// A form's message line: the spinner while its save is out, else what last went wrong (which
/// may quote a server: [`Shown`]).
pub fn status_line(saving: bool, message: Option<&str>, ctx: &Ctx) -> Option<Line<'static>> {
    if saving {
        Some(Line::styled(
            format!(" {} Saving…", ctx.spinner),
            ctx.theme.accent,
        ))
    } else {
        message.map(|m| Line::styled(format!(" {}", Shown(m)), ctx.theme.error))
    }
}

/// Draws a bordered form over `area`: the body scrolled so the focused stop shows, a message
/// line and the form's key hints at the bottom. Returns the screen position of the cursor.
pub fn render_frame(
    area: Rect,
    buf: &mut Buffer,
    ctx: &Ctx,
    frame: &Frame,
    body: &Body,
) -> Option<Position> {
    let t = ctx.theme;
    Clear.render(area, buf);
    let block = t.panel(frame.title.clone(), t.focused_border);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 3 || inner.width < 10 {
        return None;
    }
    let footer = 2;
    let visible = usize::from(inner.height - footer);
    // Scroll just enough that the whole focused stop shows, its first line winning.
    let (first, last) = body.focus;
    let mut offset = last
        .saturating_sub(visible.saturating_sub(1))
        .min(first)
        .min(body.lines.len().saturating_sub(visible));
    if let Some(keep) = body.keep {
        offset = super::scroll::offset_showing(keep, offset, visible);
    }
    // One column of padding keeps headings off the border.
    let body_area = Rect {
        x: inner.x + 1,
        width: inner.width - 1,
        height: inner.height - footer,
        ..inner
    };
    Paragraph::new(body.lines.clone())
        .scroll((u16::try_from(offset).unwrap_or(0), 0))
        .render(body_area, buf);
    // On the borders, where they cover no field: the top one right of the title.
    let marker = |text: &'static str, y: u16, buf: &mut Buffer| {
        let width = 8;
        Span::styled(text, t.dim).render(
            Rect {
                x: area.right().saturating_sub(width + 1),
                y,
                width,
                height: 1,
            },
            buf,
        );
    };
    let title_room = Span::raw(frame.title.as_str()).width() as u16 + 4 + 8;
    if offset > 0 && title_room <= area.width {
        marker(" ↑ more ", area.y, buf);
    }
    if body.lines.len() > offset + visible {
        marker(" ↓ more ", area.bottom() - 1, buf);
    }
    let message_area = Rect {
        y: inner.bottom() - 2,
        height: 1,
        ..inner
    };
    if let Some(message) = &frame.message {
        Paragraph::new(message.clone()).render(message_area, buf);
    }
    let mut spans = vec![Span::raw(" ")];
    for (key, what) in frame.hints {
        spans.push(Span::styled((*key).to_owned(), t.accent));
        spans.push(Span::styled(format!(" {what}  "), t.dim));
    }
    Line::from(spans).render(
        Rect {
            y: inner.bottom() - 1,
            height: 1,
            ..inner
        },
        buf,
    );
    let (line, col) = body.cursor?;
    let row = line.checked_sub(offset)?;
    (row < visible).then(|| {
        Position::new(
            body_area.x + col,
            inner.y + u16::try_from(row).unwrap_or(u16::MAX),
        )
    })
}

/// The "discard your changes?" question, over the form; `quit` when yes also ends the app
/// (asked by ctrl-c), which the question then says.
pub fn render_discard(area: Rect, buf: &mut Buffer, ctx: &Ctx, what: &str, quit: bool) {
    let t = ctx.theme;
    let rect = area.centered(
        ratatui::layout::Constraint::Length(50.min(area.width)),
        ratatui::layout::Constraint::Length(6),
    );
    Clear.render(rect, buf);
    let block = t.panel(" Discard changes? ", t.error);
    let inner = block.inner(rect);
    block.render(rect, buf);
    Paragraph::new(vec![
        Line::raw(if quit {
            format!("Quit linkdeck and lose what you typed in the {what} form?")
        } else {
            format!("Close the {what} form and lose what you typed?")
        }),
        Line::raw(""),
        Line::from(vec![
            Span::styled(ctx.keys.label(Action::Yes), t.accent),
            Span::raw(if quit {
                " discard and quit   "
            } else {
                " discard      "
            }),
            Span::styled(
                format!(
                    "{} / {}",
                    ctx.keys.label(Action::No),
                    ctx.keys.label(Action::Cancel)
                ),
                t.accent,
            ),
            Span::raw("  keep editing"),
        ]),
    ])
    .wrap(Wrap { trim: true })
    .render(inner, buf);
}

/// What the space and domain forms keep alike around their fields: the save in flight and the
/// "discard your changes?" question.
#[derive(Debug, Clone, Copy, Default)]
pub struct Guard {
    /// The discard question is open; `Some(true)` when yes also quits the app (ctrl-c).
    pub discard: Option<bool>,
    /// The save is out: the form takes no key until its answer.
    pub saving: bool,
}

impl Guard {
    /// ctrl-c: true when the app may quit now; with unsaved changes, asks first.
    pub fn quit_requested(&mut self, changed: bool) -> bool {
        if changed && !self.saving {
            self.discard = Some(true);
            false
        } else {
            true
        }
    }

    pub fn asks(&self) -> bool {
        self.discard.is_some()
    }

    /// What `key` does while a save is out or the question is open; `None`: the form's own.
    pub fn intercept(&mut self, key: &Key) -> Option<FormOutcome> {
        if self.saving {
            return Some(FormOutcome::Stay);
        }
        let quit = self.discard?;
        Some(match discard_answer(key) {
            Some(true) if quit => FormOutcome::Quit,
            Some(true) => FormOutcome::Close,
            Some(false) => {
                self.discard = None;
                FormOutcome::Stay
            }
            None => FormOutcome::Stay,
        })
    }

    /// esc: close, or ask first when something changed.
    pub fn cancel(&mut self, changed: bool) -> FormOutcome {
        if changed {
            self.discard = Some(false);
            FormOutcome::Stay
        } else {
            FormOutcome::Close
        }
    }

    /// Draws the form's frame with its key `hints`, and the discard question over it when open
    /// (then no text cursor). `what` names the form in the question.
    pub fn finish(
        &self,
        (area, rect): (Rect, Rect),
        buf: &mut Buffer,
        ctx: &Ctx,
        (title, message, hints): (String, Option<Line<'static>>, &[(String, &str)]),
        body: &Body,
        what: &str,
    ) -> Option<Position> {
        let hints: Vec<(&str, &str)> = hints.iter().map(|(k, w)| (k.as_str(), *w)).collect();
        let frame = Frame {
            title,
            message,
            hints: &hints,
        };
        let cursor = render_frame(rect, buf, ctx, &frame, body);
        if let Some(quit) = self.discard {
            render_discard(area, buf, ctx, what, quit);
            return None;
        }
        cursor
    }
}

/// Answers the discard question: `Some(true)` discard, `Some(false)` keep editing.
pub fn discard_answer(key: &Key) -> Option<bool> {
    use crate::tui::keys::Action;
    match key.action {
        Some(Action::Yes) => Some(true),
        Some(Action::No | Action::Cancel) => Some(false),
        _ => None,
    }
}
