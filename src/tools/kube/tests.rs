use serde_json::{Value, json};

use super::blacklist::refusal;
use super::{Kube, build};
use crate::config::KubeConfig;
use crate::policy::{PolicyConfig, assess, quote_word};
use crate::protocol::Risk;

fn line(tool: Kube, args: Value) -> String {
    let plan = build(tool, &args, &KubeConfig::default()).unwrap();
    plan.argv.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
}

/// The refusal for a call, with the default blacklist.
fn refused(tool: Kube, args: Value) -> Option<String> {
    refused_with(tool, args, &KubeConfig::default())
}

fn refused_with(tool: Kube, args: Value, config: &KubeConfig) -> Option<String> {
    let plan = build(tool, &args, config).unwrap_or_else(|e| panic!("{tool:?} {args}: {e}"));
    refusal(tool, &plan, config)
}

const EXCLUDED: &str =
    "'metadata.namespace!=kube-system,metadata.namespace!=kube-public,metadata.namespace!=kube-node-lease'";

#[test]
fn every_tool_builds_its_kubectl_line_and_it_is_safe() {
    let t = "--request-timeout=30s";
    let cases = [
        (Kube::ListPods, json!({}), format!("kubectl get pods -n default -o wide {t}")),
        (
            Kube::ListPods,
            json!({"namespace": "prod", "selector": "app=web,tier!=db"}),
            format!("kubectl get pods -n prod -l 'app=web,tier!=db' -o wide {t}"),
        ),
        (
            Kube::ListPods,
            json!({"namespace": "all"}),
            format!("kubectl get pods --all-namespaces --field-selector {EXCLUDED} -o wide {t}"),
        ),
        (
            Kube::PodLogs,
            json!({"name": "web-1", "namespace": "prod"}),
            format!("kubectl logs web-1 -n prod --tail=100 {t}"),
        ),
        (
            Kube::PodLogs,
            json!({"name": "pod/web-1", "container": "app", "tail": 5000, "previous": true}),
            format!("kubectl logs web-1 -n default -c app --tail=1000 --previous {t}"),
        ),
        (
            Kube::DescribePod,
            json!({"name": "web-1", "namespace": "prod"}),
            format!("kubectl describe pod web-1 -n prod {t}"),
        ),
        (Kube::DeploymentStatus, json!({"namespace": "prod"}), format!("kubectl get deployments -n prod -o wide {t}")),
        (
            Kube::DeploymentStatus,
            json!({"namespace": "*"}),
            format!("kubectl get deployments --all-namespaces --field-selector {EXCLUDED} -o wide {t}"),
        ),
        (Kube::DeploymentStatus, json!({"name": "api"}), format!("kubectl describe deployment api -n default {t}")),
        (
            Kube::Events,
            json!({"namespace": "prod"}),
            format!("kubectl get events -n prod --sort-by=.metadata.creationTimestamp {t}"),
        ),
        (
            Kube::Events,
            json!({"namespace": "prod", "for_object": "pod/web-1", "field_selector": "type=Warning"}),
            format!(
                "kubectl get events -n prod --field-selector involvedObject.kind=Pod,involvedObject.name=web-1,type=Warning \
                 --sort-by=.metadata.creationTimestamp {t}"
            ),
        ),
        (
            Kube::Events,
            json!({"namespace": "all", "field_selector": "type=Warning"}),
            format!(
                "kubectl get events --all-namespaces --field-selector 'type=Warning,metadata.namespace!=kube-system,\
                 metadata.namespace!=kube-public,metadata.namespace!=kube-node-lease' \
                 --sort-by=.metadata.creationTimestamp {t}"
            ),
        ),
        (
            Kube::ConfigMap,
            json!({"name": "app.config", "namespace": "prod"}),
            format!("kubectl get configmap app.config -n prod -o yaml {t}"),
        ),
        (Kube::ConfigMap, json!({"name": "cm/app"}), format!("kubectl get configmap app -n default -o yaml {t}")),
        (Kube::NodeStatus, json!({}), format!("kubectl get nodes -o wide {t}")),
    ];
    let policy = PolicyConfig::default();
    for (tool, args, expected) in cases {
        let text = line(tool, args);
        assert_eq!(text, expected);
        let assessment = assess(&text, &policy);
        assert_eq!(assessment.risk, Risk::Safe, "{text}: {:?}", assessment.reasons);
    }
    let node = line(Kube::NodeStatus, json!({"name": "node-1"}));
    assert!(node.starts_with("kubectl get node node-1 -o 'jsonpath={.metadata.name}"), "{node}");
    assert!(node.ends_with(&format!("{{end}}' {t}")), "{node}");
    assert_eq!(assess(&node, &policy).risk, Risk::Safe, "{node}");
}

#[test]
fn every_forbidden_namespace_is_refused_for_every_namespaced_tool() {
    let calls: [(Kube, Value); 6] = [
        (Kube::ListPods, json!({})),
        (Kube::PodLogs, json!({"name": "web"})),
        (Kube::DescribePod, json!({"name": "web"})),
        (Kube::DeploymentStatus, json!({})),
        (Kube::Events, json!({})),
        (Kube::ConfigMap, json!({"name": "coredns"})),
    ];
    for namespace in ["kube-system", "kube-public", "kube-node-lease"] {
        for (tool, args) in &calls {
            let mut args = args.clone();
            args["namespace"] = json!(namespace);
            let reason = refused(*tool, args.clone()).unwrap_or_else(|| panic!("{tool:?} {args} not refused"));
            assert!(reason.contains(namespace) && reason.contains("kube.forbidden_namespaces"), "{reason}");
        }
    }
    assert_eq!(refused(Kube::ListPods, json!({"namespace": "prod"})), None);
    // A namespace the user added is refused too, the default one included.
    let config = KubeConfig { forbidden_namespaces: vec!["default".into()], ..KubeConfig::default() };
    assert!(refused_with(Kube::ListPods, json!({}), &config).is_some());
}

#[test]
fn all_namespaces_leaves_out_the_forbidden_ones_in_the_request_itself() {
    for tool in [Kube::ListPods, Kube::DeploymentStatus, Kube::Events] {
        let args = json!({"namespace": "all"});
        assert_eq!(refused(tool, args.clone()), None, "{tool:?}");
        assert!(line(tool, args).contains(EXCLUDED), "{tool:?}");
    }
    let config = KubeConfig { forbidden_namespaces: vec![], ..KubeConfig::default() };
    let plan = build(Kube::ListPods, &json!({"namespace": "ALL"}), &config).unwrap();
    assert!(!plan.argv.iter().any(|w| w == "--field-selector"), "{:?}", plan.argv);
    for tool in [Kube::PodLogs, Kube::DescribePod, Kube::ConfigMap] {
        assert!(build(tool, &json!({"name": "x", "namespace": "all"}), &KubeConfig::default()).is_err(), "{tool:?}");
    }
}

#[test]
fn secrets_are_refused_however_they_are_spelled() {
    for name in ["secret/db", "secrets/db", "Secret/db", "SECRETS.v1/db"] {
        let reason = refused(Kube::ConfigMap, json!({"name": name, "namespace": "prod"})).unwrap();
        assert!(reason.contains("secret") && reason.contains("kube.forbidden_resources"), "{name}: {reason}");
        // What the refusal shows is what was asked for, not a ConfigMap read.
        assert!(line(Kube::ConfigMap, json!({"name": name})).starts_with("kubectl get secret db"), "{name}");
    }
    assert!(refused(Kube::Events, json!({"for_object": "secret/db"})).is_some());
    assert!(refused(Kube::Events, json!({"field_selector": "involvedObject.kind=Secret"})).is_some());
    assert!(refused(Kube::Events, json!({"field_selector": "involvedObject.kind==secret"})).is_some());
    assert_eq!(refused(Kube::Events, json!({"field_selector": "involvedObject.kind!=Secret"})), None);
    // Another kind is not a ConfigMap: an argument error, not a read of something else.
    assert!(build(Kube::ConfigMap, &json!({"name": "deployment/api"}), &KubeConfig::default()).is_err());
    // A kind the user forbids is refused like Secrets.
    let config = KubeConfig { forbidden_resources: vec!["ConfigMaps".into()], ..KubeConfig::default() };
    assert!(refused_with(Kube::ConfigMap, json!({"name": "app"}), &config).is_some());
    let config = KubeConfig { forbidden_resources: vec!["nodes".into()], ..KubeConfig::default() };
    assert!(refused_with(Kube::NodeStatus, json!({}), &config).is_some());
}

#[test]
fn forbidden_actions_cover_the_verb_and_the_tool() {
    // No tool can express a default forbidden action: every verb is a read.
    let defaults = KubeConfig::default().forbidden_actions;
    for tool in Kube::ALL {
        let plan = build(tool, &json!({"name": "x"}), &KubeConfig::default()).unwrap();
        let words = plan.argv.join(" ");
        for action in &defaults {
            assert!(!plan.argv.contains(action) && !words.contains(&format!("kubectl {action}")), "{tool:?} {action}");
        }
    }
    for (action, tool) in [
        ("logs", Kube::PodLogs),
        ("describe", Kube::DescribePod),
        ("get", Kube::ListPods),
        ("get_configmap", Kube::ConfigMap),
        (" Get_Node_Status ", Kube::NodeStatus),
    ] {
        let config = KubeConfig { forbidden_actions: vec![action.into()], ..KubeConfig::default() };
        let reason = refused_with(tool, json!({"name": "x", "namespace": "prod"}), &config);
        assert!(reason.is_some_and(|r| r.contains("kube.forbidden_actions")), "{action} {tool:?}");
    }
}

#[test]
fn no_value_becomes_an_option_or_code() {
    let bad_values =
        ["-f", "--all-namespaces", "-n=kube-system", "x; rm -rf /", "$(id)", "`id`", "a b", "x|sh", "../x", ""];
    for bad in bad_values {
        for (tool, key, required) in [
            (Kube::PodLogs, "name", true),
            (Kube::DescribePod, "name", true),
            (Kube::ConfigMap, "name", true),
            (Kube::DeploymentStatus, "namespace", false),
            (Kube::ListPods, "namespace", false),
            (Kube::NodeStatus, "name", false),
            (Kube::PodLogs, "container", false),
            (Kube::Events, "for_object", false),
        ] {
            if bad.is_empty() && !required {
                continue; // a blank optional value is just absent
            }
            let mut args = json!({"name": "web"});
            args[key] = json!(bad);
            assert!(build(tool, &args, &KubeConfig::default()).is_err(), "{tool:?} {key}={bad:?}");
        }
    }
    for bad in ["-o=json", "app=web; reboot", "$(id)", "a=`id`"] {
        assert!(build(Kube::ListPods, &json!({"selector": bad}), &KubeConfig::default()).is_err(), "{bad:?}");
        assert!(build(Kube::Events, &json!({"field_selector": bad}), &KubeConfig::default()).is_err(), "{bad:?}");
    }
    let kube = KubeConfig::default();
    assert!(build(Kube::PodLogs, &json!({"name": "web", "tail": 0}), &kube).is_err());
    assert!(build(Kube::PodLogs, &json!({"name": "web", "tail": "all"}), &kube).is_err());
    assert!(build(Kube::PodLogs, &json!({"name": "web", "previous": "yes"}), &kube).is_err());
    assert!(build(Kube::PodLogs, &json!({"name": "deploy/web"}), &kube).is_err());
    assert!(build(Kube::PodLogs, &json!({}), &kube).is_err());
    assert!(build(Kube::Events, &json!({"for_object": "widget/x"}), &kube).is_err());
    assert!(build(Kube::ListPods, &json!("pods"), &kube).is_err());
}

#[test]
fn specs_say_what_is_refused() {
    for tool in Kube::ALL {
        let spec = tool.spec();
        assert_eq!(spec.name, tool.name());
        assert!(spec.description.contains("Read-only") && spec.description.contains("Secrets"), "{}", spec.description);
    }
}
