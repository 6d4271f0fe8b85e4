//! The line editor behind `Agent >`: reedline with emacs keys, history hints, Tab completion of
//! slash commands, Alt-Enter or a trailing `\` for more lines, and a history file that never holds
//! a secret.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nu_ansi_term::{Color as AnsiColor, Style as AnsiStyle};
use reedline::{
    ColumnarMenu, Completer, DefaultHinter, EditCommand, Emacs, FileBackedHistory, History, HistoryItem, HistoryItemId,
    HistorySessionId, KeyCode, KeyModifiers, MenuBuilder, Prompt, PromptEditMode, PromptHistorySearch,
    PromptHistorySearchStatus, Reedline, ReedlineEvent, ReedlineMenu, SearchQuery, Span, Suggestion, ValidationResult,
    Validator, default_emacs_keybindings,
};

use super::commands::SLASH_COMMANDS;
use crate::redact::Redactor;

/// Entries kept in `$OPSAI_HOME/history`.
pub const HISTORY_ENTRIES: usize = 10_000;

/// What the prompt shows; the REPL updates it as settings change.
#[derive(Debug, Clone, Default)]
pub(crate) struct AgentPrompt {
    pub model: String,
    pub cwd: String,
    pub approve_medium: bool,
    pub dry_run: bool,
}

impl Prompt for AgentPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        let mut left = String::from("Agent");
        if self.approve_medium {
            left.push_str(" [yes]");
        }
        if self.dry_run {
            left.push_str(" [dry-run]");
        }
        Cow::Owned(left)
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Owned(format!("{} · {}", self.model, self.cwd))
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed(" > ")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("  … ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        let prefix = match search.status {
            PromptHistorySearchStatus::Passing => "",
            PromptHistorySearchStatus::Failing => "failing ",
        };
        Cow::Owned(format!("({prefix}search: {}) ", search.term))
    }

    fn get_prompt_color(&self) -> reedline::Color {
        reedline::Color::Cyan
    }

    fn get_indicator_color(&self) -> reedline::Color {
        reedline::Color::Cyan
    }

    fn get_prompt_right_color(&self) -> reedline::Color {
        reedline::Color::DarkGrey
    }
}

/// A trailing `\` asks for another line.
struct Continuation;

impl Validator for Continuation {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.ends_with('\\') { ValidationResult::Incomplete } else { ValidationResult::Complete }
    }
}

/// Completes slash commands at the start of the line.
struct SlashCompleter;

impl Completer for SlashCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> Vec<Suggestion> {
        let typed = &line[..pos.min(line.len())];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Vec::new();
        }
        SLASH_COMMANDS
            .iter()
            .filter(|(name, _)| name.starts_with(typed))
            .map(|(name, what)| Suggestion {
                value: (*name).to_owned(),
                description: Some((*what).to_owned()),
                span: Span::new(0, typed.len()),
                append_whitespace: true,
                ..Suggestion::default()
            })
            .collect()
    }
}

/// `FileBackedHistory` (shared by several opsai processes through its file lock) that redacts each
/// entry before it is kept, so a pasted token never reaches the file.
pub(crate) struct RedactingHistory {
    inner: FileBackedHistory,
    redactor: Arc<Redactor>,
}

impl RedactingHistory {
    /// The history file, or an in-memory history and the reason when the file cannot be used.
    pub fn open(path: &Path, redactor: Arc<Redactor>) -> (Self, Option<String>) {
        // Private like every file under $OPSAI_HOME (reedline would create it world-readable).
        let _ = crate::store::create_private_parent(path).and_then(|()| {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new().append(true).create(true).mode(0o600).open(path).map(drop)
        });
        match FileBackedHistory::with_file(HISTORY_ENTRIES, path.to_owned()) {
            Ok(inner) => (Self { inner, redactor }, None),
            Err(err) => {
                let why = format!("history is not saved this time: {} could not be used ({err})", path.display());
                let inner = FileBackedHistory::new(HISTORY_ENTRIES).unwrap_or_default();
                (Self { inner, redactor }, Some(why))
            }
        }
    }
}

impl History for RedactingHistory {
    fn save(&mut self, mut item: HistoryItem) -> reedline::Result<HistoryItem> {
        item.command_line = self.redactor.redact(&item.command_line);
        // reedline panics on a failed save; an entry that cannot be kept is dropped instead.
        match self.inner.save(item.clone()) {
            Ok(saved) => Ok(saved),
            Err(_) => Ok(item),
        }
    }
    fn load(&self, id: HistoryItemId) -> reedline::Result<HistoryItem> {
        self.inner.load(id)
    }
    fn count(&self, query: SearchQuery) -> reedline::Result<i64> {
        self.inner.count(query)
    }
    fn search(&self, query: SearchQuery) -> reedline::Result<Vec<HistoryItem>> {
        self.inner.search(query)
    }
    fn update(&mut self, id: HistoryItemId, updater: &dyn Fn(HistoryItem) -> HistoryItem) -> reedline::Result<()> {
        self.inner.update(id, updater)
    }
    fn clear(&mut self) -> reedline::Result<()> {
        self.inner.clear()
    }
    fn delete(&mut self, id: HistoryItemId) -> reedline::Result<()> {
        self.inner.delete(id)
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn session(&self) -> Option<HistorySessionId> {
        self.inner.session()
    }
}

/// The editor, and a warning when the history file could not be used.
pub fn build(history_path: PathBuf, redactor: Arc<Redactor>, color: bool) -> (Reedline, Option<String>) {
    let mut keys = default_emacs_keybindings();
    keys.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![ReedlineEvent::Menu("completion_menu".into()), ReedlineEvent::MenuNext]),
    );
    keys.add_binding(KeyModifiers::ALT, KeyCode::Enter, ReedlineEvent::Edit(vec![EditCommand::InsertNewline]));
    let (history, warning) = RedactingHistory::open(&history_path, redactor);
    let hint_style = if color { AnsiStyle::new().fg(AnsiColor::DarkGray) } else { AnsiStyle::new() };
    let menu = ColumnarMenu::default().with_name("completion_menu");
    let editor = Reedline::create()
        .with_edit_mode(Box::new(Emacs::new(keys)))
        .with_history(Box::new(history))
        .with_hinter(Box::new(DefaultHinter::default().with_style(hint_style)))
        .with_completer(Box::new(SlashCompleter))
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        .with_validator(Box::new(Continuation))
        .with_ansi_colors(color)
        .use_bracketed_paste(true);
    (editor, warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_complete_from_their_prefix() {
        let values = |line: &str| -> Vec<String> {
            SlashCompleter.complete(line, line.len()).into_iter().map(|s| s.value).collect()
        };
        assert_eq!(values("/re"), ["/resume"]);
        assert_eq!(values("/"), SLASH_COMMANDS.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>());
        assert!(values("list /re").is_empty());
        assert!(values("/resume 1").is_empty());
    }

    #[test]
    fn a_trailing_backslash_continues() {
        assert!(matches!(Continuation.validate("find \\"), ValidationResult::Incomplete));
        assert!(matches!(Continuation.validate("find"), ValidationResult::Complete));
    }

    #[test]
    fn the_prompt_shows_the_switches() {
        let mut prompt = AgentPrompt { model: "qwen2.5:7b".into(), cwd: "~/src".into(), ..AgentPrompt::default() };
        assert_eq!(prompt.render_prompt_left(), "Agent");
        assert_eq!(prompt.render_prompt_indicator(PromptEditMode::Emacs), " > ");
        assert_eq!(prompt.render_prompt_right(), "qwen2.5:7b · ~/src");
        prompt.approve_medium = true;
        prompt.dry_run = true;
        assert_eq!(prompt.render_prompt_left(), "Agent [yes] [dry-run]");
    }

    #[test]
    fn history_entries_are_redacted_before_they_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        let secret = "hunter2-is-not-a-password-9f8e7d";
        let redactor = Arc::new(Redactor::new([("DB_PASSWORD".to_owned(), secret.to_owned())]));
        let (mut history, warning) = RedactingHistory::open(&path, redactor.clone());
        assert_eq!(warning, None);
        history.save(HistoryItem::from_command_line(format!("connect with {secret} please"))).unwrap();
        history.save(HistoryItem::from_command_line("token ghp_0123456789abcdefghijABCDEFGHIJ012345")).unwrap();
        history.sync().unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(!file.contains(secret) && !file.contains("ghp_0123"), "{file}");
        assert!(file.contains("connect with [REDACTED"), "{file}");
        // A second process sees the first one's entries after a sync.
        let (other, _) = RedactingHistory::open(&path, redactor);
        assert_eq!(other.count_all().unwrap(), 2);
    }

    #[test]
    fn an_unusable_history_file_falls_back_to_memory_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let (mut history, warning) = RedactingHistory::open(&dir.path().join("file/history"), Arc::default());
        assert!(warning.unwrap().contains("history is not saved this time"));
        history.save(HistoryItem::from_command_line("still works")).unwrap();
        assert_eq!(history.count_all().unwrap(), 1);
    }
}
