//! [`SshFs`]: the file seam on an SSH host, through plain (no terminal) ssh calls: `realpath`,
//! `stat`, `head -c`, and [`replace_line`] for writes.
//!
//! A write keeps the guarantees of [`LocalFs`](crate::exec::fs::LocalFs): a target that is not a
//! regular file is refused; the content goes to a `mktemp` file beside the target and, once
//! `cksum` shows every byte arrived, that file gets the old file's owner (refused when it cannot
//! be kept) and mode, or `0644` minus the umask for a new file, is synced and renamed over the
//! target. A cut connection, a killed opsai or a call timeout leaves the remote `cat` with a short
//! file: the check fails, the temp file is removed (a trap), and the target is the old file.
//!
//! Every line runs in `sh -c`, whatever the remote login shell is.

use std::io;
use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;

use super::SshTransport;
use crate::exec::fs::{FileMeta, FileSystem, cksum, too_large};
use crate::policy::quote_word;

/// The exit status of the read line when the file is over the limit (its size on stderr).
const TOO_LARGE: i32 = 75;

/// The exit status of the write line when the target exists and is not a regular file.
const NOT_A_FILE: i32 = 76;

/// The host's files, through plain ssh calls.
pub struct SshFs {
    transport: SshTransport,
    home: Option<PathBuf>,
}

impl SshFs {
    pub fn new(transport: SshTransport, home: Option<PathBuf>) -> Self {
        Self { transport, home }
    }

    async fn run(&self, remote: &str, input: Option<&[u8]>) -> io::Result<Vec<u8>> {
        let output = self.transport.call(remote, input).await?;
        if output.status.success() {
            return Ok(output.stdout);
        }
        Err(self.failure(&output.stderr))
    }

    fn failure(&self, stderr: &[u8]) -> io::Error {
        let stderr = String::from_utf8_lossy(stderr).trim().to_owned();
        let kind = if stderr.contains("No such file") { io::ErrorKind::NotFound } else { io::ErrorKind::Other };
        io::Error::new(kind, format!("on {}: {}", self.transport.host(), stderr))
    }
}

fn path_word(path: &Path) -> String {
    quote_word(&path.to_string_lossy())
}

/// `line` (POSIX sh) as a line for the remote login shell, which sshd runs it with: that shell
/// may be zsh, ksh93 or mksh, which read `0644` as decimal in `$(( ))` (a new file would get mode
/// 1200) and differ from sh elsewhere too, so every file line runs in `sh`.
fn in_sh(line: &str) -> String {
    format!("sh -c {}", quote_word(line))
}

/// The remote line that reads `path` when it is at most `limit` bytes; over it, the exit status
/// is [`TOO_LARGE`] with the size on stderr.
fn read_line(path: &Path, limit: u64) -> String {
    let word = path_word(path);
    in_sh(&format!(
        "s=$(stat -L -c %s -- {word}) || exit 1; \
         if [ \"$s\" -gt {limit} ]; then echo \"$s\" >&2; exit {TOO_LARGE}; fi; \
         exec head -c {} -- {word}",
        limit.saturating_add(1)
    ))
}

/// The remote line that replaces `path` with exactly `content` (sent on its stdin): old or new,
/// never a mix, and no temp file left behind when it fails. A `path` that exists and is not a
/// regular file (a directory, a symlink to one, a device) is refused with [`NOT_A_FILE`], as on
/// this machine: `mv` would move the new file into a directory.
///
/// The content is written and checked before the temp file gets the old owner and mode: a mode
/// without write permission (0444) would stop `cat`, and a write by a non-root user clears the
/// set-uid and set-gid bits; `chown` clears them too, so `chmod` comes last.
pub(crate) fn replace_line(path: &Path, content: &[u8]) -> String {
    let word = path_word(path);
    let dir = path_word(path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("/")));
    let expected = cksum(content);
    in_sh(&format!(
        "t=; trap '[ -z \"$t\" ] || rm -f -- \"$t\"' EXIT; trap 'exit 1' HUP INT TERM PIPE; \
         if [ -e {word} ] && [ ! -f {word} ]; then \
           printf '%s is not a regular file; it is left as it is\\n' {word} >&2; exit {NOT_A_FILE}; \
         fi; \
         o=; if [ -e {word} ]; then \
           o=$(stat -L -c %u:%g -- {word}) && m=$(stat -L -c %a -- {word}) || exit 1; \
         else m=$(printf %o $(( 0644 & ~$(umask) ))); fi; \
         t=$(mktemp {word}.opsai.XXXXXX) || exit 1; \
         cat > \"$t\" || exit 1; \
         c=$(cksum < \"$t\") || exit 1; \
         if [ \"$c\" != '{expected}' ]; then \
           printf '%s did not arrive whole (cksum %s, sent %s); it is unchanged\\n' \
             \"the new content of \"{word} \"$c\" '{expected}' >&2; exit 1; \
         fi; \
         if [ -n \"$o\" ] && [ \"$(stat -c %u:%g -- \"$t\")\" != \"$o\" ] && ! chown -- \"$o\" \"$t\" 2>/dev/null; then \
           printf '%s belongs to uid %s gid %s, and a new copy could not keep that owner; change it as its owner\\n' \
             {word} \"${{o%:*}}\" \"${{o#*:}}\" >&2; exit 1; \
         fi; \
         chmod -- \"$m\" \"$t\" || exit 1; \
         sync -- \"$t\" 2>/dev/null || sync; \
         mv -f -- \"$t\" {word} || exit 1; t=; \
         sync -- {dir} 2>/dev/null || sync"
    ))
}

impl FileSystem for SshFs {
    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>> {
        Box::pin(async move {
            // -m: symlinks in the existing part are resolved; a new file's name is appended.
            let out = self.run(&in_sh(&format!("realpath -m -- {}", path_word(path))), None).await?;
            let text = String::from_utf8_lossy(&out).trim_end_matches('\n').to_owned();
            Ok(PathBuf::from(text))
        })
    }

    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Option<FileMeta>>> {
        Box::pin(async move {
            let word = path_word(path);
            let line = format!("if [ -e {word} ]; then stat -L -c '%s %a %u %g %F' -- {word}; fi");
            let out = self.run(&in_sh(&line), None).await?;
            let text = String::from_utf8_lossy(&out).trim().to_owned();
            if text.is_empty() {
                return Ok(None);
            }
            parse_stat(&text).map(Some).ok_or_else(|| io::Error::other(format!("unexpected stat output: {text}")))
        })
    }

    fn read<'a>(&'a self, path: &'a Path, limit: u64) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move {
            let output = self.transport.call(&read_line(path, limit), None).await?;
            if output.status.code() == Some(TOO_LARGE) {
                let size = String::from_utf8_lossy(&output.stderr).trim().parse().unwrap_or(limit.saturating_add(1));
                return Err(too_large(path, size, limit));
            }
            if !output.status.success() {
                return Err(self.failure(&output.stderr));
            }
            // It grew between stat and head.
            if output.stdout.len() as u64 > limit {
                return Err(too_large(path, output.stdout.len() as u64, limit));
            }
            Ok(output.stdout)
        })
    }

    fn replace<'a>(&'a self, path: &'a Path, content: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let output = self.transport.call(&replace_line(path, content), Some(content)).await?;
            if output.status.success() {
                return Ok(());
            }
            let error = self.failure(&output.stderr);
            if output.status.code() == Some(NOT_A_FILE) {
                // The same kind as this machine's refusal (`LocalFs::replace_now`).
                return Err(io::Error::new(io::ErrorKind::InvalidInput, error.to_string()));
            }
            Err(error)
        })
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move { self.run(&in_sh(&format!("rm -f -- {}", path_word(path))), None).await.map(drop) })
    }

    fn home(&self) -> Option<PathBuf> {
        self.home.clone()
    }
}

/// `size mode uid gid type…` from `stat -c '%s %a %u %g %F'`.
fn parse_stat(text: &str) -> Option<FileMeta> {
    let mut words = text.split_whitespace();
    let size = words.next()?.parse().ok()?;
    let mode = u32::from_str_radix(words.next()?, 8).ok()?;
    let uid = words.next()?.parse().ok()?;
    let gid = words.next()?.parse().ok()?;
    let kind: Vec<&str> = words.collect();
    Some(FileMeta {
        size,
        mode,
        uid,
        gid,
        is_file: kind.join(" ") == "regular file" || kind.join(" ") == "regular empty file",
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn stat_output_is_parsed() {
        assert_eq!(
            parse_stat("12 755 1000 1000 regular file"),
            Some(FileMeta { size: 12, mode: 0o755, uid: 1000, gid: 1000, is_file: true })
        );
        assert!(!parse_stat("4096 700 0 0 directory").unwrap().is_file);
        assert!(parse_stat("garbage").is_none());
    }

    /// Runs `line` in `sh` (a remote login shell) with `input` on its stdin.
    fn sh(line: &str, input: &[u8]) -> std::process::Output {
        shell("sh", line, input)
    }

    /// Runs `line` in the login shell `shell` with `input` on its stdin.
    fn shell(shell: &str, line: &str, input: &[u8]) -> std::process::Output {
        feed(Command::new(shell).args(["-c", line]), input)
    }

    /// Runs `command` with `input` on its stdin and collects its output.
    fn feed(command: &mut Command, input: &[u8]) -> std::process::Output {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let _ = child.stdin.take().unwrap().write_all(input);
        child.wait_with_output().unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_cut_short_transfer_keeps_the_old_file_and_removes_the_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my file.txt");
        std::fs::write(&path, "old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        let new = b"new content, longer than what arrives\n".repeat(100);
        // The stdin ends early, as when opsai is killed or the call times out mid-transfer.
        let out = sh(&replace_line(&path, &new), &new[..1000]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("did not arrive whole") && stderr.contains("it is unchanged"), "{stderr}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old\n");
        assert_eq!(names(dir.path()), ["my file.txt"], "no temp file left");
        // The same bytes, whole: replaced, mode kept, nothing left over.
        let out = sh(&replace_line(&path, &new), &new);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read(&path).unwrap(), new);
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o7777, 0o751);
        assert_eq!(names(dir.path()), ["my file.txt"]);
    }

    #[test]
    fn a_new_file_gets_0644_minus_the_umask_whatever_the_login_shell() {
        let dir = tempfile::tempdir().unwrap();
        // zsh (like ksh93 and mksh) reads `0644` in `$(( ))` as decimal: mode 1200 unless the
        // line runs in sh.
        let shells: Vec<&str> = ["sh", "zsh", "bash", "mksh", "ksh93"]
            .into_iter()
            .filter(|s| Command::new(s).arg("-c").arg(":").status().is_ok_and(|st| st.success()))
            .collect();
        assert!(shells.contains(&"sh"));
        for login in shells {
            for (umask, mode) in [("022", 0o644), ("077", 0o600), ("027", 0o640)] {
                let path = dir.path().join(format!("new-{login}-{umask}"));
                let out = shell(login, &format!("umask {umask}; {}", replace_line(&path, b"x")), b"x");
                assert!(out.status.success(), "{login}: {}", String::from_utf8_lossy(&out.stderr));
                assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o7777, mode, "{login}, umask {umask}");
            }
        }
    }

    #[test]
    fn the_read_line_runs_under_zsh_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("it's here");
        std::fs::write(&path, "abc").unwrap();
        for login in ["sh", "zsh"] {
            if Command::new(login).arg("-c").arg(":").status().is_err() {
                continue;
            }
            let out = shell(login, &read_line(&path, 2), b"");
            assert_eq!(out.status.code(), Some(TOO_LARGE), "{login}");
            let out = shell(login, &read_line(&path, 3), b"");
            assert_eq!(out.stdout, b"abc", "{login}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }

    #[test]
    fn a_target_that_is_not_a_regular_file_is_refused_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub dir");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("inside"), "kept").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&sub, &link).unwrap();
        for target in [&sub, &link] {
            let out = sh(&replace_line(target, b"new\n"), b"new\n");
            assert_eq!(out.status.code(), Some(NOT_A_FILE), "{}", String::from_utf8_lossy(&out.stderr));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(stderr.trim(), format!("{} is not a regular file; it is left as it is", target.display()));
        }
        assert_eq!(names(&sub), ["inside"], "nothing moved into the directory");
        assert_eq!(names(dir.path()), ["link", "sub dir"], "no temp file left");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    /// Runs `line` as uid/gid 65534 (root only: `setpriv`) with `input` on its stdin.
    fn as_nobody(line: &str, input: &[u8]) -> std::process::Output {
        feed(
            Command::new("setpriv").args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", line]),
            input,
        )
    }

    fn is_root() -> bool {
        std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(1) == 0
    }

    #[test]
    fn an_unprivileged_writer_replaces_its_own_read_only_or_set_uid_file_keeping_the_mode() {
        if !is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        for mode in [0o444, 0o400, 0o4755, 0o2755] {
            let path = dir.path().join(format!("mine-{mode:o}"));
            std::fs::write(&path, "old\n").unwrap();
            std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let out = as_nobody(&replace_line(&path, b"new\n"), b"new\n");
            assert!(out.status.success(), "{mode:o}: {}", String::from_utf8_lossy(&out.stderr));
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
            assert_eq!((meta.uid(), meta.mode() & 0o7777), (65534, mode), "owner and mode kept");
        }
        assert!(names(dir.path()).iter().all(|n| !n.contains(".opsai.")), "no temp file left");
    }

    #[test]
    fn an_owner_that_cannot_be_kept_is_a_refusal() {
        if !is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let path = dir.path().join("theirs.conf");
        std::fs::write(&path, "old\n").unwrap();
        std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
        // An unprivileged writer (uid 65534) cannot give its copy to uid 4242.
        let line = replace_line(&path, b"new\n");
        let mut child = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", &line])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(b"new\n");
        let out = child.wait_with_output().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("belongs to uid 4242 gid 4242, and a new copy could not keep that owner"), "{stderr}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old\n");
        assert_eq!(names(dir.path()), ["theirs.conf"], "no temp file left");
    }

    #[test]
    fn the_read_line_reports_an_oversized_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        let out = sh(&read_line(&path, 99), b"");
        assert_eq!(out.status.code(), Some(TOO_LARGE));
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "100");
        let out = sh(&read_line(&path, 100), b"");
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 100);
    }
}
