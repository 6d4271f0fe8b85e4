//! The execute step: the allowed command runs in the executor, its output shown live, and Ctrl-C
//! routed to it while it runs.

use std::time::{Duration, Instant};

use super::Call;
use crate::exec::{ExecError, ExecResult};
use crate::protocol::{AgentEvent, CommandRequest};

/// What running the command gave the observe step.
pub(super) struct Ran {
    pub result: Result<ExecResult, ExecError>,
    /// Wall time, for a command that never started (the result has its own).
    pub elapsed: Duration,
    /// Whether it ran in the sandbox (its failures may be the sandbox's).
    pub sandboxed: bool,
}

pub(super) async fn execute(call: &mut Call<'_>, request: CommandRequest) -> Ran {
    let started = Instant::now();
    let token = call.services.interrupts.command_started();
    let result = {
        let id = call.id;
        let mut on_output = |chunk: &[u8]| {
            (call.events)(AgentEvent::Output { id: id.into(), chunk: String::from_utf8_lossy(chunk).into_owned() });
        };
        call.services.executor.run(&request, &mut on_output, token).await
    };
    call.services.interrupts.command_finished();
    Ran { result, elapsed: started.elapsed(), sandboxed: request.sandbox.is_some() }
}
