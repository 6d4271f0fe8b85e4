//! The command-line contract (DESIGN §3), as clap derive types. Parsing only: no behaviour here.

use clap::{Args, Parser, Subcommand};

/// opsai — turns intent into the right shell command, safely.
#[derive(Debug, Parser)]
#[command(name = "opsai", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect the command risk policy; nothing runs.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Show how risky a shell command is and why (a command starting with `-` goes after `--`).
    Check(PolicyCheckArgs),
}

#[derive(Debug, Args)]
pub struct PolicyCheckArgs {
    /// Print the assessment as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The command line to assess, exactly as it would be typed (quote it). Words after the first
    /// are taken as part of it, so `opsai policy check rm -rf /` works unquoted.
    #[arg(required = true, num_args = 1.., value_name = "COMMAND", trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}
