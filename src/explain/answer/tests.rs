use super::*;
use crate::policy::assess;

/// The shell commands the answer suggests, in order.
fn suggested_commands(answer: &str) -> Vec<String> {
    segments(answer)
        .into_iter()
        .filter_map(|segment| match segment {
            Segment::Command(body) if !body.trim().is_empty() => Some(body.trim_end().to_owned()),
            _ => None,
        })
        .collect()
}

const ANSWER: &str = "\
This is nginx's error log: the upstream refuses connections.

Check the backend:
```sh
systemctl status myapp --no-pager
```
Then restart it:

```bash
systemctl restart myapp
```
The log line:
```
connect() failed (111: Connection refused)
```
";

#[test]
fn shell_blocks_are_commands_and_other_blocks_stay_prose() {
    assert_eq!(
        suggested_commands(ANSWER),
        vec!["systemctl status myapp --no-pager".to_owned(), "systemctl restart myapp".to_owned()]
    );
    let segments = segments(ANSWER);
    assert_eq!(segments.len(), 5);
    assert!(matches!(&segments[4], Segment::Text(t) if t.contains("```\nconnect() failed")));
    // An unclosed block is not a command.
    assert!(suggested_commands("Run:\n```sh\nrm -rf /\n").is_empty());
}

#[test]
fn each_suggested_command_is_shown_with_its_risk() {
    let shown = render(ANSWER, &PolicyConfig::default(), false, 80);
    assert_eq!(
        shown,
        "This is nginx's error log: the upstream refuses connections.\n\nCheck the backend:\n\
         \x20 [SAFE] systemctl status myapp --no-pager\n\
         Then restart it:\n\
         \x20 [MEDIUM] systemctl restart myapp\n\
         \x20     - systemctl restart myapp: changes a service\n\
         The log line:\n```\nconnect() failed (111: Connection refused)\n```\n"
    );
}

#[test]
fn escape_sequences_in_a_suggested_command_are_removed_and_counted() {
    let shown = render("```sh\nls\x1b[2K; rm -rf ~\n```\n", &PolicyConfig::default(), false, 80);
    assert!(shown.starts_with("  [HIGH] ls; rm -rf ~\n"), "{shown}");
    assert!(!shown.contains('\x1b'));
}

#[test]
fn the_command_view_lists_parts_and_the_local_risk() {
    let command = r#"find . -name "*.log" -mtime +7 -delete"#;
    let view = command_view(command, &assess(command, &PolicyConfig::default()), false);
    assert_eq!(
        view,
        "find . -name \"*.log\" -mtime +7 -delete\nparts:\n  1. find . -name '*.log' -mtime +7 -delete\n\
         risk: [HIGH] · opsai asks before running it\n\
         \x20 - find . -name *.log -mtime +7 -delete: find -delete deletes every match\n"
    );
    let view = command_view("ls -la", &assess("ls -la", &PolicyConfig::default()), false);
    assert_eq!(view, "ls -la\nparts:\n  1. ls -la\nrisk: [SAFE] · read-only: opsai would run it without asking\n");
}

#[test]
fn words_are_quoted_only_when_needed() {
    assert_eq!(quote("-name"), "-name");
    assert_eq!(quote("*.log"), "'*.log'");
    assert_eq!(quote("it's"), r"'it'\''s'");
    assert_eq!(quote(""), "''");
}
