//! The append-only audit log (DESIGN §8): one line per action after its outcome, including refused,
//! denied and dry-run actions:
//!
//! `[2026-11-22 10:30:15] SESSION: s12 | INPUT: "…" | TOOL: shell.run_command | CMD: "…" | RISK: high | CONFIRMED: yes | EXIT: 0 | OUTPUT: <first 100 chars>`
//!
//! with `| USER: NAME` (`opsai serve`'s signed-in user), `| APPROVER: NAME` (the operator who approved
//! another user's command) and `| HOST: HOST` (`--ssh-host`) after TOOL when they apply.
//!
//! - Every field is redacted; quoted fields escape `\` and `"`; every field escapes newlines, control,
//!   bidi and zero-width characters (`\n`, `\u{1b}`), so a record is always exactly one line and the
//!   log is safe to print on a terminal.
//! - Each line is one `write(2)` on a file opened with `O_APPEND` (created `0600`, its directory `0700`),
//!   so lines from several opsai processes never tear or interleave. Lines are never rewritten.
//! - Over `max_size_mb`, the live file is renamed to `audit.log.YYYYMMDD-HHMMSS` (plus `.N` when that
//!   exists) under an `flock` on `audit.log.lock`; rotated files older than `retain_days` (by their last
//!   write) are deleted. `max_size_mb = 0` never rotates; `retain_days = 0` keeps rotated files forever.

mod files;
mod local_time;
mod read;
mod table;
#[cfg(test)]
mod tests;

pub use table::{AuditTable, TableCopy, machine_name};

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::civil::DateTime;
use thiserror::Error;

use crate::protocol::Risk;
use crate::redact::Redactor;

/// How an action was confirmed, as the log writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Confirmed {
    /// A human approved it (once, for the session, or after editing).
    Yes,
    /// Not run: refused by the policy, by the human, or for lack of a terminal.
    No,
    /// Ran without a prompt (Safe with `auto_approve_safe`, or `-y` for Medium).
    Auto,
    /// `--dry-run`: shown, not run.
    DryRun,
    /// The widget's proposal: put on the shell's line, not run; it runs only if the user presses Enter.
    Proposed,
}

impl Confirmed {
    pub fn as_str(self) -> &'static str {
        match self {
            Confirmed::Yes => "yes",
            Confirmed::No => "no",
            Confirmed::Auto => "auto",
            Confirmed::DryRun => "dry-run",
            Confirmed::Proposed => "proposed",
        }
    }
}

impl std::fmt::Display for Confirmed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One action, after its outcome. Redaction happens when it is written, not here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub session: String,
    /// The user's request that led to the action.
    pub input: String,
    /// `shell.run_command`, …
    pub tool: String,
    /// The command exactly as it ran (or would have).
    pub command: String,
    pub risk: Risk,
    pub confirmed: Confirmed,
    /// `None` when the command did not run or was killed by a signal before reporting.
    pub exit: Option<i32>,
    /// The output, or why it did not run; only the first 100 characters are kept.
    pub output: String,
    /// `--ssh-host`: the host it ran on (a `HOST:` field); `None` is this machine (no field).
    pub host: Option<String>,
    /// `opsai serve`: the signed-in user who asked (a `USER:` field); `None` in the terminal (no field).
    pub user: Option<String>,
    /// `opsai serve`: the operator who answered the approval when that is not the user who asked
    /// (an `APPROVER:` field after `USER:`).
    pub approver: Option<String>,
}

#[derive(Debug, Error)]
pub enum AuditError {
    #[error(
        "cannot create the audit log directory {path}: {error}; create it, or set audit.log_path to a writable location"
    )]
    CreateDir { path: PathBuf, error: std::io::Error },
    #[error(
        "cannot open the audit log {path} for appending: {error}; make it writable, or set audit.log_path to a writable file"
    )]
    Open { path: PathBuf, error: std::io::Error },
    #[error("cannot write to the audit log {path}: {error}; free some disk space or make the file writable")]
    Write { path: PathBuf, error: std::io::Error },
    #[error("cannot lock {path} to rotate the audit log: {error}; make the log's directory writable")]
    Lock { path: PathBuf, error: std::io::Error },
    #[error(
        "cannot rotate the audit log {path} to {to}: {error}; make the log's directory writable or move the file away"
    )]
    Rotate { path: PathBuf, to: PathBuf, error: std::io::Error },
    #[error("cannot read the audit log {path}: {error}; check that it is readable")]
    Read { path: PathBuf, error: std::io::Error },
}

/// Free bytes the log's file system must have before anything above Safe runs (a line is rarely over a few KB).
const MIN_FREE: u64 = 64 * 1024;
/// Characters of OUTPUT kept per line.
const OUTPUT_CHARS: usize = 100;
/// Characters of INPUT and CMD kept per line; longer ones end with `…[+N chars]`.
const FIELD_CHARS: usize = 4096;
/// Characters of SESSION and TOOL kept per line.
const NAME_CHARS: usize = 200;
/// Bytes of output redacted before OUTPUT is cut: enough for any secret that starts in the first 100 characters.
const OUTPUT_WINDOW: usize = 16 * 1024;

/// The audit log at one path. Holds no open file: each append opens, writes one line and closes, so it
/// always writes to the current live file whatever other processes rotate. `Send + Sync`.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    /// Rotate when the live file has at least this many bytes; 0 never rotates.
    max_bytes: u64,
    /// Rotated files whose last write is older than this are deleted; `None` keeps them.
    retain: Option<Duration>,
    redactor: Arc<Redactor>,
    /// Old rotated files are pruned once per process (on the first append), and after each rotation.
    pruned: AtomicBool,
    copy: Option<CopySink>,
}

/// The copy's sink, printable for the log's `Debug`.
struct CopySink(Arc<dyn AuditCopy>);

impl std::fmt::Debug for CopySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditCopy")
    }
}

impl AuditLog {
    /// `audit.log_path`, `audit.max_log_size_mb`, `audit.retain_days`. Touches nothing on disk.
    pub fn new(path: PathBuf, max_size_mb: u64, retain_days: u64, redactor: Arc<Redactor>) -> Self {
        Self::with_max_bytes(path, max_size_mb.saturating_mul(1024 * 1024), retain_days, redactor)
    }

    /// Like [`AuditLog::new`] with the size limit in bytes (tests rotate after a few lines).
    pub(crate) fn with_max_bytes(path: PathBuf, max_bytes: u64, retain_days: u64, redactor: Arc<Redactor>) -> Self {
        let retain = (retain_days > 0).then(|| Duration::from_secs(retain_days.saturating_mul(24 * 60 * 60)));
        Self { path, max_bytes, retain, redactor, pruned: AtomicBool::new(false), copy: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line stamped with the local time now.
    pub fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        self.append_at(record, local_time::now())
    }

    /// Appends one line stamped `at` (also the rotated file's name, if this append rotates).
    pub(crate) fn append_at(&self, record: &AuditRecord, at: DateTime) -> Result<(), AuditError> {
        let row = self.row(record, at);
        let written = self.write_line(&row.line, at);
        // Copied even when the file failed: one more place holds the action, not one less.
        if let Some(copy) = &self.copy {
            copy.0.send(row);
        }
        written
    }

    fn write_line(&self, line: &str, at: DateTime) -> Result<(), AuditError> {
        self.rotate_if_full(at)?;
        let file = files::open_append(&self.path)?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        write_once(&file, &bytes).map_err(|error| AuditError::Write { path: self.path.clone(), error })?;
        if !self.pruned.swap(true, Ordering::Relaxed) {
            // Best effort: an old file that cannot be deleted must not stop the audit.
            let _ = self.prune_rotated();
        }
        Ok(())
    }

    /// Also sends every line to `copy` (after the file).
    pub fn copy_to(&mut self, copy: Arc<dyn AuditCopy>) {
        self.copy = Some(CopySink(copy));
    }

    /// Opens the log for appending (creating it and its directory) without writing: when this fails,
    /// nothing above Safe may run.
    pub(crate) fn check_writable(&self) -> Result<(), AuditError> {
        let file = files::open_append(&self.path)?;
        // Opening succeeds on a full disk, where the line written after the command would fail.
        #[allow(clippy::unnecessary_cast, reason = "fsblkcnt_t and c_ulong are 32-bit on some platforms")]
        let full = nix::sys::statvfs::fstatvfs(&file).is_ok_and(|stats| {
            (stats.blocks_available() as u64).saturating_mul(stats.fragment_size() as u64) < MIN_FREE
        });
        if full {
            let error = std::io::Error::from_raw_os_error(nix::errno::Errno::ENOSPC as i32);
            return Err(AuditError::Write { path: self.path.clone(), error });
        }
        Ok(())
    }

    /// One record as it is written: each field redacted and escaped, and the line they make.
    fn row(&self, record: &AuditRecord, at: DateTime) -> AuditRow {
        let redact = |text: &str| self.redactor.redact(text);
        let escaped = |text: &str, max, quoted| {
            let mut out = String::with_capacity(text.len().min(max));
            escape_into(&mut out, text, max, quoted);
            out
        };
        let name = |text: &Option<String>| text.as_deref().map(|text| escaped(&redact(text), NAME_CHARS, false));
        let output_window = &record.output[..floor_char_boundary(&record.output, OUTPUT_WINDOW)];
        let output: String = redact(output_window).chars().take(OUTPUT_CHARS).collect();
        let mut row = AuditRow {
            at: std::time::SystemTime::now(),
            session: escaped(&redact(&record.session), NAME_CHARS, false),
            input: escaped(&redact(&record.input), FIELD_CHARS, true),
            tool: escaped(&redact(&record.tool), NAME_CHARS, false),
            user: name(&record.user),
            approver: name(&record.approver),
            host: name(&record.host),
            // Word by word: the line still shows every command and operator that ran (`;rm -rf d`).
            command: escaped(&self.redactor.redact_command(&record.command), FIELD_CHARS, true),
            risk: record.risk,
            confirmed: record.confirmed,
            exit: record.exit,
            output: escaped(&output, OUTPUT_CHARS, false),
            line: String::new(),
        };
        row.line = row.format(at);
        row
    }
}

/// One action as written: every text field redacted and escaped as in the file (one line, no
/// control characters), with its line. What an [`AuditCopy`] receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    pub at: std::time::SystemTime,
    pub session: String,
    pub input: String,
    pub tool: String,
    pub user: Option<String>,
    pub approver: Option<String>,
    pub host: Option<String>,
    pub command: String,
    pub risk: Risk,
    pub confirmed: Confirmed,
    pub exit: Option<i32>,
    pub output: String,
    /// The file's line, without its newline.
    pub line: String,
}

impl AuditRow {
    fn format(&self, at: DateTime) -> String {
        let exit = self.exit.map_or_else(|| "-".to_owned(), |code| code.to_string());
        let mut line = String::with_capacity(256 + self.input.len() + self.command.len());
        let _ = write!(
            line,
            "[{}] SESSION: {} | INPUT: \"{}\" | TOOL: {}",
            at.strftime("%Y-%m-%d %H:%M:%S"),
            self.session,
            self.input,
            self.tool
        );
        for (label, value) in [("USER", &self.user), ("APPROVER", &self.approver), ("HOST", &self.host)] {
            if let Some(value) = value {
                let _ = write!(line, " | {label}: {value}");
            }
        }
        let _ = write!(
            line,
            " | CMD: \"{}\" | RISK: {} | CONFIRMED: {} | EXIT: {exit} | OUTPUT: {}",
            self.command, self.risk, self.confirmed, self.output
        );
        line
    }
}

/// Where each line also goes, after the file (`opsai serve --database`: the audit table). The file
/// stays the record that counts: a copy that fails or lags never stops or slows an append.
pub trait AuditCopy: Send + Sync {
    /// Takes one row; returns at once (queues it, or drops it with a warning).
    fn send(&self, row: AuditRow);
}

/// The whole line in one `write(2)`: with `O_APPEND` the kernel places it at the end atomically.
/// A short write (disk full, a signal) is finished with further writes rather than losing the rest.
fn write_once(mut file: &std::fs::File, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => bytes = &bytes[written..],
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Appends `text` escaped so it stays on one line and cannot drive a terminal: `\` `\n` `\r` `\t`,
/// `"` when `quoted`, other control, bidi and zero-width characters as `\u{…}`. Keeps at most `max`
/// characters of `text`, then says how many were left out.
fn escape_into(out: &mut String, text: &str, max: usize, quoted: bool) {
    for (kept, c) in text.chars().enumerate() {
        if kept == max {
            let _ = write!(out, "…[+{} chars]", text.chars().count() - max);
            return;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '"' if quoted => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || is_invisible(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// Line and paragraph separators, bidi controls, zero-width characters and the BOM.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// The largest char boundary at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}
