//! Other shorteners' exports: Bitly's bitlinks list, YOURLS's `yourls_url` table (phpMyAdmin CSV
//! or an SQL dump), Shlink's short-URL list (the web client's CSV or the REST API's JSON) and
//! Kutt's link list. Each reader streams the file and turns every row into a linkdeck
//! [`LinkRecord`] (domains as host names, tags kept aside), noting in [`Dropped`] what had no
//! place to go. The fixtures in `tests/fixtures/foreign/` and their README say where each
//! format was learnt.

mod bitly;
mod kutt;
pub mod scan;
mod shlink;
pub mod sqldump;
mod yourls;
mod yourls_log;

use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::{FormatError, LinkRecord};
use crate::domain::{FieldErrors, Place, format_expiry_input};

pub use yourls::{LogError, read_log as read_yourls_log};
pub use yourls_log::{AgentReader, ClickLog};

/// The services whose exports linkdeck reads (`--from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Service {
    /// linkdeck's own JSON or CSV export.
    Linkdeck,
    Bitly,
    Yourls,
    Shlink,
    Kutt,
}

impl Service {
    pub fn name(self) -> &'static str {
        match self {
            Service::Linkdeck => "linkdeck",
            Service::Bitly => "Bitly",
            Service::Yourls => "YOURLS",
            Service::Shlink => "Shlink",
            Service::Kutt => "Kutt",
        }
    }
}

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Json,
    Csv,
    Sql,
}

/// A file's service and shape, as named or recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub service: Service,
    pub shape: Shape,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = match self.shape {
            Shape::Json => "JSON",
            Shape::Csv => "CSV",
            Shape::Sql => "SQL dump",
        };
        write!(f, "{} {shape}", self.service.name())
    }
}

/// The shape of a file from its first bytes.
pub fn sniff_shape(head: &[u8]) -> Shape {
    let text = String::from_utf8_lossy(head);
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') || body.starts_with('[') {
        return Shape::Json;
    }
    let upper = body.to_ascii_uppercase();
    if upper.starts_with("--")
        || upper.starts_with("/*")
        || upper.contains("INSERT INTO")
        || upper.contains("CREATE TABLE")
    {
        return Shape::Sql;
    }
    Shape::Csv
}

/// The service and shape of a file from its first bytes, if they tell.
pub fn detect(head: &[u8]) -> Option<Kind> {
    let shape = sniff_shape(head);
    let text = String::from_utf8_lossy(head);
    let has = |s: &str| text.contains(s);
    let service = match shape {
        Shape::Json if has("\"shortUrls\"") => Service::Shlink,
        Shape::Json if has("\"long_url\"") || has("\"custom_bitlinks\"") => Service::Bitly,
        Shape::Json if has("\"visit_count\"") || (has("\"address\"") && has("\"target\"")) => {
            Service::Kutt
        }
        Shape::Json if has("\"links\"") || has("\"spaces\"") || has("\"version\"") => {
            Service::Linkdeck
        }
        Shape::Json => return None,
        // A dump's `yourls_log` comes first and may fill the head before `yourls_url` shows.
        Shape::Sql
            if {
                let lower = text.to_ascii_lowercase();
                lower.contains("keyword")
                    || lower.contains("shorturl") && lower.contains("click_time")
            } =>
        {
            Service::Yourls
        }
        Shape::Sql => return None,
        Shape::Csv => {
            let first = text
                .trim_start_matches('\u{feff}')
                .lines()
                .next()
                .unwrap_or("");
            let header: Vec<String> = first
                .split(',')
                .map(|c| c.trim().trim_matches('"').to_ascii_lowercase())
                .collect();
            let named = |c: &str| header.iter().any(|h| h == c);
            if named("shortcode") && named("longurl") {
                Service::Shlink
            } else if named("keyword") && named("url") || yourls::looks_like_headerless(&text) {
                Service::Yourls
            } else if named("url") {
                Service::Linkdeck
            } else {
                return None;
            }
        }
    };
    Some(Kind { service, shape })
}

/// What the readers need beyond the file.
pub struct ReadOptions {
    /// The zone expiry dates are written in (the profile's).
    pub timezone: TimeZone,
    /// Reads the User-Agents of a click log (YOURLS's) as the server would.
    pub agents: AgentReader,
    /// YOURLS's click log, read from a file of its own (`--log`) before the links.
    pub yourls_log: Option<ClickLog>,
}

/// A row read from a foreign file, before the import's options apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignRow {
    pub place: Place,
    /// `domain` holds a host name (`s.test`), or nothing for the service's main domain.
    pub record: LinkRecord,
    pub tags: Vec<String>,
}

/// What a reader hands out.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    Row(Box<ForeignRow>),
    /// A row that could not be read (its errors keyed by field).
    Invalid(Place, FieldErrors),
    /// The file cannot be read further.
    Broken(FormatError),
}

impl Read {
    fn invalid(place: Place, field: &str, message: impl Into<String>) -> Read {
        let mut e = FieldErrors::default();
        e.add(field, message);
        Read::Invalid(place, e)
    }
}

/// What an import from another service left behind, by what it is and how many links had it.
/// Shared by the reader (on its thread) and whoever reports at the end.
#[derive(Debug, Clone, Default)]
pub struct Dropped(Arc<Mutex<BTreeMap<&'static str, usize>>>);

impl Dropped {
    pub fn note(&self, what: &'static str) {
        self.add(what, 1);
    }

    /// Notes `what` for `links` links at once (none: nothing is noted).
    pub fn add(&self, what: &'static str, links: usize) {
        if links == 0 {
            return;
        }
        *self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(what)
            .or_default() += links;
    }

    /// What was dropped, and from how many links.
    pub fn entries(&self) -> Vec<(&'static str, usize)> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect()
    }
}

/// Rows of a file of `kind`. A linkdeck export is read by [`super::read`] instead.
pub fn rows(
    kind: Kind,
    input: Box<dyn BufRead + Send>,
    opts: ReadOptions,
    dropped: Dropped,
) -> Box<dyn Iterator<Item = Read> + Send> {
    match (kind.service, kind.shape) {
        (Service::Bitly, _) => Box::new(bitly::rows(input, dropped)),
        (Service::Yourls, Shape::Sql) => Box::new(yourls::sql_rows(
            input,
            dropped,
            opts.yourls_log,
            opts.agents,
        )),
        (Service::Yourls, _) => Box::new(yourls::csv_rows(input, dropped, opts.yourls_log)),
        (Service::Shlink, Shape::Json) => Box::new(shlink::json_rows(input, opts, dropped)),
        (Service::Shlink, _) => Box::new(shlink::csv_rows(input, dropped)),
        (Service::Kutt, _) => Box::new(kutt::rows(input, opts, dropped)),
        (Service::Linkdeck, _) => Box::new(std::iter::once(Read::Broken(FormatError {
            line: None,
            message: "is a linkdeck export; it is read by the linkdeck importer".into(),
        }))),
    }
}

/// Elements of the JSON array at `path`, parsed as `T`; a bad element is an invalid row, a
/// broken file ends the stream.
fn json_elements<T: serde::de::DeserializeOwned>(
    input: Box<dyn BufRead + Send>,
    path: &'static [&'static str],
    capture: &'static [&'static str],
    what: &'static str,
) -> impl Iterator<Item = Result<JsonItem<T>, Read>> {
    scan::JsonArrays::new(input, path, capture).map(move |event| match event {
        Err(e) => Err(Read::Broken(e)),
        Ok(scan::Event::Sibling { bytes, .. }) => Ok(JsonItem::Sibling(bytes)),
        Ok(scan::Event::Element { line, row, bytes }) => {
            let place = Place { line, row };
            serde_json::from_slice::<T>(&bytes)
                .map(|v| JsonItem::Element(place, v))
                .map_err(|e| {
                    let message = super::json::serde_message(&e);
                    Read::invalid(place, "record", format!("is not a valid {what}: {message}"))
                })
        }
    })
}

enum JsonItem<T> {
    Element(Place, T),
    /// A value captured beside the list (its key is the only one asked for).
    Sibling(Vec<u8>),
}

/// The host and path of a short URL (`https://s.test/abc` → `s.test`, `abc`); a bare
/// `host/path` (as Bitly's ids are) is read the same way.
fn host_and_alias(short: &str) -> Option<(String, String)> {
    let text = short.trim();
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("https://{text}")
    };
    let url = url::Url::parse(&with_scheme).ok()?;
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str()?),
        None => url.host_str()?.to_owned(),
    };
    let alias = url.path().trim_matches('/').to_owned();
    Some((host.to_ascii_lowercase(), alias))
}

/// An expiry instant as the record's date and time fields, in `tz` (to the minute, as the
/// service stores them).
fn expiry_fields(at: Timestamp, tz: &TimeZone, record: &mut LinkRecord) {
    let (date, time) = format_expiry_input(at, tz);
    record.expiration_date = Some(date);
    record.expiration_time = Some(time);
}

/// A non-empty, trimmed text.
fn text(s: Option<&str>) -> Option<String> {
    s.map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests;
