//! What every command runs with: the configuration, the chosen profile, and the backend it
//! opens on demand (so `completions` or a bad flag never touch a database).

use std::sync::Arc;
use std::time::Duration;

use jiff::tz::TimeZone;

use super::error::{CliError, CliResult, Kind};
use crate::backend::Backend;
use crate::backend::local::{LocalBackend, LocalOptions, LocalService, UpgradeNotice};
use crate::backend::remote::{KeySource, RemoteBackend, RemoteOptions};
use crate::config::{ApiKeySource, Config, Overrides, Paths, Resolved};
use crate::domain::{Clock, SystemClock};

pub struct Context {
    pub paths: Paths,
    pub config: Config,
    pub profile: Resolved,
    /// `--json`: records and errors as JSON.
    pub json: bool,
    /// `--quiet`: no progress bars or notes.
    pub quiet: bool,
    /// `--owner`: whom a local profile acts as (the default owner otherwise).
    pub owner: Option<String>,
    pub clock: Arc<dyn Clock>,
    /// `--read-only`, which holds for every profile the command touches; a profile's own
    /// `read_only = true` holds for that profile ([`Context::is_read_only`]).
    read_only_flag: bool,
}

impl Context {
    /// Reads the configuration (`--config` or the standard file) and resolves the profile.
    pub fn load(
        paths: Paths,
        config_override: Option<&std::path::Path>,
        overrides: &Overrides,
        json: bool,
        owner: Option<String>,
    ) -> CliResult<Context> {
        let config = match config_override {
            Some(path) => Config::load(path, true, &paths)?,
            None => Config::load(&paths.config_file, false, &paths)?,
        };
        let profile = config.resolve(overrides, &paths)?;
        if owner.is_some() && !profile.is_local() {
            return Err(CliError::usage(
                "--owner applies to local profiles; a remote server decides the owner from the API key",
            ));
        }
        Ok(Context {
            paths,
            config,
            profile,
            json,
            quiet: false,
            owner,
            clock: Arc::new(SystemClock),
            read_only_flag: false,
        })
    }

    /// The same command line on another profile (`copy --from`/`--to`).
    pub fn with_profile(&self, profile: Resolved) -> Context {
        Context {
            paths: self.paths.clone(),
            config: self.config.clone(),
            profile,
            json: self.json,
            quiet: self.quiet,
            owner: self.owner.clone(),
            clock: self.clock.clone(),
            read_only_flag: self.read_only_flag,
        }
    }

    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only_flag = read_only;
        self
    }

    /// Whether every change is refused: `--read-only`, or the profile's `read_only = true`.
    pub fn is_read_only(&self) -> bool {
        self.read_only_flag || self.config.read_only.contains(self.profile.profile_name())
    }

    /// Refuses `what` (a command that changes something) on a read-only profile, before
    /// anything is opened.
    pub fn writable(&self, what: &str) -> CliResult<()> {
        if self.is_read_only() {
            // As the backend's own refusal reads, so both ways out end alike.
            return Err(crate::domain::Error::Unsupported(format!(
                "{what}: {}",
                crate::backend::read_only::REFUSED
            ))
            .into());
        }
        Ok(())
    }

    pub fn timezone(&self) -> &TimeZone {
        self.profile.timezone()
    }

    /// The backend of the profile.
    pub async fn backend(&self) -> CliResult<Arc<dyn Backend>> {
        let backend: Arc<dyn Backend> = match self.remote()? {
            None => Arc::new(self.local("").await?),
            Some(remote) => Arc::new(remote),
        };
        Ok(if self.is_read_only() {
            Arc::new(crate::backend::ReadOnly(backend))
        } else {
            backend
        })
    }

    /// The server of a remote profile, as itself rather than as a [`Backend`] (for what only a
    /// server offers, such as linkdeck's own API); `None` for a local profile.
    pub fn remote(&self) -> CliResult<Option<RemoteBackend>> {
        match &self.profile {
            Resolved::Local { .. } => Ok(None),
            Resolved::Remote {
                base_url,
                api_key,
                timeout,
                timezone,
                ..
            } => open_remote(base_url, api_key, *timeout, timezone).map(Some),
        }
    }

    /// The whole embedded database, for commands that only make sense on a local profile;
    /// `what` names the command in the error otherwise (`"domains add"`).
    pub async fn service(&self, what: &str) -> CliResult<LocalService> {
        self.service_with(what, false).await
    }

    /// [`Context::service`] for a command whose large write (an import) may hold the file alone
    /// while nothing else has it open: the command must read nothing beside that write through
    /// another handle (see `LocalOptions::large_writes_alone`).
    pub async fn local_for_large_writes(&self, what: &str) -> CliResult<LocalBackend> {
        self.local_with(what, true).await
    }

    async fn service_with(&self, what: &str, large_writes_alone: bool) -> CliResult<LocalService> {
        match &self.profile {
            Resolved::Local {
                db,
                public_url,
                timezone,
                fetch_titles,
                trash_days,
                ..
            } => {
                let opts = LocalOptions {
                    public_url: public_url.clone(),
                    timezone: timezone.clone(),
                    clock: self.clock.clone(),
                    fetch_titles: *fetch_titles,
                    trash_days: *trash_days,
                    upgrade_notice: (!self.quiet).then_some(upgrade_notice as UpgradeNotice),
                    large_writes_alone,
                    ..LocalOptions::default()
                };
                Ok(LocalService::open_at(db, opts).await?)
            }
            Resolved::Remote {
                profile, base_url, ..
            } if profile == crate::config::REMOTE_FLAG => Err(CliError::new(
                Kind::Usage,
                format!(
                    "{what} works only on a local database; --remote points at the server at \
                     {base_url} (run it there, or leave out --remote)"
                ),
            )),
            Resolved::Remote {
                profile, base_url, ..
            } => Err(CliError::new(
                Kind::Usage,
                format!(
                    "{what} works only on a local database; profile \"{profile}\" uses the server \
                     at {base_url} (run it there, or pick a local profile with --profile or --db)"
                ),
            )),
        }
    }

    /// The local backend of the chosen owner.
    pub async fn local(&self, what: &str) -> CliResult<LocalBackend> {
        self.local_with(what, false).await
    }

    async fn local_with(&self, what: &str, large_writes_alone: bool) -> CliResult<LocalBackend> {
        let service = self.service_with(what, large_writes_alone).await?;
        match &self.owner {
            None => Ok(service.default_backend().await?),
            Some(name) => {
                let owner = service.owner_by_name(name).await?;
                Ok(service.for_owner(owner.id))
            }
        }
    }
}

/// Builds the backend of a remote profile: reads the key from its source (a missing or empty
/// key is a one-line error naming the variable or command) and sets up the client. Nothing is
/// sent yet; an unreachable server or a wrong key shows on the first request.
fn open_remote(
    base_url: &str,
    api_key: &ApiKeySource,
    timeout: Duration,
    timezone: &TimeZone,
) -> CliResult<RemoteBackend> {
    let source = match api_key {
        ApiKeySource::Env(var) => KeySource::Env(var.clone()),
        ApiKeySource::Command(command) => KeySource::Command(command.clone()),
    };
    let backend = RemoteBackend::new(RemoteOptions {
        base_url: base_url.to_owned(),
        api_key: source.resolve()?,
        timeout,
        timezone: timezone.clone(),
    })?;
    Ok(backend)
}

/// Says on stderr that the database is being upgraded, before the wait (and before the
/// terminal app takes the screen).
fn upgrade_notice(path: &std::path::Path, from: i64, to: i64) {
    eprintln!(
        "note: upgrading {} from schema {from} to {to}, once for this version of linkdeck; a \
         large database takes a while",
        path.display()
    );
}
