//! The entry modes: where a person (or a shell, or a script) starts an agent turn.
//!
//! - [`oneshot`]: `opsai TASK`, one turn from the command line.
//! - [`repl`]: `opsai` with no task, a conversation at the `Agent >` prompt.
//! - [`widget`]: `opsai widget`, one Ctrl-G request answered with a command for the shell's line.
//! - [`explain`]: `opsai explain`, piped output, a command or an ops object explained.
//! - [`serve`]: `opsai serve`, the web chat: each turn in the browser runs on the same loop.
//!
//! Each builds its seams with [`crate::runner::Parts`] and shares [`common`] (render style, exit
//! codes, probe budget, stderr lines), [`drive`] (one turn with rendering and Ctrl-C) and [`stop`]
//! (SIGTERM/SIGHUP). Only this layer and `cmd` decide the process's exit.

pub mod common;
pub(crate) mod contexts;
pub mod drive;
pub mod explain;
pub(crate) mod fleet;
pub mod oneshot;
pub mod repl;
pub mod serve;
pub(crate) mod startup;
pub mod stop;
pub mod widget;
