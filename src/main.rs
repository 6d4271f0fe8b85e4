//! The binary's edge: parse the CLI, run the app, print one error line, pick the exit code.

use std::process::ExitCode;

use clap::Parser;
use opsai::{app, cli::Cli, exit};

fn main() -> ExitCode {
    // The sandbox helper re-executes opsai: it must run before anything starts a thread or reads
    // the config, and it never returns when the command starts (it `exec`s it).
    if let Some(code) = opsai::sandbox::entry_from_args() {
        return code;
    }
    // The detached docker probe is opsai re-executed too (see context::docker).
    if let Some(code) = opsai::context::docker::entry_from_args() {
        return code;
    }
    let cli = Cli::parse();
    let result = app::run(cli);
    opsai::sandbox::close();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if exit::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("opsai: {err:#}");
            ExitCode::from(exit::code_for(&err))
        }
    }
}
