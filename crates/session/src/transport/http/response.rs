//! Everything after the response head of a request: its reply read, an
//! HTTP error handed to the client as a JSON-RPC error, and after a header
//! mismatch the request sent once more (for `tools/call`, with the tools'
//! headers read again first).

use std::io::BufReader;

use serde_json::{json, Value};
use ureq::http::Response;
use ureq::Body;

use super::client::{content_type, header, preview, read_body, Bound};
use super::mcp_headers::{error_code, learn_tools, HEADER_MISMATCH};
use super::replies::{fail_request, read_reply};
use super::session::Shared;
use super::sse_reader::SseReader;
use crate::transport::message_limits;
use crate::transport::Incoming;
use elicit_core::elicitation::protocol::wire;
use elicit_core::error::{ElicitError, ServerError};

/// How many `tools/list` pages a refresh after a header mismatch reads.
pub(super) const MAX_REFRESH_PAGES: usize = 20;

/// Everything after the response head of a request.
/// `message` is the request (sent again once after a header mismatch while
/// `may_retry`).
pub(super) fn handle_request_response(
    shared: &Shared,
    response: Response<Body>,
    id: &str,
    method: &str,
    message: &Value,
    may_retry: bool,
) {
    let status = response.status().as_u16();
    match status {
        200..=299 => {
            let ct = content_type(&response);
            if ct == "application/json" || ct == "text/event-stream" {
                read_reply(shared, response, id, method);
            } else if status == 202 {
                fail_request(
                    shared,
                    id,
                    ElicitError::Server(ServerError::AcceptedWithoutReply {
                        method: method.to_string(),
                    }),
                );
            } else {
                let shown = if ct.is_empty() {
                    "no content type".to_string()
                } else {
                    elicit_core::text::sanitize::sanitize_line(&ct)
                };
                fail_request(
                    shared,
                    id,
                    ElicitError::Server(ServerError::NotMcpReply {
                        method: method.to_string(),
                        content_type: shown,
                        url: elicit_core::text::sanitize::sanitize_line(&shared.url),
                    }),
                );
            }
        }
        300..=399 => {
            let to = header(&response, "location").unwrap_or_default();
            fail_request(
                shared,
                id,
                ElicitError::Server(ServerError::Redirected {
                    method: method.to_string(),
                    status,
                    to: elicit_core::text::sanitize::sanitize_line(&to),
                }),
            );
        }
        _ => {
            if let Some(e) = shared.session_gone(status) {
                fail_request(shared, id, e);
                return;
            }
            let ct = content_type(&response);
            let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
            if may_retry && error_code(&ct, &bytes) == Some(HEADER_MISMATCH) {
                return resend_after_mismatch(shared, message, id, method);
            }
            deliver_http_error(shared, status, &ct, &bytes, id, method);
        }
    }
}

/// An HTTP error answering a request, handed to the client as a JSON-RPC
/// error reply to it (the server's own JSON-RPC error when the body is one).
pub(super) fn deliver_http_error(
    shared: &Shared,
    status: u16,
    ct: &str,
    bytes: &[u8],
    id: &str,
    method: &str,
) {
    let id_value: Value = serde_json::from_str(id).unwrap_or(Value::Null);
    let error = message_limits::parse_bytes(bytes)
        .ok()
        .filter(|_| ct == "application/json")
        .and_then(|v| v.get("error").filter(|e| e.is_object()).cloned());
    let error = match error {
        Some(mut e) => {
            if let Some(m) = e.get("message").and_then(Value::as_str) {
                e["message"] = json!(format!("{m} (HTTP {status})"));
            }
            e
        }
        None => json!({
            "code": elicit_core::error::rpc_code::INTERNAL_ERROR,
            "message": format!("HTTP {status} answering {method}: {}", preview(bytes)),
        }),
    };
    let reply = json!({"jsonrpc": "2.0", "id": id_value, "error": error});
    shared.client.record("recv", Ok(&reply));
    shared.push(Ok(Incoming::Message(reply)), 0);
}

/// The reply to one request of elicit's own (not the client's), read from
/// a JSON body or an SSE stream; None when there is none.
pub(super) fn private_reply(response: Response<Body>, id: &str) -> Option<Value> {
    if !(200..300).contains(&response.status().as_u16()) {
        return None;
    }
    let ct = content_type(&response);
    let body = response.into_body();
    if ct == "application/json" {
        return message_limits::parse_bytes(&read_body(body.into_reader()).ok()?).ok();
    }
    let sse = SseReader::new(BufReader::new(body.into_reader()));
    for ev in sse.flatten() {
        if let Ok(v) = message_limits::parse(&ev.data) {
            if v.get("id").and_then(Value::as_str) == Some(id) {
                return Some(v);
            }
        }
    }
    None
}

/// Reads `tools/list` again (every page) with the `_meta` of `message`, to
/// learn the tools' current `x-mcp-header` parameters: the spec's recovery
/// from a header mismatch, where the server's tool definitions may have
/// changed since they were listed. Nothing of it reaches the client.
pub(super) fn refresh_tool_headers(shared: &Shared, message: &Value) {
    let meta = message.get("params").and_then(|p| p.get("_meta")).cloned();
    let mut cursor: Option<Value> = None;
    for page in 0..MAX_REFRESH_PAGES {
        let id = format!("elicit-tools-refresh-{page}");
        let mut params = json!({});
        if let Some(m) = &meta {
            params["_meta"] = m.clone();
        }
        if let Some(c) = &cursor {
            params["cursor"] = c.clone();
        }
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": wire::TOOLS_LIST, "params": params});
        let bound = Bound::Whole(shared.client.timeout);
        let Ok(response) = shared.post(&request, "reading tools/list again", bound) else {
            return;
        };
        let Some(mut reply) = private_reply(response, &id) else {
            return;
        };
        let Some(result) = reply.get_mut("result") else {
            return;
        };
        learn_tools(&mut shared.state.lock().expect("state lock"), result, false);
        cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            return;
        }
    }
}

/// After a `HeaderMismatchError`, the spec recommends one retry with the
/// headers rebuilt (for `tools/call`, from a fresh `tools/list`). Sends the
/// request again, or refuses it when the tool is now set aside.
pub(super) fn resend_after_mismatch(shared: &Shared, message: &Value, id: &str, method: &str) {
    if method == wire::TOOLS_CALL {
        refresh_tool_headers(shared, message);
        let name = message
            .get("params")
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let rejected = shared
            .state
            .lock()
            .expect("state lock")
            .rejected
            .get(name)
            .cloned();
        if let Some(reason) = rejected {
            return fail_request(
                shared,
                id,
                ElicitError::Server(ServerError::HeaderMismatch {
                    tool: elicit_core::text::sanitize::sanitize_line(name),
                    reason: elicit_core::text::sanitize::sanitize_line(&reason),
                }),
            );
        }
    }
    match shared.post(
        message,
        &format!("sending {method} again after a header mismatch"),
        Bound::Stream,
    ) {
        Ok(response) => handle_request_response(shared, response, id, method, message, false),
        Err(e) => fail_request(shared, id, e),
    }
}
