use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

/// Assembles `payloads`, returning the reply and every text delta emitted (reasoning, content).
fn run(payloads: &[String]) -> (ModelReply, Vec<ModelDelta>) {
    let (reply, deltas) = run_all(payloads);
    let text = deltas.into_iter().filter(|d| matches!(d, ModelDelta::Content(_) | ModelDelta::Reasoning(_)));
    (reply, text.collect())
}

/// Assembles `payloads`, returning the reply and every delta emitted.
fn run_all(payloads: &[String]) -> (ModelReply, Vec<ModelDelta>) {
    let mut deltas = Vec::new();
    let reply = assemble(payloads.iter().map(String::as_str), &mut |delta| deltas.push(delta)).unwrap();
    (reply, deltas)
}

#[test]
fn call_pieces_and_the_finish_are_heard_as_they_arrive() {
    let call = json!({"index": 0, "id": "c1", "function": {"name": "run_command", "arguments": "{\"com"}});
    let more = json!({"index": 0, "function": {"arguments": "mand\": \"ls\"}"}});
    let payloads = [
        chunk(json!({"content": "Let me check."})),
        chunk(json!({"tool_calls": [call]})),
        chunk(json!({"tool_calls": [more]})),
        finish("tool_calls"),
        usage(1, 1),
        done(),
    ];
    let (_, deltas) = run_all(&payloads);
    assert_eq!(
        deltas,
        vec![
            ModelDelta::Content("Let me check.".into()),
            ModelDelta::ToolCallPiece,
            ModelDelta::ToolCallPiece,
            ModelDelta::Finished { tool_calls: true },
        ]
    );
    let (_, deltas) = run_all(&[chunk(json!({"content": "Done."})), finish("stop"), usage(1, 1), done()]);
    assert_eq!(deltas, vec![ModelDelta::Content("Done.".into()), ModelDelta::Finished { tool_calls: false }]);
    // A reply cut at max_tokens is not finished: its text is no whole answer.
    let (_, deltas) = run_all(&[chunk(json!({"content": "Do"})), finish("length"), done()]);
    assert_eq!(deltas, vec![ModelDelta::Content("Do".into())]);
}

fn chunk(delta: Value) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    .to_string()
}

fn finish(reason: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}).to_string()
}

fn usage(prompt: u64, completion: u64) -> String {
    json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion}})
    .to_string()
}

fn done() -> String {
    "[DONE]".to_owned()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall { id: id.to_owned(), name: name.to_owned(), arguments }
}

#[test]
fn text_deltas_then_usage_chunk_with_empty_choices() {
    let (reply, deltas) = run(&[
        chunk(json!({"role": "assistant", "content": ""})),
        chunk(json!({"content": "The disk "})),
        chunk(json!({"content": "is 42% full."})),
        finish("stop"),
        usage(120, 9),
        done(),
    ]);
    assert_eq!(deltas, vec![ModelDelta::Content("The disk ".into()), ModelDelta::Content("is 42% full.".into())]);
    assert_eq!(reply.content, "The disk is 42% full.");
    assert_eq!(reply.usage, Some(Usage { prompt_tokens: 120, completion_tokens: 9 }));
    assert!(reply.tool_calls.is_empty());
}

#[test]
fn openai_fragments_with_id_and_name_on_the_first_only() {
    let (reply, deltas) = run(&[
        chunk(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_Ab1",
              "type": "function", "function": {"name": "run_command", "arguments": ""}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"comm"}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "and\": \"du -sh /var/log\""}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]})),
        finish("tool_calls"),
        done(),
    ]);
    assert!(deltas.is_empty());
    assert_eq!(reply.tool_calls, vec![call("call_Ab1", "run_command", json!({"command": "du -sh /var/log"}))]);
}

#[test]
fn parallel_openai_calls_interleaved_by_index() {
    let fragment = |index: u64, arguments: &str| {
        chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}))
    };
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
              "function": {"name": "run_command", "arguments": ""}}]})),
        chunk(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
              "function": {"name": "propose_command", "arguments": ""}}]})),
        fragment(0, "{\"command\":"),
        fragment(1, "{\"command\":\"ls\","),
        fragment(0, "\"df -h\"}"),
        fragment(1, "\"explanation\":\"list\"}"),
        done(),
    ]);
    assert_eq!(
        reply.tool_calls,
        vec![
            call("call_a", "run_command", json!({"command": "df -h"})),
            call("call_b", "propose_command", json!({"command": "ls", "explanation": "list"})),
        ]
    );
}

#[test]
fn ollama_whole_calls_in_one_chunk() {
    let (reply, deltas) = run(&[
        chunk(json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_x1", "index": 0, "type": "function",
             "function": {"name": "run_command", "arguments": "{\"command\":\"df -h\"}"}},
            {"id": "call_x2", "index": 1, "type": "function",
             "function": {"name": "run_command", "arguments": "{\"command\":\"free -m\"}"}}]})),
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "tool_calls"}]})
            .to_string(),
        usage(300, 40),
        done(),
    ]);
    assert!(deltas.is_empty());
    assert_eq!(
        reply.tool_calls,
        vec![
            call("call_x1", "run_command", json!({"command": "df -h"})),
            call("call_x2", "run_command", json!({"command": "free -m"})),
        ]
    );
}

#[test]
fn older_ollama_without_index_and_with_object_arguments() {
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [
            {"id": "call_1x", "function": {"name": "run_command", "arguments": {"command": "uptime"}}},
            {"id": "call_2x", "function": {"name": "run_command", "arguments": {"command": "whoami"}}}]})),
        done(),
    ]);
    assert_eq!(
        reply.tool_calls,
        vec![
            call("call_1x", "run_command", json!({"command": "uptime"})),
            call("call_2x", "run_command", json!({"command": "whoami"})),
        ]
    );
}

#[test]
fn calls_without_index_new_id_starts_a_call_no_id_continues() {
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [{"id": "c1", "function": {"name": "run_command", "arguments": "{\"command\":"}}]})),
        chunk(json!({"tool_calls": [{"function": {"arguments": "\"pwd\"}"}}]})),
        chunk(json!({"tool_calls": [{"id": "c2", "function": {"name": "run_command", "arguments": "{\"command\""}}]})),
        chunk(json!({"tool_calls": [{"function": {"arguments": ":\"id\"}"}}]})),
        done(),
    ]);
    assert_eq!(
        reply.tool_calls,
        vec![call("c1", "run_command", json!({"command": "pwd"})), call("c2", "run_command", json!({"command": "id"}))]
    );
}

#[test]
fn fragments_repeating_the_id_or_the_name_stay_one_call() {
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [{"id": "c1", "function": {"name": "run_command", "arguments": "{\"comma"}}]})),
        chunk(json!({"tool_calls": [{"id": "c1", "function": {"name": "run_command", "arguments": "nd\":\"w\"}"}}]})),
        done(),
    ]);
    assert_eq!(reply.tool_calls, vec![call("c1", "run_command", json!({"command": "w"}))]);

    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [{"function": {"name": "run_command", "arguments": "{\"command\":"}}]})),
        chunk(json!({"tool_calls": [{"function": {"name": "run_command", "arguments": "\"w\"}"}}]})),
        chunk(json!({"tool_calls": [{"function": {"name": "run_command", "arguments": "{\"command\":\"who\"}"}}]})),
        done(),
    ]);
    assert_eq!(
        reply.tool_calls,
        vec![
            call("call_1", "run_command", json!({"command": "w"})),
            call("call_2", "run_command", json!({"command": "who"}))
        ]
    );
}

#[test]
fn the_same_index_with_a_different_id_is_another_call() {
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [{"index": 0, "id": "g1", "function": {"name": "run_command",
              "arguments": "{\"command\":\"ls\"}"}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "id": "g2", "function": {"name": "run_command",
              "arguments": "{\"command\":\"ps\"}"}}]})),
        done(),
    ]);
    assert_eq!(reply.tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["g1", "g2"]);
}

#[test]
fn reasoning_is_emitted_before_content() {
    let (reply, deltas) = run(&[
        chunk(json!({"role": "assistant", "reasoning_content": "The user wants ", "content": null})),
        chunk(json!({"reasoning_content": "disk usage.", "content": ""})),
        chunk(json!({"reasoning": "Ollama style.", "content": "Run df."})),
        done(),
    ]);
    assert_eq!(
        deltas,
        vec![
            ModelDelta::Reasoning("The user wants ".into()),
            ModelDelta::Reasoning("disk usage.".into()),
            ModelDelta::Reasoning("Ollama style.".into()),
            ModelDelta::Content("Run df.".into()),
        ]
    );
    assert_eq!(reply.reasoning, "The user wants disk usage.Ollama style.");
    assert_eq!(reply.content, "Run df.");
}

#[test]
fn null_and_empty_content_emit_nothing() {
    let (reply, deltas) = run(&[
        chunk(json!({"role": "assistant", "content": null})),
        chunk(json!({"content": ""})),
        chunk(json!({})),
        json!({"choices": [{"index": 0, "delta": null, "finish_reason": "stop"}]}).to_string(),
        done(),
    ]);
    assert!(deltas.is_empty());
    assert_eq!(reply, ModelReply::default());
}

#[test]
fn done_stops_the_stream() {
    let (reply, _) = run(&[chunk(json!({"content": "a"})), done(), chunk(json!({"content": "b"}))]);
    assert_eq!(reply.content, "a");
    let mut assembler = ReplyAssembler::new();
    assert_eq!(assembler.push_data(" [DONE] ", &mut |_| {}), Ok(Step::Done));
}

#[test]
fn a_stream_without_done_still_assembles() {
    let (reply, _) = run(&[chunk(json!({"content": "ok"})), finish("stop")]);
    assert_eq!(reply.content, "ok");
}

#[test]
fn invalid_json_arguments_are_kept_as_a_string() {
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "run_command",
              "arguments": "{command: ls -la"}}]})),
        done(),
    ]);
    assert_eq!(reply.tool_calls, vec![call("c", "run_command", Value::String("{command: ls -la".into()))]);
}

#[test]
fn empty_arguments_are_an_empty_object_and_double_encoding_is_undone() {
    assert_eq!(parse_arguments("", None), json!({}));
    assert_eq!(parse_arguments("  ", None), json!({}));
    assert_eq!(parse_arguments(r#""{\"command\":\"ls\"}""#, None), json!({"command": "ls"}));
    assert_eq!(parse_arguments(r#""just text""#, None), json!("just text"));
    assert_eq!(parse_arguments("", Some(json!({"a": 1}))), json!({"a": 1}));
    assert_eq!(parse_arguments("", Some(json!("{\"a\":1}"))), json!({"a": 1}));
}

#[test]
fn missing_ids_are_generated_without_colliding() {
    let (reply, _) = run(&[
        chunk(json!({"tool_calls": [
            {"index": 0, "function": {"name": "run_command", "arguments": "{}"}},
            {"index": 1, "id": "call_1", "function": {"name": "run_command", "arguments": "{}"}},
            {"index": 2, "function": {"name": "run_command", "arguments": "{}"}}]})),
        done(),
    ]);
    assert_eq!(reply.tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["call_2", "call_1", "call_3"]);
}

#[test]
fn an_error_object_in_the_stream_is_a_provider_error() {
    let mut assembler = ReplyAssembler::new();
    assert_eq!(assembler.push_data(&chunk(json!({"content": "Hi"})), &mut |_| {}), Ok(Step::More));
    let error = json!({"error": {"message": "model crashed", "type": "server_error"}}).to_string();
    assert_eq!(assembler.push_data(&error, &mut |_| {}), Err(StreamError::Provider("model crashed".into())));
    let mut assembler = ReplyAssembler::new();
    assert_eq!(
        assembler.push_data(r#"{"error":"out of memory"}"#, &mut |_| {}),
        Err(StreamError::Provider("out of memory".into()))
    );
}

#[test]
fn a_non_streamed_response_is_accepted() {
    let body = json!({"id": "chatcmpl-9", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "Hello", "tool_calls": [{"id": "call_q", "type": "function",
        "function": {"name": "run_command", "arguments": "{\"command\":\"date\"}"}}]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}});
    let (reply, deltas) = run(&[body.to_string()]);
    assert_eq!(deltas, vec![ModelDelta::Content("Hello".into())]);
    assert_eq!(reply.tool_calls, vec![call("call_q", "run_command", json!({"command": "date"}))]);
    assert_eq!(reply.usage, Some(Usage { prompt_tokens: 5, completion_tokens: 6 }));
}

#[test]
fn unreadable_payloads_are_skipped_unless_nothing_else_arrives() {
    let (reply, _) = run(&["not json".to_owned(), chunk(json!({"content": "fine"})), done()]);
    assert_eq!(reply.content, "fine");
    let result = assemble(["<html>Bad Gateway</html>"], &mut |_| {});
    assert_eq!(result, Err(StreamError::Unreadable("<html>Bad Gateway</html>".into())));
}

#[test]
fn an_empty_stream_is_an_error_but_done_alone_is_an_empty_reply() {
    assert_eq!(assemble([], &mut |_| {}), Err(StreamError::Empty));
    assert_eq!(assemble(["", "  "], &mut |_| {}), Err(StreamError::Empty));
    assert_eq!(assemble(["[DONE]"], &mut |_| {}), Ok(ModelReply::default()));
}

#[test]
fn legacy_function_call_delta() {
    let (reply, _) = run(&[
        chunk(json!({"function_call": {"name": "run_command", "arguments": "{\"command\""}})),
        chunk(json!({"function_call": {"arguments": ":\"ls\"}"}})),
        done(),
    ]);
    assert_eq!(reply.tool_calls, vec![call("call_1", "run_command", json!({"command": "ls"}))]);
}

#[test]
fn content_as_an_array_of_parts() {
    let (reply, _) = run(&[chunk(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}))]);
    assert_eq!(reply.content, "ab");
}

#[test]
fn usage_on_the_last_content_chunk_and_other_names() {
    let last = json!({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}],
                      "usage": {"input_tokens": 3, "output_tokens": 4}});
    let (reply, _) = run(&[last.to_string(), json!({"choices": [], "usage": null}).to_string()]);
    assert_eq!(reply.usage, Some(Usage { prompt_tokens: 3, completion_tokens: 4 }));
}

#[test]
fn tool_call_fragments_are_not_deltas() {
    let mut assembler = ReplyAssembler::new();
    let fragment = chunk(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "run_command"}}]}));
    assembler.push_data(&fragment, &mut |_| {}).unwrap();
    assert!(assembler.has_started() && !assembler.has_emitted());
    assembler.push_data(&chunk(json!({"content": "x"})), &mut |_| {}).unwrap();
    assert!(assembler.has_emitted());
}

#[test]
fn other_choices_are_ignored() {
    let two = json!({"choices": [{"index": 1, "delta": {"content": "B"}}, {"index": 0, "delta": {"content": "A"}}]});
    let (reply, _) = run(&[two.to_string()]);
    assert_eq!(reply.content, "A");
}

proptest! {
    /// However the arguments are cut into fragments, the call reassembles to the same value.
    #[test]
    fn fragment_boundaries_do_not_matter(cuts in proptest::collection::vec(0usize..60, 0..8), command in "[ -~]{0,40}") {
        let arguments = json!({"command": command}).to_string();
        let mut points: Vec<usize> = cuts.into_iter().filter(|c| *c < arguments.len()).collect();
        points.sort_unstable();
        points.dedup();
        let mut payloads = vec![chunk(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "run_command", "arguments": ""}}]}))];
        let mut start = 0;
        for point in points.into_iter().chain([arguments.len()]) {
            payloads.push(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": &arguments[start..point]}}]})));
            start = point;
        }
        let (reply, _) = run(&payloads);
        prop_assert_eq!(reply.tool_calls, vec![call("c", "run_command", json!({"command": command}))]);
    }
}
