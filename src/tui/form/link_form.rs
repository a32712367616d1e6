//! The link form: every field of a link in sections (basics, protection, expiry, targeting,
//! redirect rules, visitors). It knows the link it edits, so a save sends only what changed.
//! Drawing is in `link_form/render.rs`.

mod render;

use jiff::tz::TimeZone;
use ratatui::crossterm::event::KeyCode;

use super::field::TextField;
use super::picker::{Choice, ListPicker, PickOutcome};
use super::rules::{RuleList, RuleOutcome};
use super::{Errors, Form, FormOutcome, SaveRequest, discard_answer};
use crate::domain::{
    Domain, Error, FieldErrors, Id, Link, LinkField, LinkInput, LinkOptions, Mode, Space,
    TAG_SEPARATOR, TargetType, format_expiry_input, tags_text, validate_link_input,
};
use crate::tui::errors::{Failed, describe};
use crate::tui::keys::{Action, Key};

/// The places focus stops, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Url,
    Alias,
    Space,
    Tags,
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
    /// The redirect rules' table.
    RedirectRules,
    /// The three switches of a link's options on one line; ←/→ pick one, space flips it.
    Redirect,
    PreviewTitle,
    PreviewDescription,
    PreviewImage,
}

/// The switches of [`Stop::Redirect`], in their order on the line.
const SWITCHES: [LinkField; 3] = [
    LinkField::ForwardQuery,
    LinkField::ForwardPath,
    LinkField::AllowIndexing,
];

impl Stop {
    /// The link field the stop edits; `None` for the targeting rules, whose list follows the
    /// targeting type.
    fn field(self) -> Option<LinkField> {
        Some(match self {
            Stop::Url => LinkField::Url,
            Stop::Alias => LinkField::Alias,
            Stop::Space => LinkField::Space,
            Stop::Tags => LinkField::Tags,
            Stop::Domain => LinkField::Domain,
            Stop::PasswordMode | Stop::Password => LinkField::Password,
            Stop::Disabled => LinkField::Disabled,
            Stop::Public => LinkField::Public,
            Stop::Date => LinkField::ExpirationDate,
            Stop::Time => LinkField::ExpirationTime,
            Stop::Clicks => LinkField::ExpirationClicks,
            Stop::ExpirationUrl => LinkField::ExpirationUrl,
            Stop::TargetType => LinkField::TargetType,
            // The line's label; its errors are each switch's (see `owns`).
            Stop::Redirect => LinkField::ForwardQuery,
            Stop::PreviewTitle => LinkField::PreviewTitle,
            Stop::PreviewDescription => LinkField::PreviewDescription,
            Stop::PreviewImage => LinkField::PreviewImage,
            Stop::RedirectRules => LinkField::Rules,
            Stop::Rules => return None,
        })
    }

    /// The label drawn beside the stop.
    fn label(self) -> &'static str {
        match self {
            Stop::Redirect => "redirect",
            Stop::PreviewTitle => "card title",
            Stop::PreviewDescription => "card text",
            Stop::PreviewImage => "card image",
            _ => self.field().map_or("", LinkField::label),
        }
    }

    /// Whether an error of wire field `name` belongs beside this stop.
    fn owns(self, name: &str) -> bool {
        let Some(owner) = LinkField::owning(name) else {
            return false;
        };
        match self.field() {
            _ if self == Stop::Redirect => SWITCHES.contains(&owner),
            Some(field) => field == owner,
            None => owner.is_target_list(),
        }
    }

    fn is_text(self) -> bool {
        matches!(
            self,
            Stop::Url
                | Stop::Alias
                | Stop::Tags
                | Stop::Password
                | Stop::Date
                | Stop::Time
                | Stop::Clicks
                | Stop::ExpirationUrl
                | Stop::PreviewTitle
                | Stop::PreviewDescription
                | Stop::PreviewImage
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
    /// "Discard your changes?"; `quit` when the answer also ends the app (ctrl-c).
    Discard {
        quit: bool,
    },
}

/// The form's state: the fields being typed (one [`TextField`] or choice each; each stop names
/// its [`LinkField`]), what the form was opened with, and what is shown around them.
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
    /// Tags separated by commas, as typed.
    tags: TextField,
    /// The owner's tags, most used first: what a tag being typed is completed from.
    known_tags: Vec<String>,
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
    /// The link's switches (forwarding, indexing); its preview's texts are the fields below.
    options: LinkOptions,
    /// Which of [`SWITCHES`] the redirect line's cursor is on.
    switch_at: usize,
    preview_title: TextField,
    preview_description: TextField,
    preview_image: TextField,
    geo: RuleList,
    platform: RuleList,
    rotation: RuleList,
    /// The link's redirect rules.
    redirect: RuleList,
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
            tags: TextField::default(),
            known_tags: Vec::new(),
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
            options: LinkOptions::default(),
            switch_at: 0,
            preview_title: TextField::default(),
            preview_description: TextField::default(),
            preview_image: TextField::default(),
            geo: RuleList::new(TargetType::Geo),
            platform: RuleList::new(TargetType::Platform),
            rotation: RuleList::new(TargetType::Rotation),
            redirect: RuleList::redirect(&[]),
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
        form.tags = TextField::new(tags_text(&link.tags));
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
        let text = |t: &Option<String>| TextField::new(t.clone().unwrap_or_default());
        form.preview_title = text(&link.options.preview_title);
        form.preview_description = text(&link.options.preview_description);
        form.preview_image = text(&link.options.preview_image);
        form.options = link.options.clone();
        form.geo = RuleList::with_rules(TargetType::Geo, &link.geo);
        form.platform = RuleList::with_rules(TargetType::Platform, &link.platform);
        form.rotation = RuleList::with_urls(&link.rotation);
        form.redirect = RuleList::redirect(&link.options.rules);
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

    /// The owner's tags, most used first, to complete a tag being typed from.
    pub fn with_known_tags(mut self, tags: Vec<String>) -> LinkForm {
        self.known_tags = tags;
        self
    }

    /// The rest of the first known tag that the tag being typed (after the last comma) begins,
    /// and is not on the link yet.
    fn tag_completion(&self) -> Option<String> {
        let typed = self.tags.value();
        let (before, last) = typed.rsplit_once(TAG_SEPARATOR).unwrap_or(("", typed));
        let last = last.trim_start().to_lowercase();
        if last.is_empty() || !self.tags.at_end() {
            return None;
        }
        let given: Vec<String> = before
            .split(TAG_SEPARATOR)
            .map(|t| t.trim().to_lowercase())
            .collect();
        self.known_tags
            .iter()
            .find(|t| t.starts_with(&last) && t.len() > last.len() && !given.contains(t))
            .map(|t| t[last.len()..].to_owned())
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

    /// The table the focus is on: the targeting rules or the redirect rules.
    fn focused_list(&self) -> Option<&RuleList> {
        match self.focus {
            Stop::Rules => self.active_rules(),
            Stop::RedirectRules => Some(&self.redirect),
            _ => None,
        }
    }

    fn focused_list_mut(&mut self) -> Option<&mut RuleList> {
        match self.focus {
            Stop::Rules => self.active_rules_mut(),
            Stop::RedirectRules => Some(&mut self.redirect),
            _ => None,
        }
    }

    /// The stops in order, for this form's mode and choices.
    fn stops(&self) -> Vec<Stop> {
        let editing = self.original.is_some();
        let mut stops = vec![Stop::Url, Stop::Alias, Stop::Space, Stop::Tags];
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
        stops.extend([
            Stop::RedirectRules,
            Stop::Redirect,
            Stop::PreviewTitle,
            Stop::PreviewDescription,
            Stop::PreviewImage,
        ]);
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
            tags: Some(self.tags.value().to_owned()),
            forward_query: flag(self.options.forward_query),
            forward_path: flag(self.options.forward_path),
            allow_indexing: flag(self.options.allow_indexing),
            preview_title: Some(self.preview_title.value().to_owned()),
            preview_description: Some(self.preview_description.value().to_owned()),
            preview_image: Some(self.preview_image.value().to_owned()),
            rules: Some(self.redirect.rule_texts()),
        }
    }

    /// Whether switch `field` is on.
    fn switch(&self, field: LinkField) -> bool {
        let o = &self.options;
        match field {
            LinkField::ForwardQuery => o.forward_query,
            LinkField::ForwardPath => o.forward_path,
            _ => o.allow_indexing,
        }
    }

    /// The label beside `stop`: a password being changed is the new one.
    fn stop_label(&self, stop: Stop) -> &'static str {
        if stop == Stop::Password
            && self.had_password()
            && self.password_mode == PasswordMode::Change
        {
            "new password"
        } else {
            stop.label()
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
                input.tags = filled(&now.tags);
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
                input.rules = now.rules.clone().filter(|rules| !rules.is_empty());
                // The options away from their defaults.
                for (((_, slot), (_, value)), (_, default)) in input
                    .options_mut()
                    .into_iter()
                    .zip(now.options())
                    .zip(LinkOptions::default().input_fields())
                {
                    *slot = changed(value, &Some(default));
                }
            }
            Some(_) => {
                input.url = changed(&now.url, &was.url);
                input.alias = changed(&now.alias, &was.alias);
                input.space = changed(&now.space, &was.space);
                input.tags = changed(&now.tags, &was.tags);
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
                for (((_, slot), (_, value)), (_, was)) in input
                    .options_mut()
                    .into_iter()
                    .zip(now.options())
                    .zip(was.options())
                {
                    *slot = changed(value, was);
                }
                if now.rules != was.rules {
                    input.rules = now.rules.clone();
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
            Stop::Rules | Stop::RedirectRules => {
                self.focused_list_mut().is_some_and(|r| r.paste(text))
            }
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
            Stop::Tags => &mut self.tags,
            Stop::Password => &mut self.password,
            Stop::Date => &mut self.date,
            Stop::Time => &mut self.time,
            Stop::Clicks => &mut self.clicks,
            Stop::ExpirationUrl => &mut self.expiration_url,
            Stop::PreviewTitle => &mut self.preview_title,
            Stop::PreviewDescription => &mut self.preview_description,
            Stop::PreviewImage => &mut self.preview_image,
            _ => return None,
        })
    }

    pub fn handle_key(&mut self, key: Key) -> FormOutcome {
        if self.saving {
            // One request at a time; the answer reopens the form for editing or closes it.
            return FormOutcome::Stay;
        }
        match self.popup.take() {
            Some(Popup::Discard { quit }) => {
                return match discard_answer(&key) {
                    Some(true) if quit => FormOutcome::Quit,
                    Some(true) => FormOutcome::Close,
                    Some(false) => FormOutcome::Stay,
                    None => {
                        self.popup = Some(Popup::Discard { quit });
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
        // A character typed into a text field is text, whatever it is bound to.
        let action = if self.focus.is_text() && key.is_text() {
            None
        } else {
            key.action
        };
        if action == Some(Action::Submit) {
            return self.save();
        }
        if self.focused_list().is_some_and(RuleList::is_editing) {
            self.rules_key(&key);
            return FormOutcome::Stay;
        }
        match action {
            Some(Action::Cancel) => {
                return if self.is_changed() {
                    self.popup = Some(Popup::Discard { quit: false });
                    FormOutcome::Stay
                } else {
                    FormOutcome::Close
                };
            }
            Some(Action::NextField) => {
                self.cycle_focus(true);
                return FormOutcome::Stay;
            }
            Some(Action::PrevField) => {
                self.cycle_focus(false);
                return FormOutcome::Stay;
            }
            _ => {}
        }
        let stop = self.focus;
        // `a` on the targeting type adds a rule, as the empty list says.
        if stop == Stop::TargetType
            && action == Some(Action::AddRow)
            && self.target != TargetType::None
        {
            self.focus_on(Stop::Rules);
            self.rules_key(&key);
            return FormOutcome::Stay;
        }
        if stop == Stop::Tags
            && key.code == KeyCode::Right
            && let Some(rest) = self.tag_completion()
        {
            let whole = format!("{}{rest}", self.tags.value());
            self.tags.set(whole);
            self.edited(stop);
            return FormOutcome::Stay;
        }
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
        if matches!(stop, Stop::Rules | Stop::RedirectRules) {
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
        let stop = self.focus;
        let Some(rules) = self.focused_list_mut() else {
            return RuleOutcome::Ignored;
        };
        let outcome = rules.handle_key(key);
        let editing = rules.is_editing();
        if outcome == RuleOutcome::Changed {
            self.message = None;
            // A finished cell shows its verdict at once, like a field that was left.
            if !editing {
                let fresh = self.check();
                self.errors.refresh(&fresh, |name| stop.owns(name));
            }
        }
        outcome
    }

    /// Keys on the stops that are not typed into: pickers, switches, the targeting type.
    fn choice_key(&mut self, stop: Stop, key: &Key) {
        let toggle = key.action == Some(Action::Toggle) || key.code == KeyCode::Enter;
        let step = match key.code {
            KeyCode::Left | KeyCode::Char('h') => Some(false),
            KeyCode::Right | KeyCode::Char('l') => Some(true),
            _ if key.action == Some(Action::Toggle) => Some(true),
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
                    _ if toggle => {
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
            Stop::Redirect => {
                let flip = key.action == Some(Action::Toggle) || key.code == KeyCode::Enter;
                if flip {
                    let o = &mut self.options;
                    let on = match SWITCHES[self.switch_at] {
                        LinkField::ForwardQuery => &mut o.forward_query,
                        LinkField::ForwardPath => &mut o.forward_path,
                        _ => &mut o.allow_indexing,
                    };
                    *on = !*on;
                    self.edited(stop);
                    return;
                }
                if let Some(forward) = step {
                    let n = SWITCHES.len();
                    self.switch_at = (self.switch_at + if forward { 1 } else { n - 1 }) % n;
                    return;
                }
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
        self.redirect.commit();
        let errors = self.check();
        if !errors.is_empty() {
            self.show_errors(&errors);
            return FormOutcome::Stay;
        }
        let input = self.request();
        let request = match &self.original {
            Some(link) if input == LinkInput::default() => {
                tracing::debug!(id = link.id, "nothing to save");
                return FormOutcome::Close;
            }
            Some(link) => SaveRequest::UpdateLink(link.id, input),
            None => SaveRequest::CreateLink(input),
        };
        self.saving = true;
        self.message = None;
        FormOutcome::Save(request)
    }

    /// Shows every error beside its field and moves to the first field that has one.
    fn show_errors(&mut self, errors: &FieldErrors) {
        self.errors = Errors::all(errors);
        let stops = self.stops();
        if let Some(first) = stops.iter().find(|s| self.errors.any(|name| s.owns(name))) {
            self.focus = *first;
        }
        if let Some(list) = self.focused_list().map(RuleList::wire_name) {
            let row = errors
                .iter()
                .filter_map(|(name, _)| name.strip_prefix(list)?.strip_prefix('.'))
                .filter_map(|rest| rest.split('.').next()?.parse::<usize>().ok())
                .min();
            if let (Some(row), Some(rules)) = (row, self.focused_list_mut()) {
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

    /// The link being edited, if any.
    pub fn original(&self) -> Option<&Link> {
        self.original.as_ref()
    }

    /// The zone expiry is typed in.
    pub fn zone(&self) -> &TimeZone {
        &self.tz
    }

    /// ctrl-c: true when the app may quit now; with unsaved changes, asks first (answering
    /// yes then quits).
    pub fn quit_requested(&mut self) -> bool {
        if self.is_changed() && !self.saving {
            self.popup = Some(Popup::Discard { quit: true });
            false
        } else {
            true
        }
    }

    /// Whether keys should be read as a dialog's (the discard question is open).
    pub fn asks(&self) -> bool {
        matches!(self.popup, Some(Popup::Discard { .. }))
    }

    pub fn save_failed(&mut self, error: &Error) {
        self.saving = false;
        match error {
            Error::Validation(errors) => self.show_errors(errors),
            other => self.message = Some(describe(other, Failed::Save)),
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

#[cfg(test)]
pub(super) mod tests;
