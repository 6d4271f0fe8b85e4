//! Whether the sandbox can be applied here, found out by applying it in a child once per process
//! (`ENTRY --probe`), so the answer cannot drift from what a command gets; and which helper
//! executable commands are started with (the small one beside opsai when it is of this build).

#[cfg(target_os = "linux")]
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::sync::atomic::Ordering;

use super::Availability;
#[cfg(target_os = "linux")]
use super::{
    BUILD, ENTRY, HELPER, HELPER_FILE, PER_PID_FLAG, PROBE_OK, PROC_PER_PID, SandboxProfile, limits, settings,
};
#[cfg(target_os = "macos")]
use super::{SandboxProfile, seatbelt};

#[cfg(target_os = "linux")]
pub(super) fn probe() -> Availability {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => return Availability::Unavailable(format!("cannot find opsai's own executable: {err}")),
    };
    // The helper is opsai itself: after an upgrade replaced the file, the running process has no
    // executable of its own version left to start (and must not start another version's).
    if exe.as_os_str().to_string_lossy().ends_with(" (deleted)") {
        return Availability::Unavailable(
            "opsai's executable was replaced or deleted since this process started; start opsai again".into(),
        );
    }
    // The small helper beside opsai when it is of this build and works; opsai itself otherwise.
    let small = helper_executable(&exe);
    let mut found = None;
    for helper in small.iter().chain(std::iter::once(&exe)) {
        let available = probe_helper(helper);
        if let Availability::Available(details) = &available {
            let _ = HELPER.set(helper.clone());
            return Availability::Available(format!("{details}; helper: {}", helper.display()));
        }
        found.get_or_insert(available);
    }
    found.unwrap_or_else(|| Availability::Unavailable("the sandbox probe did not run".into()))
}

/// The small helper executable beside `exe` (`cargo install` and the packages install both), if
/// there is one that only opsai's owner can have put there.
#[cfg(target_os = "linux")]
fn helper_executable(exe: &std::path::Path) -> Option<PathBuf> {
    // Canonical, as `/proc/PID/exe` names it (the broker compares the two).
    use std::os::unix::fs::MetadataExt;
    let helper = std::fs::canonicalize(exe.with_file_name(HELPER_FILE)).ok()?;
    let meta = std::fs::metadata(&helper).ok()?;
    // Installed with opsai: the same owner, writable by no one else (whoever could replace it
    // would choose what every command's sandbox is).
    let owner = std::fs::metadata(exe).ok()?.uid();
    let trusted = meta.uid() == owner && meta.mode() & 0o022 == 0;
    (meta.is_file() && meta.mode() & 0o111 != 0 && trusted).then_some(helper)
}

#[cfg(target_os = "linux")]
fn probe_helper(exe: &std::path::Path) -> Availability {
    // The cheap way first (/proc whole, Landlock's ptrace scoping closes other processes'
    // `environ`); where that does not hold, one path rule per process.
    let scoped = probe_with(exe, &[]);
    if matches!(scoped, Availability::Available(_)) {
        return scoped;
    }
    let per_pid = probe_with(exe, &[PER_PID_FLAG]);
    if matches!(per_pid, Availability::Available(_)) {
        PROC_PER_PID.store(true, Ordering::Relaxed);
        return per_pid;
    }
    scoped
}

#[cfg(target_os = "linux")]
fn probe_with(exe: &std::path::Path, flags: &[&str]) -> Availability {
    let output = std::process::Command::new(exe)
        .args([ENTRY, "--probe"])
        .args(flags)
        .arg(limits::FLAG)
        .arg(limits::encode(&settings().limits))
        .arg(SandboxProfile::Strict.as_str())
        .stdin(std::process::Stdio::null())
        .output();
    match output {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            match stdout.strip_prefix(PROBE_OK).map(str::trim_start).and_then(|rest| rest.strip_prefix(BUILD)) {
                Some(details) if out.status.success() => Availability::Available(details.trim().to_owned()),
                None if out.status.success() && stdout.starts_with(PROBE_OK) => Availability::Unavailable(format!(
                    "{} is of another build than this opsai ({BUILD}); install both from one build",
                    exe.display()
                )),
                _ => {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let reason = stderr.trim().trim_start_matches("opsai sandbox: ").trim();
                    Availability::Unavailable(if reason.is_empty() {
                        format!("the sandbox probe failed ({})", out.status)
                    } else {
                        reason.to_owned()
                    })
                }
            }
        }
        Err(err) => Availability::Unavailable(format!("cannot start the sandbox probe: {err}")),
    }
}

#[cfg(target_os = "macos")]
pub(super) fn probe() -> Availability {
    let works = std::process::Command::new(seatbelt::SANDBOX_EXEC)
        .arg("-p")
        .arg(seatbelt::profile(SandboxProfile::Strict, &[]))
        .arg("/usr/bin/true")
        .stdin(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if works {
        Availability::Available("macOS Seatbelt (sandbox-exec)".into())
    } else {
        Availability::Unavailable(format!("{} does not run here", seatbelt::SANDBOX_EXEC))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(super) fn probe() -> Availability {
    Availability::Unavailable("no sandbox on this operating system".into())
}
