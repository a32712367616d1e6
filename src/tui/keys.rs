//! Key bindings in the terminal: every key press becomes a [`Key`] carrying the raw code (for
//! text inputs) and the bound [`Action`], if any (for lists and panes). The help overlay and the
//! hint bar read the same [`KeyMap`], so they never drift from the real bindings. What may be
//! bound, and to which keys, is the configuration's (`config::keys`).

use std::collections::BTreeMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use crate::config::{Action, KeyBindingError, KeyCombo, KeyContext};
use crate::config::{KeyBindings, KeyName};

/// What `action` does, for the help overlay and the palette.
pub fn description(action: Action) -> &'static str {
    match action {
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
        Action::HalfPageDown => "half a page down",
        Action::HalfPageUp => "half a page up",
        Action::Select => "details; a space's links; pick",
        Action::New => "new link / space",
        Action::Edit => "edit link / space, rename a tag",
        Action::EditInEditor => "edit the link in $EDITOR, as TOML",
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
        Action::TagFilter => "filter by tags",
        Action::ClearFilters => "clear all filters",
        Action::Columns => "show or hide a column of the links table",
        Action::Refresh => "refresh / retry",
        Action::CopyShortUrl => "copy short URL",
        Action::CopyDestination => "copy destination",
        Action::CopyAlias => "copy alias",
        Action::CopyMarkdown => "copy as a Markdown link",
        Action::ToggleDisabled => "disable / enable",
        Action::ShowQr => "QR code of the short URL",
        Action::TogglePublic => "public stats on / off",
        Action::MoveToSpace => "move to a space",
        Action::SetExpiry => "set or clear the expiry",
        Action::TagLinks => "put tags on or take them off",
        Action::OpenInBrowser => "open destination in browser",
        Action::OpenShortUrl => "open short URL in browser",
        Action::Mark => "mark / unmark the row",
        Action::MarkRange => "mark from the last mark to here",
        Action::MarkAll => "mark every link that matches",
        Action::ClearMarks => "clear the marks",
        Action::Undo => "undo the last change",
        Action::Restore => "restore from the trash",
        Action::EmptyTrash => "empty the trash (asks first)",
        Action::Submit => "form: save",
        Action::Cancel => "form, dialog: cancel / close",
        Action::NextField => "form: next field",
        Action::PrevField => "form: previous field",
        Action::Toggle => "form: switch on / off, open a picker",
        Action::AddRow => "form: add a rule",
        Action::RemoveRow => "form: remove the rule",
        Action::MoveRowUp => "form: move the rule up",
        Action::MoveRowDown => "form: move the rule down",
        Action::Yes => "dialog: yes",
        Action::No => "dialog: no",
        Action::Stats => "traffic: link, space, picker line",
        Action::Dashboard => "traffic of every link",
        Action::CyclePeriod => "stats: next period length",
        Action::EarlierPeriod => "stats: earlier period",
        Action::LaterPeriod => "stats: later period",
        Action::Webhooks => "webhooks and their deliveries",
    }
}

/// The combination a terminal reports, if it is one a binding can name.
fn combo(code: KeyCode, modifiers: KeyModifiers) -> Option<KeyCombo> {
    let key = match code {
        KeyCode::Char(c) => KeyName::Char(c),
        KeyCode::F(n) => KeyName::F(n),
        KeyCode::Enter => KeyName::Enter,
        KeyCode::Esc => KeyName::Esc,
        KeyCode::Tab => KeyName::Tab,
        KeyCode::BackTab => KeyName::BackTab,
        KeyCode::Backspace => KeyName::Backspace,
        KeyCode::Delete => KeyName::Delete,
        KeyCode::Up => KeyName::Up,
        KeyCode::Down => KeyName::Down,
        KeyCode::Left => KeyName::Left,
        KeyCode::Right => KeyName::Right,
        KeyCode::Home => KeyName::Home,
        KeyCode::End => KeyName::End,
        KeyCode::PageUp => KeyName::PageUp,
        KeyCode::PageDown => KeyName::PageDown,
        _ => return None,
    };
    Some(KeyCombo::new(
        key,
        modifiers.contains(KeyModifiers::CONTROL),
        modifiers.contains(KeyModifiers::ALT),
        modifiers.contains(KeyModifiers::SHIFT),
    ))
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

/// The live bindings: defaults with the `[keys]` overrides applied.
#[derive(Debug, Clone, Default)]
pub struct KeyMap {
    bindings: KeyBindings,
}

impl From<KeyBindings> for KeyMap {
    fn from(bindings: KeyBindings) -> Self {
        KeyMap { bindings }
    }
}

impl KeyMap {
    /// The bindings of `overrides` (action name → one key, or several separated by spaces).
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<KeyMap, KeyBindingError> {
        KeyBindings::with_overrides(overrides).map(KeyMap::from)
    }

    /// The key as the lists see it (panes, filters, global actions).
    pub fn key(&self, event: KeyEvent) -> Key {
        self.key_in(event, KeyContext::Lists)
    }

    /// The key with the action it is bound to in `context`, if any.
    pub fn key_in(&self, event: KeyEvent, context: KeyContext) -> Key {
        let action = combo(event.code, event.modifiers)
            .and_then(|combo| self.bindings.action(context, combo));
        Key {
            code: event.code,
            modifiers: event.modifiers,
            action,
        }
    }

    /// The keys of `action` as shown in hints: `j/down`.
    pub fn label(&self, action: Action) -> String {
        self.bindings
            .keys(action)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    }

    /// The first key of `action`, for compact hints.
    pub fn first(&self, action: Action) -> String {
        self.bindings
            .keys(action)
            .first()
            .map(ToString::to_string)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let map =
            KeyMap::with_overrides(&BTreeMap::from([("quit".into(), "ctrl-q".into())])).unwrap();
        assert_eq!(press(&map, KeyCode::Char('q'), KeyModifiers::NONE), None);
        assert_eq!(
            press(&map, KeyCode::Char('q'), KeyModifiers::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(map.label(Action::Quit), "ctrl-q");
    }
}
