use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use url::Url;

use super::{HostSettings, Id};

/// A host that serves short links, such as `https://sho.rt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    pub id: Id,
    pub owner_id: Id,
    /// Scheme and host (and port, if any), no trailing slash: `https://sho.rt`.
    pub name: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Its fallbacks and robots policy, when read with them: a domain read for itself has
    /// them; a link's own domain (`Link::domain`) and a phpShort server's domains do not.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<HostSettings>,
}

/// The settings of a domain that has none: linkdeck's own pages, crawlers kept out.
static NO_SETTINGS: HostSettings = HostSettings {
    root_url: None,
    unknown_url: None,
    expired_url: None,
    robots: super::Robots::Disallow,
};

impl Domain {
    /// Its settings, or the defaults where it was read without them.
    pub fn settings(&self) -> &HostSettings {
        self.settings.as_ref().unwrap_or(&NO_SETTINGS)
    }

    /// The host part of the name, lower-case, as matched against a request's `Host` header.
    pub fn host(&self) -> &str {
        self.name
            .split_once("://")
            .map_or(self.name.as_str(), |(_, h)| h)
    }
}

/// The domain of `domains` named `name`, however it is written (`sho.rt`, `https://sho.rt/`).
pub fn find_domain<'a>(domains: &'a [Domain], name: &str) -> Option<&'a Domain> {
    let wanted = normalize_domain_name(name).ok();
    domains
        .iter()
        .find(|d| Some(&d.name) == wanted.as_ref() || d.name.eq_ignore_ascii_case(name.trim()))
}

/// The account that owns links, spaces, domains and API keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub id: Id,
    pub name: String,
    pub created_at: Timestamp,
}

/// Accepts `sho.rt`, `https://sho.rt/` or `http://sho.rt:8080` and returns the canonical
/// `scheme://host[:port]` (https when no scheme is given), or a message saying what is wrong.
pub fn normalize_domain_name(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err("is required".into());
    }
    let with_scheme = if raw.contains("://") {
        raw.to_owned()
    } else {
        format!("https://{raw}")
    };
    let url = Url::parse(&with_scheme).map_err(|e| format!("is not a host name ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must use http or https".into());
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err("must be a bare host, without a path".into());
    }
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or("must name a host")?;
    Ok(match url.port() {
        Some(port) => format!("{}://{}:{}", url.scheme(), host.to_ascii_lowercase(), port),
        None => format!("{}://{}", url.scheme(), host.to_ascii_lowercase()),
    })
}
