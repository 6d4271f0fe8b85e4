//! What the spinner says: the stage of the turn and how long it has lasted
//! (`⠋ reading the prompt · 12 s`).

use std::time::{Duration, Instant};

use crate::ui::display;

/// Until then, no byte of the reply yet reads as the request on its way; after it, as the model
/// reading the prompt (a long prompt on a CPU takes many seconds before the first token).
const PROMPT_READ_AFTER: Duration = Duration::from_secs(2);

/// Longest command shown in the spinner line.
const COMMAND_CHARS: usize = 40;

#[derive(Debug, Clone)]
pub(super) enum Stage {
    /// A model request is out and nothing of its reply has arrived.
    Model,
    /// The model writes a tool call (its arguments stream, or text held back as one).
    WritingCall,
    /// A command runs (its output, if any, shows above).
    Running(String),
    /// A command runs on a fleet: how far its batch has got (`web-[1:16]: 12/16 done`).
    Hosts(String),
}

#[derive(Debug, Clone)]
pub(super) struct Spinner {
    stage: Stage,
    since: Instant,
}

impl Spinner {
    pub(super) fn new(stage: Stage) -> Self {
        Self { stage, since: Instant::now() }
    }

    /// A command about to run, as the spinner names it (one line, cut short).
    pub(super) fn running(command: &str) -> Self {
        let line = display::line(command);
        let mut shown: String = line.chars().take(COMMAND_CHARS).collect();
        if line.chars().count() > COMMAND_CHARS {
            shown.push('…');
        }
        Self::new(Stage::Running(shown))
    }

    /// The same clock with another stage: a fleet's progress counts from the command's start.
    pub(super) fn with_stage(&self, stage: Stage) -> Self {
        Self { stage, since: self.since }
    }

    pub(super) fn stage(&self) -> &Stage {
        &self.stage
    }

    pub(super) fn label(&self) -> String {
        let elapsed = self.since.elapsed();
        let stage = match &self.stage {
            Stage::Model if elapsed < PROMPT_READ_AFTER => "waiting for the model".to_owned(),
            Stage::Model => "reading the prompt".to_owned(),
            Stage::WritingCall => "writing a tool call".to_owned(),
            Stage::Running(command) => format!("running {command}"),
            Stage::Hosts(progress) => progress.clone(),
        };
        format!("{stage} · {} s", elapsed.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_say_what_the_turn_waits_for() {
        assert_eq!(Spinner::new(Stage::Model).label(), "waiting for the model · 0 s");
        let mut reading = Spinner::new(Stage::Model);
        reading.since -= Duration::from_secs(12);
        assert_eq!(reading.label(), "reading the prompt · 12 s");
        let long = format!("sleep 5 && {}\x1b[2J", "x".repeat(60));
        let running = Spinner::running(&long).label();
        assert_eq!(Spinner::new(Stage::WritingCall).label(), "writing a tool call · 0 s");
        assert!(running.starts_with("running sleep 5 && xxx") && running.ends_with("… · 0 s"), "{running}");
    }
}
