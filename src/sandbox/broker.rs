//! The ruleset broker: opsai builds a command's Landlock ruleset once and hands it to every helper
//! that needs the same view (issue 21 "Figures": the sandbox's cost per command).
//!
//! Computing the view (the system part from its cache file, the working directory's walk) and
//! adding its rules (an `open` and a `landlock_add_rule` per path, a few hundred as root) was most
//! of what the sandbox added to each command. A ruleset is a kernel object any number of processes
//! can apply, so opsai keeps one per view and passes its descriptor to the helper over a Unix
//! socket (`SCM_RIGHTS`); the helper applies it as it is and builds nothing.
//!
//! Who trusts whom (whoever holds a ruleset's descriptor can add rules to it, so a ruleset later
//! commands apply must never reach anyone else):
//! - The socket is a file in a directory only opsai's user can enter (`$XDG_RUNTIME_DIR/opsai` or
//!   `/tmp/opsai-sandbox-UID`, 0700, checked), which no sandboxed command can read into; other
//!   users cannot connect at all.
//! - opsai answers a connection only from a process it started as a helper itself: its pid is
//!   registered when the spawn returns ([`expect`]), and answered once. The peer's pid is taken
//!   when it connected, so a process that connects and then hands the socket on, or `exec`s the
//!   helper afterwards (an approved command can do both), is never answered.
//! - The helper talks only to the process that started it: the socket's peer must be its parent,
//!   with its user id (`SO_PEERCRED`). Anything else, or no answer within [`FETCH_TIMEOUT`], and it
//!   builds the ruleset itself, as it always could. The descriptor it receives is close-on-exec:
//!   the command never holds it.
//! - The view is walked with the identity the command gets: the broker's thread drops the
//!   capabilities that read past file modes before it walks (they are per thread).
//! - Only the strict profile with `/proc` whole is brokered: the tool profile walks `/proc` per
//!   command and the per-process mode depends on the command's own pid.
//! - A ruleset is reused while its view's system part is younger than [`CACHE_TTL`], and not once
//!   the working directory's modification time changed, a deny path came into existence or went,
//!   or anything ran outside the sandbox in this process ([`invalidate`]): a file written since is
//!   not covered by an older walk.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, getsockopt, recvmsg, sendmsg, sockopt};

use super::linux;
use super::paths::ProcGrant;
use super::view::{CACHE_TTL, Env, Inputs};
use crate::protocol::SandboxProfile;

/// How long a helper waits for its ruleset before building it itself (a cold build walks the
/// system trees: tens of milliseconds, more on a loaded machine).
const FETCH_TIMEOUT: Duration = Duration::from_secs(3);
/// Rulesets kept at once (one per working directory and terminal, in practice a handful).
const KEPT: usize = 16;
/// The largest request read (paths of the view's inputs).
const REQUEST_MAX: usize = 1 << 20;
const MAGIC: &[u8] = b"opsai-broker-2\0";

/// How long a connection waits for its pid to be registered (the spawn returns right after the
/// helper's `exec`, which may already have connected).
const CLAIM_WAIT: Duration = Duration::from_millis(500);
/// Registrations of helpers that never connected (not brokered after all) are dropped after this.
const EXPECT_KEPT: Duration = Duration::from_secs(60);

/// Bumped when something ran outside the sandbox: every kept ruleset is built again.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// The pids of the helpers opsai started, not yet answered.
static EXPECTED: Mutex<Vec<(u32, Instant)>> = Mutex::new(Vec::new());
static REGISTERED: Condvar = Condvar::new();

/// `pid` is a sandbox helper this process just started: its connection (one) will be answered.
pub(crate) fn expect(pid: u32) {
    if let Ok(mut expected) = EXPECTED.lock() {
        expected.retain(|(_, at)| at.elapsed() < EXPECT_KEPT);
        expected.push((pid, Instant::now()));
        REGISTERED.notify_all();
    }
}

/// Whether `pid` was registered by [`expect`] (waiting for that a little); it is unregistered.
fn claim(pid: u32) -> bool {
    let Ok(mut expected) = EXPECTED.lock() else { return false };
    let deadline = Instant::now() + CLAIM_WAIT;
    loop {
        if let Some(at) = expected.iter().position(|(p, _)| *p == pid) {
            expected.swap_remove(at);
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        expected = match REGISTERED.wait_timeout(expected, left) {
            Ok((guard, _)) => guard,
            Err(_) => return false,
        };
    }
}

/// Every kept ruleset is stale from now on (a command or an edit ran with the user's rights and
/// may have written a file an older walk did not see).
pub(crate) fn invalidate() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The broker's socket, starting it on first use; `None` when it cannot run here (then every
/// helper builds its own ruleset).
pub(crate) fn socket() -> Option<&'static Path> {
    SOCKET.get_or_init(start).as_deref()
}

static SOCKET: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Removes the broker's socket, and its directory when nothing else is in it (another opsai's
/// socket keeps it): an opsai that ran a sandboxed command leaves no file behind in `/tmp`. Called
/// as the process ends; a helper started after this builds its ruleset itself.
pub(crate) fn close() {
    let Some(Some(socket)) = SOCKET.get() else { return };
    let _ = std::fs::remove_file(socket);
    if let Some(dir) = socket.parent() {
        // Fails while another opsai's socket is there, as it should.
        let _ = std::fs::remove_dir(dir);
    }
}

fn start() -> Option<PathBuf> {
    use std::hash::{BuildHasher, Hasher};
    // Twice: another opsai ending may remove the (then empty) directory between the check and the
    // bind; the bind then fails and the directory is made again.
    let (socket, listener) = (0..2).find_map(|_| {
        let dir = private_dir()?;
        remove_stale(&dir);
        // Only unlikely to be taken already; who may connect is decided by the directory and the pid.
        let salt = std::collections::hash_map::RandomState::new().build_hasher().finish();
        let socket = dir.join(format!("sandbox-{}-{salt:016x}.sock", std::process::id()));
        let listener = UnixListener::bind(&socket).ok()?;
        // Checked again after the bind: a directory someone else made at that path in the
        // meantime (once ours was removed) is refused, and the socket in it goes.
        if private_dir().as_deref() != Some(dir.as_path()) {
            let _ = std::fs::remove_file(&socket);
            return None;
        }
        Some((socket, listener))
    })?;
    std::thread::Builder::new().name("opsai-sandbox-broker".into()).spawn(move || serve(&listener)).ok()?;
    Some(socket)
}

/// A directory only this user can enter, for the socket: the per-user runtime directory, else
/// `opsai-sandbox-UID` in the temp directory (made 0700 here, or refused when someone else made it
/// or left it open). Not opsai's home: a socket there is a file that backups and readers trip on.
fn private_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = nix::unistd::geteuid().as_raw();
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
        .map_or_else(|| std::env::temp_dir().join(format!("opsai-sandbox-{uid}")), |dir| dir.join("opsai"));
    // Created 0700 when missing; the checks below refuse one that was there already otherwise.
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&base);
    let meta = std::fs::symlink_metadata(&base).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.mode() & 0o077 == 0).then_some(base)
}

/// Sockets of opsai processes that are gone (nothing removes a socket when a process exits).
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("sandbox-")).and_then(|n| n.split('-').next()) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

struct Kept {
    ruleset: OwnedFd,
    built: Instant,
    /// Seconds since the epoch: the view's system part was computed [`CACHE_TTL`] before.
    expires: u64,
    generation: u64,
    cwd_modified: Option<SystemTime>,
    deny_present: Vec<bool>,
}

impl Kept {
    /// Whether this ruleset still describes the view: its system part younger than [`CACHE_TTL`],
    /// nothing run outside the sandbox since, the working directory itself unchanged, the same
    /// deny paths in existence.
    fn still_covers(&self, now: u64, generation: u64, cwd_modified: Option<SystemTime>, deny_present: &[bool]) -> bool {
        now < self.expires
            && self.generation == generation
            && self.cwd_modified == cwd_modified
            && self.deny_present == deny_present
    }
}

fn serve(listener: &UnixListener) {
    // The walk must see what the command will: without the capabilities that read past file modes
    // (the helper drops them before it walks). Per thread; without them nothing is brokered.
    for cap in [caps::Capability::CAP_DAC_OVERRIDE, caps::Capability::CAP_DAC_READ_SEARCH] {
        if caps::drop(None, caps::CapSet::Effective, cap).is_err() {
            return;
        }
    }
    let mut kept: HashMap<Vec<u8>, Kept> = HashMap::new();
    for stream in listener.incoming().flatten() {
        // A failed answer leaves that helper to build its own ruleset.
        let _ = answer(&stream, &mut kept);
    }
}

fn answer(stream: &UnixStream, kept: &mut HashMap<Vec<u8>, Kept>) -> std::io::Result<()> {
    let mut writer = stream;
    stream.set_read_timeout(Some(FETCH_TIMEOUT))?;
    stream.set_write_timeout(Some(FETCH_TIMEOUT))?;
    let peer = getsockopt(stream, sockopt::PeerCredentials)?;
    if peer.uid() != nix::unistd::geteuid().as_raw()
        || parent_of(peer.pid()) != Some(std::process::id())
        || std::fs::read_link(format!("/proc/{}/exe", peer.pid())).ok() != super::helper_path()
        || !u32::try_from(peer.pid()).is_ok_and(claim)
    {
        return Err(std::io::Error::other("not a helper this process started"));
    }
    let request = read_request(stream)?;
    let Some(Request { env, deny, terminals }) = decode(&request) else {
        return Err(std::io::Error::other("bad request"));
    };
    let cwd_modified = env.cwd.as_ref().and_then(|cwd| std::fs::metadata(cwd).and_then(|m| m.modified()).ok());
    // A deny path that did not exist when the view was walked was left out of it (the audit log
    // before its first line): once it exists, the view must be walked again to close it.
    let deny_present: Vec<bool> = deny.iter().map(|path| path.exists()).collect();
    let generation = GENERATION.load(Ordering::Relaxed);
    let now = super::view_cache::now();
    let fresh = kept.get(&request).is_some_and(|k| k.still_covers(now, generation, cwd_modified, &deny_present));
    if !fresh {
        kept.remove(&request);
        let built = Instant::now();
        let inputs = Inputs::gather_from(SandboxProfile::Strict, &deny, &env);
        match linux::prepare(SandboxProfile::Strict, &inputs, ProcGrant::Whole, &terminals) {
            Ok(prepared) => {
                // As old as its system part, which may come from a cache file written earlier.
                let expires = prepared.system_computed.saturating_add(CACHE_TTL.as_secs());
                let fd: Option<OwnedFd> = prepared.ruleset.into();
                if let Some(ruleset) = fd {
                    if kept.len() >= KEPT
                        && let Some(oldest) = kept.iter().min_by_key(|(_, k)| k.built).map(|(key, _)| key.clone())
                    {
                        kept.remove(&oldest);
                    }
                    kept.insert(
                        request.clone(),
                        Kept { ruleset, built, expires, generation, cwd_modified, deny_present },
                    );
                }
            }
            // The helper builds it itself and reports why it cannot.
            Err(_) => {
                writer.write_all(b"0")?;
                return Ok(());
            }
        }
    }
    let Some(entry) = kept.get(&request) else {
        writer.write_all(b"0")?;
        return Ok(());
    };
    let fds = [entry.ruleset.as_raw_fd()];
    sendmsg::<()>(
        stream.as_raw_fd(),
        &[std::io::IoSlice::new(b"1")],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )?;
    Ok(())
}

/// The parent pid of `pid` (field 4 of `/proc/PID/stat`, after the command name in parentheses).
fn parent_of(pid: i32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

fn read_request(stream: &UnixStream) -> std::io::Result<Vec<u8>> {
    let mut stream = stream;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
    if len > REQUEST_MAX {
        return Err(std::io::Error::other("request too large"));
    }
    let mut request = vec![0u8; len];
    stream.read_exact(&mut request)?;
    Ok(request)
}

/// Helper side: the ruleset for a process with `env`, the `deny` paths and `terminals` from
/// opsai's broker at `socket`; `None` when there is none to have (then the helper builds it).
pub(crate) fn fetch(socket: &Path, request: &Request) -> Option<OwnedFd> {
    let stream = UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(FETCH_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(FETCH_TIMEOUT)).ok()?;
    let peer = getsockopt(&stream, sockopt::PeerCredentials).ok()?;
    if peer.pid() != nix::unistd::getppid().as_raw() || peer.uid() != nix::unistd::geteuid().as_raw() {
        return None;
    }
    let request = encode(request);
    let len = u32::try_from(request.len()).ok()?;
    let mut writer = &stream;
    writer.write_all(&len.to_le_bytes()).ok()?;
    writer.write_all(&request).ok()?;
    let mut byte = [0u8; 1];
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let message = recvmsg::<()>(stream.as_raw_fd(), &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC).ok()?;
    let mut received = Vec::new();
    for cmsg in message.cmsgs().ok()? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            // SAFETY: the kernel just installed these descriptors in this process for this
            // message; nothing else owns them.
            #[allow(unsafe_code)]
            received.extend(fds.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }));
        }
    }
    if byte != *b"1" || received.len() != 1 {
        return None;
    }
    received.pop()
}

/// What a helper asks for: its view's raw inputs (the key of the kept ruleset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    pub env: Env,
    pub deny: Vec<PathBuf>,
    pub terminals: Vec<PathBuf>,
}

fn encode(request: &Request) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    let env = &request.env;
    let values = [
        (b'h', &env.home),
        (b'f', &env.histfile),
        (b'p', &env.path),
        (b'k', &env.kubeconfig),
        (b'd', &env.docker_config),
    ];
    for (tag, value) in values {
        if let Some(value) = value {
            field(&mut out, tag, value.as_bytes());
        }
    }
    if let Some(cwd) = &env.cwd {
        field(&mut out, b'C', cwd.as_os_str().as_bytes());
    }
    for (tag, paths) in [(b'D', &request.deny), (b'T', &request.terminals)] {
        for path in paths {
            field(&mut out, tag, path.as_os_str().as_bytes());
        }
    }
    out
}

fn field(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    out.extend_from_slice(bytes);
    out.push(0);
}

fn decode(bytes: &[u8]) -> Option<Request> {
    use std::os::unix::ffi::OsStringExt;
    let body = bytes.strip_prefix(MAGIC)?;
    let mut request = Request::default();
    for field in body.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let (tag, value) = field.split_first()?;
        let value = std::ffi::OsString::from_vec(value.to_vec());
        let path = || Some(PathBuf::from(&value)).filter(|p| p.is_absolute());
        let env = &mut request.env;
        match tag {
            b'h' => env.home = Some(value),
            b'f' => env.histfile = Some(value),
            b'p' => env.path = Some(value),
            b'k' => env.kubeconfig = Some(value),
            b'd' => env.docker_config = Some(value),
            b'C' if env.cwd.is_none() => env.cwd = Some(path()?),
            b'D' => request.deny.push(path()?),
            b'T' => request.terminals.push(path()?),
            _ => return None,
        }
    }
    Some(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_junk_is_refused() {
        let request = Request {
            env: Env {
                home: Some("/root".into()),
                histfile: None,
                path: Some("/usr/bin:/home/a b/bin".into()),
                kubeconfig: Some("/k1:/k2".into()),
                docker_config: None,
                cwd: Some(PathBuf::from("/srv/app")),
            },
            deny: vec![PathBuf::from("/root/.opsai"), PathBuf::from("/run/secrets")],
            terminals: vec![PathBuf::from("/dev/pts/3")],
        };
        assert_eq!(decode(&encode(&request)), Some(request));
        assert!(decode(b"opsai-broker-1\0D/x\0").is_none(), "another version");
        assert!(decode(b"opsai-broker-2\0Drelative\0").is_none(), "relative path");
        assert!(decode(b"opsai-broker-2\0X/x\0").is_none(), "unknown tag");
    }

    #[test]
    fn a_kept_ruleset_goes_stale_with_time_a_run_outside_or_a_changed_directory() {
        let ruleset = OwnedFd::from(std::fs::File::open("/dev/null").expect("open /dev/null"));
        let modified = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(5));
        let deny = vec![true, false];
        let kept = Kept {
            ruleset,
            built: Instant::now(),
            expires: 130,
            generation: 3,
            cwd_modified: modified,
            deny_present: deny.clone(),
        };
        assert!(kept.still_covers(129, 3, modified, &deny));
        assert!(!kept.still_covers(130, 3, modified, &deny), "30 s after the system part was computed");
        assert!(!kept.still_covers(100, 4, modified, &deny), "something ran with the user's rights");
        let later = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(6));
        assert!(!kept.still_covers(100, 3, later, &deny), "cwd changed");
        assert!(!kept.still_covers(100, 3, None, &deny), "cwd gone");
        assert!(!kept.still_covers(100, 3, modified, &[true, true]), "a deny path came into existence");
    }

    #[test]
    fn only_a_registered_pid_is_answered_and_only_once() {
        // A pid no helper has (beyond pid_max): registered here, not by a spawn elsewhere.
        let pid = 4_194_400;
        assert!(!claim(pid), "a process opsai did not start as a helper");
        expect(pid);
        assert!(claim(pid));
        assert!(!claim(pid), "a pid is answered once: a later connection of it is someone else's");
        // Registered while the connection waits (the spawn returns after the helper connected).
        let waiter = std::thread::spawn(move || claim(pid + 1));
        expect(pid + 1);
        assert!(waiter.join().unwrap_or(false));
    }

    #[test]
    fn the_parent_pid_is_read_past_a_command_name_with_parentheses() {
        assert_eq!(
            parent_of(i32::try_from(std::process::id()).unwrap_or(0)),
            Some(nix::unistd::getppid().as_raw() as u32)
        );
        assert_eq!(parent_of(-1), None);
    }
}
