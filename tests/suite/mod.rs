//! Integration suites, one module per user-facing area.

mod agent_cli;
mod agent_pty;
mod analyze_cli;
mod approval_pty;
mod config_cli;
mod config_keys;
mod daemon_routes;
mod docs;
mod doctor_cli;
mod eval_harness;
mod explain_cli;
mod faults_exec;
mod faults_model;
mod files_cli;
mod first_run;

mod fleet_fanout;

mod init_cli;
mod injection;
mod key_sources;
mod kube_cli;
mod layers;
mod layout_cli;
mod llm_client;
mod local_models;
mod packaging;
mod policy_cli;
mod prompt_size;
mod redaction_cli;
mod repl_tmux;
mod sandbox_broker;
mod sandbox_cli;
mod sandbox_lifetime;
mod sandbox_view;
mod screen_tmux;
mod serve_api;
mod serve_browser;
mod serve_load;
mod sessions_cli;
mod ssh_cli;
mod ssh_sandbox;
mod startup_cli;
mod streaming;
mod widget_cli;
mod widget_small_models;
