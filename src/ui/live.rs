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
                        let kept = match c {
                            'm' if plain => visible_sgr(&params),
                            'K' if plain && params.len() <= 1 => Some(params),
                            _ => None,
                        };
                        if let Some(kept) = kept {
                            out.push_str("\x1b[");
                            out.push_str(&kept);
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

/// An SGR sequence's parameters with every one that can hide text dropped: conceal (`8`), every
/// background colour (so no text is drawn in its own background's colour), and foregrounds that
/// vanish on a dark or a light terminal (black, bright white, near-black and near-white 256-colour
/// and truecolor). Ordinary colours and styles stay. `None`: nothing is left to send (an empty
/// list would mean reset).
fn visible_sgr(params: &str) -> Option<String> {
    if params.is_empty() {
        return Some(String::new());
    }
    let numbers: Vec<u32> =
        params.split(';').map(|p| if p.is_empty() { 0 } else { p.parse().unwrap_or(u32::MAX) }).collect();
    let mut kept: Vec<String> = Vec::with_capacity(numbers.len());
    let mut at = 0;
    while at < numbers.len() {
        let code = numbers[at];
        at += 1;
        match code {
            0..=7 | 9 | 21..=29 | 31..=37 | 39 | 49 | 90..=96 => kept.push(code.to_string()),
            38 | 48 | 58 => {
                let (color, used) = extended_color(&numbers[at..]);
                at += used;
                if code == 38
                    && let Some(color) = color.filter(|color| color.visible())
                {
                    kept.push(format!("38;{}", color.params()));
                }
            }
            // 8 conceal, 30 black, 97 bright white, 40–47 and 100–107 backgrounds, fonts, frames…
            _ => {}
        }
    }
    (!kept.is_empty()).then(|| kept.join(";"))
}

/// A 256-colour index or an RGB triple, from the parameters after `38`/`48`.
#[derive(Debug, Clone, Copy)]
enum Color {
    Indexed(u32),
    Rgb(u32, u32, u32),
}

impl Color {
    /// Readable on both a dark and a light background: neither near-black nor near-white.
    fn visible(self) -> bool {
        let (r, g, b) = match self {
            // The 16 system colours: black (0), white (7, 15) and bright black (8) are not kept.
            Color::Indexed(index @ 0..=15) => return !matches!(index, 0 | 7 | 8 | 15),
            Color::Indexed(index @ 16..=231) => {
                let level = |step: u32| if step == 0 { 0 } else { 55 + 40 * step };
                let n = index - 16;
                (level(n / 36), level(n / 6 % 6), level(n % 6))
            }
            Color::Indexed(index @ 232..=255) => {
                let grey = 8 + 10 * (index - 232);
                (grey, grey, grey)
            }
            Color::Indexed(_) => return false,
            Color::Rgb(r, g, b) => (r, g, b),
        };
        // Perceived brightness (ITU-R BT.601), 0–255.
        let luma = (299 * r + 587 * g + 114 * b) / 1000;
        (48..=215).contains(&luma)
    }

    fn params(self) -> String {
        match self {
            Color::Indexed(index) => format!("5;{index}"),
            Color::Rgb(r, g, b) => format!("2;{r};{g};{b}"),
        }
    }
}

/// The colour after `38`/`48`/`58` and how many parameters it used.
fn extended_color(rest: &[u32]) -> (Option<Color>, usize) {
    match rest {
        [5, index, ..] => (Some(Color::Indexed(*index)), 2),
        [2, r, g, b, ..] if *r < 256 && *g < 256 && *b < 256 => (Some(Color::Rgb(*r, *g, *b)), 4),
        [2, ..] => (None, rest.len().min(4)),
        [5] => (None, 1),
        _ => (None, 0),
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

    /// A line the model reads but the person would not see: concealed, drawn in its background's
    /// colour, or in black/white that vanishes on one kind of terminal.
    #[test]
    fn attributes_that_hide_text_are_dropped_and_colours_kept() {
        let cases = [
            ("\x1b[8mIGNORE PREVIOUS\x1b[0m", "IGNORE PREVIOUS\x1b[0m"),
            ("\x1b[0;8mhidden", "\x1b[0mhidden"),
            ("\x1b[30;40mhidden", "hidden"),
            ("\x1b[1;37;47mhidden", "\x1b[1;37mhidden"),
            ("\x1b[38;5;16;48;5;16mhidden", "hidden"),
            ("\x1b[38;2;1;2;3;48;2;1;2;3mhidden", "hidden"),
            ("\x1b[38;2;250;250;250mhidden", "hidden"),
            ("\x1b[97;107mhidden", "hidden"),
            ("\x1b[38;5;196mred\x1b[39m", "\x1b[38;5;196mred\x1b[39m"),
            ("\x1b[38;2;200;30;30;1mred", "\x1b[38;2;200;30;30;1mred"),
            ("\x1b[32mok\x1b[m", "\x1b[32mok\x1b[m"),
            ("\x1b[7;1mreverse", "\x1b[7;1mreverse"),
        ];
        for (raw, shown) in cases {
            assert_eq!(filter(&[raw]), shown, "{raw:?}");
        }
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
