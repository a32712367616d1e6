//! A short excerpt of a text someone else wrote, such as a server's error message: a message of
//! any length is shown as a line or two, and says how much more there was.

/// Characters an excerpt keeps.
pub const EXCERPT_CHARS: usize = 200;

/// `text`, trimmed, when it is at most [`EXCERPT_CHARS`] characters; else its first
/// [`EXCERPT_CHARS`] characters and `…(N more bytes)`.
pub fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}…({} more bytes)",
            text[..at].trim_end(),
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
}
