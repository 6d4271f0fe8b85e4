//! Issue 16 "The page": a real browser — headless Chromium driven over WebDriver by chromedriver —
//! against the real `opsai serve` and the mock LLM. Log in, ask, watch the answer stream, approve a
//! Medium command and see its output, reload and find the conversation stored; a hostile answer
//! stays text. Every wait polls a DOM condition with a deadline.

mod driver;
mod sso;

use fantoccini::{Client, Locator};
use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::{Server, add_user};
use driver::*;

const PASSWORD: &str = "correct horse battery staple";

/// `opsai serve` in users mode with `alice`, an operator made by `opsai serve user add`.
fn users_server(env: &TestEnv, mock: &MockLlm) -> Server {
    let users = env.opsai_home().join("users.json");
    add_user(env, &users, "alice", "operator", PASSWORD);
    // LC_ALL=C: the approved command's output is matched in English.
    Server::builder(env).mock(mock).env("LC_ALL", "C").users(&users).start()
}

/// `opsai serve` in token mode and the URL it printed (which logs a browser in).
fn token_server(env: &TestEnv, mock: &MockLlm) -> (Server, String) {
    let server = Server::builder(env).mock(mock).env("LC_ALL", "C").start();
    let url = format!("{}/?token={}", server.base, server.token.as_deref().expect("token mode"));
    (server, url)
}

async fn log_in(c: &Client, url: &str, user: &str) {
    c.goto(url).await.expect("open the page");
    wait_for(c, "the login form", "!document.getElementById('login-view').hidden").await;
    type_into(c, "#login-user", user).await;
    type_into(c, "#login-pass", &format!("{PASSWORD}{ENTER}")).await;
    wait_for(c, "the chat after logging in", "!document.getElementById('main-view').hidden").await;
}

/// The turn has ended: no stop button, and the send button works again.
const TURN_OVER: &str = "document.getElementById('stop').hidden && !document.getElementById('send').disabled";

/// Medium (it creates a directory); what it prints is not in its own text.
const MEDIUM: &str = "mkdir -v made-by-browser";

#[test]
fn an_operator_logs_in_asks_approves_a_medium_command_and_finds_it_after_reload() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let gate = Gate::new();
    let mock = MockLlm::start([
        reply_text_then_tool_call("Let me create it.", "c1", "run_command", json!({"command": MEDIUM, "why": "asked"})),
        reply_text_deltas(&["Created ".into(), "the directory: ".into(), "**made-by-browser**.".into()])
            .held_after(2, &gate),
    ]);
    let server = users_server(&env, &mock);
    let (env, server, gate) = (&env, &server, &gate);
    with_browser(|c| async move {
        log_in(&c, &server.base, "alice").await;
        type_into(&c, "#input", &format!("create the directory{ENTER}")).await;

        wait_for(&c, "the approval request", "document.querySelector('.approval button.approve')").await;
        // The text before the call streamed as provisional text and became a (collapsed) thought.
        let thought = js(&c, "document.querySelector('details.thought:not([open])')?.textContent").await;
        assert_eq!(thought, "ThoughtLet me create it.", "the text before the call is a thought");
        assert_eq!(js(&c, "document.querySelectorAll('.provisional').length").await, 0);
        let badge = js(&c, "document.querySelector('.tool .badge').textContent").await;
        assert_eq!(badge, "Medium risk", "the risk badge says it in words");
        let tool = js(&c, "document.querySelector('.tool').textContent").await;
        assert!(tool.as_str().unwrap().contains(MEDIUM), "the command is shown: {tool}");
        // Issue 23: the command and its reasons are shown once, in the approval box (hidden text
        // is not in innerText).
        let shown = js(&c, "document.querySelector('.tool').innerText").await;
        let shown = shown.as_str().unwrap_or_default();
        assert_eq!(shown.lines().filter(|l| l.trim() == MEDIUM).count(), 1, "the command once: {shown}");
        assert_eq!(shown.matches("Why this risk").count(), 1, "the reasons once: {shown}");
        let session = js(&c, "document.querySelector('.approval .approve-session')?.textContent").await;
        let session = session.as_str().unwrap_or_default();
        assert!(session.starts_with("Approve for session: mkdir"), "Medium offers its grant: {session}");
        assert!(!env.user_home().join("made-by-browser").exists(), "nothing ran before the approval");
        click(&c, ".approval button.approve").await;

        let output =
            "[...document.querySelectorAll('.tool-output')].some(e => e.textContent.includes('created directory'))";
        wait_for(&c, "the command's output", output).await;
        // The model's answer is held half-way: what shows now was streamed.
        let partial = wait_for(&c, "streamed text", "document.querySelector('.answer.provisional')?.textContent").await;
        assert!(partial.as_str().unwrap().starts_with("Created"), "{partial}");
        assert!(!partial.as_str().unwrap().contains("made-by"), "the rest is still held: {partial}");
        assert_eq!(js(&c, "document.getElementById('stop').hidden").await, false, "the stop button shows");
        gate.open();
        let strong = "document.querySelector('.answer:not(.provisional) strong')?.textContent";
        assert_eq!(wait_for(&c, "the final answer", strong).await, "made-by-browser");
        wait_for(&c, "the end of the turn", TURN_OVER).await;
        assert!(env.user_home().join("made-by-browser").exists(), "the approved command ran");

        c.refresh().await.expect("reload");
        let stored = "document.querySelector('.answer strong')?.textContent";
        assert_eq!(wait_for(&c, "the stored conversation", stored).await, "made-by-browser");
        let log = js(&c, "document.getElementById('log').textContent").await;
        let log = log.as_str().unwrap();
        assert!(
            log.contains("create the directory")
                && log.contains("mkdir -v made-by-browser")
                && log.contains("created directory"),
            "{log}"
        );
        let title = js(&c, "document.querySelector('.conv-title').textContent").await;
        assert_eq!(title, "create the directory", "the first question names the conversation");

        // Deleting asks first.
        click(&c, ".conv-delete").await;
        c.accept_alert().await.expect("the delete confirmation");
        wait_for(&c, "an empty list", "!document.getElementById('conv-empty').hidden").await;
        assert_eq!(js(&c, "document.querySelectorAll('.conv').length").await, 0);

        click(&c, "#logout").await;
        wait_for(&c, "the login form after logging out", "!document.getElementById('login-view').hidden").await;
        c.refresh().await.expect("reload");
        wait_for(&c, "the login form, the session gone", "!document.getElementById('login-view').hidden").await;
    });
    assert!(
        mock.chat_requests()[1].tool_result("c1").unwrap().contains("created directory"),
        "the model saw the output"
    );
}

/// The model is hostile: markup in its answer is shown as text, nothing in it runs, and only http(s)
/// links become links. The Markdown around it still renders (a table, a code block with its copy button).
const HOSTILE: &str = "Look: <img src=x onerror=\"window.__pwned=1\"> <script>window.__pwned=2</script> \
    [click](javascript:window.__pwned=3) <a href=\"javascript:window.__pwned=4\">x</a> **<b>bold</b>** \
    [docs](https://example.com/docs)\n\n| pod | state |\n|---|---|\n| web-1 | <i>ok</i> |\n\n\
    ```html\n<script>window.__pwned=5</script>\n```\n";

async fn assert_inert(c: &Client, when: &str) {
    assert_eq!(js(c, "window.__pwned === undefined").await, true, "{when}: a script ran");
    let tags = js(c, "document.querySelectorAll('#log img, #log script, #log b, #log i').length").await;
    assert_eq!(tags, 0, "{when}: the model's markup became elements");
    let links = js(c, "[...document.querySelectorAll('#log a')].map(a => a.href + ' ' + a.rel).join(',')").await;
    assert_eq!(links, "https://example.com/docs noopener noreferrer", "{when}: only the http(s) link is a link");
    let text = js(c, "document.querySelector('.answer').textContent").await;
    let text = text.as_str().unwrap();
    assert!(
        text.contains("<img src=x onerror=") && text.contains("<script>window.__pwned=2</script>"),
        "{when}: {text}"
    );
    assert!(text.contains("[click](javascript:"), "{when}: the javascript: link stays text: {text}");
    let cell = js(c, "document.querySelector('.answer td:last-child')?.textContent").await;
    assert_eq!(cell, "<i>ok</i>", "{when}: the table renders, its cells as text");
    let code = js(c, "document.querySelector('.answer .code-block code')?.textContent").await;
    assert_eq!(code, "<script>window.__pwned=5</script>", "{when}: the code block shows its text");
    let copy = js(c, "document.querySelector('.answer .code-block button.copy')?.textContent").await;
    assert_eq!(copy, "Copy", "{when}: the code block has a copy button");
}

#[test]
fn a_hostile_answer_shows_as_text_and_runs_nothing() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text(HOSTILE)]);
    // Token mode: the printed URL logs the browser in.
    let (_server, url) = token_server(&env, &mock);
    let url = &url;
    with_browser(|c| async move {
        c.goto(url).await.expect("open the printed URL");
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        let address = c.current_url().await.expect("the address");
        assert!(!address.as_str().contains("token"), "the token leaves the address bar: {address}");
        type_into(&c, "#input", &format!("say something{ENTER}")).await;
        wait_for(&c, "the answer", "document.querySelector('.answer:not(.provisional)')").await;
        wait_for(&c, "the end of the turn", TURN_OVER).await;
        assert_inert(&c, "streamed").await;
        c.refresh().await.expect("reload");
        wait_for(&c, "the stored answer", "document.querySelector('.answer')").await;
        assert_inert(&c, "stored").await;
    });
}

/// The turn belongs to the server: a reload while it waits for an approval finds the question
/// stored and the approval replayed, and approving it there finishes the turn.
#[test]
fn a_reload_mid_turn_reattaches_to_the_running_turn_and_its_approval() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": MEDIUM, "why": "asked"})),
        reply_text("Done, *really*."),
    ]);
    let (_server, url) = token_server(&env, &mock);
    let (env, url) = (&env, &url);
    with_browser(|c| async move {
        c.goto(url).await.expect("open the printed URL");
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        type_into(&c, "#input", &format!("make it{ENTER}")).await;
        wait_for(&c, "the approval request", "document.querySelector('.approval button.approve')").await;

        c.refresh().await.expect("reload");
        wait_for(&c, "the replayed approval request", "document.querySelector('.approval button.approve')").await;
        let questions = js(&c, "[...document.querySelectorAll('.msg.user')].map(m => m.textContent).join('|')").await;
        assert_eq!(questions, "You: make it", "the stored question, once");
        assert_eq!(js(&c, "document.querySelectorAll('.tool').length").await, 1, "the tool call, once");
        click(&c, ".approval button.approve").await;
        let output =
            "[...document.querySelectorAll('.tool-output')].some(e => e.textContent.includes('created directory'))";
        wait_for(&c, "the command's output", output).await;
        assert_eq!(wait_for(&c, "the answer", "document.querySelector('.answer em')?.textContent").await, "really");
        wait_for(&c, "the end of the turn", TURN_OVER).await;
        assert!(env.user_home().join("made-by-browser").exists(), "the approved command ran");
    });
}

/// Keyboard only, on a phone-sized window: Shift+Enter breaks the line, Enter sends, the stop
/// button ends a turn whose model never finishes, and Enter on a listed conversation opens it.
#[test]
fn shift_enter_breaks_the_line_enter_sends_and_stop_ends_the_turn_on_a_narrow_window() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let never = Gate::new();
    let mock = MockLlm::start([reply_text_deltas(&["Still ".into(), "thinking".into()]).held_after(2, &never)]);
    let (_server, url) = token_server(&env, &mock);
    let url = &url;
    with_browser(|c| async move {
        c.set_window_size(400, 800).await.expect("a narrow window");
        c.goto(url).await.expect("open the printed URL");
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        // The new size may reach the page after the call returns.
        wait_for(&c, "the narrow window", "window.innerWidth <= 400").await;
        let fits = js(&c, "document.documentElement.scrollWidth <= window.innerWidth").await;
        assert_eq!(fits, true, "nothing sticks out sideways");
        let stacked = js(&c, "getComputedStyle(document.getElementById('main-view')).flexDirection").await;
        assert_eq!(stacked, "column", "the list sits above the chat");

        // Shift (\u{e008}) held for Enter, then released (\u{e000}).
        type_into(&c, "#input", "first line\u{e008}\u{e007}\u{e000}second line").await;
        assert_eq!(js(&c, "document.getElementById('input').value").await, "first line\nsecond line");
        assert_eq!(js(&c, "document.querySelectorAll('.msg.user').length").await, 0, "nothing sent yet");
        type_into(&c, "#input", ENTER).await;
        let question = wait_for(&c, "the question", "document.querySelector('.user-text')?.textContent").await;
        assert_eq!(question, "first line\nsecond line");

        wait_for(&c, "streamed text", "document.querySelector('.answer.provisional')?.textContent === 'Still'").await;
        assert_eq!(js(&c, "document.getElementById('stop').hidden").await, false, "the stop button shows");
        click(&c, "#stop").await;
        wait_for(&c, "the end of the stopped turn", TURN_OVER).await;
        let said = js(&c, "document.querySelector('.stopped')?.textContent").await;
        assert_eq!(said, "Stopped. What came before is kept.");

        // Opening a conversation from the keyboard reloads it and keeps the focus on it.
        // The turn's own question is marked, so only a question the reload drew counts.
        js(&c, "(document.querySelector('.msg.user').dataset.stale = '1', true)").await;
        js(&c, "document.querySelector('.conv-open').focus() || true").await;
        c.active_element().await.expect("the focused element").send_keys(ENTER).await.expect("Enter");
        wait_for(&c, "the reloaded conversation", "document.querySelector('.msg.user:not([data-stale])')").await;
        assert_eq!(js(&c, "document.activeElement.className").await, "conv-open", "focus stays in the list");
    });
}

/// A viewer: a wrong password is told on the form; a command above Safe waits for an operator (the
/// viewer's page says so, with no buttons); an operator finds it in the queue and approves it there.
#[test]
fn a_viewers_medium_command_waits_for_an_operator_who_approves_it_from_the_queue() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let users = env.opsai_home().join("users.json");
    add_user(&env, &users, "victor", "viewer", PASSWORD);
    add_user(&env, &users, "olga", "operator", PASSWORD);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": MEDIUM, "why": "asked"})),
        reply_text("Olga let it run."),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&users).start();
    let (env, server) = (&env, &server);
    with_browser(|c| async move {
        c.goto(&server.base).await.expect("open the page");
        wait_for(&c, "the login form", "!document.getElementById('login-view').hidden").await;
        type_into(&c, "#login-user", "victor").await;
        type_into(&c, "#login-pass", &format!("not the password{ENTER}")).await;
        wait_for(&c, "the login error", "document.getElementById('login-error').textContent").await;
        type_into(&c, "#login-pass", &format!("{PASSWORD}{ENTER}")).await;
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        assert_eq!(js(&c, "document.getElementById('who').textContent").await, "victor · viewer");

        type_into(&c, "#input", &format!("make it{ENTER}")).await;
        wait_for(&c, "the request", "document.querySelector('.needs-operator')").await;
        assert_eq!(js(&c, "document.querySelectorAll('.approval button').length").await, 0, "no buttons for a viewer");
        let waiting = js(&c, "document.querySelector('.needs-operator').textContent").await;
        assert!(waiting.as_str().unwrap().starts_with("Waiting for an operator"), "{waiting}");
        assert!(!env.user_home().join("made-by-browser").exists(), "nothing runs while it waits");

        // An operator finds it in the queue and approves it there; the turn is the server's.
        click(&c, "#logout").await;
        log_in(&c, &server.base, "olga").await;
        wait_for(&c, "the queue", "!document.getElementById('queue').hidden").await;
        let who = js(&c, "document.querySelector('.queue-item .queue-who').textContent").await;
        assert!(who.as_str().unwrap().starts_with("victor asks"), "{who}");
        let shown = js(&c, "document.querySelector('.queue-item .approval pre').textContent").await;
        assert_eq!(shown, MEDIUM, "the command that will run");
        assert_eq!(js(&c, "document.querySelectorAll('.queue-item .approve-session').length").await, 0);
        // She may read victor's conversation, not write in it.
        click(&c, ".queue-item .queue-open").await;
        wait_for(&c, "victor's question", "document.querySelector('#log .user-text')?.textContent === 'make it'").await;
        let title = js(&c, "document.getElementById('chat-title').textContent").await;
        assert!(title.as_str().unwrap().ends_with("(victor's, read-only)"), "{title}");
        assert_eq!(js(&c, "document.getElementById('input').disabled").await, true);
        click(&c, ".queue-item button.approve").await;
        wait_for(&c, "the queue to empty", "document.getElementById('queue').hidden").await;
        let victor = server.login("victor", PASSWORD).await;
        let id = victor.list().await.1[0]["id"].as_i64().unwrap();
        let events = victor.stream(id).await.collect().await;
        assert_eq!(events.last().unwrap()["type"], "done");
        let (_, messages) = victor.messages(id).await;
        assert!(messages.to_string().contains("Olga let it run."), "the turn went on: {messages}");
        assert!(env.user_home().join("made-by-browser").exists(), "olga's yes ran it");
    });
}

/// The cluster picker offers `kube.contexts`; a kube tool call shows the cluster and namespace it
/// touched, and its result (a fake kubectl on PATH).
#[test]
fn the_picked_cluster_is_where_a_kube_call_runs_and_the_call_says_so() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    env.write_config(r#"{"kube": {"contexts": ["prod", "staging"]}}"#);
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let kubectl = bin.join("kubectl");
    opsai::testing::write_program(&kubectl, "#!/bin/sh\necho \"ARGS $*\"\necho 'web-1   1/1     Running   0'\n");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mock =
        MockLlm::start([reply_tool_call("k1", "list_pods", json!({"namespace": "web"})), reply_text("One pod runs.")]);
    let server = Server::builder(&env).mock(&mock).env("PATH", &path).start();
    let url = format!("{}/?token={}", server.base, server.token.as_deref().expect("token mode"));
    let url = &url;
    with_browser(|c| async move {
        c.goto(url).await.expect("open the printed URL");
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        let offered = js(&c, "[...document.getElementById('cluster').options].map(o => o.value).join(',')").await;
        assert_eq!(offered, "prod,staging", "the picker offers kube.contexts");
        c.find(Locator::Css("#cluster")).await.unwrap().select_by_value("staging").await.expect("pick staging");
        type_into(&c, "#input", &format!("pods in web?{ENTER}")).await;
        wait_for(&c, "the end of the turn", TURN_OVER).await;
        wait_for(&c, "the answer", "document.querySelector('.answer:not(.provisional)')").await;

        let meta = js(&c, "[...document.querySelectorAll('.tool .tool-meta dt, .tool .tool-meta dd')].map(e => e.textContent).join('|')").await;
        let meta = meta.as_str().unwrap();
        assert!(meta.starts_with("Command|kubectl --context=staging get pods -n web "), "the kubectl line: {meta}");
        assert!(meta.ends_with("|Cluster|staging|Namespace|web"), "where the call ran: {meta}");
        let result = js(&c, "document.querySelector('.tool .tool-output').textContent").await;
        let result = result.as_str().unwrap();
        assert!(result.contains("web-1") && result.contains("--context=staging"), "{result}");
        assert_eq!(js(&c, "document.getElementById('chat-cluster').textContent").await, "cluster: staging");
        assert_eq!(js(&c, "document.getElementById('hosts').hidden").await, true, "no host sets, no picker");
        let hosts = js(&c, "document.getElementById('chat-hosts').textContent").await;
        assert_eq!(hosts, "commands run on: this server");
    });
}

/// The host-set picker offers `opsai serve --hosts` (real sshd on loopback): a conversation made on
/// one says so in its header and list, and its command's block names the hosts and shows one line
/// per host as each ends.
#[test]
fn the_picked_host_set_is_where_commands_run_and_each_host_is_shown() {
    if !browser_installed() || !crate::support::sshd::require() {
        return;
    }
    use crate::support::fleet::{Fleet, Kind};
    let fleet = Fleet::start(&[("app-1", Kind::Up("a")), ("app-2", Kind::Up("a")), ("app-3", Kind::Down)]);
    let env = TestEnv::new();
    env.write_config(&json!({"ssh": {"options": fleet.ssh_options(), "control_persist_s": 30}}).to_string());
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo fleet-ok", "why": "check"})),
        reply_text("Two of three answered."),
    ]);
    let server = Server::builder(&env).mock(&mock).arg("--hosts").arg("app-*").start();
    let url = format!("{}/?token={}", server.base, server.token.as_deref().expect("token mode"));
    let url = &url;
    with_browser(|c| async move {
        c.goto(url).await.expect("open the printed URL");
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        let offered =
            js(&c, "[...document.getElementById('hosts').options].map(o => `${o.value}=${o.text}`).join(',')").await;
        assert_eq!(offered, "=this server,app-*=app-* (3 hosts: app-[1:3])", "the picker offers the host sets");
        c.find(Locator::Css("#hosts")).await.unwrap().select_by_value("app-*").await.expect("pick app-*");
        let header = js(&c, "document.getElementById('chat-hosts').textContent").await;
        assert_eq!(header, "commands run on: app-* (3 hosts: app-[1:3])", "said before the first message");
        type_into(&c, "#input", &format!("is echo working?{ENTER}")).await;
        wait_for(&c, "the end of the turn", TURN_OVER).await;
        wait_for(&c, "the answer", "document.querySelector('.answer:not(.provisional)')").await;

        let meta = js(&c, "[...document.querySelectorAll('.tool .tool-meta dt, .tool .tool-meta dd')].map(e => e.textContent).join('|')").await;
        assert!(meta.as_str().unwrap().contains("Runs on|3 hosts: app-[1:3]"), "{meta}");
        let each =
            js(&c, "[...document.querySelectorAll('.tool .host-results li')].map(e => e.textContent).join(',')").await;
        assert_eq!(each, "app-1: ran · exit 0,app-2: ran · exit 0,app-3: unreachable", "one line per host");
        let list = js(&c, "document.querySelector('.conv-meta').textContent").await;
        assert!(list.as_str().unwrap().contains("on app-*"), "the list says where: {list}");
        // Reloaded, the stored call still says where it ran.
        c.refresh().await.expect("reload");
        wait_for(&c, "the stored conversation", "document.querySelector('.tool')").await;
        let meta =
            js(&c, "[...document.querySelectorAll('.tool .tool-meta dd')].map(e => e.textContent).join('|')").await;
        assert!(meta.as_str().unwrap().contains("app-*"), "{meta}");
    });
    drop(server);
}

/// The model picks call ids, so two conversations may wait under the same one: the page's answer
/// names its conversation (and command), so approving in one runs that one only.
#[test]
fn approving_answers_the_open_conversations_call_when_another_waits_under_the_same_id() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "mkdir -v first-dir", "why": "asked"})),
        reply_tool_call("c1", "run_command", json!({"command": "mkdir -v second-dir", "why": "asked"})),
        reply_text("Second done."),
    ]);
    let (_server, url) = token_server(&env, &mock);
    let (env, url) = (&env, &url);
    with_browser(|c| async move {
        c.goto(url).await.expect("open the printed URL");
        wait_for(&c, "the chat", "!document.getElementById('main-view').hidden").await;
        type_into(&c, "#input", &format!("first{ENTER}")).await;
        wait_for(&c, "the first approval", "document.querySelector('.approval button.approve')").await;
        // Leave it waiting (the turn is the server's) and ask in a new conversation.
        click(&c, "#new-conv").await;
        type_into(&c, "#input", &format!("second{ENTER}")).await;
        let waiting = "document.querySelector('.approval pre')?.textContent === 'mkdir -v second-dir'";
        wait_for(&c, "the second approval", waiting).await;
        click(&c, ".approval button.approve").await;
        let output = "[...document.querySelectorAll('.tool-output')].some(e => e.textContent.includes('second-dir'))";
        wait_for(&c, "the second command's output", output).await;
        wait_for(&c, "the end of the turn", TURN_OVER).await;
        assert!(env.user_home().join("second-dir").exists(), "the approved command ran");
        assert!(!env.user_home().join("first-dir").exists(), "the other conversation's call still waits");
    });
}

#[test]
fn the_conversation_list_comes_in_pages_and_the_page_shows_older_ones_on_request() {
    if !browser_installed() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([]);
    let (server, url) = token_server(&env, &mock);
    // 105 of owner's conversations, written straight into the store (creating them through the API
    // is limited to 60 a minute).
    let db = rusqlite::Connection::open(env.opsai_home().join("sessions.db")).expect("open sessions.db");
    for n in 0..105_i64 {
        db.execute(
            "INSERT INTO conversations (title, cwd, host, model, created_at, updated_at, message_count, user_id) \
             VALUES (?1, '', 'web', 'm', ?2, ?2, 0, 'owner')",
            rusqlite::params![format!("conversation {n}"), 1_700_000_000_000 + n * 1000],
        )
        .expect("insert a conversation");
    }
    drop(db);
    with_browser(|c| async move {
        c.goto(&url).await.expect("open the page");
        let rows = "document.querySelectorAll('#conv-list .conv-open').length";
        wait_for(&c, "the first page of the list", &format!("{rows} === 100")).await;
        let newest = js(&c, "document.querySelector('#conv-list .conv-title').textContent").await;
        assert_eq!(newest, "conversation 104", "newest first");
        click(&c, "#conv-list .conv-older").await;
        wait_for(&c, "the older conversations", &format!("{rows} === 105")).await;
        assert_eq!(js(&c, "document.querySelectorAll('#conv-list .conv-older').length").await, 0, "no more pages");
        let oldest = js(&c, "[...document.querySelectorAll('#conv-list .conv-title')].pop().textContent").await;
        assert_eq!(oldest, "conversation 0");
    });
    server.stop();
}
