//! The link form: every field of DESIGN §2 in four sections (basics, protection, expiry,
//! targeting). It knows the link it edits, so a save sends only what changed.

use jiff::tz::TimeZone;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

use super::field::{TextField, clip};
use super::picker::{Choice, ListPicker, PickOutcome};
use super::rules::{RuleList, RuleOutcome};
use super::{
    Body, Errors, Form, FormOutcome, Frame, INDENT, LABEL_WIDTH, SaveRequest, describe_failure,
    discard_answer, error_line, label, render_discard, render_frame,
};
use crate::domain::{
    Domain, Error, FieldErrors, Id, Link, LinkInput, Mode, Space, TargetType, format_expiry_input,
    validate_link_input,
};
use crate::tui::keys::{Action, Key};
use crate::tui::view::Ctx;

/// The places focus stops, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Url,
    Alias,
    Space,
    Domain,
    PasswordMode,
    Password,
    Disabled,
    Public,
    Date,
    Time,
    Clicks,
    ExpirationUrl,
    TargetType,
    Rules,
}

impl Stop {
    /// Whether an error of wire field `name` belongs beside this stop.
    fn owns(self, name: &str) -> bool {
        match self {
            Stop::Url => name == "url",
            Stop::Alias => name == "alias",
            Stop::Space => name == "space",
            Stop::Domain => name == "domain",
            Stop::PasswordMode | Stop::Password => name == "password",
            Stop::Disabled => name == "disabled",
            Stop::Public => name == "public",
            Stop::Date => name == "expiration_date",
            Stop::Time => name == "expiration_time",
            Stop::Clicks => name == "expiration_clicks",
            Stop::ExpirationUrl => name == "expiration_url",
            Stop::TargetType => name == "target_type",
            Stop::Rules => ["geo", "platform", "rotation"]
                .iter()
                .any(|list| name == *list || name.starts_with(&format!("{list}."))),
        }
    }

    fn is_text(self) -> bool {
        matches!(
            self,
            Stop::Url
                | Stop::Alias
                | Stop::Password
                | Stop::Date
                | Stop::Time
                | Stop::Clicks
                | Stop::ExpirationUrl
        )
    }
}

/// On edit, what happens to an existing password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PasswordMode {
    Keep,
    Change,
    Remove,
}

impl PasswordMode {
    const ALL: [PasswordMode; 3] = [
        PasswordMode::Keep,
        PasswordMode::Change,
        PasswordMode::Remove,
    ];

    fn label(self) -> &'static str {
        match self {
            PasswordMode::Keep => "keep",
            PasswordMode::Change => "change",
            PasswordMode::Remove => "remove",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PickFor {
    Space,
    Domain,
}

#[derive(Debug, Clone)]
enum Popup {
    Pick(PickFor, ListPicker),
    Discard,
}

#[derive(Debug, Clone)]
pub struct LinkForm {
    /// The link being edited; `None` creates one.
    original: Option<Link>,
    tz: TimeZone,
    spaces: Vec<Space>,
    domains: Vec<Domain>,
    /// Used for short URLs of links without a domain, shown beside "none".
    url: TextField,
    alias: TextField,
    space: Option<Id>,
    domain: Option<Id>,
    password: TextField,
    password_mode: PasswordMode,
    disabled: bool,
    public: bool,
    date: TextField,
    time: TextField,
    clicks: TextField,
    expiration_url: TextField,
    target: TargetType,
    geo: RuleList,
    platform: RuleList,
    rotation: RuleList,
    focus: Stop,
    errors: Errors,
    popup: Option<Popup>,
    saving: bool,
    message: Option<String>,
    /// Every field as first shown, to tell a changed form and to send only what changed.
    baseline: LinkInput,
}

impl LinkForm {
    /// An empty form for a new link.
    pub fn create(spaces: Vec<Space>, domains: Vec<Domain>, tz: TimeZone) -> LinkForm {
        let mut form = LinkForm {
            original: None,
            tz,
            spaces,
            domains,
            url: TextField::default(),
            alias: TextField::default(),
            space: None,
            domain: None,
            password: TextField::default().masked(),
            password_mode: PasswordMode::Keep,
            disabled: false,
            public: false,
            date: TextField::default(),
            time: TextField::default(),
            clicks: TextField::default(),
            expiration_url: TextField::default(),
            target: TargetType::None,
            geo: RuleList::new(TargetType::Geo),
            platform: RuleList::new(TargetType::Platform),
            rotation: RuleList::new(TargetType::Rotation),
            focus: Stop::Url,
            errors: Errors::default(),
            popup: None,
            saving: false,
            message: None,
            baseline: LinkInput::default(),
        };
        form.baseline = form.current();
        form
    }

    /// A form holding `link`, to change it.
    pub fn edit(link: Link, spaces: Vec<Space>, domains: Vec<Domain>, tz: TimeZone) -> LinkForm {
        let mut form = LinkForm::create(spaces, domains, tz);
        form.url = TextField::new(link.url.clone());
        form.alias = TextField::new(link.alias.clone());
        form.space = link.space.as_ref().map(|s| s.id);
        form.domain = link.domain.as_ref().map(|d| d.id);
        form.disabled = link.disabled;
        form.public = link.public;
        if let Some(at) = link.ends_at {
            let (date, time) = format_expiry_input(at, &form.tz);
            form.date = TextField::new(date);
            form.time = TextField::new(time);
        }
        if link.expiration_clicks > 0 {
            form.clicks = TextField::new(link.expiration_clicks.to_string());
        }
        form.expiration_url = TextField::new(link.expiration_url.clone().unwrap_or_default());
        form.target = link.target_type;
        form.geo = RuleList::with_rules(TargetType::Geo, &link.geo);
        form.platform = RuleList::with_rules(TargetType::Platform, &link.platform);
        form.rotation = RuleList::with_urls(&link.rotation);
        // A space the list no longer holds still shows by name.
        if let Some(space) = &link.space
            && !form.spaces.iter().any(|s| s.id == space.id)
        {
            form.spaces.push(space.clone());
        }
        if let Some(domain) = &link.domain
            && !form.domains.iter().any(|d| d.id == domain.id)
        {
            form.domains.push(domain.clone());
        }
        form.original = Some(link);
        form.baseline = form.current();
        form
    }

    /// Starts a new link in `space` (the space the list is filtered by), as if it were picked.
    pub fn in_space(mut self, space: Option<Id>) -> LinkForm {
        if self.original.is_none() && space.is_some_and(|id| self.spaces.iter().any(|s| s.id == id))
        {
            self.space = space;
            self.baseline = self.current();
        }
        self
    }

    fn mode(&self) -> Mode {
        match self.original {
            Some(_) => Mode::Update,
            None => Mode::Create,
        }
    }

    fn had_password(&self) -> bool {
        self.original.as_ref().is_some_and(|l| l.password)
    }

    fn active_rules(&self) -> Option<&RuleList> {
        match self.target {
            TargetType::Geo => Some(&self.geo),
            TargetType::Platform => Some(&self.platform),
            TargetType::Rotation => Some(&self.rotation),
            TargetType::None => None,
        }
    }

    fn active_rules_mut(&mut self) -> Option<&mut RuleList> {
        match self.target {
            TargetType::Geo => Some(&mut self.geo),
            TargetType::Platform => Some(&mut self.platform),
            TargetType::Rotation => Some(&mut self.rotation),
            TargetType::None => None,
        }
    }

    /// The stops in order, for this form's mode and choices.
    fn stops(&self) -> Vec<Stop> {
        let editing = self.original.is_some();
        let mut stops = vec![Stop::Url, Stop::Alias, Stop::Space];
        if !editing {
            stops.push(Stop::Domain);
        }
        if self.had_password() {
            stops.push(Stop::PasswordMode);
            if self.password_mode == PasswordMode::Change {
                stops.push(Stop::Password);
            }
        } else {
            stops.push(Stop::Password);
        }
        stops.extend([
            Stop::Disabled,
            Stop::Public,
            Stop::Date,
            Stop::Time,
            Stop::Clicks,
            Stop::ExpirationUrl,
            Stop::TargetType,
        ]);
        if self.target != TargetType::None {
            stops.push(Stop::Rules);
        }
        stops
    }

    /// Every field of the form as raw text (the password aside), to compare with the baseline.
    fn current(&self) -> LinkInput {
        let id = |id: Option<Id>| Some(id.map(|i| i.to_string()).unwrap_or_default());
        let flag = |on: bool| Some(if on { "1" } else { "0" }.to_owned());
        LinkInput {
            url: Some(self.url.value().to_owned()),
            alias: Some(self.alias.value().to_owned()),
            password: None,
            space: id(self.space),
            domain: id(self.domain),
            disabled: flag(self.disabled),
            public: flag(self.public),
            expiration_url: Some(self.expiration_url.value().to_owned()),
            expiration_date: Some(self.date.value().to_owned()),
            expiration_time: Some(self.time.value().to_owned()),
            expiration_clicks: Some(self.clicks.value().to_owned()),
            target_type: Some(u8::from(self.target).to_string()),
            geo: Some(self.geo.input()),
            platform: Some(self.platform.input()),
            rotation: Some(self.rotation.input()),
        }
    }

    /// Whether anything differs from what the form opened with.
    pub fn is_changed(&self) -> bool {
        self.current() != self.baseline
            || !self.password.is_empty()
            || self.password_mode != PasswordMode::Keep
    }

    /// The request to send: on create every filled field, on edit only the changed ones
    /// (the expiry's date and time travel together, a targeting list whole with its type).
    pub fn request(&self) -> LinkInput {
        let now = self.current();
        let was = &self.baseline;
        let filled = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        let changed =
            |a: &Option<String>, b: &Option<String>| (a != b).then(|| a.clone()).flatten();
        let active_list = |input: &mut LinkInput| match self.target {
            TargetType::Geo => input.geo = now.geo.clone(),
            TargetType::Platform => input.platform = now.platform.clone(),
            TargetType::Rotation => input.rotation = now.rotation.clone(),
            TargetType::None => {}
        };
        let mut input = LinkInput::default();
        match self.original {
            None => {
                input.url = now.url.clone();
                input.alias = filled(&now.alias);
                input.password = filled(&Some(self.password.value().to_owned()));
                input.space = self.space.map(|i| i.to_string());
                input.domain = self.domain.map(|i| i.to_string());
                input.disabled = self.disabled.then(|| "1".into());
                input.public = self.public.then(|| "1".into());
                input.expiration_url = filled(&now.expiration_url);
                if filled(&now.expiration_date).is_some() || filled(&now.expiration_time).is_some()
                {
                    input.expiration_date = now.expiration_date.clone();
                    input.expiration_time = now.expiration_time.clone();
                }
                input.expiration_clicks = filled(&now.expiration_clicks);
                if self.target != TargetType::None {
                    input.target_type = now.target_type.clone();
                    active_list(&mut input);
                }
            }
            Some(_) => {
                input.url = changed(&now.url, &was.url);
                input.alias = changed(&now.alias, &was.alias);
                input.space = changed(&now.space, &was.space);
                input.disabled = changed(&now.disabled, &was.disabled);
                input.public = changed(&now.public, &was.public);
                input.expiration_url = changed(&now.expiration_url, &was.expiration_url);
                if now.expiration_date != was.expiration_date
                    || now.expiration_time != was.expiration_time
                {
                    input.expiration_date = now.expiration_date.clone();
                    input.expiration_time = now.expiration_time.clone();
                }
                input.expiration_clicks = changed(&now.expiration_clicks, &was.expiration_clicks);
                let list_changed = match self.target {
                    TargetType::Geo => now.geo != was.geo,
                    TargetType::Platform => now.platform != was.platform,
                    TargetType::Rotation => now.rotation != was.rotation,
                    TargetType::None => false,
                };
                if now.target_type != was.target_type || list_changed {
                    input.target_type = now.target_type.clone();
                    active_list(&mut input);
                }
                input.password = match (self.had_password(), self.password_mode) {
                    (true, PasswordMode::Keep) => None,
                    (true, PasswordMode::Remove) => Some(String::new()),
                    _ => filled(&Some(self.password.value().to_owned())),
                };
            }
        }
        input
    }

    /// The service's verdict on the request, plus what only the form can know.
    fn check(&self) -> FieldErrors {
        let mut errors = match validate_link_input(&self.request(), self.mode(), &self.tz) {
            Ok(_) => FieldErrors::default(),
            Err(errors) => errors,
        };
        if self.had_password()
            && self.password_mode == PasswordMode::Change
            && self.password.is_empty()
        {
            errors.add("password", "type the new password, or choose keep");
        }
        errors
    }

    fn move_focus(&mut self, forward: bool) {
        let stops = self.stops();
        let at = stops.iter().position(|s| *s == self.focus).unwrap_or(0);
        let next = if forward {
            (at + 1).min(stops.len() - 1)
        } else {
            at.saturating_sub(1)
        };
        self.focus_on(stops[next]);
    }

    fn cycle_focus(&mut self, forward: bool) {
        let stops = self.stops();
        let at = stops.iter().position(|s| *s == self.focus).unwrap_or(0);
        let next = if forward {
            (at + 1) % stops.len()
        } else {
            (at + stops.len() - 1) % stops.len()
        };
        self.focus_on(stops[next]);
    }

    /// Moves focus, showing the errors of the stop being left.
    fn focus_on(&mut self, stop: Stop) {
        if stop != self.focus {
            let left = self.focus;
            let fresh = self.check();
            self.errors.refresh(&fresh, |name| left.owns(name));
            self.focus = stop;
        }
    }

    fn edited(&mut self, stop: Stop) {
        self.errors.clear(|name| stop.owns(name));
        self.message = None;
    }

    pub fn paste(&mut self, text: &str) {
        if self.saving {
            return;
        }
        if let Some(Popup::Pick(_, picker)) = &mut self.popup {
            picker.paste(text);
            return;
        }
        let stop = self.focus;
        let changed = match stop {
            Stop::Rules => self.active_rules_mut().is_some_and(|r| r.paste(text)),
            _ => self.text_field(stop).is_some_and(|f| f.paste(text)),
        };
        if changed {
            self.edited(stop);
        }
    }

    fn text_field(&mut self, stop: Stop) -> Option<&mut TextField> {
        Some(match stop {
            Stop::Url => &mut self.url,
            Stop::Alias => &mut self.alias,
            Stop::Password => &mut self.password,
            Stop::Date => &mut self.date,
            Stop::Time => &mut self.time,
            Stop::Clicks => &mut self.clicks,
            Stop::ExpirationUrl => &mut self.expiration_url,
            _ => return None,
        })
    }

    pub fn handle_key(&mut self, key: Key) -> FormOutcome {
        if self.saving {
            // One request at a time; the answer reopens the form for editing or closes it.
            return FormOutcome::Stay;
        }
        match self.popup.take() {
            Some(Popup::Discard) => {
                return match discard_answer(&key) {
                    Some(true) => FormOutcome::Close,
                    Some(false) => FormOutcome::Stay,
                    None => {
                        self.popup = Some(Popup::Discard);
                        FormOutcome::Stay
                    }
                };
            }
            Some(Popup::Pick(target, mut picker)) => {
                match picker.handle_key(&key) {
                    PickOutcome::Stay => self.popup = Some(Popup::Pick(target, picker)),
                    PickOutcome::Cancel => {}
                    PickOutcome::Picked(choice) => {
                        let id = choice.value.parse::<Id>().ok();
                        match target {
                            PickFor::Space => self.space = id,
                            PickFor::Domain => self.domain = id,
                        }
                        self.edited(self.focus);
                    }
                }
                return FormOutcome::Stay;
            }
            None => {}
        }
        if key.is_ctrl('s') {
            return self.save();
        }
        let rules_editing = self.active_rules().is_some_and(RuleList::is_editing);
        if self.focus == Stop::Rules && rules_editing {
            self.rules_key(&key);
            return FormOutcome::Stay;
        }
        match key.code {
            KeyCode::Esc => {
                return if self.is_changed() {
                    self.popup = Some(Popup::Discard);
                    FormOutcome::Stay
                } else {
                    FormOutcome::Close
                };
            }
            KeyCode::Tab => {
                self.cycle_focus(true);
                return FormOutcome::Stay;
            }
            KeyCode::BackTab => {
                self.cycle_focus(false);
                return FormOutcome::Stay;
            }
            _ => {}
        }
        let stop = self.focus;
        if stop.is_text() {
            match key.code {
                KeyCode::Enter | KeyCode::Down => self.move_focus(true),
                KeyCode::Up => self.move_focus(false),
                _ => {
                    if self.text_field(stop).is_some_and(|f| f.handle_key(&key)) {
                        self.edited(stop);
                    }
                }
            }
            return FormOutcome::Stay;
        }
        if stop == Stop::Rules {
            if self.rules_key(&key) == RuleOutcome::Ignored {
                match key.action {
                    Some(Action::Down) => self.move_focus(true),
                    Some(Action::Up) => self.move_focus(false),
                    _ => {}
                }
            }
            return FormOutcome::Stay;
        }
        self.choice_key(stop, &key);
        FormOutcome::Stay
    }

    fn rules_key(&mut self, key: &Key) -> RuleOutcome {
        let Some(rules) = self.active_rules_mut() else {
            return RuleOutcome::Ignored;
        };
        let outcome = rules.handle_key(key);
        let editing = rules.is_editing();
        if outcome == RuleOutcome::Changed {
            self.message = None;
            // A finished cell shows its verdict at once, like a field that was left.
            if !editing {
                let fresh = self.check();
                self.errors.refresh(&fresh, |name| Stop::Rules.owns(name));
            }
        }
        outcome
    }

    /// Keys on the stops that are not typed into: pickers, switches, the targeting type.
    fn choice_key(&mut self, stop: Stop, key: &Key) {
        let toggle = matches!(
            key.code,
            KeyCode::Char(' ') | KeyCode::Enter | KeyCode::Char('x')
        );
        let step = match key.code {
            KeyCode::Left | KeyCode::Char('h') => Some(false),
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Char(' ') => Some(true),
            _ => None,
        };
        match stop {
            Stop::Space | Stop::Domain => {
                let target = if stop == Stop::Space {
                    PickFor::Space
                } else {
                    PickFor::Domain
                };
                match key.code {
                    KeyCode::Enter | KeyCode::Char(' ') => {
                        let picker = self.picker(target);
                        self.popup = Some(Popup::Pick(target, picker));
                        return;
                    }
                    KeyCode::Backspace | KeyCode::Delete => {
                        self.set_choice(target, None);
                        return;
                    }
                    _ => {}
                }
                if let Some(forward) = step {
                    let ids: Vec<Option<Id>> = std::iter::once(None)
                        .chain(match target {
                            PickFor::Space => self.spaces.iter().map(|s| Some(s.id)).collect(),
                            PickFor::Domain => {
                                self.domains.iter().map(|d| Some(d.id)).collect::<Vec<_>>()
                            }
                        })
                        .collect();
                    let current = match target {
                        PickFor::Space => self.space,
                        PickFor::Domain => self.domain,
                    };
                    let next = cycle(&ids, &current, forward);
                    self.set_choice(target, next);
                    return;
                }
            }
            Stop::PasswordMode => {
                if let Some(forward) = step {
                    self.password_mode = cycle(&PasswordMode::ALL, &self.password_mode, forward);
                    if self.password_mode != PasswordMode::Change {
                        self.password.set("");
                    }
                    self.edited(stop);
                    return;
                }
            }
            Stop::Disabled | Stop::Public if toggle => {
                if stop == Stop::Disabled {
                    self.disabled = !self.disabled;
                } else {
                    self.public = !self.public;
                }
                self.edited(stop);
                return;
            }
            Stop::TargetType => {
                if let Some(forward) = step {
                    self.target = cycle(&TargetType::ALL, &self.target, forward);
                    self.edited(stop);
                    self.errors.clear(|name| Stop::Rules.owns(name));
                    return;
                }
                if let KeyCode::Char(c @ '0'..='3') = key.code {
                    self.target = TargetType::ALL[usize::from(c as u8 - b'0')];
                    self.edited(stop);
                    return;
                }
            }
            _ => {}
        }
        match (key.code, key.action) {
            (KeyCode::Enter | KeyCode::Down, _) | (_, Some(Action::Down)) => self.move_focus(true),
            (KeyCode::Up, _) | (_, Some(Action::Up)) => self.move_focus(false),
            _ => {}
        }
    }

    fn set_choice(&mut self, target: PickFor, id: Option<Id>) {
        match target {
            PickFor::Space => self.space = id,
            PickFor::Domain => self.domain = id,
        }
        self.edited(self.focus);
    }

    fn picker(&self, target: PickFor) -> ListPicker {
        let mut items = vec![Choice::new("", "none")];
        let (title, current) = match target {
            PickFor::Space => {
                items.extend(self.spaces.iter().map(|s| Choice {
                    value: s.id.to_string(),
                    label: s.name.clone(),
                    dot: Some(s.color),
                }));
                (" Space ", self.space)
            }
            PickFor::Domain => {
                items.extend(
                    self.domains
                        .iter()
                        .map(|d| Choice::new(d.id.to_string(), d.name.clone())),
                );
                (" Domain ", self.domain)
            }
        };
        let current = current.map(|i| i.to_string()).unwrap_or_default();
        ListPicker::new(title, items, Some(&current))
    }

    fn save(&mut self) -> FormOutcome {
        if let Some(rules) = self.active_rules_mut() {
            rules.commit();
        }
        let errors = self.check();
        if !errors.is_empty() {
            self.show_errors(&errors);
            return FormOutcome::Stay;
        }
        let input = self.request();
        match &self.original {
            Some(link) if input == LinkInput::default() => {
                tracing::debug!(id = link.id, "nothing to save");
                FormOutcome::Close
            }
            Some(link) => {
                self.saving = true;
                self.message = None;
                FormOutcome::Save(SaveRequest::UpdateLink(link.id, input))
            }
            None => {
                self.saving = true;
                self.message = None;
                FormOutcome::Save(SaveRequest::CreateLink(input))
            }
        }
    }

    /// Shows every error beside its field and moves to the first field that has one.
    fn show_errors(&mut self, errors: &FieldErrors) {
        self.errors = Errors::all(errors);
        let stops = self.stops();
        if let Some(first) = stops.iter().find(|s| self.errors.any(|name| s.owns(name))) {
            self.focus = *first;
        }
        if self.focus == Stop::Rules {
            let list = self.active_rules().map(RuleList::wire_name).unwrap_or("");
            let row = errors
                .iter()
                .filter_map(|(name, _)| name.strip_prefix(list)?.strip_prefix('.'))
                .filter_map(|rest| rest.split('.').next()?.parse::<usize>().ok())
                .min();
            if let (Some(row), Some(rules)) = (row, self.active_rules_mut()) {
                rules.focus_row(row);
            }
        }
        let count = self.errors.len();
        let unplaced: Vec<String> = self
            .errors
            .iter()
            .filter(|(name, _)| !stops.iter().any(|s| s.owns(name)))
            .map(|(name, message)| format!("{name}: {message}"))
            .collect();
        self.message = Some(if unplaced.is_empty() {
            format!(
                "Not saved: {count} field{} need{} attention",
                if count == 1 { "" } else { "s" },
                if count == 1 { "s" } else { "" }
            )
        } else {
            format!("Not saved: {}", unplaced.join("; "))
        });
    }

    pub fn save_failed(&mut self, error: &Error) {
        self.saving = false;
        match error {
            Error::Validation(errors) => self.show_errors(errors),
            other => self.message = Some(describe_failure(other)),
        }
    }

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
        let stop_line = |body: &mut Body,
                         stop: Stop,
                         name: &str,
                         value: Vec<Span<'static>>,
                         cursor: Option<u16>| {
            let focused = self.focus == stop && self.popup.is_none();
            let first = body.next();
            let mut spans = label(name, self.focus == stop, ctx);
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
                body.push(error_line(&messages.join("; "), value_x, width, ctx));
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
        stop_line(&mut body, Stop::Url, "destination URL", v, c);
        let (v, c) = text(
            Stop::Alias,
            &self.alias,
            if editing { "" } else { "blank = generated" },
        );
        stop_line(&mut body, Stop::Alias, "alias", v, c);
        let space = match self.space_name() {
            Some(s) => Span::styled(format!("● {}", s.name), t.space(s.color)),
            None => Span::styled("none", t.dim),
        };
        stop_line(
            &mut body,
            Stop::Space,
            "space",
            choice(Stop::Space, space),
            None,
        );
        let domain = match self.domain_name() {
            Some(d) => Span::raw(d.name.clone()),
            None => Span::styled("none (the profile's public URL)", t.dim),
        };
        if editing {
            let mut spans = label("domain", false, ctx);
            spans.push(domain);
            spans.push(Span::styled("  fixed once created", t.dim));
            body.push(Line::from(spans));
        } else {
            stop_line(
                &mut body,
                Stop::Domain,
                "domain",
                choice(Stop::Domain, domain),
                None,
            );
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
            stop_line(&mut body, Stop::PasswordMode, "password", spans, None);
            if self.password_mode == PasswordMode::Change {
                let (v, c) = text(Stop::Password, &self.password, "type the new password");
                stop_line(&mut body, Stop::Password, "new password", v, c);
            }
        } else {
            let (v, c) = text(Stop::Password, &self.password, "none");
            stop_line(&mut body, Stop::Password, "password", v, c);
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
            "disabled",
            switch(self.disabled, "visitors get a \"link disabled\" page"),
            None,
        );
        stop_line(
            &mut body,
            Stop::Public,
            "public statistics",
            switch(self.public, "anyone can read /alias/stats"),
            None,
        );

        body.blank();
        body.push(Line::from(vec![
            Span::styled("Expiry", t.header),
            Span::styled(format!("  times in {}", zone_name(&self.tz)), t.dim),
        ]));
        let (v, c) = text(Stop::Date, &self.date, "YYYY-MM-DD");
        stop_line(&mut body, Stop::Date, "date", v, c);
        let (v, c) = text(Stop::Time, &self.time, "HH:MM");
        stop_line(&mut body, Stop::Time, "time", v, c);
        let (v, c) = text(Stop::Clicks, &self.clicks, "blank or 0 = no limit");
        stop_line(&mut body, Stop::Clicks, "max clicks", v, c);
        let (v, c) = text(
            Stop::ExpirationUrl,
            &self.expiration_url,
            "blank = a \"link expired\" page",
        );
        stop_line(&mut body, Stop::ExpirationUrl, "URL after expiry", v, c);

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
        stop_line(&mut body, Stop::TargetType, "type", spans, None);
        if let Some(rules) = self.active_rules() {
            rules.render_into(
                &mut body,
                width,
                self.focus == Stop::Rules,
                &self.errors,
                ctx,
            );
        }
        body
    }

    fn hints(&self) -> Vec<(&'static str, &'static str)> {
        let picking = matches!(self.popup, Some(Popup::Pick(..)))
            || (self.focus == Stop::Rules
                && self.active_rules().and_then(RuleList::picker).is_some());
        if picking {
            return vec![("↑/↓", "move"), ("enter", "pick"), ("esc", "cancel")];
        }
        let mut hints = vec![("ctrl-s", "save"), ("esc", "cancel"), ("tab", "next")];
        match self.focus {
            Stop::Space | Stop::Domain => hints.push(("enter", "list  ←/→ change")),
            Stop::PasswordMode | Stop::TargetType => hints.push(("←/→", "change")),
            Stop::Disabled | Stop::Public => hints.push(("space", "toggle")),
            Stop::Rules => {
                if self.active_rules().is_some_and(RuleList::is_editing) {
                    hints = vec![("enter", "keep"), ("esc", "undo")];
                } else {
                    hints.extend([
                        ("a", "add"),
                        ("enter", "edit"),
                        ("del", "remove"),
                        ("K/J", "move"),
                    ]);
                }
            }
            _ => {}
        }
        hints
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) -> Option<Position> {
        let t = ctx.theme;
        let inner_width = area.width.saturating_sub(3);
        let body = self.body(inner_width, ctx);
        let title = match &self.original {
            Some(link) => format!(" Edit link {} ", clip(&link.alias, 40)),
            None => " New link ".to_owned(),
        };
        let message = if self.saving {
            Some(Line::styled(format!(" {} Saving…", ctx.spinner), t.accent))
        } else {
            self.message
                .as_ref()
                .map(|m| Line::styled(format!(" {m}"), t.error))
        };
        let hints = self.hints();
        let frame = Frame {
            title,
            message,
            hints: &hints,
        };
        let cursor = render_frame(area, buf, ctx, &frame, &body);
        match &self.popup {
            Some(Popup::Discard) => {
                render_discard(area, buf, ctx, "link");
                None
            }
            Some(Popup::Pick(_, picker)) => picker.render(area, buf, ctx),
            None => match self.active_rules().and_then(RuleList::picker) {
                Some(picker) if self.focus == Stop::Rules => picker.render(area, buf, ctx),
                _ => cursor,
            },
        }
    }
}

impl From<LinkForm> for Form {
    fn from(form: LinkForm) -> Form {
        Form::Link(Box::new(form))
    }
}

/// The next (or previous) of `items` after `current`, wrapping.
fn cycle<T: PartialEq + Clone>(items: &[T], current: &T, forward: bool) -> T {
    let at = items.iter().position(|i| i == current).unwrap_or(0);
    let n = items.len();
    let next = if forward {
        (at + 1) % n
    } else {
        (at + n - 1) % n
    };
    items[next].clone()
}

/// The zone's IANA name, or its offset when it has none.
fn zone_name(tz: &TimeZone) -> String {
    tz.iana_name()
        .map(str::to_owned)
        .unwrap_or_else(|| "UTC".to_owned())
}

#[cfg(test)]
pub(super) mod tests {
    use ratatui::crossterm::event::KeyModifiers;

    use super::*;
    use crate::tui::keys::KeyMap;

    /// A key as the app delivers it: with the action the default key map binds.
    pub fn press(code: KeyCode) -> Key {
        KeyMap::default().key(ratatui::crossterm::event::KeyEvent::new(
            code,
            KeyModifiers::NONE,
        ))
    }

    pub fn ctrl(c: char) -> Key {
        KeyMap::default().key(ratatui::crossterm::event::KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        ))
    }

    pub fn type_text(form: &mut LinkForm, text: &str) {
        for c in text.chars() {
            form.handle_key(press(KeyCode::Char(c)));
        }
    }

    fn tab(form: &mut LinkForm, times: usize) {
        for _ in 0..times {
            form.handle_key(press(KeyCode::Tab));
        }
    }

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").unwrap()
    }

    #[test]
    fn a_new_link_sends_only_what_was_filled() {
        let mut form = LinkForm::create(vec![], vec![], berlin());
        type_text(&mut form, "https://example.com/a");
        match form.handle_key(ctrl('s')) {
            FormOutcome::Save(SaveRequest::CreateLink(input)) => {
                assert_eq!(input, LinkInput::with_url("https://example.com/a"));
            }
            other => panic!("{other:?}"),
        }
        assert!(form.saving);
        // A second save while the first is in flight does nothing.
        assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
    }

    #[test]
    fn an_invalid_url_shows_its_error_when_left_and_keeps_the_text() {
        let mut form = LinkForm::create(vec![], vec![], berlin());
        type_text(&mut form, "javascript:alert(1)");
        assert!(form.errors.get("url").is_none());
        tab(&mut form, 1);
        assert!(form.errors.get("url").unwrap().contains("http"));
        assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
        assert_eq!(form.url.value(), "javascript:alert(1)");
        assert_eq!(form.focus, Stop::Url);
        assert!(form.message.as_deref().unwrap().contains("1 field needs"));
    }

    #[test]
    fn expiry_needs_date_and_time_together() {
        let mut form = LinkForm::create(vec![], vec![], berlin());
        type_text(&mut form, "https://example.com");
        form.focus = Stop::Date;
        type_text(&mut form, "2026-12-24");
        assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
        assert!(form.errors.get("expiration_time").is_some());
        assert_eq!(form.focus, Stop::Time);
        type_text(&mut form, "18:00");
        match form.handle_key(ctrl('s')) {
            FormOutcome::Save(SaveRequest::CreateLink(input)) => {
                assert_eq!(input.expiration_date.as_deref(), Some("2026-12-24"));
                assert_eq!(input.expiration_time.as_deref(), Some("18:00"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn esc_on_an_unchanged_form_closes_and_on_a_changed_one_asks() {
        let mut form = LinkForm::create(vec![], vec![], berlin());
        assert_eq!(form.handle_key(press(KeyCode::Esc)), FormOutcome::Close);
        type_text(&mut form, "h");
        assert_eq!(form.handle_key(press(KeyCode::Esc)), FormOutcome::Stay);
        assert!(matches!(form.popup, Some(Popup::Discard)));
        assert_eq!(
            form.handle_key(press(KeyCode::Char('n'))),
            FormOutcome::Stay
        );
        assert!(form.popup.is_none());
        assert_eq!(form.url.value(), "h");
        form.handle_key(press(KeyCode::Esc));
        assert_eq!(
            form.handle_key(press(KeyCode::Char('y'))),
            FormOutcome::Close
        );
    }

    #[test]
    fn a_server_422_lands_on_its_field_and_row() {
        let mut form = LinkForm::create(vec![], vec![], berlin());
        type_text(&mut form, "https://example.com");
        form.target = TargetType::Geo;
        form.geo = RuleList::with_rules(
            TargetType::Geo,
            &[
                crate::domain::TargetRule {
                    key: "US".into(),
                    value: "https://us.example.com".into(),
                },
                crate::domain::TargetRule {
                    key: "FR".into(),
                    value: "https://fr.example.com".into(),
                },
            ],
        );
        assert!(matches!(form.handle_key(ctrl('s')), FormOutcome::Save(_)));
        let mut errors = FieldErrors::default();
        errors.add("geo.1.value", "is not reachable");
        form.save_failed(&Error::Validation(errors));
        assert!(!form.saving);
        assert_eq!(form.focus, Stop::Rules);
        assert_eq!(
            form.errors.get("geo.1.value").as_deref(),
            Some("is not reachable")
        );
        assert_eq!(form.geo.rows().len(), 2);
    }

    fn protected_geo_link() -> Link {
        let at: jiff::Timestamp = "2026-11-22T12:00:00Z".parse().unwrap();
        Link {
            id: 4,
            alias: "promo".into(),
            url: "https://example.com/promo".into(),
            short_url: "http://127.0.0.1:8080/promo".into(),
            title: None,
            target_type: TargetType::Geo,
            geo: vec![crate::domain::TargetRule {
                key: "DE".into(),
                value: "https://example.de".into(),
            }],
            platform: vec![],
            rotation: vec![],
            last_rotation: 0,
            disabled: false,
            public: false,
            password: true,
            expiration_url: None,
            expiration_clicks: 10,
            clicks: 0,
            owner_id: 1,
            space: None,
            domain: None,
            ends_at: Some(at),
            created_at: at,
            updated_at: at,
        }
    }

    fn saved_update(form: &mut LinkForm) -> LinkInput {
        match form.handle_key(ctrl('s')) {
            FormOutcome::Save(SaveRequest::UpdateLink(4, input)) => input,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unchanged_edit_closes_without_sending() {
        let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
        assert!(!form.is_changed());
        assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Close);
    }

    #[test]
    fn removing_the_password_sends_an_empty_one_and_nothing_else() {
        let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
        form.focus = Stop::PasswordMode;
        form.handle_key(press(KeyCode::Left));
        assert_eq!(form.password_mode, PasswordMode::Remove);
        let input = saved_update(&mut form);
        assert_eq!(
            input,
            LinkInput {
                password: Some(String::new()),
                ..LinkInput::default()
            }
        );
    }

    #[test]
    fn changing_the_password_needs_the_new_one() {
        let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
        form.focus = Stop::PasswordMode;
        form.handle_key(press(KeyCode::Right));
        assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
        assert_eq!(form.focus, Stop::PasswordMode);
        form.handle_key(press(KeyCode::Tab));
        type_text(&mut form, "n3w");
        assert_eq!(saved_update(&mut form).password.as_deref(), Some("n3w"));
    }

    #[test]
    fn switching_targeting_off_sends_only_the_type() {
        let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
        form.focus = Stop::TargetType;
        form.handle_key(press(KeyCode::Left));
        let input = saved_update(&mut form);
        assert_eq!(
            input,
            LinkInput {
                target_type: Some("0".into()),
                ..LinkInput::default()
            }
        );
    }

    #[test]
    fn a_changed_rule_sends_the_type_and_the_whole_list() {
        let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
        form.focus = Stop::Rules;
        form.handle_key(press(KeyCode::Char('a')));
        type_text(&mut form, "austria");
        form.handle_key(press(KeyCode::Enter));
        type_text(&mut form, "https://example.at");
        form.handle_key(press(KeyCode::Enter));
        let input = saved_update(&mut form);
        assert_eq!(input.target_type.as_deref(), Some("1"));
        assert_eq!(
            input.geo,
            Some(vec![
                crate::domain::RuleInput::new("DE", "https://example.de"),
                crate::domain::RuleInput::new("AT", "https://example.at"),
            ])
        );
        assert_eq!(input.url, None);
        assert_eq!(input.expiration_date, None);
    }

    #[test]
    fn clearing_the_expiry_sends_both_halves_empty() {
        let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
        form.date.set("");
        form.time.set("");
        let input = saved_update(&mut form);
        assert_eq!(input.expiration_date.as_deref(), Some(""));
        assert_eq!(input.expiration_time.as_deref(), Some(""));
        assert_eq!(input.expiration_clicks, None);
    }

    #[test]
    fn a_new_link_starts_in_the_filtered_space_without_counting_as_a_change() {
        let at = jiff::Timestamp::UNIX_EPOCH;
        let docs = Space {
            id: 2,
            owner_id: 1,
            name: "Docs".into(),
            color: crate::domain::Color::new(5).unwrap(),
            links: None,
            created_at: at,
            updated_at: at,
        };
        let mut form = LinkForm::create(vec![docs], vec![], berlin()).in_space(Some(2));
        assert!(!form.is_changed());
        type_text(&mut form, "https://example.com");
        match form.handle_key(ctrl('s')) {
            FormOutcome::Save(SaveRequest::CreateLink(input)) => {
                assert_eq!(input.space.as_deref(), Some("2"))
            }
            other => panic!("{other:?}"),
        }
    }
}
