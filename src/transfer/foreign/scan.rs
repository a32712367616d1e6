//! Reading big exports without holding them: a byte reader that counts lines, and a streamer
//! that hands out the elements of one array inside JSON documents (`links` of a Bitly answer,
//! `shortUrls.data` of a Shlink one) one at a time, each with the line it starts on.
//!
//! Exports are often several API pages saved into one file, so a file may hold one document,
//! several documents one after another, or an array of documents. Every value is bounded while
//! it is copied — a string or a scalar by [`STRING_MAX`], an element or any other value read
//! whole by [`RECORD_MAX`] — so memory does not follow the largest value of a file.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use super::super::FormatError;
use super::super::limits::{RECORD_MAX, STRING_MAX, size};
use crate::domain::name_excerpt;

/// Bytes of `R`, one at a time, with the line number of the next one.
pub struct Bytes<R> {
    input: R,
    line: usize,
    /// Bytes read so far.
    offset: u64,
    /// Bytes taken from the reader to look further ahead than its buffer allows, not yet read.
    ahead: Vec<u8>,
}

impl<R: BufRead> Bytes<R> {
    pub fn new(input: R) -> Self {
        Bytes {
            input,
            line: 1,
            offset: 0,
            ahead: Vec::new(),
        }
    }

    pub fn line(&self) -> usize {
        self.line
    }

    /// How many bytes have been read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn peek(&mut self) -> io::Result<Option<u8>> {
        if let Some(&b) = self.ahead.first() {
            return Ok(Some(b));
        }
        Ok(self.input.fill_buf()?.first().copied())
    }

    /// The next `N` bytes (fewer at the end of the input), without reading them.
    pub fn peek_n<const N: usize>(&mut self) -> io::Result<Vec<u8>> {
        while self.ahead.len() < N {
            let buf = self.input.fill_buf()?;
            let Some(&b) = buf.first() else { break };
            self.input.consume(1);
            self.ahead.push(b);
        }
        Ok(self.ahead.iter().take(N).copied().collect())
    }

    pub fn bump(&mut self) -> io::Result<Option<u8>> {
        let b = if self.ahead.is_empty() {
            let b = self.input.fill_buf()?.first().copied();
            if b.is_some() {
                self.input.consume(1);
            }
            b
        } else {
            Some(self.ahead.remove(0))
        };
        if let Some(b) = b {
            self.offset += 1;
            if b == b'\n' {
                self.line += 1;
            }
        }
        Ok(b)
    }

    /// Copies the bytes before the next one that `stop` picks into `out`, a buffer's run at a
    /// time (values are long and their structure sparse: byte-by-byte reading dominated the
    /// import), but no more than `room` of them. The stop byte is left to read.
    pub fn copy_until(
        &mut self,
        out: &mut Vec<u8>,
        room: usize,
        stop: impl Fn(u8) -> bool,
    ) -> io::Result<Copied> {
        let mut left = room;
        loop {
            if let Some(&b) = self.ahead.first() {
                if stop(b) {
                    return Ok(Copied::Stop);
                }
                if left == 0 {
                    return Ok(Copied::Full);
                }
                out.push(b);
                left -= 1;
                self.bump()?;
                continue;
            }
            let chunk = self.input.fill_buf()?;
            if chunk.is_empty() {
                return Ok(Copied::End);
            }
            let run = chunk.iter().position(|&b| stop(b));
            let end = run.unwrap_or(chunk.len());
            let taken = end.min(left);
            let run_bytes = &chunk[..taken];
            self.line += run_bytes.iter().filter(|&&b| b == b'\n').count();
            out.extend_from_slice(run_bytes);
            self.input.consume(taken);
            self.offset += taken as u64;
            left -= taken;
            if taken < end {
                return Ok(Copied::Full);
            }
            if run.is_some() {
                return Ok(Copied::Stop);
            }
        }
    }

    /// Skips spaces, tabs and line ends.
    pub fn skip_ws(&mut self) -> io::Result<()> {
        while let Some(b) = self.peek()? {
            if !b.is_ascii_whitespace() {
                break;
            }
            self.bump()?;
        }
        Ok(())
    }
}

/// How [`Bytes::copy_until`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// Before a stop byte.
    Stop,
    /// At the end of the input.
    End,
    /// With as many bytes as there was room for, and more to come.
    Full,
}

fn io_error(e: io::Error) -> FormatError {
    FormatError {
        line: None,
        message: format!("cannot be read: {e}"),
    }
}

/// One element of the streamed array, or a sibling value captured on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Element {
        line: usize,
        /// The element's place among those starting on its line, from the second on (a file
        /// written on one line has all its elements on line 1).
        row: Option<usize>,
        bytes: Vec<u8>,
    },
    Sibling {
        key: String,
        line: usize,
        bytes: Vec<u8>,
    },
}

/// Streams the elements of the array at `path` (keys from the document's top) in every
/// document of the input. Values under `capture` keys that sit beside the array (in the same
/// object, before it) are handed out as [`Event::Sibling`]; other values are skipped.
pub struct JsonArrays<R> {
    bytes: Bytes<R>,
    path: &'static [&'static str],
    capture: &'static [&'static str],
    state: State,
    /// Whether the documents sit in one outer array.
    outer: Option<bool>,
    found: bool,
    /// Captured siblings (and the element after them) not handed out yet.
    queued: VecDeque<Event>,
    /// Read as a format of linkdeck's own (see [`JsonArrays::strict`]).
    strict: bool,
    documents: usize,
    /// The line the last element started on, and how many elements started on it.
    elements_on_line: (usize, usize),
    /// The line the value being copied started on.
    value_line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between documents.
    Documents,
    /// Inside the target array, before an element or its end.
    Elements {
        first: bool,
    },
    /// After the target array, in the rest of its document.
    Rest,
    Done,
}

impl<R: BufRead> JsonArrays<R> {
    pub fn new(input: R, path: &'static [&'static str], capture: &'static [&'static str]) -> Self {
        JsonArrays {
            bytes: Bytes::new(input),
            path,
            capture,
            state: State::Documents,
            outer: None,
            found: false,
            queued: VecDeque::new(),
            strict: false,
            documents: 0,
            elements_on_line: (0, 0),
            value_line: 0,
        }
    }

    /// Reads the input as one document of a format whose keys are all known: one object, its
    /// keys only the array's and the `capture` keys, which must come before the array (they are
    /// handed out first); the array may be missing.
    pub fn strict(
        input: R,
        path: &'static [&'static str],
        capture: &'static [&'static str],
    ) -> Self {
        JsonArrays {
            strict: true,
            ..JsonArrays::new(input, path, capture)
        }
    }

    /// A key the strict format does not have, named as serde names one.
    fn unknown_key(&self, key: &str) -> FormatError {
        let known: Vec<String> = self
            .capture
            .iter()
            .chain(self.path.first())
            .map(|k| format!("`{k}`"))
            .collect();
        self.error(format!(
            "unknown field `{}`, expected one of {}",
            name_excerpt(key),
            known.join(", ")
        ))
    }

    fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::at(self.bytes.line(), message)
    }

    fn expect(&mut self, want: u8) -> Result<(), FormatError> {
        self.bytes.skip_ws().map_err(io_error)?;
        match self.bytes.bump().map_err(io_error)? {
            Some(b) if b == want => Ok(()),
            Some(b) => Err(self.error(format!(
                "expected '{}' but found '{}'",
                want as char,
                printable(b)
            ))),
            None => Err(self.error(format!(
                "the file ends where '{}' was expected",
                want as char
            ))),
        }
    }

    /// Reads a string (the opening quote already next) into its raw bytes, quotes included.
    fn copy_string(&mut self, out: &mut Vec<u8>) -> Result<(), FormatError> {
        let start = out.len();
        self.bytes.bump().map_err(io_error)?;
        out.push(b'"');
        loop {
            let room = self.room(out, start);
            let copied = self
                .bytes
                .copy_until(out, room, |b| b == b'"' || b == b'\\')
                .map_err(io_error)?;
            if copied == Copied::Full {
                return Err(self.too_long(out, start));
            }
            match self.bytes.bump().map_err(io_error)? {
                None => return Err(self.error("the file ends inside a string")),
                Some(b'\\') => {
                    out.push(b'\\');
                    match self.bytes.bump().map_err(io_error)? {
                        Some(b) => out.push(b),
                        None => return Err(self.error("the file ends inside a string")),
                    }
                }
                Some(b'"') => {
                    out.push(b'"');
                    return Ok(());
                }
                Some(b) => out.push(b),
            }
            // An escape adds its two bytes past what `room` allowed.
            if out.len() > (start + STRING_MAX).min(RECORD_MAX) {
                return Err(self.too_long(out, start));
            }
        }
    }

    /// How much more `out` may take: up to [`STRING_MAX`] past `start`, where the string or
    /// scalar being copied began, and [`RECORD_MAX`] in all.
    fn room(&self, out: &[u8], start: usize) -> usize {
        (start + STRING_MAX)
            .min(RECORD_MAX)
            .saturating_sub(out.len())
    }

    /// The error of a value that reached its bound: a string or scalar's (copied from
    /// `start`), or the whole value's.
    fn too_long(&self, out: &[u8], start: usize) -> FormatError {
        if out.len() >= RECORD_MAX {
            FormatError::at(
                self.value_line,
                format!(
                    "holds a record longer than {} (no link needs as much, its traffic history \
                     included)",
                    size(RECORD_MAX)
                ),
            )
        } else {
            debug_assert!(out.len() - start >= STRING_MAX);
            self.error(super::super::limits::string_too_long())
        }
    }

    /// Copies one whole value (object, array, string or scalar) into `out`.
    fn copy_value(&mut self, out: &mut Vec<u8>) -> Result<(), FormatError> {
        self.bytes.skip_ws().map_err(io_error)?;
        self.value_line = self.bytes.line();
        let mut depth = 0usize;
        loop {
            let Some(b) = self.bytes.peek().map_err(io_error)? else {
                return if depth == 0 && !out.is_empty() {
                    Ok(())
                } else {
                    Err(self.error("the file ends inside a value"))
                };
            };
            match b {
                b'"' => self.copy_string(out)?,
                b'{' | b'[' => {
                    depth += 1;
                    out.push(b);
                    self.bytes.bump().map_err(io_error)?;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return self.non_empty(out);
                    }
                    depth -= 1;
                    out.push(b);
                    self.bytes.bump().map_err(io_error)?;
                }
                b',' if depth == 0 => return self.non_empty(out),
                _ => {
                    // This byte (a comma inside the value, say), then the run after it.
                    let start = out.len();
                    out.push(b);
                    self.bytes.bump().map_err(io_error)?;
                    let room = self.room(out, start);
                    let copied = self
                        .bytes
                        .copy_until(out, room, |b| {
                            matches!(b, b'"' | b'{' | b'[' | b'}' | b']' | b',')
                        })
                        .map_err(io_error)?;
                    if copied == Copied::Full {
                        return Err(self.too_long(out, start));
                    }
                }
            }
            if out.len() >= RECORD_MAX {
                return Err(self.too_long(out, out.len()));
            }
            if depth == 0 && matches!(out.last(), Some(b'"' | b'}' | b']')) {
                return Ok(());
            }
        }
    }

    /// A value ended by what follows it: it must not be empty (`[1,]`).
    fn non_empty(&self, out: &[u8]) -> Result<(), FormatError> {
        if out.iter().all(u8::is_ascii_whitespace) {
            Err(self.error("expected a value"))
        } else {
            Ok(())
        }
    }

    fn read_key(&mut self) -> Result<String, FormatError> {
        let mut raw = Vec::new();
        self.bytes.skip_ws().map_err(io_error)?;
        if self.bytes.peek().map_err(io_error)? != Some(b'"') {
            return Err(self.error("expected a key in quotes"));
        }
        self.copy_string(&mut raw)?;
        serde_json::from_slice(&raw).map_err(|e| self.error(format!("a key is not valid: {e}")))
    }

    /// Walks an object (its `{` consumed) down `path`; returns once positioned just inside the
    /// target array, or `Ok(false)` if the object ended without it.
    fn descend(
        &mut self,
        path: &'static [&'static str],
        events: &mut Vec<Event>,
    ) -> Result<bool, FormatError> {
        let mut first = true;
        loop {
            self.bytes.skip_ws().map_err(io_error)?;
            match self.bytes.peek().map_err(io_error)? {
                Some(b'}') => {
                    self.bytes.bump().map_err(io_error)?;
                    return Ok(false);
                }
                Some(b',') if !first => {
                    self.bytes.bump().map_err(io_error)?;
                }
                None => return Err(self.error("the file ends inside an object")),
                _ if first => {}
                Some(b) => {
                    return Err(
                        self.error(format!("expected ',' or '}}' but found '{}'", printable(b)))
                    );
                }
            }
            first = false;
            let key = self.read_key()?;
            self.expect(b':')?;
            self.bytes.skip_ws().map_err(io_error)?;
            let top = path.len() == self.path.len();
            if self.strict && top && key != path[0] && !self.capture.contains(&key.as_str()) {
                return Err(self.unknown_key(&key));
            }
            if key == path[0] {
                let open = if path.len() == 1 { b'[' } else { b'{' };
                self.expect(open)?;
                if path.len() == 1 {
                    return Ok(true);
                }
                if self.descend(&path[1..], events)? {
                    return Ok(true);
                }
                continue;
            }
            let line = self.bytes.line();
            let mut value = Vec::new();
            self.copy_value(&mut value)?;
            if top && self.capture.contains(&key.as_str()) {
                events.push(Event::Sibling {
                    key,
                    line,
                    bytes: value,
                });
            }
        }
    }

    /// Skips to the end of the current document after its target array.
    fn finish_document(&mut self) -> Result<(), FormatError> {
        // Close the objects around the array, skipping any keys after it.
        for _ in 0..self.path.len() {
            loop {
                self.bytes.skip_ws().map_err(io_error)?;
                match self.bytes.bump().map_err(io_error)? {
                    Some(b'}') => break,
                    Some(b',') => {
                        let key = self.read_key()?;
                        if self.strict {
                            // Read as a stream, what comes after the array comes too late.
                            return Err(if self.capture.contains(&key.as_str()) {
                                self.error(format!(
                                    "\"{key}\" must come before \"{}\" (the file is read as \
                                     a stream)",
                                    self.path[0]
                                ))
                            } else {
                                self.unknown_key(&key)
                            });
                        }
                        self.expect(b':')?;
                        self.copy_value(&mut Vec::new())?;
                    }
                    Some(b) => {
                        return Err(self
                            .error(format!("expected ',' or '}}' but found '{}'", printable(b))));
                    }
                    None => return Err(self.error("the file ends inside an object")),
                }
            }
        }
        Ok(())
    }

    /// Moves to the next document's target array, collecting captured siblings. `Ok(false)` at
    /// the end of the input.
    fn next_document(&mut self, events: &mut Vec<Event>) -> Result<bool, FormatError> {
        loop {
            self.bytes.skip_ws().map_err(io_error)?;
            let b = self.bytes.peek().map_err(io_error)?;
            if self.strict {
                match (self.documents, b) {
                    (0, None) => return Err(self.error("is empty: expected a JSON object")),
                    (0, Some(b'[')) => {
                        return Err(self.error("must be a JSON object, not an array"));
                    }
                    (0, _) => self.outer = Some(false),
                    (_, None) => return Ok(false),
                    (_, Some(b)) => {
                        return Err(
                            self.error(format!("unexpected '{}' after the end", printable(b)))
                        );
                    }
                }
            }
            match (self.outer, b) {
                (None, Some(b'[')) => {
                    self.bytes.bump().map_err(io_error)?;
                    self.outer = Some(true);
                    continue;
                }
                (None, Some(_)) => self.outer = Some(false),
                (Some(true), Some(b',')) => {
                    self.bytes.bump().map_err(io_error)?;
                    continue;
                }
                (Some(true), Some(b']')) => {
                    self.bytes.bump().map_err(io_error)?;
                    self.bytes.skip_ws().map_err(io_error)?;
                    if let Some(b) = self.bytes.peek().map_err(io_error)? {
                        return Err(
                            self.error(format!("unexpected '{}' after the end", printable(b)))
                        );
                    }
                    return Ok(false);
                }
                (Some(true), None) => return Err(self.error("the file ends inside an array")),
                (_, None) => return Ok(false),
                _ => {}
            }
            self.expect(b'{')?;
            self.documents += 1;
            if self.descend(self.path, events)? {
                self.found = true;
                return Ok(true);
            }
        }
    }

    fn step(&mut self, events: &mut Vec<Event>) -> Result<Option<Event>, FormatError> {
        loop {
            match self.state {
                State::Done => return Ok(None),
                State::Documents => {
                    if self.next_document(events)? {
                        self.state = State::Elements { first: true };
                    } else {
                        self.state = State::Done;
                        if !self.found && !self.strict {
                            return Err(FormatError {
                                line: None,
                                message: format!(
                                    "has no \"{}\" list of links",
                                    self.path.join(".")
                                ),
                            });
                        }
                    }
                    if !events.is_empty() {
                        return Ok(None);
                    }
                }
                State::Elements { first } => {
                    self.bytes.skip_ws().map_err(io_error)?;
                    match self.bytes.peek().map_err(io_error)? {
                        Some(b']') => {
                            self.bytes.bump().map_err(io_error)?;
                            self.state = State::Rest;
                            continue;
                        }
                        Some(b',') if !first => {
                            self.bytes.bump().map_err(io_error)?;
                        }
                        None => return Err(self.error("the file ends inside the list of links")),
                        _ if first => {}
                        Some(b) => {
                            return Err(self.error(format!(
                                "expected ',' or ']' but found '{}'",
                                printable(b)
                            )));
                        }
                    }
                    self.bytes.skip_ws().map_err(io_error)?;
                    let line = self.bytes.line();
                    let mut bytes = Vec::with_capacity(512);
                    self.copy_value(&mut bytes)?;
                    self.state = State::Elements { first: false };
                    let on_line = match self.elements_on_line {
                        (last, n) if last == line => n + 1,
                        _ => 1,
                    };
                    self.elements_on_line = (line, on_line);
                    let row = (on_line > 1).then_some(on_line);
                    return Ok(Some(Event::Element { line, row, bytes }));
                }
                State::Rest => {
                    self.finish_document()?;
                    self.state = State::Documents;
                }
            }
        }
    }
}

impl<R: BufRead> Iterator for JsonArrays<R> {
    type Item = Result<Event, FormatError>;

    /// The next element or captured sibling, in file order; `None` at the end.
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(event) = self.queued.pop_front() {
            return Some(Ok(event));
        }
        let mut siblings = Vec::new();
        match self.step(&mut siblings) {
            Ok(element) => {
                self.queued.extend(siblings);
                self.queued.extend(element);
                self.queued.pop_front().map(Ok)
            }
            Err(e) => {
                self.state = State::Done;
                Some(Err(e))
            }
        }
    }
}

fn printable(b: u8) -> char {
    if b.is_ascii_graphic() { b as char } else { '?' }
}

/// Reads `R` with every `\r\n` turned into `\n`. The CSV reader counts the lines of `\r\n`
/// files one short after the first record; CSV from Windows tools and browsers (phpMyAdmin,
/// Shlink's web client) ends lines that way, and errors must name the right line.
pub struct LfLines<R> {
    inner: R,
}

impl<R> LfLines<R> {
    pub fn new(inner: R) -> Self {
        LfLines { inner }
    }
}

impl<R: BufRead> io::Read for LfLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut out = 0;
        while out < buf.len() {
            let chunk = self.inner.fill_buf()?;
            let Some(&first) = chunk.first() else { break };
            if first == b'\r' {
                let crlf = match chunk.get(1) {
                    Some(&next) => next == b'\n',
                    None => {
                        // The buffer ends on the `\r`: look at what comes after it.
                        self.inner.consume(1);
                        if self.inner.fill_buf()?.first() != Some(&b'\n') {
                            buf[out] = b'\r';
                            out += 1;
                        }
                        continue;
                    }
                };
                self.inner.consume(1);
                if !crlf {
                    buf[out] = b'\r';
                    out += 1;
                }
                continue;
            }
            let limit = (buf.len() - out).min(chunk.len());
            let run = chunk[..limit]
                .iter()
                .position(|&c| c == b'\r')
                .unwrap_or(limit);
            buf[out..out + run].copy_from_slice(&chunk[..run]);
            self.inner.consume(run);
            out += run;
            if run == limit {
                break;
            }
        }
        Ok(out)
    }
}
