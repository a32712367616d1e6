//! YOURLS: its `yourls_url` table (`keyword`, `url`, `title`, `timestamp`, `ip`, `clicks`; the
//! `yourls_` prefix is configurable, and YOURLS before 1.5 had no `title`), exported by
//! phpMyAdmin as CSV or dumped by `mysqldump` / `mariadb-dump`. YOURLS writes `timestamp` in
//! UTC (it shifts times only for display), so both are read as UTC. phpMyAdmin encloses every
//! value in `"`, writes `NULL` bare, escapes `"` by doubling it (or, set up so, with a
//! backslash), and adds the header row only when asked.

use std::io::BufRead;

use super::sqldump::{SqlDump, SqlRow};
use super::{Dropped, ForeignRow, Read, text};
use crate::domain::{FieldErrors, Place};
use crate::transfer::{FormatError, LinkRecord, Scalar};

/// The columns of `yourls_url`, in table order.
const COLUMNS: [&str; 6] = ["keyword", "url", "title", "timestamp", "ip", "clicks"];
/// Before YOURLS 1.5.
const COLUMNS_WITHOUT_TITLE: [&str; 5] = ["keyword", "url", "timestamp", "ip", "clicks"];

/// The table of links, whatever its prefix (`yourls_url`, `links_url`, `url`).
fn is_url_table(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "url" || name.ends_with("_url")
}

fn table_columns(_table: &str) -> Vec<String> {
    COLUMNS.iter().map(|c| (*c).to_owned()).collect()
}

/// A headerless phpMyAdmin CSV of `yourls_url`: quoted fields, a `YYYY-MM-DD HH:MM:SS` stamp.
pub fn looks_like_headerless(head: &str) -> bool {
    let first = head.lines().next().unwrap_or("");
    let fields: Vec<&str> = first.split("\",\"").collect();
    first.starts_with('"')
        && (fields.len() == 5 || fields.len() == 6)
        && fields.iter().any(|f| {
            let f = f.trim_matches('"');
            f.len() == 19 && f.as_bytes()[4] == b'-' && f.as_bytes()[10] == b' '
        })
}

/// A row of the table as the record it becomes.
fn record(place: Place, get: impl Fn(&str) -> Option<String>, dropped: &Dropped) -> Read {
    let mut errors = FieldErrors::default();
    let keyword = get("keyword");
    if keyword.is_none() {
        errors.add("keyword", "is missing");
    }
    if get("ip").is_some() {
        dropped.note("the creator's IP address (ip)");
    }
    if !errors.is_empty() {
        return Read::Invalid(place, errors);
    }
    let record = LinkRecord {
        url: get("url"),
        alias: keyword,
        title: get("title"),
        clicks: get("clicks").map(Scalar::Text),
        created_at: get("timestamp"),
        ..LinkRecord::default()
    };
    Read::Row(Box::new(ForeignRow {
        place,
        record,
        tags: Vec::new(),
    }))
}

pub fn sql_rows(input: Box<dyn BufRead + Send>, dropped: Dropped) -> impl Iterator<Item = Read> {
    let mut dump = SqlDump::new(input, is_url_table, table_columns);
    let mut ended = false;
    std::iter::from_fn(move || {
        if ended {
            return None;
        }
        match dump.next() {
            Some(Ok(row)) => Some(sql_record(&row, &dropped)),
            Some(Err(e)) => {
                ended = true;
                Some(Read::Broken(e))
            }
            None => {
                ended = true;
                (!dump.seen).then(|| {
                    Read::Broken(FormatError {
                        line: None,
                        message: "has no INSERT into a yourls_url table".into(),
                    })
                })
            }
        }
    })
}

fn sql_record(row: &SqlRow, dropped: &Dropped) -> Read {
    if row.columns.len() != row.values.len() {
        return Read::invalid(
            row.place,
            "row",
            format!(
                "has {} values for {} columns",
                row.values.len(),
                row.columns.len()
            ),
        );
    }
    record(row.place, |c| text(row.get(c)), dropped)
}

pub fn csv_rows(input: Box<dyn BufRead + Send>, dropped: Dropped) -> impl Iterator<Item = Read> {
    let mut input = input;
    // phpMyAdmin may escape quotes with a backslash instead of doubling them.
    let backslash = input
        .fill_buf()
        .map(|head| {
            let head = String::from_utf8_lossy(head);
            head.contains("\\\"") && !head.replace(",\"\",", ",").contains("\"\"")
        })
        .unwrap_or(false);
    let mut builder = csv::ReaderBuilder::new();
    builder.has_headers(false).flexible(true);
    if backslash {
        builder.double_quote(false).escape(Some(b'\\'));
    }
    let mut reader = builder.from_reader(super::scan::LfLines::new(input));
    let mut columns: Option<Vec<String>> = None;
    let mut ended = false;
    std::iter::from_fn(move || {
        loop {
            if ended {
                return None;
            }
            let mut record = csv::StringRecord::new();
            match reader.read_record(&mut record) {
                Ok(false) => {
                    ended = true;
                    return None;
                }
                Err(e) => {
                    ended = true;
                    let line = e.position().map(|p| p.line() as usize);
                    return Some(Read::Broken(FormatError {
                        line,
                        message: format!("is not valid CSV ({e})"),
                    }));
                }
                Ok(true) => {}
            }
            let line = record.position().map_or(0, |p| p.line() as usize);
            let place = Place::line(line);
            let cells: Vec<&str> = record.iter().collect();
            let cols = match &columns {
                Some(cols) => cols,
                None => {
                    let lower: Vec<String> = cells
                        .iter()
                        .map(|c| c.trim().trim_start_matches('\u{feff}').to_ascii_lowercase())
                        .collect();
                    if lower.iter().any(|c| c == "keyword") && lower.iter().any(|c| c == "url") {
                        columns = Some(lower);
                        continue;
                    }
                    let guessed: &[&str] = if cells.len() == 5 {
                        &COLUMNS_WITHOUT_TITLE
                    } else {
                        &COLUMNS
                    };
                    columns.insert(guessed.iter().map(|c| (*c).to_owned()).collect())
                }
            };
            if cells.len() != cols.len() {
                return Some(Read::invalid(
                    place,
                    "row",
                    format!(
                        "has {} fields where {} were expected",
                        cells.len(),
                        cols.len()
                    ),
                ));
            }
            let get = |name: &str| {
                let i = cols.iter().position(|c| c == name)?;
                // phpMyAdmin writes a NULL as the bare word NULL.
                text(cells.get(i).copied()).filter(|v| v != "NULL")
            };
            return Some(self::record(place, get, &dropped));
        }
    })
}
