//! The API key: held in a type that never prints it, and read from where a profile says.

use std::fmt;

use crate::domain::{Error, Result};

/// An API key. `Debug` and `Display` print `***`; only [`ApiKey::expose`] gives the text, and
/// only the request builder calls it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key from its text, surrounding whitespace removed. An empty key is refused.
    pub fn new(text: impl Into<String>) -> Result<ApiKey> {
        let text = text.into();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(Error::Unauthorized("the API key is empty".into()));
        }
        Ok(ApiKey(trimmed.to_owned()))
    }

    pub(super) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where a remote profile keeps its key: never in the config file itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The name of an environment variable holding the key.
    Env(String),
    /// A shell command (run with `sh -c`) whose first non-empty line of output is the key, such
    /// as `pass show linkdeck/work` (which prints the secret first, then any notes).
    Command(String),
}

impl KeySource {
    /// Reads the key. Every failure is one line saying what to fix, without the key.
    pub fn resolve(&self) -> Result<ApiKey> {
        match self {
            KeySource::Env(var) => match std::env::var(var) {
                Ok(value) if !value.trim().is_empty() => ApiKey::new(value),
                Ok(_) => Err(Error::Unauthorized(format!(
                    "the environment variable {var} that should hold the API key is empty"
                ))),
                Err(std::env::VarError::NotPresent) => Err(Error::Unauthorized(format!(
                    "the environment variable {var} that should hold the API key is not set"
                ))),
                Err(std::env::VarError::NotUnicode(_)) => Err(Error::Unauthorized(format!(
                    "the environment variable {var} that should hold the API key is not valid UTF-8"
                ))),
            },
            KeySource::Command(command) => run_key_command(command),
        }
    }
}

fn run_key_command(command: &str) -> Result<ApiKey> {
    let line =
        crate::backend::secret::from_command(command, "api_key_command", Error::Unauthorized)
            .map_err(|e| match e {
                Error::Unauthorized(m) if m.ends_with("printed nothing") => {
                    Error::Unauthorized("the api_key_command printed no API key".into())
                }
                other => other,
            })?;
    ApiKey::new(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_key() {
        let key = ApiKey::new("  s3cret-key\n").unwrap();
        assert_eq!(format!("{key:?}"), "***");
        assert_eq!(format!("{key}"), "***");
        assert_eq!(key.expose(), "s3cret-key");
    }

    #[test]
    fn an_empty_key_is_refused() {
        assert!(matches!(ApiKey::new(" \n"), Err(Error::Unauthorized(_))));
    }

    #[test]
    fn a_command_gives_its_trimmed_output() {
        let key = KeySource::Command("printf '\\n  abc123\\nnotes: x\\n'".into())
            .resolve()
            .unwrap();
        assert_eq!(key.expose(), "abc123");
    }

    #[test]
    fn a_failing_command_says_why_in_one_line() {
        let err = KeySource::Command("echo 'no such entry' >&2; exit 3".into())
            .resolve()
            .unwrap_err();
        assert_eq!(
            err,
            Error::Unauthorized("the api_key_command failed (exit status 3): no such entry".into())
        );
    }

    #[test]
    fn a_command_printing_nothing_is_refused() {
        let err = KeySource::Command("true".into()).resolve().unwrap_err();
        assert!(err.to_string().contains("printed no API key"), "{err}");
    }

    #[test]
    fn a_missing_variable_is_named() {
        let err = KeySource::Env("LINKDECK_TEST_SURELY_UNSET_VAR".into())
            .resolve()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("LINKDECK_TEST_SURELY_UNSET_VAR that should hold the API key is not set"),
            "{err}"
        );
    }
}
