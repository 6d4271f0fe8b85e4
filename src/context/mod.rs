//! The environment the model is told about (prompt layer L3; seed 000 §3): OS, kernel, arch,
//! shell, cwd, user, host, home, git branch, which ops tools exist, Docker, and env the shell
//! widget supplies.
//!
//! Collecting is fast by construction: files and a `PATH` scan only. The one slow fact, `docker
//! info`, is cached for a minute under `$OPSAI_HOME/cache/context.json`; a stale cache is refreshed
//! from `finish` (in the opsai binary by a detached helper nobody waits for: see `docker`), and
//! [`EnvContext::collect`] waits for the answer at most [`ContextInput::probe_budget`], leaving it
//! unknown otherwise. (`git status` is not asked: whether the tree is dirty changes with every edit,
//! and the prompt must stay the same bytes for a server's cache.)

pub mod docker;
pub mod probe;
pub mod remote;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub use docker::DockerStatus;
pub use probe::{GitHead, GitInfo, TOOLS};

/// How long [`EnvContext::collect`] waits for the Docker probe by default.
pub(crate) const DEFAULT_PROBE_BUDGET: Duration = Duration::from_millis(5);

/// The process environment variables the context reads; nothing else is copied.
const ENV_NAMES: &[&str] = &["SHELL", "USER", "LOGNAME", "HOME", "PATH", "HOSTNAME"];

/// What collecting starts from, so tests need no process-wide state.
#[derive(Debug, Clone)]
pub struct ContextInput {
    pub cache_dir: PathBuf,
    pub cwd: PathBuf,
    /// The variables of [`ENV_NAMES`] (only those are read).
    pub env: HashMap<String, String>,
    /// The user's shell as the widget reports it (`zsh 5.9`); else `$SHELL`.
    pub shell: Option<String>,
    /// Widget-supplied environment (`VIRTUAL_ENV`, `KUBECONFIG`, …); secret-looking names are
    /// rendered as `[REDACTED]`.
    pub extra: Vec<(String, String)>,
    /// The longest the Docker probe may delay [`EnvContext::collect`].
    pub probe_budget: Duration,
    /// Whether a stale Docker cache may be refreshed by a background `docker info`.
    pub refresh_docker: bool,
}

impl ContextInput {
    /// This process: its cwd (`$PWD` if the directory was deleted) and the few variables the
    /// context reads; the default probe budget.
    pub(crate) fn from_process(cache_dir: &Path) -> Self {
        let env: HashMap<String, String> =
            ENV_NAMES.iter().filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?))).collect();
        let cwd = std::env::current_dir()
            .ok()
            .or_else(|| std::env::var_os("PWD").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("."));
        Self {
            cache_dir: cache_dir.to_owned(),
            cwd,
            env,
            shell: None,
            extra: Vec::new(),
            probe_budget: DEFAULT_PROBE_BUDGET,
            refresh_docker: true,
        }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str).filter(|value| !value.is_empty())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvContext {
    /// `Ubuntu 24.04.1 LTS`, `macOS 14.5`, or the OS family.
    pub os: String,
    /// `Linux 6.8.0-45-generic`; empty when unknown.
    pub kernel: String,
    pub arch: String,
    pub shell: String,
    pub cwd: PathBuf,
    pub user: String,
    pub hostname: String,
    pub home: Option<PathBuf>,
    pub git: Option<GitInfo>,
    /// Each of [`TOOLS`] and whether it is on `PATH`.
    pub tools: Vec<(String, bool)>,
    pub docker: DockerStatus,
    /// Widget-supplied environment, as given (secret values are hidden when rendered).
    pub extra: Vec<(String, String)>,
}

impl EnvContext {
    /// Collects the context, waiting for the slow probes at most `input.probe_budget`. No
    /// subprocess runs on this thread. Same as `EnvContext::start(input).finish()`.
    pub fn collect(input: &ContextInput) -> EnvContext {
        Self::start(input).finish()
    }

    /// The fast part now, the slow probes started in the background: call this early (at process
    /// start) and [`PendingContext::finish`] right before the first request, so the probes run
    /// while opsai does other work.
    pub fn start(input: &ContextInput) -> PendingContext {
        let deadline = Instant::now() + input.probe_budget;
        let path_var = input.var("PATH").unwrap_or("");
        let git = probe::find_git(&input.cwd);
        let tools =
            TOOLS.iter().map(|tool| ((*tool).to_owned(), probe::find_on_path(tool, path_var).is_some())).collect();
        let mut refreshing = None;
        let docker = match probe::find_on_path("docker", path_var) {
            None => DockerStatus::NotInstalled,
            Some(bin) => {
                let cache = docker::cache_path(&input.cache_dir);
                docker::cached_status(&cache, unix_now(), || {
                    if input.refresh_docker {
                        refreshing = Some((bin, cache.clone()));
                    }
                })
            }
        };
        let (os, kernel) = probe::os_and_kernel();
        let shell = input.shell.clone().or_else(|| input.var("SHELL").map(str::to_owned));
        let context = EnvContext {
            os,
            kernel,
            arch: std::env::consts::ARCH.to_owned(),
            shell: shell.unwrap_or_else(|| "unknown".to_owned()),
            cwd: input.cwd.clone(),
            user: input.var("USER").or_else(|| input.var("LOGNAME")).unwrap_or("unknown").to_owned(),
            hostname: probe::hostname(input.var("HOSTNAME")),
            home: input.var("HOME").map(PathBuf::from),
            git,
            tools,
            docker,
            extra: input.extra.clone(),
        };
        PendingContext { context, deadline, docker: refreshing }
    }

    #[cfg(test)]
    /// [`EnvContext::collect`] for this process: `ContextInput::from_process(cache_dir)`.
    pub(crate) fn for_process(cache_dir: &Path) -> EnvContext {
        Self::collect(&ContextInput::from_process(cache_dir))
    }

    #[cfg(test)]
    /// Adds widget-supplied variables (later values for the same name win when rendered).
    pub(crate) fn with_extra(mut self, extra: impl IntoIterator<Item = (String, String)>) -> Self {
        self.extra.extend(extra);
        self
    }

    /// The L3 prompt layer: a few compact lines. Secret-looking variables show `[REDACTED]`;
    /// control characters are flattened so nothing here can fake a new prompt line.
    ///
    /// Only facts that stay put while the user works are shown (issue 15): the same directory
    /// renders the same bytes in every process, so a local server's prompt cache is reused. Hence
    /// no git dirty state and no Docker container counts or error text; the model asks with a tool
    /// when they matter.
    pub fn render(&self) -> String {
        let mut out = self.render_place(true);
        let (present, absent): (Vec<_>, Vec<_>) = self.tools.iter().partition(|(_, found)| *found);
        let names =
            |tools: Vec<&(String, bool)>| tools.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(", ");
        let mut tools =
            format!("{TOOLS_LINE}{}", if present.is_empty() { "none of the usual".to_owned() } else { names(present) });
        if !absent.is_empty() {
            tools.push_str(&format!(" (not installed: {})", names(absent)));
        }
        line(&mut out, &tools);
        line(&mut out, &format!("{DOCKER_LINE}{}", docker_text(&self.docker)));
        self.render_extra(&mut out);
        out
    }

    /// The layer for the Ctrl-G widget: where the command will run (OS, shell, user, directory,
    /// the allowlisted variables) without the list of installed programs, Docker's state or the
    /// home directory. A small model copies what it is shown into unrelated commands: programs
    /// (`ss -s` for "list memory information") and the home's path (`find /root -name mysql` for
    /// "the mysql directory in the workspace directory", `ls -ld /root` for "the directory tree
    /// two levels deep"; issue 22). One command line rarely depends on them, and `~` names home.
    pub fn render_for_widget(&self) -> String {
        let mut out = self.render_place(false);
        self.render_extra(&mut out);
        out
    }

    /// [`render`](Self::render)'s layer (here, or a remote host's with its own lines) without what
    /// [`render_for_widget`](Self::render_for_widget) leaves out, for the agent with a small model:
    /// it copies what it is shown (`ss -i` for "network interfaces", issue 22), as the widget's did.
    pub fn for_small_models(rendered: &str) -> String {
        let item = |l: &str, prefix: &str| l.strip_prefix("- ").is_some_and(|l| l.starts_with(prefix));
        rendered
            .lines()
            .filter(|l| !item(l, TOOLS_LINE) && !item(l, DOCKER_LINE))
            .map(|l| if item(l, SHELL_LINE) { l.split_once(HOME_PART).map_or(l, |(who, _)| who) } else { l })
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// OS, shell, user, host, home (when `home`) and the working directory.
    fn render_place(&self, home: bool) -> String {
        let mut out = String::new();
        let os = [self.os.as_str(), self.kernel.as_str(), self.arch.as_str()];
        let os: Vec<&str> = os.into_iter().filter(|part| !part.is_empty()).collect();
        line(&mut out, &format!("OS: {}", os.join(" · ")));
        let mut who = format!("{SHELL_LINE}{} · User: {}", self.shell, self.user);
        if !self.hostname.is_empty() {
            who.push_str(&format!("@{}", self.hostname));
        }
        if let Some(path) = self.home.as_ref().filter(|_| home) {
            who.push_str(&format!("{HOME_PART}{}", path.display()));
        }
        line(&mut out, &who);
        let mut cwd = format!("Working directory: {}", self.cwd.display());
        if let Some(git) = &self.git {
            let head = match &git.head {
                GitHead::Branch(name) => format!("branch {name}"),
                GitHead::Detached(commit) => format!("detached at {commit}"),
                GitHead::Unknown => "unknown HEAD".to_owned(),
            };
            cwd.push_str(&format!(" (git repo at {}, {head})", git.root.display()));
        }
        line(&mut out, &cwd);
        out
    }

    fn render_extra(&self, out: &mut String) {
        if !self.extra.is_empty() {
            let vars: Vec<String> =
                self.extra.iter().map(|(name, value)| format!("{name}={}", shown_value(name, value))).collect();
            line(out, &format!("Shell environment: {}", vars.join(" ")));
        }
    }
}

/// A context whose slow probes may still be running; see [`EnvContext::start`].
#[derive(Debug)]
pub struct PendingContext {
    context: EnvContext,
    /// `start` + the probe budget: `finish` never waits past it.
    deadline: Instant,
    /// The `docker` binary and cache to refresh: started by `finish`, so a run that ends before
    /// its first request (a bad config) starts no probe and leaves no cache behind.
    docker: Option<(PathBuf, PathBuf)>,
}

impl PendingContext {
    /// Takes what the probes have answered by the deadline; the rest stays unknown.
    pub fn finish(self) -> EnvContext {
        let mut context = self.context;
        if let Some((bin, cache)) = self.docker {
            let answer = docker::refresh_in_background(bin, cache);
            if context.docker == DockerStatus::Checking {
                context.docker = wait_until(&answer, self.deadline).unwrap_or(DockerStatus::Checking);
            }
        }
        context
    }
}

/// Not yet checked and not answering read the same: whether the first probe has finished must not
/// change the prompt. The summary's counts (`server 27.1.1, 3 containers …`) are left out.
fn docker_text(status: &DockerStatus) -> String {
    match status {
        DockerStatus::NotInstalled => "not installed".to_owned(),
        DockerStatus::Checking | DockerStatus::Unreachable { .. } => "installed, daemon not answering".to_owned(),
        DockerStatus::Running { summary } => match summary.split(',').next().map(str::trim) {
            Some(server) if !server.is_empty() => format!("daemon running ({server})"),
            _ => "daemon running".to_owned(),
        },
    }
}

/// The lines [`EnvContext::for_small_models`] leaves out start with these.
const TOOLS_LINE: &str = "Tools: ";
const DOCKER_LINE: &str = "Docker: ";
/// The line whose home part [`EnvContext::for_small_models`] leaves out, and that part.
const SHELL_LINE: &str = "Shell: ";
const HOME_PART: &str = " · Home: ";

/// `- text` with control characters turned into spaces and the length bounded.
fn line(out: &mut String, text: &str) {
    out.push_str("- ");
    out.extend(text.chars().take(400).map(|c| if c.is_control() { ' ' } else { c }));
    out.push('\n');
}

fn shown_value(name: &str, value: &str) -> String {
    if is_secret_name(name) {
        return "[REDACTED]".to_owned();
    }
    let short: String = value.chars().take(120).collect();
    if short.len() < value.len() { format!("{short}…") } else { short }
}

/// One definition of "secret-looking variable name": the redactor's.
pub(crate) fn is_secret_name(name: &str) -> bool {
    crate::redact::is_secret_name(name)
}

fn wait_until<T>(answer: &Receiver<T>, deadline: Instant) -> Option<T> {
    answer.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}
