//! Stream shapes, SSE framing variants, text-form tool calls and what the client sends.

use pretty_assertions::assert_eq;
use rstest::rstest;
use serde_json::{Value, json};

use super::*;
use crate::support::mock_llm::*;

#[tokio::test]
async fn a_text_reply_streams_deltas_and_reports_usage() {
    let mock = MockLlm::start([reply_text("Three files are over 100 MB.")]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    let reply = reply.unwrap();
    assert_eq!(reply.content, "Three files are over 100 MB.");
    assert_eq!(content_of(&deltas), reply.content);
    assert!(deltas.len() > 1, "expected several deltas: {deltas:?}");
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.usage, Some(opsai::protocol::Usage { prompt_tokens: 42, completion_tokens: 7 }));
}

#[tokio::test]
async fn the_request_is_chat_completions_with_tools_and_the_key_only_in_the_header() {
    let mock = MockLlm::start([reply_text("ok")]);
    complete(&client(&mock), &request()).await.0.unwrap();
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = sent.json();
    assert_eq!(body["model"], "qwen2.5:7b");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent.tool_names(), ["run_command", "propose_command"]);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["parameters"]["required"], json!(["command"]));
    assert_eq!(sent.messages()[1], json!({"role": "user", "content": "find log files over 100 MB under /var/log"}));
    mock.assert_never_sent(KEY);
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let mock = MockLlm::start([reply_text("ok")]);
    let client = OpenAiClient::new(mock.base_url(), None, Duration::from_secs(5)).unwrap();
    complete(&client, &request()).await.0.unwrap();
    assert_eq!(mock.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn tool_call_ids_link_calls_and_results_in_the_history() {
    let mock = MockLlm::start([reply_text("report.pdf is 2.1 MB.")]);
    let mut request = request();
    let call = opsai::protocol::ToolCall {
        id: "call_7f3".into(),
        name: "run_command".into(),
        arguments: json!({"command": "ls -lh report.pdf"}),
    };
    request.messages.push(ChatMessage::assistant("", vec![call]));
    request.messages.push(ChatMessage::tool("call_7f3", "-rw-r--r-- 1 u u 2.1M report.pdf\n"));
    complete(&client(&mock), &request).await.0.unwrap();
    let sent = &mock.chat_requests()[0];
    sent.assert_tool_calls_answered();
    assert_eq!(sent.tool_result("call_7f3").as_deref(), Some("-rw-r--r-- 1 u u 2.1M report.pdf\n"));
    let assistant = &sent.messages()[2];
    assert_eq!(assistant["content"], Value::Null);
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], "{\"command\":\"ls -lh report.pdf\"}");
}

#[tokio::test]
async fn openai_fragments_assemble_one_call() {
    let args = json!({"command": "find /var/log -type f -size +100M -exec ls -lh {} \\;", "why": "list big logs"});
    let mock = MockLlm::start([reply_tool_call("call_abc", "run_command", args.clone())]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    let reply = reply.unwrap();
    assert!(deltas.is_empty(), "{deltas:?}");
    assert_eq!(
        reply.tool_calls,
        [opsai::protocol::ToolCall { id: "call_abc".into(), name: "run_command".into(), arguments: args }]
    );
}

#[tokio::test]
async fn text_before_a_call_streams_as_content() {
    let mock =
        MockLlm::start([reply_text_then_tool_call("Let me check. ", "c1", "run_command", json!({"command": "df -h"}))]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    let reply = reply.unwrap();
    assert_eq!(content_of(&deltas), "Let me check. ");
    assert_eq!(reply.tool_calls[0].arguments, json!({"command": "df -h"}));
}

fn two_calls() -> Vec<MockCall> {
    vec![
        call("call_1a", "run_command", json!({"command": "df -h"})),
        call("call_2b", "run_command", json!({"command": "free -m"})),
    ]
}

fn ids_and_args(reply: &ModelReply) -> Vec<(String, Value)> {
    reply.tool_calls.iter().map(|c| (c.id.clone(), c.arguments.clone())).collect()
}

#[rstest]
#[case::openai_parallel_fragments(reply_openai_fragments(&two_calls()))]
#[case::ollama_whole_calls(reply_ollama_whole(&two_calls()))]
#[case::calls_without_index(reply_no_index(&two_calls()))]
#[tokio::test]
async fn two_calls_in_each_provider_shape(#[case] reply: Reply) {
    let mock = MockLlm::start([reply]);
    let reply = complete(&client(&mock), &request()).await.0.unwrap();
    let expected: Vec<(String, Value)> = two_calls().into_iter().map(|c| (c.id, c.arguments)).collect();
    assert_eq!(ids_and_args(&reply), expected);
}

#[tokio::test]
async fn reasoning_streams_before_the_answer() {
    let mock = MockLlm::start([reply_reasoning_then_text("The user wants big files. Use find.", "Use find.")]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    let reply = reply.unwrap();
    assert_eq!(reply.reasoning, "The user wants big files. Use find.");
    assert_eq!(reply.content, "Use find.");
    let first_content = deltas.iter().position(|d| matches!(d, ModelDelta::Content(_))).unwrap();
    assert!(deltas[..first_content].iter().all(|d| matches!(d, ModelDelta::Reasoning(_))));
    assert!(deltas[first_content..].iter().all(|d| matches!(d, ModelDelta::Content(_))));
}

#[tokio::test]
async fn ollama_reasoning_key() {
    let payloads = [
        chunk(json!({"role": "assistant", "content": "", "reasoning": "Thinking."}), None),
        chunk(json!({"content": "Done."}), Some("stop")),
        "[DONE]".to_owned(),
    ];
    let mock = MockLlm::start([reply_sse_events(&payloads)]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    assert_eq!(reply.unwrap().reasoning, "Thinking.");
    assert_eq!(deltas, [ModelDelta::Reasoning("Thinking.".into()), ModelDelta::Content("Done.".into())]);
}

#[rstest]
#[case::crlf(Framing { crlf: true, ..Framing::default() }, 0)]
#[case::no_space(Framing { no_space: true, ..Framing::default() }, 0)]
#[case::comments_and_keep_alives(Framing { comments: true, ..Framing::default() }, 0)]
#[case::everything_split_every_7_bytes(Framing { crlf: true, no_space: true, comments: true }, 7)]
#[tokio::test]
async fn sse_framing_variants(#[case] framing: Framing, #[case] split: usize) {
    let args = json!({"command": "du -sh /var/log/* | sort -h", "why": "größte Dateien"});
    let payloads = openai_fragment_payloads("Prüfe… ", &[call("c9", "run_command", args.clone())]);
    let bytes: Vec<u8> = frame(&payloads, framing).concat();
    let reply = if split > 0 { reply_sse_raw(bytes).split_every(split) } else { reply_sse_raw(bytes) };
    let mock = MockLlm::start([reply]);
    let reply = complete(&client(&mock), &request()).await.0.unwrap();
    assert_eq!(reply.content, "Prüfe… ");
    assert_eq!(ids_and_args(&reply), [("c9".to_owned(), args)]);
}

#[tokio::test]
async fn a_close_delimited_stream_without_done_or_final_blank_line() {
    let mut payloads = text_payloads("Disk is fine.");
    payloads.pop(); // no [DONE]
    let mut bytes = frame(&payloads, Framing::default()).concat();
    bytes.truncate(bytes.len() - 1); // the last event ends with one newline only
    let mock = MockLlm::start([reply_sse_raw(bytes).close_delimited()]);
    let reply = complete(&client(&mock), &request()).await.0.unwrap();
    assert_eq!(reply.content, "Disk is fine.");
    assert!(reply.usage.is_some());
}

#[tokio::test]
async fn a_json_body_instead_of_a_stream() {
    let mock = MockLlm::start([reply_json_completion("Whole reply.")]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    assert_eq!(reply.unwrap().content, "Whole reply.");
    assert_eq!(deltas, [ModelDelta::Content("Whole reply.".into())]);
}

const QWEN_TAGGED: &str = "<tool_call>\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"find /var/log -size +100M\"}}\n</tool_call>";
const LLAMA_FENCED: &str = "I'll search for large files.\n\n```json\n{\"name\": \"run_command\", \"parameters\": {\"command\": \"find /var/log -size +100M\"}}\n```";
const REACT: &str = "Thought: I should search /var/log.\nAction: run_command\nAction Input: {\"command\": \"find /var/log -size +100M\"}";
const LLAMA_BARE: &str = "{\"name\": \"run_command\", \"parameters\": {\"command\": \"find /var/log -size +100M\"}}";

#[rstest]
#[case::qwen_tool_call_tags(QWEN_TAGGED, "")]
#[case::fenced_json(LLAMA_FENCED, "I'll search for large files.")]
#[case::react(REACT, "Thought: I should search /var/log.")]
#[case::llama_bare_json(LLAMA_BARE, "")]
#[tokio::test]
async fn text_form_calls_are_recovered(#[case] text: &str, #[case] prose: &str) {
    let mock = MockLlm::start([reply_text(text)]);
    let (reply, deltas) = complete(&client(&mock), &request()).await;
    let reply = reply.unwrap();
    assert_eq!(content_of(&deltas), text, "the raw text was streamed as it came");
    assert_eq!(reply.content, prose);
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].name, "run_command");
    assert_eq!(reply.tool_calls[0].arguments, json!({"command": "find /var/log -size +100M"}));
}

#[tokio::test]
async fn a_bash_block_in_an_answer_is_not_a_call() {
    let answer = "Run this yourself:\n\n```bash\nfind /var/log -type f -size +100M\n```\n";
    let mock = MockLlm::start([reply_text(answer)]);
    let reply = complete(&client(&mock), &request()).await.0.unwrap();
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.content, answer);
}

#[tokio::test]
async fn text_calls_for_tools_not_offered_are_not_recovered() {
    let mock = MockLlm::start([reply_text(QWEN_TAGGED)]);
    let mut request = request();
    request.tools.clear();
    let reply = complete(&client(&mock), &request).await.0.unwrap();
    assert!(reply.tool_calls.is_empty());
    assert_eq!(mock.requests()[0].json().get("tools"), None);
}

#[tokio::test]
async fn list_models_reads_the_model_list() {
    let mock = MockLlm::start([reply_models(&["qwen2.5:7b", "llama3.1:8b"])]);
    let models = client(&mock).list_models().await.unwrap();
    assert_eq!(models, ["llama3.1:8b", "qwen2.5:7b"]);
    let sent = &mock.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("GET", "/v1/models"));
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
}

#[tokio::test]
async fn progress_signals_arrive_in_order() {
    let args = json!({"command": "ls", "why": "look"});
    let mock = MockLlm::start([reply_tool_call("call_p", "run_command", args), reply_text("done")]);
    let (reply, deltas) = super::complete_all(&client(&mock), &request()).await;
    assert_eq!(reply.unwrap().tool_calls.len(), 1);
    assert!(matches!(deltas.last(), Some(ModelDelta::Finished { tool_calls: true })), "{deltas:?}");
    assert!(deltas.iter().any(|d| matches!(d, ModelDelta::ToolCallPiece)), "{deltas:?}");
    let (_, deltas) = super::complete_all(&client(&mock), &request()).await;
    assert!(matches!(deltas.last(), Some(ModelDelta::Finished { tool_calls: false })), "{deltas:?}");
}
