//! Turns raw terminal bytes into the plain text a terminal would show, streaming, in bounded memory.
//!
//! Three stages, fed chunk by chunk:
//! 1. UTF-8, lossy: an invalid byte becomes U+FFFD; a character split across chunks is carried
//!    (at most 3 bytes) until its end arrives, never decoded in halves.
//! 2. Escape sequences are dropped: CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or ST), DCS, SOS,
//!    PM and APC strings, two- and three-byte `ESC` sequences, and their 8-bit C1 forms. Other C0
//!    controls are dropped except `\t`, `\n`, `\r` and backspace.
//! 3. The current line is edited as a terminal would, simplified: `\r\n` is a newline; a bare `\r`
//!    (or `CSI 1G`) followed by text replaces the line, so a progress bar keeps its last state; `CSI 2K`
//!    clears the line; backspace deletes the previous character of the line.
//!
//! The line being edited is held until its `\n` (or the end), up to [`LINE_CAP`] characters; a longer
//! line is handed on in pieces and its handed-on part can no longer be replaced (a `\r` redraw of such a
//! line then starts a new line instead). Nothing else grows with the input.

/// Characters of one line kept editable before they are handed on.
pub(super) const LINE_CAP: usize = 4096;
/// Characters of an unterminated OSC/DCS string after which it is abandoned (its rest shows as text).
const STRING_CAP: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Ground,
    /// After ESC.
    Escape,
    /// `ESC` + intermediate bytes, waiting for the final byte.
    Intermediate,
    Csi,
    /// OSC, DCS, SOS, PM or APC: ends with BEL or ST.
    Str,
    /// ESC inside a string: `\` ends it.
    StrEsc,
}

#[derive(Debug)]
pub(super) struct Cleaner {
    carry: [u8; 4],
    carry_len: usize,
    esc: Mode,
    /// The first numeric CSI parameter, when it is one (`None` for none or a private marker).
    csi_param: Option<u32>,
    /// A separator was seen: later digits belong to other parameters.
    csi_first_done: bool,
    /// A private marker (`?`, `>` …): not a sequence this module interprets.
    csi_private: bool,
    string_len: usize,
    line: String,
    line_chars: usize,
    /// Part of the current line was already handed on.
    line_spilled: bool,
    /// A `\r` was seen; the next text replaces the line.
    pending_cr: bool,
}

impl Default for Cleaner {
    fn default() -> Self {
        Self {
            carry: [0; 4],
            carry_len: 0,
            esc: Mode::Ground,
            csi_param: None,
            csi_first_done: false,
            csi_private: false,
            string_len: 0,
            line: String::new(),
            line_chars: 0,
            line_spilled: false,
            pending_cr: false,
        }
    }
}

impl Cleaner {
    /// Feeds raw bytes; finished text goes to `out`.
    pub(super) fn push(&mut self, mut bytes: &[u8], out: &mut impl FnMut(&str)) {
        // Complete a character carried over from the previous chunk, one byte at a time.
        while self.carry_len > 0 {
            let Some((&byte, rest)) = bytes.split_first() else { return };
            bytes = rest;
            self.carry[self.carry_len] = byte;
            self.carry_len += 1;
            let pending = self.carry;
            let len = self.carry_len;
            match std::str::from_utf8(&pending[..len]) {
                Ok(text) => {
                    self.carry_len = 0;
                    self.feed_str(text, out);
                }
                Err(err) => {
                    if let Some(bad) = err.error_len() {
                        self.carry_len = 0;
                        self.feed_char(char::REPLACEMENT_CHARACTER, out);
                        self.decode(&pending[bad..len], out);
                    }
                }
            }
        }
        self.decode(bytes, out);
    }

    /// Ends the input: a partial character becomes U+FFFD, the last line is handed on.
    pub(super) fn finish(&mut self, out: &mut impl FnMut(&str)) {
        if self.carry_len > 0 {
            self.carry_len = 0;
            self.feed_char(char::REPLACEMENT_CHARACTER, out);
        }
        self.pending_cr = false;
        self.flush_line(out);
    }

    /// Bytes of the line being edited (bounded by [`LINE_CAP`] characters).
    #[cfg(test)]
    pub(super) fn line_len(&self) -> usize {
        self.line.len()
    }

    fn decode(&mut self, bytes: &[u8], out: &mut impl FnMut(&str)) {
        // Valid UTF-8 is the common case, and `from_utf8` checks it fastest.
        let bytes = match std::str::from_utf8(bytes) {
            Ok(text) => return self.feed_str(text, out),
            Err(err) => {
                let (valid, rest) = bytes.split_at(err.valid_up_to());
                self.feed_str(std::str::from_utf8(valid).unwrap_or_default(), out);
                rest
            }
        };
        let mut consumed = 0;
        for chunk in bytes.utf8_chunks() {
            self.feed_str(chunk.valid(), out);
            let invalid = chunk.invalid();
            consumed += chunk.valid().len() + invalid.len();
            if invalid.is_empty() {
                continue;
            }
            let incomplete = std::str::from_utf8(invalid).err().is_some_and(|e| e.error_len().is_none());
            if consumed == bytes.len() && incomplete && invalid.len() < 4 {
                self.carry[..invalid.len()].copy_from_slice(invalid);
                self.carry_len = invalid.len();
            } else {
                self.feed_char(char::REPLACEMENT_CHARACTER, out);
            }
        }
    }

    fn feed_str(&mut self, mut text: &str, out: &mut impl FnMut(&str)) {
        while !text.is_empty() {
            // Fast path: a run of printable ASCII in plain text goes to the line in one piece.
            if self.esc == Mode::Ground {
                let run = printable_ascii_prefix(text.as_bytes());
                if run > 0 {
                    self.text_run(&text[..run], out);
                    text = &text[run..];
                    continue;
                }
            }
            let mut chars = text.chars();
            if let Some(c) = chars.next() {
                self.feed_char(c, out);
            }
            text = chars.as_str();
        }
    }

    /// Printable ASCII (one byte per character) for the line.
    fn text_run(&mut self, mut run: &str, out: &mut impl FnMut(&str)) {
        if self.pending_cr {
            self.pending_cr = false;
            self.redraw_line(out);
        }
        while !run.is_empty() {
            let room = LINE_CAP - self.line_chars;
            let (now, rest) = run.split_at(room.min(run.len()));
            self.line.push_str(now);
            self.line_chars += now.len();
            run = rest;
            if self.line_chars >= LINE_CAP {
                self.flush_line(out);
                self.line_spilled = true;
            }
        }
    }

    fn feed_char(&mut self, c: char, out: &mut impl FnMut(&str)) {
        match self.esc {
            Mode::Ground => self.ground(c, out),
            Mode::Escape => match c {
                '[' => self.start_csi(),
                ']' | 'P' | 'X' | '^' | '_' => self.start_string(),
                ' '..='/' => self.esc = Mode::Intermediate,
                '0'..='~' | '\x18' | '\x1a' => self.esc = Mode::Ground,
                '\x1b' => {}
                _ => {
                    self.esc = Mode::Ground;
                    self.ground(c, out);
                }
            },
            Mode::Intermediate => match c {
                ' '..='/' => {}
                '0'..='~' | '\x18' | '\x1a' => self.esc = Mode::Ground,
                '\x1b' => self.esc = Mode::Escape,
                _ => {
                    self.esc = Mode::Ground;
                    self.ground(c, out);
                }
            },
            Mode::Csi => self.csi(c, out),
            Mode::Str | Mode::StrEsc => self.string(c, out),
        }
    }

    fn ground(&mut self, c: char, out: &mut impl FnMut(&str)) {
        match c {
            '\n' => {
                self.pending_cr = false;
                self.line.push('\n');
                self.flush_line(out);
                self.line_spilled = false;
            }
            '\r' => self.pending_cr = true,
            '\x08' => {
                if !self.pending_cr && self.line.pop().is_some() {
                    self.line_chars -= 1;
                }
            }
            '\x1b' => self.esc = Mode::Escape,
            '\u{9b}' => self.start_csi(),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => self.start_string(),
            '\t' => self.text(c, out),
            c if c.is_control() => {}
            // Dropped on screen too (ui::live): a backspace must delete the same character in both.
            c if crate::policy::is_invisible(c) => {}
            c => self.text(c, out),
        }
    }

    fn text(&mut self, c: char, out: &mut impl FnMut(&str)) {
        if self.pending_cr {
            self.pending_cr = false;
            self.redraw_line(out);
        }
        self.line.push(c);
        self.line_chars += 1;
        if self.line_chars >= LINE_CAP {
            self.flush_line(out);
            self.line_spilled = true;
        }
    }

    /// The cursor went back to column 0 and text follows: the line is replaced.
    fn redraw_line(&mut self, out: &mut impl FnMut(&str)) {
        if self.line_spilled {
            // Part of the line is gone already: keep it and start the redrawn state on its own line.
            self.line.push('\n');
            self.flush_line(out);
            self.line_spilled = false;
        } else {
            self.line.clear();
            self.line_chars = 0;
        }
    }

    fn flush_line(&mut self, out: &mut impl FnMut(&str)) {
        if !self.line.is_empty() {
            out(&self.line);
            self.line.clear();
        }
        self.line_chars = 0;
    }

    fn start_csi(&mut self) {
        self.esc = Mode::Csi;
        self.csi_param = None;
        self.csi_first_done = false;
        self.csi_private = false;
    }

    fn start_string(&mut self) {
        self.esc = Mode::Str;
        self.string_len = 0;
    }

    fn csi(&mut self, c: char, out: &mut impl FnMut(&str)) {
        match c {
            '0'..='9' => {
                if let Some(digit) = c.to_digit(10)
                    && !self.csi_first_done
                {
                    let value = self.csi_param.unwrap_or(0);
                    self.csi_param = Some(value.saturating_mul(10).saturating_add(digit));
                }
            }
            ';' | ':' => self.csi_first_done = true,
            '<'..='?' => self.csi_private = true,
            ' '..='/' => {}
            '@'..='~' => {
                self.esc = Mode::Ground;
                if !self.csi_private {
                    self.csi_final(c);
                }
            }
            '\x1b' => self.esc = Mode::Escape,
            '\x18' | '\x1a' => self.esc = Mode::Ground,
            c if c.is_ascii_control() => {}
            _ => {
                self.esc = Mode::Ground;
                self.ground(c, out);
            }
        }
    }

    fn csi_final(&mut self, c: char) {
        let param = self.csi_param;
        match c {
            // Erase the whole line.
            'K' if param == Some(2) && !self.line_spilled => {
                self.line.clear();
                self.line_chars = 0;
            }
            // Cursor to column 1: the same as `\r`.
            'G' | '`' if param.unwrap_or(1) <= 1 => self.pending_cr = true,
            _ => {}
        }
    }

    fn string(&mut self, c: char, out: &mut impl FnMut(&str)) {
        match (self.esc, c) {
            (_, '\x07' | '\u{9c}' | '\x18' | '\x1a') => self.esc = Mode::Ground,
            (Mode::StrEsc, '\\') => self.esc = Mode::Ground,
            (Mode::StrEsc, _) => {
                // ESC + something else: the string ended; this is a new escape sequence.
                self.esc = Mode::Escape;
                self.feed_char(c, out);
            }
            (_, '\x1b') => self.esc = Mode::StrEsc,
            _ => {
                self.string_len += 1;
                if self.string_len > STRING_CAP {
                    self.esc = Mode::Ground;
                }
            }
        }
    }
}

/// The length of the leading run of printable ASCII (`' '..='~'`), eight bytes at a time.
pub(super) fn printable_ascii_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut done = 0;
    for word in bytes.chunks_exact(8) {
        let x = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        let non_ascii = x & HIGH;
        let below_space = x.wrapping_sub(0x20 * ONES) & !x & HIGH;
        let del = x ^ (0x7f * ONES);
        let is_del = del.wrapping_sub(ONES) & !del & HIGH;
        if non_ascii | below_space | is_del != 0 {
            break;
        }
        done += 8;
    }
    done + bytes[done..].iter().position(|b| !(b' '..=b'~').contains(b)).unwrap_or(bytes.len() - done)
}
