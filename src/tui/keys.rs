//! Key bindings: every key press becomes a [`Key`] carrying the raw code (for text inputs) and
//! the bound [`Action`], if any (for lists and panes). The help overlay and the hint bar read
//! the same [`KeyMap`], so they never drift from the real bindings.

use std::collections::BTreeMap;
use std::fmt;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a key can be bound to. The names (`as_str`) are the `[keys]` config names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Quit,
    Help,
    Palette,
    NextPane,
    PrevPane,
    Down,
    Up,
    Top,
    Bottom,
    PageDown,
    PageUp,
    Select,
    New,
    Edit,
    Delete,
    Search,
    CycleBy,
    CycleStatus,
    StatusAll,
    StatusActive,
    StatusExpired,
    StatusDisabled,
    CycleSort,
    SpaceFilter,
    DomainFilter,
    ClearFilters,
    Refresh,
    CopyShortUrl,
    CopyDestination,
    ToggleDisabled,
    TogglePublic,
    MoveToSpace,
    SetExpiry,
    OpenInBrowser,
    ShowQr,
    OpenShortUrl,
    Mark,
    MarkRange,
    MarkAll,
    ClearMarks,
    Undo,
    Restore,
    Submit,
    Cancel,
    NextField,
    PrevField,
    Toggle,
    AddRow,
    RemoveRow,
    MoveRowUp,
    MoveRowDown,
    Yes,
    No,
    Stats,
    Dashboard,
    CyclePeriod,
    EarlierPeriod,
    LaterPeriod,
}

/// Where the app is when a key arrives: the lists (panes, filters, global actions), a form,
/// or a dialog. A key may mean one thing in each; it may not mean two things in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyContext {
    Lists,
    Forms,
    Dialogs,
}

impl KeyContext {
    pub const ALL: [KeyContext; 3] = [KeyContext::Lists, KeyContext::Forms, KeyContext::Dialogs];
}

impl Action {
    pub const ALL: [Action; 58] = [
        Action::Quit,
        Action::Help,
        Action::Palette,
        Action::NextPane,
        Action::PrevPane,
        Action::Down,
        Action::Up,
        Action::Top,
        Action::Bottom,
        Action::PageDown,
        Action::PageUp,
        Action::Select,
        Action::New,
        Action::Edit,
        Action::Delete,
        Action::Search,
        Action::CycleBy,
        Action::CycleStatus,
        Action::StatusAll,
        Action::StatusActive,
        Action::StatusExpired,
        Action::StatusDisabled,
        Action::CycleSort,
        Action::SpaceFilter,
        Action::DomainFilter,
        Action::ClearFilters,
        Action::Refresh,
        Action::CopyShortUrl,
        Action::CopyDestination,
        Action::ToggleDisabled,
        Action::TogglePublic,
        Action::MoveToSpace,
        Action::SetExpiry,
        Action::OpenInBrowser,
        Action::ShowQr,
        Action::OpenShortUrl,
        Action::Mark,
        Action::MarkRange,
        Action::MarkAll,
        Action::ClearMarks,
        Action::Undo,
        Action::Restore,
        Action::Submit,
        Action::Cancel,
        Action::NextField,
        Action::PrevField,
        Action::Toggle,
        Action::AddRow,
        Action::RemoveRow,
        Action::MoveRowUp,
        Action::MoveRowDown,
        Action::Yes,
        Action::No,
        Action::Stats,
        Action::Dashboard,
        Action::CyclePeriod,
        Action::EarlierPeriod,
        Action::LaterPeriod,
    ];

    /// The name used in the `[keys]` section of the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Palette => "palette",
            Action::NextPane => "next_pane",
            Action::PrevPane => "prev_pane",
            Action::Down => "down",
            Action::Up => "up",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageDown => "page_down",
            Action::PageUp => "page_up",
            Action::Select => "select",
            Action::New => "new",
            Action::Edit => "edit",
            Action::Delete => "delete",
            Action::Search => "search",
            Action::CycleBy => "cycle_by",
            Action::CycleStatus => "cycle_status",
            Action::StatusAll => "status_all",
            Action::StatusActive => "status_active",
            Action::StatusExpired => "status_expired",
            Action::StatusDisabled => "status_disabled",
            Action::CycleSort => "cycle_sort",
            Action::SpaceFilter => "space_filter",
            Action::DomainFilter => "domain_filter",
            Action::ClearFilters => "clear_filters",
            Action::Refresh => "refresh",
            Action::CopyShortUrl => "copy_short_url",
            Action::CopyDestination => "copy_destination",
            Action::ToggleDisabled => "toggle_disabled",
            Action::TogglePublic => "toggle_public",
            Action::MoveToSpace => "move_to_space",
            Action::SetExpiry => "set_expiry",
            Action::OpenInBrowser => "open_in_browser",
            Action::ShowQr => "show_qr",
            Action::OpenShortUrl => "open_short_url",
            Action::Mark => "mark",
            Action::MarkRange => "mark_range",
            Action::MarkAll => "mark_all",
            Action::ClearMarks => "clear_marks",
            Action::Undo => "undo",
            Action::Restore => "restore",
            Action::Submit => "submit",
            Action::Cancel => "cancel",
            Action::NextField => "next_field",
            Action::PrevField => "prev_field",
            Action::Toggle => "toggle",
            Action::AddRow => "add_row",
            Action::RemoveRow => "remove_row",
            Action::MoveRowUp => "move_row_up",
            Action::MoveRowDown => "move_row_down",
            Action::Yes => "yes",
            Action::No => "no",
            Action::Stats => "stats",
            Action::Dashboard => "dashboard",
            Action::CyclePeriod => "cycle_period",
            Action::EarlierPeriod => "earlier_period",
            Action::LaterPeriod => "later_period",
        }
    }

    /// What the action does, for the help overlay and the palette.
    pub fn description(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help: every key",
            Action::Palette => "command palette",
            Action::NextPane => "next pane",
            Action::PrevPane => "previous pane",
            Action::Down => "move down",
            Action::Up => "move up",
            Action::Top => "go to the top",
            Action::Bottom => "go to the bottom",
            Action::PageDown => "page down",
            Action::PageUp => "page up",
            Action::Select => "details; a space's links; pick",
            Action::New => "new link / space",
            Action::Edit => "edit link / space",
            Action::Delete => "delete (asks first)",
            Action::Search => "search",
            Action::CycleBy => "search title/alias/url",
            Action::CycleStatus => "cycle status tab",
            Action::StatusAll => "status: all",
            Action::StatusActive => "status: active",
            Action::StatusExpired => "status: expired",
            Action::StatusDisabled => "status: disabled",
            Action::CycleSort => "cycle sort order",
            Action::SpaceFilter => "filter by space",
            Action::DomainFilter => "filter by domain",
            Action::ClearFilters => "clear all filters",
            Action::Refresh => "refresh / retry",
            Action::CopyShortUrl => "copy short URL",
            Action::CopyDestination => "copy destination",
            Action::ToggleDisabled => "disable / enable",
            Action::ShowQr => "QR code of the short URL",
            Action::TogglePublic => "public stats on / off",
            Action::MoveToSpace => "move to a space",
            Action::SetExpiry => "set or clear the expiry",
            Action::OpenInBrowser => "open destination in browser",
            Action::OpenShortUrl => "open short URL in browser",
            Action::Mark => "mark / unmark the row",
            Action::MarkRange => "mark from the last mark to here",
            Action::MarkAll => "mark every link that matches",
            Action::ClearMarks => "clear the marks",
            Action::Undo => "undo the last change",
            Action::Restore => "restore from the trash",
            Action::Submit => "form: save",
            Action::Cancel => "form, dialog: cancel / close",
            Action::NextField => "form: next field",
            Action::PrevField => "form: previous field",
            Action::Toggle => "form: switch on / off, open a picker",
            Action::AddRow => "form: add a targeting rule",
            Action::RemoveRow => "form: remove the rule",
            Action::MoveRowUp => "form: move the rule up",
            Action::MoveRowDown => "form: move the rule down",
            Action::Yes => "dialog: yes",
            Action::No => "dialog: no",
            Action::Stats => "traffic of the link / space",
            Action::Dashboard => "traffic of every link",
            Action::CyclePeriod => "stats: next period length",
            Action::EarlierPeriod => "stats: earlier period",
            Action::LaterPeriod => "stats: later period",
        }
    }

    pub fn parse(name: &str) -> Option<Action> {
        Self::ALL.into_iter().find(|a| a.as_str() == name.trim())
    }

    fn default_keys(self) -> &'static [&'static str] {
        match self {
            Action::Quit => &["q"],
            Action::Help => &["?"],
            Action::Palette => &[":", "ctrl-p"],
            Action::NextPane => &["tab"],
            Action::PrevPane => &["shift-tab"],
            Action::Down => &["j", "down"],
            Action::Up => &["k", "up"],
            Action::Top => &["g", "home"],
            Action::Bottom => &["G", "end"],
            Action::PageDown => &["pgdn"],
            Action::PageUp => &["pgup"],
            Action::Select => &["enter"],
            Action::New => &["n"],
            Action::Edit => &["e"],
            Action::Delete => &["d"],
            Action::Search => &["/"],
            Action::CycleBy => &["b"],
            Action::CycleStatus => &["s"],
            Action::StatusAll => &["1"],
            Action::StatusActive => &["2"],
            Action::StatusExpired => &["3"],
            Action::StatusDisabled => &["4"],
            Action::CycleSort => &["o"],
            Action::SpaceFilter => &["f"],
            Action::DomainFilter => &["F"],
            Action::ClearFilters => &["c"],
            Action::Refresh => &["r"],
            Action::CopyShortUrl => &["y"],
            Action::CopyDestination => &["Y"],
            Action::ToggleDisabled => &["x"],
            Action::TogglePublic => &["P"],
            Action::MoveToSpace => &["m"],
            Action::SetExpiry => &["E"],
            Action::OpenInBrowser => &["w"],
            Action::ShowQr => &["Q"],
            Action::OpenShortUrl => &["W"],
            Action::Mark => &["space"],
            Action::MarkRange => &["V"],
            Action::MarkAll => &["*"],
            Action::ClearMarks => &["esc"],
            Action::Undo => &["u"],
            Action::Restore => &["R"],
            Action::Submit => &["ctrl-s"],
            Action::Cancel => &["esc"],
            Action::NextField => &["tab"],
            Action::PrevField => &["shift-tab"],
            Action::Toggle => &["space"],
            Action::AddRow => &["a"],
            Action::RemoveRow => &["delete"],
            Action::MoveRowUp => &["K", "alt-up"],
            Action::MoveRowDown => &["J", "alt-down"],
            Action::Yes => &["y"],
            Action::No => &["n"],
            Action::Stats => &["S"],
            Action::Dashboard => &["T"],
            Action::CyclePeriod => &["p"],
            Action::EarlierPeriod => &["[", "left"],
            Action::LaterPeriod => &["]", "right"],
        }
    }

    /// Where the action's keys work: moving works everywhere, the rest in their context.
    pub fn works_in(self, context: KeyContext) -> bool {
        match self {
            Action::Down
            | Action::Up
            | Action::Top
            | Action::Bottom
            | Action::PageDown
            | Action::PageUp
            | Action::Select => true,
            Action::Submit
            | Action::NextField
            | Action::PrevField
            | Action::Toggle
            | Action::AddRow
            | Action::RemoveRow
            | Action::MoveRowUp
            | Action::MoveRowDown => context == KeyContext::Forms,
            Action::Cancel => context != KeyContext::Lists,
            Action::Yes | Action::No => context == KeyContext::Dialogs,
            _ => context == KeyContext::Lists,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One key combination. Shift is folded into the character for printable keys (`G`, not
/// `shift-g`), because terminals report it inconsistently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyCombo {
    code: KeyCodeOrd,
    ctrl: bool,
    alt: bool,
    shift: bool,
}

/// `KeyCode` is not `Ord`; the few codes we bind, in an orderable form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum KeyCodeOrd {
    Char(char),
    F(u8),
    Named(u8),
}

const NAMED: [(&str, KeyCode); 14] = [
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pgup", KeyCode::PageUp),
    ("pgdn", KeyCode::PageDown),
];

impl KeyCombo {
    pub fn from_event(code: KeyCode, modifiers: KeyModifiers) -> Option<KeyCombo> {
        let ctrl = modifiers.contains(KeyModifiers::CONTROL);
        let alt = modifiers.contains(KeyModifiers::ALT);
        let mut shift = modifiers.contains(KeyModifiers::SHIFT);
        let code = match code {
            KeyCode::Char(c) => {
                shift = false;
                KeyCodeOrd::Char(if ctrl { c.to_ascii_lowercase() } else { c })
            }
            KeyCode::F(n) => KeyCodeOrd::F(n),
            // Shift-Tab arrives as BackTab; one spelling for both.
            KeyCode::BackTab => {
                shift = true;
                KeyCodeOrd::Named(named_index(KeyCode::Tab)?)
            }
            other => KeyCodeOrd::Named(named_index(other)?),
        };
        Some(KeyCombo {
            code,
            ctrl,
            alt,
            shift,
        })
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
        let mut modifiers = KeyModifiers::NONE;
        for m in parts {
            modifiers |= match m.to_ascii_lowercase().as_str() {
                "ctrl" | "c" => KeyModifiers::CONTROL,
                "alt" | "a" | "m" => KeyModifiers::ALT,
                "shift" | "s" => KeyModifiers::SHIFT,
                _ => return None,
            };
        }
        let lower = key.to_ascii_lowercase();
        let code = if key.chars().count() == 1 {
            let c = key.chars().next()?;
            if c.is_control() {
                return None;
            }
            let c = if modifiers.contains(KeyModifiers::SHIFT) {
                c.to_ascii_uppercase()
            } else {
                c
            };
            KeyCode::Char(c)
        } else if lower == "space" {
            KeyCode::Char(' ')
        } else if lower == "pagedown" {
            KeyCode::PageDown
        } else if lower == "pageup" {
            KeyCode::PageUp
        } else if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            if !(1..=12).contains(&n) {
                return None;
            }
            KeyCode::F(n)
        } else {
            NAMED.iter().find(|(name, _)| *name == lower)?.1
        };
        KeyCombo::from_event(code, modifiers)
    }
}

fn named_index(code: KeyCode) -> Option<u8> {
    NAMED
        .iter()
        .position(|(_, c)| *c == code)
        .and_then(|i| u8::try_from(i).ok())
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
        match self.code {
            KeyCodeOrd::Char(' ') => f.write_str("space"),
            KeyCodeOrd::Char(c) => write!(f, "{c}"),
            KeyCodeOrd::F(n) => write!(f, "f{n}"),
            KeyCodeOrd::Named(i) => f.write_str(NAMED[usize::from(i)].0),
        }
    }
}

/// A key press as the views see it: the raw key for text inputs, the action for everything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
    pub action: Option<Action>,
}

impl Key {
    pub fn event(&self) -> KeyEvent {
        KeyEvent::new(self.code, self.modifiers)
    }

    /// A character typed as text (no ctrl or alt): text inputs take it whatever it is bound to.
    pub fn is_text(&self) -> bool {
        matches!(self.code, KeyCode::Char(_))
            && !self
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    }

    pub fn is_ctrl(&self, c: char) -> bool {
        self.modifiers.contains(KeyModifiers::CONTROL) && self.code == KeyCode::Char(c)
    }
}

/// A wrong `[keys]` entry, named so the person can find it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyMapError {
    #[error("[keys]: unknown action `{0}` (known: {known})", known = Action::ALL.map(Action::as_str).join(", "))]
    UnknownAction(String),
    #[error(
        "[keys]: `{key}` for {action} is not a key (try `q`, `G`, `ctrl-s`, `shift-tab`, `pgdn`, `f1`)"
    )]
    BadKey { action: String, key: String },
    #[error("[keys]: `{key}` is bound to both {first} and {second}, which work in the same place")]
    Duplicate {
        key: String,
        first: Action,
        second: Action,
    },
}

impl KeyMapError {
    /// The `[keys]` entries that may be at fault, to point at a line.
    pub fn entries(&self) -> Vec<&str> {
        match self {
            KeyMapError::UnknownAction(name) => vec![name],
            KeyMapError::BadKey { action, .. } => vec![action],
            KeyMapError::Duplicate { first, second, .. } => vec![second.as_str(), first.as_str()],
        }
    }
}

/// The live bindings: defaults with the `[keys]` overrides applied.
#[derive(Debug, Clone)]
pub struct KeyMap {
    by_action: BTreeMap<Action, Vec<KeyCombo>>,
    by_key: BTreeMap<(KeyContext, KeyCombo), Action>,
}

impl Default for KeyMap {
    fn default() -> Self {
        Self::with_overrides(&BTreeMap::new()).expect("the default key map has no clashes")
    }
}

impl KeyMap {
    /// Applies `overrides` (action name → one key, or several separated by spaces) over the
    /// defaults. An override replaces every default key of its action.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<KeyMap, KeyMapError> {
        let mut by_action: BTreeMap<Action, Vec<KeyCombo>> = Action::ALL
            .into_iter()
            .map(|a| {
                let keys = a
                    .default_keys()
                    .iter()
                    .map(|k| KeyCombo::parse(k).expect("default keys parse"))
                    .collect();
                (a, keys)
            })
            .collect();
        for (name, keys) in overrides {
            let action =
                Action::parse(name).ok_or_else(|| KeyMapError::UnknownAction(name.clone()))?;
            let parsed = keys
                .split_whitespace()
                .map(|k| {
                    KeyCombo::parse(k).ok_or_else(|| KeyMapError::BadKey {
                        action: name.clone(),
                        key: k.to_owned(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if parsed.is_empty() {
                return Err(KeyMapError::BadKey {
                    action: name.clone(),
                    key: keys.clone(),
                });
            }
            by_action.insert(action, parsed);
        }
        let mut by_key = BTreeMap::new();
        for context in KeyContext::ALL {
            for (action, keys) in by_action.iter().filter(|(a, _)| a.works_in(context)) {
                for key in keys {
                    if let Some(first) = by_key.insert((context, *key), *action)
                        && first != *action
                    {
                        return Err(KeyMapError::Duplicate {
                            key: key.to_string(),
                            first,
                            second: *action,
                        });
                    }
                }
            }
        }
        Ok(KeyMap { by_action, by_key })
    }

    /// The key as the lists see it (panes, filters, global actions).
    pub fn key(&self, event: KeyEvent) -> Key {
        self.key_in(event, KeyContext::Lists)
    }

    /// The key with the action it is bound to in `context`, if any.
    pub fn key_in(&self, event: KeyEvent, context: KeyContext) -> Key {
        let action = KeyCombo::from_event(event.code, event.modifiers)
            .and_then(|combo| self.by_key.get(&(context, combo)).copied());
        Key {
            code: event.code,
            modifiers: event.modifiers,
            action,
        }
    }

    /// The keys of `action` as shown in hints: `j/down`.
    pub fn label(&self, action: Action) -> String {
        self.by_action
            .get(&action)
            .map(|keys| {
                keys.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default()
    }

    /// The first key of `action`, for compact hints.
    pub fn first(&self, action: Action) -> String {
        self.by_action
            .get(&action)
            .and_then(|k| k.first())
            .map(ToString::to_string)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, k)| ((*a).to_owned(), (*k).to_owned()))
            .collect()
    }

    fn press(map: &KeyMap, code: KeyCode, modifiers: KeyModifiers) -> Option<Action> {
        map.key(KeyEvent::new(code, modifiers)).action
    }

    #[test]
    fn defaults_follow_the_design() {
        let map = KeyMap::default();
        assert_eq!(
            press(&map, KeyCode::Char('q'), KeyModifiers::NONE),
            Some(Action::Quit)
        );
        assert_eq!(
            press(&map, KeyCode::Char('G'), KeyModifiers::SHIFT),
            Some(Action::Bottom)
        );
        assert_eq!(
            press(&map, KeyCode::BackTab, KeyModifiers::SHIFT),
            Some(Action::PrevPane)
        );
        assert_eq!(
            press(&map, KeyCode::Down, KeyModifiers::NONE),
            Some(Action::Down)
        );
        assert_eq!(
            press(&map, KeyCode::Char('3'), KeyModifiers::NONE),
            Some(Action::StatusExpired)
        );
        assert_eq!(press(&map, KeyCode::Char('z'), KeyModifiers::NONE), None);
        assert_eq!(map.label(Action::Down), "j/down");
    }

    #[test]
    fn an_override_replaces_the_defaults() {
        let map = KeyMap::with_overrides(&overrides(&[("quit", "ctrl-q")])).unwrap();
        assert_eq!(press(&map, KeyCode::Char('q'), KeyModifiers::NONE), None);
        assert_eq!(
            press(&map, KeyCode::Char('q'), KeyModifiers::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(map.label(Action::Quit), "ctrl-q");
    }

    #[test]
    fn unknown_actions_and_keys_are_named() {
        let err = KeyMap::with_overrides(&overrides(&[("launch", "l")])).unwrap_err();
        assert!(err.to_string().contains("`launch`"), "{err}");
        let err = KeyMap::with_overrides(&overrides(&[("quit", "hyper-q")])).unwrap_err();
        assert!(err.to_string().contains("`hyper-q`"), "{err}");
        assert!(err.to_string().contains("quit"), "{err}");
    }

    #[test]
    fn a_key_used_twice_names_both_actions() {
        let err = KeyMap::with_overrides(&overrides(&[("refresh", "q")])).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("quit") && text.contains("refresh") && text.contains("`q`"),
            "{text}"
        );
    }

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

    #[test]
    fn the_example_configuration_lists_every_default() {
        let example = include_str!("../../config.example.toml");
        let section = example.split("[keys]").nth(1).expect("a [keys] section");
        let mut overrides = BTreeMap::new();
        for line in section.lines().take_while(|l| !l.starts_with('[')) {
            let Some((name, keys)) = line.trim_start_matches("# ").split_once(" = ") else {
                continue;
            };
            overrides.insert(name.trim().to_owned(), keys.trim_matches('"').to_owned());
        }
        assert_eq!(overrides.len(), Action::ALL.len(), "{overrides:?}");
        let map = KeyMap::with_overrides(&overrides).unwrap();
        for action in Action::ALL {
            assert_eq!(
                map.label(action),
                KeyMap::default().label(action),
                "{action}"
            );
        }
    }
}
