//! `$OPSAI_HOME/widget.log`: the widget's errors and diagnostics. Its stderr goes to /dev/null and
//! its stdout belongs to the shell, so this file is the only place they can go.
//!
//! One line per entry (control characters escaped), redacted, appended with one `write(2)` to a
//! file created `0600`. Bounded: once the file reaches [`MAX_BYTES`] it is renamed to
//! `widget.log.1` (replacing the previous one) and a new file is started. Logging is best effort:
//! a log that cannot be written never changes what the widget answers.

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::redact::Redactor;

/// The file's name under `$OPSAI_HOME`.
pub(crate) const FILE_NAME: &str = "widget.log";
/// Size at which the file is rotated to `widget.log.1`.
pub(crate) const MAX_BYTES: u64 = 1024 * 1024;
/// Characters kept of one entry.
const MAX_ENTRY_CHARS: usize = 2000;

/// The widget's log file.
#[derive(Debug, Clone)]
pub(crate) struct WidgetLog {
    path: PathBuf,
    redactor: Arc<Redactor>,
    max_bytes: u64,
}

impl WidgetLog {
    /// `dir/widget.log`; touches nothing on disk until the first entry.
    pub fn new(dir: &Path, redactor: Arc<Redactor>) -> Self {
        Self { path: dir.join(FILE_NAME), redactor, max_bytes: MAX_BYTES }
    }

    #[cfg(test)]
    /// The same log rotating at `max_bytes` (tests).
    pub(crate) fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry stamped with the time (UTC: no time zone database to load) and the process
    /// id; errors are ignored.
    pub fn write(&self, text: &str) {
        let stamp = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let line = format!("[{stamp}] pid {}: {}\n", std::process::id(), one_line(&self.redactor.redact(text)));
        let _ = self.append(line.as_bytes());
    }

    fn append(&self, line: &[u8]) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|meta| meta.len() >= self.max_bytes) {
            let mut rotated = self.path.clone().into_os_string();
            rotated.push(".1");
            std::fs::rename(&self.path, rotated)?;
        }
        let mut file = OpenOptions::new().create(true).append(true).mode(0o600).open(&self.path)?;
        file.write_all(line)
    }
}

/// The text on one line: newlines, tabs and other control characters escaped, length bounded.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ENTRY_CHARS));
    for (count, c) in text.chars().enumerate() {
        if count == MAX_ENTRY_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_single_redacted_lines_and_the_file_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let redactor = Arc::new(Redactor::new([("API_TOKEN".to_owned(), "tok-very-secret-1".to_owned())]));
        let log = WidgetLog::new(dir.path(), redactor).with_max_bytes(200);
        log.write("first\nline with tok-very-secret-1 and \u{1b}[31m");
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(!text.contains("tok-very-secret-1"), "{text}");
        assert!(text.contains("first\\nline with [REDACTED:env:API_TOKEN] and \\u{1b}[31m"), "{text}");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(log.path()).unwrap().permissions().mode() & 0o777, 0o600);
        for n in 0..10 {
            log.write(&format!("entry {n} {}", "x".repeat(50)));
        }
        let live = std::fs::metadata(log.path()).unwrap().len();
        let rotated = std::fs::metadata(dir.path().join("widget.log.1")).unwrap().len();
        assert!(live < 400 && rotated < 400, "live {live}, rotated {rotated}");
        assert!(std::fs::read_to_string(log.path()).unwrap().contains("entry 9"));
    }

    #[test]
    fn long_entries_are_cut() {
        assert_eq!(one_line(&"a".repeat(5000)).chars().count(), MAX_ENTRY_CHARS + 1);
        assert_eq!(one_line("a\tb\r\n"), "a\\tb\\r\\n");
    }
}
