//! What every stage says about JSON it was given, at the bottom of the
//! trip so that any stage may use it: a value's kind, a parse error's text.

/// A short name for a JSON value's type, for error messages.
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// serde_json's message without its own " at line L column C" suffix (we
/// print line and column ourselves).
pub(crate) fn json_error_text(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
