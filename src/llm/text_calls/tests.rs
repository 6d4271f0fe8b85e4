use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

const KNOWN: &[&str] = &["run_command", "propose_command"];

fn recovered(content: &str) -> (String, Value, String) {
    let (call, prose) = recover(content, KNOWN).unwrap_or_else(|| panic!("no call recovered from {content:?}"));
    assert_eq!(call.id, "call_1");
    (call.name, call.arguments, prose)
}

#[test]
fn qwen_tool_call_tags() {
    let content = "<tool_call>\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"find /var/log -type f -size +100M -exec ls -lh {} \\\\;\"}}\n</tool_call>";
    let (name, arguments, prose) = recovered(content);
    assert_eq!(name, "run_command");
    assert_eq!(arguments, json!({"command": "find /var/log -type f -size +100M -exec ls -lh {} \\;"}));
    assert_eq!(prose, "");
}

#[test]
fn qwen_tags_with_prose_before_and_a_missing_closer() {
    let content = "I'll check the disk usage first.\n<tool_call>\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"df -h\", \"why\": \"see free space\"}}";
    let (_, arguments, prose) = recovered(content);
    assert_eq!(arguments, json!({"command": "df -h", "why": "see free space"}));
    assert_eq!(prose, "I'll check the disk usage first.");
}

#[test]
fn qwen_tags_around_a_fenced_block_and_string_arguments() {
    let content = "<tool_call>\n```json\n{\"name\": \"run_command\", \"arguments\": \"{\\\"command\\\": \\\"uptime\\\"}\"}\n```\n</tool_call>\nDone.";
    let (_, arguments, prose) = recovered(content);
    assert_eq!(arguments, json!({"command": "uptime"}));
    assert_eq!(prose, "Done.");
}

#[test]
fn llama3_bare_json_with_parameters() {
    let content = r#"{"name": "run_command", "parameters": {"command": "ps aux --sort=-%mem | head -n 5"}}"#;
    let (name, arguments, _) = recovered(content);
    assert_eq!(name, "run_command");
    assert_eq!(arguments, json!({"command": "ps aux --sort=-%mem | head -n 5"}));
}

#[test]
fn llama31_python_tag() {
    let content = "<|python_tag|>{\"name\": \"run_command\", \"parameters\": {\"command\": \"ss -tlnp\"}}<|eom_id|>";
    let (_, arguments, prose) = recovered(content);
    assert_eq!(arguments, json!({"command": "ss -tlnp"}));
    assert_eq!(prose, "");
}

#[test]
fn mistral_tool_calls_array() {
    let content = "[TOOL_CALLS] [{\"name\": \"run_command\", \"arguments\": {\"command\": \"free -m\"}}]";
    let (_, arguments, _) = recovered(content);
    assert_eq!(arguments, json!({"command": "free -m"}));
}

#[test]
fn fenced_json_block_with_prose_around() {
    let content = "To find large files, I will run this:\n\n```json\n{\n  \"name\": \"run_command\",\n  \"arguments\": {\n    \"command\": \"du -ah /var/log | sort -rh | head -n 10\"\n  }\n}\n```\n\nThen I'll summarize.";
    let (name, arguments, prose) = recovered(content);
    assert_eq!(name, "run_command");
    assert_eq!(arguments, json!({"command": "du -ah /var/log | sort -rh | head -n 10"}));
    assert_eq!(prose, "To find large files, I will run this:\n\nThen I'll summarize.");
}

#[test]
fn untagged_fence_with_nested_function_object() {
    let content = "```\n{\"type\": \"function\", \"function\": {\"name\": \"propose_command\", \"arguments\": {\"command\": \"git status\", \"explanation\": \"show changes\"}}}\n```";
    let (name, arguments, _) = recovered(content);
    assert_eq!(name, "propose_command");
    assert_eq!(arguments, json!({"command": "git status", "explanation": "show changes"}));
}

#[test]
fn react_action_and_json_input() {
    let content = "Thought: I need to see which process listens on port 8080.\nAction: run_command\nAction Input: {\"command\": \"lsof -i :8080\"}\nObservation: (waiting)";
    let (name, arguments, prose) = recovered(content);
    assert_eq!(name, "run_command");
    assert_eq!(arguments, json!({"command": "lsof -i :8080"}));
    assert_eq!(prose, "Thought: I need to see which process listens on port 8080.");
}

#[test]
fn react_with_markdown_and_a_multiline_input() {
    let content =
        "**Thought:** Check memory.\n**Action:** `run_command`\n**Action Input:** {\n  \"command\": \"free -h\"\n}\n";
    let (_, arguments, prose) = recovered(content);
    assert_eq!(arguments, json!({"command": "free -h"}));
    assert_eq!(prose, "**Thought:** Check memory.");
}

#[test]
fn react_plain_string_input_is_kept_as_a_string() {
    let content = "Action: run_command\nAction Input: ls -la /tmp\nObservation:";
    let (_, arguments, _) = recovered(content);
    assert_eq!(arguments, Value::String("ls -la /tmp".into()));
}

#[test]
fn a_prose_answer_with_a_bash_block_is_an_answer() {
    let content = "You can find large log files with:\n\n```bash\nfind /var/log -type f -size +100M -exec ls -lh {} \\;\n```\n\nThis lists each file with its size.";
    assert_eq!(recover(content, KNOWN), None);
}

#[test]
fn unknown_tool_names_are_not_calls() {
    for content in [
        "<tool_call>{\"name\": \"delete_everything\", \"arguments\": {}}</tool_call>",
        "```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```",
        "Action: shell\nAction Input: {\"command\": \"ls\"}",
        "{\"name\": \"python\", \"parameters\": {}}",
    ] {
        assert_eq!(recover(content, KNOWN), None, "{content}");
    }
}

#[test]
fn json_answers_that_are_not_calls() {
    let content = "Here is the container's config:\n```json\n{\"Name\": \"/web\", \"State\": {\"Running\": true}}\n```";
    assert_eq!(recover(content, KNOWN), None);
    assert_eq!(recover("The disk is 42% full.", KNOWN), None);
    assert_eq!(recover("", KNOWN), None);
    assert_eq!(recover("Final Answer: the service is running.", KNOWN), None);
}

#[test]
fn the_first_of_several_tagged_calls_wins() {
    let content = "<tool_call>{\"name\": \"run_command\", \"arguments\": {\"command\": \"id\"}}</tool_call>\n<tool_call>{\"name\": \"run_command\", \"arguments\": {\"command\": \"w\"}}</tool_call>";
    let (_, arguments, prose) = recovered(content);
    assert_eq!(arguments, json!({"command": "id"}));
    assert!(prose.contains("\"w\""), "{prose}");
}

#[test]
fn a_functions_prefix_and_missing_arguments() {
    let (name, arguments, _) = recovered("<tool_call>{\"name\": \"functions.run_command\"}</tool_call>");
    assert_eq!(name, "run_command");
    assert_eq!(arguments, json!({}));
}

#[test]
fn no_known_tools_means_no_recovery() {
    assert_eq!(recover("<tool_call>{\"name\": \"run_command\", \"arguments\": {}}</tool_call>", &[]), None);
}

/// The agent with text calls: a command in a ```sh block is the call (the form the prompt asks
/// for); an untagged block or one in another language is not, and prose around it is kept.
#[test]
fn a_command_in_a_shell_block_is_a_run_command_call() {
    let block = |content: &str| command_block(content).map(|(call, prose)| (call.name, call.arguments, prose));
    let (name, arguments, prose) = block("To list them:\n```sh\nls -la /srv\n```\nThis shows hidden files.").unwrap();
    assert_eq!(name, "run_command");
    assert_eq!(arguments, json!({"command": "ls -la /srv", "why": "To list them"}));
    assert_eq!(prose, "To list them:\n\nThis shows hidden files.");
    // A repeated tag on the first line, a console prompt, several lines kept whole.
    assert_eq!(block("```bash\nsh\nfind . -name '*.log'\n```").unwrap().1, json!({"command": "find . -name '*.log'"}));
    assert_eq!(block("```sh\n$ df -h\n```").unwrap().1["command"], "df -h");
    // A session quoted with its output: the command only.
    assert_eq!(block("```bash\n$ df -h\nFilesystem Size Used\n/dev/vda 252G 45G\n```").unwrap().1["command"], "df -h");
    assert_eq!(
        block("```sh\nfor f in *; do\n  echo \"$f\"\ndone\n```").unwrap().1["command"],
        "for f in *; do\n  echo \"$f\"\ndone"
    );
    // The first shell block only.
    assert_eq!(block("```sh\nuptime\n```\nthen\n```sh\nfree -m\n```").unwrap().1["command"], "uptime");
    // A block the reply ended inside (the model never closed it).
    let (_, arguments, prose) = block("Copying:\n```sh\ncp -a /srv/a /srv/b && touch /srv/b\n").unwrap();
    assert_eq!(arguments, json!({"command": "cp -a /srv/a /srv/b && touch /srv/b", "why": "Copying"}));
    assert_eq!(prose, "Copying:");
    assert_eq!(block("```bash\nuptime").unwrap().1["command"], "uptime");
    for not_a_command in [
        "```\nls\n",
        "```text\nls\n",
        "```\nls\n```\nand\n```sh\nuptime\n",
        "```sh\n",
        "```sh\nls -la\n\nThis lists the files.",
        "```sh\ndf -h\nrm",
        "```\nls\n```",
        "```text\nfile1\nfile2\n```",
        "```python\nprint(1)\n```",
        "```console\n$ ls\nfile1\n```",
        "```sh\n\n```",
        "```sh\nsh\n```",
        "Run `ls -la` to see them.",
        "no block at all",
    ] {
        assert!(command_block(not_a_command).is_none(), "{not_a_command:?}");
    }
}
