use super::*;

fn streamed(mut stream: AnswerStream, text: &str, size: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: String = chars.chunks(size).map(|piece| stream.push(&piece.iter().collect::<String>())).collect();
    out.push_str(&stream.finish());
    out
}

#[test]
fn plain_text_split_anywhere_ends_as_the_whole_answer_would() {
    let text = "  The disk\x1b]0;x\x07 is \x1b[31mfull\x1b[0m.\r\n\n- one\t\n- two  \n\n";
    let whole = crate::ui::markdown::render(text, usize::MAX, false);
    for size in 1..=text.len() {
        assert_eq!(streamed(AnswerStream::plain(true), text, size), whole, "pieces of {size}");
    }
    assert_eq!(streamed(AnswerStream::plain(false), "a\x1b[2J\n\n", 1), "a\x1b[2J\n");
    assert_eq!(streamed(AnswerStream::plain(true), " \n", 1), "");
}

#[test]
fn blocks_are_rendered_when_complete_and_code_blocks_stay_whole() {
    let render: BlockRenderer = Box::new(|block: &str| format!("<{}>\n", block.trim()));
    let mut stream = AnswerStream::blocks(render, false, 80);
    assert_eq!(stream.push("One\ntwo"), "");
    assert_eq!(stream.push("\n\n```sh\nls\n\n"), "<One\ntwo>\n");
    assert_eq!(stream.push("pwd\n```\nend"), "\n<```sh\nls\n\npwd\n```>\n");
    // Right after a code block, as in the source: no blank line.
    assert_eq!(stream.finish(), "<end>\n");
}

#[test]
fn markdown_blocks_split_anywhere_render_as_one_piece_would() {
    let text =
        "# Disk\n\nIt is **full**:\n\n```sh\ndf -h\n\ndu -sh /var\n```\nThen:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    let stream =
        || AnswerStream::blocks(Box::new(|block: &str| crate::ui::markdown::render(block, 60, true)), false, 60);
    let whole = streamed(stream(), text, text.len());
    assert!(whole.contains("df -h") && !whole.contains("**full**"), "{whole:?}");
    for size in 1..text.len() {
        assert_eq!(streamed(stream(), text, size), whole, "pieces of {size}");
    }
}

#[test]
fn the_preview_is_erased_before_its_block_is_rendered() {
    // (The real renderers sanitize; this one shows what it was given.)
    let render: BlockRenderer = Box::new(|block: &str| format!("[{}]\n", block.trim()));
    let mut stream = AnswerStream::blocks(render, true, 10);
    assert_eq!(stream.push("abc\x1b[2J"), "abc");
    assert_eq!(stream.push("defghijkl\nxy"), "defghijkl\nxy");
    // 12 columns over 10 take two rows, then `xy` on the third: up two rows.
    assert_eq!(stream.push("\n\nz"), "\x1b[2A\r\x1b[J[abc\x1b[2Jdefghijkl\nxy]\nz");
    assert_eq!(stream.finish(), "\r\x1b[J\n[z]\n");
}

#[test]
fn a_preview_taller_than_the_screen_stays_as_plain_text() {
    let render: BlockRenderer = Box::new(|block: &str| format!("[{}]\n", block.trim()));
    let mut stream = AnswerStream::blocks(render, true, 10);
    if let Kind::Blocks { preview: Some(preview), .. } = &mut stream.kind {
        preview.max_rows = Some(3);
    }
    assert_eq!(stream.push("a\nb\nc\nd"), "a\nb\nc\nd");
    // Too tall to erase: kept as it is, not rendered again.
    assert_eq!(stream.push("\n\nshort"), "\n\nshort");
    assert_eq!(stream.finish(), "\r\x1b[J[short]\n");
}

fn events(style: crate::ui::render::Style, events: &[crate::protocol::AgentEvent]) -> (String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    {
        let mut renderer = crate::ui::render::Renderer::new(style, &mut out, &mut err);
        for event in events {
            renderer.handle(event).unwrap();
        }
    }
    (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn streamed_answers_and_thoughts_end_as_the_whole_event_alone_would() {
    use crate::protocol::AgentEvent::{Answer, AnswerDelta, Thought};
    use crate::ui::render::Style;
    let delta = |text: &str| AnswerDelta { text: text.into() };
    let human = Style::Human { color: false, spinner: false };
    let whole = "Disk \x1b]52;c;eA==\x07full.\n\n";
    let pieces = [delta("Disk \x1b]52"), delta(";c;eA==\x07fu"), delta("ll.\n"), Answer { text: whole.into() }];
    for style in [human, Style::Quiet] {
        assert_eq!(events(style, &pieces), events(style, &pieces[3..]), "{style:?}");
    }
    // Text before a tool call: shown as it streamed, the line ended; the rest of the thought dimmed on stderr.
    let thought = [delta("Let me "), delta("check."), Thought { text: "Let me check. More".into() }];
    assert_eq!(events(human, &thought), ("Let me check.\n".into(), "More".into()));
    // `-q`: stdout is only the answer; text before a call never reaches it.
    assert_eq!(events(Style::Quiet, &thought), (String::new(), String::new()));
    // A recovered text call leaves the prose around it, trimmed: nothing shown twice.
    assert_eq!(unseen("Let me look.\n", "Let me look.\n\nThen more."), "\nThen more.");
    assert_eq!(unseen("Let me look.\n", "Let me look."), "");
    assert_eq!(unseen("Something", "Else entirely"), "Else entirely");
    // JSON: every delta, then the whole answer.
    let (out, _) = events(Style::Json, &pieces);
    let types: Vec<String> =
        out.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string()).collect();
    assert_eq!(types, ["\"answer_delta\"", "\"answer_delta\"", "\"answer_delta\"", "\"answer\""]);
}
