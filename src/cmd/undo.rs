//! `opsai undo [--session ID] [--force]`: the last file-tool change restored (`crate::undo`).

use std::io::Write;
use std::sync::Arc;

use crate::cli::UndoArgs;
use crate::exec::fs::LocalFs;
use crate::home::Paths;
use crate::store::backups::Backups;
use crate::undo::{Undo, Undone};

/// `opsai undo`: the result on stdout; nothing to undo, a refusal or a failure is exit 1.
pub fn run(paths: &Paths, args: &UndoArgs) -> anyhow::Result<u8> {
    let config = crate::runner::load_config_without_key(paths)?;
    let redactor = Arc::new(crate::redact::Redactor::from_process_env());
    let audit = crate::runner::audit_log(&config, paths, redactor);
    let backups = Backups::new(paths.backups_dir());
    let undo = Undo {
        backups: &backups,
        audit: &audit,
        ssh: &config.ssh,
        control_dir: paths.ssh_control_dir(),
        force: args.force,
        input: "opsai undo",
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    match runtime.block_on(undo.last(args.session.as_deref(), &LocalFs, None)) {
        Ok(done @ (Undone::Restored { .. } | Undone::Removed { .. })) => {
            writeln!(std::io::stdout(), "{done}")?;
            Ok(0)
        }
        Ok(nothing) => {
            crate::modes::common::warn(&nothing.to_string());
            Ok(1)
        }
        Err(error) => {
            crate::modes::common::warn(&error.to_string());
            Ok(1)
        }
    }
}
