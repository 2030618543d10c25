//! Output: the ElicitResult(s) in the shape the input came in, as one line
//! of compact JSON (or indented with `--pretty`).

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::elicitation::input::Shape;
use crate::elicitation::protocol::ElicitResult;
use crate::error::ElicitError;

#[derive(Serialize)]
struct RpcResult<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: &'a ElicitResult,
}

#[derive(Serialize)]
struct RpcError<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    error: RpcErrorBody,
}

#[derive(Serialize)]
struct RpcErrorBody {
    code: i64,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

#[derive(Serialize)]
struct InputResponses<'a> {
    #[serde(rename = "inputResponses")]
    input_responses: Map<String, Value>,
    #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
    request_state: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct ElicitationResults {
    #[serde(rename = "elicitationResults")]
    elicitation_results: Map<String, Value>,
}

fn to_text<T: Serialize>(value: &T, pretty: bool) -> String {
    let s = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    s.expect("output types always serialise")
}

/// Renders the results for an input of shape `shape`. `results` are keyed
/// by entry key (`inputRequests` key or `elicitationId`) where the shape has
/// several.
pub fn render(shape: &Shape, results: &[(Option<String>, ElicitResult)], pretty: bool) -> String {
    let keyed = || {
        results
            .iter()
            .enumerate()
            .map(|(i, (k, r))| (k.clone().unwrap_or_else(|| format!("#{i}")), r.to_value()))
            .collect::<Map<String, Value>>()
    };
    match shape {
        Shape::BareParams | Shape::RequestObject => match results.first() {
            Some((_, r)) => to_text(r, pretty),
            None => to_text(&Value::Object(Map::new()), pretty),
        },
        Shape::JsonRpcRequest { id } => {
            let (_, result) = results.first().expect("a JSON-RPC request has one entry");
            to_text(
                &RpcResult {
                    jsonrpc: "2.0",
                    id,
                    result,
                },
                pretty,
            )
        }
        Shape::InputRequired { request_state } => to_text(
            &InputResponses {
                input_responses: keyed(),
                request_state: request_state.as_deref(),
            },
            pretty,
        ),
        Shape::UrlElicitationRequired => to_text(
            &ElicitationResults {
                elicitation_results: keyed(),
            },
            pretty,
        ),
        Shape::ClaudeCodeHook => match results.first() {
            Some((_, r)) => to_text(&claude_code_hook_output(r), pretty),
            None => to_text(&Value::Object(Map::new()), pretty),
        },
    }
}

/// What Claude Code's `Elicitation` hook prints to answer:
/// `{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": …,
/// "content": …}}` (no `content` unless accepted with some).
pub fn claude_code_hook_output(result: &ElicitResult) -> Value {
    let mut out = Map::new();
    out.insert("hookEventName".into(), "Elicitation".into());
    let value = result.to_value();
    if let Some(action) = value.get("action") {
        out.insert("action".into(), action.clone());
    }
    if let Some(content) = value.get("content").filter(|c| !c.is_null()) {
        out.insert("content".into(), content.clone());
    }
    let mut top = Map::new();
    top.insert("hookSpecificOutput".into(), Value::Object(out));
    Value::Object(top)
}

/// A JSON-RPC error response to hand back to the server.
pub fn render_rpc_error(
    id: &RawValue,
    code: i64,
    error: &ElicitError,
    data: Option<Value>,
    pretty: bool,
) -> String {
    to_text(
        &RpcError {
            jsonrpc: "2.0",
            id,
            error: RpcErrorBody {
                code,
                message: error.to_string(),
                data,
            },
        },
        pretty,
    )
}
