//! `opsai sessions list|show` as text: one line per saved conversation, or one conversation's
//! messages. Stored text is escaped on the way out (control characters as `\u{1b}`), so a saved
//! message cannot drive the terminal.

use std::fmt::Write as _;
use std::io::{self, Write};

use anstyle::Style;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::protocol::{ChatMessage, Role};
use crate::store::sessions::{ConversationSummary, label};
use crate::ui::style::{self, dim, paint};

/// Lines of a tool result shown; the rest is counted.
const TOOL_OUTPUT_LINES: usize = 20;

const MINUTE_MS: i64 = 60 * 1000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;
/// Older than this, the age is the date.
const DAYS_AS_AGE: i64 = 7;

/// One line per conversation: id, age of the last message, message count, title, and the directory
/// it was started in (dimmed); updated times older than a week show as the local date.
pub fn write_list(out: &mut impl Write, sessions: &[ConversationSummary], now_ms: i64, color: bool) -> io::Result<()> {
    write_list_in(out, sessions, now_ms, color, &TimeZone::system())
}

/// [`write_list`] with dates in `zone` (tests use UTC).
fn write_list_in(
    out: &mut impl Write,
    sessions: &[ConversationSummary],
    now_ms: i64,
    color: bool,
    zone: &TimeZone,
) -> io::Result<()> {
    if sessions.is_empty() {
        return writeln!(out, "no saved conversations yet; start one with `opsai`");
    }
    let rows: Vec<[String; 4]> = sessions
        .iter()
        .map(|session| {
            let title = if session.title.is_empty() { "(untitled)".to_owned() } else { one_line(&session.title) };
            [label(session.id), age(session.updated_at, now_ms, zone), count(session.message_count), title]
        })
        .collect();
    let width = |column: usize| rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0);
    let (id_width, age_width, count_width, title_width) = (width(0), width(1), width(2), width(3));
    for (session, [id, age, count, title]) in sessions.iter().zip(&rows) {
        let mut line = format!("{id:>id_width$}  {age:<age_width$}  {count:>count_width$}  ");
        if session.cwd.is_empty() {
            line.push_str(title);
        } else {
            let cwd = paint(dim(), &one_line(&session.cwd), color);
            let _ = write!(line, "{title:<title_width$}  {cwd}");
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// A header (id, title, directory, host, model, message count), then the conversation: `you:`,
/// `assistant:` with a `▶` line per tool call, and tool results in a `│` gutter, cut to 20 lines.
/// System messages are not shown.
pub(crate) fn write_show(
    out: &mut impl Write,
    summary: &ConversationSummary,
    messages: &[ChatMessage],
    color: bool,
) -> io::Result<()> {
    let bold = Style::new().bold();
    let title = if summary.title.is_empty() { "(untitled)".to_owned() } else { one_line(&summary.title) };
    writeln!(out, "conversation {}: {}", label(summary.id), paint(bold, &title, color))?;
    let mut facts = Vec::new();
    let web = [("user", &summary.user), ("cluster", &summary.cluster)];
    let web = web.iter().filter_map(|(label, value)| value.as_ref().map(|value| (*label, value)));
    let terminal = [("cwd", &summary.cwd), ("host", &summary.host), ("model", &summary.model)];
    for (label, value) in web.chain(terminal) {
        if !value.is_empty() {
            facts.push(format!("{label} {}", one_line(value)));
        }
    }
    facts.push(plural(summary.message_count, "message", "messages"));
    writeln!(out, "{}", paint(dim(), &facts.join(" · "), color))?;
    writeln!(out)?;
    for message in messages {
        match message.role {
            Role::System => {}
            Role::User => write_labelled(out, paint(style::action(), "you:", color), "you:", &message.content)?,
            Role::Assistant => {
                if !message.content.trim().is_empty() {
                    write_labelled(out, paint(bold, "assistant:", color), "assistant:", &message.content)?;
                }
                for call in &message.tool_calls {
                    let command = match call.arguments.get("command").and_then(|command| command.as_str()) {
                        Some(command) => command.to_owned(),
                        None => call.arguments.to_string(),
                    };
                    let label = format!("  ▶ {} ", one_line(&call.name));
                    write_labelled(out, paint(style::action(), &label, color), &label, &command)?;
                }
            }
            Role::Tool => write_tool_output(out, &message.content, color)?,
        }
    }
    Ok(())
}

/// `label text`, the text's further lines indented under its first.
fn write_labelled(out: &mut impl Write, painted_label: String, label: &str, text: &str) -> io::Result<()> {
    let indent = " ".repeat(label.chars().count() + 1);
    let mut lines = text.trim_end().lines();
    writeln!(out, "{painted_label} {}", printable(lines.next().unwrap_or_default()))?;
    for line in lines {
        writeln!(out, "{}", format!("{indent}{}", printable(line)).trim_end())?;
    }
    Ok(())
}

fn write_tool_output(out: &mut impl Write, text: &str, color: bool) -> io::Result<()> {
    let gutter = paint(dim(), "  │", color);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.is_empty() {
        return writeln!(out, "{gutter} {}", paint(dim(), "(no output)", color));
    }
    for line in lines.iter().take(TOOL_OUTPUT_LINES) {
        let line = printable(line);
        if line.is_empty() { writeln!(out, "{gutter}")? } else { writeln!(out, "{gutter} {line}")? }
    }
    if lines.len() > TOOL_OUTPUT_LINES {
        let more = format!("… ({} more lines)", lines.len() - TOOL_OUTPUT_LINES);
        writeln!(out, "{gutter} {}", paint(dim(), &more, color))?;
    }
    Ok(())
}

/// "just now", "5 min ago", "3 h ago", "2 d ago", else the date in `zone`.
fn age(updated_at: i64, now_ms: i64, zone: &TimeZone) -> String {
    let elapsed = now_ms.saturating_sub(updated_at);
    if elapsed < MINUTE_MS {
        "just now".to_owned()
    } else if elapsed < HOUR_MS {
        format!("{} min ago", elapsed / MINUTE_MS)
    } else if elapsed < DAY_MS {
        format!("{} h ago", elapsed / HOUR_MS)
    } else if elapsed < DAYS_AS_AGE * DAY_MS {
        format!("{} d ago", elapsed / DAY_MS)
    } else {
        Timestamp::from_millisecond(updated_at)
            .map_or_else(|_| "?".to_owned(), |at| at.to_zoned(zone.clone()).date().to_string())
    }
}

fn count(messages: i64) -> String {
    plural(messages, "msg", "msgs")
}

fn plural(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `text` on one line: line breaks as spaces, other control characters escaped.
fn one_line(text: &str) -> String {
    printable(&text.replace("\r\n", " ").replace(['\n', '\r'], " "))
}

/// `text` safe for a terminal: tabs kept, other control characters (escape sequences) as `\u{1b}`.
fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::protocol::ToolCall;

    /// 2026-11-22 10:30:00 UTC.
    const NOW: i64 = 1_795_343_400_000;

    fn summary(id: i64, title: &str, updated_at: i64, message_count: i64) -> ConversationSummary {
        ConversationSummary {
            id,
            title: title.into(),
            cwd: "/srv/app".into(),
            host: "web1".into(),
            model: "gpt-4o-mini".into(),
            created_at: updated_at - 1000,
            updated_at,
            message_count,
            user: None,
            cluster: None,
        }
    }

    fn list(sessions: &[ConversationSummary], color: bool) -> String {
        let mut out = Vec::new();
        write_list_in(&mut out, sessions, NOW, color, &TimeZone::UTC).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn show(summary: &ConversationSummary, messages: &[ChatMessage]) -> String {
        let mut out = Vec::new();
        write_show(&mut out, summary, messages, false).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lists_one_aligned_line_per_conversation() {
        let mut other_dir = summary(7, "why is nginx down", NOW - 3 * HOUR_MS - 5, 1);
        other_dir.cwd = "/etc/nginx".into();
        let sessions = [
            summary(112, "find the biggest logs", NOW - 20_000, 12),
            summary(9, "disk usage by directory", NOW - 5 * MINUTE_MS, 4),
            other_dir,
            summary(3, "rotate the certs", NOW - 2 * DAY_MS - 1, 30),
            summary(1, "", NOW - 40 * DAY_MS, 2),
        ];
        assert_eq!(
            list(&sessions, false),
            concat!(
                "c112  just now    12 msgs  find the biggest logs    /srv/app\n",
                "  c9  5 min ago    4 msgs  disk usage by directory  /srv/app\n",
                "  c7  3 h ago       1 msg  why is nginx down        /etc/nginx\n",
                "  c3  2 d ago     30 msgs  rotate the certs         /srv/app\n",
                "  c1  2026-10-13   2 msgs  (untitled)               /srv/app\n",
            )
        );
    }

    #[test]
    fn dims_the_directory_when_colored() {
        let text = list(&[summary(1, "a", NOW, 2)], true);
        assert_eq!(text, format!("c1  just now  2 msgs  a  {}\n", paint(dim(), "/srv/app", true)));
    }

    #[test]
    fn an_empty_list_says_how_to_start() {
        assert_eq!(list(&[], false), "no saved conversations yet; start one with `opsai`\n");
    }

    #[test]
    fn escapes_control_characters_and_keeps_lines_without_a_directory() {
        let mut session = summary(4, "a\u{1b}[2Jb", NOW, 2);
        session.cwd = String::new();
        assert_eq!(list(&[session], false), "c4  just now  2 msgs  a\\u{1b}[2Jb\n");
    }

    #[test]
    fn ages_round_down_and_turn_into_dates_after_a_week() {
        let utc = TimeZone::UTC;
        assert_eq!(age(NOW + 5000, NOW, &utc), "just now");
        assert_eq!(age(NOW - 59_999, NOW, &utc), "just now");
        assert_eq!(age(NOW - MINUTE_MS, NOW, &utc), "1 min ago");
        assert_eq!(age(NOW - HOUR_MS + 1, NOW, &utc), "59 min ago");
        assert_eq!(age(NOW - 23 * HOUR_MS - 1, NOW, &utc), "23 h ago");
        assert_eq!(age(NOW - 6 * DAY_MS, NOW, &utc), "6 d ago");
        assert_eq!(age(NOW - 7 * DAY_MS, NOW, &utc), "2026-11-15");
    }

    #[test]
    fn shows_a_conversation_with_tool_calls_and_results() {
        let output: String = (1..=23).map(|n| format!("line {n}\n")).collect();
        let messages = [
            ChatMessage::system("You are opsai."),
            ChatMessage::user("find big logs\nunder /var/log"),
            ChatMessage::assistant(
                "Let me look.",
                vec![ToolCall {
                    id: "call_1".into(),
                    name: "run_command".into(),
                    arguments: json!({"command": "du -sh /var/log/*", "why": "sizes"}),
                }],
            ),
            ChatMessage::tool("call_1", "1.2G\t/var/log/big.log\n\n4.0K\t/var/log/small.log\n"),
            ChatMessage::assistant(
                "",
                vec![ToolCall { id: "call_2".into(), name: "grep".into(), arguments: json!({"pattern": "error"}) }],
            ),
            ChatMessage::tool("call_2", ""),
            ChatMessage::assistant(
                "",
                vec![ToolCall { id: "c3".into(), name: "run_command".into(), arguments: json!({"command": "seq 23"}) }],
            ),
            ChatMessage::tool("c3", output),
            ChatMessage::assistant("The biggest is big.log.\n\n- 1.2G", vec![]),
        ];
        let expected = [
            "conversation c12: find big logs under /var/log",
            "cwd /srv/app · host web1 · model gpt-4o-mini · 9 messages",
            "",
            "you: find big logs",
            "     under /var/log",
            "assistant: Let me look.",
            "  ▶ run_command  du -sh /var/log/*",
            "  │ 1.2G\t/var/log/big.log",
            "  │",
            "  │ 4.0K\t/var/log/small.log",
            "  ▶ grep  {\"pattern\":\"error\"}",
            "  │ (no output)",
            "  ▶ run_command  seq 23",
        ];
        let mut expected: Vec<String> = expected.iter().map(|line| (*line).to_owned()).collect();
        expected.extend((1..=20).map(|n| format!("  │ line {n}")));
        expected.extend(
            ["  │ … (3 more lines)", "assistant: The biggest is big.log.", "", "           - 1.2G"].map(str::to_owned),
        );
        let text = show(&summary(12, "find big logs under /var/log", NOW, 9), &messages);
        assert_eq!(text, expected.join("\n") + "\n");
    }

    #[test]
    fn shows_a_multi_line_command_under_its_tool() {
        let call =
            ToolCall { id: "c".into(), name: "run_command".into(), arguments: json!({"command": "cd /tmp &&\nls"}) };
        let mut session = summary(2, "", NOW, 1);
        session.host = String::new();
        assert_eq!(
            show(&session, &[ChatMessage::assistant("", vec![call])]),
            concat!(
                "conversation c2: (untitled)\n",
                "cwd /srv/app · model gpt-4o-mini · 1 message\n",
                "\n",
                "  ▶ run_command  cd /tmp &&\n",
                "                 ls\n",
            )
        );
    }
}
