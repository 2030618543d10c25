//! From a parsed document to its shape and its elicitations: bare params,
//! a request object, a JSON-RPC request, an `input_required` result, a
//! `-32042` error.

use super::{
    server_name, Document, ElicitationParams, Entry, InputFailure, RawBits, Shape,
    ELICITATION_METHOD, URL_ELICITATION_REQUIRED,
};
use crate::error::ElicitError;
use serde_json::value::RawValue;
use serde_json::Map;
use serde_json::Value;
/// Owns the document, so the params of a request can be moved out (a large
/// schema is never copied).
/// The key that marks a Claude Code hook input.
pub(crate) const HOOK_EVENT: &str = "hook_event_name";

/// Claude Code's `Elicitation` hook input, read as the elicitation it
/// carries (its own snake_case names for the MCP params). Any other hook
/// event is not an elicitation.
fn claude_code_hook(obj: &Map<String, Value>) -> Result<Document, ElicitError> {
    let event = obj.get(HOOK_EVENT).and_then(Value::as_str).unwrap_or("");
    if event != "Elicitation" {
        return Err(ElicitError::UnknownShape {
            message: format!(
                "a Claude Code hook input for the {:?} event: only \"Elicitation\" carries an elicitation (`elicit hook claude-code` also takes \"ElicitationResult\")",
                crate::text::sanitize::sanitize_line(event)
            ),
        });
    }
    let mut params = Map::new();
    for (theirs, ours) in [
        ("message", "message"),
        ("mode", "mode"),
        ("url", "url"),
        ("elicitation_id", "elicitationId"),
        ("requested_schema", "requestedSchema"),
    ] {
        if let Some(v) = obj.get(theirs) {
            params.insert(ours.into(), v.clone());
        }
    }
    Ok(Document {
        shape: Shape::ClaudeCodeHook,
        entries: vec![Entry {
            key: None,
            params: ElicitationParams::from_owned(Value::Object(params))?,
            schema_text: None,
            form: None,
        }],
        skipped: vec![],
        server: obj
            .get("mcp_server_name")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

pub(super) fn read_shape(mut value: Value, raw: RawBits) -> Result<Document, InputFailure> {
    let obj = value
        .as_object_mut()
        .expect("read_document checked for an object");
    if obj.contains_key(HOOK_EVENT) {
        return claude_code_hook(obj).map_err(Into::into);
    }
    // JSON-RPC: a request (method), a response (result) or an error.
    if obj.contains_key("jsonrpc") || (obj.contains_key("id") && obj.contains_key("method")) {
        return json_rpc(obj, raw);
    }
    if obj.contains_key("method") {
        let params = method_params(obj)?;
        return Ok(one_entry(Shape::RequestObject, params, raw.params_schema));
    }
    if obj.contains_key("inputRequests") || obj.contains_key("resultType") {
        return input_required(&value, raw.request_state).map_err(Into::into);
    }
    if obj.contains_key("code") && obj.contains_key("data") {
        return url_required(&value).map_err(Into::into);
    }
    if obj.contains_key("error") {
        return url_required(&obj["error"]).map_err(Into::into);
    }
    let looks_like_params = ["message", "requestedSchema", "mode", "url", "elicitationId"]
        .iter()
        .any(|k| obj.contains_key(*k));
    if looks_like_params {
        let params = ElicitationParams::from_owned(value)?;
        return Ok(one_entry(Shape::BareParams, params, raw.bare_schema));
    }
    let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
    Err(ElicitError::UnknownShape {
        message: format!(
            "not an elicitation: expected params (`message`, `requestedSchema` or `url`), a request (`method`), a JSON-RPC request, an input_required result or a -32042 error; found keys {keys:?}"
        ),
    }
    .into())
}

/// A document of one elicitation, `params`, in `shape`.
fn one_entry(shape: Shape, params: ElicitationParams, schema_text: Option<Box<str>>) -> Document {
    Document {
        shape,
        entries: vec![Entry {
            key: None,
            params,
            schema_text,
            form: None,
        }],
        skipped: vec![],
        server: None,
    }
}

/// A JSON-RPC message: a request (`method`, answered under its `id`), a
/// response (`result`: input_required) or an error (-32042).
fn json_rpc(obj: &mut Map<String, Value>, raw: RawBits) -> Result<Document, InputFailure> {
    if obj.contains_key("method") {
        let id = match (obj.get("id"), raw.id) {
            (Some(Value::String(_) | Value::Number(_)), Some(id)) => id,
            (None, _) | (Some(Value::Null), _) => {
                return Err(ElicitError::UnknownShape {
                    message: "a JSON-RPC notification (no `id`) cannot be answered: elicitation/create must be a request with an id".into(),
                }
                .into())
            }
            (Some(other), _) => {
                return Err(ElicitError::UnknownShape {
                    message: format!(
                        "JSON-RPC `id` must be a string or a number, found {}",
                        crate::elicitation::json::json_kind(other)
                    ),
                }
                .into())
            }
        };
        let params = method_params(obj).map_err(|error| InputFailure {
            error,
            reply_id: Some(id.clone()),
        })?;
        return Ok(one_entry(
            Shape::JsonRpcRequest { id },
            params,
            raw.params_schema,
        ));
    }
    if let Some(result) = obj.get("result") {
        return input_required(result, raw.request_state).map_err(Into::into);
    }
    if let Some(error) = obj.get("error") {
        return url_required(error).map_err(Into::into);
    }
    Err(ElicitError::UnknownShape {
        message: "a JSON-RPC message with neither `method`, `result` nor `error`".into(),
    }
    .into())
}

pub(super) fn method_params(
    obj: &mut Map<String, Value>,
) -> Result<ElicitationParams, ElicitError> {
    match obj.get("method") {
        Some(Value::String(m)) if m == ELICITATION_METHOD => {}
        Some(Value::String(m)) => {
            return Err(ElicitError::UnknownMethod { method: m.clone() });
        }
        Some(other) => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "`method` must be a string, found {}",
                    crate::elicitation::json::json_kind(other)
                ),
            })
        }
        None => unreachable!("callers check for `method`"),
    }
    match obj.shift_remove("params") {
        Some(p) => ElicitationParams::from_owned(p),
        None => Err(ElicitError::InvalidParams {
            message: "elicitation/create has no `params`".into(),
        }),
    }
}

/// Reads a bare `input_required` result (as a live session receives it).
pub fn read_input_required(result: &Value) -> Result<Document, ElicitError> {
    input_required(result, None)
}

pub(super) fn input_required(
    result: &Value,
    request_state: Option<Box<RawValue>>,
) -> Result<Document, ElicitError> {
    let obj = result
        .as_object()
        .ok_or_else(|| ElicitError::UnknownShape {
            message: format!(
                "a JSON-RPC response whose `result` is {}, not an input_required result",
                crate::elicitation::json::json_kind(result)
            ),
        })?;
    match obj.get("resultType").and_then(Value::as_str) {
        Some("input_required") => {}
        None if obj.contains_key("inputRequests") => {}
        // A task of the 2026-07-28 tasks extension waiting for input (a
        // `tasks/get` result, itself `complete`): its questions are the
        // same `inputRequests`.
        Some("complete")
            if obj.get("status").and_then(Value::as_str) == Some("input_required")
                && obj.contains_key("inputRequests") => {}
        Some(other) => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "a result with resultType {other:?} asks nothing: only \"input_required\" results carry elicitations"
                ),
            })
        }
        None => {
            return Err(ElicitError::UnknownShape {
                message: "a JSON-RPC response that is not an input_required result: there is nothing to elicit".into(),
            })
        }
    }
    let requests = match obj.get("inputRequests") {
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "`inputRequests` must be an object, found {}",
                    crate::elicitation::json::json_kind(other)
                ),
            })
        }
        None => {
            return Err(ElicitError::UnknownShape {
                message: "input_required result has no `inputRequests`".into(),
            })
        }
    };
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    for (key, req) in requests {
        let method = req.get("method").and_then(Value::as_str);
        if method != Some(ELICITATION_METHOD) {
            skipped.push(format!("{key} ({})", method.unwrap_or("no method")));
            continue;
        }
        let params = req
            .get("params")
            .ok_or_else(|| ElicitError::InvalidParams {
                message: format!("inputRequests[{key:?}] has no `params`"),
            })
            .and_then(ElicitationParams::from_value)
            .map_err(|e| match e {
                ElicitError::InvalidParams { message } => ElicitError::InvalidParams {
                    message: format!("inputRequests[{key:?}]: {message}"),
                },
                other => other,
            })?;
        entries.push(Entry {
            key: Some(key.clone()),
            params,
            schema_text: None,
            form: None,
        });
    }
    Ok(Document {
        shape: Shape::InputRequired { request_state },
        entries,
        skipped,
        server: server_name(result),
    })
}

pub(super) fn url_required(error: &Value) -> Result<Document, ElicitError> {
    let code = error.get("code").and_then(Value::as_i64);
    if code != Some(URL_ELICITATION_REQUIRED) {
        return Err(ElicitError::UnknownShape {
            message: format!(
                "a JSON-RPC error with code {}: only -32042 (URL elicitation required) carries elicitations",
                error.get("code").map(Value::to_string).unwrap_or_else(|| "(none)".into())
            ),
        });
    }
    let list = error
        .get("data")
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
        .ok_or_else(|| ElicitError::InvalidParams {
            message: "-32042 error has no `data.elicitations` array".into(),
        })?;
    let mut entries: Vec<Entry> = Vec::new();
    // Results are keyed by elicitationId (or `#INDEX` for an entry without
    // one): two entries with one key would both be asked and one answer
    // silently lost in the output object.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, item) in list.iter().enumerate() {
        let params = ElicitationParams::from_value(item).map_err(|e| match e {
            ElicitError::InvalidParams { message } => ElicitError::InvalidParams {
                message: format!("data.elicitations[{i}]: {message}"),
            },
            other => other,
        })?;
        let key = params
            .elicitation_id
            .clone()
            .unwrap_or_else(|| format!("#{i}"));
        if let Some(&first) = seen.get(&key) {
            let has_id = |n: usize| {
                if n == i {
                    params.elicitation_id.is_some()
                } else {
                    entries[n].params.elicitation_id.is_some()
                }
            };
            let how = |n: usize| {
                if has_id(n) {
                    format!("data.elicitations[{n}] has the elicitationId {key:?}")
                } else {
                    format!(
                        "data.elicitations[{n}] has no elicitationId (its stand-in key is {key:?})"
                    )
                }
            };
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "duplicate elicitation key {key:?}: {} and {}; each elicitation needs its own key, or one answer would be lost",
                    how(first),
                    how(i)
                ),
            });
        }
        seen.insert(key.clone(), i);
        entries.push(Entry {
            key: Some(key),
            params,
            schema_text: None,
            form: None,
        });
    }
    Ok(Document {
        shape: Shape::UrlElicitationRequired,
        entries,
        skipped: vec![],
        server: None,
    })
}
