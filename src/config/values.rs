//! Config values that check themselves while the file is read, so a bad value is reported with
//! the file's line and column like any syntax error. Base URLs and the redirect status are read
//! the same way, by their domain types ([`crate::domain::BaseUrl`],
//! [`crate::domain::RedirectStatus`]).

use jiff::tz::TimeZone;
use serde::{Deserialize, Deserializer};

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
