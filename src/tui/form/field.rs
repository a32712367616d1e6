//! A one-line text field on `tui-input`: typed keys, bracketed paste, masking for secrets, and a
//! horizontal scroll that keeps the cursor in view however long the value is.

use ratatui::crossterm::event::{Event, KeyCode};
use ratatui::style::Style;
use ratatui::text::Span;
use tui_input::backend::crossterm::EventHandler;
use tui_input::{Input, InputRequest};

use crate::domain::{SUBSTITUTE, is_unshowable, shown};
use crate::tui::keys::Key;

/// Shown instead of each character of a masked value.
const MASK: char = '•';

#[derive(Clone, Default)]
pub struct TextField {
    input: Input,
    masked: bool,
}

impl std::fmt::Debug for TextField {
    // A masked value (a password) stays out of debug output and logs too.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = if self.masked { "***" } else { self.value() };
        f.debug_struct("TextField").field("value", &value).finish()
    }
}

/// What a field shows in a given width: the visible slice and the cursor's column in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldView {
    pub text: String,
    pub cursor: u16,
}

impl TextField {
    pub fn new(value: impl Into<String>) -> TextField {
        let value: String = value.into();
        let end = value.chars().count();
        TextField {
            input: Input::new(value).with_cursor(end),
            masked: false,
        }
    }

    /// A field whose value is never drawn (passwords).
    pub fn masked(mut self) -> TextField {
        self.masked = true;
        self
    }

    pub fn value(&self) -> &str {
        self.input.value()
    }

    pub fn is_empty(&self) -> bool {
        self.input.value().is_empty()
    }

    /// Whether the cursor is after the last character.
    pub fn at_end(&self) -> bool {
        self.input.cursor() == self.input.value().chars().count()
    }

    pub fn set(&mut self, value: impl Into<String>) {
        *self = TextField {
            masked: self.masked,
            ..TextField::new(value)
        };
    }

    /// Edits the value with a raw key; true when the value changed. Keys the input does not
    /// know (Tab, Enter, Esc, arrows up and down) are left to the form.
    pub fn handle_key(&mut self, key: &Key) -> bool {
        if matches!(
            key.code,
            KeyCode::Tab | KeyCode::BackTab | KeyCode::Enter | KeyCode::Esc
        ) {
            return false;
        }
        self.input
            .handle_event(&Event::Key(key.event()))
            .is_some_and(|changed| changed.value)
    }

    /// Inserts pasted text at the cursor. A field is one line: line breaks and other control
    /// characters are dropped, so a URL copied with its newline pastes clean.
    pub fn paste(&mut self, text: &str) -> bool {
        let mut changed = false;
        for c in text.chars().filter(|c| !c.is_control()) {
            changed |= self
                .input
                .handle(InputRequest::InsertChar(c))
                .is_some_and(|s| s.value);
        }
        changed
    }

    /// What stands for `c` on screen: the mask of a masked field, and a one-cell stand-in for a
    /// control character (a value that came from outside may hold one), so the cursor stays
    /// over the character it is on.
    fn cell(&self, c: char) -> char {
        if self.masked {
            MASK
        } else if is_unshowable(c) {
            SUBSTITUTE
        } else {
            c
        }
    }

    /// The part of the value that fits in `width` columns, scrolled so the cursor stays visible
    /// (one column is kept for the cursor after the last character).
    pub fn view(&self, width: u16) -> FieldView {
        let width = usize::from(width.max(1));
        let cursor = self.input.cursor();
        let scroll = cursor.saturating_sub(width - 1);
        let text: String = self
            .input
            .value()
            .chars()
            .skip(scroll)
            .take(width)
            .map(|c| self.cell(c))
            .collect();
        FieldView {
            text,
            cursor: u16::try_from(cursor - scroll).unwrap_or(0),
        }
    }

    /// The value as one span of `width` columns: padded when focused (so the input area shows),
    /// the placeholder in `dim` when empty and not focused.
    pub fn span(
        &self,
        width: u16,
        focused: bool,
        placeholder: &str,
        style: Style,
        dim: Style,
    ) -> (Span<'static>, Option<u16>) {
        let view = self.view(width);
        if focused {
            let padded = format!("{:<w$}", view.text, w = usize::from(width));
            (Span::styled(padded, style), Some(view.cursor))
        } else if self.is_empty() {
            (Span::styled(clip(placeholder, width), dim), None)
        } else {
            // Unfocused long values show their start, as people read them.
            let text: String = self
                .input
                .value()
                .chars()
                .take(usize::from(width))
                .map(|c| self.cell(c))
                .collect();
            (Span::styled(text, Style::new()), None)
        }
    }
}

/// `text` as a terminal may show it ([`shown`]), cut to `width` characters, with `…` when cut.
pub fn clip(text: &str, width: u16) -> String {
    let text = shown(text);
    let width = usize::from(width);
    if text.chars().count() <= width {
        text.into_owned()
    } else if width == 0 {
        String::new()
    } else {
        let mut out: String = text.chars().take(width - 1).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyModifiers;

    use super::*;

    fn key(code: KeyCode) -> Key {
        Key {
            code,
            modifiers: KeyModifiers::NONE,
            action: None,
        }
    }

    fn typed(field: &mut TextField, text: &str) {
        for c in text.chars() {
            field.handle_key(&key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn typing_and_erasing_edit_the_value() {
        let mut field = TextField::default();
        typed(&mut field, "https://x.io");
        assert_eq!(field.value(), "https://x.io");
        assert!(field.handle_key(&key(KeyCode::Backspace)));
        assert_eq!(field.value(), "https://x.i");
        assert!(!field.handle_key(&key(KeyCode::Tab)));
    }

    #[test]
    fn long_values_scroll_to_keep_the_cursor_visible() {
        let field = TextField::new("https://example.com/a/very/long/path");
        let view = field.view(10);
        assert_eq!(view.text, "long/path");
        assert_eq!(view.cursor, 9);
        let mut field = field;
        field.handle_key(&key(KeyCode::Home));
        let view = field.view(10);
        assert_eq!(view.text, "https://ex");
        assert_eq!(view.cursor, 0);
    }

    #[test]
    fn masked_values_never_show() {
        let field = TextField::new("hunter2").masked();
        assert_eq!(field.view(20).text, "•••••••");
        let (span, _) = field.span(20, false, "", Style::new(), Style::new());
        assert!(!span.content.contains("hunter"));
    }

    #[test]
    fn masked_values_stay_out_of_debug_output() {
        let field = TextField::new("hunter2").masked();
        assert!(!format!("{field:?}").contains("hunter2"));
    }

    #[test]
    fn a_control_character_in_a_value_takes_one_visible_cell() {
        // A URL from an older database or another server, edited as it is.
        let field = TextField::new("https://x.io/\u{1b}[2J\u{202e}");
        let view = field.view(40);
        assert_eq!(view.text, "https://x.io/\u{fffd}[2J\u{fffd}");
        assert_eq!(view.cursor, 18, "after the last of its 18 characters");
        let (span, _) = field.span(40, false, "", Style::new(), Style::new());
        assert_eq!(span.content, "https://x.io/\u{fffd}[2J\u{fffd}");
        assert_eq!(
            field.value(),
            "https://x.io/\u{1b}[2J\u{202e}",
            "the value itself is kept"
        );
    }

    #[test]
    fn paste_inserts_at_the_cursor_without_line_breaks() {
        let mut field = TextField::new("ab");
        field.handle_key(&key(KeyCode::Left));
        assert!(field.paste("https://x.io/\n"));
        assert_eq!(field.value(), "ahttps://x.io/b");
    }
}
