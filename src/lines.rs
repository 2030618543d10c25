//! `--lines`: newline-delimited JSON, one elicitation document per line and
//! one output line per input line, in order. A bad line yields an error line
//! and processing goes on, so every line is accounted for. Memory stays flat:
//! one line is held at a time and parsed schemas are cached.

use std::io::{BufRead, Write};

use serde_json::json;

use crate::error::{rpc_code, ElicitError};
use crate::input::{self, MAX_INPUT_BYTES};
use crate::output;
use crate::resolve::{outcome_exit_code, Resolver, SchemaCache};
use crate::ScriptedAnswers;

/// What a `--lines` run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LinesSummary {
    pub lines: usize,
    pub failed: usize,
    /// The `--exit-status` code over every result (cancel outranks decline).
    pub outcome_code: i32,
}

/// Processes every line of `input`, writing one line to `out` for each.
/// `report` receives each failure (line number, error) for stderr.
pub fn run_lines(
    mut input: impl BufRead,
    mut out: impl Write,
    scripted: &ScriptedAnswers,
    person: &mut dyn Resolver,
    mut report: impl FnMut(usize, &ElicitError, &[String]),
) -> Result<LinesSummary, ElicitError> {
    let mut cache = SchemaCache::default();
    let mut summary = LinesSummary::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|e| ElicitError::io("reading input", e))?;
        if n == 0 {
            break;
        }
        summary.lines += 1;
        let line_no = summary.lines;
        let mut bytes = buf.as_slice();
        if let Some(b) = bytes.strip_suffix(b"\n") {
            bytes = b.strip_suffix(b"\r").unwrap_or(b);
        }
        let outcome = handle_line(bytes, scripted, person, &mut cache).map_err(|(e, id)| {
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
        writeln!(out, "{line}")
            .and_then(|_| out.flush())
            .map_err(|e| ElicitError::io("writing output", e))?;
    }
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
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err((
            ElicitError::TooLarge {
                size: bytes.len() as u64,
                limit: MAX_INPUT_BYTES,
            },
            None,
        ));
    }
    let text = input::decode(bytes).map_err(|e| (e, None))?;
    let resolved = crate::resolve_text(text, scripted, person, cache, false)
        .map_err(|f| (f.error, f.reply_id))?;
    let code = outcome_exit_code(resolved.results.iter().map(|(_, r)| r));
    Ok((resolved.output, code, resolved.warnings))
}
