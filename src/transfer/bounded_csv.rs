//! The CSV reader of every import (linkdeck's CSV, Shlink's, YOURLS's phpMyAdmin export): the
//! csv crate's, fed through a limit that hands it no more than [`ROW_MAX`] bytes past the start
//! of the row it is reading. The crate holds a row in one buffer that grows to fit it, so
//! without the limit one long cell or header row cost its whole size several times over; with
//! it, a longer row stops the file with an error naming its line and the bound.

use std::io::{self, Read};

use ::csv::{ErrorKind, Reader, ReaderBuilder, StringRecord};

use super::FormatError;
use super::limits::{ROW_MAX, size};

/// What the reader may take beyond a row's bound: the csv crate reads ahead a buffer at a time
/// (8 KiB), so a row within the bound is never stopped short; one a little longer is read, and
/// then refused for its length.
const READ_AHEAD: u64 = 64 << 10;

/// CSV rows of `R`, each at most [`ROW_MAX`] bytes.
pub struct BoundedCsv<R> {
    reader: Reader<RowLimit<R>>,
}

impl<R: Read> BoundedCsv<R> {
    pub fn new(builder: &ReaderBuilder, input: R) -> Self {
        BoundedCsv {
            reader: builder.from_reader(RowLimit {
                inner: input,
                read: 0,
                limit: ROW_MAX as u64 + READ_AHEAD,
            }),
        }
    }

    /// The header row (the reader must be built to have one).
    pub fn headers(&mut self) -> Result<StringRecord, FormatError> {
        let (line, start) = self.at();
        let headers = self.reader.headers().map_err(|e| error(e, line))?.clone();
        self.row_read(line, start)?;
        Ok(headers)
    }

    /// Reads the next row into `record`; `false` at the end of the file.
    pub fn read(&mut self, record: &mut StringRecord) -> Result<bool, FormatError> {
        let (line, start) = self.at();
        let more = self
            .reader
            .read_record(record)
            .map_err(|e| error(e, line))?;
        self.row_read(line, start)?;
        Ok(more)
    }

    /// The line and byte where the next row starts.
    fn at(&self) -> (u64, u64) {
        let at = self.reader.position();
        (at.line(), at.byte())
    }

    /// Checks the row just read, from `start`, against the bound (the limit lets the reader
    /// take a little more than the bound), and moves the limit past it.
    fn row_read(&mut self, line: u64, start: u64) -> Result<(), FormatError> {
        let (_, next) = self.at();
        // The bound is on the row, its line end aside.
        if next - start > ROW_MAX as u64 + 2 {
            return Err(row_too_long(line));
        }
        self.reader.get_mut().limit = next + ROW_MAX as u64 + READ_AHEAD;
        Ok(())
    }
}

fn row_too_long(line: u64) -> FormatError {
    FormatError::at(
        usize::try_from(line).unwrap_or(usize::MAX),
        format!(
            "has a row longer than {} (no row of links needs as much)",
            size(ROW_MAX)
        ),
    )
}

/// `line`: where the row being read starts.
fn error(e: ::csv::Error, line: u64) -> FormatError {
    let at = |line: u64| usize::try_from(line).unwrap_or(usize::MAX);
    if let ErrorKind::Io(io) = e.kind()
        && io.get_ref().is_some_and(|inner| inner.is::<RowTooLong>())
    {
        return row_too_long(line);
    }
    let message = match e.kind() {
        ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("has {len} fields where the header has {expected_len}"),
        ErrorKind::Utf8 { .. } => "is not UTF-8 text".to_owned(),
        _ => format!("is not valid CSV ({e})"),
    };
    FormatError {
        line: e.position().map(|p| at(p.line())),
        message,
    }
}

/// Reads `R`, handing out bytes only up to `limit` (past the start of the row being read).
struct RowLimit<R> {
    inner: R,
    read: u64,
    limit: u64,
}

#[derive(Debug)]
struct RowTooLong;

impl std::fmt::Display for RowTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a row is longer than {}", size(ROW_MAX))
    }
}

impl std::error::Error for RowTooLong {}

impl<R: Read> Read for RowLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read >= self.limit {
            // At the limit: the end of the file is fine, anything more is a row too long.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(RowTooLong)),
            };
        }
        let room = usize::try_from(self.limit - self.read).unwrap_or(usize::MAX);
        let end = buf.len().min(room);
        let n = self.inner.read(&mut buf[..end])?;
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &[u8]) -> Result<Vec<Vec<String>>, FormatError> {
        let mut csv = BoundedCsv::new(ReaderBuilder::new().has_headers(false), text);
        let mut rows = Vec::new();
        let mut record = StringRecord::new();
        while csv.read(&mut record)? {
            rows.push(record.iter().map(str::to_owned).collect());
        }
        Ok(rows)
    }

    #[test]
    fn rows_up_to_the_bound_are_read_and_a_longer_one_is_named() {
        let full = "a".repeat(ROW_MAX - 10);
        let mut text = String::new();
        for _ in 0..3 {
            text.push_str(&format!("x,{full}\n"));
        }
        assert_eq!(rows(text.as_bytes()).unwrap().len(), 3);
        let just_over = format!("{}\nx\n", "a".repeat(ROW_MAX + 3));
        assert_eq!(rows(just_over.as_bytes()).unwrap_err().line, Some(1));

        text.push_str("y,\"");
        text.push_str(&"b\n".repeat(ROW_MAX));
        text.push_str("\"\n");
        let err = rows(text.as_bytes()).unwrap_err();
        assert_eq!(err.line, Some(4));
        assert_eq!(
            err.message,
            "has a row longer than 4 MiB (no row of links needs as much)"
        );
    }

    #[test]
    fn other_errors_keep_their_line() {
        let err = rows(b"a,b\nc,d\ne\n").unwrap_err();
        assert_eq!(err.line, Some(3));
        assert_eq!(err.message, "has 1 fields where the header has 2");
    }
}
