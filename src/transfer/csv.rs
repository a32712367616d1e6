//! The CSV format: one row per link, with a header row naming the columns (any order, any
//! subset that includes `url`). Spaces travel in the `space` and `space_color` columns.
//!
//! An import reads the file as a stream ([`stream_csv`]), a row at a time, each row bounded
//! (see `bounded_csv.rs`). Every cell is written so that a spreadsheet opens it as text, and
//! read back as it was (see `formula.rs`).

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};

use ::csv::{QuoteStyle, ReaderBuilder, StringRecord, Writer, WriterBuilder};

use super::bounded_csv::BoundedCsv;
use super::formula;
use super::record::PasswordField;
use super::rules::{decode_keyed, decode_values, encode_keyed, encode_values};
use super::{Bundle, FormatError, LinkRecord, Numbered, Scalar, SpaceRecord};
use crate::domain::{
    LinkField, Platform, country_by_code, name_excerpt, space_name_key, tags_text,
};

use LinkField as F;

/// A column: one of a link's fields, or the colour of the link's space (a space travels in the
/// rows of its links).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Column {
    Link(LinkField),
    SpaceColor,
}

impl Column {
    fn name(self) -> &'static str {
        match self {
            Column::Link(field) => field.name(),
            Column::SpaceColor => "space_color",
        }
    }
}

/// The columns, in the order an export writes them.
const COLUMNS: [Column; 28] = {
    use Column::Link as L;
    [
        L(F::Url),
        L(F::Alias),
        L(F::Title),
        L(F::Space),
        Column::SpaceColor,
        L(F::Domain),
        L(F::Disabled),
        L(F::Public),
        L(F::Password),
        L(F::ExpirationDate),
        L(F::ExpirationTime),
        L(F::ExpirationClicks),
        L(F::ExpirationUrl),
        L(F::TargetType),
        L(F::Geo),
        L(F::Platform),
        L(F::Rotation),
        L(F::Tags),
        L(F::Clicks),
        L(F::CreatedAt),
        // The options after the columns of before, so older files' columns keep their places.
        L(F::ForwardQuery),
        L(F::ForwardPath),
        L(F::AllowIndexing),
        L(F::PreviewTitle),
        L(F::PreviewDescription),
        L(F::PreviewImage),
        L(F::Rules),
        L(F::Previews),
    ]
};

/// A row of a CSV file: its link, and the space it declares when it is the first row to name
/// that space with a colour.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvRow {
    pub space: Option<Numbered<SpaceRecord>>,
    pub link: Numbered<LinkRecord>,
}

/// Reads a whole CSV file held in memory (the rows of [`stream_csv`], gathered).
pub fn read_csv(bytes: &[u8]) -> Result<Bundle, FormatError> {
    let mut bundle = Bundle::default();
    for row in stream_csv(bytes)? {
        let row = row?;
        bundle.spaces.extend(row.space);
        bundle.links.push(row.link);
    }
    Ok(bundle)
}

/// Reads a CSV file's header row, and gives its rows as a stream: memory does not grow with
/// the file (it holds one row, and the names of the spaces declared so far). A file that is
/// not valid further on ends the stream with its error (and nothing after it).
pub fn stream_csv<R: Read>(input: R) -> Result<CsvRows<R>, FormatError> {
    let mut reader = BoundedCsv::new(
        ReaderBuilder::new().has_headers(true).flexible(false),
        input,
    );
    let headers = reader.headers()?;
    let index = column_index(&headers)?;
    Ok(CsvRows {
        reader,
        record: StringRecord::new(),
        index,
        colored: HashSet::new(),
        done: false,
    })
}

/// Where each known column is, from the header row.
fn column_index(headers: &StringRecord) -> Result<HashMap<Column, usize>, FormatError> {
    let mut index: HashMap<Column, usize> = HashMap::new();
    for (i, name) in headers.iter().enumerate() {
        let name = name.trim();
        let known = COLUMNS
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let names: Vec<&str> = COLUMNS.iter().map(|c| c.name()).collect();
                FormatError::at(
                    1,
                    format!(
                        "unknown column \"{}\" (known columns: {})",
                        name_excerpt(name),
                        names.join(", ")
                    ),
                )
            })?;
        if index.insert(known, i).is_some() {
            return Err(FormatError::at(
                1,
                format!("column \"{}\" appears twice", known.name()),
            ));
        }
    }
    if !index.contains_key(&Column::Link(F::Url)) {
        return Err(FormatError::at(
            1,
            format!("the header row has no \"{}\" column", F::Url.name()),
        ));
    }
    Ok(index)
}

/// The rows of a CSV file, one at a time (see [`stream_csv`]).
pub struct CsvRows<R> {
    reader: BoundedCsv<R>,
    /// The row being read, its buffer kept from row to row.
    record: StringRecord,
    index: HashMap<Column, usize>,
    /// Name keys of the spaces a row has declared.
    colored: HashSet<String>,
    done: bool,
}

impl<R: Read> Iterator for CsvRows<R> {
    type Item = Result<CsvRow, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut record = std::mem::take(&mut self.record);
        let read = match self.reader.read(&mut record) {
            Ok(false) => None,
            Ok(true) => Some(self.row(&record)),
            Err(e) => Some(Err(e)),
        };
        self.record = record;
        self.done = read.as_ref().is_none_or(Result::is_err);
        read
    }
}

impl<R> CsvRows<R> {
    fn row(&mut self, row: &StringRecord) -> Result<CsvRow, FormatError> {
        let line = row
            .position()
            .map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
        let index = &self.index;
        let cell = |column: Column| cell(row, index, column);
        let field = |field: LinkField| cell(Column::Link(field));
        let record = LinkRecord {
            url: field(F::Url),
            alias: field(F::Alias),
            title: field(F::Title),
            clicks: field(F::Clicks).map(Scalar::Text),
            previews: field(F::Previews).map(Scalar::Text),
            created_at: field(F::CreatedAt),
            space: field(F::Space),
            domain: field(F::Domain),
            disabled: field(F::Disabled).map(Scalar::Text),
            public: field(F::Public).map(Scalar::Text),
            password: match field(F::Password) {
                None => None,
                Some(text) => Some(PasswordField::Had(informational_flag(&text).ok_or_else(
                    || {
                        FormatError::at(
                            line,
                            format!(
                                "{}: a CSV file only says whether a link had a password \
                                 (true/false); import passwords from JSON instead",
                                F::Password.name()
                            ),
                        )
                    },
                )?)),
            },
            expiration_date: field(F::ExpirationDate),
            expiration_time: field(F::ExpirationTime),
            expiration_clicks: field(F::ExpirationClicks).map(Scalar::Text),
            expiration_url: field(F::ExpirationUrl),
            target_type: field(F::TargetType).map(Scalar::Text),
            geo: field(F::Geo).map(|c| decode_keyed(&c, |k| country_by_code(k).is_some())),
            platform: field(F::Platform)
                .map(|c| decode_keyed(&c, |k| Platform::parse(k).is_some())),
            rotation: field(F::Rotation).map(|c| decode_values(&c)),
            tags: field(F::Tags).map(|c| super::record::tags_in_text(&c)),
            forward_query: field(F::ForwardQuery).map(Scalar::Text),
            forward_path: field(F::ForwardPath).map(Scalar::Text),
            allow_indexing: field(F::AllowIndexing).map(Scalar::Text),
            preview_title: field(F::PreviewTitle),
            preview_description: field(F::PreviewDescription),
            preview_image: field(F::PreviewImage),
            rules: field(F::Rules).map(|c| {
                c.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect()
            }),
            traffic: None,
        };
        let mut space = None;
        if let (Some(name), Some(color)) = (&record.space, cell(Column::SpaceColor)) {
            // The first row naming a space with a colour defines it.
            if self.colored.insert(space_name_key(name)) {
                space = Some(Numbered::at(
                    line,
                    SpaceRecord {
                        name: name.clone(),
                        color: Scalar::Text(color),
                    },
                ));
            }
        }
        Ok(CsvRow {
            space,
            link: Numbered::at(line, record),
        })
    }
}

/// The non-empty, trimmed text of a column, or `None`; a cell written so that a spreadsheet
/// would not run it gives back the text it was written from.
fn cell(row: &StringRecord, index: &HashMap<Column, usize>, column: Column) -> Option<String> {
    let i = *index.get(&column)?;
    row.get(i)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| formula::from_cell(s).to_owned())
}

fn informational_flag(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Some(true),
        "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Writes links as CSV rows, header first.
pub struct CsvWriter<W: Write> {
    out: Writer<W>,
    colors: HashMap<String, String>,
}

impl<W: Write> CsvWriter<W> {
    /// `spaces` supplies each space's colour for the `space_color` column.
    pub fn new(mut out: W, spaces: &[SpaceRecord]) -> Result<Self, ::csv::Error> {
        // The header's names need no quotes; every cell after it is quoted, so that a
        // spreadsheet splitting on `;` or `,` keeps a neutralised cell whole.
        out.write_all(COLUMNS.map(Column::name).join(",").as_bytes())?;
        out.write_all(b"\n")?;
        let out = WriterBuilder::new()
            .quote_style(QuoteStyle::Always)
            .from_writer(out);
        Ok(CsvWriter {
            out,
            colors: spaces
                .iter()
                .map(|s| (s.name.clone(), s.color.to_input()))
                .collect(),
        })
    }

    /// Every cell is written so that a spreadsheet shows it as text (see `formula.rs`).
    pub fn link(&mut self, link: &LinkRecord) -> Result<(), ::csv::Error> {
        self.out
            .write_record(COLUMNS.map(|column| formula::to_cell(self.text(link, column))))
    }

    /// What `link` writes in `column`.
    fn text(&self, link: &LinkRecord, column: Column) -> String {
        let text = |s: &Option<String>| s.clone().unwrap_or_default();
        let scalar = |s: &Option<Scalar>| match s {
            Some(Scalar::Bool(b)) => b.to_string(),
            Some(other) => other.to_input(),
            None => String::new(),
        };
        let field = match column {
            Column::Link(field) => field,
            Column::SpaceColor => {
                return link
                    .space
                    .as_ref()
                    .and_then(|s| self.colors.get(s))
                    .cloned()
                    .unwrap_or_default();
            }
        };
        match field {
            F::Url => text(&link.url),
            F::Alias => text(&link.alias),
            F::Title => text(&link.title),
            F::Space => text(&link.space),
            F::Domain => text(&link.domain),
            F::Disabled => scalar(&link.disabled),
            F::Public => scalar(&link.public),
            F::Password => match &link.password {
                Some(PasswordField::Had(b)) => b.to_string(),
                // A password given in plain text is never written out.
                Some(PasswordField::Set(_)) => "true".into(),
                None => "false".into(),
            },
            F::ExpirationDate => text(&link.expiration_date),
            F::ExpirationTime => text(&link.expiration_time),
            F::ExpirationClicks => scalar(&link.expiration_clicks),
            F::ExpirationUrl => text(&link.expiration_url),
            F::TargetType => scalar(&link.target_type),
            F::Geo => link.geo.as_deref().map(encode_keyed).unwrap_or_default(),
            F::Platform => link
                .platform
                .as_deref()
                .map(encode_keyed)
                .unwrap_or_default(),
            F::Rotation => link
                .rotation
                .as_deref()
                .map(encode_values)
                .unwrap_or_default(),
            F::Tags => link.tags.as_deref().map(tags_text).unwrap_or_default(),
            F::Clicks => scalar(&link.clicks),
            F::CreatedAt => text(&link.created_at),
            F::ForwardQuery => scalar(&link.forward_query),
            F::ForwardPath => scalar(&link.forward_path),
            F::AllowIndexing => scalar(&link.allow_indexing),
            F::PreviewTitle => text(&link.preview_title),
            F::PreviewDescription => text(&link.preview_description),
            F::PreviewImage => text(&link.preview_image),
            // One rule a line: a rule's text has no line break.
            F::Rules => link
                .rules
                .as_deref()
                .map(|r| r.join("\n"))
                .unwrap_or_default(),
            F::Previews => scalar(&link.previews),
        }
    }

    pub fn finish(self) -> Result<W, ::csv::Error> {
        self.out.into_inner().map_err(|e| e.into_error().into())
    }
}
