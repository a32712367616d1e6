//! Text that came from outside — an import file, a remote server, an older database — on its way
//! to a terminal. A terminal acts on control characters instead of showing them (`ESC [2J`
//! clears the screen, an OSC sequence sets the window's title, BEL rings), and bidirectional
//! overrides reorder the characters shown around them; neither may reach a terminal from text
//! linkdeck did not write itself. Every front end shows such text through [`shown`] (or
//! [`Shown`]), which writes these characters out visibly; titles carried in by an import are
//! kept clean of them by [`cleaned`]. JSON output needs neither: it escapes control characters
//! itself and is read by programs, which get the text exactly.

use std::borrow::Cow;
use std::fmt;

/// Whether a terminal would act on `c` instead of showing it: a C0 control (tab and line breaks
/// included), DEL, a C1 control, or a bidirectional embedding, override or isolate
/// (U+202A–U+202E, U+2066–U+2069), which reorders what is shown around it.
pub fn is_unshowable(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// What a one-line text field shows in place of an unshowable character, keeping one cell for
/// each character so the cursor stays where it is.
pub const SUBSTITUTE: char = '\u{FFFD}';

/// `text` as a terminal may show it: each unshowable character written out — `\n`, `\r` and
/// `\t` as such, every other one as `\u{1b}` — and everything else as it is. Borrowed when
/// there is nothing to write out. What it gives holds no unshowable character, so showing it
/// again changes nothing.
pub fn shown(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_unshowable) {
        Cow::Owned(Shown(text).to_string())
    } else {
        Cow::Borrowed(text)
    }
}

/// [`shown`] of a text already owned, kept as it is when there is nothing to write out.
pub fn into_shown(text: String) -> String {
    match shown(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(visible) => visible,
    }
}

/// [`shown`] as a `Display`, for text written into a larger message.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a>(pub &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(is_unshowable) {
            f.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c => write!(f, "{}", c.escape_unicode())?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// `text` with its unshowable characters taken out, for a title another service wrote: a run
/// of whitespace that holds a line break or a tab becomes one space (as a browser shows a
/// title), every other unshowable character goes. Borrowed when there is nothing to take out.
pub fn cleaned(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unshowable) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // A run of whitespace waits here until it ends: it stays as it was unless it held a
    // control character.
    let mut run = String::new();
    let mut run_had_control = false;
    for c in text.chars() {
        if c.is_whitespace() {
            run.push(c);
            run_had_control |= c.is_control();
            continue;
        }
        if !run.is_empty() {
            if run_had_control {
                out.push(' ');
            } else {
                out.push_str(&run);
            }
            run.clear();
            run_had_control = false;
        }
        if !is_unshowable(c) {
            out.push(c);
        }
    }
    if run_had_control {
        out.push(' ');
    } else {
        out.push_str(&run);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_overrides_are_written_out() {
        assert_eq!(
            shown("a\u{1b}[2Jb\u{1b}]0;pwned\u{7}"),
            "a\\u{1b}[2Jb\\u{1b}]0;pwned\\u{7}"
        );
        assert_eq!(shown("one\ntwo\r\tthree"), "one\\ntwo\\r\\tthree");
        assert_eq!(shown("\0\u{7f}\u{9b}31m"), "\\u{0}\\u{7f}\\u{9b}31m");
        assert_eq!(
            shown("abc\u{202e}fed\u{2066}x\u{2069}"),
            "abc\\u{202e}fed\\u{2066}x\\u{2069}"
        );
    }

    #[test]
    fn printable_text_is_kept_as_it_is_and_borrowed() {
        for text in [
            "",
            "Grüße ✓",
            "例え.jp/パス",
            "a\\u{1b}",
            "עברית and العربية",
            "🎉",
        ] {
            assert!(
                matches!(shown(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
            assert!(
                matches!(cleaned(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
        }
        assert_eq!(Shown("plain").to_string(), "plain");
    }

    #[test]
    fn showing_twice_changes_nothing() {
        let once = shown("x\u{1b}\u{85}\u{202d}\n").into_owned();
        assert!(!once.chars().any(is_unshowable));
        assert_eq!(shown(&once), once);
    }

    #[test]
    fn cleaning_drops_controls_and_turns_line_breaks_into_a_space() {
        assert_eq!(cleaned("One\0Two\u{1a}Three\u{8}Four"), "OneTwoThreeFour");
        assert_eq!(cleaned("Spring\r\n\tSale"), "Spring Sale");
        assert_eq!(cleaned("a \n b"), "a b");
        assert_eq!(
            cleaned("Clear\u{1b}[2J \u{9b}31m\u{202e}evil"),
            "Clear[2J 31mevil"
        );
        // Spaces that were there stay as they were.
        assert_eq!(cleaned("two  spaces\u{7}"), "two  spaces");
        assert_eq!(cleaned("end\n"), "end ");
    }
}
