//! The portable records of an export file and their conversions to and from the domain types.

use std::fmt;

use jiff::tz::TimeZone;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use std::collections::BTreeMap;

use crate::domain::{
    Carried, DIMENSIONS, FieldErrors, Id, Link, LinkField, LinkInput, LinkOptions, RuleInput,
    Space, SpaceInput, TAG_SEPARATOR, TargetType, TrafficHour, carried, format_expiry_input,
    name_excerpt,
};

/// The tags of a text of tags separated by commas, as typed (the rules read them on import).
pub fn tags_in_text(text: &str) -> Vec<String> {
    text.split(TAG_SEPARATOR)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A value written as a string, number or boolean; the service reads all of them as text
/// (`"1"`, `1` and `true` are the same flag).
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Text(String),
    Number(i64),
    Bool(bool),
}

impl Scalar {
    /// The text the service's validation reads.
    pub fn to_input(&self) -> String {
        match self {
            Scalar::Text(s) => s.clone(),
            Scalar::Number(n) => n.to_string(),
            Scalar::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::Text(t) => s.serialize_str(t),
            Scalar::Number(n) => s.serialize_i64(*n),
            Scalar::Bool(b) => s.serialize_bool(*b),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, a number or true/false")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                i64::try_from(v)
                    .map(Scalar::Number)
                    .map_err(|_| E::custom("number is too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
        }
        d.deserialize_any(ScalarVisitor)
    }
}

/// The `password` of a link record: a string sets it on import; `true`/`false` (what an export
/// writes, as the password itself cannot be exported) only says whether the link had one.
#[derive(Debug, Clone, PartialEq)]
pub enum PasswordField {
    Set(String),
    Had(bool),
}

impl Serialize for PasswordField {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PasswordField::Set(p) => s.serialize_str(p),
            PasswordField::Had(b) => s.serialize_bool(*b),
        }
    }
}

impl<'de> Deserialize<'de> for PasswordField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PasswordVisitor;
        impl Visitor<'_> for PasswordVisitor {
            type Value = PasswordField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a password string, or true/false")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PasswordField, E> {
                Ok(PasswordField::Set(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<PasswordField, E> {
                Ok(PasswordField::Had(v))
            }
        }
        d.deserialize_any(PasswordVisitor)
    }
}

/// A space in an export file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceRecord {
    pub name: String,
    /// 1–6 or a colour name.
    pub color: Scalar,
}

impl SpaceRecord {
    pub fn from_space(space: &Space) -> Self {
        SpaceRecord {
            name: space.name.clone(),
            color: Scalar::Text(space.color.name().to_owned()),
        }
    }

    pub fn to_input(&self) -> SpaceInput {
        SpaceInput {
            name: Some(self.name.clone()),
            color: Some(self.color.to_input()),
        }
    }
}

/// A link in an export file: the service's input fields under their wire names, except that
/// `space` and `domain` are names and `password` may be the informational `true`/`false` of an
/// export; plus what a link carries from where it lived before (`title`, `clicks`,
/// `created_at`), which an import keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRecord {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The click total, so that a link expired by its click limit stays expired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clicks: Option<Scalar>,
    /// Visits of chat apps' preview agents, counted apart from clicks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previews: Option<Scalar>,
    /// RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordField>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_clicks: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_type: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geo: Option<Vec<RuleInput>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<Vec<RuleInput>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<Vec<RuleInput>>,
    /// Its tags, each read by the tag rules on import (`Promo` is `promo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Its options (see `LinkOptions`), each only where it differs from the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_query: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_path: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_indexing: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_image: Option<String>,
    /// Redirect rules in their text form (`country DE => https://…`), in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<String>>,
    /// The link's traffic history, an hour a record (JSON only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic: Option<Vec<TrafficRecord>>,
}

/// One hour of a link's traffic: its clicks, and the clicks of each value seen in it (a visit
/// without a value counts in `clicks` only). Values are those of the stats: country codes,
/// platform and browser names, referring hosts, primary language tags, the rule that sent the
/// visits (`rule 2 language`, `country DE`), or "other".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficRecord {
    /// The start of a UTC hour, RFC 3339.
    pub hour: jiff::Timestamp,
    pub clicks: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub country: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub platform: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub browser: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub referrer: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub language: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rule: BTreeMap<String, u64>,
}

impl TrafficRecord {
    fn maps(&self) -> [&BTreeMap<String, u64>; DIMENSIONS] {
        [
            &self.country,
            &self.platform,
            &self.browser,
            &self.referrer,
            &self.language,
            &self.rule,
        ]
    }

    pub fn from_hour(hour: &TrafficHour) -> TrafficRecord {
        let [country, platform, browser, referrer, language, rule] =
            hour.values.clone().map(|v| v.into_iter().collect());
        TrafficRecord {
            hour: hour.hour,
            clicks: hour.clicks,
            country,
            platform,
            browser,
            referrer,
            language,
            rule,
        }
    }

    /// The hour, checked; errors are keyed `prefix.field`.
    pub fn to_hour(&self, prefix: &str) -> Result<TrafficHour, FieldErrors> {
        let values = self
            .maps()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), *v)).collect());
        TrafficHour::checked(self.hour, self.clicks, values, prefix)
    }
}

/// A link record made ready for the service: the input, the name of its space, what it carries
/// from before, whether the export said it had a password that could not be carried, and
/// whether its title was cut to [`TITLE_MAX`](crate::domain::TITLE_MAX) characters.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportLink {
    pub input: LinkInput,
    pub space: Option<String>,
    pub carried: Carried,
    pub lost_password: bool,
    pub title_cut: bool,
}

impl LinkRecord {
    /// Moves every hour of its traffic by `shift` (see [`super::traffic_shift`]).
    pub fn shift_traffic(&mut self, shift: jiff::SignedDuration) {
        for hour in self.traffic.iter_mut().flatten() {
            hour.hour = hour.hour.saturating_add(shift).unwrap_or(hour.hour);
        }
    }

    /// The portable form of `link`, with its expiry written in `tz`.
    pub fn from_link(link: &Link, tz: &TimeZone) -> Self {
        let (expiration_date, expiration_time) = match link.ends_at {
            Some(at) => {
                let (d, t) = format_expiry_input(at, tz);
                (Some(d), Some(t))
            }
            None => (None, None),
        };
        let keyed = |rules: &[crate::domain::TargetRule]| {
            (!rules.is_empty()).then(|| {
                rules
                    .iter()
                    .map(|r| RuleInput::new(&r.key, &r.value))
                    .collect()
            })
        };
        LinkRecord {
            url: Some(link.url.clone()),
            alias: Some(link.alias.clone()),
            title: link.title.clone().filter(|t| !t.is_empty()),
            clicks: count(link.clicks),
            previews: count(link.previews),
            created_at: Some(link.created_at.to_string()),
            space: link.space.as_ref().map(|s| s.name.clone()),
            domain: link.domain.as_ref().map(|d| d.name.clone()),
            disabled: Some(Scalar::Bool(link.disabled)),
            public: Some(Scalar::Bool(link.public)),
            password: Some(PasswordField::Had(link.password)),
            expiration_date,
            expiration_time,
            expiration_clicks: (link.expiration_clicks > 0)
                .then(|| Scalar::Number(i64::from(link.expiration_clicks))),
            expiration_url: link.expiration_url.clone(),
            target_type: (link.target_type != TargetType::None)
                .then(|| Scalar::Text(link.target_type.label().to_owned())),
            geo: keyed(&link.geo),
            platform: keyed(&link.platform),
            rotation: (!link.rotation.is_empty())
                .then(|| link.rotation.iter().map(RuleInput::value).collect()),
            tags: (!link.tags.is_empty()).then(|| link.tags.clone()),
            traffic: None,
            ..LinkRecord::default()
        }
        .with_options(&link.options)
    }

    /// The record with the options `options` has away from the defaults (switches as
    /// booleans).
    fn with_options(self, options: &LinkOptions) -> Self {
        let d = LinkOptions::default();
        let switch = |on: bool, default: bool| (on != default).then_some(Scalar::Bool(on));
        LinkRecord {
            forward_query: switch(options.forward_query, d.forward_query),
            forward_path: switch(options.forward_path, d.forward_path),
            allow_indexing: switch(options.allow_indexing, d.allow_indexing),
            preview_title: options.preview_title.clone(),
            preview_description: options.preview_description.clone(),
            preview_image: options.preview_image.clone(),
            rules: (!options.rules.is_empty())
                .then(|| options.rules.iter().map(ToString::to_string).collect()),
            ..self
        }
    }

    /// The record with the option fields of `input`, as typed.
    fn with_option_input(self, input: &LinkInput) -> Self {
        let switch = |v: &Option<String>| v.clone().map(Scalar::Text);
        LinkRecord {
            forward_query: switch(&input.forward_query),
            forward_path: switch(&input.forward_path),
            allow_indexing: switch(&input.allow_indexing),
            preview_title: input.preview_title.clone(),
            preview_description: input.preview_description.clone(),
            preview_image: input.preview_image.clone(),
            rules: input.rules.clone(),
            ..self
        }
    }

    /// The record of a link on its way to another linkdeck (a copy, or an import into a
    /// server): `input` as typed, with its space and domain named — `domain` is the name of the
    /// domain `input.domain` names — and what it carries. [`LinkRecord::to_import`] gives them
    /// back.
    pub fn from_input(
        input: &LinkInput,
        space: Option<&str>,
        domain: Option<&str>,
        carried: &Carried,
    ) -> Self {
        let text = |v: &Option<String>| v.clone().map(Scalar::Text);
        LinkRecord {
            url: input.url.clone(),
            alias: input.alias.clone(),
            title: carried.title.clone(),
            clicks: count(carried.clicks),
            previews: count(carried.previews),
            created_at: carried.created_at.map(|at| at.to_string()),
            space: space.map(str::to_owned),
            domain: domain.map(str::to_owned),
            disabled: text(&input.disabled),
            public: text(&input.public),
            password: input.password.clone().map(PasswordField::Set),
            expiration_date: input.expiration_date.clone(),
            expiration_time: input.expiration_time.clone(),
            expiration_clicks: text(&input.expiration_clicks),
            expiration_url: input.expiration_url.clone(),
            target_type: text(&input.target_type),
            geo: input.geo.clone(),
            platform: input.platform.clone(),
            rotation: input.rotation.clone(),
            tags: input.tags.as_deref().map(tags_in_text),
            traffic: (!carried.traffic.is_empty()).then(|| {
                carried
                    .traffic
                    .iter()
                    .map(TrafficRecord::from_hour)
                    .collect()
            }),
            ..LinkRecord::default()
        }
        .with_option_input(input)
    }

    /// The create request this record stands for. `domain_id` looks a domain name up among the
    /// caller's domains; an unknown one is a field error on `domain`.
    pub fn to_import(
        &self,
        domain_id: impl Fn(&str) -> Option<Id>,
    ) -> Result<ImportLink, FieldErrors> {
        let mut errors = FieldErrors::default();
        let domain = match self.domain.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(name) => match domain_id(name) {
                Some(id) => Some(id.to_string()),
                None => {
                    errors.add(
                        LinkField::Domain.name(),
                        format!(
                            "no domain named {} (add it first with `linkdeck domains add`)",
                            name_excerpt(name)
                        ),
                    );
                    None
                }
            },
        };
        let (password, lost_password) = match &self.password {
            Some(PasswordField::Set(p)) => (Some(p.clone()), false),
            Some(PasswordField::Had(had)) => (None, *had),
            None => (None, false),
        };
        let input = LinkInput {
            url: self.url.clone(),
            alias: self.alias.clone(),
            password,
            space: None,
            domain,
            disabled: self.disabled.as_ref().map(Scalar::to_input),
            public: self.public.as_ref().map(Scalar::to_input),
            expiration_url: self.expiration_url.clone(),
            expiration_date: self.expiration_date.clone(),
            expiration_time: self.expiration_time.clone(),
            expiration_clicks: self.expiration_clicks.as_ref().map(Scalar::to_input),
            target_type: self.target_type.as_ref().map(Scalar::to_input),
            geo: self.geo.clone(),
            platform: self.platform.clone(),
            rotation: self.rotation.clone(),
            tags: self
                .tags
                .as_ref()
                .map(|tags| tags.join(&TAG_SEPARATOR.to_string())),
            forward_query: self.forward_query.as_ref().map(Scalar::to_input),
            forward_path: self.forward_path.as_ref().map(Scalar::to_input),
            allow_indexing: self.allow_indexing.as_ref().map(Scalar::to_input),
            preview_title: self.preview_title.clone(),
            preview_description: self.preview_description.clone(),
            preview_image: self.preview_image.clone(),
            rules: self.rules.clone(),
        };
        let space = self
            .space
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let clicks = self.clicks.as_ref().map(Scalar::to_input);
        let previews = self.previews.as_ref().map(Scalar::to_input);
        let mut carried = carried(
            self.title.as_deref(),
            clicks.as_deref(),
            previews.as_deref(),
            self.created_at.as_deref(),
        )
        .unwrap_or_else(|e| {
            errors.merge(e);
            Carried::default()
        });
        let mut traffic = Vec::new();
        for (i, hour) in self.traffic.iter().flatten().enumerate() {
            match hour.to_hour(&format!("traffic.{i}")) {
                Ok(hour) => traffic.push(hour),
                Err(e) => errors.merge(e),
            }
        }
        carried.traffic = traffic;
        let title_cut = self
            .title
            .as_deref()
            .map(str::trim)
            .is_some_and(|given| !given.is_empty() && carried.title.as_deref() != Some(given));
        errors.into_result(ImportLink {
            input,
            space,
            carried,
            lost_password,
            title_cut,
        })
    }
}

/// A count as a file writes it: left out when none.
fn count(n: u64) -> Option<Scalar> {
    (n > 0).then(|| Scalar::Number(i64::try_from(n).unwrap_or(i64::MAX)))
}
