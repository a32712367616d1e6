//! Who the visitor is behind reverse proxies: the one place the server learns a request's
//! address ([`Visitor`]), for geo targeting, every limit counted per visitor (passwords, public
//! pages, the API without a key) and whatever else asks for it. No handler reads the TCP peer
//! (`ConnectInfo`) for its visitor.
//!
//! A request from an address `[serve] trusted_proxies` covers may name its visitor in the
//! header those proxies write (`forwarded_header`). Each proxy appends the address it was
//! reached from, so the header is read from the right: entries that are themselves trusted
//! proxies are passed over, and the first one that is not is the visitor. What a visitor sends
//! in the header sits to the left of what their first proxy appended, so it is never reached:
//! nobody can choose their address by sending the header. A header that cannot be read where
//! it is walked, or a chain longer than [`MAX_HOPS`], leaves the visitor at the peer's address;
//! it is never an error. See docs/PROXY.md.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use ipnet::IpNet;

use super::AppState;
use crate::config::ForwardedHeader;

/// Entries of the header walked from the right at most: real chains hold a few proxies.
pub const MAX_HOPS: usize = 16;

/// The proxies allowed to name a request's visitor, and the header they name it in.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    ranges: Vec<IpNet>,
    header: ForwardedHeader,
}

impl TrustedProxies {
    pub fn new(ranges: Vec<IpNet>, header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies { ranges, header }
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.ranges.iter().any(|range| range.contains(&ip))
    }

    /// The visitor of a request that came from `peer` with `headers`.
    pub fn visitor(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        // Header lines of one name make one list, in order; walked from the last entry of the
        // last line.
        let entries = headers
            .get_all(match self.header {
                ForwardedHeader::XForwardedFor => "x-forwarded-for",
                ForwardedHeader::Forwarded => "forwarded",
            })
            .iter()
            .rev()
            .flat_map(|line| {
                let text = line.to_str().unwrap_or("\u{0}");
                text.rsplit(',')
            })
            .take(MAX_HOPS + 1)
            .enumerate();
        let mut furthest = None;
        for (hop, entry) in entries {
            if hop == MAX_HOPS {
                return peer;
            }
            let address = match self.header {
                ForwardedHeader::XForwardedFor => node(entry.trim()),
                ForwardedHeader::Forwarded => forwarded_for(entry),
            };
            let Some(address) = address.map(|ip| ip.to_canonical()) else {
                return peer;
            };
            if !self.trusts(address) {
                return address;
            }
            furthest = Some(address);
        }
        // Every entry is a trusted proxy: the visitor is the furthest of them (someone on the
        // proxies' own network). No entry at all: the peer itself.
        furthest.unwrap_or(peer)
    }
}

/// The `for=` of one element of a `Forwarded` header (`for=192.0.2.60;proto=http;by=…`), as an
/// address; `None` when it has none, several, or one that is not an address (`unknown`, an
/// obfuscated `_name`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    let mut found = None;
    for pair in element.split(';') {
        let (name, value) = pair.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("for") {
            continue;
        }
        if found.is_some() {
            return None;
        }
        let value = value.trim();
        let value = match value.strip_prefix('"') {
            Some(quoted) => quoted.strip_suffix('"')?,
            None => value,
        };
        if value.contains(['"', '\\']) {
            return None;
        }
        found = Some(node(value)?);
    }
    found
}

/// An address as proxies write it: `192.0.2.1`, `2001:db8::1`, and with a port
/// `192.0.2.1:4711` or `[2001:db8::1]:4711` (the port is not looked at).
fn node(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(bracketed) = text.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']')?;
        if !(after.is_empty() || (after.starts_with(':') && after.len() > 1)) {
            return None;
        }
        return inside.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let (host, port) = text.rsplit_once(':')?;
    if port.is_empty() {
        return None;
    }
    host.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// The visitor of a request (see the module's documentation): every handler and middleware
/// that needs the visitor's address takes it from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visitor(pub IpAddr);

impl FromRequestParts<Arc<AppState>> for Visitor {
    type Rejection = StatusCode;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, StatusCode> {
        let ConnectInfo(peer) = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .copied()
            .ok_or(StatusCode::INTERNAL_SERVER_ERROR)?;
        Ok(Visitor(state.proxies.visitor(peer.ip(), &parts.headers)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrustedProxy;

    fn proxies(entries: &[&str], header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies::new(
            entries
                .iter()
                .map(|e| TrustedProxy::parse(e).unwrap().range())
                .collect(),
            header,
        )
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn headers(name: &str, lines: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for line in lines {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                axum::http::HeaderValue::from_bytes(line.as_bytes()).unwrap(),
            );
        }
        map
    }

    fn xff(lines: &[&str]) -> HeaderMap {
        headers("x-forwarded-for", lines)
    }

    fn fwd(lines: &[&str]) -> HeaderMap {
        headers("forwarded", lines)
    }

    #[test]
    fn untrusted_peers_are_their_own_visitors() {
        let none = TrustedProxies::default();
        let h = xff(&["203.0.113.7"]);
        assert_eq!(none.visitor(ip("127.0.0.1"), &h), ip("127.0.0.1"));
        let local = proxies(&["127.0.0.1"], ForwardedHeader::XForwardedFor);
        assert_eq!(local.visitor(ip("198.51.100.2"), &h), ip("198.51.100.2"));
        // A peer in an IPv4-mapped form is its IPv4 address.
        assert_eq!(
            local.visitor(ip("::ffff:198.51.100.2"), &h),
            ip("198.51.100.2")
        );
    }

    #[test]
    fn a_trusted_peer_names_the_visitor() {
        let local = proxies(&["127.0.0.1", "::1"], ForwardedHeader::XForwardedFor);
        assert_eq!(
            local.visitor(ip("127.0.0.1"), &xff(&["203.0.113.7"])),
            ip("203.0.113.7")
        );
        assert_eq!(
            local.visitor(ip("::ffff:127.0.0.1"), &xff(&[" 2001:db8::7 "])),
            ip("2001:db8::7")
        );
        assert_eq!(
            local.visitor(ip("::1"), &xff(&["::ffff:203.0.113.7"])),
            ip("203.0.113.7")
        );
        // No header: the proxy itself.
        assert_eq!(
            local.visitor(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
        // The other header is not read: a proxy passes it on as the visitor sent it.
        assert_eq!(
            local.visitor(ip("127.0.0.1"), &fwd(&["for=203.0.113.7"])),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn what_a_visitor_sends_is_left_of_what_their_proxy_appends() {
        let chain = proxies(&["127.0.0.1", "10.0.0.0/8"], ForwardedHeader::XForwardedFor);
        // The visitor 198.51.100.9 sent "X-Forwarded-For: 1.2.3.4"; the proxy appended the
        // address it was reached from.
        assert_eq!(
            chain.visitor(ip("127.0.0.1"), &xff(&["1.2.3.4, 198.51.100.9"])),
            ip("198.51.100.9")
        );
        // Through two proxies (an outer one at 10.1.2.3 in front of the local one); trusted
        // entries are passed over, in however many header lines.
        assert_eq!(
            chain.visitor(
                ip("127.0.0.1"),
                &xff(&["1.2.3.4, 127.0.0.1", "198.51.100.9,10.1.2.3"])
            ),
            ip("198.51.100.9")
        );
        // A visitor claiming to be a trusted proxy gains nothing: the first untrusted entry
        // from the right is still theirs.
        assert_eq!(
            chain.visitor(ip("127.0.0.1"), &xff(&["10.9.9.9, 198.51.100.9, 10.1.2.3"])),
            ip("198.51.100.9")
        );
        // Every entry trusted: the furthest one is the visitor (someone on the proxies' own
        // network).
        assert_eq!(
            chain.visitor(ip("127.0.0.1"), &xff(&["10.0.0.5, 10.1.2.3"])),
            ip("10.0.0.5")
        );
    }

    #[test]
    fn forwarded_for_with_brackets_quotes_and_ports() {
        let local = proxies(&["127.0.0.1", "::1"], ForwardedHeader::Forwarded);
        let visitor = |lines: &[&str]| local.visitor(ip("127.0.0.1"), &fwd(lines));
        assert_eq!(visitor(&["for=192.0.2.43"]), ip("192.0.2.43"));
        assert_eq!(
            visitor(&[r#"for="[2001:db8:cafe::17]:4711""#]),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(visitor(&[r#"For="[2001:db8::1]""#]), ip("2001:db8::1"));
        assert_eq!(visitor(&[r#"for="192.0.2.43:47011""#]), ip("192.0.2.43"));
        assert_eq!(
            visitor(&["for=192.0.2.43;proto=https;by=203.0.113.43, for=\"[::1]:80\""]),
            ip("192.0.2.43")
        );
        assert_eq!(
            visitor(&[r#"proto=http;For="[2001:db8::9]:_port";host=sho.rt"#]),
            ip("2001:db8::9")
        );
        assert_eq!(
            visitor(&["for=1.2.3.4", "for=198.51.100.9;proto=https"]),
            ip("198.51.100.9")
        );
        // X-Forwarded-For is not read when Forwarded is the proxies' header.
        assert_eq!(
            local.visitor(ip("127.0.0.1"), &xff(&["203.0.113.7"])),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn garbage_leaves_the_visitor_at_the_peer() {
        let x = proxies(&["127.0.0.1"], ForwardedHeader::XForwardedFor);
        let f = proxies(&["127.0.0.1"], ForwardedHeader::Forwarded);
        let peer = ip("127.0.0.1");
        for line in [
            "",
            " ",
            ",",
            "unknown",
            "203.0.113.7, nonsense",
            "203.0.113.7,",
            "203.0.113.300",
            "[2001:db8::1",
            "[2001:db8::1]x",
            "203.0.113.7:",
            "2001:db8::1:",
            "for=203.0.113.7",
        ] {
            assert_eq!(x.visitor(peer, &xff(&[line])), peer, "{line:?}");
        }
        for line in [
            "",
            "203.0.113.7",
            "for=unknown",
            "for=_hidden",
            "for=\"_hidden:80\"",
            "by=203.0.113.7",
            "for=\"203.0.113.7",
            "for=203.0.113.7\"",
            "for=203.0.113.7;for=198.51.100.1",
            "for=\"[2001:db8::1]\\\"\"",
            "for=1.2.3.4, proto=https",
        ] {
            assert_eq!(f.visitor(peer, &fwd(&[line])), peer, "{line:?}");
        }
        // Bytes that are not text.
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            axum::http::HeaderValue::from_bytes(b"203.0.113.7, \xff").unwrap(),
        );
        assert_eq!(x.visitor(peer, &h), peer);
        // Garbage left of the visitor's entry is never reached.
        assert_eq!(
            x.visitor(peer, &xff(&["nonsense, 203.0.113.7"])),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn the_walk_is_bounded() {
        let wide = proxies(&["10.0.0.0/8", "127.0.0.1"], ForwardedHeader::XForwardedFor);
        let peer = ip("127.0.0.1");
        let hops = |n: usize| {
            let mut entries = vec!["198.51.100.9".to_owned()];
            entries.extend((0..n).map(|i| format!("10.0.0.{}", i % 250)));
            xff(&[&entries.join(", ")])
        };
        assert_eq!(wide.visitor(peer, &hops(MAX_HOPS - 1)), ip("198.51.100.9"));
        // Past the bound the visitor stays at the peer, however long the chain.
        assert_eq!(wide.visitor(peer, &hops(MAX_HOPS)), peer);
        assert_eq!(wide.visitor(peer, &hops(2_000)), peer);
    }
}
