//! `read_file`: a text file, or some of its lines, redacted, for the model. Safe unless the policy
//! says the path holds secrets (then it asks, as `cat` of that path would).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::paths::{Access, Refusal};
use super::text;
use super::{Call, Settings, guard, optional_count, size_limit};
use crate::protocol::{ObservationStatus, Risk, ToolSpec};
use crate::sandbox::reader::{ContainedRead, read_contained};
use crate::store::audit::Confirmed;
use crate::tools::{Tool, ToolContext, ToolEffect, gate, invalid_arguments, string_arg};

pub(crate) struct ReadFile(pub(super) Arc<Settings>);

/// Characters of content the model gets: the first and last, with a marker between.
const HEAD_CHARS: usize = 8000;
const TAIL_CHARS: usize = 2000;

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().into(),
            description: "Read a text file, or lines start_line..end_line (1-based). A long file is cut in the \
                          middle: read a range to see the rest."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"}
                },
                "required": ["path"]
            }),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(read(&self.0, id, args, ctx))
    }
}

async fn read<'c>(settings: &'c Settings, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> ToolEffect {
    let parsed = (|| {
        Ok::<_, String>((
            string_arg(args, "path")?,
            optional_count(args, "start_line")?,
            optional_count(args, "end_line")?,
        ))
    })();
    let (raw, start, end) = match parsed {
        Ok(parsed) => parsed,
        Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
    };
    let services = ctx.services;
    let checked = guard(services, settings, ctx.state).check(raw, Access::Read).await;
    let (summary, risk, mut reasons) = match &checked {
        Ok(target) => (format!("read_file {}", target.shown), target.risk, target.reasons.clone()),
        Err(_) => (format!("read_file {raw}"), Risk::Safe, Vec::new()),
    };
    let mut call = Call::new(id, "read_file", ctx, summary, risk);
    call.announce(args, &reasons);
    let target = match checked {
        Ok(target) => target,
        Err(Refusal::Policy(message)) => return call.refuse(gate::Refusal::policy(message)),
        Err(Refusal::Failed(message)) => return call.failed(Confirmed::No, message),
    };
    let shown = &target.shown;
    let limit = size_limit(settings);
    match services.files.metadata(&target.path).await {
        Ok(Some(meta)) if meta.is_file => {}
        Ok(Some(_)) => return call.failed(Confirmed::No, format!("{shown} is not a regular file (a directory?)")),
        Ok(None) => return call.failed(Confirmed::No, format!("{shown} does not exist")),
        Err(err) => return call.failed(Confirmed::No, err.to_string()),
    }
    // Nobody says yes to a Safe read: it is read through the sandbox's view, as `cat` would be.
    // Outside that view it becomes a question for a person (Medium), never a silent read.
    let contained = if call.risk == Risk::Safe && services.host.is_none() {
        contained_read(&target.path, limit, &call.ctx.state.cwd).await
    } else {
        ContainedRead::Off
    };
    let read = match contained {
        ContainedRead::Bytes(bytes) => Ok(bytes),
        ContainedRead::Missing => return call.failed(Confirmed::No, format!("{shown} does not exist")),
        ContainedRead::TooLarge => Err(std::io::Error::new(std::io::ErrorKind::FileTooLarge, "file too large")),
        ContainedRead::Failed(message) => return call.failed(Confirmed::No, message),
        ContainedRead::Denied(reason) | ContainedRead::Unavailable(reason) => {
            call.risk = Risk::Medium;
            reasons.push(reason);
            services.files.read(&target.path, limit).await
        }
        ContainedRead::Off => services.files.read(&target.path, limit).await,
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::FileTooLarge => {
            let message =
                format!("refused: {err}; read part of it with run_command (head, tail, sed -n 'A,Bp', grep) instead");
            return call.refuse(gate::Refusal::policy(message));
        }
        Err(err) => return call.failed(Confirmed::No, err.to_string()),
    };
    let content = match text::decode(&bytes) {
        Ok(content) => content,
        Err(not_text) => {
            let message = format!("refused: {shown}: {not_text}; read_file returns text files only");
            return call.refuse(gate::Refusal::policy(message));
        }
    };
    let lines = match text::line_range(content, start, end) {
        Ok(lines) => lines,
        Err(message) => {
            return call.finish(
                ObservationStatus::InvalidArguments,
                None,
                Confirmed::No,
                format!("[ERROR]: {message}"),
            );
        }
    };
    let allowed = match call.approve(&reasons, None) {
        Ok(allowed) => allowed,
        Err(effect) => return *effect,
    };
    let header = if lines.total == 0 {
        format!("{shown} is empty")
    } else {
        format!("{shown} · lines {}-{} of {}", lines.first, lines.last, lines.total)
    };
    let body = head_and_tail(&services.redactor.redact(lines.text));
    call.finish(ObservationStatus::Ran, Some(0), allowed.confirmed(), format!("{header}\n{body}"))
}

/// [`read_contained`] on a blocking thread (it waits for the sandbox helper).
async fn contained_read(path: &std::path::Path, limit: u64, cwd: &std::path::Path) -> ContainedRead {
    let (path, cwd) = (path.to_path_buf(), cwd.to_path_buf());
    tokio::task::spawn_blocking(move || read_contained(&path, limit, &cwd))
        .await
        .unwrap_or_else(|err| ContainedRead::Failed(format!("the sandboxed read failed: {err}")))
}

/// The first `HEAD_CHARS` and last `TAIL_CHARS` characters, with the number of bytes left out.
fn head_and_tail(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= HEAD_CHARS + TAIL_CHARS {
        return text.to_owned();
    }
    let head_end = text.char_indices().nth(HEAD_CHARS).map_or(text.len(), |(i, _)| i);
    let tail_start = text.char_indices().nth(chars - TAIL_CHARS).map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n... [{} bytes truncated; read a range with start_line/end_line] ...\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_content_keeps_its_head_and_tail() {
        let text = format!("{}{}{}", "h".repeat(HEAD_CHARS), "m".repeat(500), "t".repeat(TAIL_CHARS));
        let cut = head_and_tail(&text);
        assert!(cut.starts_with(&"h".repeat(HEAD_CHARS)));
        assert!(cut.ends_with(&"t".repeat(TAIL_CHARS)));
        assert!(cut.contains("[500 bytes truncated;"), "{}", &cut[HEAD_CHARS..HEAD_CHARS + 80]);
        assert_eq!(head_and_tail("short"), "short");
    }
}
