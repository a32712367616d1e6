//! The configuration file (`config.toml`) and the profile a command runs with. Reading is
//! strict: an unknown key or a bad value is an error naming the file, line and key, never
//! silently ignored. No file at all means the defaults: the built-in `local` profile on the
//! default database.

mod keys;
mod paths;
mod profile;
mod serve;
mod ui;
mod values;
pub mod webhook_key;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::backend::local::StoreLocation;
use jiff::tz::TimeZone;
use serde::Deserialize;
use toml::Spanned;

pub use crate::domain::{BaseUrl, RedirectStatus};
pub use keys::{Action, KeyBindingError, KeyBindings, KeyCombo, KeyContext, KeyName};
pub use paths::Paths;
pub use profile::{
    ApiKeySource, BUILTIN_PROFILE, DEFAULT_TIMEOUT_SECS, LocalProfile, Profile, RemoteProfile,
    Resolved,
};
pub use serve::{ForwardedHeader, ServeConfig, TrustedProxy};
pub use ui::{Column, Theme, UiConfig};
pub use values::{DbLocation, Every, ZoneName, parse_db_flag};

use profile::ProfileToml;

/// A configuration problem, already phrased for a person: it names the file and, when the
/// file has one, the line and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The whole configuration, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file it was read from, if one existed.
    pub source: Option<PathBuf>,
    pub default_profile: String,
    /// Always holds [`BUILTIN_PROFILE`] unless the file redefines it.
    pub profiles: BTreeMap<String, Profile>,
    pub ui: UiConfig,
    /// Action name → key, as written; reading checks them ([`KeyBindings`]).
    pub keys: BTreeMap<String, String>,
    pub serve: ServeConfig,
    /// The profiles with `read_only = true`.
    pub read_only: BTreeSet<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ConfigToml {
    default_profile: Option<Spanned<String>>,
    profiles: BTreeMap<String, Spanned<ProfileToml>>,
    ui: UiConfig,
    keys: BTreeMap<String, Spanned<String>>,
    serve: ServeConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            source: None,
            default_profile: BUILTIN_PROFILE.into(),
            profiles: BTreeMap::from([(
                BUILTIN_PROFILE.to_owned(),
                Profile::Local(LocalProfile::default()),
            )]),
            ui: UiConfig::default(),
            keys: BTreeMap::new(),
            serve: ServeConfig::default(),
            read_only: BTreeSet::new(),
        }
    }
}

impl Config {
    /// Reads `path`. A missing file gives the defaults unless `required` (the user named it
    /// with `--config`), in which case it is an error.
    pub fn load(path: &Path, required: bool, paths: &Paths) -> Result<Config, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, path, paths),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                Ok(Config::default())
            }
            Err(e) => Err(ConfigError(format!(
                "cannot read config file {}: {e}",
                path.display()
            ))),
        }
    }

    /// Parses the text of the config file at `path` (used to name it in errors and to resolve
    /// relative database paths).
    pub fn parse(text: &str, path: &Path, paths: &Paths) -> Result<Config, ConfigError> {
        let raw: ConfigToml = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| locate(text, s.start));
            ConfigError(describe(path, at, e.message().trim()))
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let keys: BTreeMap<String, String> = raw
            .keys
            .iter()
            .map(|(k, v)| (k.clone(), v.get_ref().clone()))
            .collect();
        // Every command checks the key map, so a mistake is found where it was made, not
        // only when the terminal app starts.
        if let Err(e) = KeyBindings::with_overrides(&keys) {
            let at = e
                .entries()
                .into_iter()
                .find_map(|entry| raw.keys.get(entry))
                .map(|v| locate(text, v.span().start));
            return Err(ConfigError(describe(path, at, &e.to_string())));
        }
        let mut config = Config {
            source: Some(path.to_owned()),
            ui: raw.ui,
            keys,
            serve: raw.serve,
            ..Config::default()
        };
        for (name, spanned) in raw.profiles {
            let at = locate(text, spanned.span().start);
            if spanned.get_ref().read_only == Some(true) {
                config.read_only.insert(name.clone());
            }
            let mut profile = spanned.into_inner().check().map_err(|m| {
                ConfigError(describe(
                    path,
                    Some(at.clone()),
                    &format!("[profiles.{name}]: {m}"),
                ))
            })?;
            // Relative files a profile names are found beside the config file, wherever the
            // command runs: the database, and a PostgreSQL database's root certificate.
            match &mut profile {
                Profile::Local(LocalProfile {
                    db: Some(StoreLocation::File(db)),
                    ..
                }) => *db = paths.resolve(db, base),
                Profile::Local(LocalProfile {
                    db: Some(StoreLocation::Postgres(target)),
                    ..
                }) => target.resolve_root_cert(|cert| paths.resolve(cert, base)),
                _ => {}
            }
            config.profiles.insert(name, profile);
        }
        if let Some(default) = raw.default_profile {
            let at = locate(text, default.span().start);
            let default = default.into_inner();
            if !config.profiles.contains_key(&default) {
                return Err(ConfigError(describe(
                    path,
                    Some(at),
                    &format!(
                        "default_profile = \"{default}\" names no profile (known: {})",
                        config.profile_names()
                    ),
                )));
            }
            config.default_profile = default;
        }
        Ok(config)
    }

    fn profile_names(&self) -> String {
        self.profiles.keys().cloned().collect::<Vec<_>>().join(", ")
    }

    /// The profile to run with: the named one (or the default), with the command line's
    /// overrides applied.
    pub fn resolve(&self, o: &Overrides, paths: &Paths) -> Result<Resolved, ConfigError> {
        let name = o.profile.as_deref().unwrap_or(&self.default_profile);
        let profile = self.profiles.get(name).ok_or_else(|| {
            ConfigError(format!(
                "no profile named \"{name}\"{} (known: {})",
                self.source
                    .as_ref()
                    .map(|p| format!(" in {}", p.display()))
                    .unwrap_or_default(),
                self.profile_names()
            ))
        })?;
        let timezone = profile
            .timezone()
            .map(|z| z.zone.clone())
            .unwrap_or_else(system_zone);
        let explicit = o.profile.is_some();

        if let Some(base_url) = &o.remote {
            let base_url =
                BaseUrl::parse(base_url).map_err(|m| ConfigError(format!("--remote: {m}")))?;
            let remote = match profile {
                Profile::Remote(r) => Some(r),
                Profile::Local(_) => None,
            };
            let api_key = match (&o.api_key_env, remote) {
                (Some(var), _) => ApiKeySource::Env(var.clone()),
                (None, Some(r)) => r.api_key.clone(),
                (None, None) => {
                    return Err(ConfigError(
                        "--remote needs --api-key-env VAR naming the variable that holds the API key"
                            .into(),
                    ));
                }
            };
            // The flag, not the default profile, says where to go: name it so (a header or a
            // message naming the profile "local" would send the person to the wrong place).
            let profile = match (&o.profile, remote) {
                (Some(_), Some(_)) => name.to_owned(),
                _ => REMOTE_FLAG.to_owned(),
            };
            return Ok(Resolved::Remote {
                profile,
                base_url: base_url.to_string(),
                api_key,
                timeout: Duration::from_secs(
                    remote.map_or(DEFAULT_TIMEOUT_SECS, |r| r.timeout_secs),
                ),
                timezone,
            });
        }

        match profile {
            Profile::Remote(r) => {
                if o.db.is_some() {
                    return Err(ConfigError(format!(
                        "--db needs a local profile, and profile \"{name}\" is remote"
                    )));
                }
                Ok(Resolved::Remote {
                    profile: name.to_owned(),
                    base_url: r.base_url.to_string(),
                    api_key: o
                        .api_key_env
                        .clone()
                        .map_or_else(|| r.api_key.clone(), ApiKeySource::Env),
                    timeout: Duration::from_secs(r.timeout_secs),
                    timezone,
                })
            }
            Profile::Local(l) => {
                if o.api_key_env.is_some() {
                    return Err(ConfigError(format!(
                        "--api-key-env applies to remote profiles, and profile \"{name}\" is local{}",
                        if explicit { "" } else { " (add --remote URL)" }
                    )));
                }
                let db =
                    o.db.clone()
                        .or_else(|| l.db.clone())
                        .unwrap_or_else(|| StoreLocation::File(paths.default_db()));
                let public_url = l
                    .public_url
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_else(|| self.serve.effective_public_url());
                Ok(Resolved::Local {
                    profile: name.to_owned(),
                    db,
                    public_url,
                    timezone,
                    fetch_titles: l.fetch_titles,
                    trash_days: l.trash_days,
                })
            }
        }
    }
}

/// The profile name of a `--remote URL` that no remote profile stands behind.
pub const REMOTE_FLAG: &str = "--remote";

/// What the command line says about the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    pub profile: Option<String>,
    pub db: Option<StoreLocation>,
    pub remote: Option<String>,
    pub api_key_env: Option<String>,
}

#[derive(Debug, Clone)]
struct Location {
    line: usize,
    column: usize,
    text: String,
}

fn locate(text: &str, offset: usize) -> Location {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    Location {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        text: text[line_start..line_end].trim().to_owned(),
    }
}

/// Quoted values longer than this are left out of messages: a key or a password typed into
/// the wrong line must not be printed back.
const QUOTED_SHOWN: usize = 12;
/// Characters of the offending line quoted in a message.
const EXCERPT: usize = 60;
/// Characters of the parser's message kept.
const MESSAGE: usize = 300;

/// `text` with the contents of every quoted value longer than [`QUOTED_SHOWN`] (in `"`, `'` or
/// backticks, as TOML and the parser's messages quote) replaced by `…`.
fn redacted(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(1024));
    let mut rest = text;
    while let Some(open) = rest.find(['"', '\'', '`']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..=open]);
        let inside = &rest[open + 1..];
        let Some(close) = inside.find(quote) else {
            // An unclosed quote runs to the end of the line.
            out.push_str(if inside.chars().count() > QUOTED_SHOWN {
                "…"
            } else {
                inside
            });
            return out;
        };
        let value = &inside[..close];
        out.push_str(if value.chars().count() > QUOTED_SHOWN {
            "…"
        } else {
            value
        });
        out.push(quote);
        rest = &inside[close + 1..];
    }
    out.push_str(rest);
    out
}

/// At most `max` characters of `text`, `…` marking a cut.
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn describe(path: &Path, at: Option<Location>, message: &str) -> String {
    let message = message.replace('\n', " ");
    // What the parser expected are the config's own names (`db_password_command`), never
    // something typed: they are shown whole, whatever their length.
    let message = match message.split_once(", expected ") {
        Some((what, expected)) => format!("{}, expected {expected}", redacted(what)),
        None => redacted(&message),
    };
    let message = shortened(&message, MESSAGE);
    match at {
        Some(at) if !at.text.is_empty() => format!(
            "config file {}, line {}, column {} (`{}`): {message}",
            path.display(),
            at.line,
            at.column,
            shortened(&redacted(&at.text), EXCERPT)
        ),
        Some(at) => format!(
            "config file {}, line {}: {message}",
            path.display(),
            at.line
        ),
        None => format!("config file {}: {message}", path.display()),
    }
}

/// The system's time zone as [`TimeZone::system`] finds it, without its first step on every
/// run: jiff lists every zone the system has (a walk of /usr/share/zoneinfo, a thousand files and
/// a tenth of a short command's time) before it looks the zone up by name. When `TZ` is unset and
/// /etc/localtime links into a zoneinfo directory, that file is the zone jiff would find, under
/// the name it would give it (the link's path after `zoneinfo/`); anything else goes to jiff.
pub fn system_zone() -> TimeZone {
    const LOCALTIME: &str = "/etc/localtime";
    if cfg!(unix) && std::env::var_os("TZ").is_none() {
        let named = std::fs::read_link(LOCALTIME).ok().and_then(|target| {
            let target = target.to_str()?.to_owned();
            let name = &target[target.rfind("zoneinfo/")? + "zoneinfo/".len()..];
            let data = std::fs::read(LOCALTIME).ok()?;
            TimeZone::tzif(name, &data).ok()
        });
        if let Some(zone) = named {
            return zone;
        }
    }
    TimeZone::system()
}

#[cfg(test)]
mod tests;
