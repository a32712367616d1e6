//! The JSON format: `{"version": 1, "spaces": [...], "links": [...]}`, one record per line when
//! written, so files diff well and errors point at a record's line.
//!
//! An import reads the file as a stream ([`stream_json`]): everything before `links` (the
//! version, the spaces, a sample file's `traffic_as_of`, as linkdeck writes them) at once, then
//! the links one at a time, so memory does not grow with the file.

use std::io::{self, BufRead, Write};

use serde::Deserialize;

use super::foreign::scan::{Event, JsonArrays};
use super::{Bundle, FORMAT_VERSION, FormatError, LinkRecord, Numbered, SpaceRecord};
use crate::domain::name_excerpt;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJson {
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    spaces: Vec<SpaceRecord>,
    #[serde(default)]
    links: Vec<LinkRecord>,
    #[serde(default)]
    traffic_as_of: Option<jiff::Timestamp>,
}

/// Reads an export file; a syntax or shape error names its line.
pub fn read_json(text: &str) -> Result<Bundle, FormatError> {
    // serde would also read a struct from an array; a file must be an object.
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('[') {
        let offset = text.len() - body.len();
        return Err(FormatError::at(
            text[..offset].matches('\n').count() + 1,
            "must be a JSON object with \"spaces\" and \"links\" arrays, not an array",
        ));
    }
    let file: FileJson = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| serde_error(&e, 1))?;
    check_version(file.version)?;
    let space_lines = element_lines(text, "spaces", file.spaces.len());
    let link_lines = element_lines(text, "links", file.links.len());
    Ok(Bundle {
        spaces: number(file.spaces, space_lines),
        links: number(file.links, link_lines),
        traffic_as_of: file.traffic_as_of,
    })
}

/// A serde error in text that starts on line `first` of the file, at its line in the file.
fn serde_error(e: &serde_json::Error, first: usize) -> FormatError {
    FormatError {
        line: (e.line() > 0).then(|| first + e.line() - 1),
        message: format!("{} (column {})", serde_message(e), e.column()),
    }
}

/// What serde_json says is wrong, without the place it adds (" at line L column C": the line
/// is reported apart), and with what it quotes from the file — a key, a string — shown as an
/// excerpt.
pub(super) fn serde_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let message = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(m, _)| m);
    excerpt_quoted(message)
}

/// `message` with each run between backticks or double quotes shown as an [`excerpt`]; what
/// is left is cut too, should a quote have been left open.
fn excerpt_quoted(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        let inner = &rest[open + 1..];
        let Some(close) = inner.find(quote) else {
            break;
        };
        out.push_str(&rest[..=open]);
        out.push_str(&name_excerpt(&inner[..close]));
        out.push(quote);
        rest = &inner[close + 1..];
    }
    out.push_str(&rest.chars().take(MESSAGE_MAX).collect::<String>());
    out
}

/// The characters of a parser's own words kept beside the excerpts it quotes.
const MESSAGE_MAX: usize = 400;

fn check_version(version: Option<u32>) -> Result<(), FormatError> {
    match version.filter(|v| *v != FORMAT_VERSION) {
        Some(v) => Err(FormatError {
            line: None,
            message: format!(
                "format version {v} is not supported (this linkdeck reads {FORMAT_VERSION})"
            ),
        }),
        None => Ok(()),
    }
}

/// What comes before the links of an export file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonHead {
    pub spaces: Vec<Numbered<SpaceRecord>>,
    /// A sample file's "now" (see [`Bundle::bring_traffic_forward`]).
    pub traffic_as_of: Option<jiff::Timestamp>,
}

/// The keys an export file may hold besides `links`; they must come before it.
const HEAD_KEYS: &[&str] = &["version", "spaces", "traffic_as_of"];

/// Reads an export file's head, and gives its links as a stream. A file that is not valid
/// further on ends the stream with its error (and nothing after it).
pub fn stream_json<R: BufRead>(mut input: R) -> Result<(JsonHead, JsonLinks<R>), FormatError> {
    let bom = "\u{feff}".as_bytes();
    let io_error = |e: io::Error| FormatError {
        line: None,
        message: format!("cannot be read: {e}"),
    };
    if input.fill_buf().map_err(io_error)?.starts_with(bom) {
        input.consume(bom.len());
    }
    let mut arrays = JsonArrays::strict(input, &["links"], HEAD_KEYS);
    let mut head = JsonHead::default();
    let mut version = None;
    let first = loop {
        match arrays.next().transpose()? {
            Some(Event::Sibling { key, line, bytes }) => match key.as_str() {
                "version" => {
                    version = serde_json::from_slice(&bytes).map_err(|e| serde_error(&e, line))?;
                }
                "spaces" => head.spaces = spaces(&bytes, line)?,
                _ => {
                    head.traffic_as_of =
                        serde_json::from_slice(&bytes).map_err(|e| serde_error(&e, line))?;
                }
            },
            other => break other,
        }
    };
    check_version(version)?;
    Ok((
        head,
        JsonLinks {
            arrays,
            first,
            done: false,
        },
    ))
}

/// The spaces array, starting on line `line`, each numbered by its line.
fn spaces(bytes: &[u8], line: usize) -> Result<Vec<Numbered<SpaceRecord>>, FormatError> {
    let records: Vec<SpaceRecord> =
        serde_json::from_slice(bytes).map_err(|e| serde_error(&e, line))?;
    let text = format!("{{\"spaces\":{}}}", String::from_utf8_lossy(bytes));
    let lines = element_lines(&text, "spaces", records.len())
        .into_iter()
        .map(|l| l + line - 1)
        .collect();
    Ok(number(records, lines))
}

/// The links of an export file, one at a time (see [`stream_json`]).
pub struct JsonLinks<R> {
    arrays: JsonArrays<R>,
    /// The first link, read with the head.
    first: Option<Event>,
    done: bool,
}

impl<R: BufRead> Iterator for JsonLinks<R> {
    type Item = Result<Numbered<LinkRecord>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let event = match self.first.take() {
            Some(event) => Ok(event),
            None => self.arrays.next()?,
        };
        let read = match event {
            Ok(Event::Element { line, row, bytes }) => serde_json::from_slice(&bytes)
                .map(|record| Numbered { line, row, record })
                .map_err(|e| serde_error(&e, line)),
            // The strict reader hands out the head's keys only before the links.
            Ok(Event::Sibling { line, key, .. }) => Err(FormatError::at(
                line,
                format!("\"{key}\" must come before \"links\""),
            )),
            Err(e) => Err(e),
        };
        self.done = read.is_err();
        Some(read)
    }
}

fn number<T>(records: Vec<T>, lines: Vec<usize>) -> Vec<Numbered<T>> {
    records
        .into_iter()
        .zip(lines)
        .map(|(record, line)| Numbered::at(line, record))
        .collect()
}

/// The line on which each element of the top-level array `key` starts. The text has already
/// parsed as JSON, so this scanner only tracks strings and nesting. Should it ever disagree with
/// the parser on the count, records are numbered from 1 instead.
fn element_lines(text: &str, key: &str, expected: usize) -> Vec<usize> {
    let found = scan_element_lines(text, key);
    if found.len() == expected {
        found
    } else {
        (1..=expected).collect()
    }
}

fn scan_element_lines(text: &str, key: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let (mut i, mut line, mut depth) = (0, 1, 0usize);
    let mut last_key: Option<&str> = None;
    let mut in_target = false;
    let mut expect_element = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' {
            line += 1;
        }
        if b.is_ascii_whitespace() || b == b':' {
            i += 1;
            continue;
        }
        if in_target && depth == 2 && expect_element && b != b']' {
            lines.push(line);
            expect_element = false;
        }
        match b {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 {
                    last_key = text.get(start..i.min(text.len()));
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 2 && b == b'[' && last_key == Some(key) {
                    in_target = true;
                    expect_element = true;
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if in_target && depth == 1 {
                    return lines;
                }
            }
            b',' => {
                if in_target && depth == 2 {
                    expect_element = true;
                }
                if depth == 1 {
                    last_key = None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    lines
}

/// Writes an export file record by record, so exports of any size run in constant memory.
pub struct JsonWriter<W: Write> {
    out: W,
    section: Section,
    first: bool,
}

#[derive(PartialEq, Eq)]
enum Section {
    Spaces,
    Links,
}

impl<W: Write> JsonWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        write!(out, "{{\n  \"version\": {FORMAT_VERSION},\n  \"spaces\": [")?;
        Ok(JsonWriter {
            out,
            section: Section::Spaces,
            first: true,
        })
    }

    /// What has been written so far (a request body being built, say).
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Spaces must all come before the first link.
    pub fn space(&mut self, space: &SpaceRecord) -> io::Result<()> {
        debug_assert!(self.section == Section::Spaces, "spaces after links");
        self.record(space)
    }

    pub fn link(&mut self, link: &LinkRecord) -> io::Result<()> {
        if self.section == Section::Spaces {
            self.close_array()?;
            write!(self.out, ",\n  \"links\": [")?;
            self.section = Section::Links;
            self.first = true;
        }
        self.record(link)
    }

    fn record(&mut self, record: &impl serde::Serialize) -> io::Result<()> {
        let sep = if self.first { "" } else { "," };
        self.first = false;
        write!(self.out, "{sep}\n    ")?;
        serde_json::to_writer(&mut self.out, record).map_err(io::Error::other)
    }

    fn close_array(&mut self) -> io::Result<()> {
        if self.first {
            write!(self.out, "]")
        } else {
            write!(self.out, "\n  ]")
        }
    }

    /// Closes the document and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        if self.section == Section::Spaces {
            self.close_array()?;
            write!(self.out, ",\n  \"links\": [")?;
            self.first = true;
        }
        self.close_array()?;
        writeln!(self.out, "\n}}")?;
        self.out.flush()?;
        Ok(self.out)
    }
}
