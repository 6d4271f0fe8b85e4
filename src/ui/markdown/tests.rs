use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use termimad::FmtComposite;
use termimad::minimad::Compound;

use super::*;

static SGR: LazyLock<Regex> = LazyLock::new(|| Regex::new("\x1b\\[[0-9;]*m").expect("valid regex"));

/// The text a person sees: `rendered` without its SGR styling.
fn visible(rendered: &str) -> String {
    SGR.replace_all(rendered, "").into_owned()
}

fn visible_lines(rendered: &str) -> Vec<String> {
    visible(rendered).lines().map(str::to_owned).collect()
}

/// Display columns, wide characters counting two (termimad's own measure, from `unicode-width`).
fn columns(line: &str) -> usize {
    FmtComposite::from_compound(Compound::raw_str(line)).visible_length
}

fn assert_only_sgr(rendered: &str) {
    let rest = visible(rendered);
    assert!(!rest.contains('\x1b'), "escape other than SGR in {rendered:?}");
    assert!(!rest.chars().any(|c| c.is_control() && c != '\n'), "control character in {rendered:?}");
}

const INJECTION: &str = "Done.\x1b]52;c;cm0gLXJmIH4=\x07 Screen\x1b[2J cleared.\rfake\u{202e}txt.exe\n";

#[test]
fn empty_or_blank_input_renders_nothing() {
    for input in ["", "   ", "\n\n\t \n", "\x1b[2J\r\u{200b}"] {
        assert_eq!(render(input, 80, true), "", "{input:?}");
        assert_eq!(render(input, 80, false), "", "{input:?}");
    }
}

#[test]
fn plain_mode_is_the_source_unchanged() {
    let source = "# Title\n\nSome **bold** and `code`.\n\n```bash\n\tdocker ps\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |";
    assert_eq!(render(source, 40, false), format!("{source}\n"));
}

#[test]
fn plain_mode_trims_trailing_whitespace_to_one_newline() {
    assert_eq!(render("  indented answer  \n\n \n", 80, false), "  indented answer\n");
}

#[test]
fn control_sequences_are_removed_in_both_modes() {
    for color in [true, false] {
        let rendered = render(INJECTION, 80, color);
        assert_only_sgr(&rendered);
        for needle in ["]52;", "\x07", "[2J", "\r", "\u{202e}"] {
            assert!(!rendered.contains(needle), "{needle:?} survived in {rendered:?} (color {color})");
        }
        assert!(visible(&rendered).contains("Done. Screen cleared.faketxt.exe"), "{rendered:?}");
    }
    let plain = render(INJECTION, 80, false);
    assert!(!plain.contains('\x1b'), "{plain:?}");
}

#[test]
fn plain_mode_has_no_escape_sequences() {
    let rendered = render("# Heading\n\n- **bold** item\n\n```\ncode\n```\n", 80, false);
    assert!(!rendered.contains('\x1b'), "{rendered:?}");
}

#[test]
fn heading_is_styled_without_its_hashes() {
    let rendered = render("# Containers\n\n## Details\n\nText.", 80, true);
    assert_eq!(visible_lines(&rendered), ["Containers", "", "Details", "", "Text."]);
    assert!(rendered.contains("\x1b[1m"), "heading not bold: {rendered:?}");
    assert!(rendered.contains("\x1b[38;5;6m"), "heading not cyan: {rendered:?}");
}

#[test]
fn emphasis_and_inline_code_are_styled() {
    let rendered = render("Some **bold**, *italic* and `ls -la` here.", 80, true);
    assert_eq!(visible(&rendered), "Some bold, italic and ls -la here.\n");
    assert!(rendered.contains("\x1b[1mbold"), "{rendered:?}");
    assert!(rendered.contains("\x1b[3mitalic"), "{rendered:?}");
    let code_start = rendered.find("ls -la").expect("inline code present");
    assert!(rendered[..code_start].ends_with('m'), "inline code is not styled: {rendered:?}");
}

#[test]
fn fenced_code_block_lines_stay_whole_and_literal() {
    let long = "docker ps --format '{{.Names}} {{.Status}}' | grep -v exited | sort | uniq -c";
    let source = format!("Run:\n\n```bash\n{long}\necho *not italic* **x** `y`\n\n  indented\n```\n\nDone.");
    let rendered = render(&source, 40, true);
    let lines = visible_lines(&rendered);
    assert_eq!(
        lines,
        ["Run:", "", format!("  {long}").as_str(), "  echo *not italic* **x** `y`", "", "    indented", "", "Done."]
    );
    assert!(rendered.contains("\x1b[48;5;"), "code block has no background: {rendered:?}");
    assert!(!rendered.contains("bash"), "the info string is not shown: {rendered:?}");
}

#[test]
fn fence_under_a_list_item_or_with_tildes_is_code() {
    let source = "1. Check the service:\n   ```\n   systemctl status nginx\n   ```\n2. Then:\n\n~~~sh\nls **\n~~~\n";
    let rendered = render(source, 80, true);
    let lines = visible_lines(&rendered);
    assert_eq!(lines, ["1. Check the service:", "  systemctl status nginx", "2. Then:", "", "  ls **"]);
}

#[test]
fn tabs_are_expanded_to_tab_stops() {
    let rendered = render("```\nall:\n\tmake\na\tb\n```", 80, true);
    assert_eq!(visible_lines(&rendered), ["  all:", "      make", "  a   b"]);
}

#[test]
fn table_is_drawn_with_borders_between_cells() {
    let rendered = render("| Name | Status |\n|------|--------|\n| nginx | up 3 days |\n| redis | down |", 80, true);
    let lines = visible_lines(&rendered);
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[0].starts_with('┌') && lines[0].ends_with('┐'), "{lines:#?}");
    assert_eq!(lines[1], "│ Name  │  Status   │");
    assert!(lines[2].starts_with('├') && lines[2].contains('┼'), "{lines:#?}");
    assert_eq!(lines[3], "│ nginx │ up 3 days │");
    assert_eq!(lines[4], "│ redis │ down      │");
    assert!(lines[5].starts_with('└') && lines[5].ends_with('┘'), "{lines:#?}");
    assert!(rendered.contains("\x1b[38;5;"), "borders are not styled: {rendered:?}");
}

#[test]
fn table_with_its_own_borders_gets_no_extra_ones() {
    let rendered = render("|-|-|\n| a | b |\n|-|-|\n| 1 | 2 |\n|-|-|", 80, true);
    let lines = visible_lines(&rendered);
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert!(lines[0].starts_with('┌') && lines[4].starts_with('└'), "{lines:#?}");
}

#[test]
fn list_items_start_with_bullets_and_numbers() {
    let rendered = render("- first\n- second with `code`\n  - nested\n\n1. one\n2. two", 80, true);
    let lines = visible_lines(&rendered);
    assert_eq!(lines, ["• first", "• second with code", "  • nested", "", "1. one", "2. two"]);
    assert!(rendered.contains("\x1b[38;5;6m•"), "{rendered:?}");
}

#[test]
fn long_paragraph_wraps_to_the_width() {
    let words: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    let paragraph = words.join(" ");
    let rendered = render(&format!("{paragraph}\n\n- {paragraph}"), 40, true);
    let lines = visible_lines(&rendered);
    assert!(lines.len() > 10, "{lines:#?}");
    for line in &lines {
        assert!(columns(line) <= 40, "{} columns: {line:?}", columns(line));
    }
    let seen: Vec<&str> = lines.iter().flat_map(|line| line.split_whitespace()).filter(|w| *w != "•").collect();
    let expected: Vec<&str> = words.iter().chain(&words).map(String::as_str).collect();
    assert_eq!(seen, expected);
}

#[test]
fn width_is_clamped_to_a_minimum() {
    let rendered = render("alpha beta gamma delta epsilon zeta eta theta iota kappa", 3, true);
    let lines = visible_lines(&rendered);
    assert!(lines.len() > 1, "{lines:#?}");
    assert!(lines.iter().all(|line| columns(line) <= MIN_WIDTH), "{lines:#?}");
    assert!(lines.iter().any(|line| columns(line) > 10), "wrapped narrower than the minimum: {lines:#?}");
}

#[test]
fn huge_width_is_capped() {
    let rendered = render("above\n\n---\n\nbelow", usize::MAX, true);
    let rule = &visible_lines(&rendered)[2];
    assert_eq!(rule.chars().count(), MAX_WIDTH);
    assert!(rule.chars().all(|c| c == '―'), "{rule:?}");
}

#[test]
fn cjk_text_keeps_every_character_and_fits_the_width() {
    let source = "# 容器列表\n这个服务是 nginx 反向代理。它把请求转发到后端的三个容器，并在失败时自动重试，日志写在标准输出。\n\n| 名称 | 状态 |\n|---|---|\n| 数据库 | 运行中 |";
    let rendered = render(source, 30, true);
    let shown: String = visible(&rendered).chars().filter(|c| !c.is_whitespace()).collect();
    let wanted: String = source.chars().filter(|c| !c.is_whitespace() && !"#|-".contains(*c)).collect();
    let kept: String = shown.chars().filter(|c| !"│┌┐└┘├┤┬┴┼─".contains(*c)).collect();
    assert_eq!(kept, wanted);
    for line in visible_lines(&rendered) {
        assert!(columns(&line) <= 30, "{} columns: {line:?}", columns(&line));
    }
}

proptest! {
    #[test]
    fn styling_never_panics_or_emits_foreign_escapes(
        source in "([-#*`|>~ \t\n1.a-z容器]|```|\\| a \\| b \\|\n|[\u{1F600}é]){0,80}",
        width in 0usize..120,
    ) {
        let clean = sanitize(&source).text;
        let rendered = styled(&normalize(&clean), width.max(MIN_WIDTH));
        assert_only_sgr(&rendered);
    }
}
