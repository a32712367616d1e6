//! Shlink: the JSON of its REST API's short-URL list (`{"shortUrls": {"data": [...],
//! "pagination": {...}}}`, one page or many in one file) and the CSV its web client exports
//! (`createdAt, domain, shortCode, shortUrl, longUrl, title, tags, visits`, tags joined by `|`).
//! In the JSON, `domain` is null for the server's default domain; the CSV writes the host of
//! every short URL, the default domain's too, so the person importing names that host
//! (`--default-domain`).

use std::io::BufRead;

use serde::Deserialize;

use super::{
    Dropped, ForeignRow, JsonItem, Read, ReadOptions, expiry_fields, host_and_alias, json_elements,
    text,
};
use crate::domain::{Place, RuleInput, parse_instant};
use crate::transfer::bounded_csv::BoundedCsv;
use crate::transfer::{FormatError, LinkRecord, Scalar};

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ShortUrl {
    short_code: Option<String>,
    short_url: Option<String>,
    long_url: Option<String>,
    date_created: Option<String>,
    /// Shlink before 4.0.
    visits_count: Option<u64>,
    visits_summary: Option<VisitsSummary>,
    tags: Vec<String>,
    meta: Meta,
    domain: Option<String>,
    title: Option<String>,
    forward_query: Option<bool>,
    device_long_urls: Option<DeviceLongUrls>,
    has_redirect_rules: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct VisitsSummary {
    total: u64,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Meta {
    valid_since: Option<String>,
    valid_until: Option<String>,
    max_visits: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct DeviceLongUrls {
    android: Option<String>,
    ios: Option<String>,
    desktop: Option<String>,
}

pub fn json_rows(
    input: Box<dyn BufRead + Send>,
    opts: ReadOptions,
    dropped: Dropped,
) -> impl Iterator<Item = Read> {
    json_elements::<ShortUrl>(input, &["shortUrls", "data"], &[], "Shlink short URL").filter_map(
        move |item| match item {
            Err(read) => Some(read),
            Ok(JsonItem::Sibling(_)) => None,
            Ok(JsonItem::Element(place, short)) => Some(json_row(place, short, &opts, &dropped)),
        },
    )
}

fn json_row(place: Place, short: ShortUrl, opts: &ReadOptions, dropped: &Dropped) -> Read {
    let mut record = LinkRecord {
        url: text(short.long_url.as_deref()),
        alias: text(short.short_code.as_deref()),
        title: text(short.title.as_deref()),
        created_at: text(short.date_created.as_deref()),
        clicks: short
            .visits_summary
            .map(|v| v.total)
            .or(short.visits_count)
            .map(|n| Scalar::Number(i64::try_from(n).unwrap_or(i64::MAX))),
        domain: text(short.domain.as_deref()).map(|d| d.to_ascii_lowercase()),
        ..LinkRecord::default()
    };
    if let Some(until) = short.meta.valid_until.as_deref().filter(|s| !s.is_empty()) {
        match parse_instant(until) {
            Some(at) => expiry_fields(at, &opts.timezone, &mut record),
            None => {
                return Read::invalid(place, "meta.validUntil", "is not a date and time");
            }
        }
    }
    if let Some(max) = short.meta.max_visits.filter(|&m| m > 0) {
        record.expiration_clicks = Some(Scalar::Number(i64::try_from(max).unwrap_or(i64::MAX)));
    }
    if short.meta.valid_since.is_some() {
        dropped.note("the start of validity (meta.validSince)");
    }
    if short.forward_query == Some(false) {
        dropped.note("forwardQuery off (linkdeck always passes the query string on)");
    }
    if short.has_redirect_rules {
        dropped.note("redirect rules");
    }
    if let Some(devices) = short.device_long_urls {
        let mut rules = Vec::new();
        if let Some(url) = text(devices.android.as_deref()) {
            rules.push(RuleInput::new("Android", url));
        }
        if let Some(url) = text(devices.ios.as_deref()) {
            rules.push(RuleInput::new("iOS", url));
        }
        if text(devices.desktop.as_deref()).is_some() {
            dropped.note("the desktop long URL (deviceLongUrls.desktop)");
        }
        if !rules.is_empty() {
            record.target_type = Some(Scalar::Text("platform".into()));
            record.platform = Some(rules);
        }
    }
    if record.alias.is_none() {
        // Older answers may lack shortCode: take it from the short URL.
        record.alias = short
            .short_url
            .as_deref()
            .and_then(host_and_alias)
            .map(|(_, a)| a);
    }
    Read::Row(Box::new(ForeignRow {
        place,
        record,
        tags: short.tags,
    }))
}

pub fn csv_rows(input: Box<dyn BufRead + Send>, dropped: Dropped) -> impl Iterator<Item = Read> {
    let _ = &dropped;
    let mut reader = BoundedCsv::new(
        csv::ReaderBuilder::new().has_headers(true).flexible(false),
        super::scan::LfLines::new(input),
    );
    let header: Result<Vec<String>, FormatError> = reader.headers().map(|h| {
        h.iter()
            .map(|c| c.trim().trim_start_matches('\u{feff}').to_owned())
            .collect()
    });
    let mut row = csv::StringRecord::new();
    let mut ended = false;
    std::iter::from_fn(move || {
        if ended {
            return None;
        }
        let columns = match &header {
            Ok(c) => c,
            Err(e) => {
                ended = true;
                return Some(Read::Broken(e.clone()));
            }
        };
        if !columns.iter().any(|c| c == "longUrl") {
            ended = true;
            return Some(Read::Broken(FormatError::at(
                1,
                "the header row has no \"longUrl\" column (is this Shlink's short URL export?)",
            )));
        }
        match reader.read(&mut row) {
            Ok(false) => {
                ended = true;
                None
            }
            Err(e) => {
                ended = true;
                Some(Read::Broken(e))
            }
            Ok(true) => {
                let place = Place::line(row.position().map_or(0, |p| p.line() as usize));
                let get = |name: &str| {
                    columns
                        .iter()
                        .position(|c| c == name)
                        .and_then(|i| text(row.get(i)))
                };
                let from_short = get("shortUrl").as_deref().and_then(host_and_alias);
                let domain = get("domain")
                    .map(|d| d.to_ascii_lowercase())
                    .or_else(|| from_short.as_ref().map(|(h, _)| h.clone()));
                let record = LinkRecord {
                    url: get("longUrl"),
                    alias: get("shortCode").or_else(|| from_short.map(|(_, a)| a)),
                    title: get("title"),
                    created_at: get("createdAt"),
                    clicks: get("visits").map(Scalar::Text),
                    domain,
                    ..LinkRecord::default()
                };
                let tags = get("tags")
                    .map(|t| {
                        t.split('|')
                            .map(str::trim)
                            .filter(|t| !t.is_empty())
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                Some(Read::Row(Box::new(ForeignRow {
                    place,
                    record,
                    tags,
                })))
            }
        }
    })
}
