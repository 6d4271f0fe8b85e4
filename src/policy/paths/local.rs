//! Where an HTTP client's request goes, beyond the metadata services (`metadata.rs`): a service
//! on this machine (`localhost`, 127/8, `0.0.0.0`, `::1`, in the spellings `inet_aton` accepts)
//! trusts local callers (Docker's API on :2375, Consul, Elasticsearch, admin pages), and schemes
//! other than http(s) reach services that were never meant for a URL (`gopher://` and `dict://`
//! speak raw TCP to Redis or memcached, `file://` reads local files).
//!
//! Private networks (RFC 1918) are not flagged: internal services are what SREs query every day.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::metadata::inet_aton;

/// The first URL scheme in `text` other than http and https (`gopher`, `file`, `dict`, …).
pub(crate) fn other_scheme(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let (head, _) = lower.split_once("://")?;
    // The scheme is the run of scheme characters right before `://` (`--url=gopher://`).
    let scheme: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!matches!(scheme.as_str(), "http" | "https")).then_some(scheme)
}

/// A host on this machine named in `text`: in a URL's authority always; as a bare `host[:port]`
/// word only when `host_position` says the text is an address wherever it sits.
pub(crate) fn local_host_in(text: &str, host_position: bool) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    if let Some((_, rest)) = lower.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        let host = authority.rsplit('@').next().unwrap_or(authority);
        return local_host(host, true);
    }
    if !host_position {
        return None;
    }
    let authority = lower.split(['/', '?', '#']).next().unwrap_or(&lower);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    local_host(host, false)
}

/// `http://localhost:8080/health`: a probe of the endpoints services publish for monitoring,
/// which return status, not data (no query string, the last segment one of these names).
pub(crate) fn is_probe(text: &str) -> bool {
    const PROBES: &[&str] = &[
        "health", "healthz", "livez", "readyz", "ready", "alive", "ping", "metrics", "status", "version", "stub_status",
    ];
    let rest = text.split_once("://").map_or(text, |(_, rest)| rest);
    let Some((_, path)) = rest.split_once('/') else { return false };
    let path = path.trim_end_matches('/');
    let last = path.rsplit('/').next().unwrap_or(path);
    !path.contains(['?', '#', '%', ';']) && !path.contains("..") && PROBES.contains(&last)
}

fn local_host(host: &str, in_url: bool) -> Option<String> {
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.split(']').next().unwrap_or(inner);
        let address = inner.split('%').next().unwrap_or(inner).parse::<Ipv6Addr>().ok()?;
        return local_ipv6(address).then(|| inner.to_owned());
    }
    if let Ok(address) = host.parse::<Ipv6Addr>() {
        return local_ipv6(address).then(|| host.to_owned());
    }
    let name = host.split(':').next().unwrap_or(host).trim_end_matches('.');
    if matches!(name, "localhost" | "ip6-localhost" | "ip6-loopback") || name.ends_with(".localhost") {
        return Some(name.to_owned());
    }
    // A bare small number is more often a count than an address (`--retry 3`).
    if !in_url && !name.contains('.') && !host.contains(':') && name.parse::<u64>().is_ok_and(|n| n < 1 << 24) {
        return None;
    }
    let address = inet_aton(name)?;
    local_ipv4(address).then(|| name.to_owned())
}

fn local_ipv4(address: Ipv4Addr) -> bool {
    address.is_loopback() || address.is_unspecified()
}

fn local_ipv6(address: Ipv6Addr) -> bool {
    address.is_loopback() || address.is_unspecified() || address.to_ipv4_mapped().is_some_and(local_ipv4)
}

#[cfg(test)]
mod tests {
    use super::{local_host_in, other_scheme};

    #[test]
    fn every_spelling_of_this_machine_is_found() {
        for text in [
            "http://127.0.0.1:8080/admin",
            "http://localhost:2375/containers/json",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://[::1]:9200/",
            "http://[::]:80/",
            "http://[::ffff:127.0.0.1]/",
            "http://0.0.0.0:8500/v1/kv/",
            "http://0/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://user:pw@127.0.0.1/",
            "--url=http://127.0.0.2/",
        ] {
            assert!(local_host_in(text, false).is_some(), "{text}");
        }
        for bare in ["localhost:8080/health", "127.0.0.1", "[::1]:80", "0.0.0.0:9000"] {
            assert!(local_host_in(bare, true).is_some(), "{bare}");
            assert_eq!(local_host_in(bare, false), None, "{bare} is only a host where a host is expected");
        }
    }

    #[test]
    fn other_hosts_and_counts_are_not_local() {
        for text in ["https://example.com/", "http://10.0.0.5:9200/", "http://192.168.1.1/", "3", "0", "out.html"] {
            assert_eq!(local_host_in(text, true), None, "{text}");
        }
    }

    #[test]
    fn monitoring_probes_are_told_apart() {
        use super::is_probe;
        for text in ["http://localhost:8080/health", "localhost:9100/metrics", "http://127.0.0.1/actuator/health/"] {
            assert!(is_probe(text), "{text}");
        }
        for text in ["http://localhost:2375/containers/json", "http://localhost/", "http://x/health?x=1", "localhost"] {
            assert!(!is_probe(text), "{text}");
        }
    }

    #[test]
    fn schemes_other_than_http_are_named() {
        assert_eq!(other_scheme("gopher://127.0.0.1:6379/_INFO").as_deref(), Some("gopher"));
        assert_eq!(other_scheme("--url=FILE:///etc/passwd").as_deref(), Some("file"));
        assert_eq!(other_scheme("dict://x/").as_deref(), Some("dict"));
        assert_eq!(other_scheme("https://example.com"), None);
        assert_eq!(other_scheme("HTTP://example.com"), None);
        assert_eq!(other_scheme("example.com"), None);
    }
}
