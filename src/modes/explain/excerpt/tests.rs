use super::*;
use crate::modes::explain::input::read_bounded;

fn excerpt_of(data: &[u8], keep: usize) -> Excerpt {
    let input = read_bounded(&mut &data[..], 256 * 1024).unwrap();
    excerpt(&input, keep)
}

/// `count` lines of exactly 100 bytes, numbered from `first`.
fn lines(first: usize, count: usize) -> Vec<u8> {
    (first..first + count).flat_map(|i| format!("line {i:08} {}\n", "x".repeat(85)).into_bytes()).collect()
}

#[test]
fn short_input_is_cleaned_and_kept_whole() {
    let text = excerpt_of(b"\x1b[31merror\x1b[0m: disk full\r\nretry 1\rretry 2\n", 12_000);
    assert_eq!(text, Excerpt { text: "error: disk full\nretry 2\n".into(), truncated_bytes: 0, total_bytes: 43 });
}

#[test]
fn long_input_keeps_whole_lines_from_both_ends_and_counts_the_rest() {
    for middle_lines in [50, 10_000] {
        let data = [lines(0, 100), lines(100, middle_lines), lines(100 + middle_lines, 100)].concat();
        let kept = excerpt_of(&data, 12_000);
        assert_eq!(kept.total_bytes, data.len() as u64);
        assert_eq!(kept.truncated_bytes, data.len() as u64 - 12_000, "{middle_lines}");
        let (head, tail) =
            kept.text.split_once(&format!("... [{} bytes truncated] ...\n", kept.truncated_bytes)).unwrap();
        assert_eq!(head.as_bytes(), &lines(0, 60)[..]);
        assert_eq!(tail.as_bytes(), &lines(140 + middle_lines, 60)[..]);
    }
}

#[test]
fn a_line_that_does_not_fit_ends_the_part_unless_much_budget_is_left() {
    let mut data = b"short first line\n".to_vec();
    data.extend(std::iter::repeat_n(b"word ", 10_000).flatten());
    data.extend(b"\nlast line\n");
    let kept = excerpt_of(&data, 1000);
    let (head, tail) = kept.text.split_once("... [").unwrap();
    // 483 characters of the head's 500 were left after the first line: the long line is cut there.
    assert!(head.starts_with("short first line\nword word"), "{head}");
    assert_eq!(head.chars().count(), 500 + 1, "{head:?}");
    assert!(tail.ends_with("word word \nlast line\n"), "{tail}");
    let marker = format!("... [{} bytes truncated] ...\n", kept.truncated_bytes);
    assert_eq!(kept.text.len() - marker.len() - 1, data.len() - kept.truncated_bytes as usize);
}

#[test]
fn a_long_word_at_a_cut_edge_is_redacted() {
    let mut data = b"Authorization: Bearer ".to_vec();
    data.extend(std::iter::repeat_n(b'A', 50_000));
    data.extend(b" end\n");
    let kept = excerpt_of(&data, 1000);
    assert!(kept.text.starts_with("Authorization: Bearer [REDACTED:cut]\n... ["), "{}", kept.text);
    assert!(kept.text.ends_with("] ...\n[REDACTED:cut] end\n"), "{}", kept.text);
}

#[test]
fn budgets_count_characters_and_invalid_utf8_is_replaced() {
    let data = "日本語のログ ".repeat(5_000);
    let kept = excerpt_of(data.as_bytes(), 1000);
    let (head, _) = kept.text.split_once("\n... [").unwrap();
    assert_eq!(head.chars().count(), 500);
    let noise: Vec<u8> = (0..100_000u32).map(|i| [0x80, 0xff, b'a', 0xc3][i as usize % 4]).collect();
    let kept = excerpt_of(&noise, 1000);
    let (head, tail) = kept.text.split_once("\n... [").unwrap();
    assert!(head.chars().count() <= 500 && tail.chars().count() <= 530, "{head:?}");
    assert!(head.contains('\u{fffd}'));
}
