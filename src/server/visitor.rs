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
    /// A link-preview fetcher (a bot too): shown a link's preview card, counted as a preview.
    pub preview: bool,
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
/// Bytes of a User-Agent that are parsed. Real agents are a few hundred bytes; the rest of a
/// longer one would only cost parsing time.
const AGENT_PARSED: usize = 1024;

/// Parses User-Agents, remembering recent answers. The cache is keyed by a digest of the whole
/// header (with keys random to this process, so no visitor can make two agents collide), never
/// by the text itself: its memory stays a few hundred kilobytes however long and varied the
/// agents a flood sends.
pub struct AgentParser {
    bots: isbot::Bots,
    woothee: woothee::parser::Parser,
    digest: std::hash::RandomState,
    cache: Mutex<HashMap<u64, Arc<Agent>>>,
}

impl Default for AgentParser {
    fn default() -> Self {
        AgentParser {
            bots: isbot::Bots::default(),
            woothee: woothee::parser::Parser::new(),
            digest: std::hash::RandomState::new(),
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl AgentParser {
    pub fn parse(&self, ua: &str) -> Arc<Agent> {
        let key = std::hash::BuildHasher::hash_one(&self.digest, ua);
        if let Some(agent) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return agent.clone();
        }
        let agent = Arc::new(self.parse_uncached(ua));
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= AGENT_CACHE {
            cache.clear();
        }
        cache.insert(key, agent.clone());
        agent
    }

    /// Bytes the cache holds beyond its fixed per-entry cost.
    #[cfg(test)]
    fn cached_bytes(&self) -> usize {
        let cache = self.cache.lock().unwrap();
        cache
            .values()
            .map(|a| {
                a.os.as_ref().map_or(0, String::len) + a.browser.as_ref().map_or(0, String::len)
            })
            .sum()
    }

    fn parse_uncached(&self, ua: &str) -> Agent {
        let ua = prefix(ua, AGENT_PARSED);
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
        let preview = link_preview(ua);
        Agent {
            // A request without a User-Agent is a script, not a person's browser.
            bot: ua.trim().is_empty() || crawler || self.bots.is_bot(ua) || preview,
            preview,
            platform,
            os,
            browser,
        }
    }
}

/// Marks of the fetchers that messengers and social sites send to draw a link's preview card
/// (lower case): a preview is not a click, and some of them do not call themselves bots.
const LINK_PREVIEWS: &[&str] = &[
    "whatsapp/",
    "telegrambot",
    "slackbot",
    "discordbot",
    "facebookexternalhit",
    "facebot",
    "twitterbot",
    "linkedinbot",
    "skypeuripreview",
    "snap url preview",
    "pinterestbot",
    "mastodon/",
    "cardyb",
    "redditbot",
    "embedly",
    "iframely",
    "line-poker",
    "link preview",
    "google-pagerenderer",
];

/// Whether `ua` is a link-preview fetcher.
fn link_preview(ua: &str) -> bool {
    let lower = ua.to_ascii_lowercase();
    LINK_PREVIEWS.iter().any(|mark| lower.contains(mark))
}

/// At most `max` bytes of `text`, cut at a character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The block a visitor's address belongs to: the IPv4 address itself, or its IPv6 /64.
pub fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
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
    fn unique_long_agents_do_not_fill_the_cache() {
        let parser = AgentParser::default();
        let filler = "x".repeat(8_000);
        for i in 0..5_000 {
            let ua = format!("Mozilla/5.0 (Windows NT 10.0) Chrome/120.0 {i} {filler}");
            assert_eq!(parser.parse(&ua).platform, Some(Platform::Windows));
        }
        assert!(
            parser.cached_bytes() < 64 * 1024,
            "{} bytes cached",
            parser.cached_bytes()
        );
        // Repeats are still answered from the cache, and agree with a fresh parse.
        let ua = format!("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) {filler}");
        assert_eq!(parser.parse(&ua), parser.parse(&ua));
        assert_eq!(parser.parse(&ua).platform, Some(Platform::Ios));
    }

    #[test]
    fn link_preview_fetchers_and_missing_agents_are_not_visitors() {
        let parser = AgentParser::default();
        for ua in PREVIEW_AGENTS {
            assert!(parser.parse(ua).bot, "{ua}");
        }
        assert!(parser.parse("").bot, "no User-Agent at all");
        for ua in [
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
            "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
        ] {
            assert!(!parser.parse(ua).bot, "{ua}");
        }
    }

    /// What messengers and social sites send when they fetch a link to draw its preview card.
    const PREVIEW_AGENTS: &[&str] = &[
        "WhatsApp/2.23.20.0 A",
        "WhatsApp/2.2310.1 i",
        "TelegramBot (like TwitterBot)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",
        "Twitterbot/1.0",
        "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
        "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com",
        "Snap URL Preview Service; bot; snapchat; https://developers.snap.com/robots",
        "Pinterestbot/1.0 (+http://www.pinterest.com/bot.html)",
        "http.rb/5.1.1 (Mastodon/4.1.2; +https://mastodon.social/)",
        "Bluesky Cardyb/1.1",
        "redditbot/1.0",
        "Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)",
        "Iframely/1.3.1 (+https://iframely.com/docs/about)",
        "facebookexternalhit/1.1;line-poker/1.0",
        "Quora Link Preview/1.0",
        "Mozilla/5.0 (compatible; Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/))",
    ];

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
