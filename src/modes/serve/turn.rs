//! One running turn as the browser sees it: the log of its SSE events (replayed to whoever opens
//! `/stream` later) and the signal that wakes the live readers. The turn belongs to the server: a
//! reader that goes away changes nothing.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::response::sse::Event;
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::screen::{self, OutputLines, Released};
use crate::redact::Redactor;
use crate::tools::Interrupts;

#[derive(Default)]
pub struct Log {
    events: Vec<Arc<str>>,
    finished: bool,
}

pub struct Turn {
    pub conversation: i64,
    pub owner: String,
    /// The turn's Ctrl-C: the stop button, a deleted conversation and shutdown cancel `turn`.
    pub interrupts: Interrupts,
    /// Its conversation is being deleted: what the turn leaves behind (grants) is not kept.
    deleted: AtomicBool,
    log: watch::Sender<Log>,
    redactor: Arc<Redactor>,
    output: Mutex<OutputLines>,
    /// `--database`: every event also kept for streams opened on other replicas.
    mirror: Option<Arc<super::replicas::Replicas>>,
}

impl Turn {
    pub fn new(conversation: i64, owner: String, redactor: Arc<Redactor>) -> Self {
        Self {
            conversation,
            owner,
            interrupts: Interrupts::default(),
            deleted: AtomicBool::new(false),
            log: watch::Sender::new(Log::default()),
            redactor,
            output: Mutex::default(),
            mirror: None,
        }
    }

    /// Its events also kept where the other replicas read them.
    pub fn mirrored(mut self, replicas: Option<Arc<super::replicas::Replicas>>) -> Self {
        self.mirror = replicas;
        self
    }

    /// `data` as an event published now would carry it (every string redacted).
    pub fn redacted(&self, data: &Value) -> Value {
        let mut data = data.clone();
        screen::redact(&self.redactor, &mut data);
        data
    }

    /// Appends an event, as the browser may see it, and wakes the readers: the one place every
    /// event passes, so every string is redacted here. Live output goes out a line at a time (the
    /// rest of a call's output before its result).
    pub fn publish(&self, data: &Value) {
        let id = data["id"].as_str().unwrap_or_default();
        match (data["type"].as_str(), data["kind"].as_str()) {
            (Some("tool_result"), Some("output")) => {
                let ready = self.output.lock().ok().and_then(|mut o| o.push(id, data["chunk"].as_str().unwrap_or("")));
                self.release(id, ready);
                return;
            }
            (Some("tool_result"), Some("tool_result")) => {
                let rest = self.output.lock().ok().and_then(|mut o| o.flush(id));
                self.release(id, rest);
            }
            _ => {}
        }
        self.append(data.clone());
    }

    fn release(&self, id: &str, released: Option<Released>) {
        match released {
            Some(Released::Text(chunk)) => {
                self.append(json!({"type": "tool_result", "kind": "output", "id": id, "chunk": chunk}));
            }
            Some(Released::Cut) => self.append(json!({
                "type": "tool_result",
                "kind": "output_truncated",
                "id": id,
                "limit_bytes": screen::OUTPUT_LIMIT,
            })),
            None => {}
        }
    }

    fn append(&self, mut data: Value) {
        screen::redact(&self.redactor, &mut data);
        let text: Arc<str> = data.to_string().into();
        self.log.send_modify(|log| {
            if let Some(mirror) = &self.mirror {
                mirror.event(self.conversation, log.events.len(), text.clone());
            }
            log.events.push(text);
        });
    }

    /// A command line as an event published now would show it (redacted word by word).
    pub fn shown(&self, command: &str) -> String {
        self.redactor.redact_command(command)
    }

    /// No event follows: the readers end after the ones they have not seen yet.
    pub fn finish(&self) {
        self.log.send_modify(|log| log.finished = true);
    }

    /// Returns once the turn has ended.
    pub async fn finished(&self) {
        let mut receiver = self.log.subscribe();
        let _ = receiver.wait_for(|log| log.finished).await;
    }

    pub fn stop(&self) {
        self.interrupts.turn.cancel();
    }

    /// Stops the turn for good: its conversation is being deleted.
    pub fn delete(&self) {
        self.deleted.store(true, Ordering::SeqCst);
        self.stop();
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::SeqCst)
    }

    /// Every event so far, then each new one as it comes, ending after the last.
    pub fn stream(self: Arc<Self>) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
        let receiver = self.log.subscribe();
        futures_util::stream::unfold((receiver, 0usize), |(mut receiver, next)| async move {
            loop {
                let (item, finished) = {
                    let log = receiver.borrow_and_update();
                    (log.events.get(next).cloned(), log.finished)
                };
                if let Some(item) = item {
                    let event = Event::default().event("message").data(&*item);
                    return Some((Ok(event), (receiver, next + 1)));
                }
                if finished || receiver.changed().await.is_err() {
                    return None;
                }
            }
        })
    }
}

/// A stream of one event (`/stream` when no turn runs).
pub fn single(data: &Value) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    let event = Event::default().event("message").data(data.to_string());
    futures_util::stream::iter([Ok(event)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test]
    async fn a_late_reader_sees_every_event_then_live_ones_then_the_end() {
        let turn = Arc::new(Turn::new(1, "a".into(), Arc::default()));
        turn.publish(&serde_json::json!({"n": 1}));
        let mut stream = Box::pin(turn.clone().stream());
        assert!(stream.next().await.is_some());
        turn.publish(&serde_json::json!({"n": 2}));
        turn.finish();
        assert!(stream.next().await.is_some());
        assert!(stream.next().await.is_none());
    }
}
