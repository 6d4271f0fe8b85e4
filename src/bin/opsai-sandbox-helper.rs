//! The sandbox helper on its own: what opsai starts for every command that runs without a human
//! yes (`src/sandbox/mod.rs`). The same code as `opsai __opsai-sandbox`, in an executable that
//! holds nothing else, so each command pays for starting a small program, not the whole of opsai
//! (bench/BENCHMARKS.md, "Sandbox cost per command"). opsai uses it when it sits beside opsai's
//! own executable and its probe answers with opsai's version; otherwise opsai re-executes itself.

use std::process::ExitCode;

fn main() -> ExitCode {
    opsai::sandbox::entry_from_args().unwrap_or_else(|| {
        eprintln!("opsai-sandbox-helper: started by opsai only (its first argument is the sandbox entry)");
        ExitCode::from(2)
    })
}
