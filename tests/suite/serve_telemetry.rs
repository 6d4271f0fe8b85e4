//! `opsai serve`'s OpenTelemetry against a local OTLP/HTTP receiver (a real HTTP server on
//! 127.0.0.1 taking what the SDK's exporters send): a turn's span and its tool call's, the turn,
//! command and HTTP metrics, and no message, command or secret text anywhere in what is sent.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::Uri;
use axum::routing::post;
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

type Received = Arc<Mutex<Vec<(String, Value)>>>;

/// An OTLP/HTTP JSON receiver on a free port: every body posted to `/v1/traces` or `/v1/metrics`.
async fn receiver() -> (String, Received) {
    let received = Received::default();
    async fn take(State(received): State<Received>, uri: Uri, body: Bytes) -> &'static str {
        let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        received.lock().unwrap().push((uri.path().to_owned(), value));
        "{}"
    }
    let app =
        Router::new().route("/v1/traces", post(take)).route("/v1/metrics", post(take)).with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

/// Every span name with its attributes (`key=value`) in what was received.
fn spans(received: &[(String, Value)]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (_, body) in received.iter().filter(|(path, _)| path == "/v1/traces") {
        for resource in body["resourceSpans"].as_array().into_iter().flatten() {
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let attributes = span["attributes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|kv| {
                            let value =
                                kv["value"].as_object().and_then(|v| v.values().next()).cloned().unwrap_or_default();
                            format!(
                                "{}={}",
                                kv["key"].as_str().unwrap_or_default(),
                                value.as_str().map_or(value.to_string(), str::to_owned)
                            )
                        })
                        .collect();
                    out.push((span["name"].as_str().unwrap_or_default().to_owned(), attributes));
                }
            }
        }
    }
    out
}

/// The names of every metric received.
fn metric_names(received: &[(String, Value)]) -> Vec<String> {
    let mut names = Vec::new();
    for (_, body) in received.iter().filter(|(path, _)| path == "/v1/metrics") {
        for resource in body["resourceMetrics"].as_array().into_iter().flatten() {
            for scope in resource["scopeMetrics"].as_array().into_iter().flatten() {
                for metric in scope["metrics"].as_array().into_iter().flatten() {
                    names.push(metric["name"].as_str().unwrap_or_default().to_owned());
                }
            }
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_is_traced_and_measured_over_otlp_with_no_text_in_it() {
    let (endpoint, received) = receiver().await;
    let env = TestEnv::new();
    let secret = "hunter2-Sup3rSecret-value";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo telemetry-probe-output", "why": "look"})),
        reply_text("All quiet."),
    ]);
    let server = Server::builder(&env)
        .mock(&mock)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "opsai-test")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .start();
    let api = server.api();
    let id = api.new_conversation().await;
    let events = api.chat(id, &format!("is the disk fine? my password is {secret}")).await.collect().await;
    assert_eq!(events.last().unwrap()["outcome"], "answer");
    // SIGTERM: the server sends what it holds before it exits.
    server.stop();

    let received = received.lock().unwrap().clone();
    let spans = spans(&received);
    let turn = spans.iter().find(|(name, _)| name == "opsai.turn").unwrap_or_else(|| panic!("no turn span: {spans:?}"));
    for wanted in ["opsai.outcome=answer", "opsai.role=operator", &format!("opsai.conversation.id={id}")] {
        assert!(turn.1.iter().any(|a| a == wanted), "{wanted} in {:?}", turn.1);
    }
    let tool = spans.iter().find(|(name, _)| name == "opsai.tool").unwrap_or_else(|| panic!("no tool span: {spans:?}"));
    for wanted in
        ["opsai.tool=run_command", "opsai.risk=safe", "opsai.decision=auto", "opsai.status=ran", "opsai.exit_code=0"]
    {
        assert!(tool.1.iter().any(|a| a == wanted), "{wanted} in {:?}", tool.1);
    }
    let names = metric_names(&received);
    for wanted in
        ["opsai.turns", "opsai.turn.duration", "opsai.model.latency", "opsai.commands", "http.server.request.duration"]
    {
        assert!(names.iter().any(|n| n == wanted), "{wanted} in {names:?}");
    }
    let everything = serde_json::to_string(&received).unwrap();
    assert!(everything.contains("opsai-test"), "the service name comes from OTEL_SERVICE_NAME");
    assert!(everything.contains("/api/v2/ai/conversations/{id}/messages") || everything.contains("/api/v2/ai/chat"));
    for text in [secret, "is the disk fine", "telemetry-probe-output", "All quiet", "owner"] {
        assert!(!everything.contains(text), "{text:?} was sent to the telemetry receiver");
    }
}
