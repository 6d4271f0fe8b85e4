//! Checks that apply to every program whatever its rule says (secrets read or printed, code that
//! was downloaded) and to redirections (what a `>` writes, what a `<` reads).

use super::{Engine, NOT_READERS, PRINTERS, word_downloads};
use crate::policy::invocation::Invocation;
use crate::policy::parse::Redirect;
use crate::policy::paths;
use crate::policy::rules;
use crate::policy::verdict::Verdict;

impl Engine<'_> {
    /// Checks every program gets whatever its rule says: secrets read or printed, downloaded code.
    pub(super) fn argument_checks(&self, inv: &Invocation) -> Verdict {
        let mut verdict = Verdict::SAFE;
        if !NOT_READERS.contains(&inv.name) {
            for word in inv.args {
                let text = word.text.as_str();
                let candidates = [Some(text), text.split_once('=').map(|(_, v)| v), text.strip_prefix('@')];
                if let Some(path) = candidates.into_iter().flatten().find(|c| !c.is_empty() && paths::secret(c)) {
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
        verdict
    }

    pub(super) fn redirect(&mut self, redirect: &Redirect, subject: &str, metadata_reader: bool) {
        let Some(target) = redirect.target.as_ref() else {
            return;
        };
        for sub in &target.subs {
            self.script(sub, 0);
        }
        if let Some(body) = &redirect.heredoc {
            for sub in &body.subs {
                self.script(sub, 0);
            }
        }
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
