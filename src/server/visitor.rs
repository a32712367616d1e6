//! What a redirect learns about its visitor: platform and browser from the User-Agent, bots,
//! country (from a trusted header or a MaxMind database), language and referring host.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, header};

use crate::domain::{Platform, country_by_code};

/// What the User-Agent says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub bot: bool,
    /// One of the nine targeting platforms, when it is one.
    pub platform: Option<Platform>,
    /// The operating system as recorded in stats: the platform name, or woothee's OS name.
    pub os: Option<String>,
    pub browser: Option<String>,
}

/// Platform from the User-Agent: woothee's OS, after our own checks for what it does not know
/// (HarmonyOS, Huawei devices, Ubuntu) or names differently (Chrome OS). Order matters:
/// HarmonyOS phones also say "Android" and Ubuntu desktops also say "Linux".
pub fn platform_of(ua: &str, woothee_os: &str) -> Option<Platform> {
    let lower = ua.to_ascii_lowercase();
    if lower.contains("harmonyos") || lower.contains("openharmony") {
        return Some(Platform::HarmonyOs);
    }
    if lower.contains("huawei") {
        return Some(Platform::Huawei);
    }
    if lower.contains("cros ") || lower.contains("chromeos") {
        return Some(Platform::ChromeOs);
    }
    if lower.contains("ubuntu") {
        return Some(Platform::Ubuntu);
    }
    match woothee_os {
        "iPhone" | "iPad" | "iPod" | "iOS" => Some(Platform::Ios),
        "Android" => Some(Platform::Android),
        "Mac OSX" => Some(Platform::OsX),
        "ChromeOS" => Some(Platform::ChromeOs),
        "Linux" => Some(Platform::Linux),
        os if os.starts_with("Windows") => Some(Platform::Windows),
        _ if lower.contains("iphone") || lower.contains("ipad") => Some(Platform::Ios),
        _ if lower.contains("android") => Some(Platform::Android),
        _ if lower.contains("macintosh") || lower.contains("mac os x") => Some(Platform::OsX),
        _ if lower.contains("windows") => Some(Platform::Windows),
        _ if lower.contains("linux") || lower.contains("x11") => Some(Platform::Linux),
        _ => None,
    }
}

/// Entries of the User-Agent cache before it starts over: visitors' agents repeat a lot, and
/// parsing one costs far more than a lookup.
const AGENT_CACHE: usize = 4096;

pub struct AgentParser {
    bots: isbot::Bots,
    woothee: woothee::parser::Parser,
    cache: Mutex<HashMap<String, Arc<Agent>>>,
}

impl Default for AgentParser {
    fn default() -> Self {
        AgentParser {
            bots: isbot::Bots::default(),
            woothee: woothee::parser::Parser::new(),
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl AgentParser {
    pub fn parse(&self, ua: &str) -> Arc<Agent> {
        if let Some(agent) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(ua) {
            return agent.clone();
        }
        let agent = Arc::new(self.parse_uncached(ua));
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= AGENT_CACHE {
            cache.clear();
        }
        cache.insert(ua.to_owned(), agent.clone());
        agent
    }

    fn parse_uncached(&self, ua: &str) -> Agent {
        let parsed = self.woothee.parse(ua);
        let woothee_os = parsed.as_ref().map_or("", |p| p.os);
        let crawler = parsed.as_ref().is_some_and(|p| p.category == "crawler");
        let platform = platform_of(ua, woothee_os);
        let os = platform.map(|p| p.name().to_owned()).or_else(|| {
            (!woothee_os.is_empty() && woothee_os != "UNKNOWN").then(|| woothee_os.to_owned())
        });
        let browser = parsed
            .as_ref()
            .map(|p| p.name)
            .filter(|n| !n.is_empty() && *n != "UNKNOWN")
            .map(str::to_owned);
        Agent {
            bot: !ua.is_empty() && (crawler || self.bots.is_bot(ua)),
            platform,
            os,
            browser,
        }
    }
}

/// Where the visitor's country comes from.
pub struct GeoSource {
    header: Option<String>,
    reader: Option<maxminddb::Reader<Vec<u8>>>,
}

impl GeoSource {
    pub fn new(header: Option<String>, db: Option<&Path>) -> crate::domain::Result<GeoSource> {
        let reader = match db {
            Some(path) => Some(maxminddb::Reader::open_readfile(path).map_err(|e| {
                crate::domain::Error::Unavailable(format!(
                    "cannot read the GeoIP database {}: {e}",
                    path.display()
                ))
            })?),
            None => None,
        };
        Ok(GeoSource {
            header: header.filter(|h| !h.trim().is_empty()),
            reader,
        })
    }

    /// Whether any source of countries is configured.
    pub fn enabled(&self) -> bool {
        self.header.is_some() || self.reader.is_some()
    }

    /// The visitor's country as an upper-case alpha-2 code: the trusted header first, then the
    /// database.
    pub fn country(&self, headers: &HeaderMap, ip: IpAddr) -> Option<String> {
        if let Some(name) = &self.header
            && let Some(code) = headers
                .get(name.as_str())
                .and_then(|v| v.to_str().ok())
                .and_then(country_by_code)
        {
            return Some(code.code.to_owned());
        }
        let reader = self.reader.as_ref()?;
        let found: Option<maxminddb::geoip2::Country> = reader.lookup(ip).ok().flatten();
        found
            .and_then(|c| c.country)
            .and_then(|c| c.iso_code)
            .and_then(country_by_code)
            .map(|c| c.code.to_owned())
    }
}

/// The primary language of the first `Accept-Language` entry (bounded: `domain::traffic`).
pub fn language(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::ACCEPT_LANGUAGE)?.to_str().ok()?;
    crate::domain::primary_language(value)
}

/// The host of the referring page, bounded to a DNS name's length ("other" when longer). Only
/// the start of the header is looked at, however long it is.
pub fn referrer_host(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::REFERER)?.to_str().ok()?;
    let (_, rest) = value.split_once("://")?;
    let window = &rest.as_bytes()[..rest.len().min(crate::domain::HOST_MAX * 2)];
    let end = window
        .iter()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(window.len());
    if end == window.len() && window.len() < rest.len() {
        // No end of the host within twice the longest one: it is too long to be a name.
        return Some(crate::domain::OTHER.to_owned());
    }
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') {
        // An IPv6 literal, up to its closing bracket.
        host.find(']').map_or(host, |i| &host[..=i])
    } else {
        host.split(':').next().unwrap_or(host)
    };
    crate::domain::bound_host(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_takes_two_letters() {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_LANGUAGE, "de-CH,de;q=0.9".parse().unwrap());
        assert_eq!(language(&h).as_deref(), Some("de"));
        h.insert(header::ACCEPT_LANGUAGE, "*".parse().unwrap());
        assert_eq!(language(&h), None);
    }

    #[test]
    fn referrer_is_reduced_to_its_host() {
        let host = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::REFERER, value.parse().unwrap());
            referrer_host(&h)
        };
        assert_eq!(
            host("https://News.example.com/a?b=c").as_deref(),
            Some("news.example.com")
        );
        assert_eq!(host("https://u:p@t.co:8443#x").as_deref(), Some("t.co"));
        assert_eq!(host("http://[::1]:8080/").as_deref(), Some("[::1]"));
        assert_eq!(
            host(&format!("https://a.example/{}", "x".repeat(8192))).as_deref(),
            Some("a.example")
        );
        assert_eq!(
            host(&format!("https://{}.example/", "x".repeat(400_000))).as_deref(),
            Some("other")
        );
        assert_eq!(
            host(&format!("https://{}.example/", "x".repeat(300))).as_deref(),
            Some("other")
        );
        assert_eq!(host("not a url"), None);
    }
}
