//! YOURLS: its `yourls_url` table (`keyword`, `url`, `title`, `timestamp`, `ip`, `clicks`; the
//! `yourls_` prefix is configurable, and YOURLS before 1.5 had no `title`), exported by
//! phpMyAdmin as CSV or dumped by `mysqldump` / `mariadb-dump`. YOURLS writes `timestamp` in
//! UTC (it shifts times only for display), so both are read as UTC. phpMyAdmin encloses every
//! value in `"`, writes `NULL` bare, escapes `"` by doubling it (or, set up so, with a
//! backslash), and adds the header row only when asked.
//!
//! Clicks come from `yourls_log` (see [`super::yourls_log`]): from the same SQL dump, where it
//! comes before `yourls_url`, or from a file of its own (`--log`), read before the links.

use std::collections::HashSet;
use std::io::BufRead;

use super::sqldump::{SqlDump, SqlRow, SqlValue};
use super::yourls_log::{AgentReader, ClickLog, LOG_COLUMNS};
use super::{Dropped, ForeignRow, Read, Shape, text};
use crate::domain::{FieldErrors, Place};
use crate::transfer::bounded_csv::BoundedCsv;
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

fn table_columns(table: &str) -> Vec<String> {
    let columns: &[&str] = if ClickLog::is_log_table(table) {
        &LOG_COLUMNS
    } else {
        &COLUMNS
    };
    columns.iter().map(|c| (*c).to_owned()).collect()
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

/// A row of the table as the record it becomes, with the clicks `log` holds for it as its
/// traffic history.
fn record(
    place: Place,
    get: impl Fn(&str) -> Option<String>,
    dropped: &Dropped,
    log: Option<&mut ClickLog>,
) -> Read {
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
    let traffic = log.zip(keyword.as_deref()).and_then(|(log, k)| log.take(k));
    let record = LinkRecord {
        url: get("url"),
        alias: keyword,
        title: get("title"),
        clicks: get("clicks").map(Scalar::Text),
        created_at: get("timestamp"),
        traffic,
        ..LinkRecord::default()
    };
    Read::Row(Box::new(ForeignRow {
        place,
        record,
        tags: Vec::new(),
    }))
}

/// The rows of an SQL dump's `yourls_url`. The dump's `yourls_log` rows, which `mysqldump`
/// writes first (tables in name order), become the links' traffic history — unless the log
/// was `given` on its own (`--log`), which then stands for it.
pub fn sql_rows(
    input: Box<dyn BufRead + Send>,
    dropped: Dropped,
    given: Option<ClickLog>,
    agents: AgentReader,
) -> impl Iterator<Item = Read> {
    let read_log = given.is_none();
    let mut log = given.unwrap_or_else(|| ClickLog::new(agents));
    let wanted: fn(&str) -> bool = if read_log {
        |t| is_url_table(t) || ClickLog::is_log_table(t)
    } else {
        is_url_table
    };
    let mut dump = SqlDump::new(input, wanted, table_columns);
    let mut links_seen = false;
    // Keywords with clicks logged after the links were handed on: too late to carry.
    let mut late: HashSet<String> = HashSet::new();
    let mut ended = false;
    std::iter::from_fn(move || {
        loop {
            if ended {
                return None;
            }
            match dump.next() {
                Some(Ok(row)) if ClickLog::is_log_table(&row.table) => {
                    if links_seen {
                        late.extend(row.get("shorturl").map(str::to_owned));
                    } else if let Err(e) = log.add(&row) {
                        return Some(Read::Invalid(row.place, e));
                    }
                }
                Some(Ok(row)) => {
                    links_seen = true;
                    return Some(sql_record(&row, &dropped, &mut log));
                }
                Some(Err(e)) => {
                    ended = true;
                    return Some(Read::Broken(e));
                }
                None => {
                    ended = true;
                    dropped.add(
                        "clicks in yourls_log after the yourls_url rows (give the dump as --log \
                         too to carry them)",
                        late.len(),
                    );
                    note_untaken(&log, &dropped);
                    return (!links_seen).then(|| {
                        Read::Broken(FormatError {
                            line: None,
                            message: "has no INSERT into a yourls_url table".into(),
                        })
                    });
                }
            }
        }
    })
}

/// Clicks logged for keywords that have no link (deleted in YOURLS, their clicks kept).
fn note_untaken(log: &ClickLog, dropped: &Dropped) {
    dropped.add(
        "clicks in yourls_log of keywords not in yourls_url",
        log.untaken(),
    );
}

fn sql_record(row: &SqlRow, dropped: &Dropped, log: &mut ClickLog) -> Read {
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
    record(row.place, |c| text(row.get(c)), dropped, Some(log))
}

/// The rows of a phpMyAdmin CSV of `yourls_url`, each with its history from `log` (`--log`).
pub fn csv_rows(
    input: Box<dyn BufRead + Send>,
    dropped: Dropped,
    mut log: Option<ClickLog>,
) -> impl Iterator<Item = Read> {
    let mut table = csv_table(input, &["keyword", "url"], |n| {
        if n == 5 {
            &COLUMNS_WITHOUT_TITLE
        } else {
            &COLUMNS
        }
    });
    let mut ended = false;
    std::iter::from_fn(move || {
        if ended {
            return None;
        }
        match table.next() {
            Some(Ok(row)) => Some(record(
                row.place,
                |c| text(row.get(c)),
                &dropped,
                log.as_mut(),
            )),
            Some(Err(read)) => Some(read),
            None => {
                ended = true;
                if let Some(log) = &log {
                    note_untaken(log, &dropped);
                }
                None
            }
        }
    })
}

/// Why a click log given on its own cannot be read.
#[derive(Debug)]
pub enum LogError {
    /// The file is not valid further on.
    Broken(FormatError),
    /// Rows that are not clicks, by place and field.
    Invalid(FieldErrors),
}

/// Reads a whole `yourls_log` given on its own (`--log`): an SQL dump holding it, or
/// phpMyAdmin's CSV of it. Only the tallies are kept, not the rows.
pub fn read_log(
    input: Box<dyn BufRead + Send>,
    shape: Shape,
    agents: AgentReader,
) -> Result<ClickLog, LogError> {
    let mut log = ClickLog::new(agents);
    let mut errors = FieldErrors::default();
    let count = |log: &mut ClickLog, errors: &mut FieldErrors, row: SqlRow| {
        if let Err(e) = log.add(&row) {
            errors.add_at(row.place, e);
        }
    };
    if shape == Shape::Sql {
        let mut dump = SqlDump::new(input, ClickLog::is_log_table, table_columns);
        for row in dump.by_ref() {
            count(&mut log, &mut errors, row.map_err(LogError::Broken)?);
        }
        if !dump.seen {
            return Err(LogError::Broken(FormatError {
                line: None,
                message: "has no INSERT into a yourls_log table".into(),
            }));
        }
    } else {
        for row in csv_table(input, &["click_time", "shorturl"], |_| &LOG_COLUMNS) {
            match row {
                Ok(row) => count(&mut log, &mut errors, row),
                Err(Read::Broken(e)) => return Err(LogError::Broken(e)),
                Err(Read::Invalid(place, e)) => errors.add_at(place, e),
                Err(Read::Row(_)) => {}
            }
        }
    }
    if errors.is_empty() {
        Ok(log)
    } else {
        Err(LogError::Invalid(errors))
    }
}

/// The rows of one table exported by phpMyAdmin as CSV, as the rows of an `INSERT` would be:
/// with the header row when it names all of `header`, else with the columns `guess` gives for
/// the first row's number of fields. phpMyAdmin writes NULL as the bare word `NULL`.
fn csv_table(
    input: Box<dyn BufRead + Send>,
    header: &'static [&'static str],
    guess: fn(usize) -> &'static [&'static str],
) -> impl Iterator<Item = Result<SqlRow, Read>> {
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
    let mut reader = BoundedCsv::new(&builder, super::scan::LfLines::new(input));
    let table: std::sync::Arc<str> = std::sync::Arc::from("csv");
    let mut columns: Option<std::sync::Arc<[String]>> = None;
    let mut record = csv::StringRecord::new();
    let mut ended = false;
    std::iter::from_fn(move || {
        loop {
            if ended {
                return None;
            }
            match reader.read(&mut record) {
                Ok(false) => {
                    ended = true;
                    return None;
                }
                Err(e) => {
                    ended = true;
                    return Some(Err(Read::Broken(e)));
                }
                Ok(true) => {}
            }
            let line = record.position().map_or(0, |p| p.line() as usize);
            let place = Place::line(line);
            let cols = match &columns {
                Some(cols) => cols.clone(),
                None => {
                    let lower: Vec<String> = record
                        .iter()
                        .map(|c| c.trim().trim_start_matches('\u{feff}').to_ascii_lowercase())
                        .collect();
                    if header.iter().all(|h| lower.iter().any(|c| c == h)) {
                        columns = Some(lower.into());
                        continue;
                    }
                    let guessed = guess(record.len()).iter().map(|c| (*c).to_owned());
                    columns.insert(guessed.collect()).clone()
                }
            };
            if record.len() != cols.len() {
                return Some(Err(Read::invalid(
                    place,
                    "row",
                    format!(
                        "has {} fields where {} were expected",
                        record.len(),
                        cols.len()
                    ),
                )));
            }
            let values = record
                .iter()
                .map(|cell| match cell.trim() {
                    "NULL" => SqlValue::Null,
                    _ => SqlValue::Text(cell.to_owned()),
                })
                .collect();
            return Some(Ok(SqlRow {
                place,
                table: table.clone(),
                columns: cols,
                values,
            }));
        }
    })
}
