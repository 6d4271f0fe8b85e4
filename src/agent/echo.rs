//! An answer that recites a command's output. The person saw the output as it ran, so the
//! recital tells them nothing, and a small model on a CPU writes it at a few tokens a second: a
//! 180-line script read back took minutes (issue 22). The guard watches the answer as it streams
//! and says when to stop it (pure).
//!
//! A recital is `RECITED_LINES` answer lines in a row, each found whole among the lines of this
//! turn's command output. Short lines (`}`, `fi`, a blank) neither count nor break a run: they
//! repeat everywhere. Quoting an error line or two, or a table the model wrote itself, stays far
//! below that. In a code block, the lines count only when the block's first line is itself a
//! line of the output: a block that opens with a command of its own (`cat > deploy.sh <<'EOF'`,
//! the file rewritten) is a command, not a recital.

use std::collections::HashSet;

/// Lines in a row, each a line of the output, that make a recital.
const RECITED_LINES: usize = 6;
/// Lines shorter than this (trimmed) are too common to say anything.
const MIN_LINE_CHARS: usize = 4;

/// Watches one reply's text against the output the model was shown.
#[derive(Debug)]
pub(crate) struct EchoGuard {
    output_lines: HashSet<String>,
    text: String,
    /// Where the line being written starts in `text`.
    line_start: usize,
    /// Output lines in a row so far.
    run: usize,
    /// Inside a code block: whether its lines count (`None` until its first long line decides).
    fence: Option<Option<bool>>,
}

impl EchoGuard {
    /// A guard for the outputs the model saw; `None` when they are too short to recite.
    pub(crate) fn new<'a>(outputs: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let output_lines: HashSet<String> = outputs
            .into_iter()
            .flat_map(str::lines)
            .map(str::trim)
            .filter(|line| line.chars().count() >= MIN_LINE_CHARS)
            .map(str::to_owned)
            .collect();
        (output_lines.len() >= RECITED_LINES).then_some(Self {
            output_lines,
            text: String::new(),
            line_start: 0,
            run: 0,
            fence: None,
        })
    }

    /// Takes the next piece of the reply. Once the reply is reciting: how many bytes of this piece
    /// belong to the reply as it stops (up to the end of the line that made the recital).
    pub(crate) fn push(&mut self, delta: &str) -> Option<usize> {
        let before = self.text.len();
        self.text.push_str(delta);
        while let Some(end) = self.text[self.line_start..].find('\n') {
            let line = self.text[self.line_start..self.line_start + end].trim();
            self.line_start += end + 1;
            if line.starts_with("```") {
                self.fence = if self.fence.is_some() { None } else { Some(None) };
                continue;
            }
            if line.chars().count() < MIN_LINE_CHARS {
                continue;
            }
            // A Markdown list or quote marker in front of an output line is still the line.
            let bare = line.trim_start_matches(['-', '*', '>', ' ']);
            let recited = self.output_lines.contains(line) || self.output_lines.contains(bare);
            let counts = match &mut self.fence {
                None => true,
                Some(decided) => *decided.get_or_insert(recited),
            };
            self.run = if recited && counts { self.run + 1 } else { 0 };
            if self.run >= RECITED_LINES {
                self.text.truncate(self.line_start);
                return Some(self.line_start - before);
            }
        }
        None
    }

    /// The reply as it stands when it was stopped, closed so it renders: an open code block is
    /// closed, and a last line says why it ends there. What was pushed stays byte for byte in
    /// front, so the part already on screen is a prefix of it.
    pub(crate) fn stopped_reply(&self) -> String {
        let mut text = self.text.clone();
        if self.fence.is_some() {
            text.push_str("```\n");
        }
        text.push_str("\n(stopped: the answer was repeating the command's output, shown above)");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "#!/bin/bash\nmkdir -p /testbed/dir1\necho 'alpha' > /testbed/a.txt\n\
        echo 'beta' > /testbed/b.txt\nchmod 755 /testbed/run.sh\nln -s /testbed/a.txt /testbed/link\n\
        touch /testbed/empty\nfi\n}\n";

    /// The reply in token-sized pieces, as a stream brings them; `true` when the guard stopped it.
    fn feed(guard: &mut EchoGuard, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(3).any(|piece| guard.push(&piece.iter().collect::<String>()).is_some())
    }

    #[test]
    fn a_recital_of_the_output_stops_at_its_sixth_line() {
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let reply = format!("The script is:\n```bash\n{OUTPUT}```\nIt creates files.\n");
        assert!(feed(&mut guard, &reply));
        let stopped = guard.stopped_reply();
        assert!(stopped.starts_with("The script is:\n```bash\n#!/bin/bash\n"), "{stopped}");
        assert!(stopped.contains("ln -s /testbed/a.txt /testbed/link\n```\n\n(stopped:"), "{stopped}");
        assert!(!stopped.contains("touch"), "{stopped}");
    }

    #[test]
    fn the_piece_that_completes_a_recital_is_kept_up_to_its_line_end() {
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let lines: Vec<&str> = OUTPUT.lines().collect();
        assert_eq!(guard.push(&format!("{}\n", lines[..5].join("\n"))), None);
        let last = format!("{}\nMORE AFTER", lines[5]);
        assert_eq!(guard.push(&last), Some(lines[5].len() + 1));
        assert!(guard.stopped_reply().starts_with(&format!("{}\n\n(stopped", lines[..6].join("\n"))));
    }

    #[test]
    fn list_markers_and_short_lines_do_not_hide_a_recital() {
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let listed: String = OUTPUT.lines().map(|line| format!("- {line}\n\n")).collect();
        assert!(feed(&mut guard, &listed));
    }

    #[test]
    fn an_answer_quoting_a_few_lines_or_writing_its_own_is_left_alone() {
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let answer = "The script makes a directory:\nmkdir -p /testbed/dir1\nand two files:\n\
            echo 'alpha' > /testbed/a.txt\necho 'beta' > /testbed/b.txt\nchmod 755 /testbed/run.sh\n\
            ln -s /testbed/a.txt /testbed/link\nThat is all it does, in seven lines.\n";
        assert!(!feed(&mut guard, answer), "five lines in a row are a quote");
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let own = "| file | made by |\n|---|---|\n| a.txt | echo |\n| b.txt | echo |\n| link | ln |\n\
            | empty | touch |\n| dir1 | mkdir |\n";
        assert!(!feed(&mut guard, own));
    }

    #[test]
    fn a_block_that_opens_with_its_own_command_is_not_a_recital() {
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let rewrite = format!("The fixed script:\n```sh\ncat > /testbed/setup.sh <<'EOF'\n{OUTPUT}EOF\n```\n");
        assert!(!feed(&mut guard, &rewrite));
        // After that block, a recital outside one is still found.
        assert!(feed(&mut guard, OUTPUT));
    }

    #[test]
    fn a_line_recited_with_trailing_spaces_or_cr_keeps_them_in_the_stopped_reply() {
        let mut guard = EchoGuard::new([OUTPUT]).unwrap();
        let spaced: String = OUTPUT.lines().map(|line| format!("{line}  \r\n")).collect();
        assert!(feed(&mut guard, &spaced));
        let stopped = guard.stopped_reply();
        let six: String = OUTPUT.lines().take(6).map(|line| format!("{line}  \r\n")).collect();
        assert!(stopped.starts_with(&six), "{stopped:?}");
    }

    #[test]
    fn a_short_output_has_no_guard() {
        assert!(EchoGuard::new(["one line\nfi\n"]).is_none());
        assert!(EchoGuard::new(Vec::<&str>::new()).is_none());
    }
}
