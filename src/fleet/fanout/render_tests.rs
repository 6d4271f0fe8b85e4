use std::time::Duration;

use super::*;
use crate::exec::output::Captured;
use crate::fleet::Host;
use crate::fleet::fanout::outcome::{HostRun, Skip};

fn ran(name: &str, exit_code: i32, output: &str) -> HostRun {
    HostRun {
        host: Host::named(name),
        outcome: Outcome::Ran { exit_code },
        detail: String::new(),
        output: Captured::whole(output),
        output_hash: {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            output.hash(&mut h);
            h.finish()
        },
        duration: Duration::from_millis(5),
    }
}

fn failed(name: &str, outcome: Outcome, detail: &str) -> HostRun {
    HostRun::not_started(Host::named(name), outcome, detail)
}

fn no_redaction(text: &str) -> String {
    text.to_owned()
}

#[test]
fn identical_outputs_are_one_group_and_failures_group_by_kind() {
    let mut runs: Vec<HostRun> = (1..=37).map(|i| ran(&format!("web-{i:02}"), 0, "ok\n")).collect();
    runs.push(ran("db-1", 0, "different\n"));
    runs.push(ran("db-2", 1, "ok\n"));
    runs.push(failed("gone-1", Outcome::Unreachable, "ssh: connect to host 127.0.0.1 port 1: Connection refused"));
    runs.push(failed("gone-2", Outcome::Unreachable, "ssh: connect to host 127.0.0.1 port 2: Connection refused"));
    runs.push(failed("later", Outcome::NotRun(Skip::MaxFail), ""));
    let result = FleetResult { command: "cat /etc/motd".into(), runs };
    let all = groups(&result.runs);
    assert_eq!(all[0].hosts.len(), 37);
    assert_eq!(all[1].hosts, ["gone-1", "gone-2"]);
    assert_eq!(all.len(), 5);
    let human = for_human(&result, &no_redaction);
    assert!(human.contains("37 hosts: web-[01:37] · exit 0\nok\n"), "{human}");
    assert!(human.contains("2 hosts: gone-[1:2] · unreachable\n   ssh: connect"), "{human}");
    assert!(human.contains("1 host: db-2 · exit 1"), "{human}");
    let line = summary(&result, &|text: &str| text.to_owned());
    assert_eq!(
        line,
        "`cat /etc/motd` on 42 hosts: ran on 39 (38 exit 0, 1 non-zero); 2 failed (unreachable 2), 2 not reached; 1 not run"
    );
}

#[test]
fn the_models_view_of_200_distinct_hosts_stays_under_8_kb_and_counts_everyone() {
    let mut runs: Vec<HostRun> = (1..=190)
        .map(|i| ran(&format!("node-{i:03}"), i % 3, &format!("{}\n", "x".repeat(300 + i as usize))))
        .collect();
    runs.extend((191..=195).map(|i| failed(&format!("node-{i:03}"), Outcome::TimedOut, "timed out connecting")));
    runs.extend(
        (196..=200).map(|i| failed(&format!("node-{i:03}"), Outcome::HostKey, "Host key verification failed.")),
    );
    let result = FleetResult { command: "du -sh /var".into(), runs };
    let view = for_model(&result, &no_redaction);
    assert!(view.len() < MODEL_VIEW_MAX, "{} bytes", view.len());
    assert!(view.starts_with("`du -sh /var` on 200 hosts: ran on 190"), "{view}");
    assert!(view.contains("more groups with other output not shown ("), "{view}");
    assert!(view.contains("5 hosts: node-[191:195] · timed out"), "{view}");
    assert!(view.contains("5 hosts: node-[196:200] · host key changed"), "{view}");
    // The hosts left out are named (compacted), not only counted.
    assert!(view.contains("node-"), "{view}");
    // A huge output and a huge fleet with unnumbered names stay bounded too.
    let big: Vec<HostRun> =
        (0..200).map(|i| ran(&format!("h{}-{}", "q".repeat(i % 7), i * 13), 0, &"y".repeat(5000 + i))).collect();
    let view = for_model(&FleetResult { command: "x".into(), runs: big }, &no_redaction);
    assert!(view.len() < MODEL_VIEW_MAX, "{} bytes", view.len());
}

#[test]
fn renderings_apply_the_callers_redaction() {
    let result = FleetResult {
        command: "env".into(),
        runs: vec![
            ran("a", 0, "TOKEN=sk-secret\n"),
            failed("b", Outcome::AuthFailed, "sk-secret@b: Permission denied"),
        ],
    };
    let redact = |text: &str| text.replace("sk-secret", "[REDACTED]");
    for text in [for_human(&result, &redact), for_model(&result, &redact)] {
        assert!(!text.contains("sk-secret") && text.contains("[REDACTED]"), "{text}");
    }
}
