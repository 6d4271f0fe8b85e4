//! A fleet command's live progress (`web-[01:16]: 12/16 done, 1 failed`) for the person: in the
//! spinner line on a terminal; as plain lines on a stderr that is not one (a log): each batch's
//! first and last, and between them at most one a second. `-q` and `--json` never show it (see `quiet` and `handle`).

use std::io::Write;
use std::time::{Duration, Instant};

use super::{Renderer, Style, spinner};
use crate::protocol::HostsProgress;
use crate::ui::{display, style};

/// Lines closer together than this are left out on a stderr that is not a terminal.
const EVERY: Duration = Duration::from_secs(1);

/// `web-[01:16]: 12/16 done, 1 failed`.
pub(crate) fn line(progress: &HostsProgress) -> String {
    let mut text = format!("{}: {}/{} done", display::line(&progress.hosts), progress.done, progress.total);
    if progress.failed > 0 {
        text.push_str(&format!(", {} failed", progress.failed));
    }
    text
}

impl<O: Write, E: Write> Renderer<O, E> {
    pub(super) fn hosts_progress(&mut self, progress: &HostsProgress) -> std::io::Result<()> {
        let text = line(progress);
        match self.style {
            Style::Human { spinner: true, .. } => {
                self.stage = self.stage.with_stage(spinner::Stage::Hosts(text));
                if self.spinner_shown {
                    self.draw_spinner();
                } else {
                    self.show_spinner();
                }
                Ok(())
            }
            Style::Human { spinner: false, .. } => {
                let last = progress.done >= progress.total;
                let batch = (progress.hosts.clone(), progress.total);
                let recent = self.hosts_line.as_ref().is_some_and(|(at, seen)| *seen == batch && at.elapsed() < EVERY);
                if !last && recent {
                    return Ok(());
                }
                self.hosts_line = Some((Instant::now(), batch));
                let line = self.paint(style::dim(), &text);
                writeln!(self.err, "  {line}")?;
                self.err.flush()
            }
            Style::Quiet | Style::Json => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AgentEvent, ReplyProgress};

    fn event(done: usize, failed: usize) -> AgentEvent {
        let progress = HostsProgress { hosts: "web-[01:16]".into(), done, failed, total: 16 };
        AgentEvent::Progress { stage: ReplyProgress::Hosts(progress) }
    }

    fn render(style: Style, events: &[AgentEvent]) -> (String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut renderer = Renderer::new(style, &mut out, &mut err);
        for event in events {
            renderer.handle(event).unwrap();
        }
        drop(renderer);
        (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
    }

    #[test]
    fn progress_is_on_stderr_for_a_person_and_nowhere_under_quiet_or_json() {
        let canary = HostsProgress { hosts: "web-00".into(), done: 1, failed: 0, total: 1 };
        let canary = AgentEvent::Progress { stage: ReplyProgress::Hosts(canary) };
        let events = [canary, event(1, 0), event(12, 1), event(16, 1)];
        let (out, err) = render(Style::Human { color: false, spinner: false }, &events);
        assert_eq!(out, "");
        // Each batch's first line, then (within the second) only its last.
        assert_eq!(err, "  web-00: 1/1 done\n  web-[01:16]: 1/16 done\n  web-[01:16]: 16/16 done, 1 failed\n");
        let (out, err) = render(Style::Human { color: false, spinner: true }, &events[1..3]);
        assert!(out.is_empty() && err.ends_with("web-[01:16]: 12/16 done, 1 failed · 0 s"), "{err:?}");
        for style in [Style::Quiet, Style::Json] {
            assert_eq!(render(style, &events), (String::new(), String::new()), "{style:?}");
        }
    }
}
