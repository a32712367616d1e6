//! The rules of bringing links in from elsewhere (an import file, another profile): where a row
//! came from, what an alias that is already taken does, and what a migrated link keeps.

use std::fmt;

use jiff::Timestamp;

use super::{FieldErrors, TrafficHour, cleaned};

/// Where a row of an import came from: its line, and — when one line holds many rows, as the
/// `INSERT` statements of an SQL dump do — its place on that line. Errors are keyed by it
/// (`line 12: url`, `line 40, row 3: alias`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    pub line: usize,
    pub row: Option<usize>,
}

impl Place {
    pub fn line(line: usize) -> Place {
        Place { line, row: None }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.row {
            Some(row) => write!(f, "line {}, row {row}", self.line),
            None => write!(f, "line {}", self.line),
        }
    }
}

/// A row of an import that got a new alias because its own was taken.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Renamed {
    /// Where the row came from (`line 12`).
    pub place: String,
    pub from: String,
    pub to: String,
}

/// What an import or a copy does with a link whose alias is already taken on its domain (by a
/// stored link or an earlier row).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnConflict {
    /// The row is an error: nothing is imported.
    #[default]
    Fail,
    /// The row is left out; the stored link stays as it is.
    Skip,
    /// The row gets the first free alias of `ALIAS-2`, `ALIAS-3`, …
    Rename,
}

impl OnConflict {
    pub const ALL: [OnConflict; 3] = [OnConflict::Fail, OnConflict::Skip, OnConflict::Rename];

    pub fn as_str(self) -> &'static str {
        match self {
            OnConflict::Fail => "fail",
            OnConflict::Skip => "skip",
            OnConflict::Rename => "rename",
        }
    }

    pub fn parse(s: &str) -> Option<OnConflict> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// The alias `rename` tries as its `n`th choice (n ≥ 2), kept within the alias length limit by
/// shortening the original.
pub fn renamed_alias(alias: &str, n: u32) -> String {
    let suffix = format!("-{n}");
    let room = super::ALIAS_MAX.saturating_sub(suffix.len());
    let base: String = alias.chars().take(room).collect();
    format!("{base}{suffix}")
}

/// What a link brings along from where it lived before, beyond the fields a person types: its
/// title, its click total (so a link expired by its click limit stays expired), its previews
/// (visits of chat apps' preview agents, counted apart), its creation date and its traffic
/// history. A link created by hand carries none of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    pub title: Option<String>,
    /// At least the clicks of `traffic`: the total before the move, which may hold clicks the
    /// history does not (an import keeps the larger of the two).
    pub clicks: u64,
    pub previews: u64,
    pub created_at: Option<Timestamp>,
    /// Hour by hour, when the source kept it (linkdeck's own JSON).
    pub traffic: Vec<TrafficHour>,
}

/// Titles longer than this are cut (at a character boundary) rather than refused: they come from
/// other services' page fetches, not from a person.
pub const TITLE_MAX: usize = 512;

/// Click totals above this are refused as implausible (SQLite stores a signed 64-bit integer).
pub const CLICKS_MAX: u64 = i64::MAX as u64;

/// Checks and normalises what a row carries: a title is [`cleaned`] of control characters (a
/// YOURLS dump's `\0`, `\Z`, `\b`, an escape sequence: the link comes in, its title as a
/// browser would have shown it), trimmed and cut to [`TITLE_MAX`] characters, an empty one
/// dropped; a creation date may be RFC 3339 or `YYYY-MM-DD HH:MM:SS` (read as UTC).
pub fn carried(
    title: Option<&str>,
    clicks: Option<&str>,
    previews: Option<&str>,
    created_at: Option<&str>,
) -> Result<Carried, FieldErrors> {
    let mut errors = FieldErrors::default();
    let title = title
        .map(cleaned)
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.chars().take(TITLE_MAX).collect::<String>());
    // Clicks and previews alike: counts, named by their field.
    let mut count =
        |field: &str, text: Option<&str>| match text.map(str::trim).filter(|c| !c.is_empty()) {
            None => 0,
            Some(text) => match text.parse::<u64>() {
                Ok(n) if n <= CLICKS_MAX => n,
                _ => {
                    errors.add(
                        field,
                        format!("must be a whole number of {field}, 0 or more"),
                    );
                    0
                }
            },
        };
    let clicks = count("clicks", clicks);
    let previews = count("previews", previews);
    let created_at = match created_at.map(str::trim).filter(|c| !c.is_empty()) {
        None => None,
        Some(text) => match parse_instant(text) {
            Some(at) => Some(at),
            None => {
                errors.add(
                    "created_at",
                    "must be a date and time such as 2024-05-01T09:30:00Z",
                );
                None
            }
        },
    };
    errors.into_result(Carried {
        title,
        clicks,
        previews,
        created_at,
        traffic: Vec::new(),
    })
}

/// An instant written by another service: RFC 3339 (`2024-05-01T09:30:00+02:00`, `…Z`), the
/// same with a colon-less offset (`+0000`, as Bitly writes), or a bare `YYYY-MM-DD HH:MM:SS` /
/// `YYYY-MM-DDTHH:MM:SS[.fff]` taken as UTC (as SQL dumps and Kutt on SQLite write).
pub fn parse_instant(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(at);
    }
    // `+0000` / `-0530` at the end: insert the colon RFC 3339 wants.
    let bytes = text.as_bytes();
    if bytes.len() > 5 {
        let (head, tail) = text.split_at(text.len() - 5);
        let t = tail.as_bytes();
        if (t[0] == b'+' || t[0] == b'-') && t[1..].iter().all(u8::is_ascii_digit) {
            let fixed = format!("{head}{}:{}", &tail[..3], &tail[3..]);
            if let Ok(at) = fixed.parse::<Timestamp>() {
                return Some(at);
            }
        }
    }
    let civil = text.replacen(' ', "T", 1);
    civil
        .parse::<jiff::civil::DateTime>()
        .ok()
        .and_then(|dt| dt.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|z| z.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_name_lines_and_rows() {
        assert_eq!(Place::line(12).to_string(), "line 12");
        let p = Place {
            line: 40,
            row: Some(3),
        };
        assert_eq!(p.to_string(), "line 40, row 3");
        let mut all = FieldErrors::default();
        all.add_at(p, FieldErrors::default());
        assert!(all.is_empty());
        let mut one = FieldErrors::default();
        one.add("url", "bad");
        all.add_at(p, one);
        assert!(all.contains("line 40, row 3: url"));
    }

    #[test]
    fn instants_in_the_shapes_other_services_write() {
        let want: Timestamp = "2020-01-02T23:51:47Z".parse().unwrap();
        for text in [
            "2020-01-02T23:51:47Z",
            "2020-01-02T23:51:47+0000",
            "2020-01-03T00:51:47+01:00",
            "2020-01-03T00:51:47+0100",
            "2020-01-02 23:51:47",
            "2020-01-02T23:51:47.000",
        ] {
            assert_eq!(parse_instant(text), Some(want), "{text}");
        }
        assert_eq!(parse_instant("yesterday"), None);
        assert_eq!(parse_instant("2020-13-02 23:51:47"), None);
    }

    #[test]
    fn carried_fields_are_checked() {
        let ok = carried(
            Some("  Grüße ✓ "),
            Some("42"),
            None,
            Some("2020-01-02 23:51:47"),
        )
        .unwrap();
        assert_eq!(ok.title.as_deref(), Some("Grüße ✓"));
        assert_eq!(ok.clicks, 42);
        assert!(ok.created_at.is_some());
        let long = "é".repeat(TITLE_MAX + 10);
        let cut = carried(Some(&long), None, None, None).unwrap();
        assert_eq!(cut.title.unwrap().chars().count(), TITLE_MAX);
        let yourls = carried(
            Some("One\0Two\u{1a}\u{8}\r\n\u{1b}[2JThree \u{7}"),
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(yourls.title.as_deref(), Some("OneTwo [2JThree"));
        let only_controls = carried(Some("\u{1b}\u{7}\n"), None, None, None).unwrap();
        assert_eq!(
            only_controls.title, None,
            "nothing left: the service's own title"
        );
        let bad = carried(None, Some("-1"), Some("x"), Some("soon")).unwrap_err();
        assert!(bad.contains("clicks"));
        assert!(bad.contains("previews"));
        assert!(bad.contains("created_at"));
        let previewed = carried(None, Some("3"), Some("12"), None).unwrap();
        assert_eq!((previewed.clicks, previewed.previews), (3, 12));
    }

    #[test]
    fn renamed_aliases_stay_within_the_limit() {
        assert_eq!(renamed_alias("spring", 2), "spring-2");
        let long = "a".repeat(super::super::ALIAS_MAX);
        let r = renamed_alias(&long, 12);
        assert_eq!(r.len(), super::super::ALIAS_MAX);
        assert!(r.ends_with("-12"));
    }
}
