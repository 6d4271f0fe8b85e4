//! Where opsai keeps its files. One directory when `OPSAI_HOME` is set, or when `~/.opsai` exists
//! (everything in it, as before XDG); otherwise the XDG base directories: the configuration in
//! `$XDG_CONFIG_HOME/opsai`, conversations, backups and history in `$XDG_DATA_HOME/opsai`, the audit
//! and widget logs and ssh sockets in `$XDG_STATE_HOME/opsai`, caches in `$XDG_CACHE_HOME/opsai`
//! (defaults `~/.config`, `~/.local/share`, `~/.local/state`, `~/.cache`). Every path opsai uses
//! comes from a method here.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub(crate) enum HomeError {
    #[error("neither OPSAI_HOME nor HOME is set; set OPSAI_HOME to a directory opsai may use")]
    Unset,
}

/// How the directories were chosen, for `opsai config path --all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `$OPSAI_HOME`: everything in one directory.
    OpsaiHome,
    /// `~/.opsai` exists: everything stays in it.
    Legacy,
    /// The XDG base directories.
    Xdg,
}

/// Where opsai keeps its files, and the user's own home for `~` in configured paths.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The configuration directory (`config.json`, `serve-users.json`); the one directory of the
    /// one-directory layouts.
    pub home: PathBuf,
    /// The user's home directory, for `~` in configured paths.
    pub user_home: Option<PathBuf>,
    data: PathBuf,
    state: PathBuf,
    cache: PathBuf,
    layout: Layout,
}

impl Paths {
    pub(crate) fn from_env() -> Result<Self, HomeError> {
        Self::from_lookup(|name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from))
    }

    fn from_lookup(var: impl Fn(&str) -> Option<PathBuf>) -> Result<Self, HomeError> {
        let user_home = var("HOME");
        if let Some(home) = var("OPSAI_HOME") {
            return Ok(Self::one_dir(home, user_home, Layout::OpsaiHome));
        }
        let base = user_home.clone().ok_or(HomeError::Unset)?;
        let legacy = base.join(".opsai");
        if legacy.exists() {
            return Ok(Self::one_dir(legacy, user_home, Layout::Legacy));
        }
        // The spec: a relative value is invalid and is ignored.
        let xdg = |name: &str, default: &str| {
            var(name).filter(|dir| dir.is_absolute()).unwrap_or_else(|| base.join(default)).join("opsai")
        };
        Ok(Self {
            home: xdg("XDG_CONFIG_HOME", ".config"),
            data: xdg("XDG_DATA_HOME", ".local/share"),
            state: xdg("XDG_STATE_HOME", ".local/state"),
            cache: xdg("XDG_CACHE_HOME", ".cache"),
            user_home,
            layout: Layout::Xdg,
        })
    }

    /// Everything in `home` (caches in `home/cache`), as `OPSAI_HOME` lays it out.
    pub fn one_dir(home: PathBuf, user_home: Option<PathBuf>, layout: Layout) -> Self {
        Self { data: home.clone(), state: home.clone(), cache: home.join("cache"), home, user_home, layout }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub(crate) fn config_file(&self) -> PathBuf {
        self.home.join("config.json")
    }

    /// Conversations, backups, history.
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// The audit log's default place, the widget log, ssh control sockets.
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// What can be recomputed: the docker probe, tool-mode findings, analyze templates, the
    /// sandbox's view.
    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    /// The SQLite store of saved conversations.
    pub(crate) fn sessions_db(&self) -> PathBuf {
        self.data.join("sessions.db")
    }

    /// Where the file tools keep the previous content of what they change.
    pub(crate) fn backups_dir(&self) -> PathBuf {
        self.data.join("backups")
    }

    /// The REPL's line history.
    pub(crate) fn history_file(&self) -> PathBuf {
        self.data.join("history")
    }

    /// The directory of ssh's shared-connection sockets.
    pub(crate) fn ssh_control_dir(&self) -> PathBuf {
        self.state.join("ssh")
    }

    /// Every directory that holds opsai's own files (what the sandbox hides), without repeats.
    pub fn private_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in [&self.home, &self.data, &self.state, &self.cache] {
            if !dirs.iter().any(|known| dir.starts_with(known)) {
                dirs.push(dir.clone());
            }
        }
        dirs
    }

    /// Creates the data and state directories (mode 0700, parents too) so stores and logs can be
    /// opened, and tries the cache directory; the config directory is created by what writes it.
    pub(crate) fn create_dirs(&self) -> std::io::Result<()> {
        for dir in [&self.data, &self.state] {
            create_private_dir(dir)?;
        }
        // The cache only saves work: a home where it cannot be made (read-only) still runs, and
        // each cache writer tries again. Made here first, it is private like the others.
        let _ = create_private_dir(&self.cache);
        Ok(())
    }

    /// `opsai config path --all`: the layout, one `name: path` line each.
    pub fn describe(&self) -> String {
        let how = match self.layout {
            Layout::OpsaiHome => "OPSAI_HOME (one directory)",
            Layout::Legacy => "~/.opsai exists (one directory)",
            Layout::Xdg => "XDG base directories",
        };
        format!(
            "layout: {how}\nconfig: {}\ndata: {}\nstate: {}\ncache: {}\n",
            self.home.display(),
            self.data.display(),
            self.state.display(),
            self.cache.display()
        )
    }
}

/// Creates `dir` and its missing parents with mode 0700: opsai's directories are its user's alone.
pub(crate) fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn lookup(vars: Vec<(&'static str, PathBuf)>) -> impl Fn(&str) -> Option<PathBuf> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn opsai_home_wins_then_an_existing_dot_opsai_then_xdg() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().to_owned();
        let paths = Paths::from_lookup(lookup(vec![("HOME", h.clone()), ("OPSAI_HOME", h.join("o"))])).unwrap();
        assert_eq!((paths.layout(), paths.sessions_db()), (Layout::OpsaiHome, h.join("o/sessions.db")));
        assert_eq!(paths.cache_dir(), h.join("o/cache"));
        assert_eq!(paths.private_dirs(), [h.join("o")]);

        let paths = Paths::from_lookup(lookup(vec![("HOME", h.clone())])).unwrap();
        assert_eq!(paths.layout(), Layout::Xdg);
        assert_eq!(paths.config_file(), h.join(".config/opsai/config.json"));
        assert_eq!(paths.sessions_db(), h.join(".local/share/opsai/sessions.db"));
        assert_eq!(paths.ssh_control_dir(), h.join(".local/state/opsai/ssh"));
        assert_eq!(paths.cache_dir(), h.join(".cache/opsai"));
        assert_eq!(paths.private_dirs().len(), 4);

        let vars = vec![("HOME", h.clone()), ("XDG_DATA_HOME", h.join("d")), ("XDG_CACHE_HOME", PathBuf::from("rel"))];
        let paths = Paths::from_lookup(lookup(vars)).unwrap();
        assert_eq!(paths.data_dir(), h.join("d/opsai"));
        assert_eq!(paths.cache_dir(), h.join(".cache/opsai"), "a relative XDG value is ignored");

        std::fs::create_dir(h.join(".opsai")).unwrap();
        let paths = Paths::from_lookup(lookup(vec![("HOME", h.clone()), ("XDG_DATA_HOME", h.join("d"))])).unwrap();
        assert_eq!((paths.layout(), paths.sessions_db()), (Layout::Legacy, h.join(".opsai/sessions.db")));
    }
}
