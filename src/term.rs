//! Is a person watching this stream, and may it be coloured (`NO_COLOR`, https://no-color.org)?

use std::io::IsTerminal;

/// True when a person is at the terminal (for colours, spinners and prompts on stderr).
pub(crate) fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Colour on stderr: a terminal, and `NO_COLOR` unset.
pub(crate) fn stderr_color() -> bool {
    stderr_is_terminal() && !no_color()
}

/// Colour on stdout: a terminal, and `NO_COLOR` unset.
pub(crate) fn stdout_color() -> bool {
    std::io::stdout().is_terminal() && !no_color()
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some()
}
