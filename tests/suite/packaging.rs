//! The ways opsai is installed, checked cheaply: the man pages `opsai man` writes, what `cargo
//! package` carries, the binstall templates against the names packaging/release.sh gives its
//! tarballs, and the Debian assets against what packaging/assets.sh generates. The heavy end-to-end
//! run (static musl build, tarball, .deb install, `cargo package` build) is packaging/check.sh.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;
use serde_json::Value;

use crate::support::{TestEnv, skipped};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.current_dir(manifest_dir());
    cargo
}

fn stdout_of(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|err| panic!("{command:?}: {err}"));
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// This package as `cargo metadata` reads Cargo.toml.
fn package() -> Value {
    let text = stdout_of(cargo().args(["metadata", "--no-deps", "--offline", "--format-version", "1"]));
    let metadata: Value = serde_json::from_str(&text).unwrap();
    metadata["packages"].as_array().unwrap().iter().find(|p| p["name"] == "opsai").unwrap().clone()
}

fn bin_targets(package: &Value) -> BTreeSet<String> {
    let targets = package["targets"].as_array().unwrap();
    let bins = targets.iter().filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"));
    bins.map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// Every page's file name and the words its synopsis starts with, from the clap definition.
fn expected_pages() -> Vec<(String, String)> {
    fn walk(command: &clap::Command, out: &mut Vec<(String, String)>) {
        let display = command.get_display_name().unwrap_or(command.get_name());
        out.push((format!("{display}.1"), command.get_bin_name().unwrap_or(command.get_name()).to_owned()));
        for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
            walk(sub, out);
        }
    }
    let mut command = opsai::cli::Cli::command().disable_help_subcommand(true);
    command.build();
    let mut out = Vec::new();
    walk(&command, &mut out);
    out
}

#[test]
fn man_dir_writes_a_valid_page_for_every_subcommand_and_nothing_else() {
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let out = env.cmd().args(["man", "--dir"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = expected_pages();
    assert!(expected.len() > 20, "{expected:?}");
    let written: BTreeSet<String> = TestEnv::entries(dir.path()).into_iter().collect();
    let names: BTreeSet<String> = expected.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(written, names);
    // It says what it wrote, one path a line, for scripts.
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), names.len());

    let groff = Command::new("groff").arg("-v").output().is_ok_and(|out| out.status.success());
    if !groff {
        skipped("groff is not installed: the pages are checked for their structure only");
    }
    for (name, synopsis) in &expected {
        let path = dir.path().join(name);
        let page = std::fs::read_to_string(&path).unwrap();
        let title = name.trim_end_matches(".1");
        assert!(page.lines().any(|l| l.starts_with(&format!(".TH {title} 1 "))), "{name}: no .TH\n{page}");
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION"] {
            assert!(page.contains(section), "{name}: no {section}\n{page}");
        }
        let synopsis = synopsis.replace('-', "\\-");
        assert!(page.contains(&format!("\\fB{synopsis}\\fR")), "{name}: synopsis is not `{synopsis}`\n{page}");
        if groff {
            // -k: UTF-8 input through preconv, as man reads it; -ww: every warning; -z: print nothing.
            let out = Command::new("groff").args(["-k", "-man", "-Tutf8", "-ww", "-z"]).arg(&path).output().unwrap();
            assert!(out.status.success() && out.stderr.is_empty(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

#[test]
fn man_without_dir_prints_the_top_page() {
    let out = TestEnv::new().cmd().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH opsai 1 "), "{page}");
    // Its SUBCOMMANDS section points at each subcommand's own page.
    for sub in opsai::cli::Cli::command().get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let reference = format!("opsai\\-{}(1)", sub.get_name());
        assert!(page.contains(&reference), "no {reference} in\n{page}");
    }
}

/// The files `include_str!`/`include_bytes!` in `file` name, relative to the manifest directory.
fn included_by(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut found = Vec::new();
    for macro_name in ["include_str!(\"", "include_bytes!(\""] {
        for (at, _) in text.match_indices(macro_name) {
            let rest = &text[at + macro_name.len()..];
            let Some(end) = rest.find('"') else { continue };
            let mut path = dir.to_path_buf();
            for part in Path::new(&rest[..end]).components() {
                match part {
                    std::path::Component::ParentDir => {
                        path.pop();
                    }
                    other => path.push(other),
                }
            }
            let relative = path.strip_prefix(manifest_dir()).unwrap().to_string_lossy().into_owned();
            found.push(relative);
        }
    }
    found
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files_under(&path, out) } else { out.push(path) }
    }
}

#[test]
fn the_crate_package_carries_what_the_build_reads_and_not_the_repository_around_it() {
    let listed = stdout_of(cargo().args(["package", "--list", "--locked", "--allow-dirty", "--offline"]));
    let listed: BTreeSet<&str> = listed.lines().collect();
    let mut needed: BTreeSet<String> =
        ["Cargo.toml", "Cargo.lock", "README.md", "LICENSE", "src/main.rs", "src/bin/opsai-sandbox-helper.rs"]
            .map(String::from)
            .into();
    let mut sources = Vec::new();
    files_under(&manifest_dir().join("src"), &mut sources);
    for source in &sources {
        needed.insert(source.strip_prefix(manifest_dir()).unwrap().to_string_lossy().into_owned());
        if source.extension().is_some_and(|ext| ext == "rs") {
            needed.extend(included_by(source));
        }
    }
    assert!(needed.contains("shell/opsai.zsh"), "the include_str! scan found nothing: {needed:?}");
    let missing: Vec<&String> = needed.iter().filter(|path| !listed.contains(path.as_str())).collect();
    assert!(missing.is_empty(), "`cargo package` leaves out files the build needs: {missing:?}");

    let outside = ["tests/", "benches/", "fuzz/", ".ci/", "target/", "packaging/", "dist/", "docs/", "completions/"];
    let stray: Vec<&&str> = listed.iter().filter(|path| outside.iter().any(|dir| path.starts_with(dir))).collect();
    assert!(stray.is_empty(), "`cargo package` carries repository-only files: {stray:?}");
    let bench: Vec<&&str> = listed.iter().filter(|path| path.starts_with("bench/")).collect();
    assert_eq!(bench, [&"bench/everyday.txt", &"bench/hostile.txt"], "only the seed lists the unit tests read");
}

/// A binstall template with `{ key }` (or `{key}`) replaced.
fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (key, value) in values {
        out = out.replace(&format!("{{ {key} }}"), value).replace(&format!("{{{key}}}"), value);
    }
    assert!(!out.contains('{'), "unfilled placeholder in {template}: {out}");
    out
}

#[test]
fn binstall_templates_name_the_release_scripts_tarball_and_both_executables() {
    let package = package();
    let binstall = &package["metadata"]["binstall"];
    let target = "x86_64-unknown-linux-musl";
    let layout =
        stdout_of(Command::new("bash").arg(manifest_dir().join("packaging/release.sh")).args(["--layout", target]));
    let mut layout = layout.lines();
    let archive = layout.next().unwrap();
    let inside: BTreeSet<&str> = layout.collect();
    let version = package["version"].as_str().unwrap();
    let repo = "https://example.invalid/opsai";
    let mut values = vec![("name", "opsai"), ("version", version), ("target", target), ("repo", repo)];

    let url = render(binstall["pkg-url"].as_str().unwrap(), &values);
    assert!(url.ends_with(&format!("/{archive}")), "pkg-url {url} does not download {archive}");
    assert_eq!(binstall["pkg-fmt"], "tgz");
    assert!(archive.ends_with(".tar.gz"), "{archive}");

    let bins = bin_targets(&package);
    assert_eq!(bins, ["opsai", "opsai-sandbox-helper"].map(String::from).into());
    values.push(("binary-ext", ""));
    for bin in &bins {
        let mut with_bin = values.clone();
        with_bin.push(("bin", bin));
        let path = render(binstall["bin-dir"].as_str().unwrap(), &with_bin);
        assert!(inside.contains(path.as_str()), "bin-dir {path} is not in the tarball: {inside:?}");
    }
}

#[test]
fn every_deb_asset_is_built_or_generated_by_the_asset_script() {
    let package = package();
    let assets = package["metadata"]["deb"]["assets"].as_array().unwrap();
    let work = tempfile::tempdir().unwrap();
    let generated = work.path().join("assets");
    let out = Command::new("bash")
        .arg(manifest_dir().join("packaging/assets.sh"))
        .arg(env!("CARGO_BIN_EXE_opsai"))
        .arg(&generated)
        .output()
        .unwrap();
    assert!(out.status.success(), "assets.sh: {}", String::from_utf8_lossy(&out.stderr));

    let bins = bin_targets(&package);
    let mut destinations = Vec::new();
    for asset in assets {
        let [source, dest, mode] = [0, 1, 2].map(|i| asset[i].as_str().unwrap());
        destinations.push(dest.to_owned());
        if let Some(bin) = source.strip_prefix("target/release/") {
            assert!(bins.contains(bin), "{source} is not a binary of this package");
            assert_eq!((dest, mode), ("usr/bin/", "755"), "{source}");
        } else if let Some(relative) = source.strip_prefix("target/assets/") {
            let matches: Vec<PathBuf> = match relative.strip_suffix("*.1") {
                Some(dir) => {
                    let dir = generated.join(dir);
                    let pages = TestEnv::entries(&dir).into_iter().filter(|name| name.ends_with(".1"));
                    pages.map(|name| dir.join(name)).collect()
                }
                None => vec![generated.join(relative)].into_iter().filter(|path| path.is_file()).collect(),
            };
            assert!(!matches.is_empty(), "assets.sh did not write {source}");
            assert_eq!(mode, "644", "{source}");
        } else {
            assert!(manifest_dir().join(source).is_file(), "{source} is not in the repository");
        }
    }
    for dest in [
        "usr/share/bash-completion/completions/opsai",
        "usr/share/zsh/vendor-completions/_opsai",
        "usr/share/fish/vendor_completions.d/opsai.fish",
        "usr/share/man/man1/",
        "usr/share/opsai/opsai.zsh",
        "usr/share/opsai/opsai.bash",
        "usr/share/opsai/opsai.fish",
    ] {
        assert!(destinations.iter().any(|d| d == dest), "nothing installs {dest}: {destinations:?}");
    }
    // The widget scripts the .deb installs call the installed opsai, not the one that wrote them.
    for shell in ["zsh", "bash", "fish"] {
        let script = std::fs::read_to_string(generated.join(format!("shell/opsai.{shell}"))).unwrap();
        assert!(script.contains("'/usr/bin/opsai' widget"), "{shell}: {script}");
        assert!(!script.contains(env!("CARGO_BIN_EXE_opsai")), "{shell} names the build's binary");
    }
    let syntax = Command::new("bash").arg("-n").arg(generated.join("shell/opsai.bash")).output().unwrap();
    assert!(syntax.status.success(), "{}", String::from_utf8_lossy(&syntax.stderr));
}

#[test]
fn init_bin_names_the_program_the_widget_runs_and_refuses_an_empty_one() {
    let env = TestEnv::new();
    let out = env.cmd().args(["init", "bash", "--bin", "/opt/my tools/opsai"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("'/opt/my tools/opsai' widget"));
    let out = env.cmd().args(["init", "fish", "--bin", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bin"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_install_page_names_every_path_the_deb_installs_and_the_tarball_name() {
    let page = std::fs::read_to_string(manifest_dir().join("docs/install.md")).unwrap();
    let package = package();
    for asset in package["metadata"]["deb"]["assets"].as_array().unwrap() {
        let (source, dest) = (asset[0].as_str().unwrap(), asset[1].as_str().unwrap());
        // A directory destination keeps the source's file name.
        let path = match dest.strip_suffix('/') {
            Some(dir) if !source.contains('*') => format!("/{dir}/{}", source.rsplit('/').next().unwrap()),
            Some(dir) => format!("/{dir}/"),
            None => format!("/{dest}"),
        };
        let path = if path.starts_with("/usr/share/doc/opsai/") { "/usr/share/doc/opsai/".to_owned() } else { path };
        assert!(page.contains(&format!("`{path}")), "docs/install.md does not say the .deb installs {path}");
    }
    let version = package["version"].as_str().unwrap();
    assert!(page.contains(&format!("opsai-{version}-x86_64-unknown-linux-musl.tar.gz")), "tarball name");
}

#[test]
fn the_packaging_scripts_pass_shellcheck() {
    if !crate::support::tmux::require("shellcheck") {
        return;
    }
    let dir = manifest_dir().join("packaging");
    let scripts: Vec<PathBuf> =
        TestEnv::entries(&dir).into_iter().filter(|name| name.ends_with(".sh")).map(|name| dir.join(name)).collect();
    assert!(scripts.len() >= 4, "{scripts:?}");
    let out = Command::new("shellcheck").args(&scripts).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}
