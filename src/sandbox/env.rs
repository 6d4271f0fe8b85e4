//! Which environment variables the strict sandbox removes: names that suggest a secret.

/// Words that mark a secret anywhere in a variable's name (compared in upper case).
const SECRET_WORDS: &[&str] =
    &["KEY", "TOKEN", "SECRET", "PASS", "PWD", "CRED", "AUTH", "DSN", "COOKIE", "SESSION", "PRIVATE", "SIGNATURE"];
/// Prefixes of credential families whose other names do not say so (`AWS_PROFILE` picks a key).
const SECRET_PREFIXES: &[&str] = &["AWS_", "AZURE_", "GOOGLE_", "GCP_", "VAULT_", "OPSAI_", "DOCKER_AUTH", "SSH_AUTH"];
/// Names that contain a secret word but are not secrets, and that commands need.
const KEEP: &[&str] = &["PWD", "OLDPWD", "KEYTIMEOUT", "XAUTHORITY"];

/// True for `GITHUB_TOKEN`, `PGPASSWORD`, `DATABASE_DSN`, `AWS_REGION`, `OPSAI_API_KEY`; false for
/// `PWD`, `PATH`, `HOME`, `TERM`.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if KEEP.contains(&upper.as_str()) {
        return false;
    }
    SECRET_WORDS.iter().any(|word| upper.contains(word)) || SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::is_secret_name;

    #[test]
    fn secret_looking_names_are_removed_and_working_ones_kept() {
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "OPSAI_API_KEY",
            "PGPASSWORD",
            "MYSQL_PWD",
            "DATABASE_DSN",
            "SENTRY_DSN",
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "npm_config__auth",
            "DOCKER_AUTH_CONFIG",
            "VAULT_ADDR",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SSH_AUTH_SOCK",
        ] {
            assert!(is_secret_name(name), "{name} should be removed");
        }
        for name in ["PWD", "OLDPWD", "PATH", "HOME", "TERM", "LANG", "USER", "SHELL", "KUBECONFIG", "XAUTHORITY"] {
            assert!(!is_secret_name(name), "{name} should be kept");
        }
    }
}
