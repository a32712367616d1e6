//! The domain form: where a domain sends visitors no link takes — its root, an unknown alias,
//! a disabled or expired link without its own expiration URL (each a URL, or empty for
//! linkdeck's own page) — and what its robots.txt says. A custom robots.txt, set with
//! `linkdeck domains update --robots-file`, is kept unless allow or disallow is chosen.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Position, Rect};
use ratatui::text::{Line, Span};

use super::field::TextField;
use super::{
    Body, Errors, Form, FormOutcome, Guard, INDENT, LABEL_WIDTH, SaveRequest, label, status_line,
};
use crate::domain::{Domain, DomainInput, Error, FieldErrors, Robots, validate_domain_input};
use crate::tui::errors::{Failed, describe};
use crate::tui::keys::{Action, Key};
use crate::tui::view::Ctx;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Root,
    Unknown,
    Expired,
    Robots,
}

const STOPS: [Stop; 4] = [Stop::Root, Stop::Unknown, Stop::Expired, Stop::Robots];

impl Stop {
    fn field(self) -> &'static str {
        match self {
            Stop::Root => "root_url",
            Stop::Unknown => "unknown_url",
            Stop::Expired => "expired_url",
            Stop::Robots => "robots",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Stop::Root => "root /",
            Stop::Unknown => "unknown alias",
            Stop::Expired => "disabled/expired",
            Stop::Robots => "robots.txt",
        }
    }

    fn step(self, by: isize) -> Stop {
        let at = STOPS.iter().position(|s| *s == self).unwrap_or(0) as isize;
        STOPS[(at + by).rem_euclid(STOPS.len() as isize) as usize]
    }
}

#[derive(Debug, Clone)]
pub struct DomainForm {
    original: Domain,
    urls: [TextField; 3],
    robots: Robots,
    focus: Stop,
    errors: Errors,
    guard: Guard,
    message: Option<String>,
}

impl DomainForm {
    pub fn edit(domain: Domain) -> DomainForm {
        let s = domain.settings();
        let field = |u: &Option<String>| TextField::new(u.clone().unwrap_or_default());
        DomainForm {
            urls: [
                field(&s.root_url),
                field(&s.unknown_url),
                field(&s.expired_url),
            ],
            robots: s.robots.clone(),
            original: domain,
            focus: Stop::Root,
            errors: Errors::default(),
            guard: Guard::default(),
            message: None,
        }
    }

    fn url(&self, stop: Stop) -> Option<&TextField> {
        match stop {
            Stop::Root => Some(&self.urls[0]),
            Stop::Unknown => Some(&self.urls[1]),
            Stop::Expired => Some(&self.urls[2]),
            Stop::Robots => None,
        }
    }

    fn url_mut(&mut self, stop: Stop) -> Option<&mut TextField> {
        match stop {
            Stop::Root => Some(&mut self.urls[0]),
            Stop::Unknown => Some(&mut self.urls[1]),
            Stop::Expired => Some(&mut self.urls[2]),
            Stop::Robots => None,
        }
    }

    /// Only the settings that changed.
    pub fn request(&self) -> DomainInput {
        let was = DomainInput::from_settings(self.original.settings());
        let now = |i: usize| Some(self.urls[i].value().trim().to_owned());
        let changed =
            |now: Option<String>, was: &Option<String>| now.filter(|n| Some(n) != was.as_ref());
        let robots_changed = self.robots != self.original.settings().robots;
        DomainInput {
            root_url: changed(now(0), &was.root_url),
            unknown_url: changed(now(1), &was.unknown_url),
            expired_url: changed(now(2), &was.expired_url),
            robots: robots_changed.then(|| self.robots.word().to_owned()),
            robots_txt: None,
        }
    }

    pub fn is_changed(&self) -> bool {
        self.request() != DomainInput::default()
    }

    fn check(&self) -> FieldErrors {
        validate_domain_input(&self.request())
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

    /// ctrl-c: true when the app may quit now; with unsaved changes, asks first.
    pub fn quit_requested(&mut self) -> bool {
        self.guard.quit_requested(self.is_changed())
    }

    pub fn asks(&self) -> bool {
        self.guard.asks()
    }

    pub fn paste(&mut self, text: &str) {
        let focus = self.focus;
        if !self.guard.saving
            && let Some(field) = self.url_mut(focus)
            && field.paste(text)
        {
            self.errors.clear(|n| n == focus.field());
        }
    }

    /// The robots choices the form offers: a custom text stays one of them while it is there.
    fn robots_choices(&self) -> Vec<Robots> {
        let mut choices = vec![Robots::Disallow, Robots::Allow];
        if let Robots::Custom(_) = &self.original.settings().robots {
            choices.push(self.original.settings().robots.clone());
        }
        choices
    }

    pub fn handle_key(&mut self, key: Key) -> FormOutcome {
        if let Some(outcome) = self.guard.intercept(&key) {
            return outcome;
        }
        // A character typed into a URL is text, whatever it is bound to.
        let typing = self.focus != Stop::Robots && key.is_text();
        let action = if typing { None } else { key.action };
        match action {
            Some(Action::Submit) => return self.save(),
            Some(Action::Cancel) => return self.guard.cancel(self.is_changed()),
            Some(Action::NextField) => {
                self.focus_on(self.focus.step(1));
                return FormOutcome::Stay;
            }
            Some(Action::PrevField) => {
                self.focus_on(self.focus.step(-1));
                return FormOutcome::Stay;
            }
            _ => {}
        }
        match key.code {
            KeyCode::Up => {
                self.focus_on(self.focus.step(-1));
                return FormOutcome::Stay;
            }
            KeyCode::Down => {
                self.focus_on(self.focus.step(1));
                return FormOutcome::Stay;
            }
            KeyCode::Enter if self.focus != Stop::Robots => {
                self.focus_on(self.focus.step(1));
                return FormOutcome::Stay;
            }
            KeyCode::Enter => return self.save(),
            _ => {}
        }
        let focus = self.focus;
        if let Some(field) = self.url_mut(focus) {
            if field.handle_key(&key) {
                self.errors.clear(|n| n == focus.field());
                self.message = None;
            }
            return FormOutcome::Stay;
        }
        let choices = self.robots_choices();
        let at = choices.iter().position(|c| *c == self.robots).unwrap_or(0);
        let next = match (key.code, key.action) {
            (KeyCode::Left | KeyCode::Char('h'), _) => {
                Some((at + choices.len() - 1) % choices.len())
            }
            (KeyCode::Right | KeyCode::Char('l'), _) | (_, Some(Action::Toggle)) => {
                Some((at + 1) % choices.len())
            }
            _ => None,
        };
        if let Some(i) = next {
            self.robots = choices[i].clone();
            self.errors.clear(|n| n == "robots");
            self.message = None;
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
        if input == DomainInput::default() {
            return FormOutcome::Close;
        }
        self.guard.saving = true;
        self.message = None;
        FormOutcome::Save(SaveRequest::UpdateDomain(self.original.id, input))
    }

    fn show_errors(&mut self, errors: &FieldErrors) {
        self.errors = Errors::all(errors);
        if let Some(stop) = STOPS.iter().find(|s| self.errors.get(s.field()).is_some()) {
            self.focus = *stop;
        }
        let message = self
            .errors
            .not_saved(|n| STOPS.iter().any(|s| s.field() == n));
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
            Constraint::Length(90.min(area.width)),
            Constraint::Length(15.min(area.height)),
        );
        let width = rect.width.saturating_sub(3);
        let value_x = INDENT + LABEL_WIDTH;
        let mut body = Body::default();
        for stop in STOPS {
            let focused = self.focus == stop;
            let first = body.next();
            let mut spans = label(stop.label(), focused, ctx);
            match self.url(stop) {
                Some(field) => {
                    let (span, col) = field.span(
                        width.saturating_sub(value_x + 1).max(8),
                        focused,
                        "empty: linkdeck's own page",
                        t.selected,
                        t.dim,
                    );
                    spans.push(span);
                    if focused {
                        body.cursor = col.map(|c| (first, value_x + c));
                    }
                }
                None => {
                    for choice in self.robots_choices() {
                        let chosen = choice == self.robots;
                        let style = match (chosen, focused) {
                            (true, true) => t.selected,
                            (true, false) => t.accent,
                            _ => t.dim,
                        };
                        spans.push(Span::styled(if chosen { "[" } else { " " }, t.accent));
                        spans.push(Span::styled(choice.word(), style));
                        spans.push(Span::styled(if chosen { "]" } else { " " }, t.accent));
                    }
                }
            }
            body.push(Line::from(spans));
            if let Some(message) = self.errors.get(stop.field()) {
                body.push_error(&message, value_x, width, ctx);
            }
            if focused {
                body.focus = (first, body.next() - 1);
            }
            body.blank();
        }
        body.push(Line::styled(
            "  Visitors go there with a 302; empty: linkdeck's own page.",
            t.dim,
        ));
        let title = format!(" Edit domain {} ", self.original.name);
        let message = status_line(self.guard.saving, self.message.as_deref(), ctx);
        let key = |a: Action| ctx.keys.first(a);
        let owned: Vec<(String, &str)> = match self.focus {
            Stop::Robots => vec![
                ("←/→".into(), "choose"),
                (key(Action::Submit), "save"),
                (key(Action::Cancel), "cancel"),
                (key(Action::NextField), "next"),
            ],
            _ => vec![
                (key(Action::Submit), "save"),
                (key(Action::Cancel), "cancel"),
                (key(Action::NextField), "next"),
            ],
        };
        self.guard.finish(
            (area, rect),
            buf,
            ctx,
            (title, message, &owned),
            &body,
            "domain",
        )
    }
}

impl From<DomainForm> for Form {
    fn from(form: DomainForm) -> Form {
        Form::Domain(Box::new(form))
    }
}

#[cfg(test)]
mod tests {
    use super::super::link_form::tests::{ctrl, press};
    use super::*;
    use crate::domain::HostSettings;

    fn save() -> Key {
        ctrl('s')
    }

    fn domain(settings: HostSettings) -> Domain {
        let now = jiff::Timestamp::UNIX_EPOCH;
        Domain {
            id: 4,
            owner_id: 1,
            name: "https://sho.rt".into(),
            created_at: now,
            updated_at: now,
            settings: Some(settings),
        }
    }

    #[test]
    fn only_what_changed_is_sent() {
        let mut form = DomainForm::edit(domain(HostSettings {
            unknown_url: Some("https://a.example/".into()),
            ..HostSettings::default()
        }));
        for c in "https://home.example".chars() {
            form.handle_key(press(KeyCode::Char(c)));
        }
        // Clearing the unknown alias's URL.
        form.handle_key(press(KeyCode::Tab));
        for _ in 0..40 {
            form.handle_key(press(KeyCode::Backspace));
        }
        form.handle_key(press(KeyCode::Tab));
        form.handle_key(press(KeyCode::Tab));
        form.handle_key(press(KeyCode::Right));
        match form.handle_key(save()) {
            FormOutcome::Save(SaveRequest::UpdateDomain(4, input)) => assert_eq!(
                input,
                DomainInput {
                    root_url: Some("https://home.example".into()),
                    unknown_url: Some(String::new()),
                    expired_url: None,
                    robots: Some("allow".into()),
                    robots_txt: None,
                }
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_url_is_refused_before_sending() {
        let mut form = DomainForm::edit(domain(HostSettings::default()));
        form.handle_key(press(KeyCode::Tab));
        form.handle_key(press(KeyCode::Tab));
        for c in "gopher://x".chars() {
            form.handle_key(press(KeyCode::Char(c)));
        }
        assert_eq!(form.handle_key(save()), FormOutcome::Stay);
        assert!(form.errors.get("expired_url").is_some());
        assert!(!form.guard.saving);
    }

    #[test]
    fn a_custom_robots_txt_is_kept_unless_another_is_chosen() {
        let custom = Robots::Custom("User-agent: *\n".into());
        let mut form = DomainForm::edit(domain(HostSettings {
            robots: custom.clone(),
            ..HostSettings::default()
        }));
        assert_eq!(form.handle_key(save()), FormOutcome::Close);
        form.handle_key(press(KeyCode::BackTab));
        form.handle_key(press(KeyCode::Left));
        assert_eq!(form.robots, Robots::Allow);
        form.handle_key(press(KeyCode::Right));
        assert_eq!(form.robots, custom);
    }
}
