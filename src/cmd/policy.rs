//! `opsai policy check CMD`: the policy's verdict on a command, without running it.

use std::io::Write;

use crate::cli::PolicyCheckArgs;
use crate::config;
use crate::home::Paths;
use crate::policy;
use crate::ui::policy_view;

pub fn check(paths: &Paths, args: &PolicyCheckArgs) -> anyhow::Result<u8> {
    let rules = config::load_policy(&paths.config_file())?;
    let command = args.command.join(" ");
    let assessment = policy::assess(&command, &rules);
    let mut out = anstream::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &assessment)?;
        writeln!(out)?;
    } else {
        policy_view::write(&mut out, &command, &assessment)?;
    }
    out.flush()?;
    Ok(0)
}
