use serde::{Deserialize, Serialize};

/// `[ui]`: how the terminal app looks and what input it takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {
    pub theme: Theme,
    /// Mouse support is opt-in: capturing the mouse stops the terminal's own text selection.
    pub mouse: bool,
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
