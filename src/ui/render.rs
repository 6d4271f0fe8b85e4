//! Renders `AgentEvent`s for a person (stderr, with the answer on stdout), as JSON lines (`--json`),
//! or as the bare answer (`-q`). stdout is a protocol: only the answer or the JSON lines go there.

mod answer;
mod held;
mod hosts;
mod quiet;
mod spinner;

use std::io::Write;

use answer::AnswerStream;
pub(crate) use answer::BlockRenderer;
use held::HeldCall;

use crate::protocol::{AgentEvent, ApprovalDecision, ObservationStatus, ReplyProgress};
use crate::ui::{display, markdown, style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Progress on stderr, the answer on stdout.
    Human { color: bool, spinner: bool },
    /// Only the final answer, on stdout.
    Quiet,
    /// Every event as one JSON line on stdout.
    Json,
}

pub(crate) struct Renderer<O: Write, E: Write> {
    style: Style,
    out: O,
    err: E,
    /// A "Thinking…" line is on screen and must be erased before anything else is written.
    spinner_shown: bool,
    /// The next live-output byte starts a line (so it gets the gutter).
    at_line_start: bool,
    /// Reasoning was streamed on the current line.
    in_thought: bool,
    /// Thoughts arrive in pieces: sanitized on what has arrived, so an escape split across pieces
    /// is still removed whole.
    thought_text: display::ProseStream,
    /// stdout is not a terminal: a person watches stderr, so reply text streams there (dimmed, as
    /// progress) and stdout receives only the whole answer. Holds the text streamed so far.
    reply_on_stderr: Option<String>,
    /// Neither stdout nor stderr is a terminal: reply text is shown once complete, as an answer or a
    /// thought, not as it streams.
    unstreamed: bool,
    /// Which spinner frame is showing.
    frame: usize,
    /// What the spinner says, and since when.
    stage: spinner::Spinner,
    /// Answers are rendered as Markdown wrapped to this width (the REPL); else printed as text.
    markdown_width: Option<usize>,
    /// Live output is untrusted: only text, colors and progress-bar controls reach the terminal.
    live_filter: super::live::LiveFilter,
    /// The live line being drawn.
    cur: LiveLine,
    /// `-q` with stdout a pipe or a file: the answer is written byte for byte (a script may want
    /// exactly what the model wrote). On a terminal it is sanitized like everything else.
    raw_answer: bool,
    /// Under `-q`: the call id and command of a refusal whose reason (its `tool_result`) is next.
    refused: Option<(String, String)>,
    /// The reply text streaming in (`answer_delta`), until its `answer` or `thought` arrives.
    answer: AnswerStream,
    /// Under `-q`: reply text not yet known to be the answer (a tool call may still follow it).
    undecided: String,
    /// Reply text streamed as an answer and ended early because a native call followed: the
    /// `thought` that comes with the call shows only what it adds.
    ended_thought: Option<String>,
    /// A tool call's lines, held until its decision: an approval prompt shows the command and its
    /// reasons itself, so they are printed here only when nobody is asked (printed once).
    held: Option<HeldCall>,
    /// When the last fleet progress line was written, and for which batch (hosts, total), on a
    /// stderr that is not a terminal (no spinner).
    hosts_line: Option<(std::time::Instant, (String, usize))>,
}

/// The live output line being drawn, after the gutter. Reset as a whole when a line ends, a redraw
/// replaces it, or a new command starts.
#[derive(Debug, Default)]
struct LiveLine {
    /// A `\r` in live output: the next text redraws the line (see [`Renderer::live`]).
    pending_cr: bool,
    /// Characters on the current live line, after the gutter.
    chars: usize,
    /// The current live line's text as shown (no colors), for repainting it after a backspace.
    text: String,
    /// Backspaces changed the current line: repaint it before anything else is written.
    repaint: bool,
    /// The line passed [`LINE_CAP`] characters: as in the capture, what came before is kept and
    /// `text` holds only what followed, and a redraw starts a new row.
    spilled: bool,
}

impl LiveLine {
    /// After backspaces: the row is erased and the line drawn again from the gutter.
    fn repaint_line(&mut self, out: &mut String) {
        if !std::mem::take(&mut self.repaint) {
            return;
        }
        // Past the limit the row also holds text the capture kept: start a new one, erase nothing.
        out.push_str(if self.spilled { "\n" } else { "\r\x1b[K" });
        out.push_str(GUTTER);
        out.push_str(&self.text);
    }
}

/// A live line this long is no longer redrawn by a `\r` but continued on a new line, as the model's
/// capture does (`exec::output::clean::LINE_CAP`): what the model is given stays on screen.
const LINE_CAP: usize = 4096;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

const GUTTER: &str = "  │ ";

/// Where a command's summary would be, when the person aborted at its approval prompt.
const ABORTED: &str = "✗ aborted: not run, and the task stops here";

impl<O: Write, E: Write> Renderer<O, E> {
    pub fn new(style: Style, out: O, err: E) -> Self {
        Self {
            style,
            out,
            err,
            spinner_shown: false,
            at_line_start: true,
            live_filter: super::live::LiveFilter::new(),
            cur: LiveLine::default(),
            in_thought: false,
            held: None,
            thought_text: display::ProseStream::default(),
            reply_on_stderr: None,
            unstreamed: false,
            frame: 0,
            stage: spinner::Spinner::new(spinner::Stage::Model),
            markdown_width: None,
            raw_answer: false,
            refused: None,
            answer: AnswerStream::plain(true),
            undecided: String::new(),
            ended_thought: None,
            hosts_line: None,
        }
    }

    /// stdout is not a terminal: under `-q` the answer is written to it unchanged; for a person the
    /// reply streams on stderr (when that is a terminal) and stdout gets the whole answer once it is
    /// complete.
    pub(crate) fn with_raw_answer(mut self, raw: bool) -> Self {
        self.raw_answer = raw;
        // With stderr not a terminal either (a log, `2>&1 | tee`), nobody reads the progress live:
        // the reply is not streamed there, so the answer is not written twice.
        self.reply_on_stderr = (raw && matches!(self.style, Style::Human { spinner: true, .. })).then(String::new);
        self.unstreamed = raw && matches!(self.style, Style::Human { spinner: false, .. });
        self.answer = AnswerStream::plain(!(raw && self.style == Style::Quiet));
        self
    }

    /// Answers as Markdown for a terminal `width` columns wide (plain text when color is off).
    pub(crate) fn with_markdown(mut self, width: usize) -> Self {
        self.markdown_width = Some(width);
        if self.color() {
            let render: BlockRenderer = Box::new(move |block: &str| markdown::render(block, width, true));
            self.answer = AnswerStream::blocks(render, true, width);
        }
        self
    }

    /// A streamed answer is written a Markdown block at a time through `render` (`explain` adds risk
    /// badges to the commands it suggests); `preview`: the block being written is shown as plain
    /// text meanwhile (a colour terminal `width` columns wide).
    pub(crate) fn with_blocks(mut self, render: BlockRenderer, preview: bool, width: usize) -> Self {
        self.answer = AnswerStream::blocks(render, preview, width);
        self
    }

    /// The streamed answer so far is complete (`whole`: the text that completes it, when known).
    fn finish_answer(&mut self, whole: Option<&str>) -> std::io::Result<()> {
        let mut shown = String::new();
        if let Some(whole) = whole {
            match self.answer.rest_of(whole) {
                Some(rest) => shown.push_str(&self.answer.push(rest)),
                None => {
                    shown.push_str(&self.answer.finish());
                    shown.push_str(&self.answer.push(whole));
                }
            }
        }
        shown.push_str(&self.answer.finish());
        self.out.write_all(shown.as_bytes())?;
        self.out.flush()
    }

    /// An `answer_delta`: written as it arrives.
    fn stream_answer(&mut self, text: &str) -> std::io::Result<()> {
        let shown = self.answer.push(text);
        self.out.write_all(shown.as_bytes())?;
        self.out.flush()
    }

    fn color(&self) -> bool {
        matches!(self.style, Style::Human { color: true, .. })
    }

    fn paint(&self, style: anstyle::Style, text: &str) -> String {
        style::paint(style, text, self.color())
    }

    /// A model request goes out: the spinner says so until the next event (only on a terminal).
    pub fn waiting(&mut self) {
        if !self.spinner_shown || !matches!(self.stage.stage(), spinner::Stage::Model) {
            self.stage = spinner::Spinner::new(spinner::Stage::Model);
        }
        self.show_spinner();
    }

    fn show_spinner(&mut self) {
        if let Style::Human { spinner: true, .. } = self.style
            && !self.spinner_shown
        {
            self.spinner_shown = true;
            self.draw_spinner();
        }
    }

    /// Advances the spinner, if one is showing (called on a timer).
    pub fn tick(&mut self) {
        if self.spinner_shown {
            self.frame = (self.frame + 1) % FRAMES.len();
            self.draw_spinner();
        }
    }

    /// One write per frame: back to the line start, the frame, then the text.
    fn draw_spinner(&mut self) {
        let line = self.paint(style::dim(), &format!("{} {}", FRAMES[self.frame], self.stage.label()));
        let _ = write!(self.err, "\r\x1b[2K{line}");
        let _ = self.err.flush();
    }

    fn clear_spinner(&mut self) {
        if self.spinner_shown {
            let _ = write!(self.err, "\r\x1b[2K");
            self.spinner_shown = false;
        }
    }

    /// Model text, which may repeat untrusted output: no escape, control, bidi or zero-width
    /// character reaches the screen.
    fn thought(&mut self, text: &str) -> std::io::Result<()> {
        let text = self.thought_text.push(text);
        if !text.is_empty() {
            let text = self.paint(style::dim(), &text);
            write!(self.err, "{text}")?;
            self.in_thought = !text.ends_with('\n');
        }
        self.err.flush()
    }

    fn end_thought(&mut self) {
        let rest = self.thought_text.finish();
        if !rest.is_empty() {
            let rest = self.paint(style::dim(), &rest);
            let _ = write!(self.err, "{rest}");
            self.in_thought = !rest.ends_with('\n');
        }
        if self.in_thought {
            let _ = writeln!(self.err);
            self.in_thought = false;
        }
    }

    pub fn handle(&mut self, event: &AgentEvent) -> std::io::Result<()> {
        match self.style {
            Style::Json if matches!(event, AgentEvent::Progress { .. }) => Ok(()),
            Style::Json => {
                serde_json::to_writer(&mut self.out, event)?;
                writeln!(self.out)?;
                self.out.flush()
            }
            Style::Quiet => self.quiet(event),
            Style::Human { .. } => self.human(event),
        }
    }

    fn human(&mut self, event: &AgentEvent) -> std::io::Result<()> {
        if let AgentEvent::Progress { stage } = event {
            return match stage {
                ReplyProgress::Hosts(progress) => self.hosts_progress(progress),
                stage => self.progress(stage),
            };
        }
        self.release_held(event)?;
        if let Some(shown) = self.ended_thought.take()
            && let AgentEvent::Thought { text } = event
        {
            let rest = answer::unseen(&shown, text).trim_start().to_owned();
            return if rest.trim().is_empty() { Ok(()) } else { self.human(&AgentEvent::Thought { text: rest }) };
        }
        if self.unstreamed && matches!(event, AgentEvent::AnswerDelta { .. }) {
            return Ok(());
        }
        if let Some(streamed) = self.reply_on_stderr.as_mut() {
            match event {
                AgentEvent::AnswerDelta { text } => {
                    streamed.push_str(text);
                    self.clear_spinner();
                    return self.thought(text);
                }
                AgentEvent::Thought { text } if !streamed.is_empty() => {
                    let rest = answer::unseen(streamed, text).trim_start().to_owned();
                    streamed.clear();
                    self.clear_spinner();
                    return self.thought(&rest);
                }
                _ => streamed.clear(),
            }
        }
        self.clear_spinner();
        if !matches!(event, AgentEvent::Thought { .. }) || self.answer.active() {
            self.end_thought();
        }
        if let AgentEvent::AnswerDelta { text } = event {
            return self.stream_answer(text);
        }
        if let AgentEvent::Answer { text } = event
            && self.answer.is_blocks()
        {
            return self.finish_answer(Some(text));
        }
        if self.answer.active() {
            match event {
                AgentEvent::Answer { text } => return self.finish_answer(Some(text)),
                // The streamed text was a thought (tool calls follow): what it did not show yet is
                // shown as one.
                AgentEvent::Thought { text } => {
                    let rest = self.answer.unseen(text).trim_start().to_owned();
                    self.finish_answer(None)?;
                    if rest.trim().is_empty() {
                        return Ok(());
                    }
                    return self.human(&AgentEvent::Thought { text: rest });
                }
                _ => self.finish_answer(None)?,
            }
        }
        match event {
            AgentEvent::AnswerDelta { .. } | AgentEvent::Progress { .. } => {}
            AgentEvent::Thought { text } => self.thought(text)?,
            AgentEvent::ToolCall { id, tool, command, risk, reasons, args } => {
                self.live_filter = super::live::LiveFilter::new();
                self.cur = LiveLine::default();
                // The tool name, the command and the arguments are the model's: shown with what was
                // removed written out, the name on one line (an unknown tool's name is shown too).
                let shown = command.clone().unwrap_or_else(|| args.to_string());
                // A multi-line command continues under `│`, so no line of it can pass for output or a prompt.
                let shown = display::command(shown.trim_end_matches('\n')).replace('\n', "\n    │ ");
                let badge = match risk {
                    Some(risk) => format!(" {}", style::badge(*risk, self.color())),
                    None => String::new(),
                };
                let arrow = self.paint(style::action(), "▶");
                let head = format!("{arrow} {}{badge}  {shown}", display::line(tool));
                // Every reason, a Safe command's too: its only reason is the user's allow rule.
                let mut lines = String::new();
                for reason in reasons {
                    lines.push_str(&self.paint(style::dim(), &format!("    - {}", display::command(reason))));
                    lines.push('\n');
                }
                self.held = Some(HeldCall { id: id.clone(), head, reasons: lines });
            }
            // `q` (or Ctrl-C) at the approval prompt: nothing else says the turn ended there.
            AgentEvent::Approval { decision: ApprovalDecision::Abort, .. } => {
                let line = self.paint(style::failure(), ABORTED);
                writeln!(self.err, "  {line}")?;
            }
            AgentEvent::Approval { decision, command, .. } => {
                if matches!(
                    decision,
                    ApprovalDecision::Auto | ApprovalDecision::Approved | ApprovalDecision::ApprovedForSession
                ) {
                    self.stage = spinner::Spinner::running(command);
                    self.show_spinner();
                }
            }
            // The grouped `output` that follows shows every host.
            AgentEvent::Done { .. } | AgentEvent::HostResult { .. } => {}
            AgentEvent::Output { chunk, .. } => {
                self.live(chunk)?;
                // Between lines of output the command is still running: the spinner says for how long.
                if self.at_line_start && matches!(self.stage.stage(), spinner::Stage::Running(_)) {
                    self.err.flush()?;
                    self.show_spinner();
                }
            }
            AgentEvent::ToolResult { status, exit_code, output, output_bytes, duration_ms, .. } => {
                if !self.at_line_start {
                    writeln!(self.err)?;
                    self.at_line_start = true;
                }
                let line = summary(*status, *exit_code, output, *output_bytes, *duration_ms);
                let tone = match status {
                    ObservationStatus::Ran if *exit_code == Some(0) => style::success(),
                    ObservationStatus::Ran => style::warning(),
                    _ => style::failure(),
                };
                let line = self.paint(tone, &line);
                writeln!(self.err, "  {line}")?;
            }
            AgentEvent::Answer { text } => {
                // The model has read untrusted output: its answer never reaches the screen with
                // control sequences in it, Markdown or not.
                let shown = match self.markdown_width {
                    Some(width) => markdown::render(text, width, self.color()),
                    None => markdown::render(text, usize::MAX, false),
                };
                write!(self.out, "{shown}")?;
                self.out.flush()?;
            }
            AgentEvent::Error { message } => {
                // Errors may quote the model (`unknown tool …`).
                let line = self.paint(style::failure(), &format!("opsai: {}", display::command(message)));
                writeln!(self.err, "{line}")?;
            }
            AgentEvent::Retry { .. } => {
                if let Some(line) = retry_line(event) {
                    let line = self.paint(style::warning(), &line);
                    writeln!(self.err, "{line}")?;
                }
                // Still waiting for the model.
                self.waiting();
            }
        }
        self.err.flush()
    }

    /// The model writes a tool call: the spinner says so. Reply text on the current line is a
    /// thought once a native call follows: its line is ended first, so the spinner's line erase
    /// cannot take it away; text that may still be an answer (reasoning, stderr) keeps its line and
    /// the spinner stays away until the call's own line.
    fn progress(&mut self, stage: &ReplyProgress) -> std::io::Result<()> {
        if !matches!(self.style, Style::Human { spinner: true, .. }) {
            return Ok(());
        }
        if *stage == ReplyProgress::WritingCall && self.answer.active() && !self.in_thought {
            self.ended_thought = Some(self.answer.text().to_owned());
            self.finish_answer(None)?;
        }
        let mid_line = self.answer.active()
            || self.in_thought
            || self.reply_on_stderr.as_ref().is_some_and(|streamed| !streamed.is_empty());
        if *stage == ReplyProgress::AnswerComplete || mid_line {
            return Ok(());
        }
        self.stage = spinner::Spinner::new(spinner::Stage::WritingCall);
        if self.spinner_shown {
            self.draw_spinner();
        } else {
            self.show_spinner();
        }
        Ok(())
    }

    /// Live command output in an indented block with a gutter.
    ///
    /// What the screen must guarantee for untrusted output: every line the model is given is on
    /// screen, and no line shows a mix of old and new text that neither wrote. So a redraw (`\r`
    /// then text, or `ESC [ 2 K`) erases the whole row and redraws the gutter before the new text,
    /// exactly as the model's capture replaces the line; a line past [`LINE_CAP`] continues on a new
    /// row instead (the capture keeps it too). The cursor never moves left within a line: a
    /// backspace deletes the last character, as the capture does, and the row is repainted with
    /// what is left, so a run of invisible characters and backspaces cannot move the cursor back
    /// over text the model still reads; erase-to-the-end (`ESC [ K`) is then a no-op and
    /// erase-to-the-start (`ESC [ 1 K`) is dropped.
    fn live(&mut self, chunk: &str) -> std::io::Result<()> {
        let shown = self.live_filter.feed(chunk);
        let mut out = String::with_capacity(shown.len() + 16);
        let mut chars = shown.chars();
        while let Some(c) = chars.next() {
            if c != '\x08' && c != '\x1b' {
                self.cur.repaint_line(&mut out);
            }
            match c {
                '\r' => self.cur.pending_cr = true,
                '\n' => {
                    if self.at_line_start {
                        out.push_str(GUTTER);
                    }
                    out.push('\n');
                    self.at_line_start = true;
                    self.cur = LiveLine::default();
                }
                '\x1b' => {
                    // The filter passes only whole `ESC [ params m|K` sequences.
                    let mut params = String::new();
                    let final_byte = chars.by_ref().skip(1).find(|c| {
                        let end = !(c.is_ascii_digit() || *c == ';');
                        if !end {
                            params.push(*c);
                        }
                        end
                    });
                    match (final_byte, params.as_str()) {
                        (Some('m'), _) => {
                            out.push_str("\x1b[");
                            out.push_str(&params);
                            out.push('m');
                        }
                        (Some('K'), "2") => {
                            self.cur.pending_cr = false;
                            self.redraw(&mut out);
                        }
                        _ => {}
                    }
                }
                '\x08' => {
                    if !self.cur.pending_cr && self.cur.text.pop().is_some() {
                        self.cur.chars -= 1;
                        self.cur.repaint = true;
                    }
                }
                c => {
                    if self.cur.pending_cr {
                        self.cur.pending_cr = false;
                        self.redraw(&mut out);
                    }
                    if self.at_line_start {
                        out.push_str(GUTTER);
                        self.at_line_start = false;
                    }
                    out.push(c);
                    self.cur.text.push(c);
                    self.cur.chars += 1;
                    if self.cur.chars >= LINE_CAP {
                        self.cur.text.clear();
                        self.cur.chars = 0;
                        self.cur.spilled = true;
                    }
                }
            }
        }
        self.cur.repaint_line(&mut out);
        write!(self.err, "{out}")
    }

    /// The current live line is replaced: its row is erased and the next text starts after a
    /// fresh gutter (or, past [`LINE_CAP`], on a new row).
    fn redraw(&mut self, out: &mut String) {
        if self.at_line_start {
            return;
        }
        if self.cur.spilled {
            out.push('\n');
        } else {
            out.push_str("\r\x1b[K");
        }
        self.at_line_start = true;
        self.cur = LiveLine::default();
    }
}

/// `opsai: the model endpoint is busy (429); retrying in 3 s (attempt 2/3)`.
fn retry_line(event: &AgentEvent) -> Option<String> {
    let AgentEvent::Retry { reason, wait_ms, attempt, max_attempts } = event else { return None };
    // The reason comes from the model's endpoint side: printable text only.
    let reason = display::line(reason);
    if *wait_ms == 0 {
        // No wait: the agent asks a small model again after an unusable reply (a loop, no command).
        return Some(format!("opsai: the model {reason}; asking again (attempt {attempt}/{max_attempts})"));
    }
    let wait = if wait_ms % 1000 == 0 || *wait_ms >= 10_000 {
        format!("{} s", wait_ms.div_ceil(1000))
    } else {
        format!("{:.1} s", *wait_ms as f64 / 1000.0)
    };
    Some(format!("opsai: the model endpoint {reason}; retrying in {wait} (attempt {attempt}/{max_attempts})"))
}

/// `✓ exit 0 · 1.2 KB · 35 ms` (`output_bytes`: what the command printed), or what stopped the
/// command (the first line of `output`, when it was not run).
pub fn summary(
    status: ObservationStatus,
    exit_code: Option<i32>,
    output: &str,
    output_bytes: u64,
    duration_ms: u64,
) -> String {
    let size = human_size(output_bytes);
    match status {
        ObservationStatus::Ran => {
            let mark = if exit_code == Some(0) { "✓" } else { "✗" };
            let code = exit_code.map_or("-".to_owned(), |c| c.to_string());
            format!("{mark} exit {code} · {size} · {duration_ms} ms")
        }
        ObservationStatus::TimedOut => format!("✗ timed out after {duration_ms} ms · {size}"),
        ObservationStatus::Interrupted => format!("✗ interrupted after {duration_ms} ms · {size}"),
        ObservationStatus::DeniedByUser => "✗ declined".to_owned(),
        ObservationStatus::DeniedByPolicy | ObservationStatus::InvalidArguments => {
            // Quotes the model (`unknown tool …`, a refused command).
            format!("✗ {}", display::line(output.lines().next().unwrap_or("not run")))
        }
    }
}

fn human_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests;
