use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::time::SystemTime;

use jiff::civil::date;
use pretty_assertions::assert_eq;
use regex::Regex;

use super::*;

const GITHUB_TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

fn record(command: &str, output: &str) -> AuditRecord {
    AuditRecord {
        session: "s12".into(),
        input: "find big logs".into(),
        tool: "shell.run_command".into(),
        command: command.into(),
        risk: Risk::High,
        confirmed: Confirmed::Yes,
        exit: Some(0),
        output: output.into(),
        host: None,
        user: None,
        approver: None,
    }
}

#[test]
fn a_remote_action_names_its_host() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::new(dir.path().join("audit.log"), 10, 90, Arc::new(Redactor::new([])));
    log.append(&AuditRecord { host: Some("db-1".into()), ..record("uptime", "up 3 days") }).unwrap();
    let line = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    assert!(line.contains("| TOOL: shell.run_command | HOST: db-1 | CMD: \"uptime\""), "{line}");
}

#[test]
fn a_web_action_names_its_user_escaped_and_redacted_and_old_lines_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let redactor = Arc::new(Redactor::new([("MY_API_KEY".to_owned(), "learned-secret-value".to_owned())]));
    let log = AuditLog::new(dir.path().join("audit.log"), 10, 90, redactor);
    // A line written before the USER field existed, as `opsai audit` finds it in an old log.
    let old = r#"[2026-11-22 10:30:15] SESSION: s1 | INPUT: "x" | TOOL: shell.run_command | CMD: "ls" | RISK: safe | CONFIRMED: auto | EXIT: 0 | OUTPUT: a"#;
    std::fs::write(log.path(), format!("{old}\n")).unwrap();
    log.append_at(
        &AuditRecord { user: Some("alice".into()), host: Some("db-1".into()), ..record("uptime", "up") },
        at(),
    )
    .unwrap();
    let hostile = AuditRecord { user: Some("bob\n| CMD: \"learned-secret-value".into()), ..record("id", "uid") };
    log.append_at(&hostile, at()).unwrap();
    let lines = log.tail(10).unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0], old);
    assert!(
        lines[1].contains("| TOOL: shell.run_command | USER: alice | HOST: db-1 | CMD: \"uptime\""),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains(r#"| USER: bob\n| CMD: "[REDACTED:env:MY_API_KEY] | CMD: "id""#), "{}", lines[2]);
    assert_eq!(log.grep("USER: alice", 10).unwrap(), [lines[1].clone()]);
    assert!(!lines[0].contains("USER:") && !read(log.path()).contains("learned-secret-value"));
}

fn at() -> DateTime {
    date(2026, 11, 22).at(10, 30, 15, 0)
}

fn log_in(dir: &tempfile::TempDir, max_bytes: u64, retain_days: u64) -> AuditLog {
    AuditLog::with_max_bytes(dir.path().join("audit.log"), max_bytes, retain_days, Arc::new(Redactor::default()))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Every line of the live and rotated files, oldest file first.
fn all_lines(log: &AuditLog) -> Vec<String> {
    let mut files = log.rotated_files().unwrap();
    files.push(log.path().to_owned());
    files.iter().flat_map(|path| read(path).lines().map(str::to_owned).collect::<Vec<_>>()).collect()
}

/// The line format, as a parser: a torn or merged line does not match.
fn line_format() -> Regex {
    Regex::new(concat!(
        r#"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] SESSION: (\S+) \| INPUT: "((?:[^"\\]|\\.)*)" \| TOOL: (\S+) \| "#,
        r#"CMD: "((?:[^"\\]|\\.)*)" \| RISK: (safe|medium|high) \| CONFIRMED: (yes|no|auto|dry-run) \| "#,
        r"EXIT: (-|-?\d+) \| OUTPUT: (.*)$"
    ))
    .unwrap()
}

#[test]
fn writes_the_documented_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 0, 0);
    log.append_at(&record("du -sh /var/log/*.log", "1.2G\t/var/log/big.log\n"), at()).unwrap();
    let mut refused = record("rm -rf /", "refused: high requires confirmation in a terminal");
    refused.confirmed = Confirmed::No;
    refused.exit = None;
    log.append_at(&refused, at()).unwrap();
    assert_eq!(
        read(log.path()),
        concat!(
            r#"[2026-11-22 10:30:15] SESSION: s12 | INPUT: "find big logs" | TOOL: shell.run_command | CMD: "du -sh /var/log/*.log" | RISK: high | CONFIRMED: yes | EXIT: 0 | OUTPUT: 1.2G\t/var/log/big.log\n"#,
            "\n",
            r#"[2026-11-22 10:30:15] SESSION: s12 | INPUT: "find big logs" | TOOL: shell.run_command | CMD: "rm -rf /" | RISK: high | CONFIRMED: no | EXIT: - | OUTPUT: refused: high requires confirmation in a terminal"#,
            "\n"
        )
    );
    for line in read(log.path()).lines() {
        assert!(line_format().is_match(line), "{line}");
    }
}

#[test]
fn renders_every_confirmation() {
    let rendered: Vec<&str> =
        [Confirmed::Yes, Confirmed::No, Confirmed::Auto, Confirmed::DryRun].map(Confirmed::as_str).into();
    assert_eq!(rendered, ["yes", "no", "auto", "dry-run"]);
}

#[test]
fn a_record_is_always_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 0, 0);
    let mut record = record("printf 'a\\nb' \"$x\"\r\n\u{1b}[2J\u{202e}", "line1\nline2\r\n\u{1b}[31mred");
    record.input = "two\nlines \"quoted\" back\\slash".into();
    log.append_at(&record, at()).unwrap();
    let text = read(log.path());
    assert_eq!(text.lines().count(), 1, "{text}");
    let line = text.trim_end_matches('\n');
    let caps = line_format().captures(line).unwrap();
    assert_eq!(&caps[2], r#"two\nlines \"quoted\" back\\slash"#);
    assert_eq!(&caps[4], r#"printf 'a\\nb' \"$x\"\r\n\u{1b}[2J\u{202e}"#);
    assert_eq!(&caps[8], r"line1\nline2\r\n\u{1b}[31mred");
}

#[test]
fn keeps_the_first_100_characters_of_output_and_caps_long_fields() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 0, 0);
    let output = format!("{}\n{}", "é".repeat(99), "x".repeat(500));
    log.append_at(&record(&"c".repeat(5000), &output), at()).unwrap();
    let text = read(log.path());
    let caps = line_format().captures(text.trim_end()).unwrap();
    assert_eq!(&caps[8], format!("{}\\n", "é".repeat(99)));
    assert_eq!(&caps[4], format!("{}…[+904 chars]", "c".repeat(4096)));
}

#[test]
fn secrets_never_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let redactor = Arc::new(Redactor::new([("MY_API_KEY".to_owned(), "learned-secret-value".to_owned())]));
    let log = AuditLog::new(dir.path().join("audit.log"), 10, 30, redactor);
    let mut record = record(
        &format!("curl -H 'Authorization: Bearer {GITHUB_TOKEN}' https://u:hunter22@example.com"),
        &format!("echo learned-secret-value\n{GITHUB_TOKEN}\n"),
    );
    record.input = "use password=hunter22 please".into();
    log.append_at(&record, at()).unwrap();
    let text = read(log.path());
    for secret in [GITHUB_TOKEN, "hunter22", "learned-secret-value"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert!(text.contains("[REDACTED:env:MY_API_KEY]"), "{text}");
}

#[test]
fn creates_the_directory_and_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/audit.log");
    let log = AuditLog::new(path.clone(), 10, 30, Arc::new(Redactor::default()));
    log.check_writable().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(read(&path), "", "check_writable writes nothing");
    log.append(&record("ls", "")).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(line_format().is_match(read(&path).trim_end_matches('\n')));
}

#[test]
fn check_writable_fails_when_the_log_cannot_be_opened() {
    let dir = tempfile::tempdir().unwrap();
    // Permission bits do not stop root (CI), so use paths nobody can open for appending.
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "").unwrap();
    let under_a_file = AuditLog::new(file.join("audit.log"), 10, 30, Arc::new(Redactor::default()));
    let err = under_a_file.check_writable().unwrap_err();
    assert!(matches!(err, AuditError::CreateDir { .. }), "{err:?}");
    assert!(err.to_string().contains(&file.display().to_string()), "{err}");
    assert!(under_a_file.append(&record("ls", "")).is_err());

    let a_directory = AuditLog::new(dir.path().to_owned(), 10, 30, Arc::new(Redactor::default()));
    let err = a_directory.check_writable().unwrap_err();
    assert!(matches!(err, AuditError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("set audit.log_path"), "{err}");
}

#[test]
fn rotation_keeps_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 1000, 0);
    for i in 0..60 {
        // Several rotations in one second: the second and later get `.1`, `.2`, … names.
        let at = date(2026, 11, 22).at(10, 30, (i / 20) as i8, 0);
        log.append_at(&record(&format!("echo {i}"), &i.to_string()), at).unwrap();
    }
    let rotated = log.rotated_files().unwrap();
    assert!(rotated.len() >= 5, "{rotated:?}");
    assert!(rotated.iter().any(|p| p.to_string_lossy().ends_with("audit.log.20261122-103000.1")), "{rotated:?}");
    for path in &rotated {
        let size = std::fs::metadata(path).unwrap().len();
        assert!((1000..1200).contains(&size), "{} has {size} bytes", path.display());
    }
    let outputs: Vec<String> =
        all_lines(&log).iter().map(|line| line_format().captures(line).unwrap()[8].to_owned()).collect();
    assert_eq!(outputs, (0..60).map(|i| i.to_string()).collect::<Vec<_>>());
}

#[test]
fn retention_deletes_only_old_rotated_files() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 1000, 7);
    let old = SystemTime::now() - Duration::from_secs(8 * 24 * 3600);
    let make = |name: &str, modified: SystemTime| {
        let path = dir.path().join(name);
        std::fs::write(&path, "x\n").unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
        path
    };
    let old_rotated = make("audit.log.20250101-000000", old);
    let old_rotated_again = make("audit.log.20250101-000000.1", old);
    let recent_rotated = make("audit.log.20261120-000000", SystemTime::now());
    let live = make("audit.log", old);
    let unrelated = make("audit.log.bak", old);
    let lock = make("audit.log.lock", old);
    assert_eq!(log.prune_rotated().unwrap(), 2);
    assert!(!old_rotated.exists() && !old_rotated_again.exists());
    for kept in [&recent_rotated, &live, &unrelated, &lock] {
        assert!(kept.exists(), "{}", kept.display());
    }
    let forever = log_in(&dir, 1000, 0);
    make("audit.log.20250101-000000", old);
    assert_eq!(forever.prune_rotated().unwrap(), 0);
}

#[test]
fn the_first_append_prunes() {
    let dir = tempfile::tempdir().unwrap();
    let old_rotated = dir.path().join("audit.log.20250101-000000");
    std::fs::write(&old_rotated, "x\n").unwrap();
    let old = SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
    std::fs::File::options().write(true).open(&old_rotated).unwrap().set_modified(old).unwrap();
    log_in(&dir, 0, 30).append_at(&record("ls", ""), at()).unwrap();
    assert!(!old_rotated.exists());
}

/// Appends `lines` records from each of `threads` threads, each with its own `AuditLog`.
fn append_concurrently(dir: &tempfile::TempDir, threads: usize, lines: usize, max_bytes: u64) {
    std::thread::scope(|scope| {
        for thread in 0..threads {
            scope.spawn(move || {
                let log = log_in(dir, max_bytes, 0);
                for line in 0..lines {
                    let output = format!("t{thread}-l{line} {}", "y".repeat(line % 50));
                    log.append(&record(&format!("echo t{thread} l{line}"), &output)).unwrap();
                }
            });
        }
    });
}

fn assert_every_line_once(log: &AuditLog, threads: usize, lines: usize) {
    let format = line_format();
    let mut seen = HashSet::new();
    for line in all_lines(log) {
        let caps = format.captures(&line).unwrap_or_else(|| panic!("torn line: {line}"));
        let id = caps[8].split(' ').next().unwrap().to_owned();
        assert_eq!(caps[4].to_owned(), format!("echo {}", id.replace('-', " ")), "{line}");
        assert!(seen.insert(id), "duplicate: {line}");
    }
    assert_eq!(seen.len(), threads * lines);
}

#[test]
fn concurrent_writers_lose_and_tear_no_line() {
    let dir = tempfile::tempdir().unwrap();
    append_concurrently(&dir, 8, 500, 0);
    assert_every_line_once(&log_in(&dir, 0, 0), 8, 500);
}

#[test]
fn concurrent_writers_rotating_lose_no_line() {
    let dir = tempfile::tempdir().unwrap();
    append_concurrently(&dir, 4, 200, 8 * 1024);
    let log = log_in(&dir, 8 * 1024, 0);
    assert!(log.rotated_files().unwrap().len() > 3);
    assert_every_line_once(&log, 4, 200);
}

#[test]
fn tail_reads_the_last_lines_across_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 4000, 0);
    assert_eq!(log.tail(5).unwrap(), Vec::<String>::new());
    for i in 0..200 {
        log.append_at(&record(&format!("echo {i}"), &format!("{i} {}", "z".repeat(90))), at()).unwrap();
    }
    let expect = |range: std::ops::Range<usize>| -> Vec<String> {
        let all = all_lines(&log);
        all[range].to_vec()
    };
    assert_eq!(log.tail(3).unwrap(), expect(197..200));
    // More than the live file holds: the rest come from rotated files; beyond everything, all lines.
    assert_eq!(log.tail(150).unwrap(), expect(50..200));
    assert_eq!(log.tail(1000).unwrap().len(), 200);
    assert_eq!(log.tail(0).unwrap(), Vec::<String>::new());
}

#[test]
fn tail_handles_lines_longer_than_a_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 0, 0);
    std::fs::write(log.path(), format!("first\n{}\nlast", "w".repeat(20_000))).unwrap();
    assert_eq!(log.tail(2).unwrap(), vec!["w".repeat(20_000), "last".to_owned()]);
    assert_eq!(log.tail(3).unwrap()[0], "first");
}

#[test]
fn grep_matches_substrings_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_in(&dir, 2000, 0);
    for i in 0..40 {
        let command = if i % 10 == 0 { format!("rm -rf build{i}") } else { format!("ls dir{i}") };
        log.append_at(&record(&command, ""), at()).unwrap();
    }
    assert!(!log.rotated_files().unwrap().is_empty());
    let commands = |lines: Vec<String>| -> Vec<String> {
        lines.iter().map(|line| line_format().captures(line).unwrap()[4].to_owned()).collect()
    };
    assert_eq!(
        commands(log.grep("rm -rf", 100).unwrap()),
        ["rm -rf build0", "rm -rf build10", "rm -rf build20", "rm -rf build30"]
    );
    assert_eq!(commands(log.grep("RM -RF", 100).unwrap()), Vec::<String>::new(), "uppercase: case-sensitive");
    assert_eq!(commands(log.grep("BUILD", 100).unwrap()).len(), 0);
    assert_eq!(commands(log.grep("build", 2).unwrap()), ["rm -rf build20", "rm -rf build30"]);
    assert_eq!(log.grep("dir3*", 100).unwrap().len(), 0, "not a regex");
    assert_eq!(log.grep("anything", 0).unwrap().len(), 0);
}
