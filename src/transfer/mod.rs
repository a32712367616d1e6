//! Import and export files: the portable form of spaces and links, in JSON and CSV. This module
//! only reads and writes the formats; the commands in `cli` move the records to and from a
//! backend. The formats are documented in docs/IMPORT-EXPORT.md.
//!
//! Records refer to spaces and domains by name, not id, so a file moves between databases.
//! Passwords cannot be exported (only their hashes exist); an export says which links had one.

mod bounded_csv;
mod csv;
pub mod foreign;
mod formula;
mod json;
pub mod limits;
mod record;
mod rules;

use std::fmt;
use std::path::Path;

use crate::domain::Place;

pub use self::csv::{CsvRow, CsvRows, CsvWriter, read_csv, stream_csv};
pub use self::json::{JsonHead, JsonLinks, JsonWriter, read_json, stream_json};
pub use record::{ImportLink, LinkRecord, Scalar, SpaceRecord, TrafficRecord};

/// The version written into JSON exports and accepted on import.
pub const FORMAT_VERSION: u32 = 1;

/// The file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    Csv,
}

impl Format {
    /// The format a file name implies (`.json`, `.csv`, in any case).
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Csv => "CSV",
        })
    }
}

/// A record and where in the file it starts: its line, and its place on that line when
/// records share it (a JSON file written on one line).
#[derive(Debug, Clone, PartialEq)]
pub struct Numbered<T> {
    pub line: usize,
    /// The record's place among those starting on its line, from the second on.
    pub row: Option<usize>,
    pub record: T,
}

impl<T> Numbered<T> {
    /// A record alone on its line (or the first on it).
    pub fn at(line: usize, record: T) -> Self {
        Numbered {
            line,
            row: None,
            record,
        }
    }

    /// Where the record is, as errors name it (`line 12`, `line 1, row 3`).
    pub fn place(&self) -> Place {
        Place {
            line: self.line,
            row: self.row,
        }
    }
}

/// Everything read from an import file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bundle {
    pub spaces: Vec<Numbered<SpaceRecord>>,
    pub links: Vec<Numbered<LinkRecord>>,
    /// A sample file's "now": its traffic is moved forward to the import's (see
    /// [`Bundle::bring_traffic_forward`]).
    pub traffic_as_of: Option<jiff::Timestamp>,
}

impl Bundle {
    /// Moves the traffic of a sample file (one that says `traffic_as_of`) forward by whole
    /// days, so that it ends within the day before `now`. Other files keep their times.
    pub fn bring_traffic_forward(&mut self, now: jiff::Timestamp) {
        let Some(shift) = traffic_shift(self.traffic_as_of, now) else {
            return;
        };
        for link in &mut self.links {
            link.record.shift_traffic(shift);
        }
    }
}

/// How far a sample file's traffic moves forward: whole days (so its hours stay hours of the
/// day), as many as end it within the day before `now`. Whole weeks kept its weekdays but left
/// up to six empty days at the end: imported on some days, the demo's last week was nearly
/// blank. `None` for other files.
pub fn traffic_shift(
    as_of: Option<jiff::Timestamp>,
    now: jiff::Timestamp,
) -> Option<jiff::SignedDuration> {
    let day = 86_400;
    let days = (now.as_second() - as_of?.as_second()).div_euclid(day);
    (days > 0).then(|| jiff::SignedDuration::from_secs(days * day))
}

/// A file that cannot be read as the format it claims: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub line: Option<usize>,
    pub message: String,
}

impl FormatError {
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        FormatError {
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}: {}", Place::line(line), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for FormatError {}

/// Reads `bytes` as `format`.
pub fn read(bytes: &[u8], format: Format) -> Result<Bundle, FormatError> {
    match format {
        Format::Json => {
            let text = std::str::from_utf8(bytes).map_err(|e| FormatError {
                line: Some(line_of_offset(bytes, e.valid_up_to())),
                message: "is not UTF-8 text".into(),
            })?;
            read_json(text)
        }
        Format::Csv => read_csv(bytes),
    }
}

fn line_of_offset(bytes: &[u8], offset: usize) -> usize {
    bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
