//! The CSV format: one row per link, with a header row naming the columns (any order, any
//! subset that includes `url`). Spaces travel in the `space` and `space_color` columns.

use std::collections::HashMap;
use std::io::Write;

use ::csv::{ReaderBuilder, StringRecord, Writer};

use super::record::PasswordField;
use super::rules::{decode_keyed, decode_values, encode_keyed, encode_values};
use super::{Bundle, FormatError, LinkRecord, Numbered, Scalar, SpaceRecord};
use crate::domain::{Platform, country_by_code, space_name_key};

/// The columns, in the order an export writes them.
pub const COLUMNS: [&str; 19] = [
    "url",
    "alias",
    "title",
    "space",
    "space_color",
    "domain",
    "disabled",
    "public",
    "password",
    "expiration_date",
    "expiration_time",
    "expiration_clicks",
    "expiration_url",
    "target_type",
    "geo",
    "platform",
    "rotation",
    "clicks",
    "created_at",
];

pub fn read_csv(bytes: &[u8]) -> Result<Bundle, FormatError> {
    let mut reader = ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(bytes);
    let headers = reader.headers().map_err(csv_error)?.clone();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, name) in headers.iter().enumerate() {
        let name = name.trim();
        let known = COLUMNS
            .iter()
            .find(|c| c.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                FormatError::at(
                    1,
                    format!(
                        "unknown column \"{name}\" (known columns: {})",
                        COLUMNS.join(", ")
                    ),
                )
            })?;
        if index.insert(known, i).is_some() {
            return Err(FormatError::at(
                1,
                format!("column \"{known}\" appears twice"),
            ));
        }
    }
    if !index.contains_key("url") {
        return Err(FormatError::at(1, "the header row has no \"url\" column"));
    }

    let mut bundle = Bundle::default();
    let mut colored: HashMap<String, ()> = HashMap::new();
    for row in reader.records() {
        let row = row.map_err(csv_error)?;
        let line = row
            .position()
            .map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
        let cell = |name: &str| cell(&row, &index, name);
        let record = LinkRecord {
            url: cell("url"),
            alias: cell("alias"),
            title: cell("title"),
            clicks: cell("clicks").map(Scalar::Text),
            created_at: cell("created_at"),
            space: cell("space"),
            domain: cell("domain"),
            disabled: cell("disabled").map(Scalar::Text),
            public: cell("public").map(Scalar::Text),
            password: match cell("password") {
                None => None,
                Some(text) => Some(PasswordField::Had(informational_flag(&text).ok_or_else(
                    || {
                        FormatError::at(
                            line,
                            "password: a CSV file only says whether a link had a password \
                             (true/false); import passwords from JSON instead",
                        )
                    },
                )?)),
            },
            expiration_date: cell("expiration_date"),
            expiration_time: cell("expiration_time"),
            expiration_clicks: cell("expiration_clicks").map(Scalar::Text),
            expiration_url: cell("expiration_url"),
            target_type: cell("target_type").map(Scalar::Text),
            geo: cell("geo").map(|c| decode_keyed(&c, |k| country_by_code(k).is_some())),
            platform: cell("platform").map(|c| decode_keyed(&c, |k| Platform::parse(k).is_some())),
            rotation: cell("rotation").map(|c| decode_values(&c)),
            traffic: None,
        };
        if let (Some(space), Some(color)) = (&record.space, cell("space_color")) {
            // The first row naming a space with a colour defines it.
            if colored.insert(space_name_key(space), ()).is_none() {
                bundle.spaces.push(Numbered {
                    line,
                    record: SpaceRecord {
                        name: space.clone(),
                        color: Scalar::Text(color),
                    },
                });
            }
        }
        bundle.links.push(Numbered { line, record });
    }
    Ok(bundle)
}

/// The non-empty, trimmed text of a column, or `None`.
fn cell(row: &StringRecord, index: &HashMap<&str, usize>, name: &str) -> Option<String> {
    let i = *index.get(name)?;
    row.get(i)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn informational_flag(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Some(true),
        "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

fn csv_error(e: ::csv::Error) -> FormatError {
    let line = e
        .position()
        .map(|p| usize::try_from(p.line()).unwrap_or(usize::MAX));
    let message = match e.kind() {
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("has {len} fields where the header has {expected_len}")
        }
        ::csv::ErrorKind::Utf8 { .. } => "is not UTF-8 text".to_owned(),
        _ => format!("is not valid CSV ({e})"),
    };
    FormatError { line, message }
}

/// Writes links as CSV rows, header first.
pub struct CsvWriter<W: Write> {
    out: Writer<W>,
    colors: HashMap<String, String>,
}

impl<W: Write> CsvWriter<W> {
    /// `spaces` supplies each space's colour for the `space_color` column.
    pub fn new(out: W, spaces: &[SpaceRecord]) -> Result<Self, ::csv::Error> {
        let mut out = Writer::from_writer(out);
        out.write_record(COLUMNS)?;
        Ok(CsvWriter {
            out,
            colors: spaces
                .iter()
                .map(|s| (s.name.clone(), s.color.to_input()))
                .collect(),
        })
    }

    pub fn link(&mut self, link: &LinkRecord) -> Result<(), ::csv::Error> {
        let text = |s: &Option<String>| s.clone().unwrap_or_default();
        let scalar = |s: &Option<Scalar>| match s {
            Some(Scalar::Bool(b)) => b.to_string(),
            Some(other) => other.to_input(),
            None => String::new(),
        };
        let space_color = link
            .space
            .as_ref()
            .and_then(|s| self.colors.get(s))
            .cloned()
            .unwrap_or_default();
        let password = match &link.password {
            Some(PasswordField::Had(b)) => b.to_string(),
            // A password given in plain text is never written out.
            Some(PasswordField::Set(_)) => "true".into(),
            None => "false".into(),
        };
        self.out.write_record([
            text(&link.url),
            text(&link.alias),
            text(&link.title),
            text(&link.space),
            space_color,
            text(&link.domain),
            scalar(&link.disabled),
            scalar(&link.public),
            password,
            text(&link.expiration_date),
            text(&link.expiration_time),
            scalar(&link.expiration_clicks),
            text(&link.expiration_url),
            scalar(&link.target_type),
            link.geo.as_deref().map(encode_keyed).unwrap_or_default(),
            link.platform
                .as_deref()
                .map(encode_keyed)
                .unwrap_or_default(),
            link.rotation
                .as_deref()
                .map(encode_values)
                .unwrap_or_default(),
            scalar(&link.clicks),
            text(&link.created_at),
        ])
    }

    pub fn finish(self) -> Result<W, ::csv::Error> {
        self.out.into_inner().map_err(|e| e.into_error().into())
    }
}
