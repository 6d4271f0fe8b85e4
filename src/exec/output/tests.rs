use std::time::Duration;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use rstest::rstest;

use super::clean::{LINE_CAP, printable_ascii_prefix};
use super::*;

fn capture_all(head: usize, tail: usize, chunks: &[&[u8]]) -> Captured {
    let mut capture = Capture::new(head, tail);
    for chunk in chunks {
        capture.push(chunk);
    }
    capture.finish()
}

#[rstest]
#[case::plain("hello\n", "hello\n")]
#[case::crlf("a\r\nb\r\n", "a\nb\n")]
#[case::tabs_kept("a\tb\n", "a\tb\n")]
#[case::sgr("\x1b[31mred\x1b[0m plain\n", "red plain\n")]
#[case::sgr_many_params("\x1b[1;38;5;208mx\x1b[m", "x")]
#[case::osc_bel("\x1b]0;title\x07text", "text")]
#[case::osc_st("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link")]
#[case::dcs("\x1bPq#0;2;0;0;0\x1b\\after", "after")]
#[case::apc("\x1b_payload\x1b\\x", "x")]
#[case::charset("\x1b(Bplain\x1b)0", "plain")]
#[case::keypad_and_save("\x1b=\x1b>\x1b7x\x1b8", "x")]
#[case::private_modes("\x1b[?25l\x1b[?1049hscreen\x1b[?25h", "screen")]
#[case::c1_csi("\u{9b}31mred", "red")]
#[case::c1_osc("\u{9d}0;t\u{9c}ok", "ok")]
#[case::other_controls_dropped("a\x07b\x00c\x0bd\x7fe", "abcde")]
#[case::progress("progress 1\rprogress 2\rprogress 3\n", "progress 3\n")]
#[case::progress_with_erase("10%\r\x1b[K50%\r\x1b[K100%\ndone\n", "100%\ndone\n")]
#[case::erase_line_then_column_one("working\x1b[2K\x1b[1Gdone\n", "done\n")]
#[case::column_one_default("abc\x1b[Gxy\n", "xy\n")]
#[case::cr_at_end("last\r", "last")]
#[case::crcrlf("a\r\r\nb", "a\nb")]
#[case::cr_then_escape_then_text("old\r\x1b[32mnew\x1b[0m\n", "new\n")]
#[case::backspace("abc\x08X\n", "abX\n")]
#[case::spinner("|\x08/\x08-\x08\\\x08done\n", "done\n")]
#[case::backspace_on_empty_line("\x08\x08a", "a")]
#[case::escape_aborted_by_newline("a\x1b\nb", "a\nb")]
#[case::cancel_in_csi("\x1b[31\x18x", "x")]
#[case::unicode("héllo 世界 🎉\n", "héllo 世界 🎉\n")]
fn cleans_terminal_output(#[case] raw: &str, #[case] expected: &str) {
    assert_eq!(clean_text(raw.as_bytes()), expected);
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    assert_eq!(clean_text(b"a\xffb"), "a\u{fffd}b");
    assert_eq!(clean_text(b"a\xe4\xb8"), "a\u{fffd}");
    assert_eq!(clean_text(b"\xe4\xb8a"), "\u{fffd}a");
    assert_eq!(clean_text(b"\xed\xa0\x80x"), "\u{fffd}\u{fffd}\u{fffd}x");
}

#[test]
fn characters_split_at_every_chunk_boundary_are_reassembled() {
    let text = "héllo 世界 🎉 \x1b[31mred\x1b[0m\r\nnext";
    let whole = clean_text(text.as_bytes());
    let bytes = text.as_bytes();
    for split in 0..=bytes.len() {
        let got = capture_all(usize::MAX, 0, &[&bytes[..split], &bytes[split..]]).text();
        assert_eq!(got, whole, "split at {split}");
    }
    let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(capture_all(usize::MAX, 0, &one_by_one).text(), whole);
}

#[test]
fn invalid_bytes_across_chunks_match_the_one_shot_result() {
    let bytes: &[u8] = b"a\xf0\x9f\x8e\xe4\xb8\xadz\xf0\x90\x80A\xe0\x80b";
    let whole = clean_text(bytes);
    for split in 0..=bytes.len() {
        let got = capture_all(usize::MAX, 0, &[&bytes[..split], &bytes[split..]]).text();
        assert_eq!(got, whole, "split at {split}");
    }
}

#[test]
fn keeps_head_and_tail_with_the_byte_count_between() {
    let captured = capture_all(3, 2, &[b"0123456789"]);
    assert_eq!(captured.text(), "012\n... [5 bytes truncated] ...\n89");
    assert_eq!(captured.truncated_bytes, 5);
    assert_eq!(captured.total_bytes, 10);
}

#[test]
fn counts_truncated_bytes_not_characters() {
    // 10 three-byte characters; head 2 and tail 3 keep 5, dropping 5 × 3 bytes.
    let captured = capture_all(2, 3, &["世".repeat(10).as_bytes()]);
    assert_eq!(captured.truncated_bytes, 15);
    assert_eq!(captured.text(), format!("世世\n... [15 bytes truncated] ...\n{}", "世".repeat(3)));
}

#[test]
fn marker_follows_a_head_that_ends_a_line_without_a_blank_line() {
    let captured = capture_all(2, 2, &[b"a\nbbbbbb\nc\n"]);
    assert_eq!(captured.text(), "a\n... [7 bytes truncated] ...\nc\n");
}

#[test]
fn output_that_fits_is_kept_whole() {
    let captured = capture_all(3, 3, &[b"abc", b"def"]);
    assert_eq!(captured, Captured::whole("abcdef"));
    assert_eq!(capture_all(3, 3, &[]).text(), "");
}

#[test]
fn zero_head_and_tail_keep_only_the_marker() {
    let captured = capture_all(0, 0, &[b"abc"]);
    assert_eq!(captured.text(), "... [3 bytes truncated] ...\n");
}

#[test]
fn large_output_stays_bounded() {
    // 64 MiB of 77-byte lines, as `base64` prints them, through a PTY (CRLF).
    let line = format!("{}\r\n", "A".repeat(76));
    let chunk = line.repeat(4096 / line.len() + 1);
    let mut capture = Capture::new(2000, 2000);
    let rounds = (64 << 20) / chunk.len();
    for _ in 0..rounds {
        capture.push(chunk.as_bytes());
    }
    let captured = capture.finish();
    let total = (rounds * chunk.len() / line.len() * 77) as u64;
    assert_eq!(captured.total_bytes, total);
    assert_eq!(captured.truncated_bytes, total - 4000);
    assert!(captured.text().len() < 4100, "{}", captured.text().len());
    assert!(captured.text().contains(&format!("... [{} bytes truncated] ...", total - 4000)));
    assert!(captured.text().ends_with(&format!("{}\n", "A".repeat(76))));
}

#[test]
fn a_huge_line_without_newline_is_handed_on_in_pieces() {
    let mut capture = Capture::new(10, 10);
    for _ in 0..1000 {
        capture.push(&[b'x'; 1000]);
    }
    assert!(capture.cleaner.line_len() <= LINE_CAP);
    let captured = capture.finish();
    assert_eq!(captured.total_bytes, 1_000_000);
    assert_eq!(captured.truncated_bytes, 1_000_000 - 20);
}

#[test]
fn redraw_of_an_overlong_line_starts_a_new_line() {
    let long = "y".repeat(LINE_CAP + 5);
    let got = clean_text(format!("{long}\rdone\n").as_bytes());
    assert_eq!(got, format!("{long}\ndone\n"));
}

#[test]
fn an_unterminated_osc_string_is_abandoned_after_its_cap() {
    let mut raw = b"\x1b]0;".to_vec();
    raw.extend(std::iter::repeat_n(b'z', 10_000));
    raw.extend(b"\nvisible");
    let got = clean_text(&raw);
    assert!(got.ends_with("\nvisible"), "{got:?}");
    assert!(got.len() < 10_000);
}

proptest! {
    #[test]
    fn chunking_never_changes_the_result(
        raw in proptest::collection::vec(
            prop_oneof![
                4 => any::<u8>(),
                2 => Just(b'\x1b'),
                2 => Just(b'\r'),
                2 => Just(b'\n'),
                1 => Just(b'['),
                1 => Just(0xe4u8),
                1 => Just(0xb8u8),
            ],
            0..400,
        ),
        cuts in proptest::collection::vec(0usize..400, 0..8),
        head in 0usize..50,
        tail in 0usize..50,
    ) {
        let whole = capture_all(head, tail, &[&raw]);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(raw.len())).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for cut in cuts {
            pieces.push(&raw[start..cut]);
            start = cut;
        }
        pieces.push(&raw[start..]);
        let chunked = capture_all(head, tail, &pieces);
        prop_assert_eq!(&chunked, &whole);
        let full = clean_text(&raw);
        prop_assert_eq!(whole.total_bytes, full.len() as u64);
        let kept_chars = head + tail;
        prop_assert!(whole.text().chars().count() <= kept_chars + 40);
        if whole.truncated_bytes == 0 {
            prop_assert_eq!(&whole.text(), &full);
        }
    }
}

fn result(exit_code: Option<i32>, ms: u64) -> ExecResult {
    ExecResult {
        exit_code,
        timed_out: false,
        interrupted: false,
        output: Captured::whole(""),
        duration: Duration::from_millis(ms),
    }
}

#[test]
fn observation_of_a_success_is_the_header_and_the_output() {
    assert_eq!(observation_text(&result(Some(0), 35), "hello\n"), "exit 0 · 35 ms\nhello\n");
}

#[test]
fn observation_of_empty_output_has_an_empty_body() {
    assert_eq!(observation_text(&result(Some(0), 3), ""), "exit 0 · 3 ms");
}

#[test]
fn observation_of_a_failure_starts_with_error() {
    let text = observation_text(&result(Some(2), 1200), "ls: cannot access 'x': No such file or directory\n");
    assert_eq!(text, "[ERROR]: exit 2 · 1.2 s\nls: cannot access 'x': No such file or directory\n");
}

#[rstest]
#[case::signal(result(Some(137), 40), "[ERROR]: exit 137 (killed by SIGKILL) · 40 ms")]
#[case::unknown_high_code(result(Some(200), 40), "[ERROR]: exit 200 · 40 ms")]
#[case::timeout(ExecResult { timed_out: true, ..result(Some(143), 2000) }, "[ERROR]: timed out · exit 143 (killed by SIGTERM) · 2.0 s")]
#[case::interrupted(ExecResult { interrupted: true, ..result(Some(130), 65_000) }, "[ERROR]: interrupted by the user (Ctrl-C) · exit 130 (killed by SIGINT) · 1 min 5 s")]
#[case::interrupted_clean_exit(ExecResult { interrupted: true, ..result(Some(0), 5) }, "[ERROR]: interrupted by the user (Ctrl-C) · exit 0 · 5 ms")]
#[case::no_status(result(None, 0), "[ERROR]: exit status unknown · 0 ms")]
fn outcome_lines(#[case] result: ExecResult, #[case] expected: &str) {
    assert_eq!(outcome_line(&result), expected);
    assert_eq!(observation_text(&result, ""), expected);
    // Read back as it was written.
    assert_eq!(outcome_of(expected), Err(result.exit_code));
}

#[test]
fn a_success_line_reads_back_as_one_and_other_lines_as_nothing() {
    assert_eq!(outcome_of(&outcome_line(&result(Some(0), 35))), Ok(()));
    assert_eq!(outcome_of(&outcome_line(&result(Some(127), 2))), Err(Some(127)));
    for line in ["refused: high requires confirmation", "exit 0", "exit 0 · 3 ms · extra", ""] {
        assert_eq!(outcome_of(line), Err(None), "{line:?}");
    }
}

#[rstest]
#[case(Duration::from_millis(0), "0 ms")]
#[case(Duration::from_millis(999), "999 ms")]
#[case(Duration::from_millis(1000), "1.0 s")]
#[case(Duration::from_millis(12_345), "12.3 s")]
#[case(Duration::from_secs(125), "2 min 5 s")]
fn durations(#[case] duration: Duration, #[case] expected: &str) {
    assert_eq!(format_duration(duration), expected);
}

#[test]
fn printable_ascii_prefixes() {
    assert_eq!(printable_ascii_prefix(b""), 0);
    assert_eq!(printable_ascii_prefix(b"abc"), 3);
    assert_eq!(printable_ascii_prefix(b"abcdefghijklmnop~ "), 18);
    for bad in [b'\x00', b'\x1b', b'\x1f', b'\x7f', b'\x80', b'\xff', b'\n', b'\r', b'\t'] {
        for at in 0..20 {
            let mut bytes = vec![b'x'; 20];
            bytes[at] = bad;
            assert_eq!(printable_ascii_prefix(&bytes), at, "byte {bad:#x} at {at}");
        }
    }
}
