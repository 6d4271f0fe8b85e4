//! Reading the audit log back for `opsai audit [--tail N] [--grep PAT]`, in bounded memory.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{AuditError, AuditLog};

/// Bytes read per step when reading a file backwards.
const CHUNK: u64 = 8 * 1024;

impl AuditLog {
    /// The last `n` lines, oldest first, without their newlines. Read from the end of the live file;
    /// when it holds fewer than `n` lines (just rotated), the rest come from the newest rotated files.
    /// Memory is bounded by the lines returned. No log yet → no lines.
    pub fn tail(&self, n: usize) -> Result<Vec<String>, AuditError> {
        let mut files = self.rotated_files()?;
        files.push(self.path.clone());
        let mut lines: Vec<String> = Vec::new();
        for path in files.iter().rev() {
            if lines.len() >= n {
                break;
            }
            let mut older = tail_file(path, n - lines.len())?;
            older.append(&mut lines);
            lines = older;
        }
        Ok(lines)
    }

    /// Lines containing `pattern`, oldest first over the rotated files and then the live one; the
    /// most recent `limit` of them. A plain substring (commands are full of regex characters), matched
    /// ignoring case when `pattern` has no uppercase letter (smart case).
    pub fn grep(&self, pattern: &str, limit: usize) -> Result<Vec<String>, AuditError> {
        let ignore_case = !pattern.chars().any(char::is_uppercase);
        let needle = if ignore_case { pattern.to_lowercase() } else { pattern.to_owned() };
        let mut found: VecDeque<String> = VecDeque::new();
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut files = self.rotated_files()?;
        files.push(self.path.clone());
        for path in &files {
            for_each_line(path, |line| {
                let hit = if ignore_case { line.to_lowercase().contains(&needle) } else { line.contains(&needle) };
                if hit {
                    if found.len() == limit {
                        found.pop_front();
                    }
                    found.push_back(line.to_owned());
                }
            })?;
        }
        Ok(found.into())
    }
}

fn open_read(path: &Path) -> Result<Option<File>, AuditError> {
    match File::open(path) {
        Ok(file) => Ok(Some(file)),
        // Rotated away or pruned between listing and reading, or no log yet.
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(AuditError::Read { path: path.to_owned(), error }),
    }
}

/// The last `n` lines of one file, read backwards a chunk at a time.
fn tail_file(path: &Path, n: usize) -> Result<Vec<String>, AuditError> {
    let read_error = |error| AuditError::Read { path: PathBuf::from(path), error };
    let Some(file) = open_read(path)? else { return Ok(Vec::new()) };
    let len = file.metadata().map_err(read_error)?.len();
    if n == 0 || len == 0 {
        return Ok(Vec::new());
    }
    let mut end = len;
    // Chunks from the end, newest first; joined once they hold `n` whole lines.
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut newlines = 0;
    let mut final_newline = false;
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let mut chunk = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.read_exact_at(&mut chunk, start).map_err(read_error)?;
        if end == len {
            // The file's final newline ends the last line; it does not start another.
            final_newline = chunk.last() == Some(&b'\n');
        }
        newlines += chunk.iter().filter(|&&b| b == b'\n').count();
        chunks.push(chunk);
        end = start;
        // Each newline before the final one ends a line that began after it: whole lines in hand.
        if newlines.saturating_sub(usize::from(final_newline)) >= n {
            break;
        }
    }
    let bytes: Vec<u8> = chunks.into_iter().rev().flatten().collect();
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let mut lines: Vec<&str> = text.split('\n').collect();
    if end > 0 && !lines.is_empty() {
        // The first piece began mid-line.
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(n);
    Ok(lines[skip..].iter().map(|line| (*line).to_owned()).collect())
}

/// Calls `each` with every line of the file (newline removed, invalid UTF-8 replaced).
fn for_each_line(path: &Path, mut each: impl FnMut(&str)) -> Result<(), AuditError> {
    let Some(file) = open_read(path)? else { return Ok(()) };
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read =
            reader.read_until(b'\n', &mut buf).map_err(|error| AuditError::Read { path: path.to_owned(), error })?;
        if read == 0 {
            return Ok(());
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        each(&String::from_utf8_lossy(&buf));
    }
}
