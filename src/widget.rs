//! `opsai widget`: one Ctrl-G request.

use crate::app::Paths;
use crate::cli::WidgetArgs;

pub fn run(_paths: &Paths, _args: &WidgetArgs) -> anyhow::Result<u8> {
    anyhow::bail!("opsai widget is being built")
}
