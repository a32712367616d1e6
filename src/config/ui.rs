use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// `[ui]`: how the terminal app looks and what input it takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {
    pub theme: Theme,
    /// Mouse support is opt-in: capturing the mouse stops the terminal's own text selection.
    pub mouse: bool,
    /// Seconds between asking a remote server for changes made elsewhere; 0 is off. A local
    /// database is watched instead.
    pub refresh_secs: u64,
    /// The columns of the links table besides the alias, which always shows.
    pub columns: Vec<Column>,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            theme: Theme::default(),
            mouse: false,
            refresh_secs: 15,
            columns: Column::ALL.to_vec(),
        }
    }
}

/// A column of the links table that can be hidden (`[ui] columns`, or `C` in the app).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Column {
    /// The host, shown only when the links on screen are on more than one.
    Domain,
    Destination,
    Space,
    Clicks,
    Status,
    Expires,
}

impl Column {
    /// In the order the table shows them.
    pub const ALL: [Column; 6] = [
        Column::Domain,
        Column::Destination,
        Column::Space,
        Column::Clicks,
        Column::Status,
        Column::Expires,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Column::Domain => "domain",
            Column::Destination => "destination",
            Column::Space => "space",
            Column::Clicks => "clicks",
            Column::Status => "status",
            Column::Expires => "expires",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    #[default]
    Dark,
    Light,
    /// No colours at all; also chosen when `NO_COLOR` is set.
    Mono,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Dark => "dark",
            Theme::Light => "light",
            Theme::Mono => "mono",
        }
    }

    /// `NO_COLOR` (set and non-empty, per no-color.org) wins over the configured theme.
    pub fn honouring_no_color(self, no_color: Option<&str>) -> Theme {
        match no_color {
            Some(v) if !v.is_empty() => Theme::Mono,
            _ => self,
        }
    }
}

impl FromStr for Theme {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "dark" => Ok(Theme::Dark),
            "light" => Ok(Theme::Light),
            "mono" => Ok(Theme::Mono),
            other => Err(format!("theme `{other}` is not dark, light or mono")),
        }
    }
}

impl fmt::Display for Theme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
