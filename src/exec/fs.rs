//! The file seam the file tools use: the same operations on this machine ([`LocalFs`]) and on an
//! SSH host (`exec::ssh`). Paths are absolute. Errors are `io::Error`s whose text says what failed.
//!
//! [`LocalFs::replace`] is the one write path: a temp file `.NAME.opsai-PID-N.tmp` beside the
//! target, written and fsynced, given the old file's mode and owner, renamed over the target, and
//! the directory fsynced. A `kill -9` before the rename leaves that temp file behind (the target is
//! untouched); the next `replace` of the same file removes temp files whose process is gone.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;

/// What the file tools need to know about an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    pub size: u64,
    /// Permission bits (`0o755`).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// A regular file (not a directory, device, socket, …).
    pub is_file: bool,
}

pub trait FileSystem: Send + Sync {
    /// The canonical absolute path, every symlink resolved. For a path that does not exist yet,
    /// its parent directory is resolved and the file name appended (the parent must exist).
    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>>;

    /// `Ok(None)` when nothing exists at `path`.
    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Option<FileMeta>>>;

    /// The whole file; fails when it is larger than `limit` bytes.
    fn read<'a>(&'a self, path: &'a Path, limit: u64) -> BoxFuture<'a, io::Result<Vec<u8>>>;

    /// Replaces `path` with `content` atomically: a temp file in the same directory, fsync, rename.
    /// An existing file's mode and owner are kept; a new file gets `0o644` minus the umask. A crash
    /// at any moment leaves the old or the new file, never a mix.
    fn replace<'a>(&'a self, path: &'a Path, content: &'a [u8]) -> BoxFuture<'a, io::Result<()>>;

    /// Removes the file; nothing there is not an error (undo of a change that created it).
    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>>;

    /// The user's home directory on that machine.
    fn home(&self) -> Option<PathBuf>;
}

/// This machine's files. The trait methods run the blocking calls below on tokio's blocking
/// threads; `opsai undo`, which has no runtime, calls the blocking ones directly.
#[derive(Debug, Clone, Default)]
pub struct LocalFs;

/// Temp files of one process get distinct names even within one nanosecond.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);
/// The marker between the target's name and the writer's pid in a temp file's name.
const TEMP_MARK: &str = ".opsai-";

impl LocalFs {
    /// Blocking [`FileSystem::canonicalize`].
    pub(crate) fn canonicalize_now(path: &Path) -> io::Result<PathBuf> {
        match std::fs::canonicalize(path) {
            Ok(found) => Ok(found),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(path).is_ok() {
                    // A dangling symlink: where a write would land is not what the checks would see.
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "{} is a symbolic link to a missing file; give the link's target instead",
                            path.display()
                        ),
                    ));
                }
                let name = path.file_name().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, format!("{} does not name a file", path.display()))
                })?;
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                let parent = std::fs::canonicalize(parent).map_err(|err| {
                    io::Error::new(err.kind(), format!("directory {} does not exist: {err}", parent.display()))
                })?;
                Ok(parent.join(name))
            }
            Err(err) => Err(io::Error::new(err.kind(), format!("cannot resolve {}: {err}", path.display()))),
        }
    }

    /// Blocking [`FileSystem::metadata`] (symlinks followed).
    pub(crate) fn metadata_now(path: &Path) -> io::Result<Option<FileMeta>> {
        match std::fs::metadata(path) {
            Ok(meta) => Ok(Some(FileMeta {
                size: meta.len(),
                mode: meta.mode() & 0o7777,
                uid: meta.uid(),
                gid: meta.gid(),
                is_file: meta.is_file(),
            })),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(io::Error::new(err.kind(), format!("cannot inspect {}: {err}", path.display()))),
        }
    }

    /// Blocking [`FileSystem::read`]: at most `limit` bytes, else a `FileTooLarge` error.
    pub fn read_now(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let context = |err: io::Error| io::Error::new(err.kind(), format!("cannot read {}: {err}", path.display()));
        let file = File::open(path).map_err(context)?;
        let too_large = |size: u64| too_large(path, size, limit);
        let size = file.metadata().map_err(context)?.len();
        if size > limit {
            return Err(too_large(size));
        }
        // The size can change (or lie, for /proc files) between stat and read: read one byte past the limit.
        let mut content = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.take(limit.saturating_add(1)).read_to_end(&mut content).map_err(context)?;
        if content.len() as u64 > limit {
            return Err(too_large(content.len() as u64));
        }
        Ok(content)
    }

    /// Blocking [`FileSystem::replace`].
    pub(crate) fn replace_now(path: &Path, content: &[u8]) -> io::Result<()> {
        // A file written now may be one an earlier sandbox view did not see: views prepared
        // before it are stale, and so are those prepared while it is written.
        crate::sandbox::invalidate_prepared();
        let replaced = Self::replace_unmarked(path, content);
        crate::sandbox::invalidate_prepared();
        replaced
    }

    fn replace_unmarked(path: &Path, content: &[u8]) -> io::Result<()> {
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{} does not name a file", path.display()))
        })?;
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let existing = match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a regular file; it is left as it is", path.display()),
                ));
            }
            Ok(meta) => Some(meta),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(io::Error::new(err.kind(), format!("cannot inspect {}: {err}", path.display()))),
        };
        let prefix = format!(".{}{TEMP_MARK}", name.to_string_lossy());
        remove_stale_temps(dir, &prefix);
        let (temp_path, file) = create_temp(dir, &prefix)?;
        let written = fill_temp(&file, content, existing.as_ref(), path);
        drop(file);
        if let Err(err) = written.and_then(|()| {
            std::fs::rename(&temp_path, path)
                .map_err(|err| io::Error::new(err.kind(), format!("cannot replace {}: {err}", path.display())))
        }) {
            let _ = std::fs::remove_file(&temp_path);
            return Err(err);
        }
        // The rename is durable only once the directory entry is on disk.
        File::open(dir).and_then(|dir| dir.sync_all()).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("{} was replaced, but syncing {} failed: {err}", path.display(), dir.display()),
            )
        })
    }
}

/// The refusal of a file over the read limit, the same on this machine and on an SSH host.
pub(crate) fn too_large(path: &Path, size: u64, limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("{} is {size} bytes, over the limit of {limit} bytes (files.max_size_mb)", path.display()),
    )
}

/// POSIX `cksum` of `data` (CRC-32, polynomial 0x04C11DB7, the length appended), as the command
/// prints it without a file name: `CRC SIZE`. Every POSIX host has `cksum`, so a remote write can
/// check what arrived, and the backup journal records what a change wrote.
pub(crate) fn cksum(data: &[u8]) -> String {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut crc = (i as u32) << 24;
            let mut bit = 0;
            while bit < 8 {
                crc = if crc & 0x8000_0000 != 0 { (crc << 1) ^ 0x04C1_1DB7 } else { crc << 1 };
                bit += 1;
            }
            table[i] = crc;
            i += 1;
        }
        table
    };
    let step = |crc: u32, byte: u8| (crc << 8) ^ TABLE[usize::from((crc >> 24) as u8 ^ byte)];
    let mut crc = data.iter().fold(0u32, |crc, &byte| step(crc, byte));
    let mut len = data.len() as u64;
    while len != 0 {
        crc = step(crc, len as u8);
        len >>= 8;
    }
    format!("{} {}", !crc, data.len())
}

/// A new temp file in `dir`, never an existing one (`create_new`), `0o644` minus the umask.
fn create_temp(dir: &Path, prefix: &str) -> io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let candidate = dir.join(format!("{prefix}{pid}-{n}.tmp"));
        match OpenOptions::new().write(true).create_new(true).mode(0o644).open(&candidate) {
            Ok(file) => return Ok((candidate, file)),
            // Left by an earlier process with the same pid: try the next number.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => {
                return Err(io::Error::new(
                    err.kind(),
                    format!(
                        "cannot create a temporary file in {}: {err}; the directory must be writable",
                        dir.display()
                    ),
                ));
            }
        }
    }
}

/// Owner first (chown clears set-id bits), then mode, then the content, then fsync.
fn fill_temp(mut file: &File, content: &[u8], existing: Option<&std::fs::Metadata>, path: &Path) -> io::Result<()> {
    if let Some(old) = existing {
        let temp = file.metadata()?;
        if temp.uid() != old.uid() || temp.gid() != old.gid() {
            std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!(
                        "{} belongs to uid {} gid {}, and a new copy could not keep that owner ({err}); \
                         change it as its owner",
                        path.display(),
                        old.uid(),
                        old.gid()
                    ),
                )
            })?;
        }
        file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))?;
    }
    file.write_all(content)
        .and_then(|()| file.sync_all())
        .map_err(|err| io::Error::new(err.kind(), format!("cannot write a new copy of {}: {err}", path.display())))
}

/// Removes `PREFIX<pid>-<n>.tmp` files in `dir` whose writer is no longer running (killed mid-write).
fn remove_stale_temps(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)).and_then(|r| r.strip_suffix(".tmp")) else {
            continue;
        };
        let Some(pid) = rest.split_once('-').and_then(|(pid, _)| pid.parse::<i32>().ok()).filter(|pid| *pid > 0) else {
            continue;
        };
        let gone =
            matches!(nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None), Err(nix::errno::Errno::ESRCH));
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl FileSystem for LocalFs {
    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>> {
        let path = path.to_owned();
        Box::pin(blocking(move || Self::canonicalize_now(&path)))
    }

    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Option<FileMeta>>> {
        let path = path.to_owned();
        Box::pin(blocking(move || Self::metadata_now(&path)))
    }

    fn read<'a>(&'a self, path: &'a Path, limit: u64) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        let path = path.to_owned();
        Box::pin(blocking(move || Self::read_now(&path, limit)))
    }

    fn replace<'a>(&'a self, path: &'a Path, content: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        let (path, content) = (path.to_owned(), content.to_vec());
        Box::pin(blocking(move || Self::replace_now(&path, &content)))
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        let path = path.to_owned();
        Box::pin(blocking(move || match std::fs::remove_file(&path) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }))
    }

    fn home(&self) -> Option<PathBuf> {
        std::env::var_os("HOME").map(PathBuf::from)
    }
}

/// Runs file I/O on tokio's blocking threads (fsync can take a while), never on the runtime.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> io::Result<T> + Send + 'static) -> io::Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|err| io::Error::other(format!("file operation failed: {err}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonicalize_resolves_symlinks_and_new_files() {
        let dir = tempfile::tempdir().unwrap();
        let real = LocalFs::canonicalize_now(dir.path()).unwrap();
        std::fs::create_dir(real.join("sub")).unwrap();
        std::os::unix::fs::symlink(real.join("sub"), real.join("link")).unwrap();
        assert_eq!(LocalFs::canonicalize_now(&real.join("link/new.txt")).unwrap(), real.join("sub/new.txt"));
        assert_eq!(LocalFs::canonicalize_now(&real.join("sub/../sub/x.sh")).unwrap(), real.join("sub/x.sh"));
        assert!(LocalFs::canonicalize_now(&real.join("missing/x.sh")).is_err(), "the parent must exist");
        std::os::unix::fs::symlink(real.join("nowhere"), real.join("dangling")).unwrap();
        assert!(LocalFs::canonicalize_now(&real.join("dangling")).is_err());
    }

    #[test]
    fn metadata_is_none_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(LocalFs::metadata_now(&dir.path().join("none")).unwrap(), None);
        std::fs::write(dir.path().join("f"), "abc").unwrap();
        let meta = LocalFs::metadata_now(&dir.path().join("f")).unwrap().unwrap();
        assert!(meta.is_file);
        assert_eq!(meta.size, 3);
        assert!(!LocalFs::metadata_now(dir.path()).unwrap().unwrap().is_file);
    }

    #[test]
    fn read_refuses_files_over_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        assert_eq!(LocalFs::read_now(&path, 100).unwrap().len(), 100);
        let err = LocalFs::read_now(&path, 99).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
        assert!(err.to_string().contains("over the limit of 99 bytes"), "{err}");
    }

    #[test]
    fn cksum_matches_the_posix_command() {
        for data in [&b""[..], b"a", b"echo 1\n", &[0xffu8; 300][..], &vec![7u8; 70_000][..]] {
            let mut child = std::process::Command::new("cksum")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(data).unwrap();
            let out = child.wait_with_output().unwrap();
            assert_eq!(cksum(data), String::from_utf8_lossy(&out.stdout).trim(), "{} bytes", data.len());
        }
    }

    #[test]
    fn replace_keeps_the_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.sh");
        std::fs::write(&path, "echo 1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        LocalFs::replace_now(&path, b"echo 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 2\n");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o7777, 0o751);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.sh")]);
        LocalFs::replace_now(&dir.path().join("new.txt"), b"new").unwrap();
        let mode = std::fs::metadata(dir.path().join("new.txt")).unwrap().mode();
        assert_eq!(mode & 0o600, 0o600, "a new file is readable and writable by its owner");
    }

    #[test]
    fn replace_removes_temps_of_dead_writers_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        // A pid far above pid_max is never running; this process's own temp stays.
        let dead = dir.path().join(".f.txt.opsai-2147483646-0.tmp");
        let alive = dir.path().join(format!(".f.txt.opsai-{}-999999.tmp", std::process::id()));
        std::fs::write(&dead, "half").unwrap();
        std::fs::write(&alive, "busy").unwrap();
        LocalFs::replace_now(&path, b"whole").unwrap();
        assert!(!dead.exists());
        assert!(alive.exists());
    }

    #[test]
    fn a_refused_replace_keeps_the_old_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("f.txt"), "old").unwrap();
        assert!(LocalFs::replace_now(&dir.path().join("d"), b"x").is_err(), "a directory is not replaced");
        assert!(LocalFs::replace_now(&dir.path().join("f.txt/x"), b"x").is_err(), "a file is not a directory");
        let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["d", "f.txt"]);
        assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), "old");
    }
}
