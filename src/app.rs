//! Composition root: where opsai's files live, and the glue from a parsed CLI to the modules that act.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::cli::{Cli, Command, PolicyCheckArgs, PolicyCommand};
use crate::config::{self, ConfigError};
use crate::policy;
use crate::ui::policy_view;

/// Where opsai keeps its state: `$OPSAI_HOME`, else `~/.opsai`.
#[derive(Debug, Clone)]
pub struct Paths {
    pub home: PathBuf,
}

impl Paths {
    pub fn from_env() -> anyhow::Result<Self> {
        if let Some(home) = std::env::var_os("OPSAI_HOME").filter(|h| !h.is_empty()) {
            return Ok(Self { home: PathBuf::from(home) });
        }
        let user_home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .context("neither OPSAI_HOME nor HOME is set; set OPSAI_HOME to a directory opsai may use")?;
        Ok(Self { home: PathBuf::from(user_home).join(".opsai") })
    }

    pub fn config_file(&self) -> PathBuf {
        self.home.join("config.json")
    }
}

/// Runs one CLI invocation and returns its exit code.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Some(Command::Policy(PolicyCommand::Check(args))) => policy_check(&args),
        None => {
            let mut err = std::io::stderr();
            writeln!(err, "opsai: the agent is not built yet; try `opsai policy check '<command>'`")?;
            Ok(2)
        }
    }
}

fn policy_check(args: &PolicyCheckArgs) -> anyhow::Result<u8> {
    let paths = Paths::from_env()?;
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

/// Exit code for an error that reached the binary's edge (DESIGN §3).
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(|cause| cause.downcast_ref::<ConfigError>().is_some()) {
        return 2;
    }
    1
}

/// A closed stdout (`opsai policy check x | head -0`) is not an error worth a message.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
