//! The HTTP status short links redirect with: the one check for `[serve] redirect_status`,
//! `linkdeck serve --redirect-status` and `ServeOptions`.

use serde::{Deserialize, Deserializer, Serialize};

/// 301, 302, 307 or 308: the redirects a browser follows without asking and without turning
/// a form post into something else. 301 by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "u16")]
pub struct RedirectStatus(u16);

impl RedirectStatus {
    pub const MOVED_PERMANENTLY: RedirectStatus = RedirectStatus(301);
    pub const FOUND: RedirectStatus = RedirectStatus(302);
    pub const TEMPORARY_REDIRECT: RedirectStatus = RedirectStatus(307);
    pub const PERMANENT_REDIRECT: RedirectStatus = RedirectStatus(308);

    /// `code` as a redirect status, or the message to show under the setting's name.
    pub fn new(code: u16) -> Result<RedirectStatus, String> {
        match code {
            301 | 302 | 307 | 308 => Ok(RedirectStatus(code)),
            other => Err(format!("must be 301, 302, 307 or 308, not {other}")),
        }
    }

    pub fn code(self) -> u16 {
        self.0
    }
}

impl Default for RedirectStatus {
    fn default() -> Self {
        RedirectStatus::MOVED_PERMANENTLY
    }
}

impl From<RedirectStatus> for u16 {
    fn from(s: RedirectStatus) -> u16 {
        s.0
    }
}

impl<'de> Deserialize<'de> for RedirectStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RedirectStatus::new(u16::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_four_redirects_are_accepted() {
        for code in [301, 302, 307, 308] {
            assert_eq!(RedirectStatus::new(code).unwrap().code(), code);
        }
        for code in [200, 300, 303, 304, 404] {
            let message = RedirectStatus::new(code).unwrap_err();
            assert_eq!(message, format!("must be 301, 302, 307 or 308, not {code}"));
        }
    }
}
