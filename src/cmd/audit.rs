//! `opsai audit [--tail N] [--grep PATTERN] [--database URL]`: the last lines of the audit log, or
//! of the audit table `opsai serve --database URL` copies its lines to.

use std::io::Write;
use std::sync::Arc;

use crate::cli::AuditArgs;
use crate::home::Paths;
use crate::redact::Redactor;
use crate::store::audit::AuditTable;
use crate::store::database::DatabaseUrl;

pub fn run(paths: &Paths, args: &AuditArgs) -> anyhow::Result<u8> {
    let lines = match &args.database {
        Some(text) => {
            let url = match DatabaseUrl::parse(text) {
                Ok(url) => url,
                Err(err) => {
                    crate::modes::common::warn(&err.to_string());
                    return Ok(2);
                }
            };
            AuditTable::open(&url)?.lines(args.grep.as_deref(), args.tail)?
        }
        None => {
            let (config, _) = crate::config::Config::load_or_create(&paths.home)?;
            let log = crate::runner::audit_log(&config, paths, Arc::new(Redactor::from_process_env()));
            match &args.grep {
                Some(pattern) => log.grep(pattern, args.tail)?,
                None => log.tail(args.tail)?,
            }
        }
    };
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(0)
}
