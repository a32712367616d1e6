//! Which PostgreSQL database a profile names, how its connections are encrypted, and the
//! password it connects with.
//!
//! The URL (`postgres://user@host:port/db?sslmode=verify-full`) lives in the config file or on
//! the command line, where anyone reading the file or `ps` could see it, so it must not hold the
//! password: that comes from `LINKDECK_DB_PASSWORD` (or libpq's own `PGPASSWORD`) when the
//! database is opened, and is never written or logged. `sslmode` and `sslrootcert` are read here
//! (see `tls.rs`); every other query parameter is the driver's, which refuses unknown ones by
//! name.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::tls::TlsSettings;

/// The environment variables read for the database password, in order.
pub const PASSWORD_VARS: [&str; 2] = ["LINKDECK_DB_PASSWORD", "PGPASSWORD"];

/// A PostgreSQL database to open, as written (without a password).
#[derive(Clone, PartialEq, Eq)]
pub struct PgTarget {
    written: String,
    /// The URL without the TLS parameters, which the driver does not know.
    driver: String,
    tls: TlsSettings,
    /// A password given by the program itself (a test's cluster, a password command's answer);
    /// the environment's is read otherwise.
    password: Option<String>,
    /// The profile's `db_password_command`, run when the database is opened.
    password_command: Option<String>,
}

impl PgTarget {
    /// Reads a `postgres://` or `postgresql://` URL; says what is wrong otherwise, naming a bad
    /// parameter but never repeating a value (it might be a password).
    pub fn parse(raw: &str) -> Result<PgTarget, String> {
        const FORM: &str = "write postgres://USER@HOST[:PORT]/DB";
        // Schemes are case-insensitive (RFC 3986); the driver reads only lower case.
        let raw = match raw.trim().split_once("://") {
            Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
            None => return Err(format!("not a PostgreSQL URL; {FORM}")),
        };
        let (driver, tls) = split_tls(&raw)?;
        // The driver's cause names the parameter (`unknown option `x``) and repeats no value.
        let config = tokio_postgres::Config::from_str(&driver).map_err(|e| {
            let cause =
                std::error::Error::source(&e).map_or_else(String::new, |c| format!(": {c}"));
            format!("not a valid PostgreSQL URL ({e}{cause}); {FORM}")
        })?;
        if config.get_password().is_some() {
            return Err(format!(
                "the PostgreSQL URL holds a password; leave it out and set {} instead",
                PASSWORD_VARS[0]
            ));
        }
        if config.get_hosts().is_empty() {
            return Err(format!("the PostgreSQL URL names no host; {FORM}"));
        }
        if config.get_user().is_none() {
            return Err(format!("the PostgreSQL URL names no user; {FORM}"));
        }
        tls.check()?;
        Ok(PgTarget {
            written: raw,
            driver,
            tls,
            password: None,
            password_command: None,
        })
    }

    /// The same database with a profile's `db_sslmode` or `db_sslrootcert` (`key` without its
    /// `db_`) applied; setting one the URL sets too is an error.
    pub fn with_tls_setting(mut self, key: &str, value: &str) -> Result<PgTarget, String> {
        let source = format!("db_{key}");
        match self.tls.set(key, value, &source) {
            Some(result) => result?,
            None => return Err(format!("{source} is not a TLS setting")),
        }
        self.tls.check()?;
        Ok(self)
    }

    /// A relative `sslrootcert` made absolute by `resolve` (a profile's, against the config
    /// file's directory, as its database files are).
    pub fn resolve_root_cert(&mut self, resolve: impl FnOnce(&Path) -> PathBuf) {
        self.tls.resolve_root(resolve);
    }

    /// How connections to this database are encrypted.
    pub fn tls(&self) -> &TlsSettings {
        &self.tls
    }

    /// Where the server is, as `host:port` (several, comma-separated, when the URL names
    /// several), for messages.
    pub fn server(&self) -> String {
        let config = self.config();
        let ports = config.get_ports();
        config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let host = match host {
                    tokio_postgres::config::Host::Tcp(name) => name.clone(),
                    tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
                };
                let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
                format!("{host}:{port}")
            })
            .collect::<Vec<_>>()
            .join(", ")
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
    pub fn resolve_password(&self) -> linkdeck_domain::Result<PgTarget> {
        let mut resolved = self.clone();
        if let Some(command) = &self.password_command {
            let password = linkdeck_secret::from_command(
                command,
                "db_password_command",
                linkdeck_domain::Error::Unavailable,
            )?;
            resolved.password = Some(password);
        }
        Ok(resolved)
    }

    /// The connection settings with the password: the one given, else the environment's.
    pub fn config(&self) -> tokio_postgres::Config {
        // Checked by `parse`.
        let mut config = tokio_postgres::Config::from_str(&self.driver).unwrap_or_default();
        // libpq ignores sslmode on a Unix socket (the server offers no TLS there, and nothing
        // crosses a network); so do we, rather than refuse `require` on one.
        let local = config
            .get_hosts()
            .iter()
            .all(|h| matches!(h, tokio_postgres::config::Host::Unix(_)));
        config.ssl_mode(match local {
            true => tokio_postgres::config::SslMode::Disable,
            false => self.tls.driver_mode(),
        });
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

/// Takes `sslmode` and `sslrootcert` out of the URL's query (percent-decoded, as the driver
/// reads the rest); the URL that is left is the driver's.
fn split_tls(url: &str) -> Result<(String, TlsSettings), String> {
    let mut tls = TlsSettings::default();
    // RFC 3986: the query starts at the first `?`; one in a user or password must be encoded.
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), tls));
    };
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|d| d.into_owned())
            .map_err(|_| "the PostgreSQL URL has a parameter that is not UTF-8".to_string())
    };
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key)?;
        match tls.set(&key, &decode(value)?, &key) {
            Some(result) => result?,
            None => kept.push(pair),
        }
    }
    let driver = match kept.is_empty() {
        true => base.to_owned(),
        false => format!("{base}?{}", kept.join("&")),
    };
    Ok((driver, tls))
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
    use crate::tls::SslMode;
    use tokio_postgres::config::SslMode as Driver;

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

    #[test]
    fn tls_parameters_are_ours_and_the_rest_the_drivers() {
        let t = PgTarget::parse(
            "postgres://links@db.internal:5433/linkdeck?application_name=x&sslmode=verify-full\
             &sslrootcert=%2Fetc%2Fca%20certs%2Froot.pem&connect_timeout=3",
        )
        .unwrap();
        assert_eq!(t.tls().mode(), SslMode::VerifyFull);
        let config = t.config();
        assert_eq!(config.get_ssl_mode(), Driver::Require);
        assert_eq!(config.get_application_name(), Some("x"));
        assert_eq!(
            config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(3))
        );
        assert_eq!(t.server(), "db.internal:5433");
        assert!(
            format!("{t}").contains("sslmode=verify-full"),
            "shown as written"
        );

        let default = PgTarget::parse("postgres://links@db/linkdeck").unwrap();
        assert_eq!(default.tls().mode(), SslMode::Prefer, "libpq's default");
        assert_eq!(default.config().get_ssl_mode(), Driver::Prefer);
        assert_eq!(default.server(), "db:5432");
        let off = PgTarget::parse("postgres://links@db/linkdeck?sslmode=disable").unwrap();
        assert_eq!(off.config().get_ssl_mode(), Driver::Disable);
        let socket =
            PgTarget::parse("postgres://links@%2Frun%2Fpostgresql/linkdeck?sslmode=require")
                .unwrap();
        assert_eq!(socket.config().get_ssl_mode(), Driver::Disable, "as libpq");
    }

    #[test]
    fn unknown_parameters_and_bad_values_are_named_and_passwords_stay_unechoed() {
        let unknown =
            PgTarget::parse("postgres://links@db/l?sslmode=require&sslcompression=1").unwrap_err();
        assert!(unknown.contains("`sslcompression`"), "{unknown}");
        let bad = PgTarget::parse("postgres://links@db/l?sslmode=verify_full").unwrap_err();
        assert!(bad.starts_with("sslmode must be one of"), "{bad}");
        let twice =
            PgTarget::parse("postgres://links@db/l?sslmode=require&sslmode=disable").unwrap_err();
        assert!(twice.contains("sslmode appears twice"), "{twice}");
        let secret =
            PgTarget::parse("postgres://links:hunter2@db/l?sslmode=verify-full").unwrap_err();
        assert!(
            secret.contains("holds a password") && !secret.contains("hunter2"),
            "{secret}"
        );
        let secret =
            PgTarget::parse("postgres://links@db/l?sslmode=require&password=hunter2").unwrap_err();
        assert!(
            secret.contains("holds a password") && !secret.contains("hunter2"),
            "{secret}"
        );
        let weak = PgTarget::parse("postgres://links@db/l?sslrootcert=system&sslmode=require")
            .unwrap_err();
        assert!(weak.contains("sslrootcert=system"), "{weak}");
    }

    #[test]
    fn a_profile_adds_tls_settings_the_url_does_not_make() {
        let t = PgTarget::parse("postgres://links@db/l?sslmode=verify-ca")
            .unwrap()
            .with_tls_setting("sslrootcert", "certs/root.pem")
            .unwrap();
        let mut resolved = t.clone();
        resolved.resolve_root_cert(|p| std::path::Path::new("/cfg").join(p));
        assert_ne!(resolved, t);
        let clash = t.with_tls_setting("sslmode", "require").unwrap_err();
        assert_eq!(clash, "db_sslmode: the db URL sets sslmode too; keep one");
        let bad = PgTarget::parse("postgres://links@db/l")
            .unwrap()
            .with_tls_setting("sslmode", "on")
            .unwrap_err();
        assert!(bad.starts_with("db_sslmode must be one of"), "{bad}");
    }
}
