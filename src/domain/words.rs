//! Numbers and counts as a person reads them, for every front end's messages, text cut to the
//! cells a terminal has for it, and text from outside shown safely in a message.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `1,204`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 link`, `3 links`, `1,204 links`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

/// `text` cut to `cells` terminal cells (wide characters take two), ending in `…` when cut:
/// the CLI's table cells and every clipped line of the TUI.
pub fn clip(text: &str, cells: usize) -> String {
    if text.width() <= cells {
        return text.to_owned();
    }
    if cells == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > cells - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The characters of outside text a message shows at most.
pub const EXCERPT_MAX: usize = 64;

/// Text from outside (a file's column name or key, a value a parser quotes back) as a message
/// may show it: its first [`EXCERPT_MAX`] characters, then `…` and how long it was, with control
/// and other invisible characters written as escapes (`\n`, `\u{202e}`), so that what a file
/// holds can neither flood a terminal nor steer it.
pub fn excerpt(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == EXCERPT_MAX {
            out.push_str(&format!(
                "… ({} characters)",
                thousands(text.chars().count() as u64)
            ));
            break;
        }
        match c {
            // Shown as themselves: the message quotes the text, it does not encode it.
            '"' | '\'' | '\\' => out.push(c),
            _ => out.extend(c.escape_debug()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_naturally() {
        assert_eq!(thousands(1_204_000), "1,204,000");
        assert_eq!(thousands(12), "12");
        assert_eq!(plural(1, "click"), "1 click");
        assert_eq!(plural(0, "click"), "0 clicks");
        assert_eq!(plural(2_500, "space"), "2,500 spaces");
    }

    #[test]
    fn excerpts_are_short_and_show_what_is_invisible() {
        assert_eq!(excerpt("Grüße \"x\" 'y'"), "Grüße \"x\" 'y'");
        assert_eq!(
            excerpt("a\nb\u{1b}[2J\u{202e}c"),
            "a\\nb\\u{1b}[2J\\u{202e}c"
        );
        let long = "é".repeat(100_000);
        let shown = excerpt(&long);
        assert_eq!(
            shown,
            format!("{}… (100,000 characters)", "é".repeat(EXCERPT_MAX))
        );
    }
}
