//! `opsai explain`: piped output, a command, or an ops object.

use crate::app::Paths;
use crate::cli::ExplainArgs;

pub fn run(_paths: &Paths, _args: &ExplainArgs) -> anyhow::Result<u8> {
    anyhow::bail!("opsai explain is being built")
}
