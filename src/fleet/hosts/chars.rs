//! Which characters a host name, an address and a user name may hold. They reach ssh as
//! arguments, and ssh puts them into `ProxyCommand`/`Match exec` lines through `%h`/`%r`, which a
//! shell runs: OpenSSH before 9.6 does not check them, so a `$(…)`, `;` or quote from an
//! inventory would run on this machine. Hidden characters would make the name shown differ from
//! the name used.

/// Control, bidirectional, zero-width and other format (Unicode `Cf`) characters.
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control() || crate::policy::is_invisible(c) || is_format(c)
}

/// Unicode `Cf` characters that [`crate::policy::is_invisible`] does not already name.
fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{0600}'..='\u{0605}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08e2}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// A host name or address as ssh connects to it: DNS names, IPv4, IPv6 (`[…]`, `%zone`).
pub(crate) fn is_address(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']' | '%'))
}

/// A remote user name (`name`, `first.last`, `user@DOMAIN`).
pub(crate) fn is_user(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_users_keep_their_real_forms_and_lose_shell_syntax() {
        for good in ["web-1.example.com", "10.0.0.7", "fe80::1%eth0", "[::1]", "db_2"] {
            assert!(is_address(good), "{good}");
        }
        for bad in ["a$(id)", "a`id`", "a;id", "a|id", "a b", "a'b", "a\"b", "-oProxyCommand=x", "", "wéb"] {
            assert!(!is_address(bad), "{bad}");
        }
        for good in ["deploy", "first.last", "svc_ops-1", "admin@CORP.EXAMPLE"] {
            assert!(is_user(good), "{good}");
        }
        for bad in ["$USER", "a`id`", "a;b", "a|b", "a b", "a'b", "a\"b", "a:b", "-l", ""] {
            assert!(!is_user(bad), "{bad}");
        }
    }

    #[test]
    fn format_characters_are_hidden() {
        for c in [
            '\u{202e}', '\u{2067}', '\u{200b}', '\u{200d}', '\u{feff}', '\u{206a}', '\u{fff9}', '\u{0600}', '\u{e0041}',
        ] {
            assert!(is_hidden(c), "U+{:04X}", c as u32);
        }
        for c in ['a', 'é', '-', '中'] {
            assert!(!is_hidden(c), "{c}");
        }
    }
}
