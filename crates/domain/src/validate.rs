//! Rules shared by several fields and front ends: URLs, aliases, owner and API-key names.

use url::Url;

pub const URL_MAX: usize = 2048;
pub const ALIAS_MAX: usize = 255;
pub const PASSWORD_MAX: usize = 128;

/// Aliases that would shadow a path the server itself answers.
pub const RESERVED_ALIASES: &[&str] = &[
    "api",
    "stats",
    "health",
    "healthz",
    "favicon.ico",
    "robots.txt",
    "static",
    "assets",
    "login",
    "admin",
];

pub fn is_reserved_alias(alias: &str) -> bool {
    RESERVED_ALIASES
        .iter()
        .any(|r| r.eq_ignore_ascii_case(alias))
}

/// An absolute `http`/`https` URL with a host, at most [`URL_MAX`] characters. Returns the
/// message to show when it is not.
pub fn validate_url(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("is required".into());
    }
    if value.chars().count() > URL_MAX {
        return Err(format!("must be at most {URL_MAX} characters"));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not contain spaces or control characters".into());
    }
    let url = Url::parse(value).map_err(|_| "must be an absolute http or https URL".to_string())?;
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(format!("must be an http or https URL, not {other}:")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("must name a host".into());
    }
    Ok(())
}

/// The characters an alias is made of: ASCII letters, digits, `-` and `_`.
fn alias_chars(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `value` has the shape of an alias (length and characters; reserved words aside), so
/// the server can answer 404 for anything else without asking the database.
pub fn is_alias_shaped(value: &str) -> bool {
    !value.is_empty() && value.len() <= ALIAS_MAX && alias_chars(value)
}

/// Letters, digits, `-` and `_`, 1 to [`ALIAS_MAX`] characters, not reserved.
pub fn validate_alias(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    if value.len() > ALIAS_MAX {
        return Err(format!("must be at most {ALIAS_MAX} characters"));
    }
    if !alias_chars(value) {
        return Err("may only contain ASCII letters (a–z, A–Z), digits, - and _".into());
    }
    if is_reserved_alias(value) {
        return Err(format!("\"{value}\" is reserved"));
    }
    Ok(())
}

/// Longest owner name and API-key name, in characters.
pub const OWNER_KEY_NAME_MAX: usize = 64;

/// Printable (no control characters) and at most [`OWNER_KEY_NAME_MAX`] characters.
fn printable_name(name: &str) -> bool {
    name.chars().count() <= OWNER_KEY_NAME_MAX && !name.chars().any(char::is_control)
}

/// An owner's name, trimmed: 1 to [`OWNER_KEY_NAME_MAX`] printable characters.
pub fn validate_owner_name(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    if name.is_empty() || !printable_name(name) {
        return Err(format!(
            "must be 1 to {OWNER_KEY_NAME_MAX} printable characters"
        ));
    }
    Ok(name.to_owned())
}

/// An API key's optional name, trimmed (blank: none): at most [`OWNER_KEY_NAME_MAX`] printable
/// characters.
pub fn validate_key_name(raw: Option<&str>) -> Result<Option<String>, String> {
    let Some(name) = raw.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    if !printable_name(name) {
        return Err(format!(
            "must be at most {OWNER_KEY_NAME_MAX} printable characters"
        ));
    }
    Ok(Some(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_names_are_trimmed_printable_and_bounded() {
        assert_eq!(validate_owner_name("  bob ").unwrap(), "bob");
        assert_eq!(
            validate_owner_name(&"ä".repeat(64))
                .unwrap()
                .chars()
                .count(),
            64
        );
        for bad in ["", "   ", "a\tb", &"x".repeat(65)] {
            assert_eq!(
                validate_owner_name(bad).unwrap_err(),
                "must be 1 to 64 printable characters",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn key_names_are_optional_printable_and_bounded() {
        assert_eq!(validate_key_name(None).unwrap(), None);
        assert_eq!(validate_key_name(Some("  ")).unwrap(), None);
        assert_eq!(
            validate_key_name(Some(" ci ")).unwrap().as_deref(),
            Some("ci")
        );
        for bad in ["a\u{7}b", &"x".repeat(65)] {
            assert!(validate_key_name(Some(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_alias_shape_is_what_validate_alias_allows_before_reserved_words() {
        for value in ["a", "Ab-_9", &"x".repeat(ALIAS_MAX), "api"] {
            assert!(is_alias_shaped(value), "{value}");
        }
        for value in ["", "a b", "a/b", "ä", &"x".repeat(ALIAS_MAX + 1)] {
            assert!(!is_alias_shaped(value), "{value}");
            assert!(validate_alias(value).is_err(), "{value}");
        }
    }
}
