//! What the visit log keeps of a visitor's address: nothing (the default), its network, or the
//! whole address. Rollups never hold it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

/// `[serve] visitor_addresses`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressLog {
    /// No address is kept.
    #[default]
    Drop,
    /// The address cut to its network: the /24 of an IPv4 address, the /48 of an IPv6 one
    /// (`203.0.113.0/24`, `2001:db8:5::/48`), which names a provider or a site, not a person.
    Network,
    /// The address as the server saw it (after `trusted_proxies`).
    Whole,
}

impl AddressLog {
    pub const ALL: [AddressLog; 3] = [AddressLog::Drop, AddressLog::Network, AddressLog::Whole];

    pub fn as_str(self) -> &'static str {
        match self {
            AddressLog::Drop => "drop",
            AddressLog::Network => "network",
            AddressLog::Whole => "whole",
        }
    }

    /// What the log keeps of `ip` under this setting.
    pub fn kept(self, ip: IpAddr) -> Option<String> {
        let ip = ip.to_canonical();
        match self {
            AddressLog::Drop => None,
            AddressLog::Whole => Some(ip.to_string()),
            AddressLog::Network => Some(match ip {
                IpAddr::V4(v4) => {
                    let [a, b, c, _] = v4.octets();
                    format!("{}/24", Ipv4Addr::new(a, b, c, 0))
                }
                IpAddr::V6(v6) => {
                    let s = v6.segments();
                    format!("{}/48", Ipv6Addr::new(s[0], s[1], s[2], 0, 0, 0, 0, 0))
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_setting_keeps_what_it_says() {
        let v4: IpAddr = "203.0.113.77".parse().unwrap();
        let v6: IpAddr = "2001:db8:5:6:7::1".parse().unwrap();
        let mapped: IpAddr = "::ffff:198.51.100.9".parse().unwrap();
        assert_eq!(AddressLog::Drop.kept(v4), None);
        assert_eq!(AddressLog::Whole.kept(v4).unwrap(), "203.0.113.77");
        assert_eq!(AddressLog::Network.kept(v4).unwrap(), "203.0.113.0/24");
        assert_eq!(AddressLog::Network.kept(v6).unwrap(), "2001:db8:5::/48");
        assert_eq!(AddressLog::Whole.kept(mapped).unwrap(), "198.51.100.9");
        assert_eq!(AddressLog::Network.kept(mapped).unwrap(), "198.51.100.0/24");
    }
}
