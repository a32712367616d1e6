//! Which PostgreSQL database a profile names, and the password it connects with.
//!
//! The URL (`postgres://user@host:port/db`, or libpq's `key=value` form) lives in the config
//! file or on the command line, where anyone reading the file or `ps` could see it, so it must
//! not hold the password: that comes from `LINKDECK_DB_PASSWORD` (or libpq's own `PGPASSWORD`)
//! when the database is opened, and is never written or logged.

use std::fmt;
use std::str::FromStr;

/// The environment variables read for the database password, in order.
pub const PASSWORD_VARS: [&str; 2] = ["LINKDECK_DB_PASSWORD", "PGPASSWORD"];

/// A PostgreSQL database to open, as written (without a password).
#[derive(Clone, PartialEq, Eq)]
pub struct PgTarget {
    written: String,
    /// A password given by the program itself (a test's cluster, a password command's answer);
    /// the environment's is read otherwise.
    password: Option<String>,
    /// The profile's `db_password_command`, run when the database is opened.
    password_command: Option<String>,
}

impl PgTarget {
    /// Reads a `postgres://` or `postgresql://` URL; says what is wrong otherwise.
    pub fn parse(raw: &str) -> Result<PgTarget, String> {
        // Schemes are case-insensitive (RFC 3986); the driver reads only lower case.
        let raw = match raw.trim().split_once("://") {
            Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
            None => raw.trim().to_owned(),
        };
        let config = tokio_postgres::Config::from_str(&raw)
            .map_err(|e| format!("not a PostgreSQL URL ({e}); write postgres://USER@HOST/DB"))?;
        if config.get_password().is_some() {
            return Err(format!(
                "the PostgreSQL URL holds a password; leave it out and set {} instead",
                PASSWORD_VARS[0]
            ));
        }
        if config.get_hosts().is_empty() {
            return Err("the PostgreSQL URL names no host; write postgres://USER@HOST/DB".into());
        }
        if config.get_user().is_none() {
            return Err("the PostgreSQL URL names no user; write postgres://USER@HOST/DB".into());
        }
        Ok(PgTarget {
            written: raw,
            password: None,
            password_command: None,
        })
    }

    /// The same database, logged in to with `password` rather than the environment's.
    pub fn with_password(mut self, password: impl Into<String>) -> PgTarget {
        self.password = Some(password.into());
        self
    }

    /// The same database, logged in to with the first line `command` prints (run when the
    /// database is opened, by [`PgTarget::resolve_password`]).
    pub fn with_password_command(mut self, command: impl Into<String>) -> PgTarget {
        self.password_command = Some(command.into());
        self
    }

    /// Runs the password command, if there is one, and keeps its answer.
    pub fn resolve_password(&self) -> crate::domain::Result<PgTarget> {
        let mut resolved = self.clone();
        if let Some(command) = &self.password_command {
            let password = crate::backend::secret::from_command(
                command,
                "db_password_command",
                crate::domain::Error::Unavailable,
            )?;
            resolved.password = Some(password);
        }
        Ok(resolved)
    }

    /// The connection settings with the password: the one given, else the environment's.
    pub fn config(&self) -> tokio_postgres::Config {
        // Checked by `parse`.
        let mut config = tokio_postgres::Config::from_str(&self.written).unwrap_or_default();
        let password = self.password.clone().or_else(|| {
            PASSWORD_VARS
                .iter()
                .find_map(|var| std::env::var(var).ok().filter(|p| !p.is_empty()))
        });
        if let Some(password) = password {
            config.password(password);
        }
        if config.get_application_name().is_none() {
            config.application_name("linkdeck");
        }
        config
    }

    /// The URL as written, for messages and logs (it holds no password).
    pub fn as_str(&self) -> &str {
        &self.written
    }
}

impl fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

impl fmt::Display for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::PgTarget;

    #[test]
    fn urls_without_passwords_are_taken_and_passwords_are_refused_unechoed() {
        let ok = PgTarget::parse("postgres://links@db.internal:5433/linkdeck").unwrap();
        assert_eq!(ok.as_str(), "postgres://links@db.internal:5433/linkdeck");
        assert_eq!(ok.config().get_ports(), &[5433]);
        let err = PgTarget::parse("postgresql://links:hunter2@db/linkdeck").unwrap_err();
        assert!(err.contains("LINKDECK_DB_PASSWORD"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert!(
            PgTarget::parse("postgres://db/linkdeck")
                .unwrap_err()
                .contains("no user")
        );
        assert!(PgTarget::parse("postgres://").is_err());
    }

    #[test]
    fn a_password_command_is_run_once_when_asked_and_its_first_line_used() {
        let target = PgTarget::parse("postgres://links@db/linkdeck")
            .unwrap()
            .with_password_command("printf '\\n  pw-from-store \\nnotes\\n'");
        let resolved = target.resolve_password().unwrap();
        assert_eq!(
            resolved.config().get_password(),
            Some(&b"pw-from-store"[..])
        );
        assert_eq!(format!("{resolved:?}"), "postgres://links@db/linkdeck");
        let failing = PgTarget::parse("postgres://links@db/linkdeck")
            .unwrap()
            .with_password_command("echo 'store is locked' >&2; exit 2");
        let err = failing.resolve_password().unwrap_err().to_string();
        assert!(
            err.contains("db_password_command failed (exit status 2): store is locked"),
            "{err}"
        );
    }
}
