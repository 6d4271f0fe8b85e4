//! Ops-object analysis (seed 001): what a container, port, process, file or service is.

use crate::app::Paths;
use crate::cli::CacheCommand;

pub fn cache_command(_paths: &Paths, _command: &CacheCommand) -> anyhow::Result<u8> {
    anyhow::bail!("opsai cache is being built")
}
