//! The 2026-07-28 standard request headers: which `Mcp-Param-*` headers a tool's
//! `x-mcp-header` annotations ask for (and the rules that set a tool aside), the encoding of
//! a header value, and learning them from `tools/list` (the one retry after a
//! `HeaderMismatchError` is the response's: `response.rs`).

use serde_json::Value;

use super::state::State;
use crate::transport::message_limits;

/// Learns the `x-mcp-header` parameters of the tools in a `tools/list`
/// result and removes (with a warning, when `warn`) the tools whose
/// annotations break the spec's rules.
pub(super) fn learn_tools(st: &mut State, result: &mut Value, warn: bool) {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        match tool_param_headers(tool.get("inputSchema")) {
            Ok(headers) => {
                st.rejected.remove(name);
                st.tool_headers.insert(name.to_string(), headers);
                true
            }
            Err(reason) => {
                if warn {
                    eprintln!(
                        "elicit: warning: ignoring the server's tool {}: {}",
                        elicit_core::text::sanitize::sanitize_line(name),
                        elicit_core::text::sanitize::sanitize_line(&reason)
                    );
                }
                st.tool_headers.remove(name);
                st.rejected.insert(name.to_string(), reason);
                false
            }
        }
    });
}

/// `HeaderMismatchError` (2026-07-28): the request's headers do not match
/// its body, as the server reads them.
pub(super) use elicit_core::elicitation::protocol::wire::HEADER_MISMATCH;
/// The JSON-RPC error code of an error body, if it is one.
pub(super) fn error_code(ct: &str, bytes: &[u8]) -> Option<i64> {
    if ct != "application/json" {
        return None;
    }
    message_limits::parse_bytes(bytes)
        .ok()?
        .get("error")?
        .get("code")?
        .as_i64()
}

/// The `Mcp-Param-*` headers a tool's `inputSchema` asks for, or why the
/// tool must be set aside (the spec's constraints on `x-mcp-header`).
pub(crate) fn tool_param_headers(
    schema: Option<&Value>,
) -> Result<Vec<(String, Vec<String>)>, String> {
    let Some(schema) = schema else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    collect_reachable(schema, &mut Vec::new(), &mut found)?;
    let total = count_annotations(schema, false);
    if total != found.len() {
        return Err(
            "an x-mcp-header annotation is not on a property reachable through `properties` alone"
                .into(),
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for (name, _) in &found {
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header {name:?} is used twice"));
        }
        seen.push(lower);
    }
    Ok(found)
}

pub(super) fn collect_reachable(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<(String, Vec<String>)>,
) -> Result<(), String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Some(h) = prop.get("x-mcp-header") {
            let name = h
                .as_str()
                .ok_or_else(|| format!("x-mcp-header of {key:?} is not a string"))?;
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(format!(
                    "x-mcp-header {:?} is not an HTTP header name token",
                    elicit_core::text::sanitize::sanitize_line(name)
                ));
            }
            let ty = prop.get("type").and_then(Value::as_str);
            if !matches!(ty, Some("string" | "integer" | "boolean")) {
                return Err(format!(
                    "x-mcp-header {name:?} is on a parameter that is not a string, integer or boolean"
                ));
            }
            found.push((name.to_string(), path.clone()));
        }
        collect_reachable(prop, path, found)?;
        path.pop();
    }
    Ok(())
}

/// Counts `x-mcp-header` keys in schema positions anywhere in `v`.
pub(super) fn count_annotations(v: &Value, is_property_map: bool) -> usize {
    match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, child)| {
                let here = usize::from(!is_property_map && k == "x-mcp-header");
                let map_below = !is_property_map
                    && matches!(
                        k.as_str(),
                        "properties"
                            | "patternProperties"
                            | "$defs"
                            | "definitions"
                            | "dependentSchemas"
                    );
                here + count_annotations(child, map_below)
            })
            .sum(),
        Value::Array(items) => items.iter().map(|i| count_annotations(i, false)).sum(),
        _ => 0,
    }
}

pub(super) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The header text of the value at `path` in the arguments (None when
/// absent or null).
pub(super) fn value_at(args: &Value, path: &[String]) -> Option<String> {
    let mut v = args;
    for key in path {
        v = v.get(key)?;
    }
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        other => Some(other.to_string()),
    }
}

/// A header value as the spec carries it: plain when it is visible ASCII
/// (spaces and tabs inside allowed), else `=?base64?…?=` of its UTF-8.
pub(crate) fn encode_header_value(value: &str) -> String {
    use base64::Engine;
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = !sentinel
        && value
            .bytes()
            .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t']);
    if plain {
        value.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_values_follow_the_spec_examples() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn x_mcp_header_rules() {
        let ok = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "nested":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
            "q":{"type":"string"}}});
        assert_eq!(
            tool_param_headers(Some(&ok)).unwrap(),
            vec![
                ("Region".to_string(), vec!["region".to_string()]),
                ("N".to_string(), vec!["nested".to_string(), "n".to_string()])
            ]
        );
        for bad in [
            json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}),
            json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}),
        ] {
            assert!(tool_param_headers(Some(&bad)).is_err(), "{bad}");
        }
        // A property that happens to be called x-mcp-header is not an annotation.
        let named = json!({"properties":{"x-mcp-header":{"type":"string"}}});
        assert!(tool_param_headers(Some(&named)).unwrap().is_empty());
    }
}
