//! `propose_command`: ends a widget turn with one command for the user's own Enter. Nothing runs;
//! the command is sanitized and assessed like every other.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolEffect, invalid_arguments, optional_string, string_arg};
use crate::policy;
use crate::protocol::ToolSpec;

pub(crate) struct ProposeCommand;

impl Tool for ProposeCommand {
    fn name(&self) -> &'static str {
        "propose_command"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().into(),
            description: "The final command, for the user to review and run. Ends the turn; nothing runs.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "explanation": {"type": "string", "description": "One short sentence."}
                },
                "required": ["command"]
            }),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(async move {
            let command = match string_arg(args, "command") {
                Ok(command) => command,
                Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
            };
            let assessment = policy::assess(command, ctx.services.policy);
            ToolEffect::Propose {
                command: assessment.sanitized.clone(),
                explanation: optional_string(args, "explanation").unwrap_or_default(),
                assessment,
            }
        })
    }
}
