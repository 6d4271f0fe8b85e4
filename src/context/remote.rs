//! The environment of an SSH host, collected in one round trip: a POSIX `sh` script prints
//! `key=value` lines, [`parse`] turns them into an [`EnvContext`]. A host without some command just
//! leaves that line empty.

use std::path::PathBuf;

use super::{DockerStatus, EnvContext, TOOLS};

/// The script the login shell on the host runs (sh syntax; no bashisms, the host may lack bash).
pub fn script() -> String {
    let mut script = String::from(
        "os=''; if [ -r /etc/os-release ]; then . /etc/os-release; os=\"$PRETTY_NAME\"; fi; \
         echo \"os=${os:-$(uname -s)}\"; echo \"kernel=$(uname -sr)\"; echo \"arch=$(uname -m)\"; \
         echo \"shell=${SHELL##*/}\"; echo \"user=$(id -un)\"; echo \"hostname=$(uname -n)\"; \
         echo \"home=$HOME\"; echo \"cwd=$(pwd)\"; ",
    );
    for tool in TOOLS {
        script.push_str(&format!("command -v {tool} >/dev/null 2>&1 && echo 'tool={tool}'; "));
    }
    script.push_str(
        "if command -v docker >/dev/null 2>&1; then \
         d=$(docker info --format '{{.ServerVersion}} {{.Containers}} {{.ContainersRunning}}' 2>&1 | head -n 1); \
         echo \"docker=$d\"; fi",
    );
    script
}

/// The context from the script's output.
pub fn parse(output: &str) -> EnvContext {
    let mut context = EnvContext {
        os: String::new(),
        kernel: String::new(),
        arch: String::new(),
        shell: String::new(),
        cwd: PathBuf::from("/"),
        user: String::new(),
        hostname: String::new(),
        home: None,
        git: None,
        tools: Vec::new(),
        docker: DockerStatus::NotInstalled,
        extra: Vec::new(),
    };
    let mut found = Vec::new();
    for line in output.lines() {
        let Some((key, value)) = line.split_once('=') else { continue };
        let value = value.trim().to_owned();
        match key {
            "os" => context.os = value,
            "kernel" => context.kernel = value,
            "arch" => context.arch = value,
            "shell" => context.shell = value,
            "user" => context.user = value,
            "hostname" => context.hostname = value,
            "home" if !value.is_empty() => context.home = Some(PathBuf::from(value)),
            "cwd" if value.starts_with('/') => context.cwd = PathBuf::from(value),
            "tool" => found.push(value),
            "docker" => context.docker = docker(&value),
            _ => {}
        }
    }
    context.tools = TOOLS.iter().map(|tool| ((*tool).to_owned(), found.iter().any(|f| f == tool))).collect();
    context
}

fn docker(answer: &str) -> DockerStatus {
    let words: Vec<&str> = answer.split_whitespace().collect();
    match words.as_slice() {
        [version, total, running] if total.parse::<u32>().is_ok() && running.parse::<u32>().is_ok() => {
            DockerStatus::Running { summary: format!("server {version}, {total} containers ({running} running)") }
        }
        _ => DockerStatus::Unreachable { reason: answer.chars().take(200).collect() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_in_sh_and_its_output_parses() {
        let output = std::process::Command::new("sh").arg("-c").arg(script()).output().unwrap();
        assert!(output.status.success());
        let context = parse(&String::from_utf8_lossy(&output.stdout));
        assert!(!context.kernel.is_empty() && !context.user.is_empty() && !context.arch.is_empty(), "{context:?}");
        assert!(context.cwd.is_absolute());
        assert_eq!(context.tools.len(), TOOLS.len());
    }

    #[test]
    fn docker_answers_become_a_status() {
        let context = parse("os=Debian GNU/Linux 12\nuser=ops\nhome=/home/ops\ntool=docker\ndocker=27.1.1 3 1\n");
        assert_eq!(context.os, "Debian GNU/Linux 12");
        assert_eq!(context.home, Some(PathBuf::from("/home/ops")));
        assert!(context.tools.iter().any(|(tool, found)| tool == "docker" && *found));
        assert_eq!(context.docker, DockerStatus::Running { summary: "server 27.1.1, 3 containers (1 running)".into() });
        let down = parse("docker=Cannot connect to the Docker daemon\n");
        assert!(matches!(down.docker, DockerStatus::Unreachable { .. }));
    }
}
