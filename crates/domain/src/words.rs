//! Numbers and counts as a person reads them, for every front end's messages, and text cut to
//! the cells a terminal has for it.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::shown;

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

/// `text` as a terminal may show it ([`shown`]), cut to `cells` terminal cells (wide characters
/// take two), ending in `…` when cut: the CLI's table cells and every clipped line of the TUI.
pub fn clip(text: &str, cells: usize) -> String {
    let text = shown(text);
    if text.width() <= cells {
        return text.into_owned();
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
    fn clipped_text_shows_control_characters_and_counts_them_as_shown() {
        assert_eq!(clip("a\u{1b}[2Jb", 20), "a\\u{1b}[2Jb");
        assert_eq!(clip("a\u{1b}[2Jb", 6), "a\\u{1…");
        assert_eq!(clip("x\ny", 3), "x\\…");
    }
}
