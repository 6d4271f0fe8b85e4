//! The concrete host names of an OpenSSH client config: every `Host` name without a wildcard or
//! negation (`*`, `?`, `!` name no one host), `Include`d files followed as ssh follows them.

use std::path::{Path, PathBuf};

use super::error::HostsError;

/// ssh's own limit on nested `Include`s.
const MAX_DEPTH: usize = 16;

/// Host names in `config` in the order written, each once (ssh compares them without case). A
/// missing file has none. `home` expands `~` and locates relative `Include`s (`~/.ssh`).
pub(crate) fn names(config: &Path, home: Option<&Path>) -> Result<Vec<String>, HostsError> {
    let mut out = Vec::new();
    let base = match home {
        Some(home) => home.join(".ssh"),
        None => config.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    read(config, home, &base, 0, &mut out)?;
    let mut seen = std::collections::HashSet::new();
    out.retain(|name: &String| seen.insert(name.to_lowercase()));
    Ok(out)
}

fn read(path: &Path, home: Option<&Path>, base: &Path, depth: usize, out: &mut Vec<String>) -> Result<(), HostsError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => super::error::file_text(&bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) if depth > 0 && error.raw_os_error() == Some(nix::libc::EISDIR) => return Ok(()),
        Err(source) => return Err(HostsError::Unreadable { path: path.to_owned(), source }),
    };
    for (index, line) in text.lines().enumerate() {
        let Some((keyword, args)) = split_keyword(line) else { continue };
        let words =
            words(args).map_err(|message| HostsError::Malformed { path: path.to_owned(), line: index + 1, message })?;
        match keyword.to_ascii_lowercase().as_str() {
            "host" => out.extend(words.into_iter().filter(|w| !w.is_empty() && !w.contains(['*', '?', '!']))),
            "include" if depth < MAX_DEPTH => {
                for word in words {
                    for file in include_paths(&word, home, base) {
                        read(&file, home, base, depth + 1, out)?;
                    }
                }
            }
            "include" => {
                return Err(HostsError::Malformed {
                    path: path.to_owned(),
                    line: index + 1,
                    message: format!("Include nested more than {MAX_DEPTH} deep (a loop?)"),
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// `Keyword args`, `Keyword=args` or `Keyword = args`; `None` for blank lines and comments.
fn split_keyword(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = line.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(line.len());
    let (keyword, rest) = line.split_at(end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    Some((keyword, rest))
}

/// ssh's argument words: whitespace-separated, `"double quotes"` keep spaces.
fn words(args: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = args.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let Some(end) = quoted.find('"') else { return Err("a quote is not closed".into()) };
            out.push(quoted[..end].to_owned());
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if rest[..end].starts_with('#') {
                break;
            }
            out.push(rest[..end].to_owned());
            rest = rest[end..].trim_start();
        }
    }
    Ok(out)
}

/// The files an `Include` word names: `~` expanded, relative to `base`, globs matched and sorted.
fn include_paths(word: &str, home: Option<&Path>, base: &Path) -> Vec<PathBuf> {
    let path = match (word.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(word),
    };
    let path = if path.is_absolute() { path } else { base.join(path) };
    let mut found = vec![PathBuf::from("/")];
    for component in path.components().skip(1) {
        let part = component.as_os_str().to_string_lossy().into_owned();
        let mut next = Vec::new();
        for dir in &found {
            if part.contains(['*', '?', '[']) {
                let Ok(entries) = std::fs::read_dir(dir) else { continue };
                let mut matched: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .filter(|entry| {
                        let name = entry.file_name().to_string_lossy().into_owned();
                        !name.starts_with('.') && super::pattern::glob_matches(&part, &name)
                    })
                    .map(|entry| entry.path())
                    .collect();
                matched.sort();
                next.extend(matched);
            } else {
                next.push(dir.join(&part));
            }
        }
        found = next;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concrete_names_in_order_with_includes_case_and_lists() {
        let home = tempfile::tempdir().unwrap();
        let ssh = home.path().join(".ssh");
        std::fs::create_dir_all(ssh.join("conf.d")).unwrap();
        std::fs::write(
            ssh.join("config"),
            "# mine\nHost web-1 web-2 *.internal !bastion-old\n  HostName 10.0.0.1\nHOST=db-1\n\
             host \"quoted name\" Web-1\nInclude conf.d/*.conf ~/.ssh/extra\nMatch host x\nHost ?.x gw #c\n",
        )
        .unwrap();
        std::fs::write(ssh.join("conf.d/b.conf"), "Host from-b\n").unwrap();
        std::fs::write(ssh.join("conf.d/a.conf"), "Host from-a\nInclude nonexistent\n").unwrap();
        std::fs::write(ssh.join("conf.d/skip.txt"), "Host not-me\n").unwrap();
        std::fs::write(ssh.join("extra"), "  host   extra-1\n").unwrap();
        let names = names(&ssh.join("config"), Some(home.path())).unwrap();
        assert_eq!(names, ["web-1", "web-2", "db-1", "quoted name", "from-a", "from-b", "extra-1", "gw"]);
    }

    #[test]
    fn a_missing_config_has_no_hosts_and_an_include_loop_is_an_error() {
        let home = tempfile::tempdir().unwrap();
        assert!(names(&home.path().join("nope"), Some(home.path())).unwrap().is_empty());
        let config = home.path().join("loop");
        std::fs::write(&config, format!("Host a\nInclude {}\n", config.display())).unwrap();
        let error = names(&config, None).unwrap_err().to_string();
        assert!(error.contains("Include nested"), "{error}");
    }
}
