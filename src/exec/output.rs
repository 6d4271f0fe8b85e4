//! What the model sees of a command's output: a bounded, plain-text capture and the observation text.
//!
//! [`Capture`] takes the raw PTY bytes in chunks of any size and keeps the first `head` and the
//! last `tail` characters of the cleaned text (escape sequences dropped, `\r\n` → `\n`, `\r` redraws
//! applied; see `clean`), as data: [`Captured`] has the head, the tail and the number N of UTF-8
//! bytes of cleaned text dropped between them, so `kept + N` is the size of the whole cleaned
//! output. [`Captured::text`] joins them with `... [N bytes truncated] ...` ([`join_cut`], the one
//! place that writes the marker). Memory is O(head + tail + one line) whatever the output size.
//!
//! [`observation_text`] is seed 003 §2.3's tool content with a header line. A PTY merges stderr
//! into stdout, so the body is the combined output as the terminal showed it; the `[ERROR]: `
//! prefix marks the header instead whenever the command did not succeed (non-zero exit, killed by a
//! signal, timed out, interrupted): `[ERROR]: exit 2 · 35 ms`. Empty output gives the header alone.

mod clean;
#[cfg(test)]
mod tests;

use std::time::Duration;

use self::clean::Cleaner;
use super::ExecResult;

/// `exec.capture_head` when the config does not say.
pub(crate) const DEFAULT_CAPTURE_HEAD: usize = 2000;
/// `exec.capture_tail` when the config does not say.
pub(crate) const DEFAULT_CAPTURE_TAIL: usize = 2000;

/// A streaming, bounded capture of terminal output for the model.
#[derive(Debug)]
pub(crate) struct Capture {
    cleaner: Cleaner,
    kept: HeadTail,
}

/// The finished capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The first characters kept: the whole output when nothing was dropped.
    pub head: String,
    /// The last characters kept, after the dropped middle; empty when nothing was dropped.
    pub tail: String,
    /// Bytes of cleaned text dropped between head and tail.
    pub truncated_bytes: u64,
    /// Bytes of the whole cleaned output, kept or not.
    pub total_bytes: u64,
}

impl Captured {
    /// An output kept whole.
    pub fn whole(text: impl Into<String>) -> Self {
        let head = text.into();
        Self { total_bytes: head.len() as u64, head, tail: String::new(), truncated_bytes: 0 }
    }

    /// Head, truncation marker (when anything was dropped) and tail, as the model reads them.
    pub fn text(&self) -> String {
        join_cut(&self.head, self.truncated_bytes, &self.tail)
    }

    /// The same capture with `f` applied to the head and the tail (redaction).
    pub fn map(&self, mut f: impl FnMut(&str) -> String) -> Self {
        Self { head: f(&self.head), tail: f(&self.tail), ..*self }
    }
}

impl From<String> for Captured {
    fn from(text: String) -> Self {
        Self::whole(text)
    }
}

impl From<&str> for Captured {
    fn from(text: &str) -> Self {
        Self::whole(text)
    }
}

/// `head`, then `... [N bytes truncated] ...` on a line of its own when `truncated` bytes were
/// left out, then `tail`.
pub(crate) fn join_cut(head: &str, truncated: u64, tail: &str) -> String {
    let mut text = head.to_owned();
    if truncated > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("... [{truncated} bytes truncated] ...\n"));
    }
    text.push_str(tail);
    text
}

impl Capture {
    /// Keeps the first `head` and last `tail` characters.
    pub fn new(head: usize, tail: usize) -> Self {
        Self { cleaner: Cleaner::default(), kept: HeadTail::new(head, tail) }
    }

    /// Feeds the next raw chunk, of any size; a character split across chunks is reassembled.
    pub fn push(&mut self, bytes: &[u8]) {
        let kept = &mut self.kept;
        self.cleaner.push(bytes, &mut |text| kept.push(text));
    }

    pub fn finish(mut self) -> Captured {
        let kept = &mut self.kept;
        self.cleaner.finish(&mut |text| kept.push(text));
        self.kept.finish()
    }
}

impl Default for Capture {
    fn default() -> Self {
        Self::new(DEFAULT_CAPTURE_HEAD, DEFAULT_CAPTURE_TAIL)
    }
}

/// The cleaned text of a whole (small) output, unbounded: escapes dropped, redraws applied.
pub(crate) fn clean_text(bytes: &[u8]) -> String {
    let mut capture = Capture::new(usize::MAX, 0);
    capture.push(bytes);
    capture.finish().head
}

/// The first `head` characters, and a sliding window over the last `tail`: the window grows to
/// twice `tail` (plus one line) and is then cut back to `tail` with one `drain`, so each character
/// costs O(1) amortized and memory stays O(head + tail).
#[derive(Debug)]
struct HeadTail {
    head: String,
    head_left: usize,
    tail: String,
    tail_chars: usize,
    tail_cap: usize,
    truncated: u64,
    total: u64,
}

impl HeadTail {
    fn new(head: usize, tail: usize) -> Self {
        Self {
            head: String::new(),
            head_left: head,
            tail: String::new(),
            tail_chars: 0,
            tail_cap: tail,
            truncated: 0,
            total: 0,
        }
    }

    fn push(&mut self, text: &str) {
        self.total += text.len() as u64;
        let mut rest = text;
        if self.head_left > 0 {
            let end = rest.char_indices().nth(self.head_left).map_or(rest.len(), |(i, _)| i);
            let (head, tail) = rest.split_at(end);
            self.head.push_str(head);
            self.head_left -= char_count(head);
            rest = tail;
        }
        if rest.is_empty() {
            return;
        }
        self.tail.push_str(rest);
        self.tail_chars += char_count(rest);
        if self.tail_chars > self.tail_cap.saturating_mul(2).max(64) || self.tail_cap == 0 {
            self.cut_tail();
        }
    }

    /// Drops the window's oldest characters beyond `tail`.
    fn cut_tail(&mut self) {
        let excess = self.tail_chars.saturating_sub(self.tail_cap);
        if excess == 0 {
            return;
        }
        let ascii_prefix = self.tail.as_bytes().get(..excess).is_some_and(<[u8]>::is_ascii);
        let end = if ascii_prefix {
            excess
        } else {
            self.tail.char_indices().nth(excess).map_or(self.tail.len(), |(i, _)| i)
        };
        self.tail.drain(..end);
        self.tail_chars -= excess;
        self.truncated += end as u64;
    }

    fn finish(mut self) -> Captured {
        self.cut_tail();
        let (mut head, mut tail) = (self.head, self.tail);
        if self.truncated == 0 {
            head.push_str(&tail);
            tail.clear();
        }
        Captured { head, tail, truncated_bytes: self.truncated, total_bytes: self.total }
    }
}

fn char_count(text: &str) -> usize {
    if text.is_ascii() { text.len() } else { text.chars().count() }
}

/// The capture keeps a head and a tail; a secret cut in half at either edge no longer matches any
/// pattern, so a long token touching the cut is replaced whole. A head that ends in whitespace, or
/// a tail that starts with it, was cut between words.
pub(crate) fn scrub_cut_edges(mut captured: Captured) -> Captured {
    const MIN_TOKEN: usize = 12;
    const CUT: &str = "[REDACTED:cut]";
    if captured.truncated_bytes == 0 {
        return captured;
    }
    let head = &mut captured.head;
    let head_cut =
        head.rfind(char::is_whitespace).map_or(0, |i| i + head[i..].chars().next().map_or(1, char::len_utf8));
    if head.len() - head_cut >= MIN_TOKEN {
        head.replace_range(head_cut.., CUT);
    }
    let tail = &mut captured.tail;
    let tail_cut = tail.find(char::is_whitespace).unwrap_or(tail.len());
    if tail_cut >= MIN_TOKEN {
        tail.replace_range(..tail_cut, CUT);
    }
    captured
}

/// The tool message for the model: a header line, then the (redacted) output when there is any.
pub(crate) fn observation_text(result: &ExecResult, redacted_output: &str) -> String {
    let header = outcome_line(result);
    if redacted_output.is_empty() { header } else { format!("{header}\n{redacted_output}") }
}

/// `exit 0 · 35 ms`; `[ERROR]: ` first when the command did not succeed, with the reason:
/// `[ERROR]: timed out · exit 143 (killed by SIGTERM) · 2.0 s`.
pub(crate) fn outcome_line(result: &ExecResult) -> String {
    let mut parts = Vec::with_capacity(3);
    if result.timed_out {
        parts.push("timed out".to_owned());
    }
    if result.interrupted {
        parts.push("interrupted by the user (Ctrl-C)".to_owned());
    }
    parts.push(match result.exit_code {
        Some(code) => match signal_name(code) {
            Some(name) => format!("exit {code} (killed by {name})"),
            None => format!("exit {code}"),
        },
        None => "exit status unknown".to_owned(),
    });
    parts.push(format_duration(result.duration));
    let line = parts.join(" · ");
    let ok = result.exit_code == Some(0) && !result.timed_out && !result.interrupted;
    if ok { line } else { format!("[ERROR]: {line}") }
}

/// What an [`outcome_line`] says, read back from an observation's first line: `Ok(())` for a
/// command that ran and exited 0; `Err(Some(code))` for one that exited `code` otherwise (timed
/// out and interrupted included); `Err(None)` for any other line (a refusal, an unknown status).
pub(crate) fn outcome_of(line: &str) -> Result<(), Option<i32>> {
    let Some(failure) = line.strip_prefix("[ERROR]: ") else {
        let ok = line.strip_prefix("exit 0 · ").is_some_and(|rest| !rest.contains(" · "));
        return if ok { Ok(()) } else { Err(None) };
    };
    let code = failure.split(" · ").find_map(|part| part.strip_prefix("exit ")?.split(' ').next()?.parse().ok());
    Err(code)
}

/// The signal behind a shell exit status of 128+n, for the common signals.
pub(crate) fn signal_name(exit_code: i32) -> Option<&'static str> {
    Some(match exit_code.checked_sub(128)? {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return None,
    })
}

/// `35 ms`, `1.2 s`, `2 min 5 s`.
pub(crate) fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        format!("{} min {} s", secs / 60, secs % 60)
    }
}
