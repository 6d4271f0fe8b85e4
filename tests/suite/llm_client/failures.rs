//! Retries, timeouts, broken connections and the user-facing errors.

use std::time::Instant;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::support::mock_llm::*;

#[tokio::test]
async fn rate_limited_then_success_honours_retry_after() {
    let mock = MockLlm::start([reply_rate_limited(Some(1)), reply_text("ok")]);
    let client = OpenAiClient::new(mock.base_url(), None, Duration::from_secs(5))
        .unwrap()
        .with_retry(RetryPolicy { retry_after_cap: Duration::from_secs(2), ..fast_retry() });
    let started = Instant::now();
    let reply = complete(&client, &request()).await.0.unwrap();
    assert_eq!(reply.content, "ok");
    assert!(started.elapsed() >= Duration::from_millis(950), "waited only {:?}", started.elapsed());
    assert_eq!(mock.chat_requests().len(), 2);
}

#[tokio::test]
async fn retry_after_is_capped() {
    let mock = MockLlm::start([reply_rate_limited(Some(3600)), reply_text("ok")]);
    let started = Instant::now();
    complete(&client(&mock), &request()).await.0.unwrap();
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(280) && waited < Duration::from_secs(3), "waited {waited:?}");
}

#[tokio::test]
async fn rate_limited_three_times_gives_up() {
    let mock = MockLlm::start([
        reply_rate_limited(None),
        reply_rate_limited(None),
        reply_rate_limited(None),
        reply_text("late"),
    ]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::RateLimited { attempts: 3 }), "{err:?}");
    assert_eq!(mock.chat_requests().len(), 3);
    assert_eq!(mock.unused_replies(), 1);
}

#[tokio::test]
async fn three_500s_end_in_a_clean_error() {
    let mock = MockLlm::start([reply_server_error(), reply_server_error(), reply_server_error()]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 500, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the model endpoint failed with HTTP 500: The server had an error while processing your request."
    );
    assert_eq!(mock.chat_requests().len(), 3);
}

#[tokio::test]
async fn gateway_errors_then_success() {
    let mock = MockLlm::start([reply_status(502, "Bad Gateway"), reply_status(503, "busy"), reply_text("ok")]);
    assert_eq!(complete(&client(&mock), &request()).await.0.unwrap().content, "ok");
}

#[tokio::test]
async fn a_connection_dropped_before_any_delta_is_retried() {
    let mock = MockLlm::start([reply_broken_before_data(), reply_text("second try")]);
    let reply = complete(&client(&mock), &request()).await.0.unwrap();
    assert_eq!(reply.content, "second try");
    assert_eq!(mock.chat_requests().len(), 2);
}

#[tokio::test]
async fn no_retry_once_a_delta_was_shown() {
    let mock = MockLlm::start([reply_broken_mid_stream("The largest file is "), reply_text("never sent")]);
    let (result, deltas) = complete(&client(&mock), &request()).await;
    let err = result.unwrap_err();
    assert!(matches!(&err, LlmError::Protocol(text) if text.contains("mid-reply")), "{err:?}");
    assert_eq!(deltas, [ModelDelta::Content("The largest file is ".into())]);
    assert_eq!(mock.chat_requests().len(), 1);
    assert_eq!(mock.unused_replies(), 1);
}

#[tokio::test]
async fn a_hang_before_the_first_byte_times_out() {
    let mock = MockLlm::start([reply_hang_before_head(), reply_text("not retried")]);
    let client = client_with_timeout(&mock, Duration::from_millis(300));
    let started = Instant::now();
    let err = complete(&client, &request()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::Timeout { seconds: 1 }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!(mock.chat_requests().len(), 1);
    assert_eq!(err.to_string(), "the model did not answer within 1 s");
}

#[tokio::test]
async fn a_hang_mid_stream_times_out_after_the_idle_gap() {
    let mock = MockLlm::start([reply_hang_mid_stream("Looking at /var/log")]);
    let client = client_with_timeout(&mock, Duration::from_millis(300));
    let started = Instant::now();
    let (result, deltas) = complete(&client, &request()).await;
    assert!(matches!(result, Err(LlmError::Timeout { .. })), "{result:?}");
    assert_eq!(content_of(&deltas), "Looking at /var/log");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(mock.chat_requests().len(), 1);
}

#[tokio::test]
async fn keep_alives_reset_the_idle_timeout_and_the_whole_stream_may_take_longer() {
    let payloads = [chunk(json!({"role": "assistant", "content": "slow but steady"}), None), "[DONE]".to_owned()];
    let mut writes = Vec::new();
    for event in frame(&payloads, Framing::default()) {
        writes.push(b": keep-alive\n\n".to_vec());
        writes.push(event);
    }
    // 200 ms after every write: 400 ms between events, 800 ms in all, idle timeout 300 ms.
    let mock = MockLlm::start([reply_sse_writes(writes).with_pauses(Duration::from_millis(200))]);
    let client = client_with_timeout(&mock, Duration::from_millis(300));
    let started = Instant::now();
    let reply = complete(&client, &request()).await.0.unwrap();
    assert_eq!(reply.content, "slow but steady");
    assert!(started.elapsed() > Duration::from_millis(300));
}

#[tokio::test]
async fn connection_refused_names_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let client = OpenAiClient::new(url.clone(), None, Duration::from_secs(5)).unwrap().with_retry(fast_retry());
    let started = Instant::now();
    let err = complete(&client, &request()).await.0.unwrap_err();
    assert!(matches!(&err, LlmError::Connect { url: u, model: Some(m) } if *u == url && m == "qwen2.5:7b"), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&url) && message.contains("qwen2.5:7b"), "{message}");
    assert!(!message.to_lowercase().contains("ollama"), "not Ollama's default endpoint: {message}");
    assert!(started.elapsed() < Duration::from_secs(2), "refused connections are not retried");
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    for (reply, status) in [(reply_unauthorized(), 401), (reply_status(403, "forbidden"), 403)] {
        let mock = MockLlm::start([reply]);
        let err = complete(&client(&mock), &request()).await.0.unwrap_err();
        assert!(matches!(err, LlmError::Unauthorized { status: s } if s == status), "{err:?}");
        assert!(err.to_string().contains("OPSAI_API_KEY"));
        assert_eq!(mock.requests().len(), 1);
    }
}

#[tokio::test]
async fn an_unknown_model_is_named() {
    let mock = MockLlm::start([reply_model_not_found("qwen2.5:7b")]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(matches!(&err, LlmError::UnknownModel { model, .. } if model == "qwen2.5:7b"), "{err:?}");
    assert!(err.to_string().starts_with("the endpoint does not know the model `qwen2.5:7b`"), "{err}");
}

#[tokio::test]
async fn a_wrong_base_url_is_not_found() {
    let mock = MockLlm::start([reply_status(404, "404 page not found")]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(matches!(&err, LlmError::NotFound { url } if *url == mock.base_url()), "{err:?}");
}

#[tokio::test]
async fn context_too_long_is_reported_for_the_agent_to_trim() {
    let mock = MockLlm::start([reply_context_too_long()]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong), "{err:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream() {
    let payloads = [
        chunk(json!({"role": "assistant", "content": "Partial"}), None),
        json!({"error": {"message": "llama runner process has terminated"}}).to_string(),
    ];
    let mock = MockLlm::start([reply_sse_events(&payloads), reply_text("never")]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(err.to_string().contains("llama runner process has terminated"), "{err}");
    assert_eq!(mock.chat_requests().len(), 1);
}

#[tokio::test]
async fn an_endpoint_rejecting_stream_options_gets_the_request_without_them() {
    let rejected = reply_json(400, json!({"error": {"message": "json: unknown field \"stream_options\""}}));
    let mock = MockLlm::start([rejected, reply_text("first"), reply_text("second")]);
    let client = client(&mock);
    assert_eq!(complete(&client, &request()).await.0.unwrap().content, "first");
    assert_eq!(complete(&client, &request()).await.0.unwrap().content, "second");
    let sent = mock.chat_requests();
    assert!(sent[0].json().get("stream_options").is_some());
    assert!(sent[1].json().get("stream_options").is_none() && sent[2].json().get("stream_options").is_none());
}

#[tokio::test]
async fn a_model_without_tool_support_gets_no_tools_and_text_calls_still_work() {
    let text = "<tool_call>{\"name\": \"run_command\", \"arguments\": {\"command\": \"uptime\"}}</tool_call>";
    let mock = MockLlm::start([reply_tools_unsupported("gemma:2b"), reply_text(text)]);
    let reply = complete(&client(&mock), &request()).await.0.unwrap();
    assert_eq!(reply.tool_calls[0].arguments, json!({"command": "uptime"}));
    let sent = mock.chat_requests();
    assert_eq!(sent[0].tool_names().len(), 2);
    assert!(sent[1].tool_names().is_empty());
}

#[tokio::test]
async fn list_models_unauthorized() {
    let mock = MockLlm::start([reply_unauthorized()]);
    let err = client(&mock).list_models().await.unwrap_err();
    assert!(matches!(err, LlmError::Unauthorized { status: 401 }), "{err:?}");
}

#[tokio::test]
async fn an_exhausted_script_fails_loudly() {
    let mock = MockLlm::start([]);
    let err = complete(&client(&mock), &request()).await.0.unwrap_err();
    assert!(err.to_string().contains("mock LLM script exhausted"), "{err}");
}
