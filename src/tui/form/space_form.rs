//! The space form: a name and one of the six colours, picked from a row that shows them all.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Position, Rect};
use ratatui::text::{Line, Span};

use super::field::TextField;
use super::{
    Body, Errors, Form, FormOutcome, Guard, INDENT, LABEL_WIDTH, SaveRequest, label, status_line,
};
use crate::domain::{Color, Error, FieldErrors, Mode, Space, SpaceInput, validate_space_input};
use crate::tui::errors::{Failed, describe};
use crate::tui::keys::{Action, Key};
use crate::tui::view::Ctx;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Name,
    Color,
}

impl Stop {
    fn field(self) -> &'static str {
        match self {
            Stop::Name => "name",
            Stop::Color => "color",
        }
    }
}

#[derive(Debug, Clone)]
pub struct SpaceForm {
    original: Option<Space>,
    name: TextField,
    color: Option<Color>,
    focus: Stop,
    errors: Errors,
    guard: Guard,
    message: Option<String>,
}

impl SpaceForm {
    pub fn create() -> SpaceForm {
        SpaceForm {
            original: None,
            name: TextField::default(),
            color: Color::new(1),
            focus: Stop::Name,
            errors: Errors::default(),
            guard: Guard::default(),
            message: None,
        }
    }

    pub fn edit(space: Space) -> SpaceForm {
        SpaceForm {
            name: TextField::new(space.name.clone()),
            color: Some(space.color),
            original: Some(space),
            ..SpaceForm::create()
        }
    }

    pub fn is_changed(&self) -> bool {
        match &self.original {
            Some(space) => self.name.value() != space.name || self.color != Some(space.color),
            None => !self.name.is_empty() || self.color != Color::new(1),
        }
    }

    /// On create both fields; on edit only the changed ones.
    pub fn request(&self) -> SpaceInput {
        let name = self.name.value().to_owned();
        let color = self.color.map(|c| c.number().to_string());
        match &self.original {
            None => SpaceInput {
                name: Some(name),
                color,
            },
            Some(space) => SpaceInput {
                name: (name != space.name).then_some(name),
                color: color.filter(|_| self.color != Some(space.color)),
            },
        }
    }

    fn mode(&self) -> Mode {
        match self.original {
            Some(_) => Mode::Update,
            None => Mode::Create,
        }
    }

    fn check(&self) -> FieldErrors {
        validate_space_input(&self.request(), self.mode())
            .err()
            .unwrap_or_default()
    }

    fn focus_on(&mut self, stop: Stop) {
        if stop != self.focus {
            let left = self.focus.field();
            let fresh = self.check();
            self.errors.refresh(&fresh, |name| name == left);
            self.focus = stop;
        }
    }

    /// The space being edited, if any.
    pub fn original(&self) -> Option<&Space> {
        self.original.as_ref()
    }

    /// ctrl-c: true when the app may quit now; with unsaved changes, asks first.
    pub fn quit_requested(&mut self) -> bool {
        self.guard.quit_requested(self.is_changed())
    }

    pub fn asks(&self) -> bool {
        self.guard.asks()
    }

    pub fn paste(&mut self, text: &str) {
        if !self.guard.saving && self.focus == Stop::Name && self.name.paste(text) {
            self.errors.clear(|n| n == "name");
        }
    }

    pub fn handle_key(&mut self, key: Key) -> FormOutcome {
        if let Some(outcome) = self.guard.intercept(&key) {
            return outcome;
        }
        // A character typed into the name is text, whatever it is bound to.
        let action = if self.focus == Stop::Name && key.is_text() {
            None
        } else {
            key.action
        };
        match action {
            Some(Action::Submit) => return self.save(),
            Some(Action::Cancel) => return self.guard.cancel(self.is_changed()),
            Some(Action::NextField | Action::PrevField) => {
                let next = match self.focus {
                    Stop::Name => Stop::Color,
                    Stop::Color => Stop::Name,
                };
                self.focus_on(next);
                return FormOutcome::Stay;
            }
            _ => {}
        }
        match key.code {
            KeyCode::Up | KeyCode::Down => {
                let next = match self.focus {
                    Stop::Name => Stop::Color,
                    Stop::Color => Stop::Name,
                };
                self.focus_on(next);
                return FormOutcome::Stay;
            }
            KeyCode::Enter if self.focus == Stop::Name => {
                self.focus_on(Stop::Color);
                return FormOutcome::Stay;
            }
            KeyCode::Enter => return self.save(),
            _ => {}
        }
        match self.focus {
            Stop::Name => {
                if self.name.handle_key(&key) {
                    self.errors.clear(|n| n == "name");
                    self.message = None;
                }
            }
            Stop::Color => {
                let all: Vec<Color> = Color::all().collect();
                let at = self.color.and_then(|c| all.iter().position(|a| *a == c));
                let next = match (key.code, key.action) {
                    (KeyCode::Left | KeyCode::Char('h'), _) => {
                        Some(at.map_or(0, |i| (i + all.len() - 1) % all.len()))
                    }
                    (KeyCode::Right | KeyCode::Char('l'), _) | (_, Some(Action::Toggle)) => {
                        Some(at.map_or(0, |i| (i + 1) % all.len()))
                    }
                    (KeyCode::Char(c @ '1'..='6'), _) => Some(usize::from(c as u8 - b'1')),
                    (_, Some(Action::Top)) => Some(0),
                    (_, Some(Action::Bottom)) => Some(all.len() - 1),
                    _ => None,
                };
                if let Some(i) = next {
                    self.color = all.get(i).copied();
                    self.errors.clear(|n| n == "color");
                    self.message = None;
                }
            }
        }
        FormOutcome::Stay
    }

    fn save(&mut self) -> FormOutcome {
        let errors = self.check();
        if !errors.is_empty() {
            self.show_errors(&errors);
            return FormOutcome::Stay;
        }
        let input = self.request();
        let request = match &self.original {
            Some(_) if input == SpaceInput::default() => return FormOutcome::Close,
            Some(space) => SaveRequest::UpdateSpace(space.id, input),
            None => SaveRequest::CreateSpace(input),
        };
        self.guard.saving = true;
        self.message = None;
        FormOutcome::Save(request)
    }

    fn show_errors(&mut self, errors: &FieldErrors) {
        self.errors = Errors::all(errors);
        if self.errors.get("name").is_some() {
            self.focus = Stop::Name;
        } else if self.errors.get("color").is_some() {
            self.focus = Stop::Color;
        }
        let message = self.errors.not_saved(|n| n == "name" || n == "color");
        self.message = Some(message);
    }

    pub fn save_failed(&mut self, error: &Error) {
        self.guard.saving = false;
        match error {
            Error::Validation(errors) => self.show_errors(errors),
            other => self.message = Some(describe(other, Failed::Save)),
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) -> Option<Position> {
        let t = ctx.theme;
        let rect = area.centered(
            Constraint::Length(78.min(area.width)),
            Constraint::Length(11.min(area.height)),
        );
        let width = rect.width.saturating_sub(3);
        let value_x = INDENT + LABEL_WIDTH;
        let mut body = Body::default();
        let push_errors = |body: &mut Body, stop: Stop| {
            if let Some(message) = self.errors.get(stop.field()) {
                body.push_error(&message, value_x, width, ctx);
            }
        };

        let first = body.next();
        let mut spans = label("name", self.focus == Stop::Name, ctx);
        let (span, col) = self.name.span(
            width.saturating_sub(value_x + 1).max(8),
            self.focus == Stop::Name,
            "1 to 32 characters",
            t.selected,
            t.dim,
        );
        spans.push(span);
        body.push(Line::from(spans));
        if self.focus == Stop::Name {
            body.cursor = col.map(|c| (first, value_x + c));
        }
        push_errors(&mut body, Stop::Name);
        if self.focus == Stop::Name {
            body.focus = (first, body.next() - 1);
        }

        body.blank();
        let first = body.next();
        let mut spans = label("colour", self.focus == Stop::Color, ctx);
        for color in Color::all() {
            let chosen = Some(color) == self.color;
            let name_style = match (chosen, self.focus == Stop::Color) {
                (true, true) => t.selected,
                (true, false) => t.accent,
                _ => t.dim,
            };
            spans.push(Span::styled(if chosen { "[" } else { " " }, t.accent));
            spans.push(Span::styled("●", t.space(color)));
            spans.push(Span::styled(format!(" {}", color.name()), name_style));
            spans.push(Span::styled(if chosen { "]" } else { " " }, t.accent));
        }
        body.push(Line::from(spans));
        push_errors(&mut body, Stop::Color);
        if self.focus == Stop::Color {
            body.focus = (first, body.next() - 1);
        }

        let title = match &self.original {
            Some(space) => format!(" Edit space {} ", space.name),
            None => " New space ".to_owned(),
        };
        let message = status_line(self.guard.saving, self.message.as_deref(), ctx);
        let key = |a: Action| ctx.keys.first(a);
        let owned: Vec<(String, &str)> = match self.focus {
            Stop::Name => vec![
                (key(Action::Submit), "save"),
                (key(Action::Cancel), "cancel"),
                (key(Action::NextField), "colour"),
            ],
            Stop::Color => vec![
                ("←/→".into(), "colour"),
                (key(Action::Submit), "save"),
                (key(Action::Cancel), "cancel"),
                (key(Action::NextField), "name"),
            ],
        };
        self.guard.finish(
            (area, rect),
            buf,
            ctx,
            (title, message, &owned),
            &body,
            "space",
        )
    }
}

impl From<SpaceForm> for Form {
    fn from(form: SpaceForm) -> Form {
        Form::Space(Box::new(form))
    }
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::{KeyEvent, KeyModifiers};

    use super::*;
    use crate::tui::keys::KeyMap;

    fn press(code: KeyCode) -> Key {
        KeyMap::default().key_in(
            KeyEvent::new(code, KeyModifiers::NONE),
            crate::tui::keys::KeyContext::Forms,
        )
    }

    fn save() -> Key {
        KeyMap::default().key_in(
            KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
            crate::tui::keys::KeyContext::Forms,
        )
    }

    #[test]
    fn a_new_space_takes_a_name_and_a_colour() {
        let mut form = SpaceForm::create();
        for c in "Launch".chars() {
            form.handle_key(press(KeyCode::Char(c)));
        }
        form.handle_key(press(KeyCode::Tab));
        form.handle_key(press(KeyCode::Right));
        form.handle_key(press(KeyCode::Right));
        match form.handle_key(save()) {
            FormOutcome::Save(SaveRequest::CreateSpace(input)) => {
                assert_eq!(input.name.as_deref(), Some("Launch"));
                assert_eq!(input.color.as_deref(), Some("3"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_name_is_refused_before_sending() {
        let mut form = SpaceForm::create();
        assert_eq!(form.handle_key(save()), FormOutcome::Stay);
        assert!(form.errors.get("name").unwrap().contains("required"));
        assert!(!form.guard.saving);
    }

    #[test]
    fn editing_sends_only_the_colour_when_only_it_changed() {
        let now = jiff::Timestamp::UNIX_EPOCH;
        let mut form = SpaceForm::edit(Space {
            id: 7,
            owner_id: 1,
            name: "Docs".into(),
            color: Color::new(5).unwrap(),
            links: None,
            created_at: now,
            updated_at: now,
        });
        form.handle_key(press(KeyCode::Tab));
        form.handle_key(press(KeyCode::Char('2')));
        match form.handle_key(save()) {
            FormOutcome::Save(SaveRequest::UpdateSpace(7, input)) => {
                assert_eq!(
                    input,
                    SpaceInput {
                        name: None,
                        color: Some("2".into())
                    }
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
