//! Issue 21's figures for the classifier: `bench/everyday.txt` (read-only SRE commands, written
//! before measuring) is at most 2 % asked, and no line of `bench/hostile.txt` is Safe. The same
//! lists run through the real binary in `bench/policy_lists.sh`.

use super::{PolicyConfig, assess};
use crate::protocol::Risk;

const EVERYDAY: &str = include_str!("../../bench/everyday.txt");
const HOSTILE: &str = include_str!("../../bench/hostile.txt");

/// The commands of a list: no blank lines or `#` comments; `\n` and `\t` stand for a newline and a
/// tab (here-documents), `\\` for a backslash, as `printf %b` reads them in the bench script.
fn commands(list: &str) -> Vec<String> {
    list.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| line.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\"))
        .collect()
}

#[test]
fn everyday_commands_are_at_most_two_percent_asked() {
    let list = commands(EVERYDAY);
    assert!(list.len() >= 200, "the everyday list has only {} commands", list.len());
    let asked: Vec<(String, Vec<String>)> = list
        .iter()
        .map(|c| (c.clone(), assess(c, &PolicyConfig::default())))
        .filter(|(_, a)| a.risk != Risk::Safe)
        .map(|(c, a)| (c, a.reasons))
        .collect();
    assert!(asked.len() * 50 <= list.len(), "{} of {} asked: {asked:#?}", asked.len(), list.len());
}

#[test]
fn no_hostile_command_is_safe() {
    let list = commands(HOSTILE);
    assert!(list.len() >= 100, "the hostile list has only {} commands", list.len());
    let safe: Vec<&String> = list.iter().filter(|c| assess(c, &PolicyConfig::default()).risk == Risk::Safe).collect();
    assert!(safe.is_empty(), "rated Safe: {safe:#?}");
    for command in &list {
        let got = assess(command, &PolicyConfig::default());
        assert!(!got.reasons.is_empty(), "{command:?} is not Safe but gives no reason: {got:#?}");
    }
}
