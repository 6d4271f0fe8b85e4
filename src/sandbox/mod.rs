//! The OS sandbox for every command that runs without a human yes (issue 13 §1, docs/sandbox.md).
//!
//! - **Linux**: the command's process executes the small helper beside opsai (`opsai-sandbox-helper`,
//!   the same code; opsai itself where it is missing or of another build) with the hidden first
//!   argument [`ENTRY`]; that process, still single-threaded and before anything else in `main`,
//!   removes secret-looking environment variables, applies a Landlock ruleset (usually the one
//!   opsai prepared for the view, [`broker`]; read-only filesystem
//!   minus the secret paths and devices, no TCP, scoped signals and abstract sockets) and a seccomp
//!   filter (no sockets in the strict profile, no ptrace, mount, bpf, io_uring, chmod…), then
//!   `exec`s the shell. Every restriction we rely on is applied or nothing runs: it exits with
//!   [`EXIT_NOT_APPLIED`].
//! - **macOS**: `sandbox-exec -p PROFILE` with a generated Seatbelt profile ([`seatbelt`]).
//! - Elsewhere, and where the kernel lacks what we need, [`availability`] says why; then nothing
//!   runs without asking.
//!
//! Whether the sandbox works here is found out once per process by actually applying it in a child
//! (`ENTRY --probe`), so the answer cannot drift from what a command gets.

#[cfg(target_os = "linux")]
mod bench;
#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod broker;
pub mod env;
#[cfg(target_os = "linux")]
mod limits;
#[cfg(target_os = "linux")]
mod linux;
pub mod paths;
mod probe;
#[cfg(target_os = "linux")]
mod process;
pub mod reader;
pub mod seatbelt;
mod shape;
#[cfg(target_os = "linux")]
mod targets;
#[cfg(target_os = "linux")]
mod view;
#[cfg(target_os = "linux")]
mod view_cache;

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::protocol::SandboxProfile;

/// The hidden first argument of the re-executed sandbox helper.
pub(crate) const ENTRY: &str = "__opsai-sandbox";
/// The helper could not apply every restriction, so the command did not run.
pub(crate) const EXIT_NOT_APPLIED: u8 = 121;
/// The first line the probe prints when the sandbox is fully applied.
const PROBE_OK: &str = "sandbox-ok";
/// What the probe says after [`PROBE_OK`]: a helper executable of another build is not used (the
/// arguments between opsai and its helper are not a stable interface).
const BUILD: &str = concat!("opsai-", env!("CARGO_PKG_VERSION"), "/helper-1");
/// The small helper executable, beside opsai's own ([`helper_executable`]).
const HELPER_FILE: &str = "opsai-sandbox-helper";
/// Helper flag: close other processes' `/proc/<pid>/environ` by path rules, one per process,
/// because Landlock's ptrace scoping did not close them here (the probe finds out).
const PER_PID_FLAG: &str = "--proc-per-pid";

/// Helper flag: the socket of opsai's ruleset broker ([`broker`]).
const BROKER_FLAG: &str = "--broker";

/// The executable that applies the sandbox: set by the probe; opsai's own until then.
static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// The helper executable commands are started with, as `/proc/PID/exe` names it.
#[cfg(target_os = "linux")]
fn helper_path() -> Option<PathBuf> {
    match HELPER.get() {
        Some(helper) => Some(helper.clone()),
        None => std::env::current_exe().ok(),
    }
}

/// Whether helpers need [`PER_PID_FLAG`]: set by the probe.
static PROC_PER_PID: AtomicBool = AtomicBool::new(false);

/// `safety.sandbox` and the paths the configuration adds to the unreadable set.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub off: bool,
    /// opsai's home (API key, audit log, sessions), the audit log, the user's `files.forbidden`.
    pub deny: Vec<PathBuf>,
    /// `safety.sandbox_limits`.
    pub limits: crate::config::SandboxLimits,
}

impl Settings {
    /// From the loaded configuration; `OPSAI_SANDBOX=off|auto` overrides `safety.sandbox`.
    pub fn new(config: &crate::config::Config, paths: &crate::home::Paths) -> Self {
        let mut deny = paths.private_dirs();
        deny.push(config.audit_log_path(paths.state_dir(), paths.user_home.as_deref()));
        deny.extend(config.sandbox_forbidden(&paths.home, paths.user_home.as_deref()));
        let off = config.safety.sandbox == crate::config::SandboxSetting::Off;
        Self { off, deny, limits: config.safety.sandbox_limits }.with_env()
    }

    /// From `$OPSAI_HOME/config.json`, for the entry points that load no configuration (`opsai
    /// sandbox`): defaults when it is missing or unreadable (the sandbox stays on).
    fn from_config_file() -> Self {
        let Ok(paths) = crate::home::Paths::from_env() else { return Self::default().with_env() };
        match crate::config::Config::load(&paths.home) {
            Ok(config) => Self::new(&config, &paths),
            Err(_) => Self { deny: paths.private_dirs(), ..Self::default() }.with_env(),
        }
    }

    fn with_env(mut self) -> Self {
        match std::env::var("OPSAI_SANDBOX").as_deref() {
            Ok("off") => self.off = true,
            Ok("auto") => self.off = false,
            _ => {}
        }
        self
    }
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();
/// Paths a mode adds to the unreadable set after the configuration was loaded (`opsai serve`'s
/// users file, wherever `--users` points).
static ALSO_DENIED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Adds `path` to what no sandboxed command of this process, and no automatic read, can read.
pub fn also_deny(path: PathBuf) {
    if let Ok(mut denied) = ALSO_DENIED.lock() {
        denied.push(path);
    }
}

/// The configured deny paths and those added since.
fn denied() -> Vec<PathBuf> {
    let mut denied = settings().deny.clone();
    if let Ok(also) = ALSO_DENIED.lock() {
        denied.extend(also.iter().cloned());
    }
    denied
}

/// Sets this process's settings from the configuration the run loaded; the first call wins (a
/// sandbox already probed or applied keeps the settings it was probed with).
pub(crate) fn configure(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// The settings of this process: as [`configure`]d, else read from the configuration file once.
pub fn settings() -> &'static Settings {
    SETTINGS.get_or_init(Settings::from_config_file)
}

/// `pid` is a helper this process just started with [`wrap`]'s arguments: the broker answers it
/// (once). Every spawn of a wrapped command calls this as soon as it has the pid.
pub(crate) fn helper_started(pid: u32) {
    #[cfg(target_os = "linux")]
    broker::expect(pid);
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

/// Something ran with the user's rights (an approved command, an edit): rulesets prepared for
/// earlier commands may not cover what it wrote, so the next ones are built again.
pub(crate) fn invalidate_prepared() {
    #[cfg(target_os = "linux")]
    broker::invalidate();
}

/// Whether commands can be sandboxed on this machine, and the details or the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Availability {
    Available(String),
    Unavailable(String),
    /// `safety.sandbox = "off"`.
    Off,
}

/// Probed once per process (a child applies the strict sandbox and reports).
pub(crate) fn availability() -> &'static Availability {
    static AVAILABILITY: OnceLock<Availability> = OnceLock::new();
    AVAILABILITY.get_or_init(|| if settings().off { Availability::Off } else { probe::probe() })
}

/// The sandbox a command that runs without a human yes gets: `Ok(Some)` sandboxed, `Ok(None)`
/// unsandboxed because the user switched it off (warned once), `Err(reason)` when none can be
/// applied here (said once): then it must not run without asking.
pub(crate) fn for_auto_run(profile: SandboxProfile) -> Result<Option<SandboxProfile>, String> {
    if cfg!(test) {
        // Unit tests run the library inside the test harness, whose executable is not opsai (the
        // re-exec entry does not exist there), and their executors are fakes.
        return Ok(Some(profile));
    }
    match availability() {
        Availability::Available(_) => Ok(Some(profile)),
        Availability::Off => {
            warn_once(
                "opsai: WARNING: safety.sandbox is \"off\": commands that run without asking (safe auto-runs, \
                 probes, read-only tools) run UNSANDBOXED with your full rights",
            );
            Ok(None)
        }
        Availability::Unavailable(reason) => {
            warn_once(&format!(
                "opsai: no sandbox on this machine ({reason}); commands that would run without asking ask first \
                 (`opsai sandbox --status`)"
            ));
            Err(reason.clone())
        }
    }
}

fn warn_once(message: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        let _ = writeln!(std::io::stderr(), "{message}");
    }
}

/// The argv that runs `program args…` in the sandbox `profile` (the caller adds nothing after).
pub(crate) fn wrap(profile: SandboxProfile, program: &OsStr, args: &[OsString]) -> std::io::Result<Vec<OsString>> {
    let mut argv = prefix(profile)?;
    argv.push(program.to_owned());
    argv.extend(args.iter().cloned());
    Ok(argv)
}

#[cfg(target_os = "linux")]
fn prefix(profile: SandboxProfile) -> std::io::Result<Vec<OsString>> {
    let exe = helper_path().ok_or_else(|| std::io::Error::other("cannot find opsai's own executable"))?;
    let mut argv = vec![exe.into_os_string(), ENTRY.into(), profile.as_str().into()];
    if PROC_PER_PID.load(Ordering::Relaxed) {
        argv.push(PER_PID_FLAG.into());
    } else if profile == SandboxProfile::Strict
        && let Some(socket) = broker::socket()
    {
        argv.push(BROKER_FLAG.into());
        argv.push(socket.into());
    }
    for path in &denied() {
        argv.push("--deny".into());
        argv.push(path.clone().into_os_string());
    }
    argv.push(limits::FLAG.into());
    argv.push(limits::encode(&settings().limits).into());
    argv.push("--".into());
    Ok(argv)
}

#[cfg(target_os = "macos")]
fn prefix(profile: SandboxProfile) -> std::io::Result<Vec<OsString>> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cwd = std::env::current_dir().ok();
    let view = seatbelt::View::gather(profile, &denied(), home.as_deref(), cwd.as_deref());
    let text = seatbelt::view_profile(profile, &view);
    Ok(vec![seatbelt::SANDBOX_EXEC.into(), "-p".into(), text.into()])
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn prefix(_profile: SandboxProfile) -> std::io::Result<Vec<OsString>> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no sandbox on this operating system"))
}

/// What this process leaves for the sandbox (the ruleset broker's socket) goes: called once as
/// opsai ends, on every path out (an error, a signal).
pub fn close() {
    #[cfg(target_os = "linux")]
    broker::close();
}

/// The hidden entry: when the first argument is [`ENTRY`], applies the sandbox and `exec`s the
/// command; never returns then (an `exec` failure or a restriction that cannot be applied exits).
/// Called first thing in `main`, before any thread exists, so the restrictions cover the process.
pub fn entry_from_args() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let _program = args.next();
    if args.next().as_deref() != Some(OsStr::new(ENTRY)) {
        return None;
    }
    Some(enter(args.collect()))
}

/// `ENTRY [--probe] [--proc-per-pid | --broker NAME] PROFILE [--deny PATH]… [--limits L] -- PROGRAM
/// ARGS…` (the default limits without `--limits`).
fn enter(args: Vec<OsString>) -> ExitCode {
    let fail = |message: &str| {
        let _ = writeln!(std::io::stderr(), "opsai sandbox: {message}; the command was not run");
        ExitCode::from(EXIT_NOT_APPLIED)
    };
    let mut args = args.into_iter();
    let mut probe = false;
    let mut per_pid = false;
    let mut broker = None;
    let mut profile = None;
    let mut deny = Vec::new();
    let mut limits = crate::config::SandboxLimits::default();
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--probe") => probe = true,
            Some(PER_PID_FLAG) => per_pid = true,
            Some(BROKER_FLAG) => match args.next() {
                Some(name) => broker = Some(name),
                None => return fail("--broker needs a name"),
            },
            Some("--deny") => match args.next() {
                Some(path) => deny.push(PathBuf::from(path)),
                None => return fail("--deny needs a path"),
            },
            Some("--limits") => match args.next().as_deref().and_then(OsStr::to_str).and_then(parse_limits) {
                Some(given) => limits = given,
                None => return fail("--limits needs PIDS,MEMORY_MB,CPU_S,FILE_SIZE_MB"),
            },
            Some("--") => {
                command.extend(args.by_ref());
                break;
            }
            Some(name) if profile.is_none() => match SandboxProfile::parse(name) {
                Some(p) => profile = Some(p),
                None => return fail(&format!("unknown profile {name:?}")),
            },
            _ => return fail(&format!("unexpected argument {:?}", arg.to_string_lossy())),
        }
    }
    let Some(profile) = profile else { return fail("no profile given") };
    if command.is_empty() && !probe {
        return fail("no command given");
    }
    let broker = broker.filter(|_| profile == SandboxProfile::Strict && !per_pid && !probe);
    apply_and_exec(Helper { profile, deny: &deny, limits, probe, per_pid, broker }, &command, &fail)
}

#[cfg(target_os = "linux")]
fn parse_limits(text: &str) -> Option<crate::config::SandboxLimits> {
    limits::decode(text)
}

#[cfg(not(target_os = "linux"))]
fn parse_limits(_text: &str) -> Option<crate::config::SandboxLimits> {
    None
}

/// What the helper was asked to apply.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Helper<'a> {
    profile: SandboxProfile,
    deny: &'a [PathBuf],
    limits: crate::config::SandboxLimits,
    probe: bool,
    per_pid: bool,
    /// opsai's ruleset broker, for a strict helper with `/proc` whole.
    broker: Option<OsString>,
}

#[cfg(target_os = "linux")]
fn apply_and_exec(helper: Helper, command: &[OsString], fail: &dyn Fn(&str) -> ExitCode) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let Helper { profile, deny, limits, probe, per_pid, broker } = helper;
    let env = view::Env::current();
    // Asked for before the fork: the broker answers only its own children. What it keys the
    // ruleset by is read from this process, without touching the file system.
    let prepared = broker.and_then(|socket| {
        let request = broker::Request { env: env.clone(), deny: deny.to_vec(), terminals: linux::own_terminals() };
        broker::fetch(std::path::Path::new(&socket), &request)
    });
    // Computed only where it is needed: without a prepared ruleset.
    let view =
        if prepared.is_some() { view::Inputs::default() } else { view::Inputs::gather_from(profile, deny, &env) };
    // From here on this is the command's process; the helper waits outside (process.rs).
    let contained = match process::contain(&limits) {
        Ok(contained) => contained,
        Err(err) => return fail(&err.to_string()),
    };
    let proc_mode = if per_pid { linux::ProcMode::PerPid } else { linux::ProcMode::Scoped };
    let status = match linux::apply(profile, &view, proc_mode, prepared) {
        Ok(status) => status,
        Err(err) => return fail(&err.to_string()),
    };
    if probe {
        let _ = writeln!(std::io::stdout(), "{PROBE_OK} {BUILD} {status}; {contained}");
        return ExitCode::SUCCESS;
    }
    if let Some(code) = reader::serve(command) {
        return code;
    }
    let Some((program, rest)) = command.split_first() else { return fail("no command given") };
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest);
    if profile == SandboxProfile::Strict {
        for (name, _) in std::env::vars_os() {
            if env::is_secret_name(&name.to_string_lossy()) {
                cmd.env_remove(&name);
            }
        }
    }
    let err = cmd.exec();
    // As a shell says it: 127 when the program does not exist, 126 when it cannot be run.
    let _ = writeln!(std::io::stderr(), "opsai sandbox: {}: {err}", program.to_string_lossy());
    ExitCode::from(if err.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 })
}

#[cfg(not(target_os = "linux"))]
fn apply_and_exec(_helper: Helper, _command: &[OsString], fail: &dyn Fn(&str) -> ExitCode) -> ExitCode {
    fail("the re-exec sandbox exists on Linux only")
}

/// `opsai sandbox --status`: prints whether the sandbox is available and why; 0 when it is.
pub(crate) fn status_command() -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    let code = match availability() {
        Availability::Available(details) => {
            writeln!(out, "sandbox: available")?;
            writeln!(out, "  {details}")?;
            0
        }
        Availability::Unavailable(reason) => {
            writeln!(out, "sandbox: unavailable: {reason}")?;
            writeln!(out, "  commands that would run without asking (safe auto-runs, probes) ask first")?;
            1
        }
        Availability::Off => {
            writeln!(out, "sandbox: off (safety.sandbox = \"off\" in the config)")?;
            writeln!(out, "  WARNING: commands that run without asking run unsandboxed")?;
            1
        }
    };
    out.flush()?;
    Ok(code)
}

/// `opsai sandbox --bench RUNS -- CMD…` (bench/sandbox.py).
pub fn bench_command(command: &[OsString], runs: u32) -> anyhow::Result<u8> {
    #[cfg(target_os = "linux")]
    return bench::run(command, runs);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (command, runs);
        anyhow::bail!("the sandbox benchmark runs on Linux only")
    }
}

/// `opsai sandbox [--] CMD…`: runs one command in exactly the strict sandbox, with this terminal's
/// stdio, and returns its exit code (128+n when killed by signal n).
pub fn run_command(command: &[OsString]) -> anyhow::Result<u8> {
    use std::os::unix::process::ExitStatusExt;
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("give the command to run: `opsai sandbox -- CMD ARGS…`");
    };
    match availability() {
        Availability::Available(_) => {}
        Availability::Unavailable(reason) => {
            let _ = writeln!(std::io::stderr(), "opsai: no sandbox on this machine: {reason}; not run");
            return Ok(EXIT_NOT_APPLIED);
        }
        Availability::Off => {
            let _ = writeln!(std::io::stderr(), "opsai: safety.sandbox is \"off\"; not run");
            return Ok(EXIT_NOT_APPLIED);
        }
    }
    let argv = wrap(SandboxProfile::Strict, program, args)?;
    let Some((exe, rest)) = argv.split_first() else { anyhow::bail!("empty sandbox command") };
    let mut child = std::process::Command::new(exe).args(rest).spawn()?;
    helper_started(child.id());
    let status = child.wait()?;
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    Ok(u8::try_from(code).unwrap_or(1))
}
