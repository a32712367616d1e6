//! Progress on long work (imports, exports, copies, bulk changes): a bar with the rate and the
//! time left, drawn on standard error while it is a terminal — and nothing at all when it is
//! piped, or with `--json` or `--quiet`. Cloning a [`Progress`] gives another handle to the same
//! bar, for a reader thread to move it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

use super::context::Context;

/// What the bar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Links, spaces, requests: shown as `1,234/5,678 links`, with a rate per second.
    Items(&'static str),
    /// Bytes of a file being read, when the number of rows is not known ahead.
    Bytes,
}

#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for `total` units (or an open count when unknown), shown only where a person
    /// watches: stderr a terminal, neither `--json` nor `--quiet`.
    pub fn start(ctx: &Context, label: &str, total: Option<u64>, unit: Unit) -> Progress {
        if ctx.json || ctx.quiet || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        Progress::drawn(label, total, unit, ProgressDrawTarget::stderr())
    }

    /// A bar that is never drawn (its handle still counts).
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    fn drawn(label: &str, total: Option<u64>, unit: Unit, target: ProgressDrawTarget) -> Progress {
        // Dropped without `finish` (an error on the way), the bar still clears its line.
        let bar =
            ProgressBar::with_draw_target(total, target).with_finish(ProgressFinish::AndClear);
        let template = match (unit, total.is_some()) {
            (Unit::Items(noun), true) => format!(
                "{{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {noun} · {{per_sec}} · {{eta}} left"
            ),
            (Unit::Items(noun), false) => {
                format!("{{spinner}} {{msg}} {{human_pos}} {noun} · {{per_sec}}")
            }
            (Unit::Bytes, true) => "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} · \
                                    {binary_bytes_per_sec} · {eta} left"
                .to_owned(),
            (Unit::Bytes, false) => {
                "{spinner} {msg} {binary_bytes} · {binary_bytes_per_sec}".to_owned()
            }
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    /// Moves the bar to `done` (for work that reports how far it has come, not steps).
    pub fn set_position(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    pub fn set_length(&self, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
    }

    /// Replaces the text before the bar.
    pub fn message(&self, text: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_message(text.into());
        }
    }

    /// Removes the bar, leaving the terminal as it was for the summary that follows.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Wraps a reader so that every byte read moves `progress`.
pub struct Counting<R> {
    inner: R,
    progress: Progress,
}

impl<R> Counting<R> {
    pub fn new(inner: R, progress: Progress) -> Self {
        Counting { inner, progress }
    }
}

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_hidden_bar_counts_nothing_and_draws_nothing() {
        let p = Progress::hidden();
        p.inc(10);
        p.message("x");
        p.finish();
        let mut read = Counting::new("abc".as_bytes(), p);
        let mut out = String::new();
        read.read_to_string(&mut out).unwrap();
        assert_eq!(out, "abc");
    }

    #[test]
    fn a_bar_moves_with_what_is_read() {
        let p = Progress::drawn(
            "reading",
            Some(3),
            Unit::Bytes,
            ProgressDrawTarget::hidden(),
        );
        let mut read = Counting::new("abc".as_bytes(), p.clone());
        read.read_to_end(&mut Vec::new()).unwrap();
        assert_eq!(p.bar.as_ref().unwrap().position(), 3);
    }
}
