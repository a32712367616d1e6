use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use ipnet::IpNet;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Every;
use crate::domain::{
    AddressLog, BaseUrl, HostSettings, RedirectStatus, Robots, validate_robots_txt, validate_url,
};

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
    /// What the raw visit log keeps of a visitor's address: `drop` (nothing), `network` (its
    /// /24 or /48) or `whole`.
    pub visitor_addresses: AddressLog,
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
    /// How many links, the most clicked first, the alias cache holds before the server
    /// listens; 0 starts it empty.
    pub warm_aliases: usize,
    /// The reverse proxies in front of the server (addresses or CIDR ranges): only a request
    /// from one of them may name its visitor in `forwarded_header`. Empty trusts no header.
    pub trusted_proxies: Vec<TrustedProxy>,
    /// The header the trusted proxies write the visitor's address into.
    pub forwarded_header: ForwardedHeader,
    /// How often `serve` backs up its SQLite database (`6h`, `1d`, `30m`, `90s`); no backups
    /// when unset. Ignored on PostgreSQL, which has its own tools (`pg_dump`).
    pub backup_every: Option<Every>,
    /// How many of those backups are kept, the oldest deleted past it; 0 keeps them all.
    pub backup_keep: u32,
    /// The folder they are written to; defaults to `<database>.backups` beside the database.
    pub backup_dir: Option<PathBuf>,
    /// Where `/` sends a visitor of the server's own host (a domain has its own, set by
    /// `domains update`); the 404 page when unset.
    pub root_url: Option<WebUrl>,
    /// Where an alias no link has sends a visitor of the server's own host.
    pub unknown_url: Option<WebUrl>,
    /// Where a disabled link, or an expired one without its own expiration URL, sends a visitor.
    pub expired_url: Option<WebUrl>,
    /// What the own host's `/robots.txt` says: `disallow` (crawl nothing) or `allow`.
    pub robots: RobotsChoice,
    /// A `robots.txt` of the own host's own instead (at most 4 KiB).
    pub robots_txt: Option<RobotsText>,
    /// Whether webhooks may be sent to loopback, private and link-local addresses (refused
    /// otherwise, when a subscription is made and at every delivery).
    pub webhooks_allow_private: bool,
    /// The file holding the key webhook secrets are derived from (`LINKDECK_WEBHOOK_KEY`
    /// instead, when set); defaults to `webhook.key` in the data folder, made on first use.
    pub webhook_key_file: Option<PathBuf>,
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
            visitor_addresses: AddressLog::default(),
            password_guesses_per_link_per_minute: 100,
            password_checks_at_once: 0,
            max_connections: 0,
            header_timeout_secs: 10,
            idle_timeout_secs: 30,
            warm_aliases: 100_000,
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::default(),
            backup_every: None,
            backup_keep: DEFAULT_BACKUP_KEEP,
            backup_dir: None,
            root_url: None,
            unknown_url: None,
            expired_url: None,
            robots: RobotsChoice::default(),
            robots_txt: None,
            webhooks_allow_private: false,
            webhook_key_file: None,
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

    /// What the server's own host answers when no link does: the fallbacks and robots policy
    /// above.
    pub fn host_settings(&self) -> HostSettings {
        let url = |u: &Option<WebUrl>| u.as_ref().map(|u| u.0.clone());
        HostSettings {
            root_url: url(&self.root_url),
            unknown_url: url(&self.unknown_url),
            expired_url: url(&self.expired_url),
            robots: match (&self.robots_txt, self.robots) {
                (Some(text), _) => Robots::Custom(text.0.clone()),
                (None, RobotsChoice::Allow) => Robots::Allow,
                (None, RobotsChoice::Disallow) => Robots::Disallow,
            },
        }
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

/// One entry of `trusted_proxies`: an address (`127.0.0.1`, `::1`) or a CIDR range
/// (`10.0.0.0/8`, `fd00::/8`). An IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is its IPv4
/// address, as the server sees its peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrustedProxy(IpNet);

impl TrustedProxy {
    /// Reads one entry; the error names the setting and the entry.
    pub fn parse(raw: &str) -> Result<TrustedProxy, String> {
        let entry = raw.trim();
        let bad = |why: &str| {
            format!(
                "trusted_proxies: \"{entry}\" {why} (write an address such as 127.0.0.1 or \
                 ::1, or a range such as 10.0.0.0/8 or fd00::/8)"
            )
        };
        let net = match entry.split_once('/') {
            None => {
                let ip: IpAddr = entry
                    .parse()
                    .map_err(|_| bad("is not an IP address or a CIDR range"))?;
                IpNet::from(ip.to_canonical())
            }
            Some((address, bits)) => {
                let net: IpNet = entry.parse().map_err(|_| match address.parse::<IpAddr>() {
                    Err(_) => bad("is not an IP address or a CIDR range"),
                    Ok(IpAddr::V4(_)) => bad("has no valid prefix length (/0 to /32 for IPv4)"),
                    Ok(IpAddr::V6(_)) => bad("has no valid prefix length (/0 to /128 for IPv6)"),
                })?;
                if net.addr() != net.network() {
                    return Err(bad(&format!(
                        "has bits set past its /{bits}: the range starts at {}",
                        net.trunc()
                    )));
                }
                match (net, net.addr().to_canonical()) {
                    // An IPv4-mapped range is the IPv4 range it maps.
                    (IpNet::V6(v6), IpAddr::V4(v4)) if v6.prefix_len() >= 96 => {
                        IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96)
                            .map_err(|_| bad("is not a range"))?
                    }
                    _ => net,
                }
            }
        };
        Ok(TrustedProxy(net))
    }

    /// The addresses this entry covers.
    pub fn range(&self) -> IpNet {
        self.0
    }
}

impl fmt::Display for TrustedProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.prefix_len() == self.0.max_prefix_len() {
            write!(f, "{}", self.0.addr())
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl<'de> Deserialize<'de> for TrustedProxy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        TrustedProxy::parse(&raw).map_err(serde::de::Error::custom)
    }
}

impl Serialize for TrustedProxy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where the trusted proxies write the visitor's address. Only the one the proxies write may
/// be read: a proxy passes every other header on as the visitor sent it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: visitor, proxy1, …` (nginx, Caddy, HAProxy, most load balancers).
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded: for=visitor, for=proxy1, …`.
    Forwarded,
}

impl ForwardedHeader {
    /// The header's name, as written in the config.
    pub fn name(self) -> &'static str {
        match self {
            ForwardedHeader::XForwardedFor => "X-Forwarded-For",
            ForwardedHeader::Forwarded => "Forwarded",
        }
    }
}

impl<'de> Deserialize<'de> for ForwardedHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        match raw.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
            "forwarded" => Ok(ForwardedHeader::Forwarded),
            _ => Err(serde::de::Error::custom(format!(
                "forwarded_header: \"{}\" is neither X-Forwarded-For nor Forwarded",
                raw.trim()
            ))),
        }
    }
}

impl Serialize for ForwardedHeader {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A fallback URL of `[serve]`, held to a link URL's rules while the file is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct WebUrl(pub String);

impl<'de> Deserialize<'de> for WebUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        let url = raw.trim();
        validate_url(url)
            .map(|()| WebUrl(url.to_owned()))
            .map_err(|m| serde::de::Error::custom(format!("\"{url}\" {m}")))
    }
}

/// `[serve] robots`: whether crawlers may read the own host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RobotsChoice {
    #[default]
    Disallow,
    Allow,
}

/// `[serve] robots_txt`, checked as a domain's custom text is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RobotsText(pub String);

impl<'de> Deserialize<'de> for RobotsText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        validate_robots_txt(&text)
            .map(|()| RobotsText(text))
            .map_err(|m| serde::de::Error::custom(format!("robots_txt {m}")))
    }
}
