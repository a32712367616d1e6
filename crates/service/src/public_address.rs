//! Which addresses are on the public internet. Title fetching reaches only those, so a key
//! holder cannot make the server read its own network's pages (the server itself, a router's
//! admin page, a cloud's metadata service) through a link's title.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The addresses a request to `url` may connect to: a literal one, or each one its host name
/// resolves to, kept when public (see [`is_public`]) or when `allowed` lets it through. Empty
/// when there are none; `None` when the URL names no host or the name does not resolve.
pub(crate) async fn reachable(
    url: &url::Url,
    allowed: impl Fn(&SocketAddr) -> bool,
) -> Option<Vec<SocketAddr>> {
    let port = url.port_or_known_default()?;
    let resolved: Vec<SocketAddr> = match url.host()? {
        url::Host::Ipv4(ip) => vec![SocketAddr::new(ip.into(), port)],
        url::Host::Ipv6(ip) => vec![SocketAddr::new(ip.into(), port)],
        url::Host::Domain(name) => tokio::net::lookup_host((name, port)).await.ok()?.collect(),
    };
    Some(
        resolved
            .into_iter()
            .filter(|addr| is_public(addr.ip()) || allowed(addr))
            .collect(),
    )
}

/// `builder` made to connect to `url`'s host only at `addrs` (checked by [`reachable`]), so a
/// name that resolves differently a moment later cannot slip another address in; without a
/// proxy, which would resolve names where we cannot look, and without following redirects,
/// each of which would need checking again.
pub(crate) fn pinned(
    builder: reqwest::ClientBuilder,
    url: &url::Url,
    addrs: &[SocketAddr],
) -> reqwest::ClientBuilder {
    let builder = builder
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    match url.host() {
        Some(url::Host::Domain(name)) => builder.resolve_to_addrs(name, addrs),
        _ => builder,
    }
}

/// Whether `ip` is a public unicast address: not loopback, private, link-local, unique-local,
/// shared (carrier NAT), documentation, benchmarking, multicast, broadcast or reserved. An IPv6
/// address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0                                  // "this network"
        || ip.is_loopback()                   // 127/8
        || ip.is_private()                    // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local()                 // 169.254/16, cloud metadata among them
        || (a == 100 && (64..128).contains(&b)) // 100.64/10, carrier-grade NAT
        || (a == 192 && b == 0 && c == 0)     // 192.0.0/24, protocol assignments
        || ip.is_documentation()              // 192.0.2/24, 198.51.100/24, 203.0.113/24
        || (a == 198 && (b == 18 || b == 19)) // 198.18/15, benchmarking
        || ip.is_multicast()                  // 224/4
        || a >= 240) // 240/4 reserved, and the broadcast address
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let embedded_v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        // 64:ff9b::/96, NAT64: the IPv4 address in the last 32 bits.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return is_public_v4(embedded_v4(hi, lo)),
        // 2002::/16, 6to4: the IPv4 address in bits 16–48.
        [0x2002, hi, lo, ..] => return is_public_v4(embedded_v4(hi, lo)),
        _ => {}
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00  // fc00::/7, unique local
        || (s[0] & 0xffc0) == 0xfe80  // fe80::/10, link-local
        || (s[0] & 0xffc0) == 0xfec0  // fec0::/10, the old site-local
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0 && s[1..6] == [0; 5])) // ::/96 and other IPv4-compatible forms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str) -> bool {
        is_public(text.parse().unwrap())
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2001:db8::1",
            "::127.0.0.1",
        ] {
            assert!(!public(ip), "{ip} passed as public");
        }
    }

    #[test]
    fn internet_addresses_are_public() {
        for ip in [
            "93.184.215.14",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2a00:1450:4001::200e",
        ] {
            assert!(public(ip), "{ip} refused");
        }
    }
}
