//! Key combinations as `[keys]` spells them (`q`, `G`, `ctrl-s`, `shift-tab`, `pgdn`, `f1`), in
//! the one form a terminal's key press is folded to as well.

use std::fmt;

/// A key without its modifiers: the keys a binding may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyName {
    Char(char),
    F(u8),
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Delete,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
}

/// One key combination. Shift is folded into the character for printable keys (`G`, not
/// `shift-g`), because terminals report it inconsistently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyCombo {
    key: KeyName,
    ctrl: bool,
    alt: bool,
    shift: bool,
}

const NAMED: [(&str, KeyName); 14] = [
    ("enter", KeyName::Enter),
    ("esc", KeyName::Esc),
    ("tab", KeyName::Tab),
    ("backtab", KeyName::BackTab),
    ("backspace", KeyName::Backspace),
    ("delete", KeyName::Delete),
    ("up", KeyName::Up),
    ("down", KeyName::Down),
    ("left", KeyName::Left),
    ("right", KeyName::Right),
    ("home", KeyName::Home),
    ("end", KeyName::End),
    ("pgup", KeyName::PageUp),
    ("pgdn", KeyName::PageDown),
];

impl KeyCombo {
    /// The combination of `key` and the modifiers held, in its one spelling.
    pub fn new(key: KeyName, ctrl: bool, alt: bool, shift: bool) -> KeyCombo {
        let (key, shift) = match key {
            KeyName::Char(c) => (
                KeyName::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
                false,
            ),
            // Shift-Tab arrives as BackTab; one spelling for both.
            KeyName::BackTab => (KeyName::Tab, true),
            other => (other, shift),
        };
        KeyCombo {
            key,
            ctrl,
            alt,
            shift,
        }
    }

    /// Parses `q`, `G`, `?`, `ctrl-s`, `alt-x`, `shift-tab`, `pgdn`, `f1`, `space`.
    pub fn parse(s: &str) -> Option<KeyCombo> {
        let s = s.trim();
        if s.is_empty() {
            return None;
        }
        let mut parts: Vec<&str> = s.split('-').collect();
        // `-` alone, or a trailing `-` as in `ctrl--`, is the minus key.
        if s.ends_with('-') {
            parts.pop();
            parts.pop();
            parts.push("-");
        }
        let key = parts.pop()?;
        let (mut ctrl, mut alt, mut shift) = (false, false, false);
        for m in parts {
            match m.to_ascii_lowercase().as_str() {
                "ctrl" | "c" => ctrl = true,
                "alt" | "a" | "m" => alt = true,
                "shift" | "s" => shift = true,
                _ => return None,
            }
        }
        let lower = key.to_ascii_lowercase();
        let key = if key.chars().count() == 1 {
            let c = key.chars().next()?;
            if c.is_control() {
                return None;
            }
            KeyName::Char(if shift { c.to_ascii_uppercase() } else { c })
        } else if lower == "space" {
            KeyName::Char(' ')
        } else if lower == "pagedown" {
            KeyName::PageDown
        } else if lower == "pageup" {
            KeyName::PageUp
        } else if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            if !(1..=12).contains(&n) {
                return None;
            }
            KeyName::F(n)
        } else {
            NAMED.iter().find(|(name, _)| *name == lower)?.1
        };
        Some(KeyCombo::new(key, ctrl, alt, shift))
    }
}

impl fmt::Display for KeyCombo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        if self.shift {
            f.write_str("shift-")?;
        }
        match self.key {
            KeyName::Char(' ') => f.write_str("space"),
            KeyName::Char(c) => write!(f, "{c}"),
            KeyName::F(n) => write!(f, "f{n}"),
            // Every other key has its name in NAMED.
            named => {
                let name = NAMED.iter().find(|(_, key)| *key == named);
                f.write_str(name.map_or("", |(name, _)| name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_strings_round_trip() {
        for s in [
            "q",
            "G",
            "?",
            "ctrl-s",
            "alt-x",
            "shift-tab",
            "pgdn",
            "f5",
            "space",
            "-",
        ] {
            let combo = KeyCombo::parse(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(combo.to_string(), s);
        }
        assert_eq!(KeyCombo::parse("shift-g"), KeyCombo::parse("G"));
    }
}
