//! The checks behind `opsai doctor`, one step of the way to the model each: where the endpoint is
//! and whether a proxy is in the way, name resolution, the TCP connection, then (through the real
//! client) one streamed chat and one tool call, timed. Never prints; each step returns what it
//! found or why it failed.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::{ChatModel, ChatRequest, LlmError, ModelDelta, transport};
use crate::protocol::{ChatMessage, ToolCall, ToolSpec};

/// The tool the tool-call check offers.
pub(crate) const TOOL_NAME: &str = "report_status";

/// How long a name lookup may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// Where requests for a base URL go first: the endpoint itself, or the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// `https` or `http`.
    pub scheme: String,
    /// The endpoint's host, without brackets.
    pub host: String,
    pub port: u16,
    /// The endpoint is on this machine (never proxied).
    pub loopback: bool,
    /// The proxy from the environment, password hidden.
    pub proxy: Option<String>,
    /// Where the TCP connection goes: the proxy's host and port, or the endpoint's.
    pub first_hop: (String, u16),
}

impl Route {
    /// The route to `base_url` with the proxy variables `env` gives (`HTTPS_PROXY`, `NO_PROXY`, …).
    pub fn new(base_url: &str, env: impl Fn(&str) -> Option<String>) -> Result<Route, LlmError> {
        let invalid = |reason: String| LlmError::InvalidUrl { url: base_url.to_owned(), reason };
        let url = reqwest::Url::parse(base_url).map_err(|err| invalid(err.to_string()))?;
        let host = url.host_str().ok_or_else(|| invalid("it names no host".to_owned()))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let port = url.port_or_known_default().ok_or_else(|| invalid("it has no port".to_owned()))?;
        let loopback = transport::is_loopback(&url);
        let proxy = transport::proxy_for(&url, loopback, env);
        let proxy_url = proxy.as_deref().and_then(|proxy| reqwest::Url::parse(proxy).ok());
        let first_hop = match &proxy_url {
            Some(proxy) => {
                let proxy_host = proxy.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
                (proxy_host.to_owned(), proxy.port_or_known_default().unwrap_or(1080))
            }
            None => (host.clone(), port),
        };
        Ok(Route { scheme: url.scheme().to_owned(), host, port, loopback, proxy, first_hop })
    }
}

/// The addresses `host` resolves to (an IP address is its own answer, no lookup).
pub async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    match tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port))).await {
        Err(_) => Err(format!("no answer within {} s", LOOKUP_TIMEOUT.as_secs())),
        Ok(Err(err)) => Err(err.to_string()),
        Ok(Ok(addrs)) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            if addrs.is_empty() { Err("no address".to_owned()) } else { Ok(addrs) }
        }
    }
}

/// The first of `addrs` that accepts a TCP connection, and how long that took; else the last error.
pub async fn connect(addrs: &[SocketAddr]) -> Result<(SocketAddr, Duration), String> {
    let mut last = "no address to connect to".to_owned();
    for addr in addrs {
        let started = Instant::now();
        match tokio::time::timeout(transport::CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return Ok((*addr, started.elapsed())),
            Ok(Err(err)) => last = err.to_string(),
            Err(_) => last = format!("no answer within {} s", transport::CONNECT_TIMEOUT.as_secs()),
        }
        if addrs.len() > 1 {
            last = format!("{addr}: {last}");
        }
    }
    Err(last)
}

/// What one streamed chat showed.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatCheck {
    pub text: String,
    /// From sending the request to the first piece of text (or thought).
    pub first_token: Option<Duration>,
    /// From sending the request to the end of the stream.
    pub total: Duration,
    /// Completion tokens: as the endpoint reported them, else the streamed pieces counted.
    pub tokens: u64,
    /// Whether `tokens` came from the endpoint's usage report.
    pub reported: bool,
}

impl ChatCheck {
    /// Tokens per second while streaming (after the first token), when there is something to measure.
    pub(crate) fn tokens_per_second(&self) -> Option<f64> {
        let first = self.first_token?;
        let streaming = self.total.saturating_sub(first);
        let (tokens, seconds) = if self.tokens > 1 && streaming >= Duration::from_millis(1) {
            (self.tokens - 1, streaming.as_secs_f64())
        } else {
            (self.tokens, self.total.as_secs_f64())
        };
        (tokens > 0 && seconds > 0.0).then(|| tokens as f64 / seconds)
    }
}

/// One short streamed chat with `model`.
pub async fn chat(client: &dyn ChatModel, model: &str) -> Result<ChatCheck, LlmError> {
    let request = ChatRequest {
        model: model.to_owned(),
        messages: vec![ChatMessage::user("Reply with one short sentence saying that you are ready.")],
        tools: Vec::new(),
        max_tokens: Some(64),
    };
    let started = Instant::now();
    let mut first_token = None;
    let mut pieces = 0u64;
    let mut on_delta = |delta: ModelDelta| {
        if let ModelDelta::Content(text) | ModelDelta::Reasoning(text) = delta
            && !text.is_empty()
        {
            first_token.get_or_insert_with(|| started.elapsed());
            pieces += 1;
        }
    };
    let reply = client.complete(&request, &mut on_delta).await?;
    let total = started.elapsed();
    let usage = reply.usage.filter(|usage| usage.completion_tokens > 0);
    Ok(ChatCheck {
        text: reply.content.trim().to_owned(),
        first_token,
        total,
        tokens: usage.map_or(pieces, |usage| usage.completion_tokens),
        reported: usage.is_some(),
    })
}

/// What one request offering a tool showed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCheck {
    /// The call to [`TOOL_NAME`], if the model made one.
    pub call: Option<ToolCall>,
    /// The call was written as text (recovered by opsai) rather than sent structured.
    pub text_form: bool,
    /// What the model wrote instead, when it made no call.
    pub text: String,
    /// The names of the tools it called instead of [`TOOL_NAME`] (a model that invents tools).
    pub other_calls: Vec<String>,
}

/// Offers one tool and asks the model to call it.
pub async fn tool_call(client: &dyn ChatModel, model: &str) -> Result<ToolCheck, LlmError> {
    let tool = ToolSpec {
        name: TOOL_NAME.to_owned(),
        description: "Report a status to the user.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"status": {"type": "string", "description": "The status, one word."}},
            "required": ["status"],
        }),
    };
    let request = ChatRequest {
        model: model.to_owned(),
        messages: vec![ChatMessage::user(format!(
            "Call the {TOOL_NAME} tool with status \"ok\". Do not answer in text."
        ))],
        tools: vec![tool],
        max_tokens: Some(256),
    };
    let mut streamed = String::new();
    let mut on_delta = |delta: ModelDelta| {
        if let ModelDelta::Content(text) = delta {
            streamed.push_str(&text);
        }
    };
    let reply = client.complete(&request, &mut on_delta).await?;
    let (mut ours, others): (Vec<ToolCall>, Vec<ToolCall>) =
        reply.tool_calls.into_iter().partition(|call| call.name == TOOL_NAME);
    let call = if ours.is_empty() { None } else { Some(ours.swap_remove(0)) };
    // A structured call streams no text naming the tool; a recovered one was written out.
    let text_form = call.is_some() && streamed.contains(TOOL_NAME);
    let other_calls = others.into_iter().map(|call| call.name).collect();
    Ok(ToolCheck { call, text_form, text: reply.content.trim().to_owned(), other_calls })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn the_route_goes_through_the_proxy_unless_local_or_exempt() {
        let vars = env(&[("HTTPS_PROXY", "http://user:secret@proxy.lan:3128"), ("NO_PROXY", "internal.lan")]);
        let route = Route::new("https://api.example.com/v1", &vars).unwrap();
        assert_eq!(route.proxy.as_deref(), Some("http://***@proxy.lan:3128"));
        assert_eq!(route.first_hop, ("proxy.lan".to_owned(), 3128));
        assert_eq!((route.host.as_str(), route.port), ("api.example.com", 443));
        let exempt = Route::new("https://gpu.internal.lan:8443/v1", &vars).unwrap();
        assert_eq!((exempt.proxy, exempt.first_hop), (None, ("gpu.internal.lan".to_owned(), 8443)));
        let local = Route::new("http://[::1]:11434/v1", &vars).unwrap();
        assert!(local.loopback && local.proxy.is_none());
        assert_eq!(local.first_hop, ("::1".to_owned(), 11434));
    }

    #[test]
    fn tokens_per_second_counts_the_streaming_part() {
        let check = |first: u64, total: u64, tokens: u64| ChatCheck {
            text: String::new(),
            first_token: Some(Duration::from_millis(first)),
            total: Duration::from_millis(total),
            tokens,
            reported: true,
        };
        assert_eq!(check(500, 1500, 21).tokens_per_second(), Some(20.0));
        assert_eq!(check(500, 500, 1).tokens_per_second(), Some(2.0), "one token: over the whole request");
        assert_eq!(check(500, 1500, 0).tokens_per_second(), None);
    }

    #[tokio::test]
    async fn an_address_needs_no_lookup_and_a_closed_port_is_reported() {
        let addrs = resolve("127.0.0.1", 9).await.unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:9".parse().unwrap()]);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap();
        assert_eq!(connect(&[open]).await.unwrap().0, open);
        drop(listener);
        let refused = connect(&[open]).await.unwrap_err();
        assert!(refused.contains("refused"), "{refused}");
    }
}
