//! The JSON format: `{"version": 1, "spaces": [...], "links": [...]}`, one record per line when
//! written, so files diff well and errors point at a record's line.

use std::io::{self, Write};

use serde::Deserialize;

use super::{Bundle, FORMAT_VERSION, FormatError, LinkRecord, Numbered, SpaceRecord};

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
    let file: FileJson =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| {
            // serde_json's message ends with " at line L column C"; the line is reported separately.
            let full = e.to_string();
            let message = full
                .rsplit_once(" at line ")
                .map_or(full.as_str(), |(m, _)| m)
                .to_owned();
            FormatError {
                line: (e.line() > 0).then_some(e.line()),
                message: format!("{message} (column {})", e.column()),
            }
        })?;
    if let Some(v) = file.version.filter(|v| *v != FORMAT_VERSION) {
        return Err(FormatError {
            line: None,
            message: format!(
                "format version {v} is not supported (this linkdeck reads {FORMAT_VERSION})"
            ),
        });
    }
    let space_lines = element_lines(text, "spaces", file.spaces.len());
    let link_lines = element_lines(text, "links", file.links.len());
    Ok(Bundle {
        spaces: number(file.spaces, space_lines),
        links: number(file.links, link_lines),
        traffic_as_of: file.traffic_as_of,
    })
}

fn number<T>(records: Vec<T>, lines: Vec<usize>) -> Vec<Numbered<T>> {
    records
        .into_iter()
        .zip(lines)
        .map(|(record, line)| Numbered { line, record })
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
