//! What a replay did otherwise than its cassette recorded, in the lines a
//! failing test prints: elicitations never asked, a refusal or a result
//! that differs.

use serde_json::Value;

use crate::diff::{result_diff, show};
use crate::Cassette;

/// An elicitation's mode and message, as a mismatch names it.
pub(crate) fn describe(request: &Value) -> String {
    let mode = request
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("form");
    let message = request.get("message").cloned().unwrap_or(Value::Null);
    format!(
        "{} {}",
        if mode.is_empty() { "form" } else { mode },
        show(&message)
    )
}

/// What the replay did otherwise than the cassette recorded: elicitations
/// the server never asked (`asked` of them were), a refusal or a result
/// that differs.
pub(crate) fn mismatch_lines(cassette: &Cassette, asked: usize, ended: &Ended) -> Vec<String> {
    let mut lines = Vec::new();
    if asked < cassette.elicitations.len() {
        lines.push(if asked == 0 {
            format!(
                "the server never asked: the cassette recorded {} elicitation(s)",
                cassette.elicitations.len()
            )
        } else {
            format!(
                "the server asked {} time(s); the cassette recorded {}",
                asked,
                cassette.elicitations.len()
            )
        });
        let next = &cassette.elicitations[asked];
        lines.push(format!(
            "  first one not asked: elicitation {} ({})",
            asked + 1,
            describe(&next.request)
        ));
    }
    let diff = match (ended, &cassette.error) {
        (Ended::Refused(got), Some(recorded)) => {
            lines.extend(refusal_diff(recorded, got));
            Vec::new()
        }
        (Ended::Result(_), Some(recorded)) => {
            lines.push(format!(
                "the server returned a result; the cassette recorded that it refuses the call ({})",
                show(recorded)
            ));
            Vec::new()
        }
        (Ended::Result(result), None) => match &cassette.result {
            Some(recorded) => result_diff(recorded, result, &cassette.ignore, &cassette.matches),
            None => Vec::new(),
        },
        // Only taken as an outcome when the cassette recorded a refusal.
        (Ended::Refused(_), None) => Vec::new(),
    };
    if let Some(first) = diff.first() {
        lines.push(format!("the result differs from the recorded one: {first}"));
        lines.extend(diff.iter().skip(1).map(|l| format!("  {l}")));
    }
    lines
}

/// How a replayed call ended.
pub(crate) enum Ended {
    /// The tool's result.
    Result(Value),
    /// The JSON-RPC error the server refused the call with (the cassette
    /// recorded a refusal).
    Refused(Value),
}

/// A refusal against the recorded one: the codes must be equal; messages
/// are the server's words and may change.
fn refusal_diff(recorded: &Value, got: &Value) -> Vec<String> {
    if recorded.get("code") == got.get("code") {
        return Vec::new();
    }
    vec![format!(
        "the server refused the call with {}; the cassette recorded {}",
        show(got),
        show(recorded)
    )]
}
