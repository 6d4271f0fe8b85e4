//! `opsai man [--dir DIR]`: the man pages, generated from the same clap definition as `--help`, so
//! they cannot drift from it. The release script and the Debian package call it on the binary they
//! just built (packaging/assets.sh); it is hidden from `--help` because users read the pages, not
//! make them.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};

/// The manual section: user commands.
const SECTION: &str = "1";

pub fn run(args: &ManArgs) -> anyhow::Result<u8> {
    let pages = pages()?;
    let Some(dir) = &args.dir else {
        // The top page only: `opsai man | man -l -` reads it without installing anything.
        let Some((_, top)) = pages.first() else { anyhow::bail!("no man page was generated") };
        std::io::stdout().lock().write_all(top)?;
        return Ok(0);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = std::io::stdout().lock();
    for (name, page) in &pages {
        let path = dir.join(name);
        write_page(&path, page)?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(0)
}

/// Every page as (file name, roff): `opsai.1` first, then one per visible subcommand at any depth
/// (`opsai-config.1`, `opsai-config-show.1`), as git and cargo name theirs.
pub fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut command = Cli::command().disable_help_subcommand(true);
    // Built, clap names each subcommand `opsai-config` (display name, the page's title and file)
    // and `opsai config` (bin name, its synopsis).
    command.build();
    let mut pages = Vec::new();
    collect(&command, &mut pages)?;
    Ok(pages)
}

fn collect(command: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
    let man = clap_mangen::Man::new(command.clone())
        .section(SECTION)
        .source(format!("opsai {}", env!("CARGO_PKG_VERSION")))
        .manual("opsai manual");
    let mut roff = Vec::new();
    man.render(&mut roff).with_context(|| format!("cannot render the man page of {}", command.get_name()))?;
    pages.push((man.get_filename(), roff));
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        collect(sub, pages)?;
    }
    Ok(())
}

/// Each page replaced whole (a reader never sees half of one), as every file opsai writes.
fn write_page(path: &Path, page: &[u8]) -> anyhow::Result<()> {
    crate::exec::fs::LocalFs::replace_now(path, page).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_per_visible_subcommand_and_none_for_hidden_ones() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names.first(), Some(&"opsai.1"));
        for expected in ["opsai-config.1", "opsai-config-show.1", "opsai-serve-user-add.1", "opsai-init.1"] {
            assert!(names.contains(&expected), "{expected} missing from {names:?}");
        }
        assert!(!names.iter().any(|name| name.starts_with("opsai-man") || name.contains("help")), "{names:?}");
    }

    #[test]
    fn pages_name_their_command_in_the_title_and_synopsis() {
        let pages = pages().unwrap();
        let (_, page) = pages.iter().find(|(name, _)| name == "opsai-config-show.1").unwrap();
        let page = String::from_utf8_lossy(page);
        assert!(page.contains(".TH opsai-config-show 1"), "{page}");
        assert!(page.contains("opsai config show"), "{page}");
    }
}
