use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Every;
use crate::domain::{BaseUrl, RedirectStatus};

/// Days the raw visit log keeps each visit unless `visit_log_days` says otherwise: long enough
/// to look into a recent campaign by hand, short enough that the log does not outgrow the
/// rollups.
const DEFAULT_VISIT_LOG_DAYS: u32 = 90;

/// Scheduled backups `serve` keeps unless `backup_keep` says otherwise: a week of daily ones.
const DEFAULT_BACKUP_KEEP: u32 = 7;

/// `[serve]`: settings of `linkdeck serve`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Address and port to listen on.
    pub listen: SocketAddr,
    /// Base of short URLs of links without a domain; defaults to `http://<listen>`.
    pub public_url: Option<BaseUrl>,
    /// A header a trusted proxy sets to the visitor's country code (`CF-IPCountry`).
    pub geo_header: Option<String>,
    /// A MaxMind GeoLite2/GeoIP2 country database, used when no `geo_header` answers.
    pub geoip_db: Option<PathBuf>,
    /// 301, 302, 307 or 308.
    pub redirect_status: RedirectStatus,
    /// API requests per key per minute.
    pub rate_limit_per_minute: u32,
    /// Password attempts per link and visitor per minute.
    pub password_attempts_per_minute: u32,
    /// Days the raw visit log keeps each visit; 0 keeps them all. Statistics read the rollups,
    /// which are kept whatever this says.
    pub visit_log_days: u32,
    /// Wrong password guesses per link per minute, from all visitors together.
    pub password_guesses_per_link_per_minute: u32,
    /// Password checks at once; 0 = half the cores.
    pub password_checks_at_once: usize,
    /// Open connections at most; 0 = 20,000, or fewer when the limit on open files asks.
    pub max_connections: usize,
    /// Seconds a request's head may take to arrive.
    pub header_timeout_secs: u64,
    /// Seconds a connection may sit idle between requests.
    pub idle_timeout_secs: u64,
    /// How often `serve` backs up its SQLite database (`6h`, `1d`, `30m`, `90s`); no backups
    /// when unset. Ignored on PostgreSQL, which has its own tools (`pg_dump`).
    pub backup_every: Option<Every>,
    /// How many of those backups are kept, the oldest deleted past it; 0 keeps them all.
    pub backup_keep: u32,
    /// The folder they are written to; defaults to `<database>.backups` beside the database.
    pub backup_dir: Option<PathBuf>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_url: None,
            geo_header: None,
            geoip_db: None,
            redirect_status: RedirectStatus::default(),
            rate_limit_per_minute: 600,
            password_attempts_per_minute: 10,
            visit_log_days: DEFAULT_VISIT_LOG_DAYS,
            password_guesses_per_link_per_minute: 100,
            password_checks_at_once: 0,
            max_connections: 0,
            header_timeout_secs: 10,
            idle_timeout_secs: 30,
            backup_every: None,
            backup_keep: DEFAULT_BACKUP_KEEP,
            backup_dir: None,
        }
    }
}

impl ServeConfig {
    /// The base of short URLs: `public_url`, or the listen address over http.
    pub fn effective_public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.to_string(),
            None => format!("http://{}", self.listen),
        }
    }

    /// How long the raw visit log keeps each visit; `None` keeps them all.
    pub fn visit_log_retention(&self) -> Option<Duration> {
        (self.visit_log_days > 0)
            .then(|| Duration::from_secs(u64::from(self.visit_log_days) * 86_400))
    }

    /// Where `serve`'s scheduled backups of the SQLite file at `db` go: `backup_dir`, or
    /// `<db>.backups` beside it.
    pub fn backup_folder(&self, db: &std::path::Path) -> PathBuf {
        self.backup_dir.clone().unwrap_or_else(|| {
            let mut name = db.as_os_str().to_owned();
            name.push(".backups");
            PathBuf::from(name)
        })
    }
}
