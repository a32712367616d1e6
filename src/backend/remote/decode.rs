//! Reads v1 response bodies into domain types, tolerating what real phpShort 2.x servers send
//! (docs/ARCHITECTURE.md, "phpShort's quirks"): numbers as ints, numeric strings or null;
//! targets as a list or as an object keyed by index; two date formats; domain names with a
//! scheme; no `password` field; `message` as a field map or a string; no `status` on lists.
//!
//! Everything goes through `serde_json::Value` so that one odd field gives a message naming
//! that field instead of a generic "invalid type" for the whole record.

use jiff::Timestamp;
use jiff::civil::DateTime;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::body::{RECORD_MAX, size};

use crate::domain::{
    Breakdown, Bucket, Color, Dimension, Domain, FieldErrors, HostSettings, Id, Interval, Link,
    LinkField, LinkOptions, Page, Robots, Space, Stats, StatsScope, TargetRule, TargetType,
    TopLink, Total, ValueCount, excerpt, normalize_domain_name,
};

/// What was wrong with a body, naming the field: `clicks: expected a number, got "many"`.
pub type DecodeError = String;

type Fields = Map<String, Value>;

/// The record inside `{"data": {…}}`.
pub fn record<T>(
    body: &Value,
    read: impl Fn(&Value) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let data = body.get("data").ok_or("no \"data\" in the answer")?;
    read(data)
}

/// A list's envelope as sent, its records still as text: only one record at a time becomes a
/// JSON tree, so a page of many large records never needs a tree of the whole page (a tree takes
/// many times the text).
#[derive(Debug, Default, serde::Deserialize)]
pub struct Envelope<'a> {
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(borrow, default)]
    meta: Option<&'a RawValue>,
}

/// `body` as a list's envelope; `None` when it is not JSON at all. JSON of another shape is an
/// envelope without a list, which [`page`] names.
pub fn envelope(body: &[u8]) -> Option<Envelope<'_>> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Some(Envelope::default());
    }
    match serde_json::from_slice::<Envelope>(body) {
        Ok(envelope) => Some(envelope),
        Err(e) if e.is_data() => Some(Envelope::default()),
        Err(_) => None,
    }
}

/// A list envelope: `data` plus `meta` (Laravel's paginator). `requested` is the page and size
/// asked for, used only when a server sends no `meta`. The page size is the one the server says
/// it used: phpShort 2.x always uses 10 whatever was asked. A record, and `meta`, may be at most
/// [`RECORD_MAX`] long.
pub fn page<T>(
    envelope: &Envelope,
    requested: (u32, u32),
    read: impl Fn(&Value) -> Result<T, DecodeError>,
) -> Result<Page<T>, DecodeError> {
    let no_list = || DecodeError::from("no \"data\" list in the answer");
    let data = envelope.data.ok_or_else(no_list)?;
    let data: Vec<&RawValue> = serde_json::from_str(data.get()).map_err(|_| no_list())?;
    let items = data
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let item = tree(item).map_err(|e| format!("data.{i}{e}"))?;
            read(&item).map_err(|e| format!("data.{i}.{e}"))
        })
        .collect::<Result<Vec<T>, _>>()?;
    let meta = envelope
        .meta
        .map(|meta| tree(meta).map_err(|e| format!("meta{e}")))
        .transpose()?;
    let meta = meta.as_ref().and_then(Value::as_object);
    let (page, per_page) = requested;
    let meta_u64 = |name: &str| -> Result<Option<u64>, DecodeError> {
        match meta {
            Some(meta) => opt_u64(meta, name).map_err(|e| format!("meta.{e}")),
            None => Ok(None),
        }
    };
    let page = meta_u64("current_page")?.map_or(page, saturate);
    let per_page = meta_u64("per_page")?
        .filter(|n| *n > 0)
        .map_or(per_page, saturate);
    let total = match meta_u64("total")? {
        Some(total) => total,
        // Without a total, what was seen so far is all that is known.
        None => u64::from(page.saturating_sub(1)) * u64::from(per_page) + items.len() as u64,
    };
    // linkdeck's servers say when the total is a bound ("10,000+"); others always count.
    let exact = match meta {
        Some(meta) => opt_i64(meta, "total_exact").map_err(|e| format!("meta.{e}"))?,
        None => None,
    };
    let total = match exact {
        Some(0) => Total::at_least(total),
        _ => Total::exact(total),
    };
    Ok(Page::new(items, page, per_page, total))
}

/// One record of a list as a JSON tree, if it is no longer than [`RECORD_MAX`]. The error
/// follows the record's name: `data.3: …`.
fn tree(raw: &RawValue) -> Result<Value, DecodeError> {
    if raw.get().len() > RECORD_MAX {
        return Err(format!(
            ": more than {}, the most linkdeck reads of one record",
            size(RECORD_MAX)
        ));
    }
    serde_json::from_str(raw.get()).map_err(|e| format!(": {e}"))
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub fn link(value: &Value) -> Result<Link, DecodeError> {
    let f = object(value)?;
    let key = |field: LinkField| field.record_name().unwrap_or_default();
    Ok(Link {
        id: id(f, "id")?,
        alias: string(f, key(LinkField::Alias))?,
        url: string(f, key(LinkField::Url))?,
        short_url: opt_string(f, "short_url")?.unwrap_or_default(),
        title: opt_string(f, key(LinkField::Title))?.filter(|t| !t.is_empty()),
        target_type: target_type(f)?,
        geo: keyed_rules(f, key(LinkField::Geo))?,
        platform: keyed_rules(f, key(LinkField::Platform))?,
        rotation: keyed_rules_raw(f, key(LinkField::Rotation))?
            .into_iter()
            .map(|(_, value)| value)
            .collect(),
        last_rotation: opt_u64(f, "last_rotation")?.map_or(0, saturate),
        disabled: flag(f, key(LinkField::Disabled))?,
        public: flag(f, key(LinkField::Public))?,
        // phpShort 2.4 does not say whether a password is set; 3.x+ sends a boolean.
        password: flag(f, key(LinkField::Password))?,
        expiration_url: opt_string(f, key(LinkField::ExpirationUrl))?.filter(|u| !u.is_empty()),
        expiration_clicks: opt_u64(f, key(LinkField::ExpirationClicks))?.map_or(0, saturate),
        clicks: opt_u64(f, key(LinkField::Clicks))?.unwrap_or(0),
        owner_id: opt_i64(f, "user_id")?.unwrap_or(0),
        space: match f.get(key(LinkField::Space)) {
            None | Some(Value::Null) => None,
            Some(v) => Some(space(v).map_err(|e| format!("space.{e}"))?),
        },
        domain: match f.get(key(LinkField::Domain)) {
            None | Some(Value::Null) => None,
            Some(v) => Some(domain(v).map_err(|e| format!("domain.{e}"))?),
        },
        ends_at: opt_time(f, "ends_at")?,
        created_at: time(f, key(LinkField::CreatedAt))?,
        updated_at: time(f, "updated_at")?,
        tags: tags(f, key(LinkField::Tags))?,
        options: options(f)?,
        previews: opt_u64(f, key(LinkField::Previews))?.unwrap_or(0),
    })
}

/// A link's options, linkdeck's extras on a v1 record: each absent or null is its default
/// (a server without options has links that behave as the defaults say).
fn options(f: &Fields) -> Result<LinkOptions, DecodeError> {
    let d = LinkOptions::default();
    let switch = |field: LinkField, default: bool| -> Result<bool, DecodeError> {
        match f.get(field.name()) {
            None | Some(Value::Null) => Ok(default),
            Some(_) => flag(f, field.name()),
        }
    };
    let text = |field: LinkField| -> Result<Option<String>, DecodeError> {
        Ok(opt_string(f, field.name())?.filter(|t| !t.is_empty()))
    };
    Ok(LinkOptions {
        forward_query: switch(LinkField::ForwardQuery, d.forward_query)?,
        forward_path: switch(LinkField::ForwardPath, d.forward_path)?,
        allow_indexing: switch(LinkField::AllowIndexing, d.allow_indexing)?,
        preview_title: text(LinkField::PreviewTitle)?,
        preview_description: text(LinkField::PreviewDescription)?,
        preview_image: text(LinkField::PreviewImage)?,
        rules: match f.get(LinkField::Rules.name()) {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| format!("{}: {e}", LinkField::Rules.name()))?,
        },
    })
}

/// A link's tags: a list of text, absent or null on a server without tags. Each is read by the
/// tag rules, as a typed one would be, so a server's tag can be asked for again as it is.
fn tags(f: &Fields, name: &str) -> Result<Vec<String>, DecodeError> {
    let list = match f.get(name) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => return Err(format!("{name}: expected a list, got {}", kind(other))),
    };
    let mut tags = Vec::with_capacity(list.len());
    for (i, one) in list.iter().enumerate() {
        let Value::String(text) = one else {
            return Err(format!("{name}.{i}: expected text, got {}", kind(one)));
        };
        tags.push(linkdeck_domain::tag(text).map_err(|e| format!("{name}.{i}: {e}"))?);
    }
    tags.sort();
    tags.dedup();
    Ok(tags)
}

pub fn space(value: &Value) -> Result<Space, DecodeError> {
    let f = object(value)?;
    let color = opt_i64(f, "color")?.ok_or("color: missing")?;
    let color = u8::try_from(color)
        .ok()
        .and_then(Color::new)
        .ok_or_else(|| format!("color: {color} is not a colour from 1 to 6"))?;
    Ok(Space {
        id: id(f, "id")?,
        owner_id: opt_i64(f, "user_id")?.unwrap_or(0),
        name: string(f, "name")?,
        color,
        // Servers that count a space's links say so under one of these names.
        links: match opt_u64(f, "links_count") {
            Ok(Some(n)) => Some(n),
            _ => opt_u64(f, "links").ok().flatten(),
        },
        created_at: time(f, "created_at")?,
        updated_at: time(f, "updated_at")?,
    })
}

pub fn domain(value: &Value) -> Result<Domain, DecodeError> {
    let f = object(value)?;
    let raw = string(f, "name")?;
    // phpShort 2.4 stores `http://host`; others may send the bare host.
    let name = normalize_domain_name(&raw).unwrap_or_else(|_| raw.trim_end_matches('/').into());
    Ok(Domain {
        id: id(f, "id")?,
        owner_id: opt_i64(f, "user_id")?.unwrap_or(0),
        name,
        created_at: time(f, "created_at")?,
        updated_at: time(f, "updated_at")?,
        settings: f
            .contains_key("robots")
            .then(|| host_settings(f))
            .transpose()?,
    })
}

/// A domain's fallbacks and robots policy as linkdeck's domain record carries them (with
/// `robots` always); a link's domain and a phpShort server's domains have none.
fn host_settings(f: &Fields) -> Result<HostSettings, DecodeError> {
    Ok(HostSettings {
        root_url: opt_string(f, "root_url")?,
        unknown_url: opt_string(f, "unknown_url")?,
        expired_url: opt_string(f, "expired_url")?,
        robots: Robots::named(
            opt_string(f, "robots")?.as_deref(),
            opt_string(f, "robots_txt")?,
        ),
    })
}

/// The field errors of a 422: `message` (phpShort) or Laravel's `errors` as a map of field to
/// messages (a list or one string); a plain string `message` becomes an error of the whole
/// request under the field `request`. Names and messages are kept as excerpts.
pub fn field_errors(body: &Value) -> FieldErrors {
    let mut errors = FieldErrors::default();
    for bag in [body.get("errors"), body.get("message")]
        .into_iter()
        .flatten()
    {
        if let Some(map) = bag.as_object() {
            for (field, messages) in map {
                let field = excerpt(field);
                match messages {
                    Value::Array(list) => {
                        for m in list {
                            errors.add(&field, excerpt(&text(m)));
                        }
                    }
                    other => errors.add(&field, excerpt(&text(other))),
                }
            }
        }
    }
    if errors.is_empty() {
        let message = message(body).unwrap_or_else(|| "was refused by the server".into());
        errors.add("request", message);
    }
    errors
}

/// A stats record (see `wire::stats`) as the answer to a question about `scope`.
pub fn stats(value: &Value, scope: StatsScope) -> Result<Stats, DecodeError> {
    let f = object(value)?;
    let list = |name: &str| -> Result<Vec<&Fields>, DecodeError> {
        match f.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| object(v).map_err(|e| format!("{name}.{i}: {e}")))
                .collect(),
            Some(other) => Err(format!("{name}: expected a list, got {}", kind(other))),
        }
    };
    let timeline = list("timeline")?
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            Ok(Bucket {
                start: time(b, "starts_at").map_err(|e| format!("timeline.{i}.{e}"))?,
                clicks: opt_u64(b, "clicks")
                    .map_err(|e| format!("timeline.{i}.{e}"))?
                    .unwrap_or(0),
            })
        })
        .collect::<Result<Vec<_>, DecodeError>>()?;
    let mut breakdowns = Vec::new();
    for dimension in Dimension::ALL {
        let name = dimension.as_str();
        let Some(part) = f.get(name).filter(|v| !v.is_null()) else {
            continue;
        };
        let part = object(part).map_err(|e| format!("{name}: {e}"))?;
        let values: &[Value] = match part.get("top") {
            None | Some(Value::Null) => &[],
            Some(Value::Array(items)) => items,
            Some(other) => return Err(format!("{name}.top: expected a list, got {}", kind(other))),
        };
        let top = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let v = object(v).map_err(|e| format!("{name}.top.{i}: {e}"))?;
                Ok(ValueCount {
                    value: opt_string(v, "value").map_err(|e| format!("{name}.top.{i}.{e}"))?,
                    clicks: opt_u64(v, "clicks")
                        .map_err(|e| format!("{name}.top.{i}.{e}"))?
                        .unwrap_or(0),
                })
            })
            .collect::<Result<Vec<_>, DecodeError>>()?;
        breakdowns.push(Breakdown {
            dimension,
            top,
            other: opt_u64(part, "other")
                .map_err(|e| format!("{name}.{e}"))?
                .unwrap_or(0),
        });
    }
    let top_links = match f.get("top_links") {
        None | Some(Value::Null) => None,
        Some(_) => Some(
            list("top_links")?
                .into_iter()
                .enumerate()
                .map(|(i, l)| {
                    let at = |e: DecodeError| format!("top_links.{i}.{e}");
                    Ok(TopLink {
                        id: id(l, "id").map_err(at)?,
                        alias: string(l, "alias").map_err(at)?,
                        url: opt_string(l, "url").map_err(at)?.unwrap_or_default(),
                        clicks: opt_u64(l, "clicks").map_err(at)?.unwrap_or(0),
                    })
                })
                .collect::<Result<Vec<_>, DecodeError>>()?,
        ),
    };
    let interval = match opt_string(f, "interval")? {
        Some(i) => Interval::parse(&i)
            .ok_or_else(|| format!("interval: {i:?} is not hour, day or month"))?,
        None => Interval::Day,
    };
    Ok(Stats {
        scope,
        from: time(f, "starts_at")?,
        to: time(f, "ends_at")?,
        interval,
        total: opt_u64(f, "clicks")?.unwrap_or(0),
        previous: opt_u64(f, "previous_clicks")?,
        timeline,
        breakdowns,
        top_links,
    })
}

/// The `message` of an error body when it is a string, as an excerpt.
pub fn message(body: &Value) -> Option<String> {
    body.get("message")
        .and_then(Value::as_str)
        .map(excerpt)
        .filter(|m| !m.is_empty())
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn object(value: &Value) -> Result<&Fields, DecodeError> {
    value
        .as_object()
        .ok_or_else(|| format!("expected an object, got {}", kind(value)))
}

fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::String(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Value::String(_) => "a long string".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn string(f: &Fields, name: &str) -> Result<String, DecodeError> {
    opt_string(f, name)?.ok_or_else(|| format!("{name}: missing"))
}

fn opt_string(f: &Fields, name: &str) -> Result<Option<String>, DecodeError> {
    match f.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        // An alias of digits may come back as a number.
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(format!("{name}: expected text, got {}", kind(other))),
    }
}

/// An integer sent as a number, a numeric string, a boolean, or null/absent/empty (`None`).
fn opt_i64(f: &Fields, name: &str) -> Result<Option<i64>, DecodeError> {
    let bad = |v: &Value| format!("{name}: expected a number, got {}", kind(v));
    match f.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(i64::from(*b))),
        Some(v @ Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(Some(i)),
            (None, Some(x)) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(Some(x as i64)),
            _ => Err(bad(v)),
        },
        Some(v @ Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else {
                s.parse::<i64>().map(Some).map_err(|_| bad(v))
            }
        }
        Some(other) => Err(bad(other)),
    }
}

fn opt_u64(f: &Fields, name: &str) -> Result<Option<u64>, DecodeError> {
    match opt_i64(f, name)? {
        Some(n) => u64::try_from(n)
            .map(Some)
            .map_err(|_| format!("{name}: expected a number of 0 or more, got {n}")),
        None => Ok(None),
    }
}

fn id(f: &Fields, name: &str) -> Result<Id, DecodeError> {
    opt_i64(f, name)?.ok_or_else(|| format!("{name}: missing"))
}

/// `0`/`1`, `"0"`/`"1"`, booleans; null or absent is false.
fn flag(f: &Fields, name: &str) -> Result<bool, DecodeError> {
    match f.get(name) {
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Ok(opt_i64(f, name)?.is_some_and(|n| n != 0)),
    }
}

fn target_type(f: &Fields) -> Result<TargetType, DecodeError> {
    let name = LinkField::TargetType.name();
    match opt_i64(f, name)? {
        None => Ok(TargetType::None),
        Some(n) => u8::try_from(n)
            .ok()
            .and_then(|n| TargetType::try_from(n).ok())
            .ok_or_else(|| format!("{name}: {n} is not 0-3")),
    }
}

fn keyed_rules(f: &Fields, name: &str) -> Result<Vec<TargetRule>, DecodeError> {
    keyed_rules_raw(f, name)?
        .into_iter()
        .map(|(key, value)| match key {
            Some(key) => Ok(TargetRule { key, value }),
            None => Err(format!("{name}: an entry has no key")),
        })
        .collect()
}

/// Targeting entries as `(key, value)`, in index order: a list, an object keyed by index (what
/// PHP sends when a middle entry was filtered out), or null. Empty entries are skipped.
fn keyed_rules_raw(f: &Fields, name: &str) -> Result<Vec<(Option<String>, String)>, DecodeError> {
    let entries: Vec<&Value> = match f.get(name) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list.iter().collect(),
        Some(Value::Object(map)) => {
            let mut indexed: Vec<(u64, &Value)> = Vec::with_capacity(map.len());
            for (index, entry) in map {
                let index = index
                    .parse::<u64>()
                    .map_err(|_| format!("{name}: key {index:?} is not an index"))?;
                indexed.push((index, entry));
            }
            indexed.sort_by_key(|(i, _)| *i);
            indexed.into_iter().map(|(_, e)| e).collect()
        }
        // A column double-encoded as a JSON string.
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(s)) => {
            let inner: Value = serde_json::from_str(s)
                .map_err(|_| format!("{name}: expected a list, got {}", kind(&f[name])))?;
            let mut wrapped = Fields::new();
            wrapped.insert(name.to_owned(), inner);
            return keyed_rules_raw(&wrapped, name);
        }
        Some(other) => return Err(format!("{name}: expected a list, got {}", kind(other))),
    };
    let mut rules = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        let Some(entry) = entry.as_object() else {
            if entry.is_null() {
                continue;
            }
            return Err(format!(
                "{name}.{i}: expected an object, got {}",
                kind(entry)
            ));
        };
        let key = opt_string(entry, "key").map_err(|e| format!("{name}.{i}.{e}"))?;
        let value = opt_string(entry, "value").map_err(|e| format!("{name}.{i}.{e}"))?;
        match value {
            Some(value) if !value.is_empty() => rules.push((key, value)),
            _ => {}
        }
    }
    Ok(rules)
}

fn time(f: &Fields, name: &str) -> Result<Timestamp, DecodeError> {
    opt_time(f, name)?.ok_or_else(|| format!("{name}: missing"))
}

/// RFC 3339 (`2020-09-14T06:53:49.000000Z`) or Laravel 6's nested-model form
/// (`2020-09-14 06:53:49`, in the app's zone, which phpShort keeps at UTC).
fn opt_time(f: &Fields, name: &str) -> Result<Option<Timestamp>, DecodeError> {
    let Some(raw) = opt_string(f, name)? else {
        return Ok(None);
    };
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    if let Ok(at) = raw.parse::<Timestamp>() {
        return Ok(Some(at));
    }
    raw.parse::<DateTime>()
        .ok()
        .and_then(|dt| dt.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|z| Some(z.timestamp()))
        .ok_or_else(|| format!("{name}: {raw:?} is not a date and time"))
}

#[cfg(test)]
mod tests;
mod traffic;

pub use traffic::traffic;
