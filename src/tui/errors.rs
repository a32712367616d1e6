//! The one place the app turns a backend error into words, for a toast and for a form's message
//! line alike: the same failure reads the same wherever it shows.

use crate::domain::{Error, shown};

/// What failed, which decides the words around the reason.
#[derive(Debug, Clone, Copy)]
pub enum Failed<'a> {
    /// Loading or changing `what` (`the links`, `the space`), told in a toast.
    Action(&'a str),
    /// Saving a form, told on its message line; field errors already stand by their fields.
    Save,
}

/// The words for `error`, as a terminal may show them: a server's own sentence and the fields
/// it names come from outside ([`shown`]).
pub fn describe(error: &Error, failed: Failed<'_>) -> String {
    shown(&words(error, failed)).into_owned()
}

fn words(error: &Error, failed: Failed<'_>) -> String {
    let reason = match (error, failed) {
        (Error::NotFound(_), Failed::Action(what)) => {
            return format!("{what} no longer exists; press r to refresh");
        }
        (Error::NotFound(what), Failed::Save) => format!("{what} no longer exists"),
        (Error::Validation(fields), Failed::Action(what)) => return format!("{what}: {fields}"),
        (Error::Validation(_), Failed::Save) => "check the fields marked ✗".into(),
        (Error::Unauthorized(_), _) => "the server refused the API key".into(),
        (Error::RateLimited { retry_after }, _) => match retry_after {
            Some(d) => format!("rate limited, try again in {}s", d.as_secs()),
            None => "rate limited, try again shortly".into(),
        },
        (Error::Unavailable(reason), _) => format!("backend unavailable ({reason})"),
        // The backend's own sentence, as it wrote it.
        (
            Error::Conflict(reason) | Error::Unsupported(reason) | Error::Forbidden(reason),
            Failed::Action(_),
        ) => {
            return reason.clone();
        }
        (
            Error::Conflict(reason) | Error::Unsupported(reason) | Error::Forbidden(reason),
            Failed::Save,
        ) => reason.clone(),
    };
    match failed {
        Failed::Save => format!("Not saved: {reason}"),
        Failed::Action(_) => capitalized(&reason),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_failure_reads_the_same_in_a_toast_and_in_a_form() {
        let limited = Error::RateLimited {
            retry_after: Some(Duration::from_secs(7)),
        };
        for (error, toast, form) in [
            (
                Error::Unavailable("connection refused".into()),
                "Backend unavailable (connection refused)",
                "Not saved: backend unavailable (connection refused)",
            ),
            (
                limited,
                "Rate limited, try again in 7s",
                "Not saved: rate limited, try again in 7s",
            ),
            (
                Error::NotFound("link 12".into()),
                "the space no longer exists; press r to refresh",
                "Not saved: link 12 no longer exists",
            ),
            (
                Error::Conflict("the alias spring is taken".into()),
                "the alias spring is taken",
                "Not saved: the alias spring is taken",
            ),
        ] {
            assert_eq!(describe(&error, Failed::Action("the space")), toast);
            assert_eq!(describe(&error, Failed::Save), form);
        }
    }

    #[test]
    fn a_servers_sentence_shows_its_control_characters() {
        let error = Error::Unavailable("http://s answered 500 (\u{1b}]0;pwned\u{7})".into());
        assert_eq!(
            describe(&error, Failed::Save),
            "Not saved: backend unavailable (http://s answered 500 (\\u{1b}]0;pwned\\u{7}))"
        );
    }
}
