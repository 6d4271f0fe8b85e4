//! Exit codes at the binary's edge (DESIGN §3) for errors that reached it.

use crate::config::ConfigError;

/// Exit code for an error that reached the binary's edge: 2 for a configuration the user must
/// fix, 1 for anything else.
pub fn code_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(|cause| cause.downcast_ref::<ConfigError>().is_some()) {
        return 2;
    }
    1
}

/// A closed stdout (`opsai policy check x | head -0`) is not an error worth a message.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
