//! Integration suites, one module per user-facing area.

mod agent_cli;
mod agent_pty;
mod analyze_cli;
mod config_cli;
mod doctor_cli;
mod explain_cli;
mod faults_exec;
mod faults_model;
mod files_cli;
mod init_cli;
mod injection;
mod kube_cli;
mod layers;
mod llm_client;
mod local_models;
mod policy_cli;
mod prompt_size;
mod redaction_cli;
mod repl_tmux;
mod sandbox_cli;
mod screen_tmux;
mod sessions_cli;
mod ssh_cli;
mod startup_cli;
mod streaming;
mod widget_cli;
