//! A plain file of host names: one per line (`[user@]name[:port]`, ranges allowed), `#` comments.

use std::path::Path;

use super::error::HostsError;
use super::range;
use crate::fleet::Host;

pub(crate) fn read(path: &Path) -> Result<Vec<Host>, HostsError> {
    let bytes = std::fs::read(path).map_err(|source| HostsError::Unreadable { path: path.to_owned(), source })?;
    let text = super::error::file_text(&bytes);
    let mut hosts = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let fail = |message: String| HostsError::Malformed { path: path.to_owned(), line: index + 1, message };
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        if line.contains(char::is_whitespace) {
            return Err(fail(format!("`{line}` is more than one name: write one host per line")));
        }
        let (user, rest) = match line.split_once('@') {
            Some((user, rest)) if !user.is_empty() => (Some(user.to_owned()), rest),
            Some(_) => return Err(fail(format!("`{line}` has an empty user before @"))),
            None => (None, line),
        };
        let (pattern, port) = range::split_port(rest).map_err(fail)?;
        for name in range::expand(&pattern).map_err(fail)? {
            hosts.push(Host { user: user.clone(), port, ..Host::named(&name) });
        }
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_users_ports_ranges_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        std::fs::write(&file, "# fleet\nweb-1\n\n  ops@db-1:2222  # primary\nnode[1:2]\n").unwrap();
        let hosts = read(&file).unwrap();
        let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["web-1", "db-1", "node1", "node2"]);
        assert_eq!((hosts[1].user.as_deref(), hosts[1].port), (Some("ops"), Some(2222)));
        std::fs::write(&file, "ok\nweb-1 web-2\n").unwrap();
        assert_eq!(
            read(&file).unwrap_err().to_string(),
            format!("{}:2: `web-1 web-2` is more than one name: write one host per line", file.display())
        );
    }
}
