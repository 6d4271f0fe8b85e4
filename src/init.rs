//! `opsai init <shell>` and `opsai completions <shell>`.

use crate::cli::{InitArgs, Shell};

pub fn run(_args: &InitArgs) -> anyhow::Result<u8> {
    anyhow::bail!("opsai init is being built")
}

pub fn completions(_shell: Shell) -> anyhow::Result<u8> {
    anyhow::bail!("opsai completions is being built")
}
