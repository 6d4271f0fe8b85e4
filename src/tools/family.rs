//! One schema for a family of tools (containers, kube, the structured tools): the model picks a
//! member with `action`, so a small model reads one short schema instead of several. Each member
//! stays a tool of its own under its old name (`list_containers`, `get_pod_logs`, `grep`), which
//! the registry still answers to, so conversations from before the fold and models that call the
//! old names keep working; events and audit lines name the member, as they always did.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Tool, ToolContext, ToolEffect, invalid_arguments};
use crate::protocol::ToolSpec;

pub struct Family {
    name: &'static str,
    description: &'static str,
    /// The members' arguments, all optional in the schema: each member checks its own.
    parameters: Value,
    members: Vec<(&'static str, Arc<dyn Tool>)>,
}

impl Family {
    /// `parameters` is a JSON object of properties; `action` is added first.
    pub fn new(
        name: &'static str,
        description: &'static str,
        parameters: Value,
        members: Vec<(&'static str, Arc<dyn Tool>)>,
    ) -> Self {
        Self { name, description, parameters, members }
    }

    /// The members under their own (old) names.
    pub(crate) fn members(&self) -> impl Iterator<Item = Arc<dyn Tool>> + '_ {
        self.members.iter().map(|(_, tool)| tool.clone())
    }

    fn actions(&self) -> Vec<&'static str> {
        self.members.iter().map(|(action, _)| *action).collect()
    }
}

impl Tool for Family {
    fn name(&self) -> &'static str {
        self.name
    }

    fn spec(&self) -> ToolSpec {
        let mut properties = Map::new();
        properties.insert("action".into(), json!({"type": "string", "enum": self.actions()}));
        if let Value::Object(more) = &self.parameters {
            properties.extend(more.iter().map(|(key, value)| (key.clone(), value.clone())));
        }
        ToolSpec {
            name: self.name.into(),
            description: self.description.into(),
            parameters: json!({"type": "object", "properties": properties, "required": ["action"]}),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        // A model may name the member itself as the action (`grep` or `list_containers`).
        let member = self.members.iter().find(|(name, tool)| *name == action || tool.name() == action);
        match member {
            Some((_, tool)) => tool.call(id, args, ctx),
            None => {
                let message = format!("`action` must be one of {}, got {:?}", self.actions().join(", "), action);
                Box::pin(async move { ToolEffect::Observe(invalid_arguments(id, message)) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Offer, Registry, ToolsConfig};
    use crate::context::{DockerStatus, EnvContext};

    fn config(offer: Offer) -> ToolsConfig {
        ToolsConfig {
            files: crate::config::FilesConfig::default(),
            backups: crate::store::backups::Backups::new(std::env::temp_dir().join("opsai-family-test-backups")),
            kube: crate::config::KubeConfig::default(),
            kube_context: None,
            kube_contexts: Vec::new(),
            offer,
        }
    }

    const FAMILIES: [&str; 4] = ["cli", "file", "container", "kube"];

    #[test]
    fn families_are_offered_by_relevance_and_every_name_still_answers() {
        let all = Registry::agent(config(Offer::ALL));
        assert_eq!(all.names(), ["run_command", "analyze", "cli", "file", "container", "kube"]);
        let plain = Registry::agent(config(Offer { containers: false, kube: false }));
        assert_eq!(plain.names(), ["run_command", "analyze", "cli", "file"]);
        assert_eq!(FAMILIES.iter().map(|family| crate::protocol::former_tool_names(family).len()).sum::<usize>(), 20);
        for registry in [&all, &plain] {
            let old = FAMILIES.iter().flat_map(|family| crate::protocol::former_tool_names(family)).copied();
            for name in old.chain(FAMILIES) {
                let tool = registry.get(name).unwrap_or_else(|| panic!("{name} answers"));
                assert_eq!(tool.name(), name);
            }
            assert!(registry.get("delete_everything").is_none());
        }
    }

    #[test]
    fn old_names_are_the_members_names() {
        let config = config(Offer::ALL);
        let families = [
            super::super::structured::family(),
            super::super::files::family(config.files, config.backups),
            super::super::containers::family(),
            super::super::kube::family(config.kube, None, Vec::new()),
        ];
        for family in families {
            let members: Vec<&str> = family.members().map(|tool| tool.name()).collect();
            assert_eq!(
                members,
                crate::protocol::former_tool_names(super::Tool::name(&family)),
                "{}",
                super::Tool::name(&family)
            );
        }
    }

    #[test]
    fn a_family_schema_has_an_action_enum_and_nothing_required_but_it() {
        let registry = Registry::agent(config(Offer::ALL));
        let kube = registry.specs().into_iter().find(|spec| spec.name == "kube").unwrap();
        assert_eq!(kube.parameters["required"], serde_json::json!(["action"]));
        assert_eq!(
            kube.parameters["properties"]["action"]["enum"],
            serde_json::json!(["pods", "logs", "describe", "deployments", "events", "configmap", "nodes"])
        );
        assert!(kube.description.contains("Secrets"), "the refusals are told: {}", kube.description);
    }

    #[test]
    fn containers_need_a_daemon_that_answered_and_kube_needs_kubectl() {
        let mut context = EnvContext {
            os: "Debian 12".to_owned(),
            kernel: String::new(),
            arch: "x86_64".to_owned(),
            shell: "bash".to_owned(),
            cwd: "/srv".into(),
            user: "ops".to_owned(),
            hostname: String::new(),
            home: None,
            git: None,
            tools: vec![("docker".to_owned(), true), ("kubectl".to_owned(), true)],
            docker: DockerStatus::Running { summary: "server 27.1.1".to_owned() },
            extra: Vec::new(),
        };
        assert_eq!(Offer::for_context(&context), Offer::ALL);
        context.tools = vec![("docker".to_owned(), true), ("kubectl".to_owned(), false)];
        for docker in [
            DockerStatus::Checking,
            DockerStatus::NotInstalled,
            DockerStatus::Unreachable { reason: "down".to_owned() },
        ] {
            context.docker = docker;
            assert_eq!(Offer::for_context(&context), Offer { containers: false, kube: false });
        }
    }
}
