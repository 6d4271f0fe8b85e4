//! Directories as the REPL's `cd` reads them and its prompt shows them, and the clock for `/sessions`.

use std::path::{Path, PathBuf};

/// `~`, `~/x`, absolute, or relative to the current directory.
pub(super) fn resolve_dir(cwd: &Path, dir: &str, user_home: Option<&Path>) -> PathBuf {
    match (dir.strip_prefix('~'), user_home) {
        (Some(""), Some(home)) => home.to_owned(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => cwd.join(dir),
    }
}

/// The directory with the home directory written as `~`.
pub(super) fn display_dir(dir: &Path, user_home: Option<&Path>) -> String {
    match user_home.and_then(|home| dir.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_resolve_like_a_shell_and_show_home_as_tilde() {
        let home = Path::new("/home/ana");
        assert_eq!(resolve_dir(Path::new("/srv"), "~", Some(home)), PathBuf::from("/home/ana"));
        assert_eq!(resolve_dir(Path::new("/srv"), "~/src", Some(home)), PathBuf::from("/home/ana/src"));
        assert_eq!(resolve_dir(Path::new("/srv"), "app", Some(home)), PathBuf::from("/srv/app"));
        assert_eq!(resolve_dir(Path::new("/srv"), "/tmp", Some(home)), PathBuf::from("/tmp"));
        assert_eq!(display_dir(Path::new("/home/ana/src"), Some(home)), "~/src");
        assert_eq!(display_dir(Path::new("/home/ana"), Some(home)), "~");
        assert_eq!(display_dir(Path::new("/home/anabel"), Some(home)), "/home/anabel");
    }
}
