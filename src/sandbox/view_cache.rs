//! The system part of the read view, kept for [`CACHE_TTL`] in `$OPSAI_HOME/cache/`, so a
//! sandboxed command does not walk `/etc`, `/var` and `/opt` every time (that walk costs
//! milliseconds; reading this file costs tens of microseconds). One file per user; its key is the
//! hash of what the view was computed from ([`super::view::Inputs::system_key`]), so a different
//! home, `PATH` or deny list computes it again. The file is inside opsai's home, which no sandboxed
//! command can read or write; it is replaced atomically (temp file, rename).

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::paths::Grants;
use super::view::CACHE_TTL;

const MAGIC: &[u8] = b"opsai-view-1";

/// One file per user and profile, so the agent's commands and `opsai explain`'s tools do not
/// replace each other's view.
fn file(profile: &str) -> Option<PathBuf> {
    let paths = crate::home::Paths::from_env().ok()?;
    Some(paths.cache_dir().join(format!("sandbox-view-{}-{profile}", nix::unistd::geteuid().as_raw())))
}

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The cached view for `key`, when it is younger than [`CACHE_TTL`], and when it was computed
/// (seconds since the epoch).
pub(crate) fn load(profile: &str, key: u64) -> Option<(Grants, u64)> {
    let bytes = std::fs::read(file(profile)?).ok()?;
    decode(&bytes, key, now(), CACHE_TTL)
}

/// Saves `grants` for `key`; a failure (read-only home, full disk) only costs the next walk.
pub(crate) fn store(profile: &str, key: u64, grants: &Grants) {
    let Some(path) = file(profile) else { return };
    let Some(dir) = path.parent() else { return };
    // Private: the file lists which paths are readable, and the cache sits beside opsai's state.
    if crate::home::create_private_dir(dir).is_err() {
        return;
    }
    let temp = dir.join(format!(".sandbox-view-{profile}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(&encode(grants, key, now()))?;
        file.sync_all()
    });
    if written.is_err() || std::fs::rename(&temp, &path).is_err() {
        let _ = std::fs::remove_file(&temp);
    }
}

fn encode(grants: &Grants, key: u64, at: u64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(format!("\0{key:016x}\0{at}\0").as_bytes());
    for (tag, paths) in [(b'R', &grants.read), (b'F', &grants.read_files), (b'L', &grants.list)] {
        for path in paths {
            out.push(tag);
            out.extend_from_slice(path.as_os_str().as_bytes());
            out.push(0);
        }
    }
    out
}

fn decode(bytes: &[u8], key: u64, now: u64, ttl: Duration) -> Option<(Grants, u64)> {
    let mut fields = bytes.split(|b| *b == 0);
    if fields.next()? != MAGIC {
        return None;
    }
    if fields.next()? != format!("{key:016x}").as_bytes() {
        return None;
    }
    let at: u64 = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    if at > now || now - at >= ttl.as_secs() {
        return None;
    }
    let mut grants = Grants::default();
    for field in fields {
        let Some((tag, path)) = field.split_first() else { continue };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(path));
        if !path.is_absolute() {
            return None;
        }
        match tag {
            b'R' => grants.read.push(path),
            b'F' => grants.read_files.push(path),
            b'L' => grants.list.push(path),
            _ => return None,
        }
    }
    Some((grants, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_round_trips_and_expires() {
        let grants = Grants {
            read: vec![PathBuf::from("/usr"), PathBuf::from("/etc/a b")],
            read_files: vec![PathBuf::from("/etc/hostname")],
            list: vec![PathBuf::from("/"), PathBuf::from("/etc")],
        };
        let bytes = encode(&grants, 7, 1000);
        assert_eq!(decode(&bytes, 7, 1001, CACHE_TTL), Some((grants, 1000)));
        assert_eq!(decode(&bytes, 8, 1001, CACHE_TTL), None, "another key");
        assert_eq!(decode(&bytes, 7, 1000 + CACHE_TTL.as_secs(), CACHE_TTL), None, "expired");
        assert_eq!(decode(&bytes, 7, 999, CACHE_TTL), None, "from the future");
        assert_eq!(decode(b"garbage", 7, 1001, CACHE_TTL), None);
        let mut bad = encode(&Grants::default(), 7, 1000);
        bad.extend_from_slice(b"Rrelative\0");
        assert_eq!(decode(&bad, 7, 1001, CACHE_TTL), None);
    }
}
