//! What a run left behind, read from outside opsai: the stored conversation in `sessions.db` and
//! the processes still alive in `/proc`.

use super::TestEnv;

/// Every stored message as `(role, content)`, oldest first.
pub fn stored_messages(env: &TestEnv) -> Vec<(String, String)> {
    let db = rusqlite::Connection::open_with_flags(
        env.opsai_home().join("sessions.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = db.prepare("SELECT role, content FROM messages ORDER BY id").unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Pids of live processes whose command line contains `marker` (a string unique to the test):
/// zombies, processes gone while being read, and this test process are left out.
pub fn processes_with(marker: &str) -> Vec<u32> {
    live_processes(|cmdline| cmdline.contains(marker))
}

/// Pids of live processes whose command line begins with `line` — the program itself, not a shell
/// whose script merely mentions it (which may not have reached that point yet).
pub fn processes_running(line: &str) -> Vec<u32> {
    live_processes(|cmdline| cmdline.starts_with(line))
}

fn live_processes(matches: impl Fn(&str) -> bool) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != std::process::id())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            matches(&String::from_utf8_lossy(&cmdline).replace('\0', " "))
        })
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.is_empty() && !state.starts_with('Z')
        })
        .collect()
}
