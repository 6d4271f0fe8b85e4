//! `opsai audit [--tail N] [--grep PATTERN]`: the last lines of the audit log.

use std::io::Write;
use std::sync::Arc;

use crate::cli::AuditArgs;
use crate::home::Paths;
use crate::redact::Redactor;

pub fn run(paths: &Paths, args: &AuditArgs) -> anyhow::Result<u8> {
    let (config, _) = crate::config::Config::load_or_create(&paths.home)?;
    let log = crate::runner::audit_log(&config, paths, Arc::new(Redactor::from_process_env()));
    let lines = match &args.grep {
        Some(pattern) => log.grep(pattern, args.tail)?,
        None => log.tail(args.tail)?,
    };
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(0)
}
