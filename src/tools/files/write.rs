//! `write_file` and `edit_file`: the new content is computed, shown as a unified diff for
//! approval, the old content backed up, and only then the file replaced atomically.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use regex::Regex;
use serde_json::{Value, json};

use super::paths::{Access, Refusal};
use super::text::{self, CountMismatch, Pattern, count};
use super::{Call, SHOWN_DIFF_LINES, Settings, guard, optional_bool, optional_count, size_limit, text_arg};
use crate::protocol::{ObservationStatus, Risk, ToolSpec};
use crate::store::audit::Confirmed;
use crate::tools::{Tool, ToolContext, ToolEffect, gate, invalid_arguments, string_arg};

pub(crate) struct WriteFile(pub(super) Arc<Settings>);
pub(crate) struct EditFile(pub(super) Arc<Settings>);

/// Characters of a diff shown or sent; a one-line 5 MB file would otherwise be one 5 MB diff line.
const SHOWN_DIFF_CHARS: usize = 6000;

/// What the call asks for, checked before anything is looked at.
enum Change<'a> {
    Write { content: &'a str, append: bool },
    Edit { search: &'a str, replace: &'a str, regex: Option<Regex>, expected: usize },
}

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().into(),
            description: "Create, overwrite or append to a text file (the user approves the diff).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "mode": {"type": "string", "enum": ["overwrite", "append"]}
                },
                "required": ["path", "content"]
            }),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(async move {
            let parsed = (|| {
                let path = string_arg(args, "path")?;
                let content = text_arg(args, "content")?;
                let append = match args.get("mode").and_then(Value::as_str).map(str::trim) {
                    None | Some("" | "overwrite" | "w") => false,
                    Some("append" | "a") => true,
                    Some(other) => return Err(format!("`mode` must be overwrite or append, got \"{other}\"")),
                };
                Ok((path, Change::Write { content, append }))
            })();
            match parsed {
                Ok((path, change)) => apply(&self.0, "write_file", id, args, ctx, path, change).await,
                Err(message) => ToolEffect::Observe(invalid_arguments(id, message)),
            }
        })
    }
}

impl Tool for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().into(),
            description: "Replace `search` (exact text) with `replace` in a text file; it must occur \
                          expected_count times (default 1). regex: `replace` may use $1. The user approves the diff."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "search": {"type": "string"},
                    "replace": {"type": "string"},
                    "regex": {"type": "boolean"},
                    "expected_count": {"type": "integer"}
                },
                "required": ["path", "search", "replace"]
            }),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(async move {
            let parsed = (|| {
                let path = string_arg(args, "path")?;
                let search = text_arg(args, "search")?;
                if search.is_empty() {
                    return Err("`search` is empty".to_owned());
                }
                let replace = text_arg(args, "replace")?;
                let expected = optional_count(args, "expected_count")?.unwrap_or(1);
                if expected == 0 {
                    return Err("`expected_count` must be at least 1".to_owned());
                }
                let regex = if optional_bool(args, "regex")? {
                    let built = regex::RegexBuilder::new(search).size_limit(1 << 20).build();
                    Some(built.map_err(|err| format!("`search` is not a valid regular expression: {err}"))?)
                } else {
                    None
                };
                Ok((path, Change::Edit { search, replace, regex, expected }))
            })();
            match parsed {
                Ok((path, change)) => apply(&self.0, "edit_file", id, args, ctx, path, change).await,
                Err(message) => ToolEffect::Observe(invalid_arguments(id, message)),
            }
        })
    }
}

async fn apply<'c>(
    settings: &'c Settings,
    tool: &'static str,
    id: &'c str,
    args: &'c Value,
    ctx: ToolContext<'c, 'c>,
    raw: &str,
    change: Change<'_>,
) -> ToolEffect {
    let services = ctx.services;
    let checked = guard(services, settings, ctx.state).check(raw, Access::Write).await;
    let label = |shown: &str| match &change {
        Change::Write { append: true, .. } => format!("write_file {shown} (append)"),
        Change::Write { .. } => format!("write_file {shown}"),
        Change::Edit { .. } => format!("edit_file {shown}"),
    };
    let (summary, risk, reasons) = match &checked {
        Ok(target) => (label(&target.shown), target.risk, target.reasons.clone()),
        Err(_) => (label(raw), Risk::Medium, Vec::new()),
    };
    let mut call = Call::new(id, tool, ctx, summary, risk);
    call.announce(args, &reasons);
    let target = match checked {
        Ok(target) => target,
        Err(Refusal::Policy(message)) => return call.refuse(gate::Refusal::policy(message)),
        Err(Refusal::Failed(message)) => return call.failed(Confirmed::No, message),
    };
    let shown = target.shown.as_str();
    let limit = size_limit(settings);
    let refuse = |call: &mut Call, message: String| call.refuse(gate::Refusal::policy(message));
    let previous = match services.files.metadata(&target.path).await {
        Err(err) => return call.failed(Confirmed::No, err.to_string()),
        Ok(None) => None,
        Ok(Some(meta)) if !meta.is_file => {
            return refuse(
                &mut call,
                format!("refused: {shown} is not a regular file; only regular files are changed"),
            );
        }
        Ok(Some(_)) => match services.files.read(&target.path, limit).await {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::FileTooLarge => {
                return refuse(&mut call, format!("refused: {err}; it is too large to change with the file tools"));
            }
            Err(err) => return call.failed(Confirmed::No, err.to_string()),
        },
    };
    let old = match previous.as_deref().map(text::decode).transpose() {
        Ok(old) => old,
        Err(not_text) => {
            return refuse(&mut call, format!("refused: {shown}: {not_text}; the file tools change text files only"));
        }
    };
    let new = match &change {
        Change::Write { content, append: false } => (*content).to_owned(),
        Change::Write { content, append: true } => format!("{}{content}", old.unwrap_or("")),
        Change::Edit { search, replace, regex, expected } => {
            let Some(old) = old else {
                let message = format!("[ERROR]: {shown} does not exist; create it with write_file");
                return call.finish(ObservationStatus::InvalidArguments, None, Confirmed::No, message);
            };
            let pattern = match regex {
                Some(regex) => Pattern::Regex(regex),
                None => Pattern::Literal(search),
            };
            match text::edit(old, &pattern, replace, *expected) {
                Ok(new) => new,
                Err(mismatch) => {
                    let message = mismatch_message(shown, &mismatch);
                    return call.finish(ObservationStatus::InvalidArguments, None, Confirmed::No, message);
                }
            }
        }
    };
    if new.len() as u64 > limit {
        let message = format!(
            "refused: the new content of {shown} would be {} bytes, over the limit of {limit} bytes (files.max_size_mb)",
            new.len()
        );
        return refuse(&mut call, message);
    }
    if old == Some(new.as_str()) {
        let message = format!("no change: {shown} already has this content; nothing was written");
        return call.finish(ObservationStatus::Ran, Some(0), Confirmed::No, message);
    }
    let diff = text::unified_diff(old, &new, shown, SHOWN_DIFF_LINES);
    let shown_diff = text::clip(&diff.text, SHOWN_DIFF_LINES + 4, SHOWN_DIFF_CHARS);
    if services.mode.dry_run {
        call.show(&shown_diff);
    }
    let allowed = match call.approve(&reasons, Some(visible(&shown_diff))) {
        Ok(allowed) => allowed,
        Err(effect) => return *effect,
    };
    if !allowed.asked() {
        call.show(&shown_diff);
    }
    let confirmed = allowed.confirmed();
    let existed = previous.is_some();
    // The backup first: a change that cannot be undone is not made.
    let (backups, session, host, path) =
        (settings.backups.clone(), services.session.clone(), services.host.map(str::to_owned), target.path.clone());
    let written = new.clone().into_bytes();
    let saved = tokio::task::spawn_blocking(move || {
        backups.save(&session, host.as_deref(), &path, previous.as_deref(), &written)
    })
    .await;
    let entry = match saved {
        Ok(Ok(entry)) => entry,
        Ok(Err(err)) => return call.failed(confirmed, format!("{err}; nothing was written")),
        Err(err) => return call.failed(confirmed, format!("the backup failed ({err}); nothing was written")),
    };
    if let Err(err) = services.files.replace(&target.path, new.as_bytes()).await {
        // The journal must not offer to undo a change that never happened.
        let _ = settings.backups.mark_undone(&entry);
        return call.failed(confirmed, format!("{err}; {shown} is unchanged"));
    }
    let what = match &change {
        Change::Edit { expected, .. } => format!(
            "edited {shown}: {} replaced (+{} -{})",
            count(*expected, "occurrence"),
            count(diff.added, "line"),
            diff.removed
        ),
        Change::Write { content, append: true } => format!("appended {} to {shown}", count(content.len(), "byte")),
        Change::Write { .. } if !existed => {
            format!("created {shown} ({}, {})", count(new.len(), "byte"), count(new.lines().count(), "line"))
        }
        Change::Write { .. } => format!("rewrote {shown} (+{} -{})", count(diff.added, "line"), diff.removed),
    };
    let undo = if existed {
        "the previous content is backed up: /undo in the REPL or `opsai undo` restores it"
    } else {
        "/undo in the REPL or `opsai undo` removes it again"
    };
    let text = format!("{what}; {undo}.\n{}", services.redactor.redact(&shown_diff));
    call.finish(ObservationStatus::Ran, Some(0), confirmed, text)
}

/// What the model needs to fix a search that matched the wrong number of times.
fn mismatch_message(shown: &str, mismatch: &CountMismatch) -> String {
    let CountMismatch { found, expected } = *mismatch;
    let hint = if found == 0 {
        "read the file with read_file and copy the exact text, whitespace and indentation included".to_owned()
    } else if found > expected {
        format!(
            "make `search` longer so it matches only the intended place, or set expected_count to {found} to change all of them"
        )
    } else {
        format!("set expected_count to {found} if that is what you meant")
    };
    format!(
        "[ERROR]: `search` occurs {} in {shown}, expected {expected}; nothing was changed: {hint}",
        match found {
            0 => "0 times".to_owned(),
            1 => "once".to_owned(),
            n => format!("{n} times"),
        }
    )
}

/// Escape sequences or bidi controls in the content would redraw the prompt: shown as `\x1b`.
fn visible(text: &str) -> String {
    let clean = crate::policy::sanitize(text);
    if clean.changed() { clean.display } else { clean.text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_count_says_how_many_were_found() {
        let message = mismatch_message("~/a.sh", &CountMismatch { found: 3, expected: 1 });
        assert!(message.starts_with("[ERROR]: `search` occurs 3 times in ~/a.sh, expected 1; nothing was changed"));
        assert!(message.contains("expected_count to 3"), "{message}");
        let message = mismatch_message("~/a.sh", &CountMismatch { found: 0, expected: 1 });
        assert!(message.contains("occurs 0 times") && message.contains("read_file"), "{message}");
    }

    #[test]
    fn control_characters_in_a_diff_are_made_visible() {
        assert_eq!(visible("+echo \u{1b}[2J\n"), "+echo \\x1b[2J\n");
        assert_eq!(visible("+plain\n"), "+plain\n");
    }
}
