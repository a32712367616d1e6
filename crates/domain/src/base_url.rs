//! The base URL of a service: a remote profile's `base_url`, `--remote`, and the `public_url`
//! short links are built on. Checked here once, so a value that passes config loading is one the
//! remote backend and the server can use as it is.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use url::Url;

use super::validate_url;

/// An absolute http(s) URL with a host, no query, fragment or credentials; kept without a
/// trailing slash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct BaseUrl(String);

impl BaseUrl {
    /// Checks `raw` and returns the base URL, or the message to show (which quotes `raw`
    /// unless it holds credentials: a password is never echoed).
    pub fn parse(raw: &str) -> Result<BaseUrl, String> {
        let trimmed = raw.trim().trim_end_matches('/');
        let quoted = |m: &str| format!("\"{raw}\" {m}");
        validate_url(trimmed).map_err(|m| quoted(&m))?;
        let url =
            Url::parse(trimmed).map_err(|_| quoted("must be an absolute http or https URL"))?;
        // Credentials in the URL would end up in messages and logs; keys have settings of
        // their own.
        if !url.username().is_empty() || url.password().is_some() {
            return Err(
                "must not hold credentials (user:password@): give the API key with \
                        api_key_env or api_key_command"
                    .into(),
            );
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(quoted("must not have a query or fragment"));
        }
        Ok(BaseUrl(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for BaseUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        BaseUrl::parse(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_kept_without_its_trailing_slash() {
        for (raw, kept) in [
            ("https://sho.rt", "https://sho.rt"),
            (" https://sho.rt/ ", "https://sho.rt"),
            ("http://127.0.0.1:8080/s/", "http://127.0.0.1:8080/s"),
        ] {
            assert_eq!(BaseUrl::parse(raw).unwrap().as_str(), kept, "{raw}");
        }
    }

    #[test]
    fn a_bad_base_url_says_what_is_wrong() {
        for (raw, message) in [
            ("sho.rt", "must be an absolute http or https URL"),
            ("ftp://sho.rt", "must be an http or https URL, not ftp:"),
            ("https://sho.rt/?x=1", "must not have a query or fragment"),
            ("https://sho.rt/#top", "must not have a query or fragment"),
            ("https://u:p@sho.rt", "must not hold credentials"),
            ("https://u@sho.rt", "must not hold credentials"),
        ] {
            let got = BaseUrl::parse(raw).unwrap_err();
            assert!(got.contains(message), "{raw}: {got}");
        }
    }

    #[test]
    fn credentials_are_not_echoed() {
        let got = BaseUrl::parse("https://me:hunter2@sho.rt").unwrap_err();
        assert!(!got.contains("hunter2"), "{got}");
    }
}
