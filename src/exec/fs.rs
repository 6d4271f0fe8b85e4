//! The file seam the file tools use: the same operations on this machine ([`LocalFs`]) and on an
//! SSH host (`exec::ssh`). Paths are absolute. Errors are `io::Error`s whose text says what failed.

use std::io;
use std::path::{Path, PathBuf};

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

    /// The user's home directory on that machine.
    fn home(&self) -> Option<PathBuf>;
}

/// This machine's files.
#[derive(Debug, Clone, Default)]
pub struct LocalFs;

impl FileSystem for LocalFs {
    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>> {
        Box::pin(async move { Err(io::Error::other(format!("not implemented yet: {}", path.display()))) })
    }

    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Option<FileMeta>>> {
        Box::pin(async move { Err(io::Error::other(format!("not implemented yet: {}", path.display()))) })
    }

    fn read<'a>(&'a self, path: &'a Path, _limit: u64) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move { Err(io::Error::other(format!("not implemented yet: {}", path.display()))) })
    }

    fn replace<'a>(&'a self, path: &'a Path, _content: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move { Err(io::Error::other(format!("not implemented yet: {}", path.display()))) })
    }

    fn home(&self) -> Option<PathBuf> {
        std::env::var_os("HOME").map(PathBuf::from)
    }
}
