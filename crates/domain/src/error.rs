use std::time::Duration;

use super::FieldErrors;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What any backend can answer instead of a result. Front ends map it once each: the TUI to
/// toasts and field messages, the server to status codes, the CLI to exit codes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The record does not exist, or belongs to another owner (the two are indistinguishable).
    #[error("{0} not found")]
    NotFound(String),
    /// One or more fields are invalid; every invalid field is reported.
    #[error("invalid input: {0}")]
    Validation(FieldErrors),
    /// The credentials are missing, wrong or revoked.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// The credentials are valid but do not allow this (a key limited to some spaces asking
    /// about the whole account).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Too many requests; try again after the delay when one is known.
    #[error("rate limited{}", retry_after.map(|d| format!(", retry after {}s", d.as_secs())).unwrap_or_default())]
    RateLimited { retry_after: Option<Duration> },
    /// The backend cannot answer now (server down, timeout, database locked or unreadable).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The request clashes with existing state (a duplicate that is not a field of the request).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The backend does not offer this at all (a phpShort 2.x server has no statistics).
    #[error("not supported: {0}")]
    Unsupported(String),
}

impl Error {
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound(what.into())
    }

    pub fn field(field: &str, message: impl Into<String>) -> Self {
        let mut errors = FieldErrors::default();
        errors.add(field, message);
        Self::Validation(errors)
    }

    /// The field errors, when this is a validation error.
    pub fn field_errors(&self) -> Option<&FieldErrors> {
        match self {
            Self::Validation(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FieldErrors> for Error {
    fn from(errors: FieldErrors) -> Self {
        Self::Validation(errors)
    }
}
