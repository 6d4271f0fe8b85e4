//! opsai: a terminal assistant that turns intent into the right shell command, safely.

/// The ReAct loop: model, tool calls, observations, answer; emits `AgentEvent`s, never prints.
pub mod agent;
/// Ops-object analysis (seed 001): target detection, templates, the template cache.
pub mod analyze;
/// The dispatcher: a parsed command line to the mode or command that handles it.
pub mod app;
/// Who says yes before a command above Safe runs: terminal, scripted (tests) or nobody.
pub mod approval;
/// The command-line contract (DESIGN §3) as clap types.
pub mod cli;
/// `$OPSAI_HOME/config.json`: reading it, with errors that name the file, line and column.
pub mod config;
/// The environment the model is told about: OS, shell, cwd, user, git, tools present.
pub mod context;
/// The execution seam: run an approved command in a PTY with bounded capture.
pub mod exec;
/// Exit codes at the binary's edge.
pub mod exit;
/// `opsai explain`: piped output, a command, or an ops object, explained.
pub mod explain;
/// Where opsai keeps its state (`$OPSAI_HOME`) and the files in it.
pub mod home;
/// `opsai init <shell>` (the Ctrl-G widget scripts) and `opsai completions <shell>`.
pub mod init;
/// The model seam: `ChatModel` and the OpenAI-compatible streaming client.
pub mod llm;
/// `opsai <TASK>`: one agent turn from the command line.
pub mod oneshot;
/// The command risk policy: sanitize, parse with a real bash grammar, classify, apply user rules.
/// Pure and deterministic; never prints.
pub mod policy;
/// The plain data types that cross module boundaries (DESIGN §2).
pub mod protocol;
/// Secret detection and redaction: applied before anything leaves the machine or is stored.
pub mod redact;
/// The seams a turn uses, built once, and the driver that runs a turn with rendering and Ctrl-C.
pub mod runner;
/// The OS sandbox for commands that run without a human yes (Landlock + seccomp, Seatbelt).
pub mod sandbox;
/// Persistent stores: the append-only audit log.
pub mod store;
/// Whether a person watches stderr/stdout, and whether colour is wanted.
pub mod term;
/// Test doubles for the seams and the deadline wait, shared by unit tests, integration tests and benches; not an API.
#[doc(hidden)]
pub mod testing;
/// The tools the model may call (`run_command`, `propose_command`) and their registry.
pub mod tools;
/// Terminal rendering of results; the only place besides `main` that writes to the user.
pub mod ui;
/// `opsai undo`: restore the file the last file-tool change replaced.
pub mod undo;
/// `opsai widget`: one Ctrl-G request, answered with a command for the shell's line.
pub mod widget;
