//! The remote session's process group, so a cancel or a timeout can end it even when the hang-up
//! is not enough (a command that ignores SIGHUP).
//!
//! Every remote line starts by printing `RS opsai-pgid PID RS` on the terminal: `$$` of the login
//! shell, which sshd made a session leader (so it is also the process group every non-job-control
//! child shares). [`Marker`] takes that line out of the output before anything is captured or
//! hashed; a shell rc that prints first only moves it later. It is looked for in the first
//! [`WINDOW`] bytes; a host whose shell did not print it is ended by the hang-up alone.

/// What the remote line begins with: a fixed terminal size (a client without a terminal would
/// give it none, and `ps` or `ls` would cut lines to 80 columns) and the marker.
pub(super) const PREFIX: &str = "stty cols 200 rows 50 2>/dev/null; printf '\\036opsai-pgid %s\\036\\n' \"$$\"; ";

const START: &[u8] = b"\x1eopsai-pgid ";
const WINDOW: usize = 8 * 1024;

/// The remote line that ends process group `pgid`: SIGTERM, then SIGKILL if any of it is left
/// after 2 s.
pub(super) fn kill_line(pgid: u32) -> String {
    format!(
        "kill -TERM -- -{pgid} 2>/dev/null; i=0; while [ $i -lt 10 ] && kill -0 -- -{pgid} 2>/dev/null; \
         do sleep 0.2; i=$((i+1)); done; kill -KILL -- -{pgid} 2>/dev/null; true"
    )
}

/// Finds and removes the marker from the start of a stream.
#[derive(Debug, Default)]
pub(super) struct Marker {
    held: Vec<u8>,
    done: bool,
    pub pgid: Option<u32>,
}

impl Marker {
    /// Takes the next chunk; returns what goes on to the capture.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.done {
            return chunk.to_vec();
        }
        self.held.extend_from_slice(chunk);
        if let Some(out) = self.strip(false) {
            return out;
        }
        if self.held.len() > WINDOW {
            self.done = true;
            return std::mem::take(&mut self.held);
        }
        Vec::new()
    }

    /// The end of the output: whatever is held, without the marker.
    pub fn finish(&mut self) -> Vec<u8> {
        if self.done {
            return Vec::new();
        }
        self.strip(true).unwrap_or_else(|| {
            self.done = true;
            std::mem::take(&mut self.held)
        })
    }

    /// The held bytes without the marker and its line end, once both are there (at the end of
    /// the stream, whatever line end there is).
    fn strip(&mut self, end_of_stream: bool) -> Option<Vec<u8>> {
        let start = find(&self.held, START)?;
        let rest = &self.held[start + START.len()..];
        let end = rest.iter().position(|&b| b == 0x1e)?;
        // The remote side can print any marker: a pgid of 0 or 1 would make the kill line
        // `kill -- -1` (every process of the user) or hit our own group, and one past pid_t could
        // wrap to such a value in the remote shell. Those are not process groups we started.
        let pgid = std::str::from_utf8(&rest[..end])
            .ok()
            .and_then(|digits| digits.parse::<u32>().ok())
            .filter(|&pgid| (2..=i32::MAX as u32).contains(&pgid));
        let mut after = start + START.len() + end + 1;
        let tail = &self.held[after..];
        if !end_of_stream && (tail.is_empty() || tail == b"\r") {
            return None;
        }
        for eol in [&b"\r\n"[..], b"\n"] {
            if tail.starts_with(eol) {
                after += eol.len();
                break;
            }
        }
        let mut out = self.held[..start].to_vec();
        out.extend_from_slice(&self.held[after..]);
        self.pgid = pgid;
        self.done = true;
        self.held = Vec::new();
        Some(out)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_is_taken_out_wherever_the_chunks_split_it() {
        let stream = b"rc says hi\r\n\x1eopsai-pgid 4242\x1e\r\nreal output\r\n";
        for split in 0..stream.len() {
            let mut marker = Marker::default();
            let mut out = marker.push(&stream[..split]);
            out.extend(marker.push(&stream[split..]));
            out.extend(marker.finish());
            assert_eq!(out, b"rc says hi\r\nreal output\r\n", "split at {split}");
            assert_eq!(marker.pgid, Some(4242));
        }
        let mut marker = Marker::default();
        let big = vec![b'x'; WINDOW + 10];
        let mut out = marker.push(&big);
        let late = b"\x1eopsai-pgid 1\x1e\n";
        out.extend(marker.push(late));
        assert_eq!(out.len(), WINDOW + 10 + late.len(), "past the window the output is passed on as it is");
        assert_eq!(marker.pgid, None);
    }

    #[test]
    fn a_forged_pgid_below_2_or_past_pid_t_is_ignored() {
        for forged in ["0", "1", "2147483648", "4294967295"] {
            let mut marker = Marker::default();
            let stream = format!("\x1eopsai-pgid {forged}\x1e\r\nout\r\n");
            let mut out = marker.push(stream.as_bytes());
            out.extend(marker.finish());
            assert_eq!(out, b"out\r\n", "the marker is still taken out");
            assert_eq!(marker.pgid, None, "pgid {forged}");
        }
        let mut marker = Marker::default();
        marker.push(b"\x1eopsai-pgid 2\x1e\n");
        assert_eq!(marker.pgid, Some(2));
    }

    #[test]
    fn the_prefix_prints_the_marker_in_a_posix_shell() {
        let out = std::process::Command::new("sh").arg("-c").arg(format!("{PREFIX}echo after")).output().unwrap();
        let mut marker = Marker::default();
        let mut text = marker.push(&out.stdout);
        text.extend(marker.finish());
        assert_eq!(text, b"after\n");
        assert!(marker.pgid.is_some());
    }
}
