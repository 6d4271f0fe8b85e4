//! Built-in analysis templates and placeholder substitution.
//!
//! A template is a list of commands with `{name}`, `{port}`, `{pid}` and `{path}` placeholders. The
//! target is substituted as one shell word (single-quoted), so a target named `x; rm -rf /` stays an
//! argument. Each substituted command is assessed by the policy; anything not Safe is dropped and
//! reported, never run.

use crate::policy::{PolicyConfig, assess};
use crate::protocol::Risk;

/// The built-in template for `kind`, if any (`container`, `port`, `process`, `file`, `service`).
pub fn builtin(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "container" | "docker" => &["docker inspect {name}", "docker logs --tail 20 {name}"],
        "port" => &["ss -ltnup 'sport = :{port}'", "lsof -nP -i :{port}"],
        "process" | "pid" => &["ps -o pid,ppid,user,etime,stat,cmd -p {pid}", "ls -l /proc/{pid}/cwd"],
        "file" => &["file {path}", "ls -la {path}", "stat {path}"],
        "service" => &["systemctl status {name} --no-pager", "journalctl -u {name} -n 20 --no-pager"],
        _ => return None,
    })
}

/// One word for POSIX shells: single quotes, with `'` written as `'\''`.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `command` with every placeholder replaced by the quoted target. A placeholder already inside single
/// quotes in the template (`'sport = :{port}'`) gets the target's quoted form spliced in by closing
/// and reopening the quotes, so the result is still one word.
pub fn substitute(command: &str, target: &str) -> String {
    let mut out = String::with_capacity(command.len() + target.len());
    let mut in_single = false;
    let mut rest = command;
    while let Some(c) = rest.chars().next() {
        let placeholder = ["{name}", "{port}", "{pid}", "{path}"].into_iter().find(|p| rest.starts_with(p));
        if let Some(placeholder) = placeholder {
            if in_single {
                out.push('\'');
                out.push_str(&quote(target));
                out.push('\'');
            } else {
                out.push_str(&quote(target));
            }
            rest = &rest[placeholder.len()..];
            continue;
        }
        if c == '\'' {
            in_single = !in_single;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The commands to run for `target`, and the ones dropped with why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub commands: Vec<String>,
    pub dropped: Vec<String>,
}

/// Substitutes `target` into each template command and keeps the Safe ones.
pub fn plan(template: &[String], target: &str, policy: &PolicyConfig) -> Plan {
    let mut plan = Plan::default();
    for command in template {
        let concrete = substitute(command, target);
        let assessment = assess(&concrete, policy);
        if assessment.risk == Risk::Safe && !assessment.changed_by_sanitizer {
            plan.commands.push(concrete);
        } else {
            plan.dropped.push(format!("{concrete} (not read-only: {})", assessment.risk.as_str()));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(commands: &[&str]) -> Vec<String> {
        commands.iter().map(|c| (*c).to_owned()).collect()
    }

    #[test]
    fn builtin_container_template_substitutes_and_is_safe() {
        let plan = plan(&owned(builtin("container").unwrap()), "compoder-mongo", &PolicyConfig::default());
        assert_eq!(plan.commands, ["docker inspect 'compoder-mongo'", "docker logs --tail 20 'compoder-mongo'"]);
        assert!(plan.dropped.is_empty());
    }

    #[test]
    fn every_builtin_is_safe_with_a_plain_target() {
        for (kind, target) in [("port", "8080"), ("process", "1234"), ("file", "/etc/hosts"), ("service", "nginx")] {
            let plan = plan(&owned(builtin(kind).unwrap()), target, &PolicyConfig::default());
            assert!(plan.dropped.is_empty(), "{kind}: {:?}", plan.dropped);
        }
    }

    #[test]
    fn injection_stays_one_argument() {
        let evil = "x; rm -rf /";
        assert_eq!(substitute("docker inspect {name}", evil), "docker inspect 'x; rm -rf /'");
        let quoted = substitute("docker inspect {name}", "x'; touch pwned; '");
        let assessment = assess(&quoted, &PolicyConfig::default());
        assert_eq!(assessment.commands.len(), 1, "{quoted}");
        assert_eq!(assessment.commands[0][2], "x'; touch pwned; '");
        let inside = substitute("ss -ltn 'sport = :{port}'", "1'; touch pwned; '");
        let assessment = assess(&inside, &PolicyConfig::default());
        assert_eq!(assessment.commands.len(), 1, "{inside}");
    }

    #[test]
    fn non_safe_commands_are_dropped_and_named() {
        let plan = plan(&owned(&["docker inspect {name}", "docker rm -f {name}"]), "web", &PolicyConfig::default());
        assert_eq!(plan.commands, ["docker inspect 'web'"]);
        assert_eq!(plan.dropped.len(), 1);
        assert!(plan.dropped[0].starts_with("docker rm -f 'web'"));
    }
}
