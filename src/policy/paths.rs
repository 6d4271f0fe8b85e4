//! What a path argument points at, for the rules that care: system locations, shell startup
//! files, SSH keys, secrets. Lexical only: the policy never touches the file system.

pub mod local;
pub mod metadata;

/// Where a written or deleted path lands, when that matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sensitive {
    /// `/` or `~` themselves (or everything under them, via `/*`).
    Root,
    /// A block/char device or kernel interface (`/dev/sda`, `/proc/sysrq-trigger`).
    Device,
    /// `/etc`, `/usr`, `/boot`, … : system-wide.
    System,
    /// Logs and shell history: wiping them hides what happened.
    Logs,
    /// Shell startup files: run at every login.
    ShellRc,
    /// `~/.ssh`: keys and authorized_keys.
    Ssh,
    /// opsai's own settings, policy, audit log and conversations: the model must not change them.
    Opsai,
}

impl Sensitive {
    pub fn describe(self) -> &'static str {
        match self {
            Sensitive::Root => "the root or home directory itself",
            Sensitive::Device => "a device",
            Sensitive::System => "a system path",
            Sensitive::Logs => "logs or shell history",
            Sensitive::ShellRc => "a shell startup file",
            Sensitive::Ssh => "~/.ssh",
            Sensitive::Opsai => "opsai's own settings, audit log or conversations",
        }
    }
}

const SYSTEM_DIRS: &[&str] = &[
    "/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/root", "/var/lib",
    "/var/spool", "/sys", "/snap", "/System", "/Library",
];
const DEVICE_DIRS: &[&str] = &["/dev", "/proc", "/sys"];
/// Where opsai keeps its state by default (`~/.opsai`, or the XDG directories); an `OPSAI_HOME`
/// elsewhere is not known to a lexical check, the sandbox and the file tools guard it.
const OPSAI_DIRS: &[&str] =
    &["~/.opsai", "~/.config/opsai", "~/.local/share/opsai", "~/.local/state/opsai", "~/.cache/opsai", "/etc/opsai"];
const HARMLESS_DEVICES: &[&str] =
    &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom"];
const SHELL_RC: &[&str] = &[
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin",
    ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc", "config.fish", ".envrc",
];
const HISTORY: &[&str] = &[".bash_history", ".zsh_history", ".history", "fish_history", ".python_history", ".lesshst"];

/// Collapses `.`, `..` and repeated slashes lexically: `/tmp/../etc//passwd` → `/etc/passwd`.
/// `$HOME` has already become `~` in words.
pub(crate) fn normalize(path: &str) -> String {
    let path = path.strip_prefix("file://").unwrap_or(path);
    let (prefix, rest) = if let Some(rest) = path.strip_prefix('/') {
        ("/", rest)
    } else if path == "~" || path.starts_with("~/") {
        ("~/", path.get(2..).unwrap_or(""))
    } else {
        ("", path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if prefix.is_empty() {
                    parts.push("..");
                }
            }
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match prefix {
        "/" => format!("/{joined}"),
        "~/" if joined.is_empty() => "~".to_owned(),
        "~/" => format!("~/{joined}"),
        _ if joined.is_empty() => ".".to_owned(),
        _ => joined,
    }
}

fn under(path: &str, dir: &str) -> bool {
    path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// Classifies a path that is about to be written, truncated, deleted or re-permissioned.
pub(crate) fn sensitive(raw: &str) -> Option<Sensitive> {
    let path = normalize(raw);
    let base = path.rsplit('/').next().unwrap_or(&path);
    if matches!(path.as_str(), "/" | "~" | "/*" | "~/*" | "/.*" | "~/.*") {
        return Some(Sensitive::Root);
    }
    if HARMLESS_DEVICES.contains(&path.as_str()) || path.starts_with("/dev/fd/") {
        return None;
    }
    if DEVICE_DIRS.iter().any(|dir| under(&path, dir)) {
        return Some(Sensitive::Device);
    }
    if under(&path, "/var/log") || under(&path, "/var/audit") || HISTORY.contains(&base) {
        return Some(Sensitive::Logs);
    }
    if under(&path, "~/.ssh") || under(&path, "/root/.ssh") || base == "authorized_keys" {
        return Some(Sensitive::Ssh);
    }
    if OPSAI_DIRS.iter().any(|dir| under(&path, dir)) {
        return Some(Sensitive::Opsai);
    }
    if SHELL_RC.contains(&base) || under(&path, "~/.config/fish") || under(&path, "~/.oh-my-zsh") {
        return Some(Sensitive::ShellRc);
    }
    if SYSTEM_DIRS.iter().any(|dir| under(&path, dir)) {
        return Some(Sensitive::System);
    }
    None
}

/// True when reading this path would show secret material (the output goes to the model provider).
pub fn secret(raw: &str) -> bool {
    let path = normalize(raw);
    let base = path.rsplit('/').next().unwrap_or(&path);
    let lower = base.to_ascii_lowercase();
    let private_key_name =
        ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"].iter().any(|key| lower == *key);
    let key_extension = [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".asc", ".gpg", ".kdbx"]
        .iter()
        .any(|ext| lower.ends_with(ext))
        && !lower.ends_with(".pub.asc");
    let secret_file = [
        ".env", ".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".my.cnf", "credentials",
        "credentials.json", "credentials.db", "access_tokens.db", "secrets.yaml", "secrets.yml", "secrets.json",
        "vault-token", ".vault-token", "shadow", "gshadow", "shadow-", "master.key", "htpasswd", ".htpasswd",
    ]
    .contains(&lower.as_str())
        || (lower.starts_with(".env.") && !lower.ends_with(".example") && !lower.ends_with(".sample"));
    let secret_dir = ["~/.aws", "~/.gnupg", "~/.password-store", "~/.config/gcloud", "~/.azure", "/etc/ssl/private"]
        .iter()
        .any(|dir| under(&path, dir));
    let process_environment = path.starts_with("/proc/") && matches!(base, "environ" | "mem" | "kcore");
    let raw_memory_or_disk = matches!(path.as_str(), "/dev/mem" | "/dev/kmem" | "/dev/port")
        || ["/dev/sd", "/dev/nvme", "/dev/vd", "/dev/xvd", "/dev/hd", "/dev/mmcblk", "/dev/dm-", "/dev/mapper/"]
            .iter()
            .any(|p| path.starts_with(p));
    let host_keys = path.starts_with("/etc/ssh/ssh_host_") && !lower.ends_with(".pub");
    // Any `.ssh` directory, not only the current user's: other users' and root's keys too.
    let any_ssh = path.contains("/.ssh/")
        && !lower.ends_with(".pub")
        && !lower.starts_with("known_hosts")
        && lower != "config"
        && lower != "authorized_keys";
    let more_credentials = path.starts_with("/var/run/secrets/")
        || path.starts_with("/run/secrets/")
        || path.starts_with("/etc/NetworkManager/system-connections/")
        || path == "/etc/kubernetes/admin.conf"
        || path.starts_with("~/.kube/config")
        || matches!(
            lower.as_str(),
            "hosts.yml" | "credentials.toml" | "credentials.tfrc.json" | "rclone.conf" | ".s3cfg" | "token"
        ) && (path.contains("/.config/")
            || path.contains("/.cargo/")
            || path.contains("/.terraform.d/")
            || path.contains("serviceaccount")
            || lower == ".s3cfg");
    let kube_or_docker = path == "~/.kube/config" || path == "~/.docker/config.json" || base == "kubeconfig";
    let ssh_private = under(&path, "~/.ssh")
        && !lower.ends_with(".pub")
        && !lower.starts_with("known_hosts")
        && lower != "config"
        && lower != "authorized_keys";
    process_environment
        || raw_memory_or_disk
        || host_keys
        || any_ssh
        || more_credentials
        || private_key_name
        || key_extension
        || secret_file
        || secret_dir
        || kube_or_docker
        || ssh_private
}

/// Known secret locations a glob in an argument could reach (`cat /etc/sha*`, `~/.ss*/id_*`).
const SECRET_EXAMPLES: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/proc/self/environ",
    "/proc/1/environ",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.ssh/id_ecdsa",
    "~/.aws/credentials",
    "~/.kube/config",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pgpass",
    ".env",
    "/root/.ssh/id_rsa",
    "/root/.ssh/id_ed25519",
    "/etc/kubernetes/admin.conf",
];

/// True when a glob pattern could name a secret file.
pub(crate) fn glob_may_reach_secret(raw: &str) -> bool {
    if !raw.contains(['*', '?', '[']) {
        return false;
    }
    let pattern = normalize(raw);
    SECRET_EXAMPLES.iter().any(|secret| glob_matches(pattern.as_bytes(), secret.as_bytes()))
}

/// Shell-style matching of `*`, `?` and `[…]` (a class counts as "any one character"). Iterative
/// with one backtrack point, so a pattern of many stars cannot blow up.
fn glob_matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(b'?') => {
                p += 1;
                t += 1;
            }
            Some(b'[') if pattern[p..].contains(&b']') => {
                p += pattern[p..].iter().position(|c| *c == b']').unwrap_or(0) + 1;
                t += 1;
            }
            Some(c) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

/// Environment variable names whose values are secrets: one definition, shared with redaction.
pub(crate) fn secret_variable(name: &str) -> bool {
    crate::redact::is_secret_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize("/tmp/../etc//passwd"), "/etc/passwd");
        assert_eq!(normalize("~/./.ssh/"), "~/.ssh");
        assert_eq!(normalize("~/.."), "~");
        assert_eq!(normalize("../x/./y"), "../x/y");
        assert_eq!(normalize("file:///etc/shadow"), "/etc/shadow");
        assert_eq!(normalize("/.."), "/");
    }

    #[test]
    fn classifies_sensitive_targets() {
        assert_eq!(sensitive("/"), Some(Sensitive::Root));
        assert_eq!(sensitive("~/"), Some(Sensitive::Root));
        assert_eq!(sensitive("/dev/sda"), Some(Sensitive::Device));
        assert_eq!(sensitive("/dev/null"), None);
        assert_eq!(sensitive("/etc/hosts"), Some(Sensitive::System));
        assert_eq!(sensitive("/etcetera"), None);
        assert_eq!(sensitive("~/.bashrc"), Some(Sensitive::ShellRc));
        assert_eq!(sensitive("~/.ssh/authorized_keys"), Some(Sensitive::Ssh));
        assert_eq!(sensitive("/var/log/syslog"), Some(Sensitive::Logs));
        assert_eq!(sensitive("./build"), None);
        assert_eq!(sensitive("/tmp/x"), None);
    }

    #[test]
    fn globs_that_can_reach_secrets() {
        for pattern in
            ["/etc/sha*", "/etc/shado?", "~/.ss*/id_*", "/proc/self/envir?n", "/etc/ssh/ssh_host_*_key", ".e[n]v"]
        {
            assert!(glob_may_reach_secret(pattern), "{pattern}");
        }
        for pattern in ["/etc/*release", "*.log", "/var/log/*.gz", "src/**/*.rs"] {
            assert!(!glob_may_reach_secret(pattern), "{pattern}");
        }
        let many_stars = format!("/{}x", "*".repeat(5000));
        assert!(!glob_may_reach_secret(&many_stars), "bounded time even for thousands of stars");
    }

    #[test]
    fn recognizes_secrets() {
        // The directory itself counts: `grep -r . ~/.ssh` reads every key in it (ls and find are not readers).
        for path in
            ["~/.ssh", "~/.ssh/id_rsa", "/etc/shadow", "~/.aws/credentials", ".env", "server.key", "~/.kube/config"]
        {
            assert!(secret(path), "{path}");
        }
        for path in
            ["~/.ssh/id_rsa.pub", "~/.ssh/known_hosts", "/etc/passwd", ".env.example", "README.md", "~/.ssh/config"]
        {
            assert!(!secret(path), "{path}");
        }
        assert!(secret_variable("AWS_SECRET_ACCESS_KEY"));
        assert!(secret_variable("GITHUB_TOKEN"));
        assert!(!secret_variable("HOME"));
        for name in ["PATH", "KEYMAP", "SSH_AUTH_SOCK"] {
            assert!(!secret_variable(name), "{name}");
        }
    }
}
