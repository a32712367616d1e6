//! `[keys]`: which key does what in the terminal app. The names, the default keys and the rule
//! that one key means one thing in each place live here, so a mistake is refused when the file
//! is read; the app turns a terminal's key presses into these combinations.

mod action;
mod combo;

use std::collections::BTreeMap;

pub use action::{Action, KeyContext};
pub use combo::{KeyCombo, KeyName};

/// A wrong `[keys]` entry, named so the person can find it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyBindingError {
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

impl KeyBindingError {
    /// The `[keys]` entries that may be at fault, to point at a line.
    pub fn entries(&self) -> Vec<&str> {
        match self {
            KeyBindingError::UnknownAction(name) => vec![name],
            KeyBindingError::BadKey { action, .. } => vec![action],
            KeyBindingError::Duplicate { first, second, .. } => {
                vec![second.as_str(), first.as_str()]
            }
        }
    }
}

/// The bindings: the defaults with the `[keys]` overrides applied, no key meaning two actions
/// in one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBindings {
    by_action: BTreeMap<Action, Vec<KeyCombo>>,
    by_key: BTreeMap<(KeyContext, KeyCombo), Action>,
}

impl Default for KeyBindings {
    fn default() -> Self {
        Self::with_overrides(&BTreeMap::new()).expect("the default bindings have no clashes")
    }
}

impl KeyBindings {
    /// Applies `overrides` (action name → one key, or several separated by spaces) over the
    /// defaults. An override replaces every default key of its action.
    pub fn with_overrides(
        overrides: &BTreeMap<String, String>,
    ) -> Result<KeyBindings, KeyBindingError> {
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
                Action::parse(name).ok_or_else(|| KeyBindingError::UnknownAction(name.clone()))?;
            let parsed = keys
                .split_whitespace()
                .map(|k| {
                    KeyCombo::parse(k).ok_or_else(|| KeyBindingError::BadKey {
                        action: name.clone(),
                        key: k.to_owned(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if parsed.is_empty() {
                return Err(KeyBindingError::BadKey {
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
                        return Err(KeyBindingError::Duplicate {
                            key: key.to_string(),
                            first,
                            second: *action,
                        });
                    }
                }
            }
        }
        Ok(KeyBindings { by_action, by_key })
    }

    /// The keys bound to `action`, first the one hints show.
    pub fn keys(&self, action: Action) -> &[KeyCombo] {
        self.by_action.get(&action).map_or(&[], Vec::as_slice)
    }

    /// The action `key` is bound to in `context`, if any.
    pub fn action(&self, context: KeyContext, key: KeyCombo) -> Option<Action> {
        self.by_key.get(&(context, key)).copied()
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

    #[test]
    fn unknown_actions_and_keys_are_named() {
        let err = KeyBindings::with_overrides(&overrides(&[("launch", "l")])).unwrap_err();
        assert!(err.to_string().contains("`launch`"), "{err}");
        let err = KeyBindings::with_overrides(&overrides(&[("quit", "hyper-q")])).unwrap_err();
        assert!(err.to_string().contains("`hyper-q`"), "{err}");
        assert!(err.to_string().contains("quit"), "{err}");
    }

    #[test]
    fn a_key_used_twice_names_both_actions() {
        let err = KeyBindings::with_overrides(&overrides(&[("refresh", "q")])).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("quit") && text.contains("refresh") && text.contains("`q`"),
            "{text}"
        );
    }

    #[test]
    fn the_example_configuration_lists_every_default() {
        let example = include_str!("../../../config.example.toml");
        let section = example.split("[keys]").nth(1).expect("a [keys] section");
        let mut overrides = BTreeMap::new();
        for line in section.lines().take_while(|l| !l.starts_with('[')) {
            let Some((name, keys)) = line.trim_start_matches("# ").split_once(" = ") else {
                continue;
            };
            overrides.insert(name.trim().to_owned(), keys.trim_matches('"').to_owned());
        }
        assert_eq!(overrides.len(), Action::ALL.len(), "{overrides:?}");
        assert_eq!(
            KeyBindings::with_overrides(&overrides).unwrap(),
            KeyBindings::default()
        );
    }
}
