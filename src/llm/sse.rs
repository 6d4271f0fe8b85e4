//! Response bytes → server-sent events, with a timeout on every idle gap.
//!
//! Framing is parsed by `eventsource-stream`, which already handles the variants providers send:
//! CRLF or CR line endings, `data:` with or without a space, `:` comment and keep-alive lines, and
//! events or lines (even UTF-8 characters) split across reads. Three gaps are closed here:
//! - it drops an event that is not followed by a blank line when the body ends (some servers
//!   close right after `data: [DONE]\n`), so the byte stream gets a final `\n\n`;
//! - it panics on a leading byte-order mark (it slices one byte off a three-byte character), so
//!   the BOM is removed from the bytes first;
//! - older llama.cpp servers report a failure as an `error: {…}` line, a field SSE ignores, so such
//!   a line becomes an `error` event (what newer ones send as `data: {"error":…}` needs nothing);
//! - it has no notion of time, so the first read gets the first-byte timeout (a local model may
//!   read a long prompt for minutes) and every later read the idle timeout (keep-alive comments
//!   count as activity).

use std::error::Error;
use std::io::ErrorKind;
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::stream::{self, BoxStream};
use futures_util::{Stream, StreamExt};

/// Why the event stream stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseError {
    /// Nothing arrived within the idle timeout.
    Idle,
    /// The body's first bytes did not arrive within the first-byte timeout.
    FirstByte,
    /// The connection failed; `reset` when it was dropped or reset (worth retrying if nothing
    /// was shown yet).
    Transport { message: String, reset: bool },
    /// The body is not an event stream (invalid UTF-8).
    Malformed(String),
}

/// One event: its type (`message` unless the server named it) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// The events in `bytes`; the first read may take `first`, each later one `idle`, else the stream
/// ends with [`SseError::FirstByte`] or [`SseError::Idle`].
pub(crate) fn events<S, B, E>(
    bytes: S,
    first: Duration,
    idle: Duration,
) -> BoxStream<'static, Result<SseEvent, SseError>>
where
    S: Stream<Item = Result<B, E>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Error + Send + 'static,
{
    let timed = stream::unfold(Some((Box::pin(bytes), true)), move |state| async move {
        let (mut bytes, at_start) = state?;
        let (wait, late) = if at_start { (first, SseError::FirstByte) } else { (idle, SseError::Idle) };
        match tokio::time::timeout(wait, bytes.next()).await {
            Err(_) => Some((Err(late), None)),
            Ok(Some(Ok(chunk))) => Some((Ok(chunk.as_ref().to_vec()), Some((bytes, false)))),
            Ok(Some(Err(err))) => {
                let failure = SseError::Transport { message: describe(&err), reset: is_reset(&err) };
                Some((Err(failure), None))
            }
            Ok(None) => None,
        }
    });
    let without_bom = stream::unfold((Box::pin(timed.fuse()), Some(Vec::new())), |(mut timed, mut head)| async move {
        loop {
            let Some(start) = head.as_mut() else {
                let item = timed.next().await?;
                return Some((item, (timed, None)));
            };
            match timed.next().await {
                Some(Ok(chunk)) => {
                    start.extend_from_slice(&chunk);
                    if start.len() >= BOM.len() {
                        let first = strip_bom(std::mem::take(start));
                        return Some((Ok(first), (timed, None)));
                    }
                }
                Some(Err(err)) => return Some((Err(err), (timed, None))),
                None => {
                    let first = strip_bom(std::mem::take(start));
                    return Some((Ok(first), (timed, None)));
                }
            }
        }
    });
    // eventsource-stream strips a BOM from its first chunk by slicing one *byte* off, which panics
    // on the 3-byte U+FEFF; a comment line first means it never looks, so a second BOM (or one that
    // arrives after an empty read) is just an unknown field name, as the SSE spec says.
    let head = stream::once(async { Ok::<_, SseError>(b":\n".to_vec()) });
    // Terminates an event the server left open when it closed the body.
    let tail = stream::once(async { Ok::<_, SseError>(b"\n\n".to_vec()) });
    head.chain(without_bom)
        .chain(tail)
        .scan((LossyUtf8::default(), ErrorLines::default()), |(utf8, errors), item| {
            std::future::ready(Some(item.map(|chunk| errors.push(utf8.push(&chunk)))))
        })
        .eventsource()
        .map(|item| match item {
            Ok(event) => Ok(SseEvent { event: event.event, data: event.data }),
            Err(EventStreamError::Transport(err)) => Err(err),
            Err(EventStreamError::Utf8(err)) => Err(SseError::Malformed(err.to_string())),
            Err(EventStreamError::Parser(err)) => Err(SseError::Malformed(err.to_string())),
        })
        .boxed()
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Invalid UTF-8 becomes U+FFFD (as `String::from_utf8_lossy` does), so a provider's stray byte
/// costs one character instead of the whole reply; a character split across reads is kept whole
/// (and one left incomplete at the end becomes U+FFFD when the final `\n\n` arrives).
#[derive(Default)]
struct LossyUtf8 {
    pending: Vec<u8>,
}

impl LossyUtf8 {
    fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let bytes = [std::mem::take(&mut self.pending).as_slice(), chunk].concat();
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes.as_slice();
        while let Err(err) = std::str::from_utf8(rest) {
            let (valid, after) = rest.split_at(err.valid_up_to());
            out.extend_from_slice(valid);
            let Some(invalid) = err.error_len() else {
                self.pending = after.to_vec();
                return out;
            };
            out.extend_from_slice("\u{FFFD}".as_bytes());
            rest = &after[invalid..];
        }
        out.extend_from_slice(rest);
        out
    }
}

/// Rewrites each `error: X` line as `event: error` + `data: X`. Bytes are passed on up to the last
/// line break, so every line is seen whole (an event is only complete at a blank line anyway).
#[derive(Default)]
struct ErrorLines {
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
}

impl ErrorLines {
    fn push(&mut self, chunk: Vec<u8>) -> Vec<u8> {
        let Some(last) = chunk.iter().rposition(|b| matches!(b, b'\n' | b'\r')) else {
            self.partial.extend_from_slice(&chunk);
            return Vec::new();
        };
        let mut whole = std::mem::take(&mut self.partial);
        whole.extend_from_slice(&chunk[..=last]);
        self.partial = chunk[last + 1..].to_vec();
        let mut out = Vec::with_capacity(whole.len());
        for line in whole.split_inclusive(|b| matches!(b, b'\n' | b'\r')) {
            match line.strip_prefix(b"error:") {
                Some(rest) => {
                    out.extend_from_slice(b"event: error\ndata:");
                    out.extend_from_slice(rest);
                }
                None => out.extend_from_slice(line),
            }
        }
        out
    }
}

fn strip_bom(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    bytes
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::Idle => f.write_str("no data within the timeout"),
            SseError::FirstByte => f.write_str("no first byte within the timeout"),
            SseError::Transport { message, .. } => f.write_str(message),
            SseError::Malformed(message) => write!(f, "not an event stream: {message}"),
        }
    }
}

/// True when `err` (or its cause) is a dropped or reset connection.
pub(crate) fn is_reset(err: &(dyn Error + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
            )
        {
            return true;
        }
        let text = err.to_string().to_ascii_lowercase();
        if ["connection closed before message completed", "connection reset", "end of file before message"]
            .iter()
            .any(|needle| text.contains(needle))
        {
            return true;
        }
        current = err.source();
    }
    false
}

/// `err` and its causes, joined with `: `.
pub(crate) fn describe(err: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(err) = current {
        let text = err.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        current = err.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use futures_util::TryStreamExt;
    use pretty_assertions::assert_eq;

    use super::*;

    const IDLE: Duration = Duration::from_secs(5);

    /// The data of every event in `chunks`, each chunk delivered as a separate read.
    async fn data_of(chunks: &[&[u8]]) -> Vec<String> {
        let owned: Vec<Result<Vec<u8>, std::io::Error>> = chunks.iter().map(|c| Ok(c.to_vec())).collect();
        let events: Vec<SseEvent> = events(stream::iter(owned), IDLE, IDLE).try_collect().await.unwrap();
        events.into_iter().map(|event| event.data).collect()
    }

    #[tokio::test]
    async fn plain_lf_framing() {
        assert_eq!(data_of(&[b"data: {\"a\":1}\n\ndata: [DONE]\n\n"]).await, ["{\"a\":1}", "[DONE]"]);
    }

    #[tokio::test]
    async fn crlf_no_space_comments_and_keep_alives() {
        let body = b": OPENROUTER PROCESSING\r\n\r\ndata:{\"a\":1}\r\n\r\n:keep-alive\r\n\r\ndata: [DONE]\r\n\r\n";
        assert_eq!(data_of(&[body]).await, ["{\"a\":1}", "[DONE]"]);
    }

    #[tokio::test]
    async fn events_split_at_every_byte() {
        let body = "data: {\"content\":\"héllo\"}\r\n\r\ndata: [DONE]\r\n\r\n".as_bytes();
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(data_of(&bytes).await, ["{\"content\":\"héllo\"}", "[DONE]"]);
    }

    #[tokio::test]
    async fn a_crlf_split_between_reads() {
        assert_eq!(data_of(&[b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n"]).await, ["x", "y"]);
    }

    #[tokio::test]
    async fn a_last_event_without_its_blank_line_is_kept() {
        assert_eq!(data_of(&[b"data: a\n\ndata: [DONE]\n"]).await, ["a", "[DONE]"]);
        assert_eq!(data_of(&[b"data: a\n\ndata: [DONE]"]).await, ["a", "[DONE]"]);
    }

    #[tokio::test]
    async fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(data_of(&[b"data: caf\xE9 \xFF!\n\n"]).await, ["caf\u{FFFD} \u{FFFD}!"]);
        assert_eq!(data_of(&[b"data: h\xC3", b"\xA9\n\ndata: cut \xE2\x82"]).await, ["h\u{e9}", "cut \u{FFFD}"]);
    }

    #[tokio::test]
    async fn a_bom_split_across_reads() {
        assert_eq!(data_of(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]).await, ["a"]);
        assert_eq!(data_of(&[b"\xEF\xBB\xBF"]).await, Vec::<String>::new());
        assert_eq!(data_of(&[]).await, Vec::<String>::new());
    }

    /// Found by the `sse` fuzz target: a second BOM reached eventsource-stream, which panicked.
    #[tokio::test]
    async fn a_second_bom_is_data_not_a_panic() {
        assert_eq!(data_of(&[b"\xEF\xBB\xBF\xEF\xBB\xBF"]).await, Vec::<String>::new());
        assert_eq!(data_of(&[b"\xEF\xBB\xBF", b"\xEF\xBB\xBFdata: a\n\ndata: b\n\n"]).await, ["b"]);
        assert_eq!(data_of(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", b"data: b\n\n"]).await, ["b"]);
    }

    #[tokio::test]
    async fn named_events_and_a_bom() {
        let owned =
            vec![Ok::<_, std::io::Error>("\u{feff}event: error\ndata: {\"error\":\"x\"}\n\n".as_bytes().to_vec())];
        let got: Vec<SseEvent> = events(stream::iter(owned), IDLE, IDLE).try_collect().await.unwrap();
        assert_eq!(got, [SseEvent { event: "error".into(), data: "{\"error\":\"x\"}".into() }]);
    }

    #[tokio::test]
    async fn an_error_field_line_is_an_error_event_however_it_is_split() {
        let body = "data: {\"a\":1}\r\n\r\nerror: {\"code\":500,\"message\":\"boom\"}\r\n\r\ndata: x-error: no\n\n";
        for size in [1, 2, 5, body.len()] {
            let owned: Vec<Result<Vec<u8>, std::io::Error>> =
                body.as_bytes().chunks(size).map(|c| Ok(c.to_vec())).collect();
            let got: Vec<SseEvent> = events(stream::iter(owned), IDLE, IDLE).try_collect().await.unwrap();
            let error = SseEvent { event: "error".into(), data: "{\"code\":500,\"message\":\"boom\"}".into() };
            let message = |data: &str| SseEvent { event: "message".into(), data: data.into() };
            assert_eq!(got, [message("{\"a\":1}"), error, message("x-error: no")], "split every {size}");
        }
    }

    #[tokio::test]
    async fn an_idle_gap_ends_the_stream_with_idle() {
        let first = stream::iter([Ok::<_, std::io::Error>(b"data: a\n\n".to_vec())]);
        let stalled = first.chain(stream::pending());
        let mut events = events(stalled, Duration::from_secs(60), Duration::from_millis(50));
        assert_eq!(events.next().await, Some(Ok(SseEvent { event: "message".into(), data: "a".into() })));
        assert_eq!(events.next().await, Some(Err(SseError::Idle)));
    }

    #[tokio::test]
    async fn the_first_read_may_take_the_first_byte_timeout_and_no_longer() {
        let (first, idle) = (Duration::from_millis(600), Duration::from_millis(30));
        let late = stream::once(async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            Ok::<_, std::io::Error>(b"data: a\n\n".to_vec())
        });
        let got: Vec<_> = events(late, first, idle).collect().await;
        assert_eq!(got, [Ok(SseEvent { event: "message".into(), data: "a".into() })], "longer than idle is fine");
        let never = stream::pending::<Result<Vec<u8>, std::io::Error>>();
        let mut events = events(never, first, idle);
        let started = std::time::Instant::now();
        assert_eq!(events.next().await, Some(Err(SseError::FirstByte)));
        assert!(started.elapsed() >= first, "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn a_reset_is_reported_as_such() {
        let reset = std::io::Error::new(ErrorKind::ConnectionReset, "peer reset");
        let mut events = events(stream::iter([Err::<Vec<u8>, _>(reset)]), IDLE, IDLE);
        let Some(Err(SseError::Transport { reset, message })) = events.next().await else { panic!("no error") };
        assert!(reset && message.contains("peer reset"), "{message}");
    }

    #[test]
    fn reset_detection_walks_the_causes() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error decoding response body")
            }
        }
        impl Error for Outer {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let eof = Outer(std::io::Error::new(ErrorKind::UnexpectedEof, "unexpected EOF during chunk size line"));
        assert!(is_reset(&eof));
        assert_eq!(describe(&eof), "error decoding response body: unexpected EOF during chunk size line");
        assert!(!is_reset(&std::io::Error::new(ErrorKind::InvalidData, "bad")));
    }
}
