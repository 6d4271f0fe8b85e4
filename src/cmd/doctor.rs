//! `opsai doctor`: the way to the model checked one step at a time — proxy, DNS, TCP, TLS, HTTP,
//! the model list, one streamed chat, one tool call, speed — each printed as it finishes, with
//! what to fix when it fails. The HTTP steps use the client every mode uses (`runner::model_client`,
//! so `llm.ca_file` and the timeouts apply), without retries. Exit 0 when nothing failed, 1 else.

mod report;
mod verdict;

use std::time::Duration;

use crate::cli::DoctorArgs;
use crate::config::LlmConfig;
use crate::home::Paths;
use crate::llm::probe::{self, ChatCheck, Route, ToolCheck};
use crate::llm::transport::{OLLAMA_DEFAULT_URL, tls_advice};
use crate::llm::{ChatModel, LlmError, OpenAiClient, RetryPolicy};
use crate::runner::{self, LlmOverrides};
use report::{Outcome, Report};

/// The steps after the connection, skipped together when it fails.
const AFTER_CONNECT: &[&str] = &["TLS", "HTTP", "models", "chat", "tool call", "speed"];

pub fn run(paths: &Paths, args: &DoctorArgs) -> anyhow::Result<u8> {
    let overrides = LlmOverrides { model: args.model.clone(), base_url: args.base_url.clone() };
    let config = runner::load_config_readonly(paths, &overrides)?;
    let mut report = Report::new(std::io::stdout(), crate::term::stdout_color());
    let key = if config.llm.api_key.is_some() { "an API key" } else { "no API key" };
    let shown_url = crate::llm::transport::mask_credentials(&config.llm.base_url);
    report.line(&format!(
        "Checking {} for model {} ({key}).",
        crate::ui::display::line(&shown_url),
        crate::ui::display::line(&config.llm.model)
    ))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let finished = runtime.block_on(async {
        tokio::select! {
            result = check(&config.llm, &mut report) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    match finished {
        None => Ok(130),
        Some(result) => {
            result?;
            report.summary()?;
            let verdict = runtime.block_on(verdict::verdict(&config, report.first_failure()));
            report.line(&verdict)?;
            Ok(u8::from(report.failed() > 0))
        }
    }
}

async fn check(llm: &LlmConfig, report: &mut Report) -> std::io::Result<()> {
    let route = match Route::new(&llm.base_url, |name| std::env::var(name).ok()) {
        Ok(route) => route,
        Err(err) => {
            report.step(Outcome::Fail, "URL", &err.to_string(), None)?;
            return report.skip(&["proxy", "DNS", "TCP"].iter().chain(AFTER_CONNECT).copied().collect::<Vec<_>>());
        }
    };
    if !route_steps(llm, &route, report).await? {
        return Ok(());
    }
    let Some(client) = client_step(llm, &route, report)? else { return Ok(()) };

    let listed = client.list_models().await;
    let https = route.scheme == "https";
    match (&listed, https) {
        (Err(LlmError::Tls { detail, .. }), _) => {
            let fix = format!(
                "{}; for a private CA set llm.ca_file to its PEM file (or SSL_CERT_FILE to a bundle that holds it)",
                tls_advice(detail)
            );
            let detail = format!("the handshake with {} failed: {detail} ({})", route.host, roots(llm));
            report.step(Outcome::Fail, "TLS", &detail, Some(&fix))?;
            return report.skip(&AFTER_CONNECT[1..]);
        }
        (_, true) => {
            report.step(Outcome::Pass, "TLS", &format!("handshake done, certificate trusted ({})", roots(llm)), None)?
        }
        (_, false) => report.step(Outcome::Skip, "TLS", "not used (http://)", None)?,
    }
    let models = match listed {
        Ok(models) => {
            report.step(Outcome::Pass, "HTTP", "GET /models answered with a model list", None)?;
            Some(models)
        }
        // Some endpoints have no model list: only `set-llm` needs one, so the chat decides.
        Err(err @ (LlmError::NotFound { .. } | LlmError::Http { .. } | LlmError::Protocol(_))) => {
            let detail = format!("GET /models: {err} (only `opsai config set-llm` needs the model list)");
            report.step(Outcome::Warn, "HTTP", &detail, None)?;
            None
        }
        Err(err) => {
            report.step(Outcome::Fail, "HTTP", &format!("GET /models: {err}"), http_fix(&err).as_deref())?;
            return report.skip(&AFTER_CONNECT[2..]);
        }
    };
    let chat = probe::chat(&client, &llm.model).await;
    models_step(llm, models.as_deref(), chat.is_ok(), report)?;
    let chat = match chat {
        Ok(chat) => chat,
        Err(err) => {
            report.step(Outcome::Fail, "chat", &err.to_string(), chat_fix(&err))?;
            return report.skip(&["tool call", "speed"]);
        }
    };
    report.step(Outcome::Pass, "chat", &chat_detail(&chat), None)?;
    match probe::tool_call(&client, &llm.model).await {
        Ok(tool) => tool_step(&tool, report)?,
        Err(err) => report.step(Outcome::Fail, "tool call", &err.to_string(), chat_fix(&err).or(Some(TOOL_FIX)))?,
    }
    speed_step(&chat, report)
}

/// Proxy, DNS and TCP; false when a step failed (the rest are reported skipped).
async fn route_steps(llm: &LlmConfig, route: &Route, report: &mut Report) -> std::io::Result<bool> {
    let proxy_fix = |what: &str| {
        format!(
            "{what}: fix HTTPS_PROXY / HTTP_PROXY / ALL_PROXY, or add {} to NO_PROXY to connect directly",
            route.host
        )
    };
    match &route.proxy {
        None if route.loopback => {
            report.step(Outcome::Pass, "proxy", "none (a model on this machine is never proxied)", None)?
        }
        None => report.step(Outcome::Pass, "proxy", "none (direct connection)", None)?,
        Some(proxy) => report.step(Outcome::Pass, "proxy", &format!("{proxy} (from the environment)"), None)?,
    }
    let (host, port) = &route.first_hop;
    let whose = if route.proxy.is_some() { "the proxy's host " } else { "" };
    let addrs = match probe::resolve(host, *port).await {
        Ok(addrs) if host.parse::<std::net::IpAddr>().is_ok() => {
            report.step(Outcome::Pass, "DNS", &format!("{whose}{host} is an address (no lookup)"), None)?;
            addrs
        }
        Ok(addrs) => {
            let shown: Vec<String> = addrs.iter().take(3).map(|addr| addr.ip().to_string()).collect();
            report.step(Outcome::Pass, "DNS", &format!("{whose}{host} → {}", shown.join(", ")), None)?;
            addrs
        }
        Err(why) => {
            let fix = match &route.proxy {
                Some(_) => proxy_fix(&format!("the proxy's host {host} does not resolve")),
                None => format!(
                    "check the host name in llm.base_url ({}) for typos (`opsai config show`; change it with \
                     `opsai config set-llm` or --base-url) and that this machine's DNS works (`getent hosts {host}`)",
                    crate::llm::transport::mask_credentials(&llm.base_url)
                ),
            };
            report.step(Outcome::Fail, "DNS", &format!("{whose}{host} does not resolve: {why}"), Some(&fix))?;
            report.skip(&["TCP"].iter().chain(AFTER_CONNECT).copied().collect::<Vec<_>>())?;
            return Ok(false);
        }
    };
    match probe::connect(&addrs).await {
        Ok((addr, took)) => {
            report.step(Outcome::Pass, "TCP", &format!("connected to {addr} in {}", millis(took)), None)?;
            Ok(true)
        }
        Err(why) => {
            let fix = match &route.proxy {
                Some(proxy) => proxy_fix(&format!("the proxy {proxy} does not accept connections")),
                None if llm.base_url.trim_end_matches('/') == OLLAMA_DEFAULT_URL => {
                    "nothing listens on Ollama's port: start it with `ollama serve` (and `ollama pull MODEL`), or \
                     point opsai at another endpoint with `opsai config set-llm`"
                        .to_owned()
                }
                None => format!(
                    "nothing accepts connections on {host}:{port}: start the model server, check that it \
                     listens on that address and port (a server on another machine must not listen on \
                     127.0.0.1 only) and that no firewall is in the way; correct the URL with `opsai config set-llm`"
                ),
            };
            report.step(Outcome::Fail, "TCP", &format!("cannot connect to {host}:{port}: {why}"), Some(&fix))?;
            report.skip(AFTER_CONNECT)?;
            Ok(false)
        }
    }
}

/// The real client without retries (a doctor reports the first failure), or `None` when it cannot be built.
fn client_step(llm: &LlmConfig, route: &Route, report: &mut Report) -> std::io::Result<Option<OpenAiClient>> {
    let no_retries = RetryPolicy { max_attempts: 1, ..RetryPolicy::default() };
    match runner::model_client(llm) {
        Ok(client) => Ok(Some(client.with_retry(no_retries))),
        Err(err) => {
            let step = if route.scheme == "https" { "TLS" } else { "HTTP" };
            report.step(Outcome::Fail, step, &err.to_string(), None)?;
            report.skip(&AFTER_CONNECT[1..])?;
            Ok(None)
        }
    }
}

/// Whether the model is listed. Not listed but answering is only a warning: llama.cpp lists its
/// file name and answers to any model name.
fn models_step(llm: &LlmConfig, models: Option<&[String]>, chat_ok: bool, report: &mut Report) -> std::io::Result<()> {
    let Some(models) = models else {
        return report.step(Outcome::Skip, "models", "no model list to check", None);
    };
    let model = &llm.model;
    if models.iter().any(|name| name == model) {
        return report.step(Outcome::Pass, "models", &format!("{model} is listed ({} in all)", models.len()), None);
    }
    let mut shown: Vec<&str> = models.iter().take(8).map(String::as_str).collect();
    if models.len() > shown.len() {
        shown.push("…");
    }
    let listed = if models.is_empty() {
        "the endpoint lists no models".to_owned()
    } else {
        format!("listed: {}", shown.join(", "))
    };
    let pull =
        if llm.base_url.contains(":11434") { format!(" (Ollama: `ollama pull {model}`)") } else { String::new() };
    let fix = format!(
        "use a listed model: `opsai config set-llm`, --model or OPSAI_MODEL; or make the server offer {model}{pull}"
    );
    if chat_ok {
        let detail = format!("{model} is not listed, but the endpoint answered for it ({listed})");
        report.step(Outcome::Warn, "models", &detail, None)
    } else {
        report.step(Outcome::Fail, "models", &format!("{model} is not listed ({listed})"), Some(&fix))
    }
}

fn chat_detail(chat: &ChatCheck) -> String {
    // What the model wrote passes the one screen gate before it is cut short.
    let shown = crate::ui::display::line(&chat.text);
    let mut text: String = shown.chars().take(60).collect();
    if shown.chars().count() > 60 {
        text.push('…');
    }
    let unit = if chat.tokens == 1 { "token" } else { "tokens" };
    format!("streamed {} {unit}: \"{text}\"", chat.tokens)
}

const TOOL_FIX: &str = "opsai's agent works through tool calls: use a model trained for them (qwen2.5, llama3.1 or \
     later, mistral-nemo, …); llama.cpp's llama-server needs --jinja; with Ollama pick a model whose page lists \
     \"tools\"";

const OTHER_TOOL_FIX: &str = "the model makes tool calls but not to the tools in the request: a model that \
     invents tool names will call tools opsai does not have; try a larger or newer model, or check that the \
     server passes the request's `tools` to the model (llama.cpp's llama-server needs --jinja)";

fn tool_step(tool: &ToolCheck, report: &mut Report) -> std::io::Result<()> {
    match &tool.call {
        Some(call) => {
            let form = if tool.text_form { "in text form (opsai reads it)" } else { "native" };
            let detail = format!("{form}: {}({})", call.name, call.arguments);
            report.step(Outcome::Pass, "tool call", &detail, None)
        }
        None if !tool.other_calls.is_empty() => {
            // It can call tools, just not the one offered: a different failure with a different fix.
            let names: Vec<String> =
                tool.other_calls.iter().map(|name| crate::ui::display::line(name).chars().take(60).collect()).collect();
            let detail = format!(
                "the model called a tool it was not offered ({}) instead of {}",
                names.join(", "),
                probe::TOOL_NAME
            );
            report.step(Outcome::Fail, "tool call", &detail, Some(OTHER_TOOL_FIX))
        }
        None => {
            let said: String = tool.text.chars().filter(|c| !c.is_control()).take(80).collect();
            let detail = format!("the model answered in text instead of calling {}: \"{said}\"", probe::TOOL_NAME);
            report.step(Outcome::Fail, "tool call", &detail, Some(TOOL_FIX))
        }
    }
}

fn speed_step(chat: &ChatCheck, report: &mut Report) -> std::io::Result<()> {
    let Some(first) = chat.first_token else {
        return report.step(Outcome::Warn, "speed", "no text streamed, nothing to time", None);
    };
    let rate =
        chat.tokens_per_second().map_or_else(|| "tokens/s unknown".to_owned(), |rate| format!("{rate:.1} tokens/s"));
    let counted = if chat.reported { "as reported" } else { "streamed pieces counted" };
    report.step(Outcome::Pass, "speed", &format!("first token after {} · {rate} ({counted})", seconds(first)), None)
}

fn http_fix(err: &LlmError) -> Option<String> {
    match err {
        LlmError::Unauthorized { .. } => Some(
            "the API key is missing or wrong: set it with `opsai config set-llm`, or OPSAI_API_KEY / \
             OPENAI_API_KEY for one run"
                .to_owned(),
        ),
        _ => None,
    }
}

/// What to change when a chat did not come back; the other errors say it themselves.
fn chat_fix(err: &LlmError) -> Option<&'static str> {
    match err {
        LlmError::Timeout { .. } => Some(
            "the server accepted the request but sent nothing in time: check its load and log, or raise \
             llm.timeout in config.json (`opsai config path`)",
        ),
        LlmError::FirstByteTimeout { .. } => Some(
            "the model may still be loading or reading the prompt on the CPU: try again, raise \
             llm.local_first_byte_timeout in config.json, or use a smaller model",
        ),
        _ => None,
    }
}

/// Which certificates an `https://` endpoint is checked against.
fn roots(llm: &LlmConfig) -> String {
    let base = match std::env::var_os("SSL_CERT_FILE") {
        Some(file) => format!("roots from SSL_CERT_FILE={}", file.to_string_lossy()),
        None => "system roots".to_owned(),
    };
    match llm.ca_path() {
        Some(path) => format!("{base} + llm.ca_file {}", path.display()),
        None => base,
    }
}

fn millis(took: Duration) -> String {
    format!("{:.1} ms", took.as_secs_f64() * 1000.0)
}

fn seconds(took: Duration) -> String {
    format!("{:.2} s", took.as_secs_f64())
}
