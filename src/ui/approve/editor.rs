//! `[e]` at the approval prompt: the command in the REPL's line editor (reedline, emacs keys),
//! pre-filled, the cursor at its end. It paints on stderr, where the prompt is.

use std::borrow::Cow;

use reedline::{EditCommand, Prompt, PromptEditMode, PromptHistorySearch, Reedline, Signal};

/// The edited line; `None` when the person pressed Ctrl-C or Ctrl-D (back to the prompt). Errors
/// when the terminal cannot be driven (it does not answer a cursor-position query).
pub(super) fn edit_line(command: &str) -> std::io::Result<Option<String>> {
    // A SIGTERM (`stop_prompts`) ends the edit at once.
    let mut editor = Reedline::create().with_break_signal(super::keys::editor_break());
    // Inserting leaves the cursor after the text.
    editor.run_edit_commands(&[EditCommand::InsertString(command.trim_end_matches('\n').to_owned())]);
    Ok(match editor.read_line(&EditPrompt)? {
        Signal::Success(line) => Some(line),
        _ => None,
    })
}

struct EditPrompt;

impl Prompt for EditPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed("  ")
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("> ")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("  … ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        Cow::Owned(format!("(search: {}) ", search.term))
    }
}
