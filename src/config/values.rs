//! Config values that check themselves while the file is read, so a bad value is reported with
//! the file's line and column like any syntax error.

use std::fmt;

use jiff::tz::TimeZone;
use serde::{Deserialize, Deserializer, Serialize};

use crate::domain::validate_url;

/// An IANA time zone name (`Europe/Berlin`), checked against the bundled tz database.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneName {
    pub name: String,
    pub zone: TimeZone,
}

impl ZoneName {
    pub fn parse(name: &str) -> Result<ZoneName, String> {
        let name = name.trim();
        TimeZone::get(name)
            .map(|zone| ZoneName {
                name: name.to_owned(),
                zone,
            })
            .map_err(|_| {
                format!(
                    "unknown time zone \"{name}\" (use an IANA name such as Europe/Berlin or UTC)"
                )
            })
    }
}

impl<'de> Deserialize<'de> for ZoneName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ZoneName::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// An absolute http(s) URL used as a base (no trailing slash kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct BaseUrl(String);

impl BaseUrl {
    pub fn parse(raw: &str) -> Result<BaseUrl, String> {
        let trimmed = raw.trim().trim_end_matches('/');
        validate_url(trimmed).map_err(|m| format!("\"{raw}\" {m}"))?;
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

/// The HTTP status of a short-link redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "u16")]
pub struct RedirectStatus(u16);

impl RedirectStatus {
    pub fn code(self) -> u16 {
        self.0
    }
}

impl Default for RedirectStatus {
    fn default() -> Self {
        RedirectStatus(301)
    }
}

impl From<RedirectStatus> for u16 {
    fn from(s: RedirectStatus) -> u16 {
        s.0
    }
}

impl<'de> Deserialize<'de> for RedirectStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let code = u16::deserialize(d)?;
        match code {
            301 | 302 | 307 | 308 => Ok(RedirectStatus(code)),
            _ => Err(serde::de::Error::custom(format!(
                "redirect_status {code} is not one of 301, 302, 307, 308"
            ))),
        }
    }
}
