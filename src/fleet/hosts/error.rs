//! What can go wrong choosing hosts, each worded so the user knows what to change.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum HostsError {
    #[error("no host matches `{term}`{within}: read {sources}{near}")]
    NoMatch { term: String, within: String, sources: String, near: String },

    #[error("the host pattern `{pattern}` is not valid: {reason}")]
    BadPattern { pattern: String, reason: String },

    #[error("no host source was given: pass an inventory, an ssh config with `Host` entries or a file of host names")]
    NoSources,

    #[error("cannot read {}: {source}; check the path and its permissions", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },

    #[error("{}:{line}: {message}", path.display())]
    Malformed { path: PathBuf, line: usize, message: String },

    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },

    #[error(
        "`{program} -i {inventory} --list` failed ({status}): {stderr}\nThe built-in static reader was not \
         used because ansible-inventory is installed and is what Ansible itself would read; a dynamic \
         inventory the static reader cannot read must not be replaced by a partial one. Fix the inventory \
         (or run the command above to see the whole error)."
    )]
    AnsibleFailed { program: String, inventory: String, status: String, stderr: String },

    #[error("host {host}: {message}")]
    HostVars { host: String, message: String },
}

/// Renders byte output for a message: lossy UTF-8, trimmed, at most `max` characters.
pub(crate) fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// A file's text as the readers take it: lossy UTF-8 without a leading byte-order mark.
pub(crate) fn file_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.strip_prefix('\u{feff}').unwrap_or(&text).to_owned()
}
