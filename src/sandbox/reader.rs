//! Automatic reads go through the sandbox's read view (issue 21 §1): a file opsai reads for the
//! model without a human yes (`read_file` rated Safe) is read by the sandbox helper, inside the
//! strict sandbox, with the same view a command gets. One view, not a second list in opsai's own
//! process that could drift from it: what `cat` may not read, `read_file` may not either.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// The "program" the helper runs in-process, after the sandbox is applied: `READ PATH LIMIT`.
pub(crate) const READ_PROGRAM: &str = "__opsai-read";
/// Helper exit codes of a read (apart from `EXIT_NOT_APPLIED`).
const EXIT_DENIED: u8 = 77;
const EXIT_MISSING: u8 = 78;
const EXIT_TOO_LARGE: u8 = 79;
const EXIT_FAILED: u8 = 80;

/// What an automatic read gave.
#[derive(Debug)]
pub enum ContainedRead {
    Bytes(Vec<u8>),
    /// Outside the read view (or the kernel refused it): only a human yes may read it.
    Denied(String),
    /// No sandbox here: a read that would have run without asking must ask.
    Unavailable(String),
    /// `safety.sandbox` is off: read as before, in opsai's own process.
    Off,
    TooLarge,
    Missing,
    Failed(String),
}

/// Reads `path` (at most `limit` bytes) inside the strict sandbox, from `cwd` (the view depends on
/// the working directory, as a command's does). Blocking: it starts the helper.
pub fn read_contained(path: &Path, limit: u64, cwd: &Path) -> ContainedRead {
    if cfg!(test) {
        // The test harness is not opsai: there is no helper to start (see `for_auto_run`).
        return ContainedRead::Off;
    }
    match super::for_auto_run(crate::protocol::SandboxProfile::Strict) {
        Ok(Some(_)) => {}
        Ok(None) => return ContainedRead::Off,
        Err(reason) => return ContainedRead::Unavailable(format!("no sandbox on this machine ({reason})")),
    }
    // On Linux the helper reads in-process once the sandbox is applied; Seatbelt (macOS) runs a
    // program, so `cat` there.
    let linux = cfg!(target_os = "linux");
    let (program, args) = if linux {
        (OsStr::new(READ_PROGRAM), vec![path.as_os_str().to_owned(), OsString::from(limit.to_string())])
    } else {
        (OsStr::new("/bin/cat"), vec![OsString::from("--"), path.as_os_str().to_owned()])
    };
    let argv = match super::wrap(crate::protocol::SandboxProfile::Strict, program, &args) {
        Ok(argv) => argv,
        Err(err) => return ContainedRead::Failed(format!("cannot start the sandbox helper: {err}")),
    };
    let Some((exe, rest)) = argv.split_first() else { return ContainedRead::Failed("empty sandbox command".into()) };
    let output = std::process::Command::new(exe)
        .args(rest)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|child| {
            super::helper_started(child.id());
            child.wait_with_output()
        });
    let output = match output {
        Ok(output) => output,
        Err(err) => return ContainedRead::Failed(format!("cannot start the sandbox helper: {err}")),
    };
    let message = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    if !linux {
        return from_cat(output.status.success(), output.stdout, &message, path, limit);
    }
    match output.status.code().and_then(|code| u8::try_from(code).ok()) {
        Some(0) => ContainedRead::Bytes(output.stdout),
        Some(EXIT_DENIED) => ContainedRead::Denied(format!(
            "{} is outside the sandbox's read view (a secret, or a place only a person may open)",
            path.display()
        )),
        Some(EXIT_MISSING) => ContainedRead::Missing,
        Some(EXIT_TOO_LARGE) => ContainedRead::TooLarge,
        Some(super::EXIT_NOT_APPLIED) => ContainedRead::Unavailable(message),
        _ => ContainedRead::Failed(if message.is_empty() {
            format!("the read failed ({})", output.status)
        } else {
            message
        }),
    }
}

/// What `cat` in the sandbox said, where there is no helper to give exit codes (macOS).
fn from_cat(success: bool, stdout: Vec<u8>, stderr: &str, path: &Path, limit: u64) -> ContainedRead {
    if success {
        return if stdout.len() as u64 > limit { ContainedRead::TooLarge } else { ContainedRead::Bytes(stdout) };
    }
    if stderr.contains("not permitted") || stderr.contains("Permission denied") {
        ContainedRead::Denied(format!("{} is outside the sandbox's read view", path.display()))
    } else if stderr.contains("No such file") {
        ContainedRead::Missing
    } else {
        ContainedRead::Failed(stderr.to_owned())
    }
}

/// In the helper, after the sandbox is applied: when `command` is a read, does it and returns the
/// exit code; `None` for any other command (it is `exec`ed).
pub(crate) fn serve(command: &[OsString]) -> Option<ExitCode> {
    let [program, path, limit] = command else { return None };
    if program != READ_PROGRAM {
        return None;
    }
    let Some(limit) = limit.to_str().and_then(|l| l.parse::<u64>().ok()) else {
        return Some(ExitCode::from(EXIT_FAILED));
    };
    let code = match read_limited(Path::new(path), limit) {
        Ok(bytes) => match std::io::stdout().lock().write_all(&bytes) {
            Ok(()) => 0,
            Err(_) => EXIT_FAILED,
        },
        Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => EXIT_DENIED,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => EXIT_MISSING,
        Err(err) if err.kind() == std::io::ErrorKind::FileTooLarge => EXIT_TOO_LARGE,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "{}: {err}", Path::new(path).display());
            EXIT_FAILED
        }
    };
    Some(ExitCode::from(code))
}

fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(std::io::ErrorKind::FileTooLarge, "file too large"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cats_answers_are_read_as_the_helpers() {
        let path = Path::new("/x");
        assert!(matches!(from_cat(true, b"ab".to_vec(), "", path, 2), ContainedRead::Bytes(b) if b == b"ab"));
        assert!(matches!(from_cat(true, b"abc".to_vec(), "", path, 2), ContainedRead::TooLarge));
        assert!(matches!(
            from_cat(false, Vec::new(), "cat: /x: Operation not permitted", path, 2),
            ContainedRead::Denied(_)
        ));
        assert!(matches!(
            from_cat(false, Vec::new(), "cat: /x: No such file or directory", path, 2),
            ContainedRead::Missing
        ));
    }
}
