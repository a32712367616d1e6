//! Config values that check themselves while the file is read, so a bad value is reported with
//! the file's line and column like any syntax error. Base URLs and the redirect status are read
//! the same way, by their domain types ([`crate::domain::BaseUrl`],
//! [`crate::domain::RedirectStatus`]).

use std::time::Duration;

use jiff::tz::TimeZone;
use serde::{Deserialize, Deserializer};

use crate::backend::local::StoreLocation;
use crate::backend::local::pg::PgTarget;

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

/// A period written with its unit, as `[serve] backup_every` takes it: `90s`, `30m`, `6h`,
/// `1d`, `2w` (a whole number, then s, m, h, d or w). Read back as it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Every(pub Duration);

impl Every {
    pub fn parse(raw: &str) -> Result<Every, String> {
        let raw = raw.trim();
        let wrong = || {
            format!(
                "\"{raw}\" is not a period: write a whole number and a unit, s, m, h, d or w \
                 (90s, 30m, 6h, 1d, 2w)"
            )
        };
        let split = raw.find(|c: char| !c.is_ascii_digit()).ok_or_else(wrong)?;
        let (number, unit) = raw.split_at(split);
        let n: u64 = number.parse().map_err(|_| wrong())?;
        let seconds = match unit.trim() {
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            "w" => 604_800,
            _ => return Err(wrong()),
        };
        if n == 0 {
            return Err(format!(
                "\"{raw}\" is no time at all; leave the setting out for none"
            ));
        }
        n.checked_mul(seconds)
            .map(|s| Every(Duration::from_secs(s)))
            .ok_or_else(|| format!("\"{raw}\" is longer than any clock counts"))
    }
}

impl std::fmt::Display for Every {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.as_secs();
        let (n, unit) = [(604_800, "w"), (86_400, "d"), (3_600, "h"), (60, "m")]
            .into_iter()
            .find(|(size, _)| s.is_multiple_of(*size))
            .map_or((s, "s"), |(size, unit)| (s / size, unit));
        write!(f, "{n}{unit}")
    }
}

impl<'de> Deserialize<'de> for Every {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Every::parse(&raw).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Every {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod every_tests {
    use super::Every;
    use std::time::Duration;

    #[test]
    fn periods_read_with_their_unit_and_refuse_anything_else() {
        for (raw, secs) in [
            ("90s", 90),
            ("30m", 1_800),
            ("6h", 21_600),
            (" 1d ", 86_400),
            ("2w", 1_209_600),
        ] {
            assert_eq!(
                Every::parse(raw),
                Ok(Every(Duration::from_secs(secs))),
                "{raw}"
            );
        }
        for bad in [
            "",
            "6",
            "h",
            "1.5h",
            "6 hours",
            "-1h",
            "0s",
            "1y",
            "99999999999999999999d",
        ] {
            assert!(Every::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Every(Duration::from_secs(21_600)).to_string(), "6h");
        assert_eq!(Every(Duration::from_secs(90)).to_string(), "90s");
    }
}

/// Where a local profile's database lives: the path of a SQLite file, or a `postgres://` URL
/// (without its password, which comes from the environment). Any other `scheme://…` value is
/// refused by name: taken for a relative path, it would quietly create a directory named after
/// the scheme with an empty database in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbLocation(StoreLocation);

impl DbLocation {
    pub fn parse(raw: &str) -> Result<DbLocation, String> {
        if raw.trim().is_empty() {
            return Err("the database path is empty".into());
        }
        match url_scheme(raw) {
            None if mistyped_postgres_url(raw) => Err(format!(
                "\"{}\" looks like a PostgreSQL URL without its \"//\": write \
                 postgres://USER@HOST[:PORT]/DATABASE (or ./{} for a file of that name)",
                raw.trim(),
                raw.trim()
            )),
            None => Ok(DbLocation(StoreLocation::File(raw.into()))),
            Some(scheme) if matches!(scheme.as_str(), "postgres" | "postgresql") => {
                PgTarget::parse(raw).map(|t| DbLocation(StoreLocation::Postgres(t)))
            }
            Some(scheme) => Err(format!(
                "\"{scheme}://\" URLs are not supported; give the path of a SQLite file or a \
                 postgres:// URL"
            )),
        }
    }

    pub fn into_location(self) -> StoreLocation {
        self.0
    }
}

/// The scheme of a `scheme://…` value (RFC 3986 letters), lower-cased.
fn url_scheme(raw: &str) -> Option<String> {
    let (scheme, _) = raw.trim().split_once("://")?;
    let mut chars = scheme.chars();
    let first_is_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_fits = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_is_letter && rest_fits).then(|| scheme.to_ascii_lowercase())
}

/// `postgres:/host/db`, `postgresql:db` and the like: taken for a path they would create a
/// directory named `postgres:`, the very mistake the refusal of other schemes prevents.
fn mistyped_postgres_url(raw: &str) -> bool {
    let Some((scheme, _)) = raw.trim().split_once(':') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql")
}

impl<'de> Deserialize<'de> for DbLocation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        DbLocation::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// `--db`'s parser: the same check as a profile's `db =`.
pub fn parse_db_flag(raw: &str) -> Result<StoreLocation, String> {
    DbLocation::parse(raw).map(DbLocation::into_location)
}

#[cfg(test)]
mod db_location_tests {
    use super::{DbLocation, StoreLocation};

    #[test]
    fn paths_pass_and_urls_are_refused_by_name() {
        for ok in [
            "links.db",
            "/tmp/x.db",
            "~/l.db",
            "./a:b.db",
            "C:\\links.db",
            "1ab://x",
        ] {
            assert!(DbLocation::parse(ok).is_ok(), "{ok}");
        }
        let pg = DbLocation::parse("postgres://user@host/db").unwrap();
        assert!(
            matches!(pg.into_location(), StoreLocation::Postgres(t) if t.as_str() == "postgres://user@host/db")
        );
        let pg = DbLocation::parse("PostgreSQL://user@h/db").unwrap();
        assert!(matches!(pg.into_location(), StoreLocation::Postgres(_)));
        let secret = DbLocation::parse("postgres://user:s3cret@h/db").unwrap_err();
        assert!(
            secret.contains("LINKDECK_DB_PASSWORD") && !secret.contains("s3cret"),
            "{secret}"
        );
        let other = DbLocation::parse("sqlite:///tmp/x.db").unwrap_err();
        assert!(other.contains("\"sqlite://\""), "{other}");
        assert!(DbLocation::parse("  ").is_err());
        for typo in ["postgres:/user@host/db", "PostgreSQL:db", "postgres:"] {
            let err = DbLocation::parse(typo).unwrap_err();
            assert!(
                err.contains("looks like a PostgreSQL URL") && err.contains("postgres://USER@HOST"),
                "{typo}: {err}"
            );
        }
        // A file whose name merely starts with the word stays a file.
        assert!(DbLocation::parse("./postgres:/x.db").is_ok());
        assert!(DbLocation::parse("postgres.db").is_ok());
    }
}
