//! Ops-object analysis (seed 001): what a container, port, process, file or service is.
//!
//! - [`templates`]: built-in templates, placeholder substitution with shell quoting, and the policy
//!   filter (a command that is not Safe after substitution is dropped and reported).
//! - [`generate`]: the request that asks the model for a new type's template, and its reply parser.
//! - [`object`]: type detection and one analysis from template to report; [`collect`] runs the commands.
//! - [`procfs`]: a port's owner and a process's working directory, read by opsai itself (no command
//!   can read other processes' `/proc` links inside the sandbox).
//! - The cache of generated templates lives in [`crate::store::templates`]; `opsai cache list|clear`
//!   is `cmd::cache`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod collect;
pub mod generate;
pub mod object;
pub(crate) mod procfs;
pub mod templates;
