//! A child server's stderr, relayed to elicit's stderr so that it can never
//! act on the terminal.
//!
//! A server is untrusted code, and its stderr used to be the terminal
//! itself: it could set the window title, write the clipboard (OSC 52),
//! move the cursor and redraw a consent screen with another host on it.
//! Now the stderr is a pipe read here, one line at a time (at most
//! [`MAX_LINE_BYTES`] kept of a line), each line passed through
//! [`elicit_core::text::sanitize::sanitize_line`] and printed as `server: …`, so it is
//! visibly the server's and cannot carry a control sequence.
//!
//! While a prompt is on the screen ([`elicit_platform::handlers::Prompt`], held by
//! the terminal resolver) lines are held back, so they are not drawn into
//! the middle of the prompt, and printed once it ends. What is held is
//! bounded ([`elicit_platform::handlers::HELD_LINES`], [`elicit_platform::handlers::HELD_BYTES`]);
//! older lines are dropped and counted, and the count is printed.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;
use std::time::Duration;

use elicit_core::text::sanitize::sanitize_line;

/// The prefix that marks a line as the server's.
pub(crate) const PREFIX: &str = "server: ";
/// The most of one stderr line that is kept; the rest is cut (and counted).
pub const MAX_LINE_BYTES: usize = 4096;
/// Prints one (already sanitised) line now, or holds it while a prompt is
/// up (see [`elicit_platform::handlers::Prompt`]).
fn emit(line: String) {
    elicit_platform::handlers::print_or_hold(PREFIX, line);
}

/// Turns raw stderr bytes into the text printed after the prefix.
pub(crate) fn render_line(bytes: &[u8], cut: u64) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    let mut line = sanitize_line(text);
    if cut > 0 {
        line.push_str(&format!("… ({cut} more bytes cut)"));
    }
    line
}

/// Reads `source` line by line until it ends, keeping at most
/// [`MAX_LINE_BYTES`] of each line, and hands each rendered line to `out`.
pub(crate) fn read_lines(source: impl Read, mut out: impl FnMut(String)) {
    let mut reader = BufReader::with_capacity(16 * 1024, source);
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut cut: u64 = 0;
    loop {
        let (consumed, ended) = match reader.fill_buf() {
            Ok([]) => {
                if !line.is_empty() || cut > 0 {
                    out(render_line(&line, cut));
                }
                return;
            }
            Ok(buf) => match memchr::memchr(b'\n', buf) {
                Some(i) => {
                    keep(&mut line, &mut cut, &buf[..i]);
                    (i + 1, true)
                }
                None => {
                    keep(&mut line, &mut cut, buf);
                    (buf.len(), false)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        reader.consume(consumed);
        if ended {
            out(render_line(&line, cut));
            line.clear();
            cut = 0;
        }
    }
}

fn keep(line: &mut Vec<u8>, cut: &mut u64, bytes: &[u8]) {
    let room = MAX_LINE_BYTES.saturating_sub(line.len());
    let take = room.min(bytes.len());
    line.extend_from_slice(&bytes[..take]);
    *cut += (bytes.len() - take) as u64;
}

/// The thread relaying one server's stderr.
pub struct StderrRelay {
    done: mpsc::Receiver<()>,
}

impl StderrRelay {
    /// Starts relaying `source` (the child's stderr pipe) to elicit's stderr.
    pub fn start(source: impl Read + Send + 'static) -> Self {
        let (tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            read_lines(source, emit);
            let _ = tx.send(());
        });
        StderrRelay { done }
    }

    /// Waits up to `limit` for the last lines (the pipe closes when the
    /// server and everything it started have exited).
    pub fn drain(&self, limit: Duration) {
        let _ = self.done.recv_timeout(limit);
    }
}

/// The end of a server's log file as text: at most its last `bytes` bytes
/// (a server may have written gigabytes), empty when it cannot be read.
pub fn log_tail(path: &std::path::Path, bytes: u64) -> String {
    use std::io::{Seek, SeekFrom};
    let read = || -> std::io::Result<Vec<u8>> {
        let mut file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(bytes)))?;
        let mut tail = Vec::new();
        file.take(bytes).read_to_end(&mut tail)?;
        Ok(tail)
    };
    String::from_utf8_lossy(&read().unwrap_or_default()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        read_lines(input, |l| out.push(l));
        out
    }

    #[test]
    fn escapes_are_neutralised_line_by_line() {
        let got = lines(b"a\x1b]52;c;aGk=\x07b\nc\x1b[2Ad\r\ne\xe2\x80\xaef");
        assert_eq!(got.len(), 3);
        for l in &got {
            assert!(!l.contains('\x1b') && !l.contains('\u{202e}'), "{l:?}");
        }
        assert!(got[2].contains("<U+202E>"), "{:?}", got[2]);
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 1000];
        input.extend_from_slice(b"\nnext\n");
        let got = lines(&input);
        assert_eq!(got.len(), 2);
        assert!(
            got[0].ends_with("… (1000 more bytes cut)"),
            "{}",
            &got[0][4000..]
        );
        assert_eq!(got[1], "next");
    }
}
