//! Pure text work for the file tools: is it text, which lines, what an edit makes of it, and the
//! unified diff shown before a change. No I/O, so every rule is unit-tested here.

use std::time::Duration;

use regex::Regex;
use similar::TextDiff;

/// Why bytes are not treated as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotText {
    /// A NUL byte: a binary file (executables, images, archives all have them).
    Nul { offset: usize },
    /// Not valid UTF-8 from this byte on.
    Encoding { offset: usize },
}

impl std::fmt::Display for NotText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotText::Nul { offset } => write!(f, "it looks binary (a NUL byte at offset {offset})"),
            NotText::Encoding { offset } => write!(f, "it is not UTF-8 text (invalid byte at offset {offset})"),
        }
    }
}

/// The bytes as text, or why they are not: a NUL byte anywhere, or invalid UTF-8.
pub(crate) fn decode(bytes: &[u8]) -> Result<&str, NotText> {
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(NotText::Nul { offset });
    }
    std::str::from_utf8(bytes).map_err(|err| NotText::Encoding { offset: err.valid_up_to() })
}

/// A 1-based, inclusive range of lines, with the text exactly as in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines<'t> {
    pub text: &'t str,
    /// 0 when the file is empty.
    pub first: usize,
    pub last: usize,
    pub total: usize,
}

/// Lines `start..=end` (defaults: the first and the last); `end` past the end means the last.
pub(crate) fn line_range(text: &str, start: Option<usize>, end: Option<usize>) -> Result<Lines<'_>, String> {
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).filter(|i| *i < text.len()).collect();
    let total = starts.len();
    let first = start.unwrap_or(1);
    if first == 0 || end == Some(0) {
        return Err("line numbers start at 1".to_owned());
    }
    if let Some(end) = end
        && end < first
    {
        return Err(format!("end_line {end} is before start_line {first}"));
    }
    if total == 0 {
        return Ok(Lines { text: "", first: 0, last: 0, total });
    }
    if first > total {
        return Err(format!("start_line {first} is past the end: the file has {total} lines"));
    }
    let last = end.unwrap_or(total).min(total);
    let from = starts[first - 1];
    let to = starts.get(last).copied().unwrap_or(text.len());
    Ok(Lines { text: &text[from..to], first, last, total })
}

/// What `edit_file` looks for.
pub(crate) enum Pattern<'p> {
    Literal(&'p str),
    /// `replace` may use `$1`, `${name}` for capture groups.
    Regex(&'p Regex),
}

/// The edit did not match the expected number of times; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CountMismatch {
    pub found: usize,
    pub expected: usize,
}

/// `text` with every match of `pattern` replaced, when there are exactly `expected` matches.
pub fn edit(text: &str, pattern: &Pattern, replace: &str, expected: usize) -> Result<String, CountMismatch> {
    let found = match pattern {
        Pattern::Literal(search) => text.matches(search).count(),
        Pattern::Regex(regex) => regex.find_iter(text).count(),
    };
    if found != expected {
        return Err(CountMismatch { found, expected });
    }
    Ok(match pattern {
        Pattern::Literal(search) => text.replace(search, replace),
        Pattern::Regex(regex) => regex.replace_all(text, replace).into_owned(),
    })
}

/// A unified diff and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diff {
    pub text: String,
    pub added: usize,
    pub removed: usize,
}

/// Past this, a diff of two large texts is coarser (whole blocks) rather than slower.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// The unified diff from `old` (`None`: the file does not exist) to `new`, 3 lines of context,
/// at most `max_lines` lines of it written out (a 5 MB rewrite is counted, not rendered).
pub(crate) fn unified_diff(old: Option<&str>, new: &str, label: &str, max_lines: usize) -> Diff {
    let diff = TextDiff::configure().timeout(DIFF_DEADLINE).diff_lines(old.unwrap_or(""), new);
    let (mut added, mut removed) = (0, 0);
    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {}
            similar::DiffTag::Delete => removed += old_range.len(),
            similar::DiffTag::Insert => added += new_range.len(),
            similar::DiffTag::Replace => {
                removed += old_range.len();
                added += new_range.len();
            }
        }
    }
    let before = if old.is_some() { label } else { "/dev/null" };
    let mut text = format!("--- {before}\n+++ {label}\n");
    let (mut written, mut left_out) = (0usize, 0usize);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        if written >= max_lines {
            left_out += hunk.iter_changes().count();
            continue;
        }
        text.push_str(&format!("{}\n", hunk.header()));
        for change in hunk.iter_changes() {
            if written >= max_lines {
                left_out += 1;
                continue;
            }
            written += 1;
            text.push_str(&format!("{}{}", change.tag(), change.value()));
            if change.missing_newline() {
                text.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    if left_out > 0 {
        text.push_str(&format!("… {} not shown\n", count(left_out, "diff line")));
    }
    Diff { text, added, removed }
}

/// At most `max` lines of `text`, and a note of how many more there were.
pub(crate) fn first_lines(text: &str, max: usize) -> String {
    let total = text.lines().count();
    if total <= max {
        return text.to_owned();
    }
    let mut kept: String = text.lines().take(max).flat_map(|line| [line, "\n"]).collect();
    kept.push_str(&format!("… {} not shown\n", count(total - max, "line")));
    kept
}

/// At most `max_lines` lines and about `max_chars` characters of `text`, saying what was left out.
pub(crate) fn clip(text: &str, max_lines: usize, max_chars: usize) -> String {
    let lines = first_lines(text, max_lines);
    if lines.chars().count() <= max_chars {
        return lines;
    }
    let end = lines.char_indices().nth(max_chars).map_or(lines.len(), |(i, _)| i);
    format!("{}\n… {} more bytes\n", &lines[..end], text.len() - end)
}

/// `1 line`, `3 lines`.
pub fn count(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_non_utf8_are_not_text() {
        assert_eq!(decode(b"echo 1\n"), Ok("echo 1\n"));
        assert_eq!(decode(b"\x7fELF\x02\x01\x00\x00"), Err(NotText::Nul { offset: 6 }));
        assert_eq!(decode(b"caf\xe9\n"), Err(NotText::Encoding { offset: 3 }));
        assert_eq!(decode("数据\n".as_bytes()), Ok("数据\n"));
        assert!(NotText::Nul { offset: 6 }.to_string().contains("binary"));
    }

    #[test]
    fn line_ranges_are_one_based_and_inclusive() {
        let text = "a\nb\nc\nd";
        assert_eq!(line_range(text, None, None).unwrap(), Lines { text, first: 1, last: 4, total: 4 });
        assert_eq!(line_range(text, Some(2), Some(3)).unwrap().text, "b\nc\n");
        assert_eq!(line_range(text, Some(4), None).unwrap().text, "d");
        assert_eq!(line_range(text, Some(3), Some(99)).unwrap(), Lines { text: "c\nd", first: 3, last: 4, total: 4 });
        assert_eq!(line_range("a\n", None, None).unwrap().total, 1, "a final newline ends a line, not starts one");
        assert_eq!(line_range("", None, None).unwrap().total, 0);
        assert_eq!(line_range(text, Some(5), None).unwrap_err(), "start_line 5 is past the end: the file has 4 lines");
        assert_eq!(line_range(text, Some(3), Some(2)).unwrap_err(), "end_line 2 is before start_line 3");
        assert!(line_range(text, Some(0), None).is_err());
    }

    #[test]
    fn literal_edits_need_the_expected_count() {
        let text = "echo 1\necho 1\necho 3\n";
        let once = edit("echo 1\n", &Pattern::Literal("echo 1"), "echo 2", 1).unwrap();
        assert_eq!(once, "echo 2\n");
        assert_eq!(edit(text, &Pattern::Literal("echo 1"), "echo 2", 1), Err(CountMismatch { found: 2, expected: 1 }));
        assert_eq!(edit(text, &Pattern::Literal("echo 1"), "echo 2", 2).unwrap(), "echo 2\necho 2\necho 3\n");
        assert_eq!(edit(text, &Pattern::Literal("absent"), "x", 1), Err(CountMismatch { found: 0, expected: 1 }));
        // `$1` means nothing in a literal replacement.
        assert_eq!(edit("a", &Pattern::Literal("a"), "$1", 1).unwrap(), "$1");
    }

    #[test]
    fn regex_edits_count_matches_and_expand_groups() {
        let regex = Regex::new(r"(?m)^port\s*=\s*(\d+)$").unwrap();
        let text = "host = a\nport = 80\n";
        assert_eq!(edit(text, &Pattern::Regex(&regex), "port = 8${1}", 1).unwrap(), "host = a\nport = 880\n");
        let digits = Regex::new(r"\d").unwrap();
        assert_eq!(edit("a1b2c3", &Pattern::Regex(&digits), "#", 1), Err(CountMismatch { found: 3, expected: 1 }));
        assert_eq!(edit("a1b2c3", &Pattern::Regex(&digits), "#", 3).unwrap(), "a#b#c#");
    }

    #[test]
    fn diffs_are_unified_with_counts() {
        let diff = unified_diff(Some("#!/bin/sh\necho 1\n"), "#!/bin/sh\necho 2\n", "~/test/a.sh", 100);
        assert_eq!(diff.text, "--- ~/test/a.sh\n+++ ~/test/a.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo 1\n+echo 2\n");
        assert_eq!((diff.added, diff.removed), (1, 1));
        let created = unified_diff(None, "hello\n", "notes.txt", 100);
        assert!(created.text.starts_with("--- /dev/null\n+++ notes.txt\n@@ -0,0 +1 @@\n+hello\n"), "{}", created.text);
        let no_newline = unified_diff(Some("a\n"), "a\nb", "f", 100);
        assert!(no_newline.text.ends_with("+b\n\\ No newline at end of file\n"), "{}", no_newline.text);
        let old: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let big = unified_diff(Some(&old), "", "f", 10);
        assert_eq!((big.added, big.removed), (0, 1000));
        assert_eq!(big.text.lines().count(), 3 + 10 + 1, "{}", big.text);
        assert!(big.text.ends_with("… 990 diff lines not shown\n"), "{}", big.text);
    }

    #[test]
    fn long_text_is_cut_to_its_first_lines() {
        assert_eq!(first_lines("a\nb\nc\n", 5), "a\nb\nc\n");
        assert_eq!(first_lines("a\nb\nc\n", 2), "a\nb\n… 1 line not shown\n");
        assert_eq!(clip("abcdef\n", 5, 3), "abc\n… 4 more bytes\n");
        assert_eq!(clip("abc\n", 5, 10), "abc\n");
        assert_eq!(count(1, "line"), "1 line");
        assert_eq!(count(2, "line"), "2 lines");
    }
}
