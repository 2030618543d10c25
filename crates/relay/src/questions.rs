//! What the relay reads of a server's questions before it takes them on:
//! whether elicit can settle them all, and about how much memory they
//! hold. Below the server side and the task runs, which both ask.

use serde_json::Value;

use elicit_core::elicitation::protocol::ELICITATION_METHOD;

/// About how much memory a parsed value holds: each value its `Value`
/// (some 80 bytes, with its share of a map or vector) and the bytes of its
/// strings and keys. What [`crate::MAX_PENDING_ELICITATION_BYTES`] counts.
pub(crate) fn weigh(v: &Value) -> usize {
    const NODE: usize = 80;
    match v {
        Value::String(s) => NODE + s.len(),
        Value::Array(a) => NODE + a.iter().map(weigh).sum::<usize>(),
        Value::Object(o) => {
            NODE + o
                .iter()
                .map(|(k, v)| NODE + k.len() + weigh(v))
                .sum::<usize>()
        }
        Value::Number(n) => NODE + n.as_str().len(),
        _ => NODE,
    }
}

/// An `input_required` result that holds only elicitations elicit handles
/// (`handles` decides by mode).
pub(super) fn is_resolvable(result: &Value, handles: impl Fn(Option<&str>) -> bool) -> bool {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return false;
    }
    let Some(reqs) = result.get("inputRequests").and_then(Value::as_object) else {
        return false;
    };
    !reqs.is_empty()
        && reqs.values().all(|r| {
            r.get("method").and_then(Value::as_str) == Some(ELICITATION_METHOD)
                && handles(
                    r.get("params")
                        .and_then(|p| p.get("mode"))
                        .and_then(Value::as_str),
                )
        })
}
