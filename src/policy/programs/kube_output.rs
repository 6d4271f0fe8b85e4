//! What `kubectl get -o …` prints: whole objects of kinds that carry container environments or
//! config data (pods, workloads, ConfigMaps) print their literal values, so only names, wide
//! listings, or jsonpaths and columns that avoid those fields are read-only here.

use crate::policy::invocation::Invocation;
use crate::policy::word::Word;

/// Resource kinds whose full objects hold no container environment or credentials. ConfigMaps are
/// here: they are Kubernetes' store for configuration that is not secret (Secrets are for that),
/// and reading one is how an operator checks a deployment's settings.
const KUBE_PLAIN_KINDS: &[&str] = &[
    "configmap",
    "configmaps",
    "cm",
    "node",
    "nodes",
    "no",
    "namespace",
    "namespaces",
    "ns",
    "service",
    "services",
    "svc",
    "endpoints",
    "ep",
    "endpointslice",
    "endpointslices",
    "ingress",
    "ingresses",
    "ing",
    "ingressclass",
    "ingressclasses",
    "persistentvolume",
    "persistentvolumes",
    "pv",
    "persistentvolumeclaim",
    "persistentvolumeclaims",
    "pvc",
    "storageclass",
    "storageclasses",
    "sc",
    "event",
    "events",
    "ev",
    "networkpolicy",
    "networkpolicies",
    "netpol",
    "poddisruptionbudget",
    "poddisruptionbudgets",
    "pdb",
    "horizontalpodautoscaler",
    "horizontalpodautoscalers",
    "hpa",
    "limitrange",
    "limitranges",
    "limits",
    "resourcequota",
    "resourcequotas",
    "quota",
    "priorityclass",
    "priorityclasses",
    "pc",
    "lease",
    "leases",
    "role",
    "roles",
    "rolebinding",
    "rolebindings",
    "clusterrole",
    "clusterroles",
    "clusterrolebinding",
    "clusterrolebindings",
    "serviceaccount",
    "serviceaccounts",
    "sa",
    "customresourcedefinition",
    "customresourcedefinitions",
    "crd",
    "crds",
    "componentstatuses",
    "cs",
];

/// `kubectl get pod x -o yaml`: a full object (or a template over one) of a kind that can hold
/// container environments or config data prints their literal values.
pub(super) fn dumps_environment(rest: &Invocation) -> Option<String> {
    let output = rest.value_of(Some('o'), "--output").unwrap_or("");
    let template = rest.value_of(None, "--template").unwrap_or("");
    let picked = ["jsonpath=", "jsonpath-as-json=", "custom-columns=", "go-template=", "template="]
        .iter()
        .find_map(|prefix| output.strip_prefix(prefix));
    let full = match picked {
        Some(fields) => reaches_environment(fields),
        // `--template=…` with `-o go-template` (the default) or no `-o`.
        None if !template.is_empty() && matches!(output, "" | "go-template" | "template") => {
            reaches_environment(template)
        }
        None => !template.is_empty() || !matches!(output, "" | "wide" | "name"),
    };
    if !full {
        return None;
    }
    let plain = |word: &str| {
        word.split(',').all(|part| {
            let kind = part.split('/').next().unwrap_or(part);
            let kind = kind.split('.').next().unwrap_or(kind).to_ascii_lowercase();
            KUBE_PLAIN_KINDS.contains(&kind.as_str())
        })
    };
    let kind = resource_words(rest).first().map_or("", |w| w.text.as_str());
    (kind.is_empty() || !plain(kind)).then(|| {
        let what = if kind.is_empty() { "resource" } else { kind };
        format!(
            "prints whole {what} objects (-o {output}), whose environment values and config data can hold credentials"
        )
    })
}

/// The words after `get`/`describe` that name resources: neither options nor their values.
pub(super) fn resource_words<'a>(rest: &Invocation<'a>) -> Vec<&'a Word> {
    const VALUED: &[&str] = &[
        "-o", "-n", "-l", "-L", "-c", "-f", "-k", "--output", "--namespace", "--selector", "--field-selector",
        "--sort-by", "--label-columns", "--template", "--chunk-size", "--context", "-v", "--filename",
    ];
    let mut out = Vec::new();
    for (i, word) in rest.args.iter().enumerate() {
        if word.text == "--" {
            break;
        }
        let value = i > 0 && VALUED.contains(&rest.args[i - 1].text.as_str());
        if !word.text.starts_with('-') && !value {
            out.push(word);
        }
    }
    out
}

/// A jsonpath, column list or template that prints an environment, config data, annotations
/// (`last-applied-configuration` holds the whole spec) or an object that contains them.
fn reaches_environment(fields: &str) -> bool {
    const HOLDS: &[&str] = &["env", "envfrom", "data", "stringdata", "binarydata", "annotations"];
    const CONTAINS: &[&str] =
        &["", "items", "spec", "template", "containers", "initcontainers", "ephemeralcontainers", "metadata"];
    let lower = fields.to_ascii_lowercase();
    if lower.contains("{.}") || lower.contains("{@}") || lower.contains("{{.}}") || lower.contains("{{ . }}") {
        return true;
    }
    // Each `.a.b[*].c` path: its segments without subscripts.
    let paths = lower.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '[' | ']' | '*')));
    let mut previous = "";
    for token in paths.filter(|t| !t.is_empty()) {
        let path = token.rsplit(':').next().unwrap_or(token);
        if path.starts_with('.') {
            let segments: Vec<&str> = path.split('.').map(|s| s.split('[').next().unwrap_or(s)).collect();
            let last = segments.last().copied().unwrap_or("");
            // `{range .items[*]}…{end}` iterates; the fields inside say what is printed.
            let ranged = previous == "range";
            if segments.iter().any(|s| HOLDS.contains(s)) || !ranged && CONTAINS.contains(&last) {
                return true;
            }
        }
        previous = token;
    }
    false
}
