//! OpenTelemetry for `opsai serve` (issue 25, docs/serve.md "Telemetry"): traces and metrics over
//! OTLP/HTTP, off unless the standard `OTEL_EXPORTER_OTLP_*ENDPOINT` variables name a receiver
//! (`OTEL_SDK_DISABLED=true` or `OTEL_*_EXPORTER=none` turn a signal off; protocol, headers,
//! intervals and resource come from the standard variables through the SDK).
//!
//! What is recorded is counts, durations, enums and ids, never text: no message, command, output,
//! user name or tool argument is an attribute, so nothing secret can leave this way.
//!
//! - a span per turn (`opsai.turn`) with a child per tool call (`opsai.tool`);
//! - `opsai.turns` and `opsai.turn.duration` by outcome, `opsai.model.latency` (time to the model's
//!   first event of each reply), `opsai.tokens` by kind, `opsai.commands` by risk and decision,
//!   `opsai.approval.wait` by decision, and `http.server.request.duration` by method, route and status.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::trace::{Span as _, TraceContextExt as _, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracerProvider, Span, Tracer};

use super::state::AppState;
use crate::protocol::{AgentEvent, ApprovalDecision, ObservationStatus, Risk};

/// Every request's duration by method, matched route and status (the outermost layer, so refusals
/// count too).
pub async fn measure(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    if !state.telemetry.is_on() {
        return next.run(request).await;
    }
    // A method is any token a client sends: only the standard ones are labels.
    let method: &'static str = match request.method().as_str() {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "OPTIONS" => "OPTIONS",
        _ => "_OTHER",
    };
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str).to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    state.telemetry.http(method, &route, response.status().as_u16(), started.elapsed());
    response
}

/// The instruments, when telemetry is on.
struct Instruments {
    turns: Counter<u64>,
    turn_duration: Histogram<f64>,
    model_latency: Histogram<f64>,
    tokens: Counter<u64>,
    commands: Counter<u64>,
    approval_wait: Histogram<f64>,
    http: Histogram<f64>,
}

pub struct Telemetry {
    tracer: Option<(SdkTracerProvider, Tracer)>,
    meters: Option<(SdkMeterProvider, Instruments)>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
}

/// Whether `signal` (`TRACES`, `METRICS`) has somewhere to go and is not turned off.
fn wanted(signal: &str) -> bool {
    let endpoint = var("OTEL_EXPORTER_OTLP_ENDPOINT").or_else(|| var(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")));
    let exporter = var(&format!("OTEL_{signal}_EXPORTER")).unwrap_or_else(|| "otlp".to_owned());
    endpoint.is_some() && exporter.eq_ignore_ascii_case("otlp")
}

fn resource() -> opentelemetry_sdk::Resource {
    let builder = opentelemetry_sdk::Resource::builder();
    match var("OTEL_SERVICE_NAME") {
        Some(_) => builder.build(),
        None => builder.with_service_name("opsai").build(),
    }
}

impl Telemetry {
    /// Off: nothing recorded, nothing sent.
    pub fn off() -> Self {
        Self { tracer: None, meters: None }
    }

    /// From the standard variables. Built outside any async runtime: the exporters' blocking
    /// HTTP client must not be made (or dropped) on one. A signal that cannot be set up is
    /// `log`ged and left off; the server runs either way.
    pub fn from_env(log: impl Fn(&str)) -> Self {
        if var("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true")) {
            return Self::off();
        }
        let tracer = wanted("TRACES")
            .then(|| match opentelemetry_otlp::SpanExporter::builder().with_http().build() {
                Ok(exporter) => {
                    let provider =
                        SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource()).build();
                    let tracer = provider.tracer("opsai");
                    Some((provider, tracer))
                }
                Err(err) => {
                    log(&format!(
                        "telemetry: traces are off: {err} (check OTEL_EXPORTER_OTLP_* ; grpc is not supported)"
                    ));
                    None
                }
            })
            .flatten();
        let meters = wanted("METRICS")
            .then(|| match opentelemetry_otlp::MetricExporter::builder().with_http().build() {
                Ok(exporter) => {
                    let provider =
                        SdkMeterProvider::builder().with_periodic_exporter(exporter).with_resource(resource()).build();
                    let instruments = Instruments::new(&provider);
                    Some((provider, instruments))
                }
                Err(err) => {
                    log(&format!(
                        "telemetry: metrics are off: {err} (check OTEL_EXPORTER_OTLP_* ; grpc is not supported)"
                    ));
                    None
                }
            })
            .flatten();
        Self { tracer, meters }
    }

    pub fn is_on(&self) -> bool {
        self.tracer.is_some() || self.meters.is_some()
    }

    /// Sends what is buffered and stops; blocks up to a few seconds (call it off the runtime's threads).
    pub fn shutdown(&self) {
        if let Some((provider, _)) = &self.tracer {
            let _ = provider.shutdown_with_timeout(Duration::from_secs(5));
        }
        if let Some((provider, _)) = &self.meters {
            let _ = provider.shutdown();
        }
    }

    /// One HTTP request: its method, matched route (never the raw path: ids are not labels), status.
    pub fn http(&self, method: &str, route: &str, status: u16, took: Duration) {
        if let Some((_, instruments)) = &self.meters {
            let attributes = [
                KeyValue::new("http.request.method", method.to_owned()),
                KeyValue::new("http.route", route.to_owned()),
                KeyValue::new("http.response.status_code", i64::from(status)),
            ];
            instruments.http.record(took.as_secs_f64(), &attributes);
        }
    }

    /// How long an approval waited for its answer, and how it ended.
    pub fn approval_wait(&self, took: Duration, decision: &'static str) {
        if let Some((_, instruments)) = &self.meters {
            instruments.approval_wait.record(took.as_secs_f64(), &[KeyValue::new("opsai.decision", decision)]);
        }
    }

    /// The trace and measures of one turn, fed its events.
    pub fn turn(&self, conversation: i64, role: &'static str, known: Vec<&'static str>) -> TurnTelemetry<'_> {
        let context = self.tracer.as_ref().map(|(_, tracer)| {
            let mut span = tracer.start("opsai.turn");
            span.set_attribute(KeyValue::new("opsai.conversation.id", conversation));
            span.set_attribute(KeyValue::new("opsai.role", role));
            Context::new().with_span(span)
        });
        TurnTelemetry {
            telemetry: self,
            known,
            context,
            started: Instant::now(),
            model_asked: Some(Instant::now()),
            tools: HashMap::new(),
        }
    }
}

impl Instruments {
    fn new(provider: &SdkMeterProvider) -> Self {
        let meter = provider.meter("opsai");
        let seconds = |name: &'static str, description: &'static str| {
            meter.f64_histogram(name).with_unit("s").with_description(description).build()
        };
        Self {
            turns: meter.u64_counter("opsai.turns").with_description("Turns ended, by outcome").build(),
            turn_duration: seconds("opsai.turn.duration", "A turn from the question to its end"),
            model_latency: seconds("opsai.model.latency", "From a request to the model to its first event"),
            tokens: meter.u64_counter("opsai.tokens").with_description("Tokens the model reported").build(),
            commands: meter.u64_counter("opsai.commands").with_description("Tool calls, by risk and decision").build(),
            approval_wait: seconds("opsai.approval.wait", "How long an approval waited for its answer"),
            http: seconds("http.server.request.duration", "HTTP requests, until the response's head"),
        }
    }
}

/// A tool call being followed: its span and its risk.
struct Call {
    span: Option<Span>,
    risk: Option<Risk>,
}

/// One turn's telemetry; [`TurnTelemetry::end`] closes it.
pub struct TurnTelemetry<'a> {
    telemetry: &'a Telemetry,
    /// The tools this turn offers: only their names become attributes.
    known: Vec<&'static str>,
    context: Option<Context>,
    started: Instant,
    /// When the model was last asked and has not answered yet.
    model_asked: Option<Instant>,
    tools: HashMap<String, Call>,
}

/// A tool name as an attribute: one of the turn's tools, or `other` (a name the model made up is
/// text it chose, and is not repeated).
fn tool_label(known: &[&'static str], tool: &str) -> &'static str {
    known.iter().find(|name| **name == tool).copied().unwrap_or("other")
}

fn decision_label(decision: ApprovalDecision) -> &'static str {
    match decision {
        ApprovalDecision::Auto => "auto",
        ApprovalDecision::Approved => "approved",
        ApprovalDecision::ApprovedForSession => "approved_for_session",
        ApprovalDecision::Denied => "denied",
        ApprovalDecision::Refused => "refused",
        ApprovalDecision::DryRun => "dry_run",
        ApprovalDecision::Abort => "abort",
    }
}

impl TurnTelemetry<'_> {
    pub fn event(&mut self, event: &AgentEvent) {
        let instruments = self.telemetry.meters.as_ref().map(|(_, instruments)| instruments);
        match event {
            AgentEvent::Thought { .. } | AgentEvent::AnswerDelta { .. } | AgentEvent::Answer { .. } => {
                self.model_answered()
            }
            AgentEvent::ToolCall { id, tool, risk, .. } => {
                self.model_answered();
                let span = self.context.as_ref().zip(self.telemetry.tracer.as_ref()).map(|(context, (_, tracer))| {
                    let mut span = tracer.start_with_context("opsai.tool", context);
                    span.set_attribute(KeyValue::new("opsai.tool", tool_label(&self.known, tool)));
                    if let Some(risk) = risk {
                        span.set_attribute(KeyValue::new("opsai.risk", risk.as_str()));
                    }
                    span
                });
                self.tools.insert(id.clone(), Call { span, risk: *risk });
            }
            AgentEvent::Approval { id, decision, .. } => {
                let call = self.tools.get_mut(id);
                let risk = call.as_ref().and_then(|call| call.risk).map_or("none", Risk::as_str);
                if let Some(span) = call.and_then(|call| call.span.as_mut()) {
                    span.set_attribute(KeyValue::new("opsai.decision", decision_label(*decision)));
                }
                if let Some(instruments) = instruments {
                    let attributes =
                        [KeyValue::new("opsai.risk", risk), KeyValue::new("opsai.decision", decision_label(*decision))];
                    instruments.commands.add(1, &attributes);
                }
            }
            AgentEvent::ToolResult { id, status, exit_code, .. } => {
                if let Some(mut span) = self.tools.remove(id).and_then(|call| call.span) {
                    span.set_attribute(KeyValue::new("opsai.status", status_label(*status)));
                    if let Some(code) = exit_code {
                        span.set_attribute(KeyValue::new("opsai.exit_code", i64::from(*code)));
                    }
                    span.end();
                }
                // The model is asked again once the results are in.
                self.model_asked = Some(Instant::now());
            }
            AgentEvent::Done { iterations, usage } => {
                if let Some(context) = &self.context {
                    context.span().set_attribute(KeyValue::new("opsai.iterations", i64::from(*iterations)));
                    if let Some(usage) = usage {
                        let span = context.span();
                        span.set_attribute(KeyValue::new("gen_ai.usage.input_tokens", saturating(usage.prompt_tokens)));
                        span.set_attribute(KeyValue::new(
                            "gen_ai.usage.output_tokens",
                            saturating(usage.completion_tokens),
                        ));
                    }
                }
                if let (Some(instruments), Some(usage)) = (instruments, usage) {
                    instruments.tokens.add(usage.prompt_tokens, &[KeyValue::new("opsai.token.kind", "input")]);
                    instruments.tokens.add(usage.completion_tokens, &[KeyValue::new("opsai.token.kind", "output")]);
                }
            }
            _ => {}
        }
    }

    fn model_answered(&mut self) {
        if let (Some(asked), Some((_, instruments))) = (self.model_asked.take(), &self.telemetry.meters) {
            instruments.model_latency.record(asked.elapsed().as_secs_f64(), &[]);
        }
    }

    /// Ends the turn's span and counts it by `outcome` (`answer`, `stopped`, `error`, …).
    pub fn end(mut self, outcome: &'static str) {
        for (_, call) in self.tools.drain() {
            if let Some(mut span) = call.span {
                span.set_attribute(KeyValue::new("opsai.status", "unfinished"));
                span.end();
            }
        }
        if let Some(context) = &self.context {
            let span = context.span();
            span.set_attribute(KeyValue::new("opsai.outcome", outcome));
            span.end();
        }
        if let Some((_, instruments)) = &self.telemetry.meters {
            let attributes = [KeyValue::new("opsai.outcome", outcome)];
            instruments.turns.add(1, &attributes);
            instruments.turn_duration.record(self.started.elapsed().as_secs_f64(), &attributes);
        }
    }
}

fn status_label(status: ObservationStatus) -> &'static str {
    match status {
        ObservationStatus::Ran => "ran",
        ObservationStatus::DeniedByPolicy => "denied_by_policy",
        ObservationStatus::DeniedByUser => "denied_by_user",
        ObservationStatus::InvalidArguments => "invalid_arguments",
        ObservationStatus::TimedOut => "timed_out",
        ObservationStatus::Interrupted => "interrupted",
    }
}

fn saturating(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_turns_tool_names_become_attributes() {
        let known = ["run_command", "kube"];
        assert_eq!(tool_label(&known, "run_command"), "run_command");
        assert_eq!(tool_label(&known, "kube"), "kube");
        for hostile in ["", "Run", "rm -rf /", "token=abc123", "secret_value_here", "naïve"] {
            assert_eq!(tool_label(&known, hostile), "other", "{hostile:?}");
        }
    }

    #[test]
    fn off_records_nothing_and_a_turn_still_ends() {
        let telemetry = Telemetry::off();
        assert!(!telemetry.is_on());
        let mut turn = telemetry.turn(1, "operator", vec!["run_command"]);
        turn.event(&AgentEvent::Answer { text: "hi".into() });
        turn.end("answer");
        telemetry.http("GET", "/", 200, Duration::from_millis(1));
        telemetry.shutdown();
    }
}
