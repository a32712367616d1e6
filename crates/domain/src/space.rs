use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{FieldErrors, Id, Mode};

pub const SPACE_NAME_MAX: usize = 32;

/// A named, coloured group of links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Space {
    pub id: Id,
    pub owner_id: Id,
    pub name: String,
    pub color: Color,
    /// How many links the space holds, when the backend knows it.
    pub links: Option<u64>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One of the six space colours (1–6 on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub struct Color(u8);

impl Color {
    pub const COUNT: u8 = 6;

    pub fn new(n: u8) -> Option<Color> {
        (1..=Self::COUNT).contains(&n).then_some(Color(n))
    }

    pub fn all() -> impl Iterator<Item = Color> {
        (1..=Self::COUNT).map(Color)
    }

    pub fn number(self) -> u8 {
        self.0
    }

    pub fn name(self) -> &'static str {
        ["red", "orange", "yellow", "green", "blue", "purple"][usize::from(self.0 - 1)]
    }

    /// Accepts the number (1–6) or the name.
    pub fn parse(s: &str) -> Option<Color> {
        let s = s.trim();
        Self::all().find(|c| s == c.0.to_string() || c.name().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<Color> for u8 {
    fn from(c: Color) -> u8 {
        c.0
    }
}

impl TryFrom<u8> for Color {
    type Error = String;
    fn try_from(n: u8) -> Result<Self, String> {
        Color::new(n).ok_or_else(|| format!("colour {n} is not 1-6"))
    }
}

/// A space create or update request as typed or sent on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpacePatch {
    pub name: Option<String>,
    pub color: Option<Color>,
}

/// The key two space names share when they name the same space: trimmed, as names are stored,
/// and ASCII case folded, as the database compares them (`COLLATE NOCASE`), so `Launch` and
/// `launch` are one space and `Über` and `über` two, in a lookup as in the table.
pub fn space_name_key(name: &str) -> String {
    name.trim().to_ascii_lowercase()
}

/// Checks a space request; uniqueness of the name is the backend's rule.
pub fn validate_space_input(input: &SpaceInput, mode: Mode) -> Result<SpacePatch, FieldErrors> {
    let mut errors = FieldErrors::default();
    let mut patch = SpacePatch::default();
    match input.name.as_deref().map(str::trim) {
        Some("") | None if mode == Mode::Create => errors.add("name", "is required"),
        Some("") => errors.add("name", "must not be empty"),
        Some(name) if name.chars().count() > SPACE_NAME_MAX => errors.add(
            "name",
            format!("must be at most {SPACE_NAME_MAX} characters"),
        ),
        Some(name) if name.chars().any(char::is_control) => {
            errors.add("name", "must not contain control characters")
        }
        Some(name) => patch.name = Some(name.to_owned()),
        None => {}
    }
    match input.color.as_deref().map(str::trim) {
        Some("") | None if mode == Mode::Create => errors.add("color", "is required"),
        Some(c) => match Color::parse(c) {
            Some(color) => patch.color = Some(color),
            None => errors.add(
                "color",
                format!(
                    "must be a colour: 1 to 6, or one of {}",
                    Color::all().map(Color::name).collect::<Vec<_>>().join(", ")
                ),
            ),
        },
        None => {}
    }
    errors.into_result(patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_names_fold_as_the_database_compares_them() {
        assert_eq!(space_name_key(" Launch "), space_name_key("launch"));
        assert_ne!(space_name_key("Über"), space_name_key("über"));
    }
}
