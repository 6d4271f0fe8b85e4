//! `opsai doctor` through the real binary: every step against the mock, and each kind of failure
//! reported at its step with its fix.

use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// Generous: a loaded 2-core machine runs many of these at once.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// `opsai doctor` against `base_url`; (exit code, stdout).
fn doctor(env: &TestEnv, base_url: &str) -> (Option<i32>, String) {
    let out = env.cmd().env("OPSAI_BASE_URL", base_url).arg("doctor").timeout(RUN_LIMIT).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), stdout)
}

/// The line of step `name`, which must start with `mark`.
fn step<'a>(stdout: &'a str, mark: &str, name: &str) -> &'a str {
    let line = stdout
        .lines()
        .find(|line| line.split_whitespace().nth(1) == Some(name.split(' ').next().unwrap_or(name)))
        .unwrap_or_else(|| panic!("no {name} step:\n{stdout}"));
    assert!(line.starts_with(&format!("{mark} {name}")), "{name} should be {mark}:\n{stdout}");
    line
}

#[test]
fn a_working_endpoint_passes_every_step_with_a_native_tool_call() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_models(&["llama3.2:3b", "qwen2.5:7b"]),
        reply_text("I am ready to help."),
        reply_tool_call("call_7", "report_status", json!({"status": "ok"})),
    ]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.starts_with(&format!("Checking {} for model qwen2.5:7b (no API key).\n", mock.base_url())));
    step(&stdout, "✓", "proxy");
    step(&stdout, "✓", "DNS");
    assert!(step(&stdout, "✓", "TCP").contains(&mock.addr().to_string()), "{stdout}");
    step(&stdout, "–", "TLS");
    step(&stdout, "✓", "HTTP");
    assert!(step(&stdout, "✓", "models").contains("qwen2.5:7b is listed (2 in all)"), "{stdout}");
    assert!(step(&stdout, "✓", "chat").contains("I am ready to help."), "{stdout}");
    assert!(step(&stdout, "✓", "tool call").contains("native: report_status({\"status\":\"ok\"})"), "{stdout}");
    let speed = step(&stdout, "✓", "speed");
    assert!(speed.contains("first token after") && speed.contains("tokens/s"), "{stdout}");
    // The last line is the verdict (issue 23).
    let verdict = format!("All checks passed.\nVerdict: ready — opsai can use qwen2.5:7b at {}.\n", mock.base_url());
    assert!(stdout.ends_with(&verdict), "{stdout}");
    assert!(!stdout.contains("fix:"), "{stdout}");

    let chats = mock.chat_requests();
    assert_eq!(chats.len(), 2, "one chat, one tool call");
    assert_eq!(chats[0].json()["stream"], true);
    assert_eq!(chats[1].tool_names(), ["report_status"]);
}

#[test]
fn text_form_tool_calls_pass_and_an_unlisted_model_that_answers_is_a_warning() {
    let env = TestEnv::new();
    let call = r#"<tool_call>{"name": "report_status", "arguments": {"status": "ok"}}</tool_call>"#;
    let mock = MockLlm::start([reply_models(&["SmolLM2-135M-Instruct.gguf"]), reply_text("Ready."), reply_text(call)]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(step(&stdout, "✓", "tool call").contains("in text form"), "{stdout}");
    let models = step(&stdout, "!", "models");
    assert!(models.contains("not listed, but the endpoint answered for it"), "{stdout}");
    assert!(stdout.contains("All checks passed (1 warning).\nVerdict: ready — "), "{stdout}");
}

#[test]
fn an_unreachable_port_fails_at_tcp_with_its_fix() {
    let env = TestEnv::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let (code, stdout) = doctor(&env, &format!("http://{addr}/v1"));
    assert_eq!(code, Some(1), "{stdout}");
    step(&stdout, "✓", "DNS");
    assert!(step(&stdout, "✗", "TCP").contains(&format!("cannot connect to {addr}")), "{stdout}");
    assert!(stdout.contains(&format!("  fix: nothing accepts connections on {addr}: start the model server")));
    step(&stdout, "–", "chat");
    let verdict = format!(
        "1 check failed: the fix is under it.\nVerdict: no model — nothing answers at http://{addr}/v1; start that \
         server or correct the URL: `opsai config set-llm`.\n"
    );
    assert!(stdout.ends_with(&verdict), "{stdout}");
}

/// Issue 23: the verdict names the one command for Ollama's default endpoint and, with nothing
/// configured, the local server found on its usual port (the list pointed at a mock, for tests).
#[test]
fn with_nothing_configured_and_no_ollama_the_verdict_names_ollama_serve_and_the_server_found() {
    if std::net::TcpStream::connect_timeout(&"127.0.0.1:11434".parse().unwrap(), std::time::Duration::from_secs(1))
        .is_ok()
    {
        crate::support::skipped("something listens on 127.0.0.1:11434 (Ollama's default)");
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["local-7b"])]);
    let out =
        env.cmd().arg("doctor").env("OPSAI_TEST_LOCAL_SERVERS", format!("vLLM={}", mock.base_url())).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let expected = format!(
        "Verdict: no model — nothing answers at http://localhost:11434/v1; start it: `ollama serve` (or choose \
         another model: `opsai config set-llm`).\nopsai: found vLLM at {url} (model local-7b); to use it: \
         `opsai config set-llm`, or OPSAI_BASE_URL={url} OPSAI_MODEL=local-7b\n",
        url = mock.base_url()
    );
    assert!(stdout.ends_with(&expected), "{stdout}");
}

#[test]
fn a_bad_hostname_fails_at_dns() {
    let env = TestEnv::new();
    // `.invalid` never resolves (RFC 2606).
    let (code, stdout) = doctor(&env, "http://opsai-doctor-test.invalid:8000/v1");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(step(&stdout, "✗", "DNS").contains("opsai-doctor-test.invalid does not resolve"), "{stdout}");
    assert!(stdout.contains("  fix: check the host name in llm.base_url"), "{stdout}");
    step(&stdout, "–", "TCP");
}

#[test]
fn a_model_the_endpoint_does_not_list_is_named_with_the_listed_ones() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["llama3.2:3b", "mistral:7b"]), reply_model_not_found("qwen2.5:7b")]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(1), "{stdout}");
    let models = step(&stdout, "✗", "models");
    assert!(models.contains("qwen2.5:7b is not listed (listed: llama3.2:3b, mistral:7b)"), "{stdout}");
    assert!(stdout.contains("  fix: use a listed model: `opsai config set-llm`, --model or OPSAI_MODEL"), "{stdout}");
    assert!(step(&stdout, "✗", "chat").contains("qwen2.5:7b"), "{stdout}");
    step(&stdout, "–", "tool call");
}

#[test]
fn a_401_names_the_api_key() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_unauthorized()]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(1), "{stdout}");
    step(&stdout, "✓", "TCP");
    assert!(step(&stdout, "✗", "HTTP").contains("401"), "{stdout}");
    assert!(stdout.contains("  fix: the API key is missing or wrong: set it with `opsai config set-llm`"), "{stdout}");
    step(&stdout, "–", "chat");
    assert_eq!(mock.requests().len(), 1, "not retried, nothing after it");
}

/// A private CA, a certificate it signed for localhost and 127.0.0.1, and `openssl s_server`
/// serving `v1/models` over TLS with it; killed on drop.
struct TlsServer {
    dir: tempfile::TempDir,
    port: u16,
    child: std::process::Child,
}

impl TlsServer {
    fn start() -> Option<TlsServer> {
        if std::process::Command::new("openssl").arg("version").output().is_err() {
            crate::support::skipped("no openssl to make a CA and serve TLS");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let script = "set -e
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=opsai-test-ca \
              -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            openssl req -newkey rsa:2048 -nodes -keyout leaf.key -out leaf.csr -subj /CN=localhost
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' >leaf.ext
            openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 -extfile leaf.ext
            mkdir -p www/v1
            printf '{\"object\":\"list\",\"data\":[{\"id\":\"qwen2.5:7b\"}]}' >www/v1/models";
        let made = std::process::Command::new("sh").args(["-c", script]).current_dir(dir.path()).output().unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new("openssl")
            .args(["s_server", "-quiet", "-WWW", "-accept", &port.to_string()])
            .args(["-cert", "../leaf.pem", "-key", "../leaf.key"])
            .current_dir(dir.path().join("www"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let up = opsai::testing::wait_until(Duration::from_secs(30), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "openssl s_server did not start");
        Some(TlsServer { dir, port, child })
    }

    fn ca(&self) -> String {
        self.dir.path().join("ca.pem").display().to_string()
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn tls_is_checked_against_the_system_roots_ssl_cert_file_and_llm_ca_file() {
    let Some(server) = TlsServer::start() else { return };
    let url = format!("https://localhost:{}/v1", server.port);
    // s_server answers no chat: the chat step fails fast, after the steps under test.
    let quick = r#""timeout": 1, "local_first_byte_timeout": 1"#;

    let untrusted = TestEnv::new();
    untrusted.write_config(&format!(r#"{{"llm": {{{quick}}}}}"#));
    let (code, stdout) = doctor(&untrusted, &url);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(step(&stdout, "✗", "TLS").contains("the handshake with localhost failed"), "{stdout}");
    assert!(stdout.contains("for a private CA set llm.ca_file to its PEM file"), "{stdout}");
    step(&stdout, "–", "HTTP");

    let configured = TestEnv::new();
    configured.write_config(&format!(r#"{{"llm": {{{quick}, "ca_file": "{}"}}}}"#, server.ca()));
    let (_, stdout) = doctor(&configured, &url);
    let tls = step(&stdout, "✓", "TLS");
    assert!(tls.contains(&format!("system roots + llm.ca_file {}", server.ca())), "{stdout}");
    step(&stdout, "✓", "HTTP");
    step(&stdout, "✓", "models");
    step(&stdout, "✗", "chat");
    assert!(stdout.contains("fix: the model may still be loading or reading the prompt"), "{stdout}");

    let from_env = TestEnv::new();
    from_env.write_config(&format!(r#"{{"llm": {{{quick}}}}}"#));
    let out = from_env
        .cmd()
        .env("OPSAI_BASE_URL", &url)
        .env("SSL_CERT_FILE", server.ca())
        .arg("doctor")
        .timeout(RUN_LIMIT)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(step(&stdout, "✓", "TLS").contains("roots from SSL_CERT_FILE="), "{stdout}");
    step(&stdout, "✓", "models");
}

#[test]
fn with_a_proxy_dns_and_tcp_check_the_proxy_and_the_fix_names_the_variables() {
    let env = TestEnv::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = listener.local_addr().unwrap();
    drop(listener);
    let out = env
        .cmd()
        .env("OPSAI_BASE_URL", "https://llm.example.com/v1")
        .env("HTTPS_PROXY", format!("http://{closed}"))
        .arg("doctor")
        .timeout(RUN_LIMIT)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(step(&stdout, "✓", "proxy").contains(&format!("http://{closed} (from the environment)")), "{stdout}");
    assert!(step(&stdout, "✓", "DNS").contains("the proxy's host 127.0.0.1"), "{stdout}");
    step(&stdout, "✗", "TCP");
    assert!(
        stdout.contains("fix HTTPS_PROXY / HTTP_PROXY / ALL_PROXY, or add llm.example.com to NO_PROXY"),
        "{stdout}"
    );
}

/// Issue 23: a model that calls some other tool is not "answering in text", and the fix says so.
#[test]
fn a_call_to_another_tool_is_named_as_such() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_models(&["qwen2.5:7b"]),
        reply_text("Ready."),
        reply_tool_call("call_9", "get_weather", json!({"city": "Paris"})),
    ]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(1), "{stdout}");
    let line = step(&stdout, "✗", "tool call");
    assert!(line.contains("called a tool it was not offered (get_weather) instead of report_status"), "{stdout}");
    assert!(!stdout.contains("answered in text"), "{stdout}");
    assert!(stdout.contains("invents tool names"), "{stdout}");
}

/// Issue 23: doctor only looks; a fresh home stays without a config file.
#[test]
fn doctor_creates_no_config_file() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_models(&["qwen2.5:7b"]),
        reply_text("Ready."),
        reply_tool_call("call_7", "report_status", json!({"status": "ok"})),
    ]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!env.config_path().exists(), "doctor created {}", env.config_path().display());
}
