//! Ops-object analysis (seed 001): what a container, port, process, file or service is.
//!
//! - [`templates`]: built-in templates, placeholder substitution with shell quoting, and the policy
//!   filter (a command that is not Safe after substitution is dropped and reported).
//! - [`generate`]: the request that asks the model for a new type's template, and its reply parser.
//! - [`object`]: type detection and one analysis from template to report; [`collect`] runs the commands.
//! - The cache of generated templates lives in [`crate::store::templates`]; `opsai cache list|clear`
//!   is [`cache_command`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod collect;
pub mod explain;
pub mod generate;
pub mod object;
pub mod templates;

use std::io::Write;

use crate::cli::CacheCommand;
use crate::home::Paths;
use crate::store::templates::{TemplateCache, default_path};

pub fn cache_command(paths: &Paths, command: &CacheCommand) -> anyhow::Result<u8> {
    let (mut cache, warning) = TemplateCache::load(&default_path(&paths.home))?;
    if let Some(warning) = warning {
        let _ = writeln!(std::io::stderr(), "opsai: warning: {warning}");
    }
    let mut out = std::io::stdout().lock();
    match command {
        CacheCommand::List => {
            if cache.templates.is_empty() {
                let _ = writeln!(std::io::stderr(), "opsai: no cached templates ({})", cache.path().display());
            }
            for (kind, template) in &cache.templates {
                writeln!(out, "{kind}  (created {}, used {} times)", template.created_at, template.hit_count)?;
                for command in &template.commands {
                    writeln!(out, "    {command}")?;
                }
            }
        }
        CacheCommand::Clear => {
            let count = cache.templates.len();
            cache.clear();
            cache.save()?;
            writeln!(out, "cleared {count} cached template{}", if count == 1 { "" } else { "s" })?;
        }
    }
    out.flush()?;
    Ok(0)
}
