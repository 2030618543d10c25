//! `elicit mock` over stdio: one JSON-RPC message a line in, each reply a
//! line out. A line is read within the transports' bound
//! ([`wire::MAX_MESSAGE_BYTES`]) and checked for values, depth and batch
//! before it is parsed ([`elicit_session::transport::message_limits`]); a line past
//! them gets a JSON-RPC parse error, and the mock goes on.

use std::io::{BufRead, Write};

use serde_json::{json, Value};

use super::Mock;
use elicit_core::bounded::{read_line_limited, LineRead};
use elicit_core::elicitation::protocol::wire;
use elicit_core::error::rpc_code;

/// Serves `mock` until `input` ends.
pub fn serve(
    mock: &mut Mock,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let limit = usize::try_from(wire::MAX_MESSAGE_BYTES).unwrap_or(usize::MAX);
        let replies = match read_line_limited(&mut input, &mut buf, limit, true)? {
            LineRead::Eof => return Ok(()),
            LineRead::TooLong { size, .. } => vec![parse_error(&format!(
                "a message of {size} bytes or more, over the limit of {limit}"
            ))],
            LineRead::Line if buf.iter().all(u8::is_ascii_whitespace) => continue,
            LineRead::Line => match elicit_session::transport::message_limits::parse_bytes(&buf) {
                Ok(msg) if msg.is_object() => {
                    mock.handle(&msg).into_iter().map(|o| o.message).collect()
                }
                Ok(_) => vec![parse_error(
                    "a message must be a JSON object (batches are not served)",
                )],
                Err(e) => vec![parse_error(&e)],
            },
        };
        for r in replies {
            writeln!(output, "{r}")?;
        }
        output.flush()?;
    }
}

fn parse_error(why: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": rpc_code::PARSE_ERROR, "message": why}})
}
