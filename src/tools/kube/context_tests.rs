//! A registry's kube context (`opsai serve`'s conversation's cluster): `--context=NAME` before the
//! verb on every line, rated as before, and refused when unsafe or not in `kube.contexts`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Kube, build, context_refusal, family};
use crate::approval::NoApprover;
use crate::config::KubeConfig;
use crate::policy::{PolicyConfig, assess, quote_word};
use crate::protocol::{Observation, ObservationStatus, Risk};
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::testing::{ScriptedExecutor, ScriptedModel};
use crate::tools::{Interrupts, RunMode, RunState, Services, ToolContext, ToolEffect};

#[test]
fn the_context_comes_first_and_every_line_stays_safe() {
    for tool in Kube::ALL {
        let mut plan = build(tool, &json!({"name": "web-1", "namespace": "prod"}), &KubeConfig::default()).unwrap();
        let verb = plan.argv[1].clone();
        plan.in_context("arn:aws:eks:eu-west-1:1234:cluster/prod");
        assert_eq!(plan.argv[..3], ["kubectl", "--context=arn:aws:eks:eu-west-1:1234:cluster/prod", verb.as_str()]);
        let line = plan.argv.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ");
        assert_eq!(assess(&line, &PolicyConfig::default()).risk, Risk::Safe, "{line}");
    }
}

#[test]
fn a_context_must_be_a_plain_word_and_in_a_non_empty_list() {
    let open = KubeConfig::default();
    for good in ["prod", "gke_proj_europe-west1_main", "admin@kind-kind", "arn:aws:eks:us-east-1:1:cluster/a.b"] {
        assert_eq!(context_refusal(good, &open), None, "{good}");
    }
    for bad in ["", "-n", "--kubeconfig=/tmp/x", "a b", "x;id", "$(id)", "pr\u{202e}od", "ä", &"x".repeat(254)] {
        let reason = context_refusal(bad, &open).unwrap_or_else(|| panic!("{bad:?} accepted"));
        assert!(reason.contains("not a kube context name"), "{reason}");
    }
    let listed = KubeConfig { contexts: vec!["prod".into(), "staging".into()], ..KubeConfig::default() };
    assert_eq!(context_refusal("staging", &listed), None);
    let reason = context_refusal("dev", &listed).unwrap();
    assert_eq!(
        reason,
        "the kube context `dev` is not one opsai may use (kube.contexts: prod, staging); nothing was run; \
         tell the user, who can add it to kube.contexts or pick another cluster"
    );
}

/// Calls `pods` through the family built with `context`, as a turn would; the lines run and the observation.
fn call_pods(config: KubeConfig, context: Option<&str>) -> (Vec<String>, ObservationStatus, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let redactor = Redactor::new(Vec::new());
    let audit = AuditLog::new(dir.path().join("audit.log"), 10, 90, std::sync::Arc::new(Redactor::new(Vec::new())));
    let executor = ScriptedExecutor::printing(|_| (0, "web-1 Running\n".into()));
    let (policy, interrupts, model) = (PolicyConfig::default(), Interrupts::default(), ScriptedModel::new([]));
    let services = Services {
        executor: &executor,
        approver: &NoApprover,
        audit: &audit,
        redactor: &redactor,
        policy: &policy,
        mode: RunMode { auto_approve_safe: true, approve_medium: false, dry_run: false, probe_limit: None },
        session: "c3".into(),
        exec_timeout: Duration::from_secs(5),
        interrupts: &interrupts,
        files: &crate::exec::fs::LocalFs,
        // On a host the PATH check is the host's, so no kubectl is needed here.
        host: Some("kube-host"),
        user: Some("alice".into()),
        fleet: None,
    };
    let family = family(config, context.map(str::to_owned), Vec::new());
    let tool = family.members().find(|tool| tool.name() == "list_pods").unwrap();
    let mut state = RunState::default();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let effect = runtime.block_on(async {
        let mut sink = |_| {};
        let ctx = ToolContext {
            services: &services,
            state: &mut state,
            events: &mut sink,
            input: "pods?",
            model: crate::llm::ModelRef { client: &model, name: "m" },
        };
        tool.call("call_1", &Value::Null, ctx).await
    });
    let ToolEffect::Observe(observation) = effect else { panic!("expected an observation, got {effect:?}") };
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap_or_default();
    (executor.ran(), observation.status, observation.text, audit)
}

#[test]
fn a_registry_with_a_context_runs_every_line_there_and_refuses_one_not_listed() {
    let listed = KubeConfig { contexts: vec!["prod".into()], ..KubeConfig::default() };
    let (ran, status, text, audit) = call_pods(listed.clone(), Some("prod"));
    assert_eq!(ran, ["kubectl --context=prod get pods -n default -o wide --request-timeout=30s"]);
    assert_eq!(status, ObservationStatus::Ran, "{text}");
    assert!(audit.contains("| USER: alice | HOST: kube-host | CMD: \"kubectl --context=prod get pods"), "{audit}");

    let (ran, status, text, audit) = call_pods(listed.clone(), Some("dev"));
    assert!(ran.is_empty(), "a refused context never reaches kubectl: {ran:?}");
    assert_eq!(status, ObservationStatus::DeniedByPolicy);
    assert!(text.starts_with("no permission: the kube context `dev` is not one opsai may use"), "{text}");
    assert!(audit.contains("CMD: \"kubectl --context=dev get pods") && audit.contains("CONFIRMED: no"), "{audit}");

    let (ran, status, _, _) = call_pods(KubeConfig::default(), Some("x;id"));
    assert_eq!((ran.len(), status), (0, ObservationStatus::DeniedByPolicy));
    // No context: kubectl's current one, whatever the list says (the terminal's case).
    let (ran, _, _, _) = call_pods(listed, None);
    assert_eq!(ran, ["kubectl get pods -n default -o wide --request-timeout=30s"]);
}

/// `--contexts`: contexts whose result is the same are one group, the largest first; the call's
/// own id names the observation.
#[test]
fn results_per_context_are_grouped() {
    let ran = |code: i32, text: &str| Observation {
        call_id: "x".into(),
        status: ObservationStatus::Ran,
        exit_code: Some(code),
        text: text.into(),
        truncated_bytes: 0,
        duration_ms: 5,
    };
    let results = vec![
        ("dev".to_owned(), ran(1, "[ERROR]: exit 1 · 4 ms\nerror: no pods")),
        ("prod-eu".to_owned(), ran(0, "exit 0 · 3 ms\nweb-1 Running")),
        ("prod-us".to_owned(), ran(0, "exit 0 · 1.2 s\nweb-1 Running")),
    ];
    let observation = super::grouped("call-7", &results);
    assert_eq!(observation.call_id, "call-7");
    assert_eq!(observation.exit_code, Some(1), "a failing context is not hidden behind the others");
    let text = &observation.text;
    assert!(text.starts_with("ran on 3 kube contexts, 2 distinct results"), "{text}");
    let both = text.find("## contexts prod-eu, prod-us\nexit 0\nweb-1 Running").expect(text);
    let dev = text.find("## context dev\n[ERROR]: exit 1\nerror: no pods").expect(text);
    assert!(both < dev, "{text}");
    assert_eq!(observation.duration_ms, 15);
}
