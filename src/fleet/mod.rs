//! A fleet (issue 24): many hosts selected from the inventories fleets already have (Ansible,
//! `~/.ssh/config`, a list of names) and one command run on all of them through the system ssh.
//! It sits beside `exec/`: `hosts` says which machines, `fanout` runs one request on them.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod fanout;
pub mod host;
pub mod hosts;

pub use host::Host;
