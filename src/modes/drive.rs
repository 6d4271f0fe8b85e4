//! [`drive`]: one agent turn with the renderer, the spinner and Ctrl-C routing. One-shot runs, the
//! REPL and `explain` share it, so a turn behaves the same wherever it starts.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::signal::unix::Signal;

use crate::agent::{Agent, AgentError};
use crate::protocol::{AgentEvent, ChatMessage, TurnOutcome};
use crate::ui::render::Renderer;

/// Runs one turn to its end: events to the renderer, a spinner while the model thinks, and each
/// Ctrl-C routed to the running command or, when none runs, to the turn.
pub(crate) async fn drive<O: Write + Send, E: Write + Send>(
    agent: &mut Agent<'_>,
    history: &mut Vec<ChatMessage>,
    task: &str,
    renderer: &Mutex<Renderer<O, E>>,
    sigint: &mut Signal,
) -> Result<TurnOutcome, AgentError> {
    // A Ctrl-C delivered while no turn ran (between prompts) must not cancel this one.
    while sigint.recv().now_or_never().flatten().is_some() {}
    let mut on_event = |event: AgentEvent| {
        if let Ok(mut renderer) = renderer.lock() {
            let _ = renderer.handle(&event);
            if matches!(event, AgentEvent::ToolResult { .. }) {
                renderer.waiting();
            }
        }
    };
    if let Ok(mut renderer) = renderer.lock() {
        renderer.waiting();
    }
    let interrupts = agent.services.interrupts;
    let ctrl_c = async {
        while sigint.recv().await.is_some() {
            interrupts.interrupt();
        }
        std::future::pending::<()>().await;
    };
    let spinner = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(120));
        loop {
            ticks.tick().await;
            if let Ok(mut renderer) = renderer.lock() {
                renderer.tick();
            }
        }
    };
    tokio::select! {
        outcome = agent.run_turn(history, task, &mut on_event) => outcome,
        () = ctrl_c => Ok(TurnOutcome::Aborted),
        () = spinner => Ok(TurnOutcome::Aborted),
    }
}
