//! The saved conversations from the REPL: `/sessions` lists them, `/resume ID` (and `--continue`)
//! carries one on.

use std::io::Write;

use super::{Repl, SESSIONS_SHOWN};
use crate::modes::common::{note, warn};
use crate::store::sessions::ConversationId;
use crate::ui::sessions_view;

impl Repl<'_> {
    /// Continues a saved conversation (`None`: the last one in this directory, else the last one).
    /// False when it was asked for and cannot be found.
    pub(super) fn resume(&mut self, id: Option<ConversationId>) -> bool {
        if self.store.is_none() {
            warn("cannot continue a conversation: the session store is not available");
            return false;
        }
        let chosen = self.conversation.chosen(id, true, &self.state.cwd.to_string_lossy());
        let id = match chosen {
            Ok(Some(id)) => id,
            Ok(None) => {
                note("no saved conversation to continue; starting a new one");
                return true;
            }
            Err(err) => {
                warn(&err.to_string());
                return false;
            }
        };
        match self.conversation.resume(id) {
            Ok((summary, messages)) => {
                note(&format!(
                    "continuing {} “{}” ({} messages)",
                    crate::store::sessions::label(summary.id),
                    summary.title,
                    summary.message_count
                ));
                self.history = messages;
                self.state.grants.clear();
                true
            }
            Err(err) => {
                warn(&err.to_string());
                false
            }
        }
    }

    pub(super) fn sessions(&self) {
        let Some(store) = self.store else {
            warn("the session store is not available");
            return;
        };
        match store.list(SESSIONS_SHOWN) {
            Ok(list) => {
                let mut text = Vec::new();
                let _ = sessions_view::write_list(&mut text, &list, crate::store::unix_ms(), self.color);
                let _ = self.err().write_all(&text);
            }
            Err(err) => warn(&err.to_string()),
        }
    }
}
