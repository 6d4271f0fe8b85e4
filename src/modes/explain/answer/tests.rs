use super::*;
use crate::policy::assess;

/// The shell commands the answer suggests, in order.
fn suggested_commands(answer: &str) -> Vec<String> {
    segments(answer)
        .into_iter()
        .filter_map(|segment| match segment {
            Segment::Command(body) if !body.trim().is_empty() => Some(body.trim_end().to_owned()),
            Segment::Command(_) | Segment::Text(_) | Segment::Comment(_) => None,
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

#[test]
fn a_block_of_several_commands_gives_each_its_own_badge() {
    let answer = "Clean up:\n```sh\n# see what is there\ndf -h\n\nrm -rf ~/cache\nsystemctl restart myapp\n```\n";
    let shown = render(answer, &PolicyConfig::default(), false, 80);
    assert_eq!(
        shown,
        "Clean up:\n\
         \x20 # see what is there\n\
         \x20 [SAFE] df -h\n\
         \x20 [HIGH] rm -rf ~/cache\n\
         \x20     - rm -rf ~/cache: recursive delete\n\
         \x20 [MEDIUM] systemctl restart myapp\n\
         \x20     - systemctl restart myapp: changes a service\n"
    );
}

#[test]
fn a_command_the_shell_would_continue_stays_one_command() {
    let answer = "```sh\ntar -czf /tmp/logs.tgz \\\n  /var/log/nginx\nps aux |\n  grep nginx\nfor f in *.log; do\n  rm \"$f\"\ndone\ncat <<EOF\nrm -rf /\nEOF\necho 'a\nb'\nls\n```\n";
    assert_eq!(
        suggested_commands(answer),
        vec![
            "tar -czf /tmp/logs.tgz \\\n  /var/log/nginx".to_owned(),
            "ps aux |\n  grep nginx".to_owned(),
            "for f in *.log; do\n  rm \"$f\"\ndone".to_owned(),
            "cat <<EOF\nrm -rf /\nEOF".to_owned(),
            "echo 'a\nb'".to_owned(),
            "ls".to_owned(),
        ]
    );
    // Text that never parses is one command, never split into harmless-looking lines.
    assert_eq!(
        suggested_commands("```sh\nls\necho \"unclosed\nrm -rf ~\n```\n"),
        vec!["ls", "echo \"unclosed\nrm -rf ~"]
    );
}

#[test]
fn inline_code_that_runs_a_program_gets_its_badge_after_its_paragraph() {
    let answer = "Run `systemctl restart myapp`, then `df -h`; the file `/etc/nginx/nginx.conf` sets \
                  `proxy_pass http://app` for the `nginx` service.\n";
    let shown = render(answer, &PolicyConfig::default(), false, 80);
    assert!(
        shown.ends_with(
            "\n  [MEDIUM] systemctl restart myapp\n\
             \x20     - systemctl restart myapp: changes a service\n\
             \x20 [SAFE] df -h\n"
        ),
        "{shown}"
    );
    assert_eq!(shown.matches('[').count(), 2, "{shown}");
}

#[test]
fn inline_spans_follow_commonmark_backtick_runs() {
    let known = |word: &str| ["ls", "rm", "grep"].contains(&word);
    assert_eq!(
        inline_commands("``grep -c '`' x.txt`` and `rm -r d` and `ls -l` again `ls -l`", &known),
        vec!["grep -c '`' x.txt", "rm -r d", "ls -l"]
    );
    // An unmatched run is text; a lone word, an unknown program or a broken command is not shown.
    assert_eq!(inline_commands("a ``` b `ls` `frob -x` `rm 'x` `ls -a`", &known), vec!["ls -a"]);
}
