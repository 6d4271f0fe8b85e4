use pretty_assertions::assert_eq;
use serde_json::json;

use super::models::model_names;
use super::*;
use crate::protocol::{ChatMessage, ToolSpec};

#[test]
fn base_urls_are_checked_and_normalized() {
    let client = OpenAiClient::new(" http://localhost:11434/v1/ ", None, Duration::from_secs(1)).unwrap();
    assert_eq!(client.base_url(), "http://localhost:11434/v1");
    for bad in ["localhost:11434", "ftp://example.com/v1", "not a url"] {
        let err = OpenAiClient::new(bad, None, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(err, LlmError::InvalidUrl { .. }), "{bad}: {err:?}");
    }
}

#[test]
fn debug_never_shows_the_key() {
    let client = OpenAiClient::new("https://api.openai.com/v1", Some("sk-secret123".into()), Duration::from_secs(1));
    let text = format!("{:?}", client.unwrap());
    assert!(!text.contains("sk-secret123") && text.contains("<set>"), "{text}");
}

#[test]
fn timeouts_are_reported_in_whole_seconds() {
    let client = OpenAiClient::new("http://127.0.0.1:1/v1", None, Duration::from_millis(300)).unwrap();
    assert!(matches!(client.timed_out(), LlmError::Timeout { seconds: 1 }));
    let client = OpenAiClient::new("http://127.0.0.1:1/v1", None, Duration::from_millis(2500)).unwrap();
    assert!(matches!(client.timed_out(), LlmError::Timeout { seconds: 3 }));
}

#[test]
fn loopback_hosts() {
    for (url, expected) in [
        ("http://localhost:11434/v1", true),
        ("http://127.0.0.1:8080", true),
        ("http://[::1]:8080", true),
        ("https://api.openai.com/v1", false),
    ] {
        assert_eq!(transport::is_loopback(&reqwest::Url::parse(url).unwrap()), expected, "{url}");
    }
}

#[test]
fn model_lists_in_each_shape() {
    let openai = r#"{"object":"list","data":[{"id":"qwen2.5:7b","object":"model"},{"id":"llama3.1:8b"}]}"#;
    assert_eq!(model_names(openai), Some(vec!["llama3.1:8b".to_owned(), "qwen2.5:7b".to_owned()]));
    assert_eq!(model_names(r#"{"models":[{"name":"a"},{"name":"a"}]}"#), Some(vec!["a".to_owned()]));
    assert_eq!(model_names(r#"["x"]"#), Some(vec!["x".to_owned()]));
    assert_eq!(model_names("<html>"), None);
}

#[test]
fn text_calls_are_recovered_only_for_requested_tools() {
    let tool = ToolSpec { name: "run_command".into(), description: String::new(), parameters: json!({}) };
    let mut request =
        ChatRequest { model: "m".into(), messages: vec![ChatMessage::user("hi")], tools: vec![tool], max_tokens: None };
    let reply = ModelReply {
        content: "<tool_call>{\"name\":\"run_command\",\"arguments\":{\"command\":\"ls\"}}</tool_call>".into(),
        ..ModelReply::default()
    };
    let recovered = recover_text_calls(reply.clone(), &request);
    assert_eq!(recovered.tool_calls.len(), 1);
    assert_eq!(recovered.content, "");
    request.tools.clear();
    assert_eq!(recover_text_calls(reply.clone(), &request), reply);
}

#[test]
fn the_local_first_byte_timeout_applies_only_to_a_model_on_this_machine() {
    let wait = Duration::from_secs(300);
    let idle = Duration::from_secs(60);
    for (url, local) in
        [("http://localhost:8080/v1", true), ("http://[::1]:8080/v1", true), ("https://api.example.com/v1", false)]
    {
        let client = OpenAiClient::new(url, None, idle).unwrap().with_local_first_byte(wait);
        assert_eq!(client.first_byte(), if local { wait } else { idle }, "{url}");
        let err = client.first_byte_timed_out().to_string();
        let expected = if local { "did not start answering within 300 s" } else { "did not answer within 60 s" };
        assert!(err.contains(expected), "{url}: {err}");
    }
}
