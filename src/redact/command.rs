//! Where a secret may be masked in a command line: only inside the text of one shell word, never
//! over an operator, a separator, a quote, a substitution's `$(`, or a command's name. A person
//! reading a redacted command (the web chat's approval card, the audit log) still sees every
//! command that runs and how they are joined: `echo Authorization: Bearer x;rm -rf d` keeps `;rm`.
//!
//! The line is parsed with tree-sitter's bash grammar (the policy's parser); the leaves that are
//! literal text (words, quoted text, here-document bodies, comments) are maskable, cut at line
//! breaks, except the words of a command's name. A line the grammar does not accept whole is cut
//! by a conservative lexer instead: every shell metacharacter and quote is a boundary, whatever the
//! quoting, and a word after a separator is taken for a command name.

use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Node, Parser};

/// Deeper bracket nesting is not given to the grammar (its C parser recurses per level).
const MAX_NESTING: usize = 64;

/// Bytes that end a maskable piece in the fallback lexer: blanks, metacharacters, quotes, `$`, `\`.
fn is_boundary(byte: u8) -> bool {
    byte.is_ascii_whitespace() || b";&|<>()$`'\"\\".contains(&byte)
}

/// Bytes after which the next word is in command position (fallback lexer).
fn starts_command(byte: u8) -> bool {
    b";&|(`\n".contains(&byte)
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The sorted, disjoint byte ranges of `command` inside which a secret may be masked.
pub(super) fn maskable(command: &str) -> Vec<Range<usize>> {
    let pieces = parsed(command).unwrap_or_else(|| lexed(command));
    split_lines(command, pieces)
}

/// The grammar's pieces, or `None` when it does not accept the line whole.
fn parsed(command: &str) -> Option<Vec<Range<usize>>> {
    if nesting(command) > MAX_NESTING {
        return None;
    }
    // Some supplementary-plane code points crash the grammar's scanner (see policy::parse): it
    // sees only ASCII, each other character as as many letters as it has bytes, offsets unchanged.
    let mut masked = String::with_capacity(command.len());
    for c in command.chars() {
        if c.is_ascii() {
            masked.push(c);
        } else {
            masked.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        let tree = slot.as_mut()?.parse(masked.as_bytes(), None)?;
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        let mut pieces = Vec::new();
        walk(root, &mut pieces);
        pieces.sort_by_key(|piece| piece.start);
        Some(pieces)
    })
}

/// Collects the maskable leaves under `root`, iteratively (no recursion on hostile depth).
fn walk(root: Node, pieces: &mut Vec<Range<usize>>) {
    // (node, inside a command's name)
    let mut stack: Vec<(Node, bool)> = vec![(root, false)];
    while let Some((node, in_name)) = stack.pop() {
        let in_name = in_name || node.kind() == "command_name";
        let range = node.byte_range();
        if node.child_count() == 0 {
            if in_name {
                continue;
            }
            match node.kind() {
                "word" | "string_content" | "heredoc_body" | "heredoc_content" | "comment" | "number" => {
                    pieces.push(range)
                }
                "raw_string" if range.len() >= 2 => pieces.push(range.start + 1..range.end - 1),
                "ansi_c_string" if range.len() >= 3 => pieces.push(range.start + 2..range.end - 1),
                _ => {}
            }
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        // Text of a double-quoted string or a here-document body that no child covers is literal.
        if !in_name && matches!(node.kind(), "string" | "heredoc_body" | "translated_string") {
            let mut at = range.start;
            for child in &children {
                if child.start_byte() > at {
                    pieces.push(at..child.start_byte());
                }
                at = at.max(child.end_byte());
            }
            if node.kind() == "heredoc_body" && at < range.end {
                pieces.push(at..range.end);
            }
        }
        stack.extend(children.into_iter().map(|child| (child, in_name)));
    }
}

/// The fallback: runs of bytes between boundaries, except a run in command position.
fn lexed(command: &str) -> Vec<Range<usize>> {
    let bytes = command.as_bytes();
    let mut pieces = Vec::new();
    // The last byte before the current run that was not a blank: decides command position.
    let mut before: Option<u8> = None;
    let mut at = 0;
    while at < bytes.len() {
        if is_boundary(bytes[at]) {
            if bytes[at] != b' ' && bytes[at] != b'\t' {
                before = Some(bytes[at]);
            }
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && !is_boundary(bytes[at]) {
            at += 1;
        }
        let command_word = before.is_none_or(starts_command);
        if !command_word {
            pieces.push(start..at);
        }
        before = Some(bytes[at - 1]);
    }
    pieces
}

/// Each piece cut at line breaks, empty ones dropped: a marker never spans lines.
fn split_lines(command: &str, pieces: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let bytes = command.as_bytes();
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let mut start = piece.start;
        for at in piece.clone() {
            if bytes.get(at).is_some_and(|b| *b == b'\n' || *b == b'\r') {
                if start < at {
                    out.push(start..at);
                }
                start = at + 1;
            }
        }
        if start < piece.end {
            out.push(start..piece.end);
        }
    }
    // Leaves never overlap, but a gap and a leaf could touch: keep the list disjoint and sorted.
    out.sort_by_key(|piece| piece.start);
    out.dedup_by(|next, prev| next.start < prev.end);
    out
}

/// The deepest bracket nesting, ignoring quotes: an over-estimate that bounds the grammar's work.
fn nesting(command: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for byte in command.bytes() {
        match byte {
            b'(' | b'{' | b'[' | b'`' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The parts of each span (sorted, disjoint) to mask: where it overlaps the first piece it
/// touches, then the next pieces as long as only blanks or line breaks separate them (a value with
/// spaces, a key's lines). Any syntax between two pieces (an operator, a quote, `$(`, a command's
/// name) ends the mask: what follows it is shown, even if the pattern's match went on.
pub(super) fn within(text: &str, spans: &[Range<usize>], pieces: &[Range<usize>]) -> Vec<(usize, Range<usize>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut first = 0;
    for (index, span) in spans.iter().enumerate() {
        while first < pieces.len() && pieces[first].end <= span.start {
            first += 1;
        }
        // A span that starts on syntax (`$(` after a kept marker) masks nothing past it either.
        let mut previous_end = span.start;
        for piece in pieces[first..].iter().take_while(|piece| piece.start < span.end) {
            let gap = bytes.get(previous_end..piece.start).unwrap_or_default();
            if !gap.iter().all(u8::is_ascii_whitespace) {
                break;
            }
            let (start, end) = (span.start.max(piece.start), span.end.min(piece.end));
            if start < end {
                out.push((index, start..end));
            }
            previous_end = piece.end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str, pieces: &[Range<usize>]) -> Vec<String> {
        pieces.iter().map(|piece| command[piece.clone()].to_owned()).collect()
    }

    #[test]
    fn operators_quotes_and_command_names_are_never_maskable() {
        let command = "echo Authorization: Bearer x;rm -rf DIR";
        assert_eq!(texts(command, &maskable(command)), ["Authorization:", "Bearer", "x", "-rf", "DIR"]);
        let quoted = "curl -H 'Authorization: Bearer a;b' \"tok=$(id) c\" && DB_PASS=pw psql";
        assert_eq!(
            texts(quoted, &maskable(quoted)),
            ["-H", "Authorization: Bearer a;b", "tok=", " c", "pw"],
            "the substitution's command is a name, the assignment's value is a word"
        );
    }

    #[test]
    fn an_unparsable_line_falls_back_to_every_metacharacter_as_a_boundary() {
        let command = "echo 'unterminated token=a;rm -rf x";
        assert_eq!(texts(command, &maskable(command)), ["unterminated", "token=a", "-rf", "x"]);
        assert_eq!(texts("a\u{10FFFF}b c", &maskable("a\u{10FFFF}b c")), ["c"]);
    }

    #[test]
    fn here_document_bodies_are_cut_at_line_breaks() {
        let command = "cat <<EOF\npassword=hunter2\nline two\nEOF\nls";
        assert_eq!(texts(command, &maskable(command)), ["password=hunter2", "line two"]);
    }
}
