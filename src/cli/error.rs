//! How a command fails: one error type, one mapping to exit codes, one way of printing.

use std::fmt;
use std::io;
use std::process::ExitCode;

use serde_json::json;

use crate::config::ConfigError;
use crate::domain::{Error, FieldErrors, LinkField, Shown, plural};

/// What kind of failure, which decides the exit code. The table is documented in docs/CLI.md
/// ("Exit codes"); keep the two in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Anything else: a file that cannot be read or written.
    Failure,
    /// Bad command line (clap reports its own with the same code).
    Usage,
    /// Invalid fields, or an import file that is not what it claims.
    Validation,
    NotFound,
    Unauthorized,
    /// The database or server cannot answer.
    Unavailable,
    Conflict,
    RateLimited,
    /// The configuration file or the chosen profile is wrong.
    Config,
}

impl Kind {
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Failure => 1,
            Kind::Usage => 2,
            Kind::Validation => 3,
            Kind::NotFound => 4,
            Kind::Unauthorized => 5,
            Kind::Unavailable => 6,
            Kind::Conflict => 7,
            Kind::RateLimited => 8,
            Kind::Config => 9,
        }
    }

    /// The `error` value of a `--json` error.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Failure => "failure",
            Kind::Usage => "usage",
            Kind::Validation => "validation",
            Kind::NotFound => "not_found",
            Kind::Unauthorized => "unauthorized",
            Kind::Unavailable => "unavailable",
            Kind::Conflict => "conflict",
            Kind::RateLimited => "rate_limited",
            Kind::Config => "config",
        }
    }
}

/// A failed command.
#[derive(Debug, Clone, PartialEq)]
pub struct CliError {
    pub kind: Kind,
    pub message: String,
    pub fields: FieldErrors,
    pub retry_after: Option<u64>,
    /// What to do about it, said after the fields so that a long list does not push it out
    /// of sight.
    pub hints: Vec<String>,
    /// Standard output was closed by its reader (`linkdeck links list | head`): not a failure.
    pub closed_pipe: bool,
}

pub type CliResult<T = ()> = Result<T, CliError>;

impl CliError {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        CliError {
            kind,
            message: message.into(),
            fields: FieldErrors::default(),
            retry_after: None,
            hints: Vec::new(),
            closed_pipe: false,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Kind::Usage, message)
    }

    pub fn failure(message: impl Into<String>) -> Self {
        Self::new(Kind::Failure, message)
    }

    pub fn invalid(message: impl Into<String>, fields: FieldErrors) -> Self {
        CliError {
            fields,
            ..Self::new(Kind::Validation, message)
        }
    }

    /// Prints the error on stderr (as JSON with `--json`) and gives the exit code.
    pub fn report(&self, json: bool) -> ExitCode {
        if self.closed_pipe {
            return ExitCode::SUCCESS;
        }
        let text = if json {
            let mut body = json!({
                "error": self.kind.name(),
                "message": self.message,
                "fields": self.fields,
            });
            if let Some(secs) = self.retry_after {
                body["retry_after"] = json!(secs);
            }
            if !self.hints.is_empty() {
                body["hints"] = json!(self.hints);
            }
            body.to_string()
        } else {
            self.to_string()
        };
        // Nothing more can be done if stderr is gone too.
        let _ = io::Write::write_all(&mut io::stderr().lock(), format!("{text}\n").as_bytes());
        ExitCode::from(self.kind.exit_code())
    }
}

/// The error as a person reads it on a terminal. Messages echo what came from outside (an
/// import's keys and values, a server's own words), so each part is [`Shown`]; `--json` keeps
/// them exact.
impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", Shown(&self.message))?;
        for (field, messages) in self.fields.iter() {
            for message in messages {
                write!(f, "\n  {}: {}", Shown(&with_flag(field)), Shown(message))?;
            }
        }
        let more = self.fields.unlisted();
        if more > 0 {
            write!(f, "\n  … and {}", plural(more as u64, "more field"))?;
        }
        for hint in &self.hints {
            write!(f, "\nhint: {}", Shown(hint))?;
        }
        Ok(())
    }
}

/// Field names are the service's wire names; where a command-line flag has another name, both
/// are shown so the person knows what to change.
fn with_flag(field: &str) -> String {
    let row = field
        .split('.')
        .nth(1)
        .and_then(|n| n.parse::<usize>().ok());
    let flag = match (LinkField::owning(field), row) {
        (Some(LinkField::ExpirationClicks), _) => Some("--max-clicks".to_owned()),
        (Some(LinkField::ExpirationDate | LinkField::ExpirationTime), _) => {
            Some("--expires".to_owned())
        }
        (Some(list), Some(i)) if list.is_target_list() => {
            Some(format!("--{} #{}", list.name(), i + 1))
        }
        (Some(LinkField::Rules), Some(i)) => Some(format!("--rule #{}", i + 1)),
        (Some(LinkField::Rules), None) => Some("--rule".to_owned()),
        // A list's query: `links list` and `spaces list` take it as `--search`.
        _ if field == "search" => Some("--search".to_owned()),
        _ if field == "per_page" => Some("--per-page".to_owned()),
        // `domains update`'s settings.
        _ if matches!(field, "root_url" | "unknown_url" | "expired_url" | "robots") => {
            Some(format!("--{}", field.replace('_', "-")))
        }
        _ if field == "robots_txt" => Some("--robots-file".to_owned()),
        // `keys create`'s limit: one flag per space.
        _ if field == "spaces" => Some("--space".to_owned()),
        // `webhooks create`'s events: one flag per event.
        _ if field == "events" => Some("--event".to_owned()),
        // A link's options: each flag is its field's name.
        _ if LinkField::OPTIONS.iter().any(|o| o.name() == field) => {
            Some(format!("--{}", field.replace('_', "-")))
        }
        _ => None,
    };
    match flag {
        Some(flag) => format!("{field} ({flag})"),
        None => field.to_owned(),
    }
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        match e {
            Error::NotFound(what) => CliError::new(Kind::NotFound, format!("{what} not found")),
            Error::Validation(fields) => CliError::invalid(fields.summary(), fields),
            Error::Unauthorized(m) => CliError::new(Kind::Unauthorized, m),
            // A valid key that may not do this: as for a key refused, what to change is the key.
            Error::Forbidden(m) => CliError::new(Kind::Unauthorized, m),
            Error::RateLimited { retry_after } => CliError {
                retry_after: retry_after.map(|d| d.as_secs()),
                ..CliError::new(
                    Kind::RateLimited,
                    Error::RateLimited { retry_after }.to_string(),
                )
            },
            Error::Unavailable(m) => CliError::new(Kind::Unavailable, m),
            Error::Conflict(m) => CliError::new(Kind::Conflict, m),
            Error::Unsupported(m) => CliError::new(Kind::Unavailable, m),
        }
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> Self {
        CliError::new(Kind::Config, e.0)
    }
}

/// Output errors: a closed pipe ends the command quietly, anything else is a failure.
impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError {
            closed_pipe: e.kind() == io::ErrorKind::BrokenPipe,
            ..CliError::failure(format!("cannot write output: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_exit_code() {
        let kinds = [
            Kind::Failure,
            Kind::Usage,
            Kind::Validation,
            Kind::NotFound,
            Kind::Unauthorized,
            Kind::Unavailable,
            Kind::Conflict,
            Kind::RateLimited,
            Kind::Config,
        ];
        let mut codes: Vec<u8> = kinds.iter().map(|k| k.exit_code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), kinds.len());
        assert!(!codes.contains(&0));
    }

    #[test]
    fn field_lines_name_the_flag() {
        let mut fields = FieldErrors::default();
        fields.add("url", "is required");
        fields.add("geo.1.key", "must be a country");
        fields.add("expiration_clicks", "must be a number");
        let text = CliError::from(Error::Validation(fields)).to_string();
        assert_eq!(
            text,
            "error: 3 fields are invalid\n  expiration_clicks (--max-clicks): must be a number\n  \
             geo.1.key (--geo #2): must be a country\n  url: is required"
        );
    }
}
