//! `opsai cache list|clear`: the templates the model wrote for new object types
//! (`crate::store::templates`).

use std::io::Write;

use crate::cli::CacheCommand;
use crate::home::Paths;
use crate::store::templates::{TemplateCache, default_path};

pub fn run(paths: &Paths, command: &CacheCommand) -> anyhow::Result<u8> {
    let (mut cache, warning) = TemplateCache::load(&default_path(paths.cache_dir()))?;
    if let Some(warning) = warning {
        crate::modes::common::warn(&format!("warning: {warning}"));
    }
    let mut out = std::io::stdout().lock();
    match command {
        CacheCommand::List => {
            if cache.templates.is_empty() {
                crate::modes::common::warn(&format!("no cached templates ({})", cache.path().display()));
            }
            for (kind, template) in &cache.templates {
                // The type name and the commands may be the model's: through the screen gate.
                let kind = crate::ui::display::line(kind);
                writeln!(out, "{kind}  (created {}, used {} times)", template.created_at, template.hit_count)?;
                for command in &template.commands {
                    writeln!(out, "    {}", crate::ui::display::command(command))?;
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
