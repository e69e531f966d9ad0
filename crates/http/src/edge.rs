//! The service's edge towards browsers, proxies and slow clients (docs/operations.md
//! "Browsers (CORS)", "Proxies" and "Slow clients"): which web origins may call the API
//! from a browser, which peers are believed when they say whom they forward a request
//! for, and how long a request body may take to arrive.

use crate::body_timeout::BodyTimeouts;
use actix_cors::Cors;
use actix_web::http::header::{self, HeaderMap, HeaderName};
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};

/// The header a representative's citizen token names the dependant it acts for in
/// (docs/representation.md "Acting"); read by `extract::Authenticated`.
pub const ON_BEHALF_OF: &str = "on-behalf-of";

/// The client's address, resolved once per request by the conventions middleware
/// ([`EdgePolicy::client_address`]); `None` when the connection has no IP peer.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<IpAddr>);

/// The header a trusted proxy names the client in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (nginx, HAProxy, Envoy, cloud load
    /// balancers).
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1`.
    Forwarded,
}

impl ProxyHeader {
    /// `x-forwarded-for` or `forwarded`, as configured.
    pub fn parse(text: &str) -> Result<ProxyHeader, String> {
        match text.to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(ProxyHeader::XForwardedFor),
            "forwarded" => Ok(ProxyHeader::Forwarded),
            other => Err(format!("`{other}` is not a proxy header: expected x-forwarded-for or forwarded")),
        }
    }
}

/// What the edge believes and allows; from the configuration, the same on every worker.
#[derive(Debug, Clone)]
pub struct EdgePolicy {
    /// Web origins (`https://portal.example.org`) whose pages may call the API; none by
    /// default, so no browser page of another origin may.
    pub cors_origins: Vec<String>,
    /// Peers whose forwarding header is believed; none by default, so the client is the
    /// peer of the TCP connection.
    pub trusted_proxies: Vec<IpNet>,
    /// The one header the trusted proxies set; the other is ignored, since a proxy passes
    /// on unchanged whatever a client wrote in a header it does not manage itself.
    pub proxy_header: ProxyHeader,
    /// The read deadlines of request bodies (408 past them).
    pub body_timeouts: BodyTimeouts,
}

impl Default for EdgePolicy {
    fn default() -> Self {
        EdgePolicy {
            cors_origins: Vec::new(),
            trusted_proxies: Vec::new(),
            proxy_header: ProxyHeader::XForwardedFor,
            body_timeouts: BodyTimeouts::default(),
        }
    }
}

impl EdgePolicy {
    fn trusts(&self, addr: IpAddr) -> bool {
        let addr = canonical(addr);
        self.trusted_proxies.iter().any(|net| net.contains(&addr))
    }

    /// The address of the client behind `peer`. A peer that is not a trusted proxy is the
    /// client. Behind trusted proxies, the forwarding chain is read from the right (the
    /// entry the nearest proxy appended) and the first address that is not itself a
    /// trusted proxy is the client: whatever a client wrote further left is its own
    /// claim and is not believed. An entry that is not an address (`unknown`, an
    /// obfuscated name) ends the walk at the last trusted hop.
    pub fn client_address(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = canonical(peer?);
        if !self.trusts(peer) {
            return Some(peer);
        }
        let mut client = peer;
        for entry in self.chain(headers).iter().rev() {
            match entry {
                Some(addr) if self.trusts(*addr) => client = *addr,
                Some(addr) => return Some(*addr),
                None => return Some(client),
            }
        }
        Some(client)
    }

    /// The forwarding chain, left to right, over every line of the configured header.
    fn chain(&self, headers: &HeaderMap) -> Vec<Option<IpAddr>> {
        let (name, parse): (HeaderName, fn(&str) -> Option<IpAddr>) = match self.proxy_header {
            ProxyHeader::XForwardedFor => (HeaderName::from_static("x-forwarded-for"), parse_node),
            ProxyHeader::Forwarded => (header::FORWARDED, forwarded_for),
        };
        headers
            .get_all(name)
            .flat_map(|value| match value.to_str() {
                Ok(text) => text.split(',').map(|entry| parse(entry.trim()).map(canonical)).collect(),
                // Not text: one entry that is not an address.
                Err(_) => vec![None],
            })
            .collect()
    }

    /// The CORS middleware for [`EdgePolicy::cors_origins`] (docs/api.md "Browsers").
    /// Requests from other origins are served as usual, without CORS headers (the browser
    /// then withholds the answer from the page); their preflights are refused.
    pub fn cors(&self) -> Cors {
        let mut cors = Cors::default()
            .allowed_methods(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
            .allowed_headers([
                header::AUTHORIZATION,
                header::ACCEPT,
                header::ACCEPT_LANGUAGE,
                header::CONTENT_TYPE,
                header::IF_MATCH,
                header::IF_NONE_MATCH,
                HeaderName::from_static("idempotency-key"),
                HeaderName::from_static(ON_BEHALF_OF),
                HeaderName::from_static("x-request-id"),
            ])
            .expose_headers([
                header::ETAG,
                header::LOCATION,
                header::LINK,
                header::RETRY_AFTER,
                header::CONTENT_DISPOSITION,
                HeaderName::from_static("x-request-id"),
                HeaderName::from_static("api-maturity"),
            ])
            // Bearer tokens, not cookies: the API never asks a browser for credentials.
            .max_age(3600);
        for origin in &self.cors_origins {
            cors = cors.allowed_origin(origin);
        }
        cors
    }
}

/// An IPv4 address mapped into IPv6 (`::ffff:192.0.2.1`, as a dual-stack listener sees
/// IPv4 peers) is the IPv4 address, so that one CIDR list and one rate limit cover both.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

/// One node of a forwarding chain: an address, with or without a port (`192.0.2.1`,
/// `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]:4711`).
fn parse_node(text: &str) -> Option<IpAddr> {
    let text = text.trim_matches('"');
    text.parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| text.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
}

/// The `for` parameter of one RFC 7239 element (`for=192.0.2.60;proto=https`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        key.trim().eq_ignore_ascii_case("for").then(|| parse_node(value.trim()))?
    })
}

/// Checks one configured CORS origin: the serialised origin a browser sends (`scheme://host`
/// or `scheme://host:port`, http or https, no path, no trailing slash, no wildcard).
pub fn check_origin(origin: &str) -> Result<(), String> {
    let url = url::Url::parse(origin).map_err(|e| format!("`{origin}` is not an origin: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{origin}` is not an http(s) origin"));
    }
    let serialised = url.origin().ascii_serialization();
    if serialised != origin {
        return Err(format!("`{origin}` is not an origin as browsers send it: write `{serialised}`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn policy(trusted: &[&str], proxy_header: ProxyHeader) -> EdgePolicy {
        EdgePolicy {
            trusted_proxies: trusted.iter().map(|n| n.parse().unwrap()).collect(),
            proxy_header,
            ..EdgePolicy::default()
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(HeaderName::from_static(name), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn the_client_is_the_first_untrusted_address_from_the_right() {
        let lb = policy(&["10.0.0.0/8"], ProxyHeader::XForwardedFor);
        let xff = |v: &str| headers(&[("x-forwarded-for", v)]);
        let table: &[(&str, HeaderMap, Option<IpAddr>)] = &[
            // Not behind a trusted proxy: the header is the client's own claim.
            ("198.51.100.7", xff("203.0.113.9"), ip("198.51.100.7")),
            // One trusted proxy.
            ("10.0.0.2", xff("203.0.113.9"), ip("203.0.113.9")),
            // A client that forges an entry: the proxy appended the real one on the right.
            ("10.0.0.2", xff("1.2.3.4, 203.0.113.9"), ip("203.0.113.9")),
            // Two trusted proxies in a row.
            ("10.0.0.2", xff("203.0.113.9, 10.0.0.7"), ip("203.0.113.9")),
            // Ports and brackets.
            ("10.0.0.2", xff("[2001:db8::5]:4711"), ip("2001:db8::5")),
            ("10.0.0.2", xff("203.0.113.9:5000"), ip("203.0.113.9")),
            // Not an address: the last trusted hop is what is known.
            ("10.0.0.2", xff("unknown, 10.0.0.7"), ip("10.0.0.7")),
            // Every entry trusted: the leftmost.
            ("10.0.0.2", xff("10.0.0.9, 10.0.0.7"), ip("10.0.0.9")),
            // Trusted proxy without a header: the proxy itself.
            ("10.0.0.2", HeaderMap::new(), ip("10.0.0.2")),
            // IPv4 mapped into IPv6 is the IPv4 address (and so trusted).
            ("::ffff:10.0.0.2", xff("203.0.113.9"), ip("203.0.113.9")),
            // The other header is not believed.
            ("10.0.0.2", headers(&[("forwarded", "for=203.0.113.9")]), ip("10.0.0.2")),
        ];
        for (peer, headers, expected) in table {
            assert_eq!(lb.client_address(ip(peer), headers), *expected, "peer {peer}, {headers:?}");
        }
        // Several header lines are one list, in order.
        let two_lines = headers(&[("x-forwarded-for", "1.2.3.4"), ("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(lb.client_address(ip("10.0.0.2"), &two_lines), ip("203.0.113.9"));
        assert_eq!(lb.client_address(None, &two_lines), None);
    }

    #[test]
    fn rfc_7239_elements_are_read_for_their_for_parameter() {
        let lb = policy(&["10.0.0.0/8"], ProxyHeader::Forwarded);
        let fwd = |v: &str| headers(&[("forwarded", v)]);
        let table: &[(&str, Option<IpAddr>)] = &[
            ("for=203.0.113.9", ip("203.0.113.9")),
            ("for=192.0.2.60;proto=https;by=10.0.0.2", ip("192.0.2.60")),
            ("For=\"[2001:db8:cafe::17]:4711\"", ip("2001:db8:cafe::17")),
            ("for=1.2.3.4, for=203.0.113.9;proto=https, for=10.0.0.5", ip("203.0.113.9")),
            ("for=_hidden, for=10.0.0.5", ip("10.0.0.5")),
            ("proto=https", ip("10.0.0.2")),
        ];
        for (value, expected) in table {
            assert_eq!(lb.client_address(ip("10.0.0.2"), &fwd(value)), *expected, "{value}");
        }
        assert_eq!(
            lb.client_address(ip("10.0.0.2"), &headers(&[("x-forwarded-for", "203.0.113.9")])),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn origins_are_written_as_browsers_send_them() {
        assert!(check_origin("https://portal.example.org").is_ok());
        assert!(check_origin("http://127.0.0.1:5173").is_ok());
        for bad in
            ["https://portal.example.org/", "https://portal.example.org/app", "*", "ftp://x.org", "portal"]
        {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
        assert!(ProxyHeader::parse("X-Forwarded-For").is_ok());
        assert!(ProxyHeader::parse("x-real-ip").is_err());
    }
}
