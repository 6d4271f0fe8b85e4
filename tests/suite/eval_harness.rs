//! The NL2SH-ALFA harness (`bench/eval/`, issue 22) end to end, so it cannot rot: synthetic tasks
//! written here (none of ALFA's text) in ALFA's layout, a scripted model
//! (`bench/eval/scripted_llm.py`) answering from a map, the real `opsai widget`, and the real judge
//! (each command in a fresh copy of the test filesystem under bubblewrap). Asserts which tasks are
//! scored, passed, failed and counted as format failures.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The filesystem every synthetic task starts from (run as root of an empty directory).
const SETUP: &str = "#!/bin/bash
mkdir -p /testbed/notes
printf 'alpha\\nbeta\\ngamma\\n' > /testbed/notes/list.txt
echo hi > /testbed/a.txt
";

/// (query, gold, gold2, difficulty). The queries are the scripted model's keys.
const TASKS: &[(&str, &str, &str, u8)] = &[
    (
        "Show the first two lines of the notes list",
        "head -n 2 /testbed/notes/list.txt",
        "sed -n 1,2p /testbed/notes/list.txt",
        0,
    ),
    ("Make an empty file done.txt in the testbed", "touch /testbed/done.txt", "", 0),
    ("Count the lines of the notes list", "wc -l < /testbed/notes/list.txt", "", 1),
    ("Print a clock reading in nanoseconds", "date +%s%N", "", 1),
    ("Replace beta with delta in the notes list", "sed -i 's/beta/delta/' /testbed/notes/list.txt", "", 2),
];

/// What the scripted model answers to each query.
fn script() -> Value {
    json!({
        // Another command with the same output as gold2: a pass.
        "Show the first two lines": "head -2 /testbed/notes/list.txt",
        // Changes a different file: a fail.
        "Make an empty file done.txt": "touch /testbed/other.txt",
        // Prose instead of a command: a fail and a format failure.
        "Count the lines": "You can count them with wc and the -l flag, it prints the number of lines.",
        // Nondeterministic reference: never scored, whatever the answer.
        "clock reading": "date +%s%N",
        // A native tool call whose command changes the file like the reference: a pass.
        "Replace beta with delta": {"propose_command": "sed -i 's/beta/delta/g' /testbed/notes/list.txt"},
    })
}

fn program(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/usr/local/bin", "/bin"].iter().map(|dir| Path::new(dir).join(name)).find(|p| p.exists())
}

/// The python3 to run the harness with; `None` (skip, or fail under CI=true) when python3 or
/// bwrap is missing.
fn requirements() -> Option<PathBuf> {
    let missing = match (program("python3"), program("bwrap")) {
        (Some(python), Some(_)) => return Some(python),
        (None, _) => "python3",
        (Some(_), None) => "bwrap",
    };
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{missing} is required under CI=true");
    crate::support::skipped(&format!("no {missing}: the harness needs python3 and bubblewrap"));
    None
}

fn write_dataset(root: &Path, tasks: &[(&str, &str, &str, u8)]) {
    let assets = root.join("icalfa/assets");
    std::fs::create_dir_all(assets.join("datasets")).unwrap();
    std::fs::create_dir_all(assets.join("docker")).unwrap();
    let rows: Vec<Value> = tasks
        .iter()
        .map(|(query, gold, gold2, difficulty)| json!({"query": query, "gold": gold, "gold2": gold2, "difficulty": difficulty}))
        .collect();
    std::fs::write(assets.join("datasets/nl2bash_fs_1.json"), serde_json::to_vec(&rows).unwrap()).unwrap();
    std::fs::write(assets.join("docker/setup_nl2b_fs_1.sh"), SETUP).unwrap();
}

/// The scripted model, serving until its stdin closes (when the value is dropped).
struct Scripted {
    child: std::process::Child,
    port: u16,
}

impl Scripted {
    fn start(python: &Path, map: &Path) -> Self {
        let mut child = Command::new(python)
            .arg(bench("scripted_llm.py"))
            .arg(map)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start bench/eval/scripted_llm.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("scripted model printed {line:?}, not a port"));
        Self { child, port }
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bench(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/eval").join(file)
}

/// A dataset of `tasks` in a temporary directory and the scripted model answering from `script`;
/// `None` when python3 or bwrap is missing (see [`requirements`]).
fn prepared(tasks: &[(&str, &str, &str, u8)], script: &Value) -> Option<(PathBuf, tempfile::TempDir, Scripted)> {
    let python = requirements()?;
    let dir = tempfile::tempdir().unwrap();
    write_dataset(&dir.path().join("alfa"), tasks);
    let map = dir.path().join("map.json");
    std::fs::write(&map, serde_json::to_vec(script).unwrap()).unwrap();
    let model = Scripted::start(&python, &map);
    Some((python, dir, model))
}

/// One run of `bench/eval/run.py` on the dataset under `dir/alfa` against the scripted model:
/// its stdout, stderr and result rows.
fn run_harness(python: &Path, dir: &Path, model: &Scripted, tools: &[&str]) -> (String, String, Vec<Value>) {
    let out = dir.join("run");
    let output = Command::new(python)
        .arg(bench("run.py"))
        .args(tools)
        .args(["--model", "scripted", "--quiet"])
        .arg("--opsai")
        .arg(env!("CARGO_BIN_EXE_opsai"))
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{}/v1", model.port))
        .arg("--alfa")
        .arg(dir.join("alfa"))
        .arg("--cache")
        .arg(dir.join("cache"))
        .arg("--out")
        .arg(&out)
        .env_remove("OPSAI_EVAL_CACHE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "run.py failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    let rows = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (stdout, stderr, rows)
}

#[test]
fn the_judge_scores_a_scripted_widget_on_synthetic_tasks() {
    let Some((python, dir, model)) = prepared(TASKS, &script()) else {
        return;
    };
    let (stdout, stderr, rows) = run_harness(&python, dir.path(), &model, &["--tools", "widget"]);
    let by_task: BTreeMap<u64, &Value> = rows.iter().map(|row| (row["task"].as_u64().unwrap(), row)).collect();
    // The clock task's reference differs between its two runs, so it is not scored.
    assert_eq!(by_task.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 4], "{rows:#?}\n{stderr}");
    let passed: Vec<u64> = by_task.iter().filter(|(_, row)| row["pass"] == true).map(|(id, _)| *id).collect();
    assert_eq!(passed, [0, 4], "{rows:#?}\n{stderr}");
    let format: Vec<u64> =
        by_task.iter().filter(|(_, row)| !row["format_failure"].is_null()).map(|(id, _)| *id).collect();
    assert_eq!(format, [2], "{rows:#?}\n{stderr}");
    assert_eq!(by_task[&4]["candidate"], "sed -i 's/beta/delta/g' /testbed/notes/list.txt", "{rows:#?}");
    assert_eq!(by_task[&0]["difficulty"], "easy");

    // The summary in BENCHMARKS.md's shape: per difficulty, all, format failures.
    let row = stdout.lines().find(|line| line.starts_with("| widget |")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(row.starts_with("| widget | 1/2 | 0/1 | 1/1 | **2/4 (50 %)** | 1 |"), "{row}");
}

/// The agent rows: `agent` cannot run a deletion (High, and no terminal to ask), `agent-yes` answers
/// its prompt on a pseudo-terminal and can. A command that also writes to stderr passes on its
/// stdout in a fresh copy, and is recorded as failing on what its terminal showed (`pass_as_seen`).
#[test]
fn the_judge_scores_the_agent_with_and_without_a_person_saying_yes() {
    let tasks: &[(&str, &str, &str, u8)] = &[
        ("Remove the notes directory", "rm -r /testbed/notes", "", 0),
        ("Print the greeting file and the missing one", "cat /testbed/a.txt /testbed/missing", "", 1),
    ];
    let script = json!({
        "Remove the notes": {"run_command": "rm -rf /testbed/notes"},
        "Print the greeting": {"run_command": "cat /testbed/a.txt /testbed/missing"},
    });
    let Some((python, dir, model)) = prepared(tasks, &script) else {
        return;
    };
    let (stdout, stderr, rows) =
        run_harness(&python, dir.path(), &model, &["--tools", "agent,agent-yes", "--tool-timeout", "60"]);
    let row = |tool: &str, task: u64| {
        rows.iter().find(|r| r["tool"] == tool && r["task"] == task).unwrap_or_else(|| panic!("{rows:#?}"))
    };
    // Refused without a terminal: nothing ran, so there is no command to judge.
    assert_eq!(row("agent", 0)["pass"], false, "{rows:#?}");
    assert_eq!(row("agent", 0)["format_failure"], "no_command", "{rows:#?}");
    assert_eq!(row("agent-yes", 0)["pass"], true, "{rows:#?}\n{stderr}");
    assert_eq!(row("agent-yes", 0)["candidate"], "rm -rf /testbed/notes");
    for tool in ["agent", "agent-yes"] {
        assert_eq!(row(tool, 1)["pass"], true, "{rows:#?}");
        assert_eq!(row(tool, 1)["pass_as_seen"], false, "stderr was on its terminal: {rows:#?}");
    }
    assert!(stdout.contains("agent-yes: 1/2 when judged on the output its terminal showed"), "{stdout}");
}

/// A peer's answer is read as kindly as a person pasting it would (the first fenced block, a line
/// out of one pair of backticks), and `--rejudge` judges a stored run again that way without the
/// model: an inline-code answer that runs the right command passes, a wrong one still fails, and
/// opsai's rows stay as they were.
#[test]
fn a_peers_answer_in_backticks_is_judged_again_without_the_model() {
    let Some((python, dir, model)) = prepared(TASKS, &json!({})) else {
        return;
    };
    let stored = dir.path().join("stored.jsonl");
    let row = |tool: &str, task: u64, candidate: &str| {
        json!({"tool": tool, "task": task, "difficulty": "easy", "candidate": candidate, "pass": false,
               "format_failure": "inline_code", "seconds": 1.0, "exit": 0, "timeout": false})
    };
    let rows = [
        row("aichat", 0, "`head -2 /testbed/notes/list.txt`"),
        // Run as root, the sandbox's root would own the host's /dev/null (bwrap binds it in).
        row("shell_gpt", 1, "`chmod 666 /dev/null && touch /testbed/other.txt`"),
        row("widget", 4, "`sed -i 's/beta/delta/g' /testbed/notes/list.txt`"),
    ];
    std::fs::write(&stored, rows.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
    let changed = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/dev/null").map(|m| (m.ctime(), m.ctime_nsec())).ok()
    };
    let before = changed();
    let (stdout, stderr, rows) =
        run_harness(&python, dir.path(), &model, &["--tools", "none", "--rejudge", stored.to_str().unwrap()]);
    assert_eq!(changed(), before, "a candidate changed the host's /dev/null");
    let by_tool = |tool: &str| rows.iter().find(|r| r["tool"] == tool).unwrap_or_else(|| panic!("{rows:#?}"));
    assert_eq!(by_tool("aichat")["pass"], true, "{rows:#?}\n{stderr}");
    assert_eq!(by_tool("aichat")["candidate"], "head -2 /testbed/notes/list.txt");
    assert_eq!(by_tool("aichat")["pass_before_rejudge"], false);
    assert_eq!(by_tool("shell_gpt")["pass"], false, "a wrong command out of backticks is still wrong");
    assert_eq!(by_tool("widget")["pass"], false, "opsai's rows are not read again");
    assert!(stderr.contains("1 verdicts changed"), "{stderr}");
    assert!(stdout.contains("| aichat | 1/1 |"), "{stdout}");
}
