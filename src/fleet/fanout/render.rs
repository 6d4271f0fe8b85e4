//! The two renderings of a fleet result: every group for the person, and the model's view, which
//! stays under [`MODEL_VIEW_MAX`] bytes whatever the host count. Both take the caller's redaction
//! (`redact`) and apply it to every output and ssh message they show.

use std::fmt::Write as _;

use super::FleetResult;
use super::group::{Group, groups, host_list};
use super::outcome::Outcome;
use crate::exec::output::{join_cut, scrub_cut_edges};

/// The model's view never reaches this many bytes.
pub const MODEL_VIEW_MAX: usize = 8 * 1024;
/// What the model's view aims for, leaving room for the lines that always come.
const MODEL_BUDGET: usize = 7 * 1024;
/// Bytes of one group's output in the model's view (head and tail kept).
const MODEL_GROUP_OUTPUT: usize = 1800;
/// Characters of a group's host list in the model's view.
const MODEL_HOSTS: usize = 240;
/// Characters of a host list in the person's view.
const HUMAN_HOSTS: usize = 2000;

/// `ran on 47 of 50 hosts (45 exit 0, 2 non-zero); 3 failed (unreachable 2, timed out 1); 0 not run`.
pub fn summary(result: &FleetResult, redact: &dyn Fn(&str) -> String) -> String {
    let total = result.runs.len();
    let ran: Vec<i32> = result.runs.iter().filter_map(|run| run.exit_code()).collect();
    let zero = ran.iter().filter(|code| **code == 0).count();
    let mut kinds: Vec<(&'static str, usize)> = Vec::new();
    let mut not_run = 0;
    for run in &result.runs {
        match run.outcome {
            Outcome::Ran { .. } => {}
            Outcome::NotRun(_) => not_run += 1,
            other => match kinds.iter_mut().find(|(label, _)| *label == other.label()) {
                Some((_, n)) => *n += 1,
                None => kinds.push((other.label(), 1)),
            },
        }
    }
    let failed: usize = kinds.iter().map(|(_, n)| n).sum();
    let unreached = result.runs.iter().filter(|run| run.outcome.unreached()).count();
    let mut line = format!(
        "`{}` on {total} host{}: ran on {} ({zero} exit 0, {} non-zero); {failed} failed",
        redact(&result.command),
        plural(total),
        ran.len(),
        ran.len() - zero
    );
    if !kinds.is_empty() {
        let parts: Vec<String> = kinds.iter().map(|(label, n)| format!("{label} {n}")).collect();
        let _ = write!(line, " ({})", parts.join(", "));
    }
    let _ = write!(line, ", {unreached} not reached; {not_run} not run");
    line
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The heading of one group: `37 hosts: web-[01:37] · exit 0`.
fn heading(group: &Group, max_hosts: usize) -> String {
    let n = group.hosts.len();
    format!("{n} host{}: {} · {}", plural(n), host_list(&group.hosts, max_hosts), group.outcome.describe())
}

/// Everything, for the person: each group's heading, then its output (or ssh's reason).
pub fn for_human(result: &FleetResult, redact: &dyn Fn(&str) -> String) -> String {
    let mut text = summary(result, redact);
    text.push('\n');
    for group in groups(&result.runs) {
        let Some(sample) = result.runs.get(group.sample) else { continue };
        let _ = writeln!(text, "── {}", heading(&group, HUMAN_HOSTS));
        if !sample.detail.is_empty() && !group.outcome.ran() {
            let _ = writeln!(text, "   {}", redact(&sample.detail));
        }
        let output = scrub_cut_edges(sample.output.map(redact)).text();
        if !output.is_empty() {
            text.push_str(&output);
            if !output.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    text
}

/// What the model is told, under [`MODEL_VIEW_MAX`] bytes: the summary, then the groups that
/// ran, largest first and each output cut to its head and tail, while they fit the budget; then
/// how many groups (and which hosts) were left out; then every failure kind with its hosts and
/// one ssh message.
pub fn for_model(result: &FleetResult, redact: &dyn Fn(&str) -> String) -> String {
    let all = groups(&result.runs);
    let (ran, failed): (Vec<&Group>, Vec<&Group>) = all.iter().partition(|group| group.outcome.ran());
    let mut failures = String::new();
    for group in &failed {
        let detail = result.runs.get(group.sample).map(|run| redact(&run.detail)).unwrap_or_default();
        let _ = writeln!(failures, "## {}", heading(group, MODEL_HOSTS));
        if !detail.is_empty() {
            let _ = writeln!(failures, "{}", cut(&detail, 160));
        }
    }
    let mut text = summary(result, redact);
    text.push('\n');
    let budget = MODEL_BUDGET.saturating_sub(failures.len() + text.len());
    let mut body = String::new();
    let mut shown = 0;
    for group in &ran {
        let Some(sample) = result.runs.get(group.sample) else { continue };
        let output = cut(&scrub_cut_edges(sample.output.map(redact)).text(), MODEL_GROUP_OUTPUT);
        let block = format!(
            "## {}\n{output}{}",
            heading(group, MODEL_HOSTS),
            if output.ends_with('\n') || output.is_empty() { "" } else { "\n" }
        );
        if body.len() + block.len() > budget {
            break;
        }
        body.push_str(&block);
        shown += 1;
    }
    text.push_str(&body);
    let rest = &ran[shown..];
    if !rest.is_empty() {
        let hosts: Vec<String> = rest.iter().flat_map(|group| group.hosts.iter().cloned()).collect();
        let _ = writeln!(
            text,
            "## {} more group{} with other output not shown ({} host{}: {})",
            rest.len(),
            plural(rest.len()),
            hosts.len(),
            plural(hosts.len()),
            host_list(&hosts, 400)
        );
    }
    text.push_str(&failures);
    cut(&text, MODEL_VIEW_MAX - 64)
}

/// `text` when it fits `max` bytes, else its head and tail around a truncation marker.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(48);
    let head_end = floor(text, keep * 2 / 3);
    let tail_start = ceil(text, text.len() - (keep - head_end));
    let dropped = (tail_start - head_end) as u64;
    join_cut(&text[..head_end], dropped, &text[tail_start..])
}

fn floor(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
