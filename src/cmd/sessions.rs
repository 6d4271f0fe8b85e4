//! `opsai sessions list|show|delete`: the saved conversations.

use std::io::Write;
use std::sync::Arc;

use crate::cli::SessionsCommand;
use crate::home::Paths;
use crate::redact::Redactor;
use crate::store::sessions::{self, SessionError};
use crate::ui::sessions_view;

pub fn run(paths: &Paths, command: &SessionsCommand) -> anyhow::Result<u8> {
    let store = crate::runner::session_store(paths, Arc::new(Redactor::from_process_env()))?;
    let color = crate::term::stdout_color();
    let mut out = std::io::stdout().lock();
    match command {
        SessionsCommand::List { limit, json: true } => {
            for session in store.list(*limit)? {
                serde_json::to_writer(&mut out, &session)?;
                writeln!(out)?;
            }
        }
        SessionsCommand::List { limit, json: false } => {
            let now = jiff::Timestamp::now().as_millisecond();
            sessions_view::write_list(&mut out, &store.list(*limit)?, now, color)?;
        }
        SessionsCommand::Show { id } => {
            let Some(summary) = store.get(*id)? else {
                crate::modes::common::warn(&SessionError::NotFound(*id).to_string());
                return Ok(1);
            };
            sessions_view::write_show(&mut out, &summary, &store.messages(*id)?, color)?;
        }
        SessionsCommand::Delete { id } => {
            if !store.delete(*id)? {
                crate::modes::common::warn(&SessionError::NotFound(*id).to_string());
                return Ok(1);
            }
            writeln!(out, "deleted conversation {}", sessions::label(*id))?;
        }
    }
    out.flush()?;
    Ok(0)
}
