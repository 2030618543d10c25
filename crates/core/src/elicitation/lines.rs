//! `--lines`: newline-delimited JSON, one elicitation document per line and
//! one output line per input line, in order. A bad line yields an error line
//! and processing goes on, so every line is accounted for. Memory stays flat:
//! one line is held at a time (at most [`MAX_INPUT_BYTES`] of it: a longer
//! line is counted and skipped, never held whole) and parsed schemas are
//! cached.

use std::io::{BufReader, BufWriter, Read, Write};

use serde_json::json;

use crate::bounded::{read_line_limited, LineRead};
use crate::elicitation::answers::ScriptedAnswers;
use crate::elicitation::input::{self, MAX_INPUT_BYTES};
use crate::elicitation::output;
use crate::elicitation::resolve::{outcome_exit_code, Resolver, SchemaCache};
use crate::error::{rpc_code, ElicitError};

/// What a `--lines` run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LinesSummary {
    /// How many lines were read.
    pub lines: usize,
    /// How many of them failed.
    pub failed: usize,
    /// The `--exit-status` code over every result (cancel outranks decline).
    pub outcome_code: i32,
}

/// Processes every line of `input`, writing one line to `out` for each.
/// `report` receives each failure (line number, error) for stderr.
///
/// Output is buffered, and flushed whenever every line read so far has been
/// answered and reading on could block: a server waiting for its answer gets
/// it at once, while a file or a busy pipe is answered in large writes (a
/// write and a flush per line were a system call per line).
pub fn run_lines(
    input: impl Read,
    out: impl Write,
    scripted: &ScriptedAnswers,
    person: &mut dyn Resolver,
    mut report: impl FnMut(usize, &ElicitError, &[String]),
) -> Result<LinesSummary, ElicitError> {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let mut cache = SchemaCache::default();
    let mut summary = LinesSummary::default();
    let mut buf = Vec::new();
    loop {
        if input.buffer().is_empty() {
            // The next read may wait for more input.
            out.flush()
                .map_err(|e| ElicitError::io("writing output", e))?;
        }
        let read = read_line_limited(&mut input, &mut buf, MAX_INPUT_BYTES as usize, true)
            .map_err(|e| ElicitError::io("reading input", e))?;
        let too_large = match read {
            LineRead::Eof => break,
            LineRead::Line => None,
            LineRead::TooLong { size, .. } => Some(size),
        };
        summary.lines += 1;
        let line_no = summary.lines;
        if buf.capacity() > 1 << 20 && buf.len() <= 1 << 20 {
            // A long line went before: do not keep its buffer.
            buf.shrink_to(1 << 20);
        }
        let bytes = buf.strip_suffix(b"\r").unwrap_or(&buf);
        let outcome = match too_large {
            Some(size) => Err((
                ElicitError::TooLarge {
                    size,
                    limit: MAX_INPUT_BYTES,
                },
                None,
            )),
            None => handle_line(bytes, scripted, person, &mut cache),
        };
        let outcome = outcome.map_err(|(e, id)| {
            // A line holds no newline: its JSON errors are at this stream line.
            let e = match e {
                ElicitError::Json {
                    column, message, ..
                } => ElicitError::Json {
                    line: line_no,
                    column,
                    message,
                },
                other => other,
            };
            (e, id)
        });
        let line = match outcome {
            Ok((text, code, warnings)) => {
                if !warnings.is_empty() {
                    report(line_no, &ElicitError::Usage(String::new()), &warnings);
                }
                if code > summary.outcome_code {
                    summary.outcome_code = code;
                }
                text
            }
            Err((error, reply_id)) => {
                summary.failed += 1;
                report(line_no, &error, &[]);
                match reply_id {
                    Some(id) => output::render_rpc_error(
                        &id,
                        error.rpc_code().unwrap_or(rpc_code::INTERNAL_ERROR),
                        &error,
                        Some(json!({"line": line_no})),
                        false,
                    ),
                    None => json!({"error": {"line": line_no, "message": error.to_string()}})
                        .to_string(),
                }
            }
        };
        out.write_all(line.as_bytes())
            .and_then(|_| out.write_all(b"\n"))
            .map_err(|e| ElicitError::io("writing output", e))?;
    }
    out.flush()
        .map_err(|e| ElicitError::io("writing output", e))?;
    Ok(summary)
}

type LineOk = (String, i32, Vec<String>);
type LineErr = (ElicitError, Option<Box<serde_json::value::RawValue>>);

fn handle_line(
    bytes: &[u8],
    scripted: &ScriptedAnswers,
    person: &mut dyn Resolver,
    cache: &mut SchemaCache,
) -> Result<LineOk, LineErr> {
    let text = input::decode(bytes).map_err(|e| (e, None))?;
    let resolved = crate::elicitation::resolve_text(text, scripted, person, cache, false)
        .map_err(|f| (f.error, f.reply_id))?;
    let code = outcome_exit_code(resolved.results.iter().map(|(_, r)| r));
    Ok((resolved.output, code, resolved.warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Input that hands out one line per read, and records what had been
    /// written by the time each read after the first was made.
    struct Trickle {
        lines: Vec<&'static [u8]>,
        written: Rc<RefCell<Vec<u8>>>,
        seen_at_read: Rc<RefCell<Vec<usize>>>,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let newlines = self
                .written
                .borrow()
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.seen_at_read.borrow_mut().push(newlines);
            if self.lines.is_empty() {
                return Ok(0);
            }
            let line = self.lines.remove(0);
            buf[..line.len()].copy_from_slice(line);
            Ok(line.len())
        }
    }

    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn each_answer_is_written_before_waiting_for_the_next_line() {
        let line: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}}
"#;
        let written = Rc::new(RefCell::new(Vec::new()));
        let seen = Rc::new(RefCell::new(Vec::new()));
        let input = Trickle {
            lines: vec![line, line],
            written: written.clone(),
            seen_at_read: seen.clone(),
        };
        let scripted = ScriptedAnswers::parse(&["accept".to_string(), "a=x".to_string()], |_| {
            Ok(String::new())
        })
        .unwrap();
        let mut nobody = crate::elicitation::resolve::NoTerminal {
            detail: "test".into(),
        };
        let summary = run_lines(
            input,
            Shared(written.clone()),
            &scripted,
            &mut nobody,
            |_, _, _| {},
        )
        .unwrap();
        assert_eq!(summary.lines, 2);
        // Reads: line 1, line 2 (line 1 answered), end (both answered).
        assert_eq!(*seen.borrow(), vec![0, 1, 2]);
        let text = String::from_utf8(written.borrow().clone()).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            text.lines().all(|l| l.contains(r#""content":{"a":"x"}"#)),
            "{text}"
        );
    }
}
