//! Which names look like credentials, wherever they are (issue 21 §1): the read view closes them
//! at any depth of the working directory and of the system trees, whatever tool wrote them. A rule
//! by shape (extension, word in the name, key-file naming) rather than a list of tools, so a tool
//! nobody listed is covered when it names its secrets as secrets are usually named; and a short
//! look inside the few files whose name cannot tell (`*.pem`, small `*.json`/`*.yaml`/`*.conf`).

use std::io::Read;
use std::path::Path;

/// In every home, readable: shell startup files and git's configuration. Never histories, never
/// tool credentials (`~/.config/git/credentials` is git's credential store, so not `.config/git`
/// whole).
pub(crate) const HOME_HARMLESS: &[&str] = &[
    ".bashrc", ".bash_profile", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".inputrc", ".vimrc",
    ".tmux.conf", ".gitconfig", ".config/git/config", ".config/git/ignore",
];
/// Extensions that are key stores, key files, state with secrets in it, or connection profiles.
const SECRET_EXTENSIONS: &[&str] = &[
    "key", "p12", "pfx", "jks", "keystore", "kdbx", "ppk", "tfstate", "tfvars", "ovpn", "nmconnection", "kubeconfig",
    "psk",
];
/// Words that make a name secret-shaped wherever they occur in it (compared in lower case).
const SECRET_WORDS: &[&str] =
    &["secret", "credential", "token", "passw", "private", "apikey", "api_key", "api-key", "tfstate", "kubeconfig"];
/// Exact names of credential files that say nothing about it (dotfiles of clients).
const SECRET_NAMES: &[&str] = &[
    ".netrc", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".git-credentials", ".htpasswd", "master.key", ".ssh",
    ".gnupg", ".password-store", ".boto", "shadow", "shadow-", "gshadow", "gshadow-",
];
/// Env-file templates hold names, not values: the model may read them.
const ENV_TEMPLATES: &[&str] = &[".example", ".sample", ".template", ".dist", ".defaults"];
/// Extensions of source code and documentation: `token.rs`, `secret_manager.go` and
/// `credentials.md` are code and prose about secrets, not secrets, so the words above do not close
/// them (the extensions and exact names still do).
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "go", "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "kt", "rb", "c", "h", "cc", "cpp", "hpp",
    "cs", "swift", "scala", "md", "rst", "adoc", "html", "css", "scss", "vue", "svelte", "erb", "ex", "exs", "lua",
    "pl", "pm", "php", "tf", "proto", "graphql", "snap",
];
/// Files whose name cannot tell: looked into when they are small.
const SNIFF_EXTENSIONS: &[&str] =
    &["pem", "crt", "cer", "json", "jsonl", "yaml", "yml", "conf", "cfg", "ini", "asc", "gpg", "txt"];
/// Names without an extension that tools give to files holding keys (a kubeconfig is `config`).
const SNIFF_NAMES: &[&str] = &["config"];
/// Suffixes of copies (`server.pem.bak`, `id_rsa~`): the copy is what the original was.
const COPY_SUFFIXES: &[&str] = &[".bak", ".backup", ".old", ".orig", ".save", ".swp", "~"];
/// Larger files of those kinds are not looked into (a key or service-account file is a few KiB).
pub(crate) const SNIFF_MAX_BYTES: u64 = 64 * 1024;
/// What marks key material or a token inside such a file.
const SNIFF_MARKERS: &[&[u8]] = &[
    b"PRIVATE KEY-----",
    b"PRIVATE KEY BLOCK-----",
    b"\"private_key\"",
    b"client-key-data",
    b"\"refresh_token\"",
    b"\"client_secret\"",
    b"aws_secret_access_key",
];

/// Whether `name` looks like a credential: closed wherever the view meets it.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if let Some(original) = without_copy_suffix(&lower) {
        return is_secret_name(original);
    }
    // `deploy_key`, `ssh_host_ed25519_key`: a key file named by what it is, without an extension.
    if !lower.contains('.') && (lower.ends_with("_key") || lower.ends_with("-key")) {
        return true;
    }
    if SECRET_NAMES.contains(&lower.as_str()) {
        return true;
    }
    if lower.starts_with(".env") {
        return !ENV_TEMPLATES.iter().any(|suffix| lower.ends_with(suffix));
    }
    // `id_rsa`, `id_ed25519`, `id_deploy`: ssh key files (no extension; `.pub` is the public half).
    if lower.starts_with("id_") && !lower.contains('.') {
        return true;
    }
    // Shell and REPL histories: `.bash_history`, `.psql_history`, `fish_history`, `.lesshst`.
    if (lower.starts_with('.') && (lower.contains("history") || lower.ends_with("hst"))) || lower.ends_with("_history")
    {
        return true;
    }
    let extension = lower.rsplit_once('.').map(|(_, ext)| ext);
    // `terraform.tfstate.backup`, `x.tfvars.json`: any dotted part counts, not only the last.
    if lower.split('.').skip(1).any(|part| SECRET_EXTENSIONS.contains(&part)) {
        return true;
    }
    if extension.is_some_and(|ext| CODE_EXTENSIONS.contains(&ext)) {
        return false;
    }
    SECRET_WORDS.iter().any(|word| lower.contains(word)) && !is_public_passwd(&lower)
}

/// The account database and its package (`passwd`, `passwd-`, `base-passwd.list`): `passwd` as a
/// name's first word is public; after another word (`sasl_passwd`, `.htpasswd`) it is a password
/// file.
fn is_public_passwd(lower: &str) -> bool {
    let Some(at) = lower.find("passwd") else { return false };
    let first_word = at == 0 || lower[..at].ends_with('-') && !lower[..at].contains(['_', '.']);
    first_word && SECRET_WORDS.iter().filter(|word| **word != "passw").all(|word| !lower.contains(word))
}

/// Whether a file named `name` is of a kind that is looked into when small.
fn without_copy_suffix(lower: &str) -> Option<&str> {
    COPY_SUFFIXES.iter().find_map(|suffix| lower.strip_suffix(suffix)).filter(|original| !original.is_empty())
}

pub(crate) fn sniff_extension(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if let Some(original) = without_copy_suffix(&lower) {
        return sniff_extension(original);
    }
    if SNIFF_NAMES.contains(&lower.as_str()) {
        return true;
    }
    lower.rsplit_once('.').is_some_and(|(_, extension)| SNIFF_EXTENSIONS.contains(&extension))
}

/// Whether a file named `name` of `len` bytes must be looked into before it is granted.
pub(crate) fn wants_sniff(name: &str, len: u64) -> bool {
    len <= SNIFF_MAX_BYTES && sniff_extension(name)
}

/// Whether the file at `path` holds key material or a token (see [`SNIFF_MARKERS`]). An unreadable
/// file counts as a secret: it is not granted (the kernel would refuse it anyway).
pub(crate) fn sniff(path: &Path) -> bool {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|file| file.take(SNIFF_MAX_BYTES).read_to_end(&mut bytes));
    if read.is_err() {
        return true;
    }
    SNIFF_MARKERS.iter().any(|marker| contains(&bytes, marker))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else { return true };
    haystack
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == first)
        .any(|(at, _)| haystack.get(at + 1..at + needle.len()).is_some_and(|tail| tail == rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_shapes_are_closed() {
        for name in [
            "id_rsa",
            "id_ed25519",
            "server.key",
            "cert.p12",
            "store.jks",
            "terraform.tfstate",
            "terraform.tfstate.backup",
            "prod.tfvars",
            "kubeconfig",
            "kubeconfig-prod.yaml",
            "admin.kubeconfig",
            "credentials",
            "gcp-credentials.json",
            ".env",
            ".env.production",
            ".envrc",
            "master.key",
            "app.secret.yml",
            "secrets.yaml",
            "secrets.yml",
            ".npmrc",
            ".pypirc",
            ".netrc",
            ".git-credentials",
            ".pgpass",
            ".my.cnf",
            ".vault-token",
            "sasl_passwd",
            ".htpasswd",
            "passwords.dat",
            "ipsec.secrets",
            "home.nmconnection",
            ".bash_history",
            "fish_history",
            ".lesshst",
            "token",
            "private",
            "deploy_key",
            "ssh_host_ed25519_key",
            "server.key.bak",
            "id_rsa~",
            "terraform.tfstate.old",
            ".boto",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn everyday_names_stay_open() {
        for name in [
            "passwd", "hostname", "os-release", "README.md", "main.rs", "token.rs", "secret_manager.go",
            "credentials.md", "id_generator.py", "id_rsa.pub", ".env.example", ".env.sample", "nginx.conf",
            "Cargo.toml", "history.txt", "syslog",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn key_material_is_found_inside_small_files() {
        let dir = tempfile::tempdir().unwrap();
        let sa = dir.path().join("project-1234.json");
        std::fs::write(&sa, r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMII"}"#)
            .unwrap();
        let cert = dir.path().join("ca.pem");
        std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").unwrap();
        let kube = dir.path().join("prod.yaml");
        std::fs::write(&kube, "users:\n- user:\n    client-key-data: LS0t\n").unwrap();
        assert!(wants_sniff("project-1234.json", 80) && sniff(&sa));
        assert!(wants_sniff("ca.pem", 60) && !sniff(&cert));
        assert!(sniff(&kube));
        assert!(!wants_sniff("big.json", SNIFF_MAX_BYTES + 1));
        assert!(!wants_sniff("Makefile", 10));
        assert!(sniff(&dir.path().join("missing.json")), "unreadable counts as secret");
    }

    #[test]
    fn kubeconfigs_named_config_pgp_keys_and_copies_are_looked_into() {
        let dir = tempfile::tempdir().unwrap();
        let pgp = dir.path().join("keys.asc");
        std::fs::write(&pgp, "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQ\n").unwrap();
        assert!(wants_sniff("keys.asc", 40) && sniff(&pgp));
        assert!(wants_sniff("config", 40) && wants_sniff("admin.txt", 40) && wants_sniff("server.pem.bak", 40));
        assert!(!wants_sniff("notes.md", 40) && !wants_sniff("Makefile", 40));
    }
}
