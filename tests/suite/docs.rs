//! The README and the `docs/` pages stay true: every link between them (and into the repository)
//! reaches a file and a heading that exist, every `opsai …` example parses with the real command
//! line, and no page refers to a document the repository does not have.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::Parser;
use clap::error::ErrorKind;
use opsai::cli::Cli;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("a docs/ directory")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 5, "the reference lives in docs/: {docs:?}");
    pages.extend(docs);
    pages
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces
/// turned into `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|line| line.strip_prefix('#'))
        .map(|rest| anchor(rest.trim_start_matches('#')))
        .collect()
}

/// `(target)` of every Markdown link `[text](target)` on the page's prose lines.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_link_reaches_a_file_and_a_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = link.split_once('#').map_or((link.as_str(), None), |(f, a)| (f, Some(a)));
            let target = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", page.display()));
                continue;
            }
            if let Some(fragment) = fragment {
                let target_text = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&target_text).contains(fragment) {
                    broken.push(format!("{}: {link} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(checked > 30, "the pages link to each other: {checked} links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_links_every_docs_page_and_stays_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for page in pages().iter().skip(1) {
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(readme.contains(&format!("]({name})")), "README links {name}");
    }
    // Five minutes of reading: the reference belongs in docs/.
    assert!(readme.lines().count() < 150, "README has {} lines", readme.lines().count());
}

/// Every `opsai …` the pages show — a shell line in a code block, or inline code in the prose.
fn examples(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
            if command.starts_with("opsai ") || command == "opsai" {
                found.push(command.to_owned());
            }
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 && (span.starts_with("opsai ") || span == "opsai") {
                found.push(span.to_owned());
            }
        }
    }
    found
}

/// The part of a shown line that is one `opsai` invocation: up to a pipe, `&&`, `;`, a comment or
/// a redirection, whose words parse as the shell would.
fn invocation(example: &str) -> Option<Vec<String>> {
    let words = shell_words::split(example).ok()?;
    let end = words
        .iter()
        .position(|w| {
            matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&" | ">" | ">>" | "<" | "2>&1") || w.starts_with('#')
        })
        .unwrap_or(words.len());
    Some(words[..end].to_vec())
}

/// Shown forms that are a pattern, not a line to type: placeholders in capitals or brackets, an
/// ellipsis, alternatives.
fn is_pattern(example: &str) -> bool {
    example.contains('…')
        || example.contains("...")
        || example.contains(" [")
        || example.contains('<')
        || example.contains('|') && !example.contains(" | ")
        || example.split_whitespace().any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

#[test]
fn every_opsai_example_parses_with_the_real_command_line() {
    let mut failures = Vec::new();
    let mut parsed = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for example in examples(&text) {
            if is_pattern(&example) {
                continue;
            }
            let Some(words) = invocation(&example) else { continue };
            match Cli::try_parse_from(&words) {
                Ok(_) => parsed += 1,
                // A subcommand named in the prose (`opsai policy check` is the checker) exists even
                // when the words alone are not a complete line.
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::DisplayHelp
                            | ErrorKind::DisplayVersion
                            | ErrorKind::MissingRequiredArgument
                            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    ) =>
                {
                    parsed += 1
                }
                Err(e) => failures.push(format!("{}: `{example}`: {}", page.display(), e.kind())),
            }
        }
    }
    assert!(parsed > 40, "the pages show opsai's commands: {parsed} parsed");
    assert!(failures.is_empty(), "examples the real CLI rejects:\n{}", failures.join("\n"));
}

#[test]
fn no_page_refers_to_a_document_outside_the_repository() {
    let outside = ["seed 0", "seeds/", "DESIGN §", "DESIGN.md", "issue 2", "issue 1"];
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in text.lines().enumerate() {
            for word in outside {
                assert!(
                    !line.contains(word),
                    "{}:{}: `{word}` names a document not in the repository: {line}",
                    page.display(),
                    n + 1
                );
            }
        }
    }
}

#[test]
fn every_docs_page_leads_back_to_the_readme() {
    for page in pages().iter().skip(1) {
        let text = std::fs::read_to_string(page).unwrap();
        assert!(text.starts_with("# "), "{} starts with its title", page.display());
        assert!(text.contains("](../README.md)"), "{} links back to the README", page.display());
    }
}
