//! What a Streamable HTTP session's threads share ([`Shared`]): handing
//! deliveries over, learning from replies, and the POST and GET of the
//! endpoint with the session's headers.

use std::sync::Mutex;

use serde_json::Value;
use ureq::http::Response;
use ureq::Body;

use super::client::{Bound, Client};
use super::mcp_headers::{encode_header_value, learn_tools, value_at};
use super::state::State;
use super::{HEADERS_SINCE, VERSION_META};
use crate::transport::message_limits;
use crate::transport::queue::QueueSender;
use crate::transport::recent_ids::{server_request_id, RecentIds};
use crate::transport::{Delivery, Incoming};
use elicit_core::elicitation::protocol::wire;
use elicit_core::error::{ElicitError, ServerError};

/// What the session's threads share: the client, the endpoint, what is
/// learnt from the traffic, and the way deliveries reach the session.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) url: String,
    pub(super) state: Mutex<State>,
    /// Bounded: a reader thread waits here (and stops reading its
    /// stream) while the session thread is busy.
    pub(super) tx: QueueSender<Delivery>,
    /// SSE event ids seen on any stream of the session (ids are unique
    /// across a session's streams): a repeat is dropped.
    pub(super) seen_events: Mutex<RecentIds>,
    /// Server requests delivered: one sent again is dropped.
    pub(super) seen_requests: Mutex<RecentIds>,
}

impl Shared {
    /// Hands one delivery over, `bytes` being the size of the text it was
    /// read from; waits while the queue is full.
    pub(super) fn push(&self, d: Delivery, bytes: usize) {
        let _ = self.tx.send(d, bytes);
    }

    /// Hands one SSE `data` or JSON body to the client; true when it holds
    /// the reply to `pending`.
    pub(super) fn deliver(&self, text: &str, pending: Option<&str>) -> bool {
        let (parsed, weight) = message_limits::parse_weighed(text);
        let value = match parsed {
            Ok(v) => v,
            Err(e) => {
                self.client.record("recv", Err(text));
                self.push(
                    Ok(Incoming::Malformed {
                        line: message_limits::excerpt(text),
                        error: e,
                    }),
                    weight,
                );
                return false;
            }
        };
        let list = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        // The message's weight, shared among the messages of a batch.
        let share = weight / list.len().max(1) + 1;
        let mut answered = false;
        for mut msg in list {
            if let Some(rid) = server_request_id(&msg) {
                let first = self
                    .seen_requests
                    .lock()
                    .expect("ids lock")
                    .first_time(&rid);
                if !first {
                    // Already delivered (answered or being answered).
                    self.client.record("recv", Ok(&msg));
                    continue;
                }
            }
            let id = msg
                .get("id")
                .filter(|i| !i.is_null() && msg.get("method").is_none())
                .map(Value::to_string);
            if let Some(id) = &id {
                answered |= pending == Some(id.as_str());
                self.learn(id, &mut msg);
            }
            self.client.record("recv", Ok(&msg));
            self.push(Ok(Incoming::Message(msg)), share);
        }
        answered
    }

    /// What a reply teaches: the negotiated version (initialize), the
    /// tools' `x-mcp-header` parameters (tools/list).
    pub(super) fn learn(&self, id: &str, msg: &mut Value) {
        let mut st = self.state.lock().expect("state lock");
        let Some(method) = st.watched.remove(id) else {
            return;
        };
        let Some(result) = msg.get_mut("result") else {
            return;
        };
        match method.as_str() {
            wire::INITIALIZE => {
                st.protocol_version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            wire::TOOLS_LIST => learn_tools(&mut st, result, true),
            _ => {}
        }
    }

    /// The headers for one POST of `message`.
    pub(super) fn post_headers(&self, message: &Value) -> Vec<(String, String)> {
        let mut h = self.client.base_headers("POST", &self.url);
        h.push(("Content-Type".into(), "application/json".into()));
        h.push((
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ));
        let st = self.state.lock().expect("state lock");
        if let Some(s) = &st.session_id {
            h.push(("Mcp-Session-Id".into(), s.clone()));
        }
        let params = message.get("params");
        let meta_version = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(VERSION_META))
            .and_then(Value::as_str);
        let version = meta_version.or(st.protocol_version.as_deref());
        if let Some(v) = version {
            h.push(("MCP-Protocol-Version".into(), v.to_string()));
        }
        let method = message.get("method").and_then(Value::as_str);
        if let (Some(method), Some(v)) = (method, version) {
            if v >= HEADERS_SINCE {
                h.push(("Mcp-Method".into(), method.to_string()));
                if wire::RETRYABLE.contains(&method) {
                    let name = params
                        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
                        .and_then(Value::as_str);
                    if let Some(name) = name {
                        h.push(("Mcp-Name".into(), encode_header_value(name)));
                    }
                }
                // The tasks extension routes a task's requests by its id.
                if [wire::TASKS_GET, wire::TASKS_UPDATE, wire::TASKS_CANCEL].contains(&method) {
                    let task = params.and_then(|p| p.get("taskId")).and_then(Value::as_str);
                    if let Some(task) = task {
                        h.push(("Mcp-Name".into(), encode_header_value(task)));
                    }
                }
                if method == wire::TOOLS_CALL {
                    let tool = params
                        .and_then(|p| p.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let args = params.and_then(|p| p.get("arguments"));
                    for (name, path) in st.tool_headers.get(tool).into_iter().flatten() {
                        if let Some(v) = args.and_then(|a| value_at(a, path)) {
                            h.push((format!("Mcp-Param-{name}"), encode_header_value(&v)));
                        }
                    }
                }
            }
        }
        h
    }

    pub(super) fn post(
        &self,
        message: &Value,
        what: &str,
        bound: Bound,
    ) -> Result<Response<Body>, ElicitError> {
        let body = serde_json::to_vec(message).expect("values serialise");
        self.client.execute(&self.url, what, &|agent| {
            let mut req = bound.apply(agent.post(&self.url));
            for (k, v) in self.post_headers(message) {
                req = req.header(k, v);
            }
            req.send(&body[..])
        })
    }

    /// GET on the endpoint: the standalone stream, or a resumption.
    pub(super) fn get(
        &self,
        last_event_id: Option<&str>,
        what: &str,
    ) -> Result<Response<Body>, ElicitError> {
        self.client.execute(&self.url, what, &|agent| {
            let mut req = Bound::Head(self.client.timeout).apply(agent.get(&self.url));
            for (k, v) in self.client.base_headers("GET", &self.url) {
                req = req.header(k, v);
            }
            req = req.header("Accept", "text/event-stream");
            let st = self.state.lock().expect("state lock");
            if let Some(s) = &st.session_id {
                req = req.header("Mcp-Session-Id", s);
            }
            if let Some(v) = &st.protocol_version {
                req = req.header("MCP-Protocol-Version", v);
            }
            drop(st);
            if let Some(id) = last_event_id {
                req = req.header("Last-Event-ID", id);
            }
            req.call()
        })
    }

    pub(super) fn session_gone(&self, status: u16) -> Option<ElicitError> {
        let st = self.state.lock().expect("state lock");
        (status == 404 && st.session_id.is_some())
            .then(|| ElicitError::Server(ServerError::SessionExpired { during: None }))
    }
}
