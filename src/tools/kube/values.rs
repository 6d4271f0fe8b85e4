//! What the model may put into a kubectl argv: Kubernetes names (DNS-1123), label and field
//! selectors, resource kinds. Every value is checked here before it becomes a word, so none can be an
//! option (`-…`) or carry shell syntax; quoting is the second line of defence, not the first.

use serde_json::Value;

/// A namespace the model means as "every namespace" (`list_pods`, `get_events`, deployments).
pub(crate) const ALL_NAMESPACES: [&str; 2] = ["all", "*"];

/// An optional string argument: absent, null and blank are `None`; any other type is an error.
pub fn text(args: &Value, name: &str) -> Result<Option<String>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
        Some(other) => Err(format!("`{name}` must be a string, got {other}")),
    }
}

/// A required string argument.
pub fn required(args: &Value, name: &str) -> Result<String, String> {
    text(args, name)?.ok_or_else(|| format!("missing required argument `{name}`"))
}

/// DNS-1123 label (namespaces, containers): `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub(crate) fn label(what: &str, value: &str) -> Result<String, String> {
    let ok = value.len() <= 63 && dns_part(value);
    if ok { Ok(value.to_owned()) } else { Err(invalid_name(what, value, "a DNS-1123 label (a-z, 0-9, '-')")) }
}

/// DNS-1123 subdomain (pods, deployments, configmaps, nodes): labels joined by dots, at most 253.
pub(crate) fn subdomain(what: &str, value: &str) -> Result<String, String> {
    let ok = value.len() <= 253 && value.split('.').all(dns_part);
    if ok { Ok(value.to_owned()) } else { Err(invalid_name(what, value, "a DNS-1123 name (a-z, 0-9, '-', '.')")) }
}

fn dns_part(part: &str) -> bool {
    let bytes = part.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    bytes.first().is_some_and(alnum) && bytes.last().is_some_and(alnum) && bytes.iter().all(|b| alnum(b) || *b == b'-')
}

fn invalid_name(what: &str, value: &str, rule: &str) -> String {
    if value.starts_with('-') {
        return format!("`{what}` must not start with '-' (it would be read as an option), got {value:?}");
    }
    format!("`{what}` must be {rule}, got {value:?}")
}

/// A label selector (`app=web,tier!=db`, `env in (prod,stage)`): the characters of the selector
/// grammar only, never a leading `-`.
pub(crate) fn label_selector(value: &str) -> Result<String, String> {
    selector("selector", value, |c| c.is_ascii_alphanumeric() || "-_./=!,() ".contains(c))
}

/// A field selector (`involvedObject.name=web,type!=Normal`): no spaces, no parentheses.
pub fn field_selector(value: &str) -> Result<String, String> {
    selector("field_selector", value, |c| c.is_ascii_alphanumeric() || "-_./=!,".contains(c))
}

fn selector(what: &str, value: &str, allowed: impl Fn(char) -> bool) -> Result<String, String> {
    if value.starts_with('-') {
        return Err(format!("`{what}` must not start with '-' (it would be read as an option), got {value:?}"));
    }
    if value.len() > 512 || !value.chars().all(allowed) {
        return Err(format!("`{what}` has characters a Kubernetes selector does not use: {value:?}"));
    }
    Ok(value.to_owned())
}

/// A resource kind in one canonical form (`Secrets`, `secret`, `secrets.v1` → `secret`; `cm` →
/// `configmap`), so the blacklist compares like with like whatever spelling the model or the user's
/// config uses.
pub(crate) fn canonical_kind(word: &str) -> String {
    let lower = word.trim().to_ascii_lowercase();
    let base = lower.split('.').next().unwrap_or("");
    let alias = KINDS.iter().find(|(canonical, _, aliases)| {
        *canonical == base || aliases.contains(&base) || base.strip_suffix('s') == Some(canonical)
    });
    match alias {
        Some((canonical, _, _)) => (*canonical).to_owned(),
        None if base.ends_with('s') && !base.ends_with("ss") => base[..base.len() - 1].to_owned(),
        None => base.to_owned(),
    }
}

/// The `Kind` an event's `involvedObject.kind` carries for a canonical kind, if known.
pub(crate) fn event_kind(canonical: &str) -> Option<&'static str> {
    KINDS.iter().find(|(c, _, _)| *c == canonical).map(|(_, kind, _)| *kind)
}

/// canonical, `Kind`, kubectl's short names and plurals that do not just add an `s`.
const KINDS: &[(&str, &str, &[&str])] = &[
    ("pod", "Pod", &["po"]),
    ("deployment", "Deployment", &["deploy"]),
    ("replicaset", "ReplicaSet", &["rs"]),
    ("statefulset", "StatefulSet", &["sts"]),
    ("daemonset", "DaemonSet", &["ds"]),
    ("job", "Job", &[]),
    ("cronjob", "CronJob", &["cj"]),
    ("node", "Node", &["no"]),
    ("service", "Service", &["svc"]),
    ("configmap", "ConfigMap", &["cm"]),
    ("secret", "Secret", &[]),
    ("event", "Event", &["ev"]),
    ("persistentvolumeclaim", "PersistentVolumeClaim", &["pvc"]),
    ("ingress", "Ingress", &["ing", "ingresses"]),
    ("horizontalpodautoscaler", "HorizontalPodAutoscaler", &["hpa"]),
    ("serviceaccount", "ServiceAccount", &["sa"]),
];

/// Splits `kind/name` (as kubectl writes it); a bare name has no kind.
pub(crate) fn split_kind(value: &str) -> (Option<String>, &str) {
    match value.split_once('/') {
        Some((kind, name)) => (Some(canonical_kind(kind)), name),
        None => (None, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_dns_1123() {
        for good in ["web", "web-7d9f", "a", "app.config", "x1"] {
            assert!(subdomain("name", good).is_ok(), "{good}");
        }
        for bad in ["-f", "--all", "Web", "web-", "a..b", "x; rm -rf /", "$(id)", "a b", "../x", "web/x", ""] {
            assert!(subdomain("name", bad).is_err(), "{bad:?}");
        }
        assert!(label("namespace", "prod").is_ok());
        assert!(label("namespace", "a.b").is_err(), "a namespace is a label, no dots");
        assert!(label("namespace", &"a".repeat(64)).is_err());
        assert!(subdomain("name", "-n").unwrap_err().contains("must not start with '-'"));
    }

    #[test]
    fn selectors_keep_to_their_grammar() {
        assert!(label_selector("app=web,tier!=db").is_ok());
        assert!(label_selector("env in (prod,stage)").is_ok());
        assert!(field_selector("involvedObject.name=web,type!=Normal").is_ok());
        for bad in ["-o=json", "app=web; reboot", "a=`id`", "a=$(id)", "a|b", "a>b", "a'b", "a\nb"] {
            assert!(label_selector(bad).is_err(), "{bad:?}");
            assert!(field_selector(bad).is_err(), "{bad:?}");
        }
        assert!(field_selector("a = b").is_err());
    }

    #[test]
    fn kinds_have_one_spelling() {
        for (word, canonical) in [
            ("Secret", "secret"),
            ("secrets", "secret"),
            ("SECRETS.v1", "secret"),
            ("cm", "configmap"),
            ("configmaps", "configmap"),
            ("deploy", "deployment"),
            ("ingresses", "ingress"),
            ("widgets", "widget"),
        ] {
            assert_eq!(canonical_kind(word), canonical, "{word}");
        }
        assert_eq!(event_kind("deployment"), Some("Deployment"));
        assert_eq!(split_kind("Secret/x"), (Some("secret".into()), "x"));
        assert_eq!(split_kind("x"), (None, "x"));
    }
}
