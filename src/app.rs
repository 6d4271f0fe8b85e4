//! The dispatcher: a parsed command line to the mode (`modes`) or admin command (`cmd`) that
//! handles it.

use std::io::Write;

use crate::cli::{Cli, Command, PolicyCommand};
use crate::home::Paths;
use crate::{cmd, modes};

/// Runs one CLI invocation and returns its exit code.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Some(Command::Init(args)) => cmd::init::run(&args),
        Some(Command::Completions(args)) => cmd::init::completions(args.shell),
        Some(Command::Man(args)) => cmd::man::run(&args),
        Some(Command::Sandbox(args)) if args.status => match &args.ssh_host {
            Some(host) => cmd::sandbox::remote_status(&Paths::from_env()?, host),
            None => crate::sandbox::status_command(),
        },
        Some(Command::Sandbox(args)) => match args.bench {
            Some(runs) => crate::sandbox::bench_command(&args.command, runs),
            None => crate::sandbox::run_command(&args.command),
        },
        Some(Command::Policy(PolicyCommand::Check(args))) => cmd::policy::check(&Paths::from_env()?, &args),
        Some(Command::Config(command)) => cmd::config::run(&Paths::from_env()?, &command),
        Some(Command::Audit(args)) => cmd::audit::run(&Paths::from_env()?, &args),
        Some(Command::Sessions(command)) => cmd::sessions::run(&Paths::from_env()?, &command),
        Some(Command::Cache(command)) => cmd::cache::run(&Paths::from_env()?, &command),
        Some(Command::Undo(args)) => cmd::undo::run(&Paths::from_env()?, &args),
        Some(Command::Widget(args)) => modes::widget::run(&Paths::from_env()?, &args),
        Some(Command::Explain(args)) => modes::explain::run(&Paths::from_env()?, &args),
        Some(Command::Doctor(args)) => cmd::doctor::run(&Paths::from_env()?, &args),
        Some(Command::Serve(args)) => modes::serve::run(&Paths::from_env()?, &args),
        None if cli.run.task.is_empty() => {
            if cli.run.json || cli.run.quiet {
                writeln!(std::io::stderr(), "opsai: --json and --quiet need a task: `opsai --json \"TASK\"`")?;
                return Ok(2);
            }
            modes::repl::run(&Paths::from_env()?, &cli.run)
        }
        None => modes::oneshot::run(&Paths::from_env()?, &cli.run),
    }
}
