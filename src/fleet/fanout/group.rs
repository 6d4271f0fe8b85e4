//! Hosts with the same result as one group, and host lists written short (`web-[01:37]`).

use std::collections::HashMap;

use super::outcome::{HostRun, Outcome};

/// Hosts that ran the command with byte-identical output and the same exit status, or that
/// failed the same way (failures are grouped by kind, whatever ssh's message said).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub outcome: Outcome,
    /// Inventory names, in the order the hosts were given.
    pub hosts: Vec<String>,
    /// Index (into the runs) of the first host of the group: its output and detail stand for all.
    pub sample: usize,
}

/// What makes two runs one group.
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Ran { exit_code: i32, hash: u64, bytes: u64 },
    Failed(Outcome),
}

fn key(run: &HostRun) -> Key {
    match run.outcome {
        Outcome::Ran { exit_code } => Key::Ran { exit_code, hash: run.output_hash, bytes: run.output.total_bytes },
        other => Key::Failed(other),
    }
}

/// The groups, largest first (ties: the group whose first host came first).
pub fn groups(runs: &[HostRun]) -> Vec<Group> {
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let at = *index.entry(key(run)).or_insert_with(|| {
            groups.push(Group { outcome: run.outcome, hosts: Vec::new(), sample: i });
            groups.len() - 1
        });
        if let Some(group) = groups.get_mut(at) {
            group.hosts.push(run.host.name.clone());
        }
    }
    // Stable: equal sizes keep their first-seen order.
    groups.sort_by_key(|group| std::cmp::Reverse(group.hosts.len()));
    groups
}

/// How a run of numbers is written: zero-padded to a width, or plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Digits {
    Width(usize),
    Plain,
}

/// A name split around its last run of digits.
struct Numbered<'a> {
    prefix: &'a str,
    digits: &'a str,
    suffix: &'a str,
    value: u64,
}

fn numbered(name: &str) -> Option<Numbered<'_>> {
    let end = name.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = name[..end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    let digits = &name[start..end];
    // Past u64 (or absurdly long): not a number worth a range.
    let value = digits.parse().ok().filter(|_| digits.len() <= 18)?;
    Some(Numbered { prefix: &name[..start], digits, suffix: &name[end..], value })
}

/// The formats a number's digits allow in a range.
fn formats(digits: &str) -> [Option<Digits>; 2] {
    let plain = (!(digits.len() > 1 && digits.starts_with('0'))).then_some(Digits::Plain);
    [Some(Digits::Width(digits.len())), plain]
}

/// Names sharing a prefix and suffix: (prefix, suffix) and each member's number and digits.
type Family<'a> = ((&'a str, &'a str), Vec<(u64, &'a str)>);

/// Host names written short, Ansible's way: consecutive numbers with the same prefix and suffix
/// as one `prefix[first:last]suffix` (`web-[01:37]`, `db[1:12].eu`); everything else as it is.
/// Order: by first appearance of each prefix/suffix, numbers ascending.
pub fn compact(names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut families: Vec<Family<'_>> = Vec::new();
    for name in names {
        match numbered(name) {
            Some(n) => match families.iter_mut().find(|(key, _)| *key == (n.prefix, n.suffix)) {
                Some((_, members)) => members.push((n.value, n.digits)),
                None => families.push(((n.prefix, n.suffix), vec![(n.value, n.digits)])),
            },
            None => out.push(name.clone()),
        }
    }
    for ((prefix, suffix), mut members) in families {
        members.sort_unstable();
        members.dedup();
        let mut i = 0;
        while let Some(&(first, first_digits)) = members.get(i) {
            let mut allowed = formats(first_digits);
            let mut j = i + 1;
            while let Some(&(value, digits)) = members.get(j) {
                let prev = members.get(j - 1).map_or(0, |m| m.0);
                let next = formats(digits);
                let both: [Option<Digits>; 2] = allowed.map(|f| f.filter(|f| next.contains(&Some(*f))));
                if value != prev + 1 || both.iter().all(Option::is_none) {
                    break;
                }
                allowed = both;
                j += 1;
            }
            let last = members.get(j - 1).map_or(first, |m| m.0);
            if j - i == 1 {
                out.push(format!("{prefix}{first_digits}{suffix}"));
            } else {
                let show = |value: u64| match allowed.iter().flatten().next() {
                    Some(Digits::Width(width)) => format!("{value:0width$}"),
                    _ => value.to_string(),
                };
                out.push(format!("{prefix}[{}:{}]{suffix}", show(first), show(last)));
            }
            i = j;
        }
    }
    out
}

/// [`compact`] joined with `, `, cut at about `max_chars` with how many names were left out.
pub fn host_list(names: &[String], max_chars: usize) -> String {
    let items = compact(names);
    let mut text = String::new();
    for (i, item) in items.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        if text.len() + sep.len() + item.len() > max_chars && i > 0 {
            let rest: usize = items[i..].iter().map(|item| count(item)).sum();
            text.push_str(&format!(", … and {rest} more"));
            return text;
        }
        text.push_str(sep);
        text.push_str(item);
    }
    text
}

/// How many hosts a compacted item stands for.
fn count(item: &str) -> usize {
    let Some(open) = item.rfind('[') else { return 1 };
    let Some(close) = item[open..].find(']') else { return 1 };
    let range = &item[open + 1..open + close];
    match range.split_once(':').map(|(a, b)| (a.parse::<usize>(), b.parse::<usize>())) {
        Some((Ok(a), Ok(b))) if b >= a => b - a + 1,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn numbered_names_become_ranges() {
        let web: Vec<String> = (1..=37).map(|i| format!("web-{i:02}")).collect();
        assert_eq!(compact(&web), ["web-[01:37]"]);
        let plain: Vec<String> = (1..=12).map(|i| format!("db{i}.eu")).collect();
        assert_eq!(compact(&plain), ["db[1:12].eu"]);
        assert_eq!(compact(&names(&["web-03", "api", "web-01", "web-02", "web-07"])), ["api", "web-[01:03]", "web-07"]);
        assert_eq!(compact(&names(&["a1", "b1"])), ["a1", "b1"]);
        // Padded and plain numbers of other widths do not share a range.
        assert_eq!(compact(&names(&["h08", "h09", "h010"])), ["h[08:09]", "h010"]);
        assert_eq!(compact(&names(&["h9", "h10"])), ["h[9:10]"]);
        assert_eq!(compact(&names(&["x"])), ["x"]);
    }

    #[test]
    fn a_long_host_list_is_cut_with_a_count() {
        let many: Vec<String> = (0..100).map(|i| format!("node{}x", i * 2)).collect();
        let text = host_list(&many, 60);
        assert!(text.len() < 100 && text.ends_with(" more"), "{text}");
        let shown = text.split(", ").filter(|w| w.starts_with("node")).count();
        assert!(text.ends_with(&format!("and {} more", 100 - shown)), "{text}");
        assert_eq!(host_list(&names(&["web-1", "web-2"]), 60), "web-[1:2]");
    }
}
