//! What a request says about where it comes from: the session cookie (and the one to set), the
//! bearer token, whether it came over https through the proxy, from another site's page, or from
//! a page on another origin.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;

use super::auth::COOKIE;
use super::state::AppState;

/// The address a request comes from, as the login and token limits count it: the peer's, or, when
/// the peer is a `--trusted-proxy`, the last address in `X-Forwarded-For` that is not one of the
/// trusted proxies (what a client writes there itself comes before it, and is not believed).
pub struct Client(pub IpAddr);

impl FromRequestParts<Arc<AppState>> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        Ok(Client(client_ip(parts, &state.proxies)))
    }
}

pub fn client_ip(parts: &Parts, proxies: &[IpAddr]) -> IpAddr {
    let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::from([0, 0, 0, 0]), |info| info.0.ip());
    if !proxies.contains(&peer) {
        return peer;
    }
    let hops: Vec<&str> = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    for hop in hops.iter().rev() {
        match hop.parse::<IpAddr>() {
            Ok(ip) if proxies.contains(&ip) => continue,
            Ok(ip) => return ip,
            // Not an address (a name, `unknown`, a port): nothing further left is believed.
            Err(_) => return peer,
        }
    }
    peer
}

/// The session cookie's value, when the request has exactly one: two mean another site (a
/// sibling subdomain) set one of them (cookie tossing), and neither is trusted.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    cookie(headers, COOKIE)
}

/// The cookie `name`, when the request carries it exactly once.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut found = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().strip_prefix(name)?.strip_prefix('=').map(str::to_owned));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// The `Set-Cookie` value binding a single sign-on login to this browser (`None`: clears it).
/// `Lax`, unlike the session's: the identity provider sends the browser back by a cross-site
/// navigation, which carries `Lax` cookies and not `Strict` ones.
pub fn sso_cookie(state: &AppState, headers: &HeaderMap, binding: Option<&str>) -> String {
    let secure = if state.secure_cookies || over_https(state, headers) { "; Secure" } else { "" };
    let name = super::sso::BINDING_COOKIE;
    let path = "Path=/api/v2/auth/sso";
    match binding {
        Some(value) => format!("{name}={value}; HttpOnly; SameSite=Lax; {path}; Max-Age=600{secure}"),
        None => format!("{name}=; HttpOnly; SameSite=Lax; {path}; Max-Age=0{secure}"),
    }
}

/// The `Set-Cookie` value for a session (`None`: clears it); `Secure` when the request came over
/// https ([`over_https`]) or the server was told to mark it always (`--secure-cookies`).
pub fn set_cookie(state: &AppState, headers: &HeaderMap, id: Option<&str>) -> String {
    let secure = if state.secure_cookies || over_https(state, headers) { "; Secure" } else { "" };
    match id {
        Some(id) => format!("{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/{secure}"),
        None => format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}"),
    }
}

/// Whether the browser reached this server over https through a TLS reverse proxy: the request
/// names a `--public-host` (the proxy's name) and the proxy says https (`X-Forwarded-Proto`, or
/// `Forwarded: proto=https`). Only the proxy's own value counts (the first), not one a client
/// added further back in a chain.
pub fn over_https(state: &AppState, headers: &HeaderMap) -> bool {
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !state.hosts.is_public(host) {
        return false;
    }
    let first = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim)
            .map(str::to_owned)
    };
    let forwarded_proto = first("x-forwarded-proto").is_some_and(|p| p.eq_ignore_ascii_case("https"));
    let forwarded = first("forwarded").is_some_and(|element| {
        element.split(';').any(|pair| {
            pair.trim().split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("proto") && v.trim().trim_matches('"').eq_ignore_ascii_case("https")
            })
        })
    });
    forwarded_proto || forwarded
}

/// The token of an `Authorization: Bearer TOKEN` value; the scheme is case-insensitive (RFC 7235).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once([' ', '\t'])?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Whether a request was made by a page on another site (or for an image, a frame, a script …
/// rather than a page the user opened): the fetch metadata browsers send, or a `Referer` or
/// `Origin` naming another host. A token in such a request is not even compared, so a hostile
/// page can neither guess with it nor use up the address's allowance of wrong tokens.
pub fn cross_site(headers: &HeaderMap) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    if header("sec-fetch-site").is_some_and(|site| site != "same-origin" && site != "none") {
        return true;
    }
    if header("sec-fetch-dest").is_some_and(|dest| dest != "document") {
        return true;
    }
    let host = header("host").unwrap_or_default();
    ["referer", "origin"].into_iter().filter_map(header).any(|source| {
        let rest = source.split_once("://").map_or("", |(_, rest)| rest);
        rest.split(['/', '?', '#']).next() != Some(host.as_str())
    })
}

/// An `Origin` header, when present, names this server (`Host`): a page elsewhere cannot post here.
pub fn origin_allowed(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(axum::http::header::ORIGIN) else { return true };
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok());
    let origin = origin.to_str().ok().and_then(|o| o.split_once("://").map(|(_, rest)| rest));
    matches!((origin, host), (Some(origin), Some(host)) if origin.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(axum::http::header::COOKIE, "a=1; opsai_session=xyz; b=2".parse().unwrap());
        assert_eq!(session_cookie(&headers).as_deref(), Some("xyz"));
        headers.append(axum::http::header::COOKIE, "opsai_session=tossed".parse().unwrap());
        assert_eq!(session_cookie(&headers), None, "two session cookies: neither");
    }

    #[test]
    fn the_client_is_the_last_untrusted_forwarded_address_only_behind_a_trusted_proxy() {
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        let parts = |peer: &str, forwarded: &[&str]| {
            let mut request = axum::http::Request::builder();
            for value in forwarded {
                request = request.header("x-forwarded-for", *value);
            }
            let (mut parts, ()) = request.body(()).unwrap().into_parts();
            parts.extensions.insert(ConnectInfo(format!("{peer}:4000").parse::<SocketAddr>().unwrap()));
            parts
        };
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        assert_eq!(client_ip(&parts("127.0.0.1", &["203.0.113.5"]), &[proxy]), ip("203.0.113.5"));
        assert_eq!(
            client_ip(&parts("127.0.0.1", &["6.6.6.6, 203.0.113.5"]), &[proxy]),
            ip("203.0.113.5"),
            "a forged first hop"
        );
        assert_eq!(client_ip(&parts("127.0.0.1", &["203.0.113.5", "127.0.0.1"]), &[proxy]), ip("203.0.113.5"));
        assert_eq!(client_ip(&parts("10.0.0.9", &["203.0.113.5"]), &[proxy]), ip("10.0.0.9"), "not a trusted peer");
        assert_eq!(client_ip(&parts("127.0.0.1", &["unknown"]), &[proxy]), proxy);
        assert_eq!(client_ip(&parts("127.0.0.1", &[]), &[proxy]), proxy);
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for value in ["Bearer abc", "bearer abc", "BEARER  abc ", "Bearer\tabc"] {
            assert_eq!(bearer_token(value), Some("abc"), "{value:?}");
        }
        for value in ["Basic abc", "Bearerabc", "Bearer ", ""] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }

    #[test]
    fn a_request_from_another_site_or_not_for_a_page_is_cross_site() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            headers.insert(axum::http::header::HOST, "127.0.0.1:8765".parse().unwrap());
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            headers
        };
        assert!(!cross_site(&headers(&[])));
        assert!(!cross_site(&headers(&[("sec-fetch-site", "none"), ("sec-fetch-dest", "document")])));
        assert!(!cross_site(&headers(&[("referer", "http://127.0.0.1:8765/")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "cross-site")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "same-site")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "none"), ("sec-fetch-dest", "image")])));
        assert!(cross_site(&headers(&[("referer", "https://evil.example/page")])));
        assert!(cross_site(&headers(&[("origin", "null")])));
    }

    #[test]
    fn origin_must_name_the_host() {
        let mut headers = HeaderMap::new();
        headers.insert(axum::http::header::HOST, "127.0.0.1:8765".parse().unwrap());
        assert!(origin_allowed(&headers));
        headers.insert(axum::http::header::ORIGIN, "http://127.0.0.1:8765".parse().unwrap());
        assert!(origin_allowed(&headers));
        headers.insert(axum::http::header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(!origin_allowed(&headers));
    }
}
