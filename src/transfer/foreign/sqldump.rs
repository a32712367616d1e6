//! The rows of one table in an SQL dump as `mysqldump` and `mariadb-dump` write it (and
//! phpMyAdmin's SQL export, which has the same shape): `CREATE TABLE` names the columns,
//! `INSERT INTO … VALUES (…),(…);` holds the rows, many to a line. Everything else — other
//! tables, `SET`, `LOCK TABLES`, comments and `/*!…*/` version comments — is skipped.
//!
//! Rows are read one at a time, each bounded while it is read (a string or a bare word by
//! [`STRING_MAX`], a row by [`ROW_MAX`] and [`SQL_COLUMNS_MAX`] values); what is skipped is
//! never held. A dump of any size reads in constant memory.

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;

use super::super::FormatError;
use super::super::limits::{ROW_MAX, SQL_COLUMNS_MAX, STRING_MAX, size, string_too_long};
use super::scan::Bytes;
use crate::domain::{Place, name_excerpt};

/// A value of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlValue {
    Null,
    /// A quoted string, unescaped.
    Text(String),
    /// A number or other bare word, as written.
    Bare(String),
}

impl SqlValue {
    /// The value as text (`NULL` is none).
    pub fn text(&self) -> Option<&str> {
        match self {
            SqlValue::Null => None,
            SqlValue::Text(s) | SqlValue::Bare(s) => Some(s),
        }
    }
}

/// One row of an `INSERT`, with its table and the column names that apply to it (shared by
/// the rows of one statement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRow {
    pub place: Place,
    pub table: Arc<str>,
    pub columns: Arc<[String]>,
    pub values: Vec<SqlValue>,
}

impl SqlRow {
    /// The value of column `name`, if the row has it and it is not `NULL`.
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))?;
        self.values.get(i).and_then(SqlValue::text)
    }
}

/// Streams the rows of the tables `wanted` accepts (given a table's name).
pub struct SqlDump<R> {
    bytes: Bytes<R>,
    wanted: fn(&str) -> bool,
    /// Columns of the tables created so far.
    tables: HashMap<String, Vec<String>>,
    /// Columns a table has when the dump holds no `CREATE TABLE` for it.
    fallback: fn(&str) -> Vec<String>,
    /// Inside an `INSERT` of a wanted table: the table, its columns, and the rows read so far.
    insert: Option<(Arc<str>, Arc<[String]>, usize)>,
    done: bool,
    /// Whether any wanted table was seen.
    pub seen: bool,
}

impl<R: BufRead> SqlDump<R> {
    pub fn new(input: R, wanted: fn(&str) -> bool, fallback: fn(&str) -> Vec<String>) -> Self {
        SqlDump {
            bytes: Bytes::new(input),
            wanted,
            tables: HashMap::new(),
            fallback,
            insert: None,
            done: false,
            seen: false,
        }
    }

    fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::at(self.bytes.line(), message)
    }

    /// `what` holds more than [`SQL_COLUMNS_MAX`] `things`, more than MySQL allows.
    fn too_many(&self, what: &str, things: &str) -> FormatError {
        self.error(format!("{what} {SQL_COLUMNS_MAX} {things} (MySQL's most)"))
    }

    fn peek(&mut self) -> Result<Option<u8>, FormatError> {
        self.bytes.peek().map_err(|e| self.io(e))
    }

    fn bump(&mut self) -> Result<Option<u8>, FormatError> {
        self.bytes.bump().map_err(|e| self.io(e))
    }

    fn io(&self, e: std::io::Error) -> FormatError {
        FormatError {
            line: None,
            message: format!("cannot be read: {e}"),
        }
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), FormatError> {
        loop {
            self.bytes.skip_ws().map_err(|e| self.io(e))?;
            match self.peek()? {
                Some(b'#') => self.skip_line()?,
                Some(b'-') => {
                    // `--` starts a comment only when followed by a space or a line end.
                    let probe = self.bytes.peek_n::<3>().map_err(|e| self.io(e))?;
                    if probe.len() >= 2
                        && probe[1] == b'-'
                        && probe.get(2).is_none_or(u8::is_ascii_whitespace)
                    {
                        self.skip_line()?;
                    } else {
                        return Ok(());
                    }
                }
                Some(b'/') => {
                    let probe = self.bytes.peek_n::<2>().map_err(|e| self.io(e))?;
                    if probe.get(1) == Some(&b'*') {
                        self.bump()?;
                        self.bump()?;
                        let mut last = 0u8;
                        loop {
                            match self.bump()? {
                                None => return Err(self.error("the file ends inside a comment")),
                                Some(b'/') if last == b'*' => break,
                                Some(b) => last = b,
                            }
                        }
                    } else {
                        return Ok(());
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn skip_line(&mut self) -> Result<(), FormatError> {
        while let Some(b) = self.bump()? {
            if b == b'\n' {
                break;
            }
        }
        Ok(())
    }

    /// A bare word (letters, digits, `_`, `$`, `.`, `-`, `+` for numbers).
    fn word(&mut self) -> Result<String, FormatError> {
        let mut w = Vec::new();
        while let Some(b) = self.peek()? {
            if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-' | b'+') {
                if w.len() == STRING_MAX {
                    return Err(self.error(string_too_long()));
                }
                w.push(b);
                self.bump()?;
            } else {
                break;
            }
        }
        Ok(String::from_utf8_lossy(&w).into_owned())
    }

    /// A name: `backticked`, "quoted" or bare.
    fn name(&mut self) -> Result<String, FormatError> {
        self.skip()?;
        match self.peek()? {
            Some(q @ (b'`' | b'"')) => self.quoted(q),
            _ => self.word(),
        }
    }

    /// A quoted string or name (the quote next), unescaped the MySQL way: backslash escapes
    /// and a doubled quote.
    fn quoted(&mut self, quote: u8) -> Result<String, FormatError> {
        let mut out = Vec::new();
        self.read_quoted(quote, Some(&mut out))?;
        String::from_utf8(out).map_err(|_| self.error("a string is not UTF-8 text"))
    }

    /// Reads past a quoted string without keeping it (a value of a table not read, say).
    fn skip_quoted(&mut self, quote: u8) -> Result<(), FormatError> {
        self.read_quoted(quote, None)
    }

    /// Reads a quoted string, unescaped into `out` when given (at most [`STRING_MAX`] bytes).
    fn read_quoted(&mut self, quote: u8, mut out: Option<&mut Vec<u8>>) -> Result<(), FormatError> {
        self.bump()?;
        let mut kept = [0u8; 2];
        loop {
            let n = match self.bump()? {
                None => return Err(self.error("the file ends inside a quoted string")),
                Some(b'\\') if quote != b'`' => match self.bump()? {
                    None => return Err(self.error("the file ends inside a quoted string")),
                    Some(b'0') => one(&mut kept, 0),
                    Some(b'n') => one(&mut kept, b'\n'),
                    Some(b'r') => one(&mut kept, b'\r'),
                    Some(b't') => one(&mut kept, b'\t'),
                    Some(b'b') => one(&mut kept, 8),
                    Some(b'Z') => one(&mut kept, 0x1a),
                    // MySQL keeps the backslash before % and _ (they are LIKE wildcards).
                    Some(b @ (b'%' | b'_')) => {
                        kept = [b'\\', b];
                        2
                    }
                    Some(b) => one(&mut kept, b),
                },
                Some(b) if b == quote => {
                    if self.peek()? == Some(quote) {
                        self.bump()?;
                        one(&mut kept, quote)
                    } else {
                        return Ok(());
                    }
                }
                Some(b) => one(&mut kept, b),
            };
            if let Some(out) = out.as_deref_mut() {
                if out.len() + n > STRING_MAX {
                    return Err(self.error(string_too_long()));
                }
                out.extend_from_slice(&kept[..n]);
            }
        }
    }

    /// Skips the rest of a statement, through its `;`.
    fn skip_statement(&mut self) -> Result<(), FormatError> {
        loop {
            self.skip()?;
            match self.peek()? {
                None => return Ok(()),
                Some(b';') => {
                    self.bump()?;
                    return Ok(());
                }
                Some(q @ (b'\'' | b'"' | b'`')) => self.skip_quoted(q)?,
                Some(_) => {
                    self.bump()?;
                }
            }
        }
    }

    fn expect(&mut self, want: u8) -> Result<(), FormatError> {
        self.skip()?;
        match self.bump()? {
            Some(b) if b == want => Ok(()),
            Some(b) => Err(self.error(format!(
                "expected '{}' but found '{}'",
                want as char,
                if b.is_ascii_graphic() { b as char } else { '?' }
            ))),
            None => Err(self.error(format!(
                "the file ends where '{}' was expected",
                want as char
            ))),
        }
    }

    /// `CREATE TABLE [IF NOT EXISTS] name ( … )`: remembers the column names.
    fn create_table(&mut self) -> Result<(), FormatError> {
        let mut table = self.name()?;
        if table.eq_ignore_ascii_case("if") {
            self.name()?; // NOT
            self.name()?; // EXISTS
            table = self.name()?;
        }
        self.expect(b'(')?;
        let mut columns = Vec::new();
        loop {
            self.skip()?;
            let starts_with_name = matches!(self.peek()?, Some(b'`' | b'"'));
            let first = self.name()?;
            let constraint = !starts_with_name
                && [
                    "primary",
                    "key",
                    "unique",
                    "index",
                    "constraint",
                    "fulltext",
                    "spatial",
                    "foreign",
                    "check",
                ]
                .iter()
                .any(|k| first.eq_ignore_ascii_case(k));
            if !constraint && !first.is_empty() {
                if columns.len() == SQL_COLUMNS_MAX {
                    return Err(self.too_many("CREATE TABLE has more than", "columns"));
                }
                columns.push(first);
            }
            // The rest of this definition: up to a comma or the closing parenthesis at depth 0.
            let mut depth = 0usize;
            loop {
                self.skip()?;
                match self.peek()? {
                    None => return Err(self.error("the file ends inside CREATE TABLE")),
                    Some(q @ (b'\'' | b'"' | b'`')) => self.skip_quoted(q)?,
                    Some(b'(') => {
                        depth += 1;
                        self.bump()?;
                    }
                    Some(b')') if depth > 0 => {
                        depth -= 1;
                        self.bump()?;
                    }
                    Some(b')') => {
                        self.bump()?;
                        self.tables.insert(table.to_ascii_lowercase(), columns);
                        return self.skip_statement();
                    }
                    Some(b',') if depth == 0 => {
                        self.bump()?;
                        break;
                    }
                    Some(_) => {
                        self.bump()?;
                    }
                }
            }
        }
    }

    /// `INSERT [IGNORE] INTO name [(columns)] VALUES`: positions before the first row of a
    /// wanted table, or skips the statement.
    fn insert(&mut self) -> Result<(), FormatError> {
        let mut word = self.name()?;
        while !word.eq_ignore_ascii_case("into") {
            if word.is_empty() {
                return self.skip_statement();
            }
            word = self.name()?;
        }
        let table = self.name()?;
        // `db`.`table`: keep the table.
        let table = match self.peek()? {
            Some(b'.') => {
                self.bump()?;
                self.name()?
            }
            _ => table,
        };
        if !(self.wanted)(&table) {
            return self.skip_statement();
        }
        self.seen = true;
        self.skip()?;
        let columns = if self.peek()? == Some(b'(') {
            self.bump()?;
            let mut cols = Vec::new();
            loop {
                if cols.len() == SQL_COLUMNS_MAX {
                    return Err(self.too_many("an INSERT names more than", "columns"));
                }
                cols.push(self.name()?);
                self.skip()?;
                match self.bump()? {
                    Some(b',') => continue,
                    Some(b')') => break,
                    _ => return Err(self.error("the column list of an INSERT is not closed")),
                }
            }
            cols
        } else {
            self.tables
                .get(&table.to_ascii_lowercase())
                .cloned()
                .unwrap_or_else(|| (self.fallback)(&table))
        };
        let values = self.name()?;
        if !values.eq_ignore_ascii_case("values") && !values.eq_ignore_ascii_case("value") {
            return Err(self.error(format!(
                "expected VALUES but found {}",
                name_excerpt(&values)
            )));
        }
        self.insert = Some((Arc::from(table.as_str()), Arc::from(columns), 0));
        Ok(())
    }

    /// One value of a row.
    fn value(&mut self) -> Result<SqlValue, FormatError> {
        self.skip()?;
        match self.peek()? {
            Some(q @ (b'\'' | b'"')) => Ok(SqlValue::Text(self.quoted(q)?)),
            _ => {
                let word = self.word()?;
                if word.is_empty() {
                    return Err(self.error("expected a value"));
                }
                if word.eq_ignore_ascii_case("null") {
                    return Ok(SqlValue::Null);
                }
                // A character set introducer (`_utf8mb4'…'`, `_binary '…'`) before a string.
                if word.starts_with('_') {
                    self.skip()?;
                    if let Some(q @ (b'\'' | b'"')) = self.peek()? {
                        return Ok(SqlValue::Text(self.quoted(q)?));
                    }
                }
                // Hexadecimal literals (`0x6869`, as --hex-blob writes).
                if let Some(hex) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X"))
                    && let Ok(bytes) = hex::decode(hex)
                {
                    return String::from_utf8(bytes)
                        .map(SqlValue::Text)
                        .map_err(|_| self.error("a hexadecimal value is not UTF-8 text"));
                }
                Ok(SqlValue::Bare(word))
            }
        }
    }

    /// The next row of the current `INSERT`, or `None` at its end.
    fn row(&mut self) -> Result<Option<SqlRow>, FormatError> {
        let Some((table, columns, n)) = self.insert.take() else {
            return Ok(None);
        };
        self.skip()?;
        if n > 0 {
            match self.bump()? {
                Some(b',') => self.skip()?,
                Some(b';') | None => return Ok(None),
                Some(b) => {
                    return Err(self.error(format!(
                        "expected ',' or ';' after a row but found '{}'",
                        if b.is_ascii_graphic() { b as char } else { '?' }
                    )));
                }
            }
        }
        let line = self.bytes.line();
        let start = self.bytes.offset();
        self.expect(b'(')?;
        let mut values = Vec::with_capacity(columns.len());
        loop {
            if values.len() == SQL_COLUMNS_MAX {
                return Err(self.too_many("a row has more than", "values"));
            }
            values.push(self.value()?);
            if self.bytes.offset() - start > ROW_MAX as u64 {
                return Err(FormatError::at(
                    line,
                    format!(
                        "has a row longer than {} (no row of links needs as much)",
                        size(ROW_MAX)
                    ),
                ));
            }
            self.skip()?;
            match self.bump()? {
                Some(b',') => continue,
                Some(b')') => break,
                _ => return Err(self.error("a row of values is not closed")),
            }
        }
        let row = SqlRow {
            place: Place {
                line,
                row: Some(n + 1),
            },
            table: table.clone(),
            columns: columns.clone(),
            values,
        };
        self.insert = Some((table, columns, n + 1));
        Ok(Some(row))
    }

    fn step(&mut self) -> Result<Option<SqlRow>, FormatError> {
        loop {
            if self.insert.is_some() {
                if let Some(row) = self.row()? {
                    return Ok(Some(row));
                }
                continue;
            }
            self.skip()?;
            if self.peek()?.is_none() {
                return Ok(None);
            }
            let word = self.word()?;
            if word.eq_ignore_ascii_case("create") {
                let next = self.name()?;
                if next.eq_ignore_ascii_case("table") {
                    self.create_table()?;
                } else {
                    self.skip_statement()?;
                }
            } else if word.eq_ignore_ascii_case("insert") || word.eq_ignore_ascii_case("replace") {
                self.insert()?;
            } else if word.is_empty() {
                // A stray character (an empty statement's `;`, say).
                self.bump()?;
            } else {
                self.skip_statement()?;
            }
        }
    }
}

impl<R: BufRead> Iterator for SqlDump<R> {
    type Item = Result<SqlRow, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

fn one(kept: &mut [u8; 2], b: u8) -> usize {
    kept[0] = b;
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(dump: &str) -> Vec<SqlRow> {
        SqlDump::new(
            dump.as_bytes(),
            |t| t.ends_with("url"),
            |_| vec!["a".into(), "b".into()],
        )
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
    }

    #[test]
    fn rows_of_the_wanted_table_with_their_places() {
        let dump = "-- a comment\n/*!40101 SET NAMES utf8mb4 */;\nDROP TABLE IF EXISTS `x_url`;\n\
            CREATE TABLE `x_url` (\n  `keyword` varchar(100) NOT NULL DEFAULT '',\n  `url` text,\n  \
            PRIMARY KEY (`keyword`),\n  KEY `url_idx` (`url`(30))\n) ENGINE=InnoDB;\n\
            INSERT INTO `other` VALUES ('no','pe');\n\
            INSERT INTO `x_url` VALUES ('k1','https://a.example/?q=1&r=it\\'s'),('k2',NULL);\n\
            INSERT INTO `x_url` (`url`, `keyword`) VALUES ('https://b.example','k3');\n";
        let rows = rows(dump);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].get("keyword"), Some("k1"));
        assert_eq!(rows[0].get("url"), Some("https://a.example/?q=1&r=it's"));
        assert_eq!(rows[0].place.to_string(), "line 11, row 1");
        assert_eq!(&*rows[0].table, "x_url");
        assert_eq!(rows[1].place.to_string(), "line 11, row 2");
        assert_eq!(rows[1].get("url"), None);
        assert_eq!(rows[2].get("keyword"), Some("k3"));
        assert_eq!(rows[2].place.line, 12);
    }

    #[test]
    fn escapes_introducers_and_hex() {
        let rows =
            rows("INSERT INTO t_url VALUES ('a\\nb\\\\c''d\\%', _utf8mb4'é'), (0x6869, -12.5);");
        assert_eq!(rows[0].values[0], SqlValue::Text("a\nb\\c'd\\%".into()));
        assert_eq!(rows[0].get("b"), Some("é"));
        assert_eq!(rows[1].get("a"), Some("hi"));
        assert_eq!(rows[1].values[1], SqlValue::Bare("-12.5".into()));
    }

    #[test]
    fn broken_dumps_name_their_line() {
        let err = SqlDump::new(
            "INSERT INTO t_url VALUES ('a', 'b'),\n('c', 'unterminated".as_bytes(),
            |_| true,
            |_| Vec::new(),
        )
        .find_map(Result::err)
        .unwrap();
        assert_eq!(err.line, Some(2));
    }

    #[test]
    fn strings_and_rows_are_bounded_where_they_are_kept() {
        let long = "s".repeat(STRING_MAX + 1);
        let errors = |dump: &str| {
            SqlDump::new(dump.as_bytes(), |t| t == "t_url", |_| vec!["a".into()])
                .find_map(Result::err)
        };
        // Kept: a value of a table that is read.
        let err = errors(&format!("INSERT INTO t_url VALUES ('ok'),\n('{long}');")).unwrap();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("longer than 64 KiB"), "{err}");
        let err = errors(&format!(
            "INSERT INTO t_url VALUES ({});",
            "9".repeat(STRING_MAX + 1)
        ));
        assert!(err.unwrap().message.contains("longer than 64 KiB"));
        // Skipped: a value of another table, however long, is read past.
        let dump =
            format!("INSERT INTO t_options VALUES ('{long}');\nINSERT INTO t_url VALUES ('k');");
        assert_eq!(errors(&dump), None);

        let values = vec!["1"; SQL_COLUMNS_MAX + 1].join(",");
        let err = errors(&format!("INSERT INTO t_url VALUES ({values});")).unwrap();
        assert!(err.message.contains("more than 4096 values"), "{err}");
        let piece = format!("'{}'", "r".repeat(STRING_MAX - 1));
        let row = vec![piece; ROW_MAX / STRING_MAX + 2].join(",");
        let err = errors(&format!("INSERT INTO t_url VALUES ('k'),\n({row});")).unwrap();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("row longer than 4 MiB"), "{err}");
    }
}
