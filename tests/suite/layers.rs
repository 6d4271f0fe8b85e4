//! The top-level modules import each other without cycles (issue 14): each `crate::X` a module's
//! non-test code names is an edge, and the graph must be acyclic, so no lower floor reaches back up
//! into the modes, the seam builder or the dispatcher.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Non-test code of a file: test files are skipped, a trailing `#[cfg(test)] mod tests` is cut.
fn production_text(relative: &str, text: &str) -> Option<String> {
    let name = relative.rsplit('/').next().unwrap_or(relative);
    if name == "tests.rs" || name.ends_with("_tests.rs") || relative.contains("/tests/") {
        return None;
    }
    let cut = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    Some(text[..cut].to_owned())
}

/// `crate::x` and `crate::{x, y::…}` references.
fn referenced(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect::<String>();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            found.extend(inner.split(',').map(|part| ident(part.trim())).filter(|m| !m.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let top = relative.split('/').next().unwrap().trim_end_matches(".rs").to_owned();
        let Some(text) = production_text(&relative, &std::fs::read_to_string(&file).unwrap()) else { continue };
        let edges = graph.entry(top.clone()).or_default();
        edges.extend(referenced(&text).into_iter().filter(|m| *m != top));
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for edges in graph.values_mut() {
        edges.retain(|m| modules.contains(m));
    }
    graph
}

/// A cycle through `start`, if there is one (depth-first search for a path back to it).
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in &graph[&node] {
            if next == start {
                let mut cycle = path;
                cycle.push(start.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = module_graph();
    assert!(graph.len() > 20, "the module graph was not read: {graph:?}");
    let cycles: Vec<String> =
        graph.keys().filter_map(|module| cycle_through(&graph, module)).map(|cycle| cycle.join(" -> ")).collect();
    assert!(cycles.is_empty(), "import cycles between top-level modules:\n{}", cycles.join("\n"));
}

#[test]
fn the_lower_floors_never_import_the_modes_the_commands_or_the_seam_builder() {
    let graph = module_graph();
    let top = ["app", "cmd", "modes", "runner", "cli"];
    for (module, edges) in &graph {
        if top.contains(&module.as_str()) || module == "lib" || module == "main" {
            continue;
        }
        let up: Vec<&String> = edges.iter().filter(|m| top.contains(&m.as_str())).collect();
        assert!(up.is_empty(), "{module} imports {up:?}");
    }
}

#[test]
fn the_cycle_check_sees_a_cycle_when_there_is_one() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    graph.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(cycle_through(&graph, "a"), Some(vec!["a".into(), "b".into(), "a".into()]));
    assert_eq!(
        referenced("use crate::{agent::Agent, tools};\ncrate::ui::x"),
        BTreeSet::from(["agent".into(), "tools".into(), "ui".into()])
    );
}
