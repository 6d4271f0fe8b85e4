//! Live command output made safe to show. A command's output is untrusted: it may carry escape
//! sequences that clear or redraw the screen (to hide what ran, or fake an approval prompt), set the
//! clipboard (OSC 52), retitle the window, or switch the terminal's modes, and bidi or zero-width
//! characters that make text read differently from what it is. [`LiveFilter`] keeps what progress
//! bars and colored tools need — text, `\n`, `\r`, `\t`, backspace, SGR colors (`ESC [ … m`) and
//! erase-in-line (`ESC [ K`) — and drops everything else. It is stateful: a sequence may be split
//! across chunks. What a kept `\r` may do on screen is the renderer's rule (`Renderer::live`): it
//! wipes the whole row first, so a redraw can replace a line but never hide part of it.

/// Longest CSI parameter string kept; longer ones are dropped whole (no legitimate SGR needs more).
const MAX_PARAMS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// In `ESC [`: parameters so far.
    Csi(String),
    /// A CSI sequence too long or malformed to keep: dropped until its final byte.
    CsiDrop,
    /// In an OSC/DCS/APC/PM/SOS string: dropped until BEL or `ESC \`.
    Str,
    /// ESC inside a string (maybe the start of `ESC \`).
    StrEscape,
}

/// Filters one command's live output; feed every chunk in order.
#[derive(Debug, Default)]
pub(crate) struct LiveFilter {
    state: State,
}

impl LiveFilter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The displayable part of `chunk`.
    pub(crate) fn feed(&mut self, chunk: &str) -> String {
        let mut out = String::with_capacity(chunk.len());
        for c in chunk.chars() {
            self.state = match std::mem::take(&mut self.state) {
                State::Ground => match c {
                    '\x1b' => State::Escape,
                    // C1 string introducers: OSC, DCS, APC, PM, SOS.
                    '\u{9d}' | '\u{90}' | '\u{9f}' | '\u{9e}' | '\u{98}' => State::Str,
                    '\u{9b}' => State::Csi(String::new()),
                    c if shown(c) => {
                        out.push(c);
                        State::Ground
                    }
                    _ => State::Ground,
                },
                State::Escape => match c {
                    '[' => State::Csi(String::new()),
                    ']' | 'P' | '_' | '^' | 'X' => State::Str,
                    // Any other escape (ESC c reset, ESC 7/8, charset switches) is dropped with
                    // its one final character.
                    _ => State::Ground,
                },
                State::Csi(mut params) => match c {
                    '\u{40}'..='\u{7e}' => {
                        let plain = params.chars().all(|p| p.is_ascii_digit() || p == ';');
                        if plain && (c == 'm' || (c == 'K' && params.len() <= 1)) {
                            out.push_str("\x1b[");
                            out.push_str(&params);
                            out.push(c);
                        }
                        State::Ground
                    }
                    '\u{20}'..='\u{3f}' if params.len() < MAX_PARAMS => {
                        params.push(c);
                        State::Csi(params)
                    }
                    '\u{20}'..='\u{3f}' => State::CsiDrop,
                    // Not a valid CSI byte: the sequence is abandoned.
                    _ => State::Ground,
                },
                State::CsiDrop => match c {
                    '\u{40}'..='\u{7e}' => State::Ground,
                    _ => State::CsiDrop,
                },
                State::Str => match c {
                    '\x07' | '\u{9c}' => State::Ground,
                    '\x1b' => State::StrEscape,
                    _ => State::Str,
                },
                State::StrEscape => match c {
                    '\\' => State::Ground,
                    '\x1b' => State::StrEscape,
                    _ => State::Str,
                },
            };
        }
        out
    }
}

/// Text, and the controls a progress bar uses; no other control, no bidi or invisible character.
fn shown(c: char) -> bool {
    match c {
        '\n' | '\r' | '\t' | '\x08' => true,
        c if c.is_control() => false,
        c => !crate::policy::is_invisible(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(chunks: &[&str]) -> String {
        let mut filter = LiveFilter::new();
        chunks.iter().map(|chunk| filter.feed(chunk)).collect()
    }

    #[test]
    fn colors_progress_bars_and_text_pass() {
        let text = "\x1b[1;31merror\x1b[0m: disk full\n 42%\r\x1b[K 43%\r\x1b[2K100%\tok\x08!\n";
        assert_eq!(filter(&[text]), text);
        assert_eq!(filter(&["中文 ünïcode ✓\n"]), "中文 ünïcode ✓\n");
    }

    #[test]
    fn clipboard_title_screen_and_mode_changes_are_dropped() {
        let evil = "a\x1b]52;c;cm0gLXJmIH4=\x07b\x1b]0;title\x1b\\c\x1b[2Jd\x1b[Hd\x1b[?1049he\x1bcf\x1b[5Ag\x1bPdcs\x1b\\h\x07i";
        assert_eq!(filter(&[evil]), "abcddefghi");
    }

    #[test]
    fn sequences_split_across_chunks_are_still_recognised() {
        assert_eq!(filter(&["ok \x1b", "]52;c;", "cm0=", "\x07 done \x1b[", "2", "J!"]), "ok  done !");
        assert_eq!(filter(&["\x1b[3", "1mred\x1b", "[0m"]), "\x1b[31mred\x1b[0m");
    }

    #[test]
    fn bidi_zero_width_and_other_controls_are_dropped() {
        assert_eq!(filter(&["safe\u{202e}txt.exe\u{200b}\u{2066}x\u{feff}\x00\x07\x0c\u{85}\n"]), "safetxt.exex\n");
    }

    #[test]
    fn c1_introducers_and_overlong_parameters_are_dropped() {
        assert_eq!(filter(&["a\u{9d}52;c;eA==\u{9c}b\u{9b}2Jc"]), "abc");
        let long = format!("x\x1b[{}my", "1;".repeat(100));
        assert_eq!(filter(&[&long]), "xy");
    }
}
