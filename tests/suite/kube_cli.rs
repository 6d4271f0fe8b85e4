//! The read-only Kubernetes tools end to end: the real binary, the mock LLM, and a fake `kubectl` on
//! PATH that records every argv it gets. Asserts on the exact argv, on what the model was sent
//! (redacted output, `no permission:` refusals), on the audit log, and that refused calls never
//! reached kubectl.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;

const TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
const PASSWORD: &str = "s3cr3t-Pa55-word";
const T: &str = "--request-timeout=30s";

/// A fake kubectl in `$HOME/bin`: each argv word on its own line, then `--END--`; its output carries
/// a token and a password so redaction can be checked. Returns the PATH to use and the argv log.
fn fake_kubectl(env: &TestEnv) -> (String, PathBuf) {
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.user_home().join("kubectl-argv");
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{log}'; done\necho --END-- >> '{log}'\n\
         echo 'NAME    READY   STATUS    RESTARTS'\necho 'web-1   1/1     Running   0'\n\
         echo \"env GITHUB_TOKEN={TOKEN}\"\necho 'DB_PASSWORD={PASSWORD}'\n",
        log = log.display()
    );
    let kubectl = bin.join("kubectl");
    opsai::testing::write_program(&kubectl, script);
    (format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()), log)
}

/// Every kubectl run, as its argv (without `kubectl`).
fn runs(log: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut runs = vec![];
    let mut current = vec![];
    for line in text.lines() {
        if line == "--END--" {
            runs.push(std::mem::take(&mut current));
        } else {
            current.push(line.to_owned());
        }
    }
    runs
}

fn opsai(env: &TestEnv, mock: &MockLlm, path: &str) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env("PATH", path)
        // The fake kubectl logs its argv to a file, which the sandbox's read-only filesystem forbids.
        .env("OPSAI_SANDBOX", "off")
        .timeout(Duration::from_secs(60));
    cmd
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

fn argv(words: &str) -> Vec<String> {
    words.split(' ').map(str::to_owned).collect()
}

#[test]
fn each_tool_runs_its_exact_kubectl_argv_with_redacted_output() {
    let env = TestEnv::new();
    let (path, log) = fake_kubectl(&env);
    let calls = [
        call("c1", "list_pods", json!({"namespace": "prod", "selector": "app=web"})),
        call("c2", "get_pod_logs", json!({"name": "web-1", "namespace": "prod", "tail": 50, "previous": true})),
        call("c3", "describe_pod", json!({"name": "web-1", "namespace": "prod"})),
        call("c4", "get_deployment_status", json!({"namespace": "all"})),
        call("c5", "get_events", json!({"namespace": "prod", "for_object": "pod/web-1"})),
        call("c6", "get_configmap", json!({"name": "app-config", "namespace": "prod"})),
        call("c7", "get_node_status", json!({})),
    ];
    let mock = MockLlm::start([reply_openai_fragments(&calls), reply_text("web-1 is running.")]);
    opsai(&env, &mock, &path).arg("how is web doing?").assert().success();
    let excluded =
        "metadata.namespace!=kube-system,metadata.namespace!=kube-public,metadata.namespace!=kube-node-lease";
    let expected = [
        argv(&format!("get pods -n prod -l app=web -o wide {T}")),
        argv(&format!("logs web-1 -n prod --tail=50 --previous {T}")),
        argv(&format!("describe pod web-1 -n prod {T}")),
        argv(&format!("get deployments --all-namespaces --field-selector {excluded} -o wide {T}")),
        argv(&format!(
            "get events -n prod --field-selector involvedObject.kind=Pod,involvedObject.name=web-1 \
             --sort-by=.metadata.creationTimestamp {T}"
        )),
        argv(&format!("get configmap app-config -n prod -o yaml {T}")),
        argv(&format!("get nodes -o wide {T}")),
    ];
    assert_eq!(runs(&log), expected);

    let last = &mock.chat_requests()[1];
    last.assert_tool_calls_answered();
    for id in ["c1", "c2", "c3", "c4", "c5", "c6", "c7"] {
        let result = last.tool_result(id).unwrap();
        assert!(result.contains("web-1   1/1     Running"), "{id}: {result}");
        assert!(result.contains("[REDACTED"), "{id}: {result}");
    }
    mock.assert_never_sent(TOKEN);
    mock.assert_never_sent(PASSWORD);
    let log = audit(&env);
    for tool in [
        "list_pods", "get_pod_logs", "describe_pod", "get_deployment_status", "get_events", "get_configmap",
        "get_node_status",
    ] {
        let line = log.lines().find(|l| l.contains(&format!("TOOL: kube.{tool} "))).unwrap_or_else(|| panic!("{log}"));
        assert!(line.contains("RISK: safe | CONFIRMED: auto | EXIT: 0"), "{line}");
        assert!(!line.contains(TOKEN) && !line.contains(PASSWORD), "{line}");
    }
    assert_eq!(log.lines().count(), 7, "{log}");
}

#[test]
fn a_named_node_shows_its_conditions_without_describe() {
    let env = TestEnv::new();
    let (path, log) = fake_kubectl(&env);
    let mock = MockLlm::start([
        reply_tool_call("n1", "get_node_status", json!({"name": "node-1"})),
        reply_text("node-1 is ready."),
    ]);
    opsai(&env, &mock, &path).arg("is node-1 ok?").assert().success();
    let runs = runs(&log);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0][..4], argv("get node node-1 -o"));
    assert!(runs[0][4].starts_with("jsonpath={.metadata.name}") && runs[0][4].contains(".status.conditions"));
    assert_eq!(runs[0][5], T);
}

#[test]
fn blacklisted_calls_are_refused_audited_and_never_reach_kubectl() {
    let env = TestEnv::new();
    let (path, log) = fake_kubectl(&env);
    let refused = [
        ("r1", "list_pods", json!({"namespace": "kube-system"}), "kube-system"),
        ("r2", "get_pod_logs", json!({"name": "etcd-0", "namespace": "kube-public"}), "kube-public"),
        ("r3", "describe_pod", json!({"name": "x", "namespace": "kube-node-lease"}), "kube-node-lease"),
        ("r4", "get_configmap", json!({"name": "secret/db-credentials", "namespace": "prod"}), "secret"),
        ("r5", "get_events", json!({"namespace": "prod", "for_object": "Secret/db"}), "secret"),
        ("r6", "get_deployment_status", json!({"name": "coredns", "namespace": "kube-system"}), "kube-system"),
    ];
    let calls: Vec<MockCall> = refused.iter().map(|(id, tool, args, _)| call(id, tool, args.clone())).collect();
    let mock = MockLlm::start([reply_openai_fragments(&calls), reply_text("I may not look there.")]);
    let out = opsai(&env, &mock, &path).arg("--json").arg("look at the system pods").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a refusal is an observation: {out:?}");
    assert!(runs(&log).is_empty(), "kubectl ran: {:?}", runs(&log));

    let last = &mock.chat_requests()[1];
    last.assert_tool_calls_answered();
    for (id, _, _, what) in &refused {
        let result = last.tool_result(id).unwrap();
        assert!(result.starts_with("no permission: "), "{id}: {result}");
        assert!(result.contains(what), "{id}: {result}");
    }
    let log = audit(&env);
    assert_eq!(log.lines().count(), refused.len(), "{log}");
    for (_, tool, _, _) in &refused {
        let line = log.lines().find(|l| l.contains(&format!("TOOL: kube.{tool} "))).unwrap_or_else(|| panic!("{log}"));
        assert!(line.contains("CONFIRMED: no") && line.contains("no permission"), "{line}");
    }
    assert!(log.contains("CMD: \"kubectl get pods -n kube-system -o wide --request-timeout=30s\""), "{log}");
    assert!(log.contains("CMD: \"kubectl get secret db-credentials -n prod -o yaml"), "{log}");

    let events: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(results.len(), refused.len(), "{events:?}");
    assert!(results.iter().all(|e| e["status"] == "denied_by_policy"), "{results:?}");
    let call = events.iter().find(|e| e["type"] == "tool_call" && e["id"] == "r1").unwrap();
    assert_eq!(call["tool"], "list_pods");
}

#[test]
fn configured_blacklist_entries_are_refused_too() {
    let env = TestEnv::new();
    env.write_config(
        r#"{"kube": {"forbidden_actions": ["logs"], "forbidden_namespaces": ["payments"], "forbidden_resources": ["configmap"],
            "contexts": ["prod", "staging"]}}"#,
    );
    let (path, log) = fake_kubectl(&env);
    let calls = [
        call("a1", "get_pod_logs", json!({"name": "web-1", "namespace": "prod"})),
        call("a2", "list_pods", json!({"namespace": "payments"})),
        call("a3", "get_configmap", json!({"name": "app", "namespace": "prod"})),
        call("a4", "list_pods", json!({"namespace": "all"})),
    ];
    let mock = MockLlm::start([reply_openai_fragments(&calls), reply_text("Done.")]);
    opsai(&env, &mock, &path).arg("look around").assert().success();
    let last = &mock.chat_requests()[1];
    for (id, what) in [("a1", "kube.forbidden_actions"), ("a2", "payments"), ("a3", "kube.forbidden_resources")] {
        let result = last.tool_result(id).unwrap();
        assert!(result.starts_with("no permission: ") && result.contains(what), "{id}: {result}");
    }
    // All namespaces leaves out the configured ones (kube-system is readable once it is not listed).
    // The terminal talks to kubectl's current context: `kube.contexts` adds no `--context`.
    let expected =
        argv(&format!("get pods --all-namespaces --field-selector metadata.namespace!=payments -o wide {T}"));
    assert_eq!(runs(&log), vec![expected]);
}

#[test]
fn options_and_shell_code_in_values_are_argument_errors_that_never_run() {
    let env = TestEnv::new();
    let (path, log) = fake_kubectl(&env);
    let calls = [
        call("i1", "get_pod_logs", json!({"name": "x; rm -rf /"})),
        call("i2", "describe_pod", json!({"name": "-n=kube-system"})),
        call("i3", "list_pods", json!({"namespace": "--all-namespaces"})),
        call("i4", "list_pods", json!({"selector": "app=web $(reboot)"})),
        call("i5", "get_events", json!({"field_selector": "-o=json"})),
    ];
    let mock = MockLlm::start([reply_openai_fragments(&calls), reply_text("Those were not valid.")]);
    opsai(&env, &mock, &path).arg("break it").assert().success();
    assert!(runs(&log).is_empty(), "kubectl ran: {:?}", runs(&log));
    let last = &mock.chat_requests()[1];
    for id in ["i1", "i2", "i3", "i4", "i5"] {
        let result = last.tool_result(id).unwrap();
        assert!(result.starts_with("[ERROR]: `"), "{id}: {result}");
    }
    assert!(last.tool_result("i2").unwrap().contains("must not start with '-'"));
}

#[test]
fn no_kubectl_is_an_observation() {
    let env = TestEnv::new();
    let empty = env.user_home().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let mock = MockLlm::start([reply_tool_call("k1", "list_pods", json!({})), reply_text("There is no kubectl here.")]);
    opsai(&env, &mock, &empty.display().to_string())
        .arg("list pods")
        .assert()
        .success()
        .stdout("There is no kubectl here.\n");
    let result = mock.chat_requests()[1].tool_result("k1").unwrap();
    assert!(result.contains("kubectl is not available on this machine"), "{result}");
}

/// The kube tools pass `timeout_s: 30` to run_command; the mechanism, shown with 1 s: a call's own
/// limit wins over a longer `exec.timeout_s`.
#[test]
fn a_calls_own_timeout_is_shorter_than_the_configured_one() {
    let env = TestEnv::new();
    env.write_config(r#"{"exec": {"timeout_s": 120}}"#);
    let mock = MockLlm::start([
        reply_tool_call("s1", "run_command", json!({"command": "sleep 20", "timeout_s": 1})),
        reply_text("It took too long."),
    ]);
    let started = std::time::Instant::now();
    let out =
        opsai(&env, &mock, &std::env::var("PATH").unwrap_or_default()).arg("--json").arg("wait").output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result =
        stdout.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|e| e["type"] == "tool_result");
    assert_eq!(result.unwrap()["status"], "timed_out", "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_conversation_talks_to_its_cluster_and_one_outside_kube_contexts_never_runs() {
    use crate::support::serve::Server;
    use reqwest::{Method, StatusCode};
    let env = TestEnv::new();
    env.write_config(r#"{"kube": {"contexts": ["prod", "staging", "dev"]}}"#);
    let (path, log) = fake_kubectl(&env);
    let mock =
        MockLlm::start([reply_tool_call("k1", "list_pods", json!({"namespace": "web"})), reply_text("One pod runs.")]);
    let server = Server::builder(&env).mock(&mock).env("PATH", &path).start();
    let api = server.api();
    let staging = api.create(json!({"title": "pods", "cluster_id": "staging"})).await["id"].as_i64().unwrap();
    let dev = api.create(json!({"title": "dev pods", "cluster_id": "dev"})).await["id"].as_i64().unwrap();
    let events = api.chat(staging, "pods in web?").await.collect().await;
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(call["cluster"], "staging", "{call}");
    assert_eq!(runs(&log), [argv(&format!("--context=staging get pods -n web -o wide {T}"))]);
    let line = audit(&env);
    assert!(line.contains("| USER: owner | CMD: \"kubectl --context=staging get pods -n web"), "{line}");
    server.stop();

    // `dev` is taken off the list: its conversation is refused before a turn starts (the tool's own
    // refusal of such a context is `tools::kube::context_tests`), so nothing reaches the model or kubectl.
    env.write_config(r#"{"kube": {"contexts": ["prod", "staging"]}}"#);
    let server = Server::builder(&env).mock(&mock).env("PATH", &path).start();
    let api = server.api();
    let chat = api.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": dev, "message": "pods?"}));
    let (status, body) = api.send(chat).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"].as_str().unwrap_or_default().contains("`dev` is no longer in kube.contexts"), "{body}");
    assert_eq!(mock.chat_requests().len(), 2, "the model was not asked for dev");
    assert_eq!(runs(&log).len(), 1, "kubectl never ran for dev");
    assert!(!audit(&env).contains("--context=dev"), "{}", audit(&env));
    server.stop();
}

/// A fake kubectl that knows three contexts and answers `get pods` per context: the two prod ones
/// alike, with a token to redact. Every argv is logged as in [`fake_kubectl`].
fn fake_kubectl_with_contexts(env: &TestEnv) -> (String, PathBuf) {
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.user_home().join("kubectl-argv");
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{log}'; done\necho --END-- >> '{log}'\n\
         if [ \"$1\" = config ]; then printf 'dev\\nprod-eu\\nprod-us\\n'; exit 0; fi\n\
         case \"$1\" in --context=dev) echo 'No resources found'; exit 1;; esac\n\
         echo 'web-1   1/1     Running   0'\necho \"env GITHUB_TOKEN={TOKEN}\"\n",
        log = log.display()
    );
    let kubectl = bin.join("kubectl");
    opsai::testing::write_program(&kubectl, script);
    (format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()), log)
}

/// `--contexts`: one kube call runs once per selected context, in kubeconfig order, each audited;
/// the model gets one grouped, redacted observation and is told which contexts answer.
#[test]
fn contexts_run_every_kube_call_on_each_selected_context_and_group_the_results() {
    let env = TestEnv::new();
    let (path, log) = fake_kubectl_with_contexts(&env);
    let mock = MockLlm::start([
        reply_tool_call("p1", "list_pods", json!({"namespace": "shop"})),
        reply_text("web-1 runs in both prod clusters."),
    ]);
    opsai(&env, &mock, &path).args(["--contexts", "prod-*,dev", "pods in shop?"]).assert().success();
    let pods = |context: &str| argv(&format!("--context={context} get pods -n shop -o wide {T}"));
    let expected = vec![argv("config get-contexts -o name"), pods("dev"), pods("prod-eu"), pods("prod-us")];
    assert_eq!(runs(&log), expected);

    let first = &mock.chat_requests()[0];
    let system = first.messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("each of 3 contexts (dev, prod-eu, prod-us)"), "{system}");
    let last = &mock.chat_requests()[1];
    last.assert_tool_calls_answered();
    let result = last.tool_result("p1").unwrap();
    assert!(result.starts_with("ran on 3 kube contexts, 2 distinct results"), "{result}");
    assert!(result.contains("## contexts prod-eu, prod-us\nexit 0\nweb-1   1/1     Running"), "{result}");
    assert!(result.contains("## context dev\n[ERROR]: exit 1\nNo resources found"), "{result}");
    assert!(result.contains("[REDACTED"), "{result}");
    mock.assert_never_sent(TOKEN);
    let audit = audit(&env);
    assert_eq!(audit.lines().filter(|line| line.contains("TOOL: kube.list_pods ")).count(), 3, "{audit}");
    for context in ["dev", "prod-eu", "prod-us"] {
        assert!(audit.contains(&format!("--context={context} get pods")), "{audit}");
    }
    assert!(!audit.contains(TOKEN), "{audit}");
}

/// A pattern no context matches stops before any model request, naming what kubectl knows.
#[test]
fn contexts_that_select_nothing_stop_before_the_model() {
    let env = TestEnv::new();
    let (path, _log) = fake_kubectl_with_contexts(&env);
    let mock = MockLlm::start([reply_text("never")]);
    let out = opsai(&env, &mock, &path).args(["--contexts", "staging-*", "pods?"]).assert().code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("`staging-*` selects no kube context (kubectl knows: dev, prod-eu, prod-us)"), "{stderr}");
    assert!(mock.chat_requests().is_empty());
}
