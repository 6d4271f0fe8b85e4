//! Backups of files the file tools changed: `$OPSAI_HOME/backups/<session>/<timestamp>/<path>`,
//! and the record `opsai undo` and `/undo` use to restore the last change of a session.

use std::path::PathBuf;

/// The backup store under `$OPSAI_HOME/backups`.
#[derive(Debug, Clone)]
pub struct Backups {
    root: PathBuf,
}

impl Backups {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    pub fn root(&self) -> &std::path::Path {
        &self.root
    }
}
