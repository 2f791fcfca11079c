//! Where a webhook may send: public addresses only, unless private ones are allowed for
//! development (`KURYR_WEBHOOK_ALLOW_PRIVATE`). Otherwise any user could make the server
//! send requests to itself, to the machines beside it, or to a cloud's metadata service.
//!
//! A host name is judged by every address it resolves to, when the webhook is saved and again
//! before each delivery (the name may point elsewhere since); a delivery connects only to an
//! address judged here (see `transport`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ipnet::{Ipv4Net, Ipv6Net};

/// How long a name may take to resolve.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The kinds of address no webhook goes to by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Loopback,
    /// RFC 1918 networks, IPv6 unique local (`fc00::/7`) and site-local addresses.
    Private,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    Shared,
    LinkLocal,
    Multicast,
    Unspecified,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Anything else outside the public unicast space: IETF protocol assignments, `240.0.0.0/4`
    /// and broadcast, the IPv6 discard prefix, IPv6 outside `2000::/3`.
    Reserved,
}

impl Class {
    /// The stable name, in problem documents and delivery errors.
    pub fn slug(self) -> &'static str {
        match self {
            Class::Loopback => "loopback",
            Class::Private => "private",
            Class::Shared => "shared",
            Class::LinkLocal => "link-local",
            Class::Multicast => "multicast",
            Class::Unspecified => "unspecified",
            Class::Documentation => "documentation",
            Class::Benchmarking => "benchmarking",
            Class::Reserved => "reserved",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Class::Loopback => "a loopback address",
            Class::Private => "a private network address",
            Class::Shared => "a carrier-grade NAT (shared) address",
            Class::LinkLocal => "a link-local address",
            Class::Multicast => "a multicast address",
            Class::Unspecified => "an unspecified address",
            Class::Documentation => "an address reserved for documentation",
            Class::Benchmarking => "an address reserved for benchmarks",
            Class::Reserved => "a reserved address",
        }
    }

    /// What `KURYR_WEBHOOK_ALLOW_PRIVATE` lets through: the machine itself and its networks,
    /// for development and tests. Link-local stays refused (a cloud's metadata service lives
    /// there), and so does everything that is no host's address.
    fn is_local_network(self) -> bool {
        matches!(self, Class::Loopback | Class::Private | Class::Shared)
    }
}

/// Why a webhook may not go where its URL leads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{}", address_refused(host, ip, *class))]
    Address {
        host: String,
        ip: IpAddr,
        class: Class,
    },
    #[error("the host name {host} does not resolve")]
    Unresolvable { host: String },
}

fn address_refused(host: &str, ip: &IpAddr, class: Class) -> String {
    let what = class.words();
    if host == ip.to_string() {
        format!("{ip} is {what}; webhooks go only to public addresses")
    } else {
        format!("{host} leads to {ip}, {what}; webhooks go only to public addresses")
    }
}

impl Refused {
    /// The stable name of the reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Refused::Address { class, .. } => class.slug(),
            Refused::Unresolvable { .. } => "unresolvable",
        }
    }
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
}

const fn v6(first: u16, second: u16, prefix: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(first, second, 0, 0, 0, 0, 0, 0), prefix)
}

/// The IPv4 networks that are not public, the most specific first where they nest.
const V4: [(Ipv4Net, Class); 15] = [
    (v4(0, 0, 0, 0, 8), Class::Unspecified),
    (v4(10, 0, 0, 0, 8), Class::Private),
    (v4(100, 64, 0, 0, 10), Class::Shared),
    (v4(127, 0, 0, 0, 8), Class::Loopback),
    (v4(169, 254, 0, 0, 16), Class::LinkLocal),
    (v4(172, 16, 0, 0, 12), Class::Private),
    (v4(192, 0, 0, 0, 24), Class::Reserved),
    (v4(192, 0, 2, 0, 24), Class::Documentation),
    (v4(192, 88, 99, 0, 24), Class::Reserved),
    (v4(192, 168, 0, 0, 16), Class::Private),
    (v4(198, 18, 0, 0, 15), Class::Benchmarking),
    (v4(198, 51, 100, 0, 24), Class::Documentation),
    (v4(203, 0, 113, 0, 24), Class::Documentation),
    (v4(224, 0, 0, 0, 4), Class::Multicast),
    (v4(240, 0, 0, 0, 4), Class::Reserved),
];

/// The IPv6 networks that are not public, the most specific first where they nest.
const V6: [(Ipv6Net, Class); 9] = [
    (v6(0, 0, 96), Class::Reserved),
    (v6(0x100, 0, 64), Class::Reserved),
    (v6(0x2001, 0xdb8, 32), Class::Documentation),
    (v6(0x2001, 2, 48), Class::Benchmarking),
    (v6(0x2001, 0, 23), Class::Reserved),
    (v6(0x3fff, 0, 20), Class::Documentation),
    (v6(0xfc00, 0, 7), Class::Private),
    (v6(0xfe80, 0, 10), Class::LinkLocal),
    (v6(0xfec0, 0, 10), Class::Private),
];
/// NAT64 and 6to4: forms that carry an IPv4 address.
const NAT64: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96);
const SIX_TO_FOUR: Ipv6Net = v6(0x2002, 0, 16);
/// Global unicast; the rest of the IPv6 space is unassigned.
const GLOBAL_UNICAST: Ipv6Net = v6(0x2000, 0, 3);

fn classify_v4(ip: Ipv4Addr) -> Option<Class> {
    V4.iter()
        .find(|(network, _)| network.contains(&ip))
        .map(|(_, class)| *class)
}

fn classify_v6(ip: Ipv6Addr) -> Option<Class> {
    if ip.is_unspecified() {
        return Some(Class::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Class::Loopback);
    }
    let bits = u128::from(ip);
    // Forms that carry an IPv4 address are judged by it: IPv4-mapped, NAT64, 6to4.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if NAT64.contains(&ip) {
        return classify_v4(Ipv4Addr::from(bits as u32));
    }
    if SIX_TO_FOUR.contains(&ip) {
        return classify_v4(Ipv4Addr::from((bits >> 80) as u32));
    }
    if let Some((_, class)) = V6.iter().find(|(network, _)| network.contains(&ip)) {
        return Some(*class);
    }
    if ip.is_multicast() {
        return Some(Class::Multicast);
    }
    (!GLOBAL_UNICAST.contains(&ip)).then_some(Class::Reserved)
}

/// The kind of a non-public address; `None` for a public one.
pub fn classify(ip: IpAddr) -> Option<Class> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Judges one address of `host`.
pub fn vet_ip(host: &str, ip: IpAddr, allow_private: bool) -> Result<(), Refused> {
    match classify(ip) {
        Some(class) if !(allow_private && class.is_local_network()) => Err(Refused::Address {
            host: host.to_owned(),
            ip,
            class,
        }),
        _ => Ok(()),
    }
}

/// Resolves `host` and judges every address it gives: one refused address refuses the name,
/// so that a name cannot mix a public address with one it must not reach.
pub async fn resolve(
    host: &str,
    port: u16,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, Refused> {
    let unresolvable = || Refused::Unresolvable {
        host: host.to_owned(),
    };
    let addresses: Vec<SocketAddr> =
        match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port))).await {
            Ok(Ok(addresses)) => addresses.collect(),
            Ok(Err(_)) | Err(_) => return Err(unresolvable()),
        };
    if addresses.is_empty() {
        return Err(unresolvable());
    }
    for address in &addresses {
        vet_ip(host, address.ip(), allow_private)?;
    }
    Ok(addresses)
}

/// Judges where `url` leads: its address if it names one, otherwise every address its host
/// name resolves to now.
pub async fn vet_url(url: &url::Url, allow_private: bool) -> Result<(), Refused> {
    let port = url.port_or_known_default().unwrap_or(0);
    match url.host() {
        Some(url::Host::Ipv4(ip)) => vet_ip(&ip.to_string(), IpAddr::V4(ip), allow_private),
        Some(url::Host::Ipv6(ip)) => vet_ip(&ip.to_string(), IpAddr::V6(ip), allow_private),
        Some(url::Host::Domain(name)) => resolve(name, port, allow_private).await.map(drop),
        None => Err(Refused::Unresolvable {
            host: String::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(ip: &str) -> Option<&'static str> {
        classify(ip.parse().unwrap()).map(Class::slug)
    }

    #[test]
    fn every_range_that_is_no_public_host_is_named() {
        for (ip, expected) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("::1", "loopback"),
            ("10.0.0.1", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("fc00::1", "private"),
            ("fd12:3456::1", "private"),
            ("100.64.0.1", "shared"),
            ("100.127.255.254", "shared"),
            ("169.254.169.254", "link-local"),
            ("fe80::1", "link-local"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("ff02::1", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("::", "unspecified"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("2001:db8::1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.1", "benchmarking"),
            ("255.255.255.255", "reserved"),
            ("240.0.0.1", "reserved"),
            ("192.0.0.8", "reserved"),
            ("100::1", "reserved"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.1.2.3", "private"),
            ("::ffff:169.254.169.254", "link-local"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("2002:7f00:1::1", "loopback"),
            ("::7f00:1", "reserved"),
        ] {
            assert_eq!(class(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "192.0.3.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "2002:0808:0808::1",
        ] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }

    #[test]
    fn allowing_private_addresses_lets_only_local_networks_through() {
        let vet = |ip: &str, allow| vet_ip("h", ip.parse().unwrap(), allow).map_err(|e| e.reason());
        assert_eq!(vet("127.0.0.1", false), Err("loopback"));
        assert_eq!(vet("127.0.0.1", true), Ok(()));
        assert_eq!(vet("10.0.0.1", true), Ok(()));
        assert_eq!(vet("fd00::1", true), Ok(()));
        assert_eq!(vet("100.64.0.1", true), Ok(()));
        assert_eq!(vet("169.254.169.254", true), Err("link-local"));
        assert_eq!(vet("224.0.0.1", true), Err("multicast"));
        assert_eq!(vet("0.0.0.0", true), Err("unspecified"));
        assert_eq!(vet("8.8.8.8", false), Ok(()));
    }

    #[tokio::test]
    async fn a_name_is_judged_by_what_it_resolves_to() {
        let refused = resolve("localhost", 80, false).await.unwrap_err();
        assert_eq!(refused.reason(), "loopback", "{refused}");
        assert!(
            refused.to_string().contains("localhost leads to"),
            "{refused}"
        );
        assert!(resolve("localhost", 80, true).await.is_ok());
        let url = url::Url::parse("http://[::ffff:7f00:1]:8080/hook").unwrap();
        assert_eq!(vet_url(&url, false).await.unwrap_err().reason(), "loopback");
    }
}
