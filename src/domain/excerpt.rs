//! Short excerpts of text someone else wrote, inside a message of linkdeck's own: a server's
//! error message, or a name a file gives (a column, a key, a space). Text of any length is shown
//! as a line or two that says how much more there was, with control and other invisible
//! characters written as escapes (`\n`, `\u{202e}`), so that it can neither flood a terminal nor
//! steer it.

/// Characters kept of a server's message.
pub const EXCERPT_CHARS: usize = 200;

/// Characters kept of a name a file gives.
pub const NAME_CHARS: usize = 64;

/// A server's message: trimmed, its first [`EXCERPT_CHARS`] characters.
pub fn excerpt(text: &str) -> String {
    cut(text.trim(), EXCERPT_CHARS)
}

/// A name a file gives, as it is (spaces around it included): its first [`NAME_CHARS`]
/// characters.
pub fn name_excerpt(text: &str) -> String {
    cut(text, NAME_CHARS)
}

/// `text`'s first `chars` characters, escaped, and `…(N more bytes)` when there is more.
fn cut(text: &str, chars: usize) -> String {
    let (kept, rest) = match text.char_indices().nth(chars) {
        None => (text, ""),
        Some((at, _)) => text.split_at(at),
    };
    let mut out = String::with_capacity(kept.len());
    for c in kept.chars() {
        match c {
            // Shown as themselves: the message quotes the text, it does not encode it.
            '"' | '\'' | '\\' => out.push(c),
            _ => out.extend(c.escape_debug()),
        }
    }
    if !rest.is_empty() {
        out.push_str(&format!(
            "…({} more bytes)",
            super::thousands(rest.len() as u64)
        ));
    }
    out
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
    fn excerpts_show_what_is_invisible_and_keep_quotes() {
        assert_eq!(name_excerpt("Grüße \"x\" 'y'"), "Grüße \"x\" 'y'");
        assert_eq!(
            name_excerpt("a\nb\u{1b}[2J\u{202e}c"),
            "a\\nb\\u{1b}[2J\\u{202e}c"
        );
        assert_eq!(name_excerpt(" url"), " url");
        let long = "é".repeat(100_000);
        assert_eq!(
            name_excerpt(&long),
            format!("{}…(199,872 more bytes)", "é".repeat(NAME_CHARS))
        );
    }
}
