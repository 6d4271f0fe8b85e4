//! The answer as it streams (`answer_delta` events), for a person or for `-q`.
//!
//! - [`AnswerStream::plain`]: text as it arrives, sanitized through [`display::ProseStream`] (or raw,
//!   for `-q` into a pipe). Trailing whitespace waits for what follows, so the screen ends exactly as
//!   the whole answer printed at once would (trimmed, one final newline).
//! - [`AnswerStream::blocks`]: Markdown, rendered a block at a time (a paragraph ends at a blank line,
//!   a code block at its closing fence) by the given function. On a colour terminal the block being
//!   written is shown as plain text meanwhile and replaced by its rendering when it completes.

use crate::ui::display::ProseStream;

/// Renders one complete Markdown block for the screen (it is sanitized inside).
pub(crate) type BlockRenderer = Box<dyn FnMut(&str) -> String + Send>;

pub(crate) struct AnswerStream {
    /// The raw text passed in since the last finish: what a final `answer` repeats.
    raw: String,
    kind: Kind,
}

enum Kind {
    Plain {
        /// `None`: raw bytes (`-q` into a pipe or a file).
        sanitizer: Option<ProseStream>,
        /// Shown text not yet written: trailing whitespace.
        held: String,
        written: bool,
    },
    Blocks {
        render: BlockRenderer,
        /// The raw text of the block being written.
        block: String,
        /// The plain preview of `block` on screen (colour terminals only), to erase when it completes.
        preview: Option<Preview>,
        /// Screen columns, for counting the rows the preview takes.
        width: usize,
        /// A block was rendered, and whether its source ended with a blank line (shown before the next).
        rendered_any: bool,
        gap: bool,
    },
}

#[derive(Default)]
struct Preview {
    sanitizer: ProseStream,
    shown: String,
    /// Rows the screen has room for: a preview taller than that could not be erased (the cursor
    /// cannot move above the screen), so such a block stays as plain text instead.
    max_rows: Option<usize>,
    /// The current block's preview reached `max_rows`: it stays on screen as it is.
    kept: bool,
}

impl AnswerStream {
    pub fn plain(sanitize: bool) -> Self {
        let sanitizer = sanitize.then(ProseStream::default);
        Self { raw: String::new(), kind: Kind::Plain { sanitizer, held: String::new(), written: false } }
    }

    /// `preview`: show the block being written as plain text until it completes (a colour terminal
    /// `width` columns wide, where the preview can be erased).
    pub fn blocks(render: BlockRenderer, preview: bool, width: usize) -> Self {
        let max_rows = dialoguer::console::Term::stdout().size_checked().map(|(rows, _)| usize::from(rows).max(3) - 2);
        let preview = preview.then(|| Preview { max_rows, ..Preview::default() });
        let kind = Kind::Blocks {
            render,
            block: String::new(),
            preview,
            width: width.max(1),
            rendered_any: false,
            gap: false,
        };
        Self { raw: String::new(), kind }
    }

    /// Whether answers are rendered a block at a time (streamed or not).
    pub(crate) fn is_blocks(&self) -> bool {
        matches!(self.kind, Kind::Blocks { .. })
    }

    /// Whether any text was passed in since the last finish.
    pub fn active(&self) -> bool {
        !self.raw.is_empty()
    }

    /// What a later whole text (`answer`, `thought`) adds to what was streamed; the whole text when
    /// it does not continue it.
    pub(crate) fn rest_of<'t>(&self, whole: &'t str) -> Option<&'t str> {
        whole.strip_prefix(self.raw.as_str())
    }

    /// The raw text passed in since the last finish.
    pub(crate) fn text(&self) -> &str {
        &self.raw
    }

    /// What a later whole thought adds to the text streamed so far (see [`unseen`]).
    pub(crate) fn unseen<'t>(&self, whole: &'t str) -> &'t str {
        unseen(&self.raw, whole)
    }

    /// What to write for the next piece.
    pub fn push(&mut self, chunk: &str) -> String {
        self.raw.push_str(chunk);
        match &mut self.kind {
            Kind::Plain { sanitizer, held, written } => {
                let shown = match sanitizer {
                    Some(sanitizer) => sanitizer.push(chunk),
                    None => chunk.to_owned(),
                };
                held.push_str(&shown);
                let end = held.trim_end().len();
                if end == 0 && !*written {
                    // Nothing but whitespace yet: a whole answer would start with it only if text follows.
                    return String::new();
                }
                *written |= end > 0;
                let out: String = held.drain(..end).collect();
                out
            }
            Kind::Blocks { render, block, preview, width, rendered_any, gap } => {
                let before = block.len();
                block.push_str(chunk);
                let mut out = String::new();
                let complete = complete_blocks(block);
                if complete > 0 {
                    // A kept preview shows the rest of its block as it is (the completing line ends
                    // in this chunk, so the next block starts inside it).
                    if let Some(preview) = preview.as_mut().filter(|preview| preview.kept) {
                        out.push_str(&preview.push(&chunk[..complete.saturating_sub(before)], *width));
                    }
                    let done: String = block.drain(..complete).collect();
                    out.push_str(&close_block(render, preview.as_mut(), *width, &done, rendered_any, gap));
                    if let Some(preview) = preview.as_mut() {
                        out.push_str(&preview.push(block, *width));
                    }
                } else if let Some(preview) = preview.as_mut() {
                    out.push_str(&preview.push(chunk, *width));
                }
                out
            }
        }
    }

    /// Ends the answer: what remains to write, and a final newline if anything was written.
    pub fn finish(&mut self) -> String {
        self.raw.clear();
        match &mut self.kind {
            Kind::Plain { sanitizer, held, written } => {
                if let Some(sanitizer) = sanitizer {
                    held.push_str(&sanitizer.finish());
                }
                let rest = held.trim_end().to_owned();
                held.clear();
                let any = std::mem::take(written) || !rest.is_empty();
                if any { format!("{rest}\n") } else { String::new() }
            }
            Kind::Blocks { render, block, preview, width, rendered_any, gap } => {
                let done = std::mem::take(block);
                let out = close_block(render, preview.as_mut(), *width, &done, rendered_any, gap);
                *rendered_any = false;
                out
            }
        }
    }
}

/// The part of `whole` not in `shown` (text streamed before it). A text tool call recovered from the
/// reply leaves the prose around it, trimmed: what was shown of it is not shown twice.
pub(crate) fn unseen<'t>(shown: &str, whole: &'t str) -> &'t str {
    if let Some(rest) = whole.strip_prefix(shown) {
        return rest;
    }
    let (shown, whole_start) = (shown.trim(), whole.trim_start());
    if let Some(rest) = whole_start.strip_prefix(shown) {
        return rest;
    }
    if shown.starts_with(whole_start.trim_end()) {
        return "";
    }
    whole
}

/// A block is complete: its preview replaced by its rendering, or, when the preview was too tall to
/// erase, left as it is.
fn close_block(
    render: &mut BlockRenderer,
    preview: Option<&mut Preview>,
    width: usize,
    done: &str,
    rendered_any: &mut bool,
    gap: &mut bool,
) -> String {
    match preview {
        Some(preview) if preview.kept => {
            let mut out = preview.sanitizer.finish();
            preview.shown.clear();
            preview.kept = false;
            if !out.ends_with('\n') && !done.ends_with('\n') {
                out.push('\n');
            }
            // Its own blank lines are on screen already.
            *rendered_any = true;
            *gap = false;
            out
        }
        Some(preview) => preview.erase(width) + &rendered(render, done, rendered_any, gap),
        None => rendered(render, done, rendered_any, gap),
    }
}

/// A rendered block, after a blank line when its source had one before it.
fn rendered(render: &mut BlockRenderer, block: &str, rendered_any: &mut bool, gap: &mut bool) -> String {
    let shown = render(block);
    if shown.trim().is_empty() {
        return String::new();
    }
    let before = if std::mem::replace(rendered_any, true) && *gap { "\n" } else { "" };
    *gap = block.lines().last().is_some_and(|line| line.trim().is_empty());
    format!("{before}{shown}")
}

impl Preview {
    fn push(&mut self, chunk: &str, width: usize) -> String {
        let shown = self.sanitizer.push(chunk).replace('\t', "    ");
        if !self.kept {
            self.shown.push_str(&shown);
            self.kept = self.max_rows.is_some_and(|max| rows_above(&self.shown, width) + 1 >= max);
        }
        shown
    }

    /// Moves back to where the preview started and erases to the end of the screen.
    fn erase(&mut self, width: usize) -> String {
        let _ = self.sanitizer.finish();
        let shown = std::mem::take(&mut self.shown);
        if shown.is_empty() {
            return String::new();
        }
        match rows_above(&shown, width) {
            0 => "\r\x1b[J".to_owned(),
            rows => format!("\x1b[{rows}A\r\x1b[J"),
        }
    }
}

/// How many rows above the cursor `shown` starts, written from the start of a row `width` wide.
fn rows_above(shown: &str, width: usize) -> usize {
    let mut rows = 0;
    let mut lines = shown.split('\n').peekable();
    while let Some(line) = lines.next() {
        let columns = display_width(line);
        if lines.peek().is_some() {
            rows += columns.div_ceil(width).max(1);
        } else {
            // The cursor stays on the row it filled (pending wrap) until more text comes.
            rows += columns.div_ceil(width).max(1) - 1;
        }
    }
    rows
}

fn display_width(line: &str) -> usize {
    dialoguer::console::measure_text_width(line)
}

/// Bytes of `text` that form complete blocks: up to the last blank line outside a code block, or
/// the last closing fence.
fn complete_blocks(text: &str) -> usize {
    let mut end = 0;
    let mut offset = 0;
    let mut fence: Option<(char, usize)> = None;
    let mut has_text = false;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        if !line.ends_with('\n') {
            break;
        }
        let trimmed = line.trim();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        match fence {
            Some((open, len)) => {
                if marker == Some(open) && run >= len && trimmed[run..].trim().is_empty() {
                    fence = None;
                    end = offset;
                    has_text = false;
                }
            }
            None if run >= 3 => fence = marker.map(|m| (m, run)),
            None if trimmed.is_empty() => {
                if has_text {
                    end = offset;
                    has_text = false;
                }
            }
            None => has_text = true,
        }
    }
    end
}

#[cfg(test)]
mod tests;
