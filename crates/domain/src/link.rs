use std::fmt;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use super::link_options::{preview_image, preview_text};
use super::validate::{PASSWORD_MAX, validate_alias, validate_url};
use super::{
    Domain, FieldErrors, Id, LinkField, LinkOptions, Mode, OptionsPatch, PREVIEW_DESCRIPTION_MAX,
    PREVIEW_TITLE_MAX, Platform, Space, StatusFilter, country_by_code, parse_expiry,
};

/// A short link as every backend returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub id: Id,
    pub alias: String,
    pub url: String,
    pub short_url: String,
    pub title: Option<String>,
    pub target_type: TargetType,
    /// Country → URL rules (keys are upper-case ISO 3166-1 alpha-2 codes).
    pub geo: Vec<TargetRule>,
    /// Platform → URL rules (keys are canonical [`Platform`] names).
    pub platform: Vec<TargetRule>,
    /// URLs visited in turn.
    pub rotation: Vec<String>,
    pub last_rotation: u32,
    pub disabled: bool,
    pub public: bool,
    /// Whether a password protects the link; the password itself is never returned.
    pub password: bool,
    pub expiration_url: Option<String>,
    /// Clicks after which the link expires; 0 means no limit.
    pub expiration_clicks: u32,
    pub clicks: u64,
    pub owner_id: Id,
    pub space: Option<Space>,
    pub domain: Option<Domain>,
    pub ends_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Its tags as stored (see [`super::tag`]): sorted, each once. Absent from a server that
    /// has none.
    #[serde(default)]
    pub tags: Vec<String>,
    /// What it does with what the visitor brings, and its preview card (defaults from a server
    /// that has none).
    #[serde(default, flatten)]
    pub options: LinkOptions,
    /// Times preview agents fetched it (counted apart from clicks).
    #[serde(default)]
    pub previews: u64,
}

impl Link {
    /// Its clicks as lists show them: `1,204`, or `432/2,000` (counted of allowed) when a click
    /// limit ends it. One form in the app and the CLI.
    pub fn clicks_shown(&self) -> String {
        if self.expiration_clicks > 0 {
            format!(
                "{}/{}",
                super::thousands(self.clicks),
                super::thousands(u64::from(self.expiration_clicks))
            )
        } else {
            super::thousands(self.clicks)
        }
    }

    /// The status derived at `now`.
    pub fn status(&self, now: Timestamp) -> LinkStatus {
        LinkStatus::derive(
            self.disabled,
            self.ends_at,
            self.expiration_clicks,
            self.clicks,
            now,
        )
    }

    /// The rules of the active targeting type, as `(key, url)` pairs (rotation has no key).
    pub fn active_rules(&self) -> Vec<(Option<&str>, &str)> {
        match self.target_type {
            TargetType::None => Vec::new(),
            TargetType::Geo => self
                .geo
                .iter()
                .map(|r| (Some(r.key.as_str()), r.value.as_str()))
                .collect(),
            TargetType::Platform => self
                .platform
                .iter()
                .map(|r| (Some(r.key.as_str()), r.value.as_str()))
                .collect(),
            TargetType::Rotation => self.rotation.iter().map(|u| (None, u.as_str())).collect(),
        }
    }
}

#[cfg(any(test, feature = "testing"))]
impl Link {
    /// A plain link for tests: `a` to https://example.com, created 2030-01-01, never clicked.
    pub fn example() -> Link {
        let created: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        Link {
            id: 1,
            alias: "a".into(),
            url: "https://example.com".into(),
            short_url: "http://s/a".into(),
            title: None,
            target_type: TargetType::None,
            geo: Vec::new(),
            platform: Vec::new(),
            rotation: Vec::new(),
            last_rotation: 0,
            disabled: false,
            public: false,
            password: false,
            expiration_url: None,
            expiration_clicks: 0,
            clicks: 0,
            owner_id: 1,
            space: None,
            domain: None,
            ends_at: None,
            created_at: created,
            updated_at: created,
            tags: Vec::new(),
            options: LinkOptions::default(),
            previews: 0,
        }
    }
}

/// A link's status is derived, never stored: a link can be expired and disabled at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkStatus {
    pub expired: bool,
    pub disabled: bool,
}

impl LinkStatus {
    /// The status rule, once for the whole program: a link is expired when its end instant has
    /// come ([`LinkStatus::expired_by_date`]) or its click limit is reached
    /// ([`LinkStatus::click_limit_reached`]), and disabled when its owner says so. The server,
    /// the CLI and the app ask this function; the embedded store's SQL filters and partial
    /// indexes restate it in SQL and are what to test against it.
    pub fn derive(
        disabled: bool,
        ends_at: Option<Timestamp>,
        expiration_clicks: u32,
        clicks: u64,
        now: Timestamp,
    ) -> Self {
        LinkStatus {
            expired: Self::expired_by_date(ends_at, now)
                || Self::click_limit_reached(expiration_clicks, clicks),
            disabled,
        }
    }

    /// Whether a link ending at `ends_at` has ended at `now`: the end instant itself is already
    /// past, so a link set to end at 12:00 answers its last visit at 11:59:59.
    pub fn expired_by_date(ends_at: Option<Timestamp>, now: Timestamp) -> bool {
        ends_at.is_some_and(|end| end <= now)
    }

    /// Whether a link limited to `expiration_clicks` (0: no limit) has used them up after
    /// `clicks`: the limit-th click is the last one counted.
    pub fn click_limit_reached(expiration_clicks: u32, clicks: u64) -> bool {
        expiration_clicks > 0 && clicks >= u64::from(expiration_clicks)
    }

    pub fn is_active(self) -> bool {
        !self.expired && !self.disabled
    }

    /// The one status shown where there is room for one (tables, the CLI's `status` field):
    /// disabled wins over expired, as it is the operator's own choice.
    pub fn shown(self) -> StatusFilter {
        match (self.disabled, self.expired) {
            (true, _) => StatusFilter::Disabled,
            (false, true) => StatusFilter::Expired,
            (false, false) => StatusFilter::Active,
        }
    }

    /// The word for [`LinkStatus::shown`]: `active`, `expired` or `disabled`.
    pub fn label(self) -> &'static str {
        self.shown().label()
    }
}

impl fmt::Display for LinkStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum TargetType {
    #[default]
    None,
    Geo,
    Platform,
    Rotation,
}

impl TargetType {
    pub const ALL: [TargetType; 4] = [
        TargetType::None,
        TargetType::Geo,
        TargetType::Platform,
        TargetType::Rotation,
    ];

    pub fn label(self) -> &'static str {
        match self {
            TargetType::None => "none",
            TargetType::Geo => "geo",
            TargetType::Platform => "platform",
            TargetType::Rotation => "rotation",
        }
    }

    /// Accepts the wire number (0–3) or the label.
    pub fn parse(s: &str) -> Option<TargetType> {
        let s = s.trim();
        Self::ALL
            .into_iter()
            .find(|t| s == u8::from(*t).to_string() || t.label().eq_ignore_ascii_case(s))
    }
}

impl From<TargetType> for u8 {
    fn from(t: TargetType) -> u8 {
        t as u8
    }
}

impl TryFrom<u8> for TargetType {
    type Error = String;
    fn try_from(n: u8) -> Result<Self, String> {
        TargetType::ALL
            .get(usize::from(n))
            .copied()
            .ok_or_else(|| format!("target type {n} is not 0-3"))
    }
}

/// One targeting rule: a country code or platform name, and the URL it leads to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetRule {
    pub key: String,
    pub value: String,
}

/// A create or update request as typed by a person or sent on the wire: every field is the raw
/// text, `None` when absent. [`validate_link_input`] turns it into a typed [`LinkPatch`] or the
/// complete list of field errors. Field names are the wire names, so this struct is also the
/// form body (`geo[0][key]=US`).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Empty on update removes the password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// A space id; empty for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<String>,
    /// A domain id; empty for none. Only on create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_clicks: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geo: Option<Vec<RuleInput>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<Vec<RuleInput>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<Vec<RuleInput>>,
    /// Tags separated by commas (`promo, q4`); empty removes every tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// The options ([`LinkOptions`]): flags as 0 or 1, texts empty to clear.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_indexing: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_image: Option<String>,
    /// Redirect rules in their text form ([`super::parse_rule`]), in order; empty removes
    /// them all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<String>>,
}

impl fmt::Debug for LinkInput {
    // The password is never printed, not even in debug logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkInput")
            .field("url", &self.url)
            .field("alias", &self.alias)
            .field(
                "password",
                &self
                    .password
                    .as_ref()
                    .map(|p| if p.is_empty() { "" } else { "***" }),
            )
            .field("space", &self.space)
            .field("domain", &self.domain)
            .field("disabled", &self.disabled)
            .field("public", &self.public)
            .field("expiration_url", &self.expiration_url)
            .field("expiration_date", &self.expiration_date)
            .field("expiration_time", &self.expiration_time)
            .field("expiration_clicks", &self.expiration_clicks)
            .field("target_type", &self.target_type)
            .field("geo", &self.geo)
            .field("platform", &self.platform)
            .field("rotation", &self.rotation)
            .field("tags", &self.tags)
            .field("forward_query", &self.forward_query)
            .field("forward_path", &self.forward_path)
            .field("allow_indexing", &self.allow_indexing)
            .field("preview_title", &self.preview_title)
            .field("preview_description", &self.preview_description)
            .field("preview_image", &self.preview_image)
            .field("rules", &self.rules)
            .finish()
    }
}

/// One row of a targeting list as typed; rotation rows carry only a value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl RuleInput {
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        RuleInput {
            key: Some(key.into()),
            value: Some(value.into()),
        }
    }

    pub fn value(value: impl Into<String>) -> Self {
        RuleInput {
            key: None,
            value: Some(value.into()),
        }
    }

    fn is_blank(&self) -> bool {
        self.key.as_deref().is_none_or(|k| k.trim().is_empty())
            && self.value.as_deref().is_none_or(|v| v.trim().is_empty())
    }
}

impl LinkInput {
    /// The targeting lists, each with its field.
    pub fn lists(&self) -> [(LinkField, &Option<Vec<RuleInput>>); 3] {
        [
            (LinkField::Geo, &self.geo),
            (LinkField::Platform, &self.platform),
            (LinkField::Rotation, &self.rotation),
        ]
    }

    pub fn lists_mut(&mut self) -> [(LinkField, &mut Option<Vec<RuleInput>>); 3] {
        [
            (LinkField::Geo, &mut self.geo),
            (LinkField::Platform, &mut self.platform),
            (LinkField::Rotation, &mut self.rotation),
        ]
    }

    /// The option fields, each with its field.
    pub fn options(&self) -> [(LinkField, &Option<String>); 6] {
        [
            (LinkField::ForwardQuery, &self.forward_query),
            (LinkField::ForwardPath, &self.forward_path),
            (LinkField::AllowIndexing, &self.allow_indexing),
            (LinkField::PreviewTitle, &self.preview_title),
            (LinkField::PreviewDescription, &self.preview_description),
            (LinkField::PreviewImage, &self.preview_image),
        ]
    }

    pub fn options_mut(&mut self) -> [(LinkField, &mut Option<String>); 6] {
        [
            (LinkField::ForwardQuery, &mut self.forward_query),
            (LinkField::ForwardPath, &mut self.forward_path),
            (LinkField::AllowIndexing, &mut self.allow_indexing),
            (LinkField::PreviewTitle, &mut self.preview_title),
            (LinkField::PreviewDescription, &mut self.preview_description),
            (LinkField::PreviewImage, &mut self.preview_image),
        ]
    }

    /// The options this request sets away from their defaults (a value the rules refuse
    /// counts as set: the server would have to say why).
    pub fn options_set(&self) -> Vec<LinkField> {
        let mut options = LinkInput::default();
        for ((_, slot), (_, value)) in options.options_mut().into_iter().zip(self.options()) {
            slot.clone_from(value);
        }
        options.rules.clone_from(&self.rules);
        match validate_link_input(&options, Mode::Update, &TimeZone::UTC) {
            Ok(patch) => {
                let mut set = LinkOptions::default();
                patch.options.apply(&mut set);
                set.set_fields()
            }
            Err(errors) => LinkField::OPTIONS
                .into_iter()
                .chain([LinkField::Rules])
                .filter(|f| errors.contains(f.name()))
                .collect(),
        }
    }

    /// Takes every option field out; whether one of them set an option (see
    /// [`LinkInput::options_set`]).
    pub fn take_options(&mut self) -> bool {
        let set = !self.options_set().is_empty();
        for (_, slot) in self.options_mut() {
            *slot = None;
        }
        self.rules = None;
        set
    }

    /// Sets the option fields `options` has away from the defaults, as typed (a request that
    /// makes a link with those options again, and names nothing a server may lack needlessly).
    pub fn set_options(&mut self, options: &LinkOptions) {
        let set = options.set_fields();
        for ((field, slot), (_, value)) in
            self.options_mut().into_iter().zip(options.input_fields())
        {
            if set.contains(&field) {
                *slot = Some(value);
            }
        }
        if !options.rules.is_empty() {
            self.rules = Some(options.rules.iter().map(ToString::to_string).collect());
        }
    }

    /// Sets each option field `request` names to its value in `options`: what puts back the
    /// options an edit changed.
    pub fn restore_options(&mut self, request: &LinkInput, options: &LinkOptions) {
        let given = request.options().map(|(_, v)| v.is_some());
        for ((given, (_, slot)), (_, value)) in given
            .into_iter()
            .zip(self.options_mut())
            .zip(options.input_fields())
        {
            if given {
                *slot = Some(value);
            }
        }
        if request.rules.is_some() {
            self.rules = Some(options.rules.iter().map(ToString::to_string).collect());
        }
    }

    /// A create request for `url`.
    pub fn with_url(url: impl Into<String>) -> Self {
        LinkInput {
            url: Some(url.into()),
            ..Default::default()
        }
    }
}

/// A validated change to a link. `None` leaves a field as it is; for clearable fields
/// `Some(None)` clears it.
#[derive(Clone, Default, PartialEq)]
pub struct LinkPatch {
    pub url: Option<String>,
    /// On create, `None` asks for a generated alias.
    pub alias: Option<String>,
    /// `Some(None)` removes the password. The plain text lives here only until it is hashed.
    pub password: Option<Option<String>>,
    pub space: Option<Option<Id>>,
    pub domain: Option<Option<Id>>,
    pub disabled: Option<bool>,
    pub public: Option<bool>,
    pub expiration_url: Option<Option<String>>,
    pub ends_at: Option<Option<Timestamp>>,
    pub expiration_clicks: Option<u32>,
    pub target_type: Option<TargetType>,
    pub geo: Option<Vec<TargetRule>>,
    pub platform: Option<Vec<TargetRule>>,
    pub rotation: Option<Vec<String>>,
    /// The link's whole set of tags, as stored.
    pub tags: Option<Vec<String>>,
    pub options: OptionsPatch,
}

impl fmt::Debug for LinkPatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkPatch")
            .field("url", &self.url)
            .field("alias", &self.alias)
            .field(
                "password",
                &self.password.as_ref().map(|p| p.as_ref().map(|_| "***")),
            )
            .field("space", &self.space)
            .field("domain", &self.domain)
            .field("disabled", &self.disabled)
            .field("public", &self.public)
            .field("expiration_url", &self.expiration_url)
            .field("ends_at", &self.ends_at)
            .field("expiration_clicks", &self.expiration_clicks)
            .field("target_type", &self.target_type)
            .field("geo", &self.geo)
            .field("platform", &self.platform)
            .field("rotation", &self.rotation)
            .field("tags", &self.tags)
            .field("options", &self.options)
            .finish()
    }
}

pub const EXPIRATION_CLICKS_MAX: u32 = 999_999_999;

/// Checks every field of `input` against every rule that needs no stored state, reading
/// expiry in `tz`. Returns the typed patch, or every field error at once. Rules that need stored
/// state (alias uniqueness, space and domain ownership) are the backend's.
pub fn validate_link_input(
    input: &LinkInput,
    mode: Mode,
    tz: &TimeZone,
) -> Result<LinkPatch, FieldErrors> {
    let mut errors = FieldErrors::default();
    let mut patch = LinkPatch::default();

    match input.url.as_deref().map(str::trim) {
        Some(url) => match validate_url(url) {
            Ok(()) => patch.url = Some(url.to_owned()),
            Err(message) => errors.add(LinkField::Url.name(), message),
        },
        None if mode == Mode::Create => errors.add(LinkField::Url.name(), "is required"),
        None => {}
    }

    if let Some(alias) = input
        .alias
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        match validate_alias(alias) {
            Ok(()) => patch.alias = Some(alias.to_owned()),
            Err(message) => errors.add(LinkField::Alias.name(), message),
        }
    }

    if let Some(password) = &input.password {
        if password.chars().count() > PASSWORD_MAX {
            errors.add(
                LinkField::Password.name(),
                format!("must be at most {PASSWORD_MAX} characters"),
            );
        } else if password.is_empty() {
            // Nothing to remove on create.
            if mode == Mode::Update {
                patch.password = Some(None);
            }
        } else {
            patch.password = Some(Some(password.clone()));
        }
    }

    patch.space = optional_id(input.space.as_deref(), LinkField::Space.name(), &mut errors);
    if let Some(domain) = input.domain.as_deref() {
        if mode == Mode::Update {
            errors.add(
                LinkField::Domain.name(),
                "cannot be changed once the link is created",
            );
        } else {
            patch.domain = optional_id(Some(domain), LinkField::Domain.name(), &mut errors);
        }
    }
    patch.disabled = flag(
        input.disabled.as_deref(),
        LinkField::Disabled.name(),
        &mut errors,
    );
    patch.public = flag(
        input.public.as_deref(),
        LinkField::Public.name(),
        &mut errors,
    );

    if let Some(url) = input.expiration_url.as_deref().map(str::trim) {
        if url.is_empty() {
            patch.expiration_url = Some(None);
        } else {
            match validate_url(url) {
                Ok(()) => patch.expiration_url = Some(Some(url.to_owned())),
                Err(message) => errors.add(LinkField::ExpirationUrl.name(), message),
            }
        }
    }

    match (
        input.expiration_date.as_deref(),
        input.expiration_time.as_deref(),
    ) {
        (None, None) => {}
        (date, time) => {
            patch.ends_at = parse_expiry(date.unwrap_or(""), time.unwrap_or(""), tz, &mut errors);
        }
    }

    if let Some(clicks) = input.expiration_clicks.as_deref().map(str::trim) {
        if clicks.is_empty() {
            patch.expiration_clicks = Some(0);
        } else {
            match clicks.parse::<u32>() {
                Ok(n) if n <= EXPIRATION_CLICKS_MAX => patch.expiration_clicks = Some(n),
                _ => errors.add(
                    LinkField::ExpirationClicks.name(),
                    format!("must be a whole number from 0 to {EXPIRATION_CLICKS_MAX}"),
                ),
            }
        }
    }

    if let Some(t) = input.target_type.as_deref().map(str::trim) {
        if t.is_empty() {
            patch.target_type = Some(TargetType::None);
        } else {
            match TargetType::parse(t) {
                Some(t) => patch.target_type = Some(t),
                None => errors.add(
                    LinkField::TargetType.name(),
                    "must be 0 (none), 1 (geo), 2 (platform) or 3 (rotation)",
                ),
            }
        }
    }

    if let Some(rows) = &input.geo {
        patch.geo = Some(keyed_rules(
            rows,
            LinkField::Geo.name(),
            &mut errors,
            |key| {
                country_by_code(key)
                    .map(|c| c.code.to_owned())
                    .ok_or_else(|| "must be an ISO 3166-1 alpha-2 country code".to_string())
            },
        ));
    }
    if let Some(rows) = &input.platform {
        patch.platform = Some(keyed_rules(
            rows,
            LinkField::Platform.name(),
            &mut errors,
            |key| {
                Platform::parse(key)
                    .map(|p| p.name().to_owned())
                    .ok_or_else(|| {
                        let names: Vec<&str> = Platform::ALL.iter().map(|p| p.name()).collect();
                        format!("must be one of {}", names.join(", "))
                    })
            },
        ));
    }
    if let Some(rows) = &input.rotation {
        let list = LinkField::Rotation.name();
        let mut urls = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if row.is_blank() {
                continue;
            }
            if row.key.as_deref().is_some_and(|k| !k.trim().is_empty()) {
                errors.add(
                    &format!("{list}.{i}.key"),
                    "rotation entries take only a value",
                );
            }
            let value = row.value.as_deref().unwrap_or("").trim();
            match validate_url(value) {
                Ok(()) => urls.push(value.to_owned()),
                Err(message) => errors.add(&format!("{list}.{i}.value"), message),
            }
        }
        patch.rotation = Some(urls);
    }

    if let Some(tags) = &input.tags {
        patch.tags = Some(super::tags_of_text(
            tags,
            LinkField::Tags.name(),
            &mut errors,
        ));
    }

    let o = &mut patch.options;
    let named = |f: LinkField| f.name();
    o.forward_query = flag(
        input.forward_query.as_deref(),
        named(LinkField::ForwardQuery),
        &mut errors,
    );
    o.forward_path = flag(
        input.forward_path.as_deref(),
        named(LinkField::ForwardPath),
        &mut errors,
    );
    o.allow_indexing = flag(
        input.allow_indexing.as_deref(),
        named(LinkField::AllowIndexing),
        &mut errors,
    );
    o.preview_title = preview_text(
        input.preview_title.as_deref(),
        LinkField::PreviewTitle,
        PREVIEW_TITLE_MAX,
        &mut errors,
    );
    o.preview_description = preview_text(
        input.preview_description.as_deref(),
        LinkField::PreviewDescription,
        PREVIEW_DESCRIPTION_MAX,
        &mut errors,
    );
    o.preview_image = preview_image(input.preview_image.as_deref(), &mut errors);
    o.rules = input
        .rules
        .as_ref()
        .map(|texts| super::parse_rules(texts, &mut errors));

    errors.into_result(patch)
}

/// Validates key/value rows: blank rows are dropped, key and value are required together, keys
/// are canonicalised by `canon` and may not repeat.
fn keyed_rules(
    rows: &[RuleInput],
    list: &str,
    errors: &mut FieldErrors,
    canon: impl Fn(&str) -> Result<String, String>,
) -> Vec<TargetRule> {
    let mut rules: Vec<TargetRule> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if row.is_blank() {
            continue;
        }
        let key = row.key.as_deref().unwrap_or("").trim();
        let value = row.value.as_deref().unwrap_or("").trim();
        let key_field = format!("{list}.{i}.key");
        let value_field = format!("{list}.{i}.value");
        let key = if key.is_empty() {
            errors.add(&key_field, "is required with a URL");
            None
        } else {
            match canon(key) {
                Ok(k) if rules.iter().any(|r| r.key == k) => {
                    errors.add(&key_field, format!("{k} appears more than once"));
                    None
                }
                Ok(k) => Some(k),
                Err(message) => {
                    errors.add(&key_field, message);
                    None
                }
            }
        };
        let value_ok = if value.is_empty() {
            errors.add(&value_field, "is required with a key");
            false
        } else if let Err(message) = validate_url(value) {
            errors.add(&value_field, message);
            false
        } else {
            true
        };
        if let (Some(key), true) = (key, value_ok) {
            rules.push(TargetRule {
                key,
                value: value.to_owned(),
            });
        }
    }
    rules
}

fn optional_id(raw: Option<&str>, field: &str, errors: &mut FieldErrors) -> Option<Option<Id>> {
    let raw = raw?.trim();
    if raw.is_empty() || raw == "0" {
        return Some(None);
    }
    match raw.parse::<Id>() {
        Ok(id) if id > 0 => Some(Some(id)),
        _ => {
            errors.add(field, "must be the id of one of your records");
            None
        }
    }
}

/// `0`/`1` on the wire; `true`/`false` and `on`/`off` are accepted too. Empty reads as off.
fn flag(raw: Option<&str>, field: &str, errors: &mut FieldErrors) -> Option<bool> {
    match raw?.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" | "" => Some(false),
        _ => {
            errors.add(field, "must be 0 or 1");
            None
        }
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn a_link_expires_at_its_end_instant_and_at_its_last_click() {
        let now: Timestamp = "2026-05-01T12:00:00Z".parse().unwrap();
        let second = jiff::SignedDuration::from_secs(1);
        assert!(!LinkStatus::expired_by_date(None, now));
        assert!(!LinkStatus::expired_by_date(Some(now + second), now));
        assert!(LinkStatus::expired_by_date(Some(now), now));
        assert!(
            !LinkStatus::click_limit_reached(0, u64::MAX),
            "0 is no limit"
        );
        assert!(!LinkStatus::click_limit_reached(3, 2));
        assert!(LinkStatus::click_limit_reached(3, 3));

        let status = LinkStatus::derive(true, Some(now), 0, 0, now);
        assert!(status.expired && status.disabled && !status.is_active());
        assert_eq!(status.label(), "disabled", "disabled wins over expired");
        assert_eq!(
            LinkStatus::derive(false, None, 3, 3, now).label(),
            "expired"
        );
        assert_eq!(LinkStatus::derive(false, None, 3, 2, now).label(), "active");
    }
}
