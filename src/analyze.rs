//! Ops-object analysis (seed 001): what a container, port, process, file or service is.
//!
//! - [`templates`]: built-in templates, placeholder substitution with shell quoting, and the policy
//!   filter (a command that is not Safe after substitution is dropped and reported).
//! - [`generate`]: the request that asks the model for a new type's template, and its reply parser.
//! - [`object`]: type detection and one analysis from template to report; [`collect`] runs the commands.
//! - The cache of generated templates lives in [`crate::store::templates`]; `opsai cache list|clear`
//!   is `cmd::cache`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod collect;
pub mod generate;
pub mod object;
pub mod templates;
