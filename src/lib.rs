//! opsai: a terminal assistant that turns intent into the right shell command, safely.
//!
//! Layers, top to bottom; a module imports from its own layer or those below, and no import cycle
//! joins top-level modules: `app` (the dispatcher) → `modes`, `cmd`, `cli` (the command line) →
//! `runner` (the seam builder) → `agent`, `tools`, `approval`, `analyze`, `undo`, `ui` → `llm`,
//! `exec`, `policy`, `store`, `sandbox`, `config`, `context`, `redact`, `exit` → `protocol`,
//! `home`, `term`.

/// The ReAct loop: model, tool calls, observations, answer; emits `AgentEvent`s, never prints.
pub mod agent;
/// Ops-object analysis (seed 001): type detection, templates and their policy filter, the commands'
/// collection into a report (the `analyze` tool and `opsai explain OBJECT` use it).
pub mod analyze;
/// The dispatcher: a parsed command line to the mode or command that handles it.
pub mod app;
/// The `Approver` seam: who says yes before an action above Safe runs (the terminal's prompt is
/// `ui::approve`; `NoApprover` refuses; tests script one in `testing`).
pub mod approval;
/// The command-line contract (DESIGN §3) as clap types.
pub mod cli;
/// The admin subcommands (`sessions`, `audit`, `config`, `policy`, `cache`, `undo`, `init`,
/// `completions`), one file each.
pub mod cmd;
/// `$OPSAI_HOME/config.json`: reading it, with errors that name the file, line and column.
pub mod config;
/// The environment the model is told about: OS, shell, cwd, user, git, tools present.
pub mod context;
/// The execution seam: run an approved command in a PTY with bounded capture.
pub mod exec;
/// Exit codes at the binary's edge.
pub mod exit;
/// A fleet (issue 24): hosts selected from inventories and one command fanned out to them over ssh.
pub mod fleet;
/// Where opsai keeps its state (`$OPSAI_HOME`) and the files in it.
pub mod home;
/// The model seam: `ChatModel` and the OpenAI-compatible client: streamed replies as deltas (text,
/// reasoning, tool-call progress), tool-call assembly and text-call recovery, retries, timeouts,
/// finish reasons, loop detection, and the endpoint checks of `opsai doctor`.
pub mod llm;
/// The entry modes (one-shot, REPL, widget, explain), their signal handling and what they share
/// (render style, exit codes, probe budget, stderr lines, the turn driver).
pub mod modes;
/// The command risk policy: sanitize, parse with a real bash grammar, classify, apply user rules.
/// Pure and deterministic; never prints.
pub mod policy;
/// The plain data types that cross module boundaries (DESIGN §2).
pub mod protocol;
/// Secret detection and redaction: applied before anything leaves the machine or is stored.
pub mod redact;
/// The seam builder: the configuration with its overrides, and every seam a mode's turns use (model
/// client, executor, file seam, approver, audit log, recorder), built in one place.
pub mod runner;
/// The OS sandbox for commands that run without a human yes (Landlock + seccomp, Seatbelt).
pub mod sandbox;
/// Persistent stores under `$OPSAI_HOME`: the audit log, saved conversations (SQLite), file
/// backups for undo, and the analyze-template cache. Never prints.
pub mod store;
/// Whether a person watches stderr/stdout, and whether colour is wanted.
pub mod term;
/// Test doubles for the seams and the deadline wait, shared by unit tests, integration tests and benches; not an API.
#[doc(hidden)]
pub mod testing;
/// The tools the model may call, the one approval gate they pass (`tools::gate`), and the registry
/// each mode offers: `run_command`, `propose_command`, `analyze`, and the families `cli` (find,
/// grep, ps, ss, lsof, wget…), `file` (read, write, edit), `container` and `kube` (read-only).
pub mod tools;
/// The terminal: agent events, streamed Markdown answers, the spinner, policy verdicts, session
/// lists, styles, and the
/// approval prompt (`ui::approve`, the terminal `Approver`).
pub mod ui;
/// Restoring the file the last file-tool change replaced (`opsai undo`, the REPL's `/undo`).
pub mod undo;
