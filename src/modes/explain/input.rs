//! Piped input read to its end in bounded memory.
//!
//! The first `window` bytes are kept as they arrive; everything after goes into a ring buffer that is
//! read into directly, so the middle of a long input is never copied, decoded or scanned: it is
//! only counted. At the end the last `window` bytes are taken from the ring. The writer is never
//! blocked: the pipe is drained with large reads until EOF, whatever the size (a 1 GB pipe costs
//! `window + RING` bytes of memory). What of the two windows is shown is decided later, on the
//! cleaned text (`excerpt`).

use std::io::{self, Read};

/// Bytes read at most per call once the head is full; also the ring's size.
const RING: usize = 1 << 20;

/// The kept parts of the input, raw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawInput {
    /// The first bytes (at most `window`).
    pub head: Vec<u8>,
    /// The last bytes after the head (at most `window`); the input is `head`, `middle` dropped
    /// bytes, then `tail`.
    pub tail: Vec<u8>,
    /// Bytes between `head` and `tail` that were read and dropped.
    pub middle: u64,
    /// The byte before `tail` was a newline (or there was none): `tail` starts a line.
    pub tail_starts_line: bool,
}

impl RawInput {
    /// Every byte read.
    pub fn total(&self) -> u64 {
        self.head.len() as u64 + self.middle + self.tail.len() as u64
    }

    /// True when nothing was read (an empty pipe, `/dev/null`).
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
}

/// Reads `reader` to EOF, keeping the first and the last `window` bytes.
pub(crate) fn read_bounded(reader: &mut impl Read, window: usize) -> io::Result<RawInput> {
    let mut head = vec![0u8; window];
    let mut head_len = 0;
    while head_len < window {
        match read_some(reader, &mut head[head_len..])? {
            0 => {
                head.truncate(head_len);
                return Ok(RawInput { head, tail: Vec::new(), middle: 0, tail_starts_line: true });
            }
            n => head_len += n,
        }
    }
    // The ring is larger than the window, so the byte before the tail is still in it.
    let ring_size = RING.max(window + 1);
    let mut ring = vec![0u8; ring_size];
    let mut pos = 0;
    let mut wrapped = false;
    let mut after_head: u64 = 0;
    loop {
        let n = read_some(reader, &mut ring[pos..])?;
        if n == 0 {
            break;
        }
        after_head += n as u64;
        pos += n;
        if pos == ring_size {
            pos = 0;
            wrapped = true;
        }
    }
    let ordered: Vec<u8> = if wrapped {
        let mut ordered = Vec::with_capacity(window + 1);
        // Only the last `window + 1` bytes are needed.
        let need = window + 1;
        if pos >= need {
            ordered.extend_from_slice(&ring[pos - need..pos]);
        } else {
            ordered.extend_from_slice(&ring[ring_size - (need - pos)..]);
            ordered.extend_from_slice(&ring[..pos]);
        }
        ordered
    } else {
        ring.truncate(pos);
        ring
    };
    let keep = ordered.len().min(window);
    let cut = ordered.len() - keep;
    let before = if cut > 0 { ordered.get(cut - 1) } else { head.last() };
    let tail_starts_line = before.is_none_or(|&b| b == b'\n');
    let tail = ordered[cut..].to_vec();
    let middle = after_head - tail.len() as u64;
    Ok(RawInput { head, tail, middle, tail_starts_line })
}

/// One `read`, retried when a signal interrupted it.
fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Makes a pipe on stdin hold up to 1 MiB, so the writer and opsai switch less often (Linux only;
/// best effort: anything else, or a refusal, leaves it as it is).
pub(crate) fn widen_pipe(stdin: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::FileTypeExt;
        if stdin.metadata().is_ok_and(|meta| meta.file_type().is_fifo()) {
            let _ = nix::fcntl::fcntl(stdin, nix::fcntl::FcntlArg::F_SETPIPE_SZ(RING as nix::libc::c_int));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = stdin;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per call.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn read(data: &[u8], window: usize, step: usize) -> RawInput {
        read_bounded(&mut Trickle { data, step }, window).unwrap()
    }

    #[test]
    fn short_input_is_kept_whole() {
        let input = read(b"hello\nworld\n", 64, 3);
        assert_eq!((input.head.as_slice(), input.tail.as_slice(), input.middle), (&b"hello\nworld\n"[..], &b""[..], 0));
        assert!(read(b"", 64, 3).is_empty());
    }

    #[test]
    fn long_input_keeps_both_ends_and_counts_the_middle() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        // Byte-sized reads of megabytes are slow in debug builds: small steps get a shorter input.
        for (len, step) in [(3_000_000, 1 << 20), (3_000_000, 65_536), (3_000_000, 4097), (40_000, 7)] {
            let data = &data[..len];
            let input = read(data, 1000, step);
            assert_eq!(input.head, &data[..1000], "step {step}");
            assert_eq!(input.tail, &data[len - 1000..], "step {step}");
            assert_eq!(input.middle, len as u64 - 2000, "step {step}");
            assert_eq!(input.total(), len as u64);
        }
    }

    #[test]
    fn input_just_over_the_head_is_contiguous() {
        let data: Vec<u8> = (0..1500u32).map(|i| (i % 251) as u8).collect();
        let input = read(&data, 1000, 64);
        assert_eq!(input.middle, 0);
        assert_eq!([input.head, input.tail].concat(), data);
    }

    #[test]
    fn the_tail_knows_whether_it_starts_a_line() {
        let mut data = vec![b'x'; 5000];
        data[3999] = b'\n';
        assert!(read(&data, 1000, 512).tail_starts_line);
        data[3999] = b'y';
        assert!(!read(&data, 1000, 512).tail_starts_line);
    }
}
