//! Profiles: which backend the front ends talk to, and where.

use std::time::Duration;

use jiff::tz::TimeZone;
use serde::Deserialize;

use super::values::{DbLocation, ZoneName};
use crate::backend::local::StoreLocation;
use crate::domain::BaseUrl;

/// The name of the profile that exists without any config: the embedded database in the data
/// directory.
pub const BUILTIN_PROFILE: &str = "local";

pub const DEFAULT_TIMEOUT_SECS: u64 = crate::backend::DEFAULT_REMOTE_TIMEOUT.as_secs();

/// A `[profiles.NAME]` table as written. Both kinds share one table shape so toml reports
/// unknown keys and bad values with their line; which keys fit which kind is checked after.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProfileToml {
    pub backend: BackendKind,
    pub db: Option<DbLocation>,
    pub db_password_command: Option<String>,
    /// libpq's `sslmode` and `sslrootcert` for a PostgreSQL `db`, as the URL's query may give
    /// them too (not both).
    pub db_sslmode: Option<String>,
    pub db_sslrootcert: Option<String>,
    pub public_url: Option<BaseUrl>,
    pub timezone: Option<ZoneName>,
    pub base_url: Option<BaseUrl>,
    pub api_key_env: Option<String>,
    pub api_key_command: Option<String>,
    pub timeout_secs: Option<u64>,
    pub fetch_titles: Option<bool>,
    pub trash_days: Option<u32>,
    /// Every change refused, for browsing production (either kind of profile).
    pub read_only: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum BackendKind {
    Local,
    Remote,
}

/// A checked profile.
#[derive(Debug, Clone, PartialEq)]
pub enum Profile {
    Local(LocalProfile),
    Remote(RemoteProfile),
}

impl Profile {
    pub fn timezone(&self) -> Option<&ZoneName> {
        match self {
            Profile::Local(p) => p.timezone.as_ref(),
            Profile::Remote(p) => p.timezone.as_ref(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LocalProfile {
    /// A file path already resolved against the config file's directory; `None` means the
    /// default database.
    pub db: Option<StoreLocation>,
    pub public_url: Option<BaseUrl>,
    pub timezone: Option<ZoneName>,
    /// Fetch each saved link's page `<title>` in the background.
    pub fetch_titles: bool,
    /// Days deleted links and spaces stay in the trash; 0 keeps them until emptied.
    pub trash_days: u32,
}

impl Default for LocalProfile {
    fn default() -> Self {
        LocalProfile {
            db: None,
            public_url: None,
            timezone: None,
            fetch_titles: false,
            trash_days: crate::backend::local::DEFAULT_TRASH_DAYS,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RemoteProfile {
    pub base_url: BaseUrl,
    pub api_key: ApiKeySource,
    pub timeout_secs: u64,
    pub timezone: Option<ZoneName>,
}

/// Where a remote profile's API key comes from. The key itself is never written in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiKeySource {
    /// The name of an environment variable holding the key.
    Env(String),
    /// A shell command whose first line of output is the key (a password manager, say).
    Command(String),
}

impl ProfileToml {
    /// Checks that the keys fit the backend kind; the message names the offending key.
    pub(super) fn check(self) -> Result<Profile, String> {
        match self.backend {
            BackendKind::Local => {
                let db = match (
                    self.db.map(DbLocation::into_location),
                    self.db_password_command,
                ) {
                    (Some(StoreLocation::Postgres(target)), Some(command)) => Some(
                        StoreLocation::Postgres(target.with_password_command(command)),
                    ),
                    (_, Some(_)) => {
                        return Err(
                            "db_password_command applies to a PostgreSQL db (postgres://…)".into(),
                        );
                    }
                    (db, None) => db,
                };
                let tls = [
                    ("sslmode", self.db_sslmode),
                    ("sslrootcert", self.db_sslrootcert),
                ];
                let db = tls
                    .into_iter()
                    .try_fold(db, |db, (key, value)| match (db, value) {
                        (db, None) => Ok(db),
                        (Some(StoreLocation::Postgres(target)), Some(value)) => target
                            .with_tls_setting(key, &value)
                            .map(|t| Some(StoreLocation::Postgres(t))),
                        (_, Some(_)) => Err(format!(
                            "db_{key} applies to a PostgreSQL db (postgres://…)"
                        )),
                    })?;
                let stray = [
                    ("base_url", self.base_url.is_some()),
                    ("api_key_env", self.api_key_env.is_some()),
                    ("api_key_command", self.api_key_command.is_some()),
                    ("timeout_secs", self.timeout_secs.is_some()),
                ];
                if let Some((key, _)) = stray.iter().find(|(_, set)| *set) {
                    // Unquoted: messages hide long quoted text, which may be a secret.
                    return Err(format!(
                        "{key} applies only to profiles with backend = \"remote\""
                    ));
                }
                Ok(Profile::Local(LocalProfile {
                    db,
                    public_url: self.public_url,
                    timezone: self.timezone,
                    fetch_titles: self.fetch_titles.unwrap_or(false),
                    trash_days: self
                        .trash_days
                        .unwrap_or(crate::backend::local::DEFAULT_TRASH_DAYS),
                }))
            }
            BackendKind::Remote => {
                let stray = [
                    ("db", self.db.is_some()),
                    ("db_password_command", self.db_password_command.is_some()),
                    ("db_sslmode", self.db_sslmode.is_some()),
                    ("db_sslrootcert", self.db_sslrootcert.is_some()),
                    ("public_url", self.public_url.is_some()),
                    ("fetch_titles", self.fetch_titles.is_some()),
                    ("trash_days", self.trash_days.is_some()),
                ];
                if let Some((key, _)) = stray.iter().find(|(_, set)| *set) {
                    return Err(format!(
                        "{key} applies only to profiles with backend = \"local\""
                    ));
                }
                let base_url = self.base_url.ok_or("a remote profile needs `base_url`")?;
                let api_key = match (self.api_key_env, self.api_key_command) {
                    (Some(var), None) => ApiKeySource::Env(var),
                    (None, Some(cmd)) => ApiKeySource::Command(cmd),
                    (Some(_), Some(_)) => {
                        return Err(
                            "set either `api_key_env` or `api_key_command`, not both".into()
                        );
                    }
                    (None, None) => {
                        return Err(
                            "a remote profile needs `api_key_env` or `api_key_command`".into()
                        );
                    }
                };
                let timeout_secs = self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
                if timeout_secs == 0 {
                    return Err("`timeout_secs` must be at least 1".into());
                }
                Ok(Profile::Remote(RemoteProfile {
                    base_url,
                    api_key,
                    timeout_secs,
                    timezone: self.timezone,
                }))
            }
        }
    }
}

/// The profile a command runs with, after the command line's overrides: everything needed to
/// build the backend.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Local {
        profile: String,
        db: StoreLocation,
        public_url: String,
        timezone: TimeZone,
        fetch_titles: bool,
        trash_days: u32,
    },
    Remote {
        profile: String,
        base_url: String,
        api_key: ApiKeySource,
        timeout: Duration,
        timezone: TimeZone,
    },
}

impl Resolved {
    pub fn profile_name(&self) -> &str {
        match self {
            Resolved::Local { profile, .. } | Resolved::Remote { profile, .. } => profile,
        }
    }

    pub fn timezone(&self) -> &TimeZone {
        match self {
            Resolved::Local { timezone, .. } | Resolved::Remote { timezone, .. } => timezone,
        }
    }

    pub fn is_local(&self) -> bool {
        matches!(self, Resolved::Local { .. })
    }
}
