use serde_json::json;

use super::*;
use crate::policy::{PolicyConfig, assess};
use crate::protocol::Risk;

fn argv(tool: Structured, args: serde_json::Value) -> Vec<String> {
    build(tool, &args, false).unwrap_or_else(|e| panic!("{e}"))
}

fn line(tool: Structured, args: serde_json::Value) -> String {
    argv(tool, args).iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
}

#[test]
fn find_builds_its_expression_and_values_stay_words() {
    assert_eq!(
        line(Structured::Find, json!({"name": "*.log", "path": "/var/log", "type": "f", "maxdepth": 2})),
        "find /var/log -maxdepth 2 -type f -name '*.log'"
    );
    assert_eq!(line(Structured::Find, json!({"name": "-delete"})), "find . -name -delete", "a name is -name's value");
    assert!(build(Structured::Find, &json!({"name": "x", "path": "-exec"}), false).unwrap_err().contains("./-exec"));
    assert!(build(Structured::Find, &json!({"name": "x", "type": "l"}), false).is_err());
    assert!(build(Structured::Find, &json!({"path": "."}), false).unwrap_err().contains("`name`"));
}

#[test]
fn grep_puts_the_pattern_after_e_and_files_after_the_double_dash() {
    assert_eq!(
        line(Structured::Grep, json!({"pattern": "-v error", "file": "a.log -rf", "ignore_case": true})),
        "grep -i -e '-v error' -- a.log -rf"
    );
    assert_eq!(
        line(Structured::Grep, json!({"pattern": "$(rm -rf ~)", "file": "x", "recursive": true, "count_only": true})),
        "grep -r -c -e '$(rm -rf ~)' -- x"
    );
}

#[test]
fn injection_in_any_value_is_a_quoted_word() {
    let text = line(Structured::Grep, json!({"pattern": "a'; touch pwned; echo '", "file": "f"}));
    assert_eq!(text, r"grep -e 'a'\''; touch pwned; echo '\''' -- f");
    let assessment = assess(&text, &PolicyConfig::default());
    assert_eq!(assessment.commands.len(), 1, "one command, not three: {assessment:?}");
    assert_eq!(assessment.risk, Risk::Safe);
}

#[test]
fn wget_needs_a_real_url_and_a_plain_output_path() {
    assert_eq!(
        line(Structured::Wget, json!({"url": "https://example.com/a.tgz", "output_file": "a.tgz"})),
        "wget -O a.tgz -- https://example.com/a.tgz"
    );
    assert!(build(Structured::Wget, &json!({"url": "file:///etc/passwd"}), false).is_err());
    assert!(build(Structured::Wget, &json!({"url": "https://x", "output_file": "-"}), false).is_err());
}

#[test]
fn ps_filters_and_options() {
    assert_eq!(line(Structured::Ps, json!({})), "ps -eo pid,user,%cpu,%mem,etime,cmd");
    assert_eq!(line(Structured::Ps, json!({"name": "nginx", "user": "www-data"})), "ps -u www-data -C nginx");
    assert_eq!(line(Structured::Ps, json!({"pid": "12,34", "options": ["-f"]})), "ps -f -p 12,34");
    assert!(build(Structured::Ps, &json!({"pid": "1; reboot"}), false).is_err());
    assert!(build(Structured::Ps, &json!({"options": ["--sort=-%mem", "/etc"]}), false).is_err());
    assert!(build(Structured::Ps, &json!({"user": "-e"}), false).is_err());
    let mac = build(Structured::Ps, &json!({"name": "nginx"}), true).unwrap();
    assert_eq!(mac, ["pgrep", "-il", "--", "nginx"]);
}

#[test]
fn macos_ps_by_name_honours_user_and_refuses_pid_or_options() {
    let mac = |args| build(Structured::Ps, &args, true);
    assert_eq!(mac(json!({"name": "nginx", "user": "www"})).unwrap(), ["pgrep", "-il", "-u", "www", "--", "nginx"]);
    for args in [json!({"name": "nginx", "pid": "12"}), json!({"name": "nginx", "options": ["-f"]})] {
        let refused = mac(args.clone()).unwrap_err();
        assert!(refused.contains("cannot also apply `pid` or ps `options`"), "{args}: {refused}");
    }
    assert!(mac(json!({"name": "nginx", "user": "-e"})).is_err());
    // Without a name, macOS ps takes the filters as ps.
    assert_eq!(mac(json!({"pid": "12", "user": "www"})).unwrap(), ["ps", "-u", "www", "-p", "12"]);
}

#[test]
fn ss_port_filter_and_the_macos_fallback() {
    assert_eq!(
        line(Structured::Ss, json!({"port": 8080, "protocol": "tcp", "options": ["-l", "-n"]})),
        "ss -l -n -t '( sport = :8080 or dport = :8080 )'"
    );
    assert_eq!(line(Structured::Ss, json!({})), "ss -tunap");
    assert!(build(Structured::Ss, &json!({"port": 70000}), false).is_err());
    assert_eq!(build(Structured::Ss, &json!({"port": "443"}), true).unwrap(), ["lsof", "-nP", "-i:443"]);
    assert!(build(Structured::Ss, &json!({}), true).is_err());
}

#[test]
fn lsof_paths_go_after_the_double_dash() {
    assert_eq!(line(Structured::Lsof, json!({"port": 5432})), "lsof -nP -i:5432");
    assert_eq!(line(Structured::Lsof, json!({"path": "-rf", "user": "alice"})), "lsof -nP -u alice -- -rf");
}

#[test]
fn read_only_tools_assess_safe_and_wget_does_not() {
    let policy = PolicyConfig::default();
    for (tool, args) in [
        (Structured::Find, json!({"name": "*.log"})),
        (Structured::Grep, json!({"pattern": "x", "file": "a"})),
        (Structured::Ps, json!({})),
        (Structured::Ss, json!({"port": 80})),
        (Structured::Lsof, json!({"port": 80})),
    ] {
        let text = line(tool, args);
        assert_eq!(assess(&text, &policy).risk, Risk::Safe, "{text}");
    }
    let download = line(Structured::Wget, json!({"url": "https://example.com/x.sh"}));
    assert!(assess(&download, &policy).risk > Risk::Safe, "{download}");
}
