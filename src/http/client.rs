//! The client address a request comes from: the TCP peer, or, when that peer is a trusted
//! reverse proxy, the address the proxy says it forwarded for. A header from anyone else is
//! ignored: otherwise every client could name its own address and escape every limit.

use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;

use actix_web::http::header::HeaderMap;
use actix_web::{FromRequest, HttpRequest, dev::Payload};
use ipnet::IpNet;

use crate::service::model::account::Origin;

/// The proxies whose forwarding headers are believed: addresses or networks, such as
/// `127.0.0.1, 10.0.0.0/8, ::1`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn none() -> Self {
        TrustedProxies(Vec::new())
    }

    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.0.iter().any(|net| net.contains(&address))
    }

    /// The client a request comes from. Behind trusted proxies, the forwarding chain is read
    /// from its end (the hop nearest to this server) back to the first address that is not a
    /// trusted proxy: the addresses before it are whatever the client chose to write.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let chain = forwarded_for(headers);
        let mut client = peer;
        for hop in chain.iter().rev() {
            match hop {
                Some(address) => {
                    client = canonical(*address);
                    if !self.trusts(client) {
                        return client;
                    }
                }
                // `unknown` or an obfuscated name: nothing further back can be believed.
                None => return client,
            }
        }
        client
    }
}

impl FromStr for TrustedProxies {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                item.parse::<IpNet>()
                    .or_else(|_| item.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!("`{item}` is not an IP address or a network like 10.0.0.0/8")
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(TrustedProxies)
    }
}

/// IPv4 clients reached over an IPv6 socket appear as `::ffff:a.b.c.d`; they are the same
/// client as `a.b.c.d`.
pub(super) fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The forwarding chain, first hop first: RFC 7239 `Forwarded: for=` when present, otherwise
/// `X-Forwarded-For`. `None` stands for a hop that names no address.
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<Option<IpAddr>> = headers
        .get_all("forwarded")
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (name, value) = pair.trim().split_once('=')?;
                name.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| node_address(value.trim()))
            })
        })
        .collect();
    if !forwarded.is_empty() {
        return forwarded;
    }
    headers
        .get_all("x-forwarded-for")
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|item| node_address(item.trim()))
        .collect()
}

/// An address from a `Forwarded` node (`192.0.2.1`, `"192.0.2.1:4711"`, `"[2001:db8::1]:80"`)
/// or an `X-Forwarded-For` item.
fn node_address(node: &str) -> Option<IpAddr> {
    let node = node.trim_matches('"');
    if let Ok(address) = node.parse() {
        return Some(address);
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    let (host, port) = node.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// The client address of a request, as [`TrustedProxies::client_of`] finds it. A request with
/// no peer (only in-process tests make those) counts as `0.0.0.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

impl ClientAddress {
    pub fn of(req: &HttpRequest) -> ClientAddress {
        let peer = req
            .peer_addr()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |addr| addr.ip());
        let proxies = req.app_data::<TrustedProxies>();
        ClientAddress(match proxies {
            Some(proxies) => proxies.client_of(peer, req.headers()),
            None => canonical(peer),
        })
    }
}

impl FromRequest for ClientAddress {
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Ok(ClientAddress::of(req)))
    }
}

/// Where a request comes from, as a sign-in records it: the client address and what the
/// client says it is (`User-Agent`).
impl FromRequest for Origin {
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let user_agent = req
            .headers()
            .get(actix_web::http::header::USER_AGENT)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .unwrap_or_default();
        std::future::ready(Ok(Origin::new(ClientAddress::of(req).0, &user_agent)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn forwarding_headers_count_only_from_trusted_proxies() {
        let proxies: TrustedProxies = "127.0.0.1, 10.0.0.0/8".parse().unwrap();
        let xff = headers(&[("x-forwarded-for", "198.51.100.9")]);
        assert_eq!(proxies.client_of(ip("127.0.0.1"), &xff), ip("198.51.100.9"));
        // From anyone else the header is the client's own claim.
        assert_eq!(
            proxies.client_of(ip("203.0.113.5"), &xff),
            ip("203.0.113.5")
        );
        assert_eq!(
            TrustedProxies::none().client_of(ip("127.0.0.1"), &xff),
            ip("127.0.0.1")
        );
        // No header: the proxy itself.
        assert_eq!(
            proxies.client_of(ip("10.1.2.3"), &HeaderMap::new()),
            ip("10.1.2.3")
        );
    }

    #[test]
    fn the_chain_is_read_from_the_nearest_hop() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        // The client wrote 1.2.3.4 itself; 198.51.100.9 is what the first trusted hop saw.
        let chain = headers(&[("x-forwarded-for", "1.2.3.4, 198.51.100.9, 10.0.0.7")]);
        assert_eq!(
            proxies.client_of(ip("10.0.0.1"), &chain),
            ip("198.51.100.9")
        );
        let split = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "198.51.100.9"),
        ]);
        assert_eq!(
            proxies.client_of(ip("10.0.0.1"), &split),
            ip("198.51.100.9")
        );
        let garbage = headers(&[("x-forwarded-for", "1.2.3.4, nonsense")]);
        assert_eq!(proxies.client_of(ip("10.0.0.1"), &garbage), ip("10.0.0.1"));
    }

    #[test]
    fn forwarded_is_preferred_and_read_with_ports_and_brackets() {
        let proxies: TrustedProxies = "::1, 127.0.0.1".parse().unwrap();
        let both = headers(&[
            ("forwarded", r#"for=192.0.2.60;proto=http;by=203.0.113.43"#),
            ("x-forwarded-for", "198.51.100.9"),
        ]);
        assert_eq!(proxies.client_of(ip("::1"), &both), ip("192.0.2.60"));
        let ported = headers(&[(
            "forwarded",
            r#"For="192.0.2.61:4711", for="[2001:db8:cafe::17]:80""#,
        )]);
        assert_eq!(
            proxies.client_of(ip("127.0.0.1"), &ported),
            ip("2001:db8:cafe::17")
        );
        let hidden = headers(&[("forwarded", "for=_hidden, for=unknown")]);
        assert_eq!(proxies.client_of(ip("127.0.0.1"), &hidden), ip("127.0.0.1"));
        // A mapped IPv4 peer is the IPv4 address.
        assert_eq!(
            proxies.client_of(
                ip("::ffff:127.0.0.1"),
                &headers(&[("x-forwarded-for", "192.0.2.1")])
            ),
            ip("192.0.2.1")
        );
    }

    fn client_behind_localhost(forwarded: &str, xff: &str) -> IpAddr {
        let proxies: TrustedProxies = "127.0.0.1".parse().unwrap();
        let mut map = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(forwarded) {
            map.append(HeaderName::from_static("forwarded"), value);
        }
        if let Ok(value) = HeaderValue::from_str(xff) {
            map.append(HeaderName::from_static("x-forwarded-for"), value);
        }
        proxies.client_of(ip("127.0.0.1"), &map)
    }

    proptest::proptest! {
        /// Whatever a client writes in the forwarding headers, reading them never panics.
        #[test]
        fn any_forwarding_header_is_read_without_harm(forwarded in ".{0,80}", xff in ".{0,80}") {
            client_behind_localhost(&forwarded, &xff);
        }

        /// The client found is the peer itself or an address the headers name.
        #[test]
        fn the_client_is_the_peer_or_named_in_the_headers(
            forwarded in "(for=\"?[0-9.:]{0,18}\"?[;,] ?){0,4}",
            xff in "[0-9., ]{0,60}",
        ) {
            let client = client_behind_localhost(&forwarded, &xff);
            let named = format!("{forwarded} {xff}");
            proptest::prop_assert!(
                client == ip("127.0.0.1") || named.contains(&client.to_string()),
                "{} from {}", client, named
            );
        }
    }

    #[test]
    fn settings_are_addresses_or_networks() {
        assert_eq!(
            "".parse::<TrustedProxies>().unwrap(),
            TrustedProxies::none()
        );
        assert!(
            "10.0.0.0/8, ::1"
                .parse::<TrustedProxies>()
                .unwrap()
                .trusts(ip("10.9.9.9"))
        );
        assert!("localhost".parse::<TrustedProxies>().is_err());
        assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
    }
}
