//! Rules shared by several fields: URLs and aliases.

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

/// Letters, digits, `-` and `_`, 1 to [`ALIAS_MAX`] characters, not reserved.
pub fn validate_alias(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    if value.len() > ALIAS_MAX {
        return Err(format!("must be at most {ALIAS_MAX} characters"));
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err("may only contain ASCII letters (a–z, A–Z), digits, - and _".into());
    }
    if is_reserved_alias(value) {
        return Err(format!("\"{value}\" is reserved"));
    }
    Ok(())
}
