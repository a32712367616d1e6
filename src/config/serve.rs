use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::values::{BaseUrl, RedirectStatus};

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
            visit_log_days: (crate::server::DEFAULT_VISIT_LOG_RETENTION.as_secs() / 86_400) as u32,
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
}
