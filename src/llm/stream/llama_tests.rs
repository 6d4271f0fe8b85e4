//! The stream shapes llama.cpp's llama-server (and other local servers) send: `finish_reason`
//! `length`, an error object after calls, usage with empty `choices` and extra `timings`.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}).to_string()
}

fn llama_usage() -> String {
    json!({"choices": [], "usage": {"prompt_tokens": 4400, "completion_tokens": 3, "total_tokens": 4403},
           "timings": {"prompt_n": 4400, "prompt_ms": 21000.0}})
    .to_string()
}

fn push_all(assembler: &mut ReplyAssembler, payloads: &[String]) -> Result<(), StreamError> {
    for payload in payloads {
        assembler.push_data(payload, &mut |_| {})?;
    }
    Ok(())
}

#[test]
fn finish_reasons_are_kept() {
    for (reason, expected) in [
        (Some("stop"), Finish::Complete),
        (Some("tool_calls"), Finish::Complete),
        (None, Finish::Complete),
        (Some("length"), Finish::Length),
        (Some("content_filter"), Finish::ContentFilter),
    ] {
        let payloads = [chunk(json!({"content": "Part"}), None), chunk(json!({}), reason), llama_usage()];
        let reply = assemble(payloads.iter().map(String::as_str), &mut |_| {}).unwrap();
        assert_eq!(reply.finish, expected, "{reason:?}");
        assert_eq!(reply.usage, Some(Usage { prompt_tokens: 4400, completion_tokens: 3 }));
    }
}

#[test]
fn what_the_user_is_told_about_a_reply_that_is_not_whole() {
    assert_eq!(Finish::Complete.problem(Some(10), "llm.max_tokens"), None);
    let cut = Finish::Length.problem(Some(4096), "llm.max_tokens").unwrap();
    assert!(cut.starts_with("the answer was cut at llm.max_tokens = 4096 tokens; raise llm.max_tokens"), "{cut}");
    assert!(cut.contains("opsai config path"), "{cut}");
    assert!(Finish::Length.problem(None, "k").unwrap().contains("token limit"));
    assert!(Finish::ContentFilter.problem(Some(1), "k").unwrap().contains("content filter"));
}

#[test]
fn a_complete_call_before_an_error_object_is_salvaged_and_a_cut_one_dropped() {
    let mut assembler = ReplyAssembler::new();
    let whole = json!({"index": 0, "id": "c1", "type": "function",
                       "function": {"name": "run_command", "arguments": "{\"command\":\"df -h\"}"}});
    let cut = json!({"index": 1, "id": "c2", "type": "function",
                     "function": {"name": "run_command", "arguments": "{\"command\":\"du -"}});
    push_all(&mut assembler, &[chunk(json!({"tool_calls": [whole, cut]}), None)]).unwrap();
    let error = json!({"error": {"code": 500, "message": "Failed to parse input", "type": "server_error"}});
    assert_eq!(
        push_all(&mut assembler, &[error.to_string()]),
        Err(StreamError::Provider("Failed to parse input".into()))
    );
    assert!(assembler.has_complete_call());
    let reply = assembler.salvage().unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].arguments, json!({"command": "df -h"}));
}

#[test]
fn no_complete_call_means_nothing_to_salvage() {
    let mut assembler = ReplyAssembler::new();
    let cut = json!({"index": 0, "id": "c1", "function": {"name": "run_command", "arguments": "{\"comm"}});
    push_all(&mut assembler, &[chunk(json!({"content": "Checking", "tool_calls": [cut]}), None)]).unwrap();
    assert!(!assembler.has_complete_call());
}

#[test]
fn a_stream_repeating_one_chunk_is_stopped_and_a_table_is_not() {
    let mut assembler = ReplyAssembler::new();
    let mut seen = 0;
    let looping = (0..200).map(|_| chunk(json!({"content": "# "}), None));
    let error = looping.map(|payload| assembler.push_data(&payload, &mut |_| seen += 1)).find_map(Result::err);
    let Some(StreamError::Repeating(found)) = error else { panic!("not stopped: {error:?}") };
    assert_eq!((found.unit.as_str(), found.copies, seen), ("# ", 128, 128));
    let mut assembler = ReplyAssembler::new();
    for n in 0..200 {
        for piece in ["|", " -", " |", &format!(" {n}"), " |\n"] {
            assembler.push_data(&chunk(json!({"content": piece}), None), &mut |_| {}).unwrap();
        }
    }
    assert!(assembler.finish().unwrap().content.ends_with("| - | 199 |\n"));
}
