//! The read view of the sandbox (issue 21 §1): an allowlist, so a credential location nobody
//! listed is closed by default. What a sandboxed command (and every automatic read) may read:
//!
//! - the system's program trees whole ([`WHOLE_TREES`]), `/sys`, `/var/log` (root reading its own
//!   logs is everyday work; the kernel's owner and group checks still apply there);
//! - every other system tree (`/etc`, `/var`, `/run`, `/opt`, `/srv`, `/tmp`, …) only where it is
//!   world-readable: files `o+r`, directories `o+rx`, on the tree's own file system, not
//!   secret-shaped ([`shape`]);
//! - homes (`$HOME`, the password database's homes of people, `/root`, `/home/*`): nothing but a
//!   short list of harmless files ([`HOME_HARMLESS`]), the `PATH` directories inside them, and the
//!   working directory's subtree when it is inside one;
//! - the working directory's subtree minus secret-shaped names at any depth (bounded walk);
//! - never the `deny` paths (opsai's home, the audit log, `files.forbidden`, serve's users file).
//!
//! Landlock rules only add access beneath a path, so a directory whose whole subtree passes is one
//! rule and any other is split into its passing entries. Walks are bounded; what lies beyond a
//! bound is not granted (fail closed). The system part is the same for every command of a user, so
//! it is kept for [`CACHE_TTL`] in opsai's home ([`super::view_cache`]).

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::paths::HOME_TOOL_CREDENTIALS;
use super::paths::{self, Grants, ProcGrant};
use super::shape::{self, HOME_HARMLESS};
use crate::protocol::SandboxProfile;

/// Trees of programs and libraries: readable whole (their secrets, if any, are world-readable by
/// design).
const WHOLE_TREES: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/snap", "/nix", "/sys"];
/// Inside the world-readable trees, readable whole: the logs (DAC decides: root reads its own,
/// a user what the groups allow), PAM's configuration and state (`common-password` is a name, not a
/// password), and the package databases (public by design, and thousands of files: split, each
/// would cost a rule).
const WHOLE_INSIDE: &[&str] = &[
    "/var/log", "/run/log", "/etc/pam.d", "/var/lib/pam", "/var/lib/dpkg", "/var/lib/apt", "/var/cache/apt",
    "/var/lib/rpm",
];
/// Where the working directory is no reason to open more than the system view does.
const SYSTEM_TREES: &[&str] = &["/etc", "/var", "/run", "/boot", "/proc", "/sys", "/dev"];
/// Temp trees inside the system trees, where a working directory is ordinary.
const TEMP_TREES: &[&str] = &["/var/tmp"];
/// System files closed in every profile although world-readable: Kubernetes' service-account
/// tokens are mode 0644 in a pod.
const SYSTEM_DENY: &[&str] = &["/run/secrets", "/var/run/secrets"];

/// Directories granted whole without walking them (large, and not where secrets are kept).
const WALK_SKIP: &[&str] = &[".git", "node_modules", "target", ".venv", "venv", "__pycache__"];

/// Bounds of one walk: beyond them nothing more is granted.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    entries: usize,
    depth: usize,
    sniffs: usize,
    /// A directory split into more rules than this is closed instead (listable only): every rule
    /// costs each command time, and a huge mixed directory is no place for everyday reads. The
    /// trees themselves (`/etc`, `/var`, `/tmp`; depth ≤ 1) may take more than what lies deeper.
    split_rules: usize,
    split_rules_top: usize,
}
/// Per system tree (`/etc`, `/var`, `/opt`, …); built once per [`CACHE_TTL`].
const SYSTEM_BOUNDS: Bounds = Bounds { entries: 30_000, depth: 16, sniffs: 512, split_rules: 32, split_rules_top: 256 };
/// The working directory's subtree, walked for every command.
const CWD_BOUNDS: Bounds = Bounds { entries: 5_000, depth: 12, sniffs: 256, split_rules: 1024, split_rules_top: 1024 };
/// How long a computed system view is reused (a root-only file created since in a directory that
/// was wholly world-readable stays readable that long).
pub(crate) const CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(30);

/// What the view is computed from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Inputs {
    pub profile_tool: bool,
    /// Never readable (canonical paths).
    pub deny: Vec<PathBuf>,
    /// Closed except [`HOME_HARMLESS`] and `open` (canonical).
    pub homes: Vec<PathBuf>,
    /// Named paths inside homes that are readable (`PATH` entries, the tool profile's credentials).
    pub open: Vec<PathBuf>,
    /// The working directory (canonical); not part of the cached system view.
    pub cwd: Option<PathBuf>,
}

/// What the view is computed from, as the process has it (no file system access to gather): the
/// environment variables that name places, and the working directory. The broker keys its rulesets
/// by these, so a helper that finds its ruleset kept computes nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Env {
    pub home: Option<OsString>,
    pub histfile: Option<OsString>,
    pub path: Option<OsString>,
    pub kubeconfig: Option<OsString>,
    pub docker_config: Option<OsString>,
    pub cwd: Option<PathBuf>,
}

impl Env {
    /// This process's.
    pub(crate) fn current() -> Self {
        Self {
            home: std::env::var_os("HOME"),
            histfile: std::env::var_os("HISTFILE"),
            path: std::env::var_os("PATH"),
            kubeconfig: std::env::var_os("KUBECONFIG"),
            docker_config: std::env::var_os("DOCKER_CONFIG"),
            cwd: std::env::current_dir().ok(),
        }
    }
}

impl Inputs {
    /// The view of a process with `env` ([`Env::current`] for this one; opsai's broker computes a
    /// helper's): its homes, `PATH`, working directory, and `deny`.
    pub(crate) fn gather_from(profile: SandboxProfile, deny: &[PathBuf], env: &Env) -> Self {
        let homes = homes(env.home.as_deref());
        let tool = profile == SandboxProfile::Tool;
        let mut deny: Vec<PathBuf> = deny.iter().chain(&homes_opsai(&homes)).filter_map(|p| canonical(p)).collect();
        deny.extend(SYSTEM_DENY.iter().map(PathBuf::from));
        if let Some(histfile) = env.histfile.as_ref().filter(|h| !h.is_empty()).map(PathBuf::from)
            && let Some(histfile) = canonical(&histfile)
        {
            deny.push(histfile);
        }
        let mut open: Vec<PathBuf> = Vec::new();
        for home in &homes {
            open.extend(HOME_HARMLESS.iter().map(|rel| home.join(rel)));
            if tool {
                open.extend(HOME_TOOL_CREDENTIALS.iter().map(|rel| home.join(rel)));
            }
        }
        // Programs installed for the user (`~/.local/bin`, `~/.cargo/bin`), not the home itself, and
        // only directories named `bin`: `PATH` is the environment's to set, and `PATH=…:~/.aws`
        // must not open a credential directory.
        if let Some(path) = &env.path {
            open.extend(std::env::split_paths(path).filter_map(|dir| canonical(&dir)).filter(|dir| {
                homes.iter().any(|home| dir.starts_with(home) && dir != home)
                    && dir.file_name().is_some_and(|name| name == "bin")
                    && !dir.iter().any(|part| shape::is_secret_name(&part.to_string_lossy()))
            }));
        }
        if tool {
            for value in [&env.kubeconfig, &env.docker_config].into_iter().flatten() {
                open.extend(std::env::split_paths(value).filter_map(|p| canonical(&p)));
            }
        }
        let cwd = env.cwd.as_deref().and_then(canonical);
        Self { profile_tool: tool, deny, homes, open, cwd }
    }

    /// The key of the cached system view: everything but the working directory.
    pub(crate) fn system_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let dac = Dac::for_view(self.profile_tool);
        (self.profile_tool, &self.deny, &self.homes, &self.open, dac.uid, dac.groups, dac.bypass).hash(&mut hasher);
        hasher.finish()
    }
}

fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok().filter(|p| p.is_absolute())
}

/// opsai's default home in every home (a configured one comes with `--deny`).
fn homes_opsai(homes: &[PathBuf]) -> Vec<PathBuf> {
    homes.iter().map(|home| home.join(".opsai")).collect()
}

/// Every home on this machine: `$HOME`, this user's home in the password database, `/root`,
/// `/home/*`, and the homes of people (uid ≥ 1000) in `/etc/passwd` wherever they are. System
/// accounts' homes (`/var/lib/postgresql`) are left to the world-readable rule.
pub(crate) fn homes(home: Option<&OsStr>) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    found.extend(home.filter(|h| !h.is_empty()).map(PathBuf::from));
    found.push(PathBuf::from("/root"));
    if let Ok(entries) = std::fs::read_dir("/home") {
        found.extend(entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
    }
    let euid = nix::unistd::geteuid().as_raw();
    let mut own_listed = false;
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        for line in passwd.lines() {
            let fields: Vec<&str> = line.split(':').collect();
            if let [_, _, uid, _, _, dir, ..] = fields.as_slice()
                && let Ok(uid) = uid.parse::<u32>()
            {
                if uid == euid {
                    own_listed = true;
                    found.push(PathBuf::from(dir));
                } else if (1000..60000).contains(&uid) {
                    found.push(PathBuf::from(dir));
                }
            }
        }
    }
    // The name service only for a user `/etc/passwd` does not list (LDAP, sssd): asking it costs
    // every command a parse of nsswitch.conf and two connection attempts to nscd.
    if !own_listed && let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::geteuid()) {
        found.push(user.dir);
    }
    let mut homes: Vec<PathBuf> = found
        .iter()
        .filter_map(|home| canonical(home))
        .filter(|home| home.parent().is_some() && !is_under_any(home, WHOLE_TREES) && home != Path::new("/tmp"))
        .collect();
    homes.sort();
    homes.dedup();
    homes
}

fn is_under_any(path: &Path, roots: &[&str]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

/// The whole view: the system part (cached) and the working directory's subtree; and when its
/// system part was computed (seconds since the epoch): a view is as old as that part, wherever it
/// was kept since.
pub(crate) fn grants(inputs: &Inputs, proc: ProcGrant) -> (Grants, u64) {
    let key = inputs.system_key();
    let profile = if inputs.profile_tool { "tool" } else { "strict" };
    let (mut grants, computed) = match super::view_cache::load(profile, key) {
        Some(cached) => cached,
        None => {
            let computed = super::view_cache::now();
            let built = system(inputs);
            super::view_cache::store(profile, key, &built);
            (built, computed)
        }
    };
    paths::dev_and_proc(proc, &mut grants);
    working_directory(inputs, &mut grants);
    (without_redundant_rules(grants), computed)
}

/// Every rule costs each command time, and a rule beneath a rule that already grants as much adds
/// nothing: listing is granted beneath `/` (the names of closed files can be listed, not read), so
/// the other list rules go; and a path beneath a directory readable whole needs no rule of its own.
fn without_redundant_rules(mut grants: Grants) -> Grants {
    grants.read.sort();
    grants.read.dedup();
    let whole: HashSet<PathBuf> = grants.read.iter().cloned().collect();
    let covered = |path: &Path| path.ancestors().skip(1).any(|dir| whole.contains(dir));
    grants.read.retain(|path| !covered(path));
    grants.read_files.sort();
    grants.read_files.dedup();
    grants.read_files.retain(|path| !covered(path));
    let root = Path::new("/");
    if grants.list.iter().any(|dir| dir == root) {
        grants.list = vec![root.to_path_buf()];
    } else {
        grants.list.sort();
        grants.list.dedup();
    }
    grants
}

/// Everything but `/dev`, `/proc` and the working directory.
pub(crate) fn system(inputs: &Inputs) -> Grants {
    let mut walker = Walker::new(inputs, SYSTEM_BOUNDS);
    let root = Path::new("/");
    walker.out.list.push(root.to_path_buf());
    let Ok(entries) = std::fs::read_dir(root) else { return walker.out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path == Path::new("/dev") || path == Path::new("/proc") {
            continue;
        }
        let Ok(kind) = entry.file_type() else { continue };
        walker.reset_budget();
        let mode = if is_under_any(&path, WHOLE_TREES) { Mode::Whole } else { Mode::World };
        walker.entry(&path, &entry.file_name(), kind, mode, 0);
    }
    for home in &inputs.homes {
        walker.home(home);
    }
    walker.out
}

/// The working directory's subtree, secret-shaped names closed, and its ancestors listable; none
/// when it is `/`, inside a system tree, or above a home (the system view decides there).
fn working_directory(inputs: &Inputs, grants: &mut Grants) {
    let Some(cwd) = &inputs.cwd else { return };
    let system = is_under_any(cwd, SYSTEM_TREES) && !is_under_any(cwd, TEMP_TREES);
    let above_home = inputs.homes.iter().any(|home| home.starts_with(cwd) && home != cwd);
    if cwd.parent().is_none() || system || is_under_any(cwd, WHOLE_TREES) || above_home || in_home_state(inputs, cwd) {
        return;
    }
    if inputs.deny.iter().any(|denied| cwd.starts_with(denied)) {
        return;
    }
    let mut walker = Walker::new(inputs, CWD_BOUNDS);
    let clean = walker.dir(cwd, Mode::Shape { hide_dotfiles: inputs.homes.contains(cwd) }, 0);
    if clean {
        walker.out.read.push(cwd.clone());
    }
    grants.read.extend(walker.out.read);
    grants.read_files.extend(walker.out.read_files);
    grants.list.extend(walker.out.list);
    grants.list.extend(cwd.ancestors().skip(1).map(Path::to_path_buf));
}

/// Whether `cwd` is inside a home's hidden entry (`~/.kube`, `~/.config/gh`, `~/.mozilla`…): that
/// is where tools keep credentials under names no shape knows (`config`, `hosts.yml`,
/// `logins.json`), so starting opsai there must not open them; the home's own view decides.
fn in_home_state(inputs: &Inputs, cwd: &Path) -> bool {
    inputs.homes.iter().any(|home| {
        cwd.strip_prefix(home)
            .ok()
            .and_then(|rest| rest.components().next())
            .is_some_and(|first| first.as_os_str().to_string_lossy().starts_with('.'))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Everything, split only around a deny path or a home.
    Whole,
    /// Only what every user may read, not secret-shaped, on the tree's own file system.
    World,
    /// Everything not secret-shaped (the working directory: the kernel's checks decide the rest);
    /// a home as working directory keeps its dotfiles closed.
    Shape { hide_dotfiles: bool },
}

struct Walker<'a> {
    inputs: &'a Inputs,
    /// Directories that contain a deny path or a home: never granted whole.
    marked: HashSet<PathBuf>,
    bounds: Bounds,
    entries: usize,
    sniffs: usize,
    device: Option<u64>,
    dac: Dac,
    out: Grants,
}

/// This process's identity for the kernel's own permission checks (no capabilities: in the strict
/// profile they are dropped before the view is computed).
struct Dac {
    uid: u32,
    groups: Vec<u32>,
    /// CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH is effective (root in the tool profile): the
    /// kernel refuses nothing, so nothing is left to it.
    bypass: bool,
}

impl Dac {
    /// The identity the kernel checks the command with, wherever the view is computed: in the
    /// helper after the strict profile dropped every capability (and, as root, joined the log
    /// groups), or in opsai, with its capabilities, for the broker ([`super::broker`]). Where it
    /// cannot be told whether the log groups are joined they are counted in: a group too many only
    /// costs rules (a file it reads is still checked for `o+r`), a group too few would grant a
    /// directory whole over a file the command can read.
    fn for_view(tool: bool) -> Self {
        let mut dac = Self::current();
        if !tool {
            dac.bypass = false;
            if caps::has_cap(None, caps::CapSet::Effective, caps::Capability::CAP_SETGID).unwrap_or(true) {
                dac.groups.extend(super::linux::log_groups().iter().map(|g| g.as_raw()));
            }
        }
        dac
    }

    fn current() -> Self {
        let mut groups: Vec<u32> = nix::unistd::getgroups().unwrap_or_default().iter().map(|g| g.as_raw()).collect();
        groups.push(nix::unistd::getegid().as_raw());
        let effective = |cap| caps::has_cap(None, caps::CapSet::Effective, cap).unwrap_or(true);
        let bypass = effective(caps::Capability::CAP_DAC_OVERRIDE) || effective(caps::Capability::CAP_DAC_READ_SEARCH);
        Self { uid: nix::unistd::geteuid().as_raw(), groups, bypass }
    }

    /// Whether the owner, group or other bits let this process read the file, or enter the
    /// directory (without `x` nothing beneath it opens, whatever `r` says). A POSIX ACL can grant
    /// a user or group named in it up to the group bits (its mask), so where those allow what the
    /// other bits do not, a file with an ACL counts as one this process may open.
    fn may_open(&self, path: &Path, meta: &std::fs::Metadata, dir: bool) -> bool {
        if self.bypass {
            return true;
        }
        let mode = meta.mode();
        let wanted = if dir { 0o1 } else { 0o4 };
        if meta.uid() == self.uid {
            return (mode >> 6) & wanted != 0;
        }
        let group = (mode >> 3) & wanted != 0;
        if self.groups.contains(&meta.gid()) {
            return group;
        }
        mode & wanted != 0 || (group && has_acl(path))
    }
}

/// Whether `path` carries an access ACL (its own, not a symbolic link's target).
fn has_acl(path: &Path) -> bool {
    // ENODATA: none; any other answer (an error included) may be one.
    !matches!(rustix::fs::lgetxattr_query(path, "system.posix_acl_access"), Err(rustix::io::Errno::NODATA))
}

impl<'a> Walker<'a> {
    fn new(inputs: &'a Inputs, bounds: Bounds) -> Self {
        let marked = inputs
            .deny
            .iter()
            .chain(&inputs.homes)
            .flat_map(|path| path.ancestors().skip(1).map(Path::to_path_buf))
            .collect();
        Self {
            inputs,
            marked,
            bounds,
            entries: 0,
            sniffs: 0,
            device: None,
            dac: Dac::for_view(inputs.profile_tool),
            out: Grants::default(),
        }
    }

    fn reset_budget(&mut self) {
        self.entries = 0;
        self.sniffs = 0;
        self.device = None;
    }

    /// One entry of a directory being walked; true when it was granted or needs nothing (a
    /// symbolic link: the kernel checks its target where that is).
    fn entry(&mut self, path: &Path, name: &OsStr, kind: std::fs::FileType, mode: Mode, depth: usize) -> bool {
        if kind.is_symlink() {
            return true;
        }
        if self.inputs.deny.iter().any(|denied| denied == path) || self.inputs.homes.iter().any(|home| home == path) {
            return false;
        }
        let name = name.to_string_lossy();
        if let Mode::Shape { hide_dotfiles: true } = mode
            && depth == 1
            && name.starts_with('.')
        {
            return false;
        }
        // `stat` only where the answer depends on it: modes in the system trees, sizes of the
        // files looked into (the working directory's walk reads names only otherwise).
        let needs_meta =
            mode == Mode::World || (mode != Mode::Whole && !kind.is_dir() && shape::sniff_extension(&name));
        let meta = if needs_meta {
            match std::fs::symlink_metadata(path) {
                Ok(meta) => Some(meta),
                Err(_) => return false,
            }
        } else {
            None
        };
        if mode == Mode::World
            && let Some(meta) = &meta
        {
            // What the kernel refuses this process anyway (`/etc/shadow` to a user, another
            // user's 0600 file to root without capabilities) needs no rule of its own and does not
            // keep its directory from being granted whole: fewer rules, the same view.
            if !self.dac.may_open(path, meta, kind.is_dir()) {
                return true;
            }
            let wanted = if kind.is_dir() { 0o005 } else { 0o004 };
            if meta.mode() & wanted != wanted {
                return false;
            }
        }
        if mode != Mode::Whole && shape::is_secret_name(&name) {
            return false;
        }
        if kind.is_dir() {
            let whole_inside = WHOLE_INSIDE.iter().any(|p| Path::new(p) == path);
            // `/var/log` is often a file system of its own; it is granted whole anyway.
            if mode == Mode::World && !whole_inside {
                let dev = meta.as_ref().map(MetadataExt::dev);
                match (self.device, dev) {
                    (None, Some(dev)) if depth == 0 => self.device = Some(dev),
                    (Some(ours), Some(dev)) if ours != dev => return false,
                    _ => {}
                }
            }
            let skip = mode != Mode::Whole && WALK_SKIP.contains(&name.as_ref()) && !self.marked.contains(path);
            let clean = skip || self.dir(path, if whole_inside { Mode::Whole } else { mode }, depth);
            if clean {
                self.out.read.push(path.to_path_buf());
            }
            return clean;
        }
        if let Some(meta) = &meta
            && shape::wants_sniff(&name, meta.len())
        {
            // Opening a FIFO to look into it blocks until someone writes (a hang of every
            // command); a device or socket is no file to sniff either: closed, unopened.
            if !kind.is_file() {
                return false;
            }
            self.sniffs += 1;
            if self.sniffs > self.bounds.sniffs || shape::sniff(path) {
                return false;
            }
        }
        self.out.read_files.push(path.to_path_buf());
        true
    }

    /// Walks `dir`; true when everything beneath passed, so the caller grants it in one rule (the
    /// grants of its entries are then dropped). Otherwise `dir` is listable and its passing entries
    /// keep their own grants.
    fn dir(&mut self, dir: &Path, mode: Mode, depth: usize) -> bool {
        let marked = self.marked.contains(dir);
        if mode == Mode::Whole && !marked {
            return true;
        }
        if depth >= self.bounds.depth {
            return false;
        }
        let mark = (self.out.read.len(), self.out.read_files.len(), self.out.list.len());
        // An unlistable directory grants nothing below it: failing closed.
        let Ok(entries) = std::fs::read_dir(dir) else { return false };
        let mut clean = !marked;
        for entry in entries.flatten() {
            self.entries += 1;
            if self.entries > self.bounds.entries {
                clean = false;
                break;
            }
            let Ok(kind) = entry.file_type() else {
                clean = false;
                continue;
            };
            let path = entry.path();
            if !self.entry(&path, &entry.file_name(), kind, mode, depth + 1) {
                clean = false;
            }
        }
        let rules = self.out.read.len() - mark.0 + self.out.read_files.len() - mark.1;
        let cap = if depth <= 1 { self.bounds.split_rules_top } else { self.bounds.split_rules };
        if clean || rules > cap {
            self.out.read.truncate(mark.0);
            self.out.read_files.truncate(mark.1);
            self.out.list.truncate(mark.2);
        }
        if !clean {
            self.out.list.push(dir.to_path_buf());
        }
        clean
    }

    /// A home: listable, its harmless files and the named paths in it readable, nothing else.
    fn home(&mut self, home: &Path) {
        if !home.is_dir() {
            return;
        }
        self.out.list.push(home.to_path_buf());
        for path in self.inputs.open.iter().filter(|p| p.starts_with(home)) {
            if self.inputs.deny.iter().any(|denied| path.starts_with(denied)) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(path) else { continue };
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.is_dir() {
                self.out.read.push(path.clone());
            } else {
                self.out.read_files.push(path.clone());
            }
            let between = path.ancestors().skip(1).take_while(|dir| dir.starts_with(home) && *dir != home);
            self.out.list.extend(between.map(Path::to_path_buf));
        }
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
