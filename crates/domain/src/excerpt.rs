//! Short excerpts of text someone else wrote, inside a message of linkdeck's own: a server's
//! error message, or a name a file gives (a column, a key, a space). Text of any length is shown
//! as a line or two that says how much more there was, so that it cannot flood a terminal or a
//! log. An excerpt keeps its characters exact (`--json` carries them so); what a terminal must not
//! receive is written out where the message is shown (`shown.rs`).

/// Characters kept of a server's message.
pub const EXCERPT_CHARS: usize = 200;

/// Characters kept of a name a file gives.
pub const NAME_CHARS: usize = 64;

/// A server's message: trimmed, its first [`EXCERPT_CHARS`] characters (trimmed again where
/// cut).
pub fn excerpt(text: &str) -> String {
    cut(text.trim(), EXCERPT_CHARS, str::trim_end)
}

/// A name a file gives, as it is (spaces around it included): its first [`NAME_CHARS`]
/// characters.
pub fn name_excerpt(text: &str) -> String {
    cut(text, NAME_CHARS, |kept| kept)
}

/// `text`'s first `chars` characters, and `…(N more bytes)` when there is more; `kept` tidies
/// the part kept of a text that is cut.
fn cut(text: &str, chars: usize, kept: fn(&str) -> &str) -> String {
    match text.char_indices().nth(chars) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}…({} more bytes)",
            kept(&text[..at]),
            super::thousands((text.len() - at) as u64)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_kept_and_a_long_one_says_what_is_left() {
        assert_eq!(excerpt("  Server Error\n"), "Server Error");
        let exact = "é".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&exact), exact);
        let long = format!("{}{}", "é".repeat(EXCERPT_CHARS), "x".repeat(5000));
        assert_eq!(
            excerpt(&long),
            format!("{}…(5,000 more bytes)", "é".repeat(EXCERPT_CHARS))
        );
    }

    #[test]
    fn a_name_is_kept_exactly_up_to_its_cut() {
        assert_eq!(name_excerpt("Grüße \"x\" 'y'"), "Grüße \"x\" 'y'");
        assert_eq!(name_excerpt(" url\u{1b}[2J"), " url\u{1b}[2J");
        let long = "é".repeat(100_000);
        assert_eq!(
            name_excerpt(&long),
            format!("{}…(199,872 more bytes)", "é".repeat(NAME_CHARS))
        );
    }
}
