//! The saved side of the conversation the REPL is in: which stored conversation it is, and the
//! recorder that writes each message as the agent produces it (when the session store works).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::agent::Recorder;
use crate::protocol::{ChatMessage, Role};
use crate::store::sessions::{ConversationId, ConversationSummary, NewConversation, SessionError, SessionStore};

/// Where a new conversation was started, for `opsai sessions list`.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub cwd: String,
    pub host: String,
    pub model: String,
}

pub(crate) struct Conversation<'s> {
    store: Option<&'s SessionStore>,
    pub id: Option<ConversationId>,
    /// The first failure to save, reported once.
    failure: Mutex<Option<String>>,
    reported: bool,
    /// [`Self::begin`] created the row for the turn now running (not a resumed or earlier one).
    started_now: bool,
    /// The model has replied in this conversation (an assistant message was recorded).
    replied: AtomicBool,
    /// The title the next user message names the conversation with, in the same write.
    naming: Mutex<Option<String>>,
}

impl<'s> Conversation<'s> {
    pub fn new(store: Option<&'s SessionStore>) -> Self {
        Self {
            store,
            id: None,
            failure: Mutex::new(None),
            reported: false,
            started_now: false,
            replied: AtomicBool::new(false),
            naming: Mutex::new(None),
        }
    }

    /// Names the conversation `title` with its next user message, stored together: a message
    /// that is refused, or not stored, names nothing.
    pub(crate) fn name_with_next_message(&self, title: String) {
        if let Ok(mut naming) = self.naming.lock() {
            *naming = Some(title);
        }
    }

    /// Saves the conversation's row before its first turn, so the turn's messages have a home and
    /// the audit log can name it from the first command on.
    pub fn begin(&mut self, first_request: &str, origin: &Origin) {
        let (Some(store), None) = (self.store, self.id) else { return };
        let new = NewConversation {
            first_request,
            cwd: &origin.cwd,
            host: &origin.host,
            model: &origin.model,
            user: None,
            cluster: None,
            hosts: None,
        };
        match store.create(&new) {
            Ok(id) => {
                self.id = Some(id);
                self.started_now = true;
                self.replied.store(false, Ordering::SeqCst);
            }
            Err(err) => self.failed(&err),
        }
    }

    /// After each turn: a conversation this turn started that the model never replied to (the
    /// endpoint unreachable, a 401, Ctrl-C before the answer) is deleted, as there is nothing in it
    /// to continue. No audit line names it (commands run only at the model's request), so the
    /// SESSION labels stay consistent. True when it was deleted: the next task starts afresh.
    pub(crate) fn end_turn(&mut self) -> bool {
        let started_now = std::mem::take(&mut self.started_now);
        let (Some(store), Some(id)) = (self.store, self.id) else { return false };
        if !started_now || self.replied.load(Ordering::SeqCst) {
            return false;
        }
        match store.delete(id) {
            Ok(_) => {
                self.id = None;
                true
            }
            Err(err) => {
                self.failed(&err);
                false
            }
        }
    }

    /// The audit log's SESSION field.
    pub(crate) fn label(&self) -> String {
        match self.id {
            Some(id) => crate::store::sessions::label(id),
            None => format!("s{}", std::process::id()),
        }
    }

    /// The conversation `--session ID` or `--continue` asks for: the last one in `cwd`, else the
    /// last one. `Ok(None)` when nothing was asked for or there is nothing to continue. A web
    /// conversation (`opsai serve`'s) is not continued here: its turns belong to the server.
    pub fn chosen(
        &self,
        session: Option<ConversationId>,
        continue_last: bool,
        cwd: &str,
    ) -> Result<Option<ConversationId>, SessionError> {
        match (session, continue_last, self.store) {
            (None, false, _) => Ok(None),
            (Some(id), _, Some(store)) => match store.get(id)? {
                Some(ConversationSummary { user: Some(user), .. }) => Err(SessionError::Web { id, user }),
                _ => Ok(Some(id)),
            },
            (Some(id), _, None) => Ok(Some(id)),
            (None, true, None) => Ok(None),
            (None, true, Some(store)) => Ok(store.last(Some(cwd))?.map(|last| last.id)),
        }
    }

    /// Continues a saved conversation: returns its messages, repaired, for the history the model sees.
    pub fn resume(&mut self, id: ConversationId) -> Result<(ConversationSummary, Vec<ChatMessage>), SessionError> {
        let store = self.store.ok_or(SessionError::NotFound(id))?;
        let summary = store.get(id)?.ok_or(SessionError::NotFound(id))?;
        let mut messages = store.messages(id)?;
        repair(&mut messages);
        self.id = Some(id);
        self.started_now = false;
        Ok((summary, messages))
    }

    /// Starts over: the next task begins a new saved conversation.
    pub fn reset(&mut self) {
        self.id = None;
        self.started_now = false;
    }

    pub(crate) fn set_model(&self, model: &str) {
        if let (Some(store), Some(id)) = (self.store, self.id)
            && let Err(err) = store.set_model(id, model)
        {
            self.failed(&err);
        }
    }

    fn failed(&self, err: &SessionError) {
        if let Ok(mut failure) = self.failure.lock()
            && failure.is_none()
        {
            *failure = Some(err.to_string());
        }
    }

    /// A warning to show once, when saving failed.
    pub(crate) fn take_warning(&mut self) -> Option<String> {
        if self.reported {
            return None;
        }
        let failure = self.failure.lock().ok()?.clone()?;
        self.reported = true;
        Some(format!("this conversation is no longer being saved: {failure}"))
    }
}

impl Recorder for Conversation<'_> {
    fn record(&self, message: &ChatMessage) {
        if message.role == Role::Assistant {
            self.replied.store(true, Ordering::SeqCst);
        }
        let (Some(store), Some(id)) = (self.store, self.id) else { return };
        // A write can wait up to the busy timeout for another opsai; the runtime's other tasks
        // (Ctrl-C, the spinner) keep running meanwhile.
        let title = match message.role {
            Role::User => self.naming.lock().ok().and_then(|mut naming| naming.take()),
            _ => None,
        };
        let append = || match &title {
            Some(title) => store.append_naming(id, message, title),
            None => store.append(id, message),
        };
        let result = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(append)
            }
            _ => append(),
        };
        if let Err(err) = result {
            self.failed(&err);
        }
    }
}

/// A conversation cut short by a crash or a kill can end with tool calls that never got a result;
/// every chat API rejects that, so each missing result is filled in. System messages are dropped
/// (the current system prompt is always sent).
pub(crate) fn repair(messages: &mut Vec<ChatMessage>) {
    messages.retain(|m| m.role != Role::System);
    crate::agent::history::repair_arguments(messages);
    let mut repaired = Vec::with_capacity(messages.len());
    let mut pending: Vec<String> = Vec::new();
    for message in messages.drain(..) {
        match message.role {
            Role::Tool => {
                let id = message.tool_call_id.clone().unwrap_or_default();
                match pending.iter().position(|p| *p == id) {
                    Some(at) => {
                        pending.remove(at);
                        repaired.push(message);
                    }
                    // A result without its call would be rejected too.
                    None => continue,
                }
            }
            _ => {
                close(&mut repaired, &mut pending);
                pending = message.tool_calls.iter().map(|c| c.id.clone()).collect();
                repaired.push(message);
            }
        }
    }
    close(&mut repaired, &mut pending);
    *messages = repaired;
}

fn close(messages: &mut Vec<ChatMessage>, pending: &mut Vec<String>) {
    for id in pending.drain(..) {
        messages.push(ChatMessage::tool(id, "[no result: opsai stopped before this command finished]"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "run_command".into(), arguments: serde_json::json!({"command": "ls"}) }
    }

    #[test]
    fn repair_fills_missing_results_and_drops_orphans() {
        let mut messages = vec![
            ChatMessage::system("old system prompt"),
            ChatMessage::user("list"),
            ChatMessage::assistant("", vec![call("a"), call("b")]),
            ChatMessage::tool("a", "file1"),
            ChatMessage::tool("zzz", "orphan"),
            ChatMessage::user("again"),
            ChatMessage::assistant("", vec![call("c")]),
        ];
        repair(&mut messages);
        let shape: Vec<(Role, Option<&str>)> = messages.iter().map(|m| (m.role, m.tool_call_id.as_deref())).collect();
        assert_eq!(
            shape,
            [
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("a")),
                (Role::Tool, Some("b")),
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("c")),
            ]
        );
        assert!(messages[3].content.contains("opsai stopped"));
    }

    #[test]
    fn a_whole_conversation_is_left_alone() {
        let mut messages = vec![
            ChatMessage::user("list"),
            ChatMessage::assistant("", vec![call("a")]),
            ChatMessage::tool("a", "file1"),
            ChatMessage::assistant("one file", vec![]),
        ];
        let before = messages.clone();
        repair(&mut messages);
        assert_eq!(messages, before);
    }

    fn store(dir: &tempfile::TempDir) -> SessionStore {
        let redactor = std::sync::Arc::new(crate::redact::Redactor::default());
        SessionStore::open(&dir.path().join("sessions.db"), redactor).unwrap()
    }

    fn origin() -> Origin {
        Origin { cwd: "/srv".into(), host: "box".into(), model: "m".into() }
    }

    #[test]
    fn a_new_conversation_the_model_never_answered_is_deleted_and_one_it_answered_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir);
        let mut conversation = Conversation::new(Some(&store));
        conversation.begin("unanswered", &origin());
        conversation.record(&ChatMessage::user("unanswered"));
        assert!(conversation.end_turn(), "nothing but the request: deleted");
        assert_eq!((conversation.id, store.list(10).unwrap().len()), (None, 0));

        conversation.begin("answered", &origin());
        conversation.record(&ChatMessage::user("answered"));
        conversation.record(&ChatMessage::assistant("yes", vec![]));
        assert!(!conversation.end_turn());
        let id = conversation.id.unwrap();
        // A later turn the model does not answer leaves it alone.
        conversation.record(&ChatMessage::user("again"));
        assert!(!conversation.end_turn());
        assert_eq!(store.get(id).unwrap().unwrap().message_count, 3);
    }

    #[test]
    fn a_resumed_conversation_is_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir);
        let id = store
            .create(&NewConversation {
                first_request: "old",
                cwd: "/",
                host: "h",
                model: "m",
                user: None,
                cluster: None,
                hosts: None,
            })
            .unwrap();
        let mut conversation = Conversation::new(Some(&store));
        conversation.resume(id).unwrap();
        conversation.begin("ignored: a conversation is open", &origin());
        conversation.record(&ChatMessage::user("unanswered"));
        assert!(!conversation.end_turn());
        assert!(store.get(id).unwrap().is_some());
    }
}
