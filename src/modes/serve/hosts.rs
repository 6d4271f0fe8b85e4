//! The `Host` a request names must be this server (DNS rebinding): a page on `evil.example` whose
//! name an attacker points at 127.0.0.1 reaches the port, but its requests say `Host:
//! evil.example`. A rebinding request cannot carry an IP address or `localhost` as its Host (the
//! browser sends the attacker's name), so those are accepted on this server's port; any other name
//! only when given with `--public-host` (a reverse proxy's name).

use std::net::IpAddr;

pub struct Hosts {
    port: u16,
    /// `--public-host` values, lowercase.
    public: Vec<String>,
}

impl Hosts {
    pub fn new(port: u16, public: &[String]) -> Self {
        Self { port, public: public.iter().map(|h| h.to_ascii_lowercase()).collect() }
    }

    /// Whether this `Host` is one of the `--public-host` names (a reverse proxy's).
    pub fn is_public(&self, host: &str) -> bool {
        self.public.contains(&host.to_ascii_lowercase())
    }

    /// Whether a request with this `Host` header value is for this server.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        if self.public.contains(&host) {
            return true;
        }
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) if !port.contains(']') => (name, port.parse::<u16>().ok()),
            _ => (host.as_str(), Some(80)),
        };
        if port != Some(self.port) {
            return false;
        }
        let bare = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
        name == "localhost" || bare.parse::<IpAddr>().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_localhost_on_the_port_and_named_public_hosts_only() {
        let hosts = Hosts::new(8765, &["Chat.Example.com".into(), "ops.example:8443".into()]);
        for ok in
            ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "10.0.0.5:8765", "chat.example.com", "OPS.example:8443"]
        {
            assert!(hosts.allows(ok), "{ok}");
        }
        for refused in
            ["evil.example:8765", "127.0.0.1:8766", "localhost", "chat.example.com:8765", "ops.example", "[::1]", ""]
        {
            assert!(!hosts.allows(refused), "{refused}");
        }
    }
}
