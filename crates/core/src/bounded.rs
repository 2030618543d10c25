//! Reading what a peer sends without letting it decide how much memory
//! elicit holds: one line at most `limit` bytes, whatever its length. Every
//! reader of untrusted lines (the input document stream, a stdio server)
//! goes through here, so it sits below both the elicitation stages and the
//! transports.

use std::io::BufRead;

/// One pass over a JSON text's bytes, skipping the insides of strings,
/// counting its structural tokens (about its values), its nesting depth and
/// the length of a top-level array: past any limit, an error naming it,
/// before anything is built. Bytes that are not JSON pass (the parser
/// reports them). Every JSON elicit reads goes through it: server messages
/// (`transport::message_limits`) and files (cassettes, answer rules, lint
/// input, documents: `elicitation::input::parse_json`).
pub fn check_json_shape(
    text: &[u8],
    max_values: usize,
    max_depth: usize,
    max_batch: usize,
) -> Result<usize, String> {
    let mut tokens = 0usize;
    let mut depth = 0usize;
    let mut batch = 0usize;
    // Whether the message is a top-level array (a batch).
    let mut top_array = None;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        i += 1;
        match b {
            b'"' => {
                // Skip to the closing quote, past escaped characters.
                loop {
                    // A backslash as the last byte steps past the end: the
                    // string is unterminated, which the parser reports.
                    let Some(rest) = text.get(i..) else {
                        return Ok(tokens);
                    };
                    match memchr::memchr2(b'"', b'\\', rest) {
                        Some(at) if text[i + at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at + 1;
                            break;
                        }
                        None => return Ok(tokens), // unterminated: the parser says so
                    }
                }
            }
            b'[' | b'{' => {
                top_array.get_or_insert(b == b'[');
                depth += 1;
                if depth >= max_depth {
                    return Err(format!("nesting deeper than {max_depth} levels"));
                }
                tokens += 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' | b':' => {
                tokens += 1;
                if b == b',' && depth == 1 && top_array == Some(true) {
                    batch += 1;
                    if batch >= max_batch {
                        return Err(format!(
                            "a batch of more than {max_batch} messages, over the limit"
                        ));
                    }
                }
            }
            _ => continue,
        }
        if tokens > max_values {
            return Err(format!(
                "more than {max_values} values in one message, over the limit"
            ));
        }
    }
    Ok(tokens)
}

/// What [`read_line_limited`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// The input had ended: no line.
    Eof,
    /// A line (without its newline) is in the buffer.
    Line,
    /// A line longer than the limit: the buffer holds none of it. `size` is
    /// the line's length (without its newline) when it was read to its end
    /// (`complete`), else how much was seen before reading stopped (so the
    /// line is longer than that).
    TooLong {
        /// The size in bytes, as far as known.
        size: u64,
        /// Whether it was read to its end.
        complete: bool,
    },
}

/// Reads one line into `buf` (cleared first; the newline is not kept),
/// never holding more than `limit` bytes of it. A longer line is skipped
/// to its end and measured when `skip_rest`, else reading stops as soon as
/// it is known to be too long. The last line needs no final newline.
///
/// Hand-written over `BufRead::fill_buf` because `read_until` and `lines`
/// hold the whole line, whatever its length.
pub fn read_line_limited(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
    skip_rest: bool,
) -> std::io::Result<LineRead> {
    buf.clear();
    let mut seen: u64 = 0;
    let mut over = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (over, seen) {
                (true, _) => LineRead::TooLong {
                    size: seen,
                    complete: true,
                },
                (false, 0) => LineRead::Eof,
                (false, _) => LineRead::Line,
            });
        }
        let (content, used, ended) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        seen += content.len() as u64;
        if !over && buf.len() + content.len() > limit {
            over = true;
            *buf = Vec::new();
        }
        if !over {
            if buf.len() + content.len() > buf.capacity() && buf.len() >= 1 << 20 {
                // A long line: one move to the largest buffer, whose pages
                // only become resident as the line fills them (doubling
                // would leave every smaller step resident as well).
                buf.reserve_exact(limit - buf.len());
            }
            buf.extend_from_slice(content);
        }
        input.consume(used);
        if over && (ended || !skip_rest) {
            return Ok(LineRead::TooLong {
                size: seen,
                complete: ended,
            });
        }
        if ended {
            // An empty line read as a line, not as the end of input.
            return Ok(LineRead::Line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string that ends in a backslash at the very end of the text (found
    /// by the `cassette` fuzz target: every JSON elicit reads, a server's
    /// messages too, passes here) is unterminated, not a panic.
    #[test]
    fn a_backslash_as_the_last_byte_is_no_panic() {
        for text in [&b"\"\\"[..], b"{\"a\":\"x\\", b"[\"\\\\\\"] {
            assert!(check_json_shape(text, 10, 10, 10).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn long_lines_are_measured_not_held() {
        let mut input = &b"abc\r\n0123456789\n\nlast"[..];
        let mut buf = Vec::new();
        let mut read = |skip| read_line_limited(&mut input, &mut buf, 5, skip).unwrap();
        assert_eq!(read(true), LineRead::Line);
        assert_eq!(
            read(true),
            LineRead::TooLong {
                size: 10,
                complete: true
            }
        );
        assert_eq!(read(true), LineRead::Line);
        assert_eq!(read(true), LineRead::Line);
        assert_eq!(read(true), LineRead::Eof);
        // Read in small pieces, as a pipe gives them: reading stops early.
        let mut input = std::io::BufReader::with_capacity(4, &b"0123456789\nx\n"[..]);
        let r = read_line_limited(&mut input, &mut buf, 5, false).unwrap();
        assert!(
            matches!(
                r,
                LineRead::TooLong {
                    complete: false,
                    ..
                }
            ),
            "{r:?}"
        );
        assert!(buf.is_empty());
    }
}
