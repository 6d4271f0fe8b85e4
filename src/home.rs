//! Where opsai keeps its state: `$OPSAI_HOME`, else `~/.opsai`, and the files inside it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum HomeError {
    #[error("neither OPSAI_HOME nor HOME is set; set OPSAI_HOME to a directory opsai may use")]
    Unset,
}

/// Where opsai keeps its state, and the user's own home for `~` in configured paths.
#[derive(Debug, Clone)]
pub struct Paths {
    pub home: PathBuf,
    /// The user's home directory, for `~` in configured paths.
    pub user_home: Option<PathBuf>,
}

impl Paths {
    pub(crate) fn from_env() -> Result<Self, HomeError> {
        let user_home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        if let Some(home) = std::env::var_os("OPSAI_HOME").filter(|h| !h.is_empty()) {
            return Ok(Self { home: PathBuf::from(home), user_home });
        }
        let base = user_home.clone().ok_or(HomeError::Unset)?;
        Ok(Self { home: base.join(".opsai"), user_home })
    }

    pub(crate) fn config_file(&self) -> PathBuf {
        self.home.join("config.json")
    }

    /// The SQLite store of saved conversations.
    pub(crate) fn sessions_db(&self) -> PathBuf {
        self.home.join("sessions.db")
    }

    /// Where the file tools keep the previous content of what they change.
    pub(crate) fn backups_dir(&self) -> PathBuf {
        self.home.join("backups")
    }
}
