//! Cloud instance metadata services in any spelling: they hand out credentials to whatever asks
//! from inside the instance, so naming one is never Safe. IPv4 is read the way `inet_aton` (and so
//! curl and most resolvers) reads it: `2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376` and
//! `169.254.43518` are all 169.254.169.254; IPv6 forms that map or embed an IPv4 address count too.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Host names that resolve to a metadata service from inside an instance.
const HOSTS: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.com",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
];

/// The first metadata address found in `text` (a URL, `host:port`, `user@host`, a bare address).
/// `host_position` says the text is an address wherever it sits (a network client's argument):
/// only then do a bare `metadata` or a lone number count, which elsewhere are ordinary words.
pub(crate) fn address_in(text: &str, host_position: bool) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    // The host part of each URL is a host whatever it looks like.
    let in_urls = lower.split("://").skip(1).find_map(|rest| {
        let authority = rest.split(['/', '?', '#', ' ', '\'', '"']).next().unwrap_or(rest);
        let host = authority.rsplit('@').next().unwrap_or(authority);
        host_of(host, true)
    });
    in_urls.or_else(|| {
        lower
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '[' | ']' | '%' | '_')))
            .filter(|token| !token.is_empty())
            .find_map(|token| host_of(token, host_position && !lower.contains("://")))
    })
}

fn host_of(token: &str, loose: bool) -> Option<String> {
    // `[::ffff:a9fe:a9fe]:80`, `[fd00:ec2::254]`
    if let Some(inner) = token.strip_prefix('[') {
        let inner = inner.split(']').next().unwrap_or(inner);
        return ipv6(inner).then(|| inner.to_owned());
    }
    if ipv6(token) {
        return Some(token.to_owned());
    }
    // `host:port` or `scheme:` leftovers.
    let host = token.split(':').next().unwrap_or(token).trim_end_matches('.');
    if HOSTS.contains(&host) && (loose || host.contains('.')) {
        return Some(host.to_owned());
    }
    if !loose && !host.contains('.') {
        return None;
    }
    let address = inet_aton(host)?;
    metadata_ipv4(address).then(|| host.to_owned())
}

fn metadata_ipv4(address: Ipv4Addr) -> bool {
    // All of 169.254/16 (AWS, GCP, Azure, OCI at .169.254; ECS task credentials at .170.2 and .170.23)
    // and Alibaba's 100.100.100.200.
    address.is_link_local() || address == Ipv4Addr::new(100, 100, 100, 200)
}

fn ipv6(text: &str) -> bool {
    let text = text.split('%').next().unwrap_or(text);
    let Ok(address) = text.parse::<Ipv6Addr>() else { return false };
    let segments = address.segments();
    // AWS's IPv6 endpoints (fd00:ec2::254 for IMDS, fd00:ec2::23 for ECS).
    if segments[0] == 0xfd00 && segments[1] == 0x0ec2 {
        return true;
    }
    let embedded = address.to_ipv4_mapped().or_else(|| {
        // ::a9fe:a9fe (IPv4-compatible) and 64:ff9b::a9fe:a9fe (NAT64) carry the address in the low bits.
        let high_zero = segments[..6].iter().all(|s| *s == 0);
        let nat64 = segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
        (high_zero || nat64).then(|| Ipv4Addr::from(u32::from(segments[6]) << 16 | u32::from(segments[7])))
    });
    embedded.is_some_and(metadata_ipv4)
}

/// `inet_aton`: one to four parts, each decimal, octal (`0…`) or hex (`0x…`); the last part
/// fills the remaining bytes.
pub(super) fn inet_aton(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let numbers: Vec<u64> = parts.iter().map(|p| number(p)).collect::<Option<_>>()?;
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|n| *n > 255) {
        return None;
    }
    let free_bits = 8 * (4 - leading.len() as u32);
    if *last >= 1u64 << free_bits {
        return None;
    }
    let mut value: u64 = 0;
    for n in leading {
        value = (value << 8) | n;
    }
    let value = (value << free_bits) | last;
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

fn number(part: &str) -> Option<u64> {
    if let Some(hex) = part.strip_prefix("0x") {
        return if hex.is_empty() { Some(0) } else { u64::from_str_radix(hex, 16).ok() };
    }
    if part.len() > 1
        && let Some(octal) = part.strip_prefix('0')
    {
        return u64::from_str_radix(octal, 8).ok();
    }
    part.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::address_in;

    #[test]
    fn every_spelling_of_the_metadata_service_is_found() {
        for text in [
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "http://2852039166/",
            "http://0xa9fea9fe/",
            "http://0xA9.0xFE.0xA9.0xFE/",
            "http://0251.0376.0251.0376/",
            "http://169.254.43518/",
            "http://169.16689662/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]:80/",
            "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
            "http://[::a9fe:a9fe]/",
            "http://[fd00:ec2::254]/latest",
            "http://169.254.170.2/v2/credentials",
            "http://100.100.100.200/latest/meta-data",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.GOOGLE.INTERNAL./",
            "http://metadata/computeMetadata/v1/",
            "user@169.254.169.254:80",
            "--url=http://instance-data/latest",
        ] {
            assert!(address_in(text, false).is_some(), "{text}");
        }
    }

    #[test]
    fn ordinary_addresses_and_words_are_not_metadata() {
        for text in [
            "http://10.0.0.1/",
            "https://example.com/metadata",
            "metadata.json",
            "192.168.1.1",
            "::1",
            "http://[2001:db8::1]/",
            "1.2.3",
            "169.255.0.1",
            "--metadata-file",
            "0x",
            "08",
        ] {
            assert_eq!(address_in(text, false), None, "{text}");
        }
        assert_eq!(address_in("metadata", false), None, "`grep metadata` names a word");
        assert!(address_in("metadata", true).is_some(), "`curl metadata` names a host");
        assert!(address_in("2852039166", true).is_some());
        assert_eq!(address_in("2852039166", false), None);
    }
}
