//! An inventory read by Ansible itself: `ansible-inventory -i … --list`, so dynamic inventory
//! plugins, scripts, vault and vars plugins work exactly as they do for `ansible`.

use std::path::Path;
use std::time::Duration;

use super::error::{HostsError, excerpt};
use super::inventory::Inventory;
use super::json;
use super::run::{RunError, run};

/// Runs `program` on `sources` (each one `-i`) and reads its JSON into `inventory`. Warnings it
/// printed on success go to `notes`.
pub(crate) fn read(
    program: &Path,
    sources: &[String],
    inventory: &mut Inventory,
    limit: Duration,
    home: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<(), HostsError> {
    let mut args: Vec<&str> = Vec::new();
    for source in sources {
        args.extend(["-i", source.as_str()]);
    }
    args.push("--list");
    // A source no plugin can parse is only a warning for Ansible (and an empty inventory); here it
    // is the error it is, with Ansible's own reason.
    let mut env = vec![
        ("ANSIBLE_INVENTORY_UNPARSED_FAILED", "True"),
        ("ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED", "True"),
        ("ANSIBLE_NOCOLOR", "1"),
        ("ANSIBLE_FORCE_COLOR", "0"),
    ];
    // The home handed in is the one Ansible uses (its ~/.ansible.cfg, ~/.ansible/tmp).
    if let Some(home) = home.and_then(Path::to_str) {
        env.push(("HOME", home));
    }
    let failed = |status: String, stderr: String| HostsError::AnsibleFailed {
        program: program.display().to_string(),
        inventory: sources.join(" -i "),
        status,
        stderr,
    };
    let done = match run(program, &args, &env, limit) {
        Ok(done) => done,
        Err(RunError::Spawn(error)) => return Err(failed("it could not start".into(), error.to_string())),
        Err(RunError::TimedOut) => {
            return Err(failed(format!("it ran longer than {limit:?} and was stopped"), String::new()));
        }
    };
    if !done.status.success() {
        return Err(failed(done.status.to_string(), excerpt(&done.stderr, 4000)));
    }
    let warnings = excerpt(&done.stderr, 2000);
    if !warnings.is_empty() {
        notes.push(format!("ansible-inventory said: {warnings}"));
    }
    json::read(program, &String::from_utf8_lossy(&done.stdout), inventory)
}
