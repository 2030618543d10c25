//! The Streamable HTTP [`Transport`]: sessions and their end, the era fallback to legacy
//! HTTP+SSE, and a request's POST, whose response `response.rs` reads (what the session's
//! threads share, and the headers of each POST and GET, are `session.rs`'s).

use std::sync::mpsc::{self};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use ureq::http::Response;
use ureq::Body;

use super::client::{
    content_type, header, off_thread, preview, read_body, within, Bound, Client, HttpOptions,
};
use super::replies::{fail_request, standalone_stream};
use super::response::{deliver_http_error, handle_request_response};
use super::session::Shared;
use super::state::State;
use super::STANDALONE_OPEN_WAIT;
use crate::transport::message_limits;
use crate::transport::queue::{self, QueueReceiver};
use crate::transport::recent_ids::RecentIds;
use crate::transport::{Delivery, Incoming, Transport};
use elicit_core::elicitation::protocol::wire;
use elicit_core::error::{ElicitError, ServerError};

/// The Streamable HTTP transport.
pub(crate) struct HttpTransport {
    shared: Arc<Shared>,
    rx: QueueReceiver<Delivery>,
    legacy: Option<super::sse::SseTransport>,
    legacy_fallback: bool,
}

impl HttpTransport {
    /// Prepares the transport; nothing is sent until the first message.
    pub fn new(url: &str, options: HttpOptions) -> Self {
        let (tx, rx) = queue::bounded();
        HttpTransport {
            shared: Arc::new(Shared {
                client: Client::new(options.headers, options.auth, options.log, options.timeout),
                url: url.to_string(),
                state: Mutex::new(State::default()),
                tx,
                seen_events: Mutex::new(RecentIds::default()),
                seen_requests: Mutex::new(RecentIds::default()),
            }),
            rx,
            legacy: None,
            legacy_fallback: options.legacy_fallback,
        }
    }

    /// Opens the standalone GET stream of a 2025 session, once, as soon as
    /// the session is initialized (as the reference SDK client does): a
    /// server sends requests not tied to one of ours there, and the
    /// TypeScript SDK sends a tool's `elicitInput` there, dropping it when
    /// no stream is open. A refusal (405, 400, an HTML 404) means the
    /// server has none.
    fn open_standalone_stream(&self) {
        {
            let mut st = self.shared.state.lock().expect("state lock");
            if st.get_stream_opened || st.protocol_version.is_none() || st.closed {
                return;
            }
            st.get_stream_opened = true;
        }
        let shared = self.shared.clone();
        let (opened, wait) = mpsc::channel();
        std::thread::spawn(move || standalone_stream(shared, opened));
        // The next request waits until the server answered the GET (briefly):
        // otherwise, on a busy machine, the GET can reach the server after
        // a later request's stream, where a server may take it for the
        // resumption of that stream (the suite's sse-retry does).
        let _ = wait.recv_timeout(STANDALONE_OPEN_WAIT);
    }

    /// A tool set aside from `tools/list` (invalid `x-mcp-header`) is not
    /// called: the headers the server wants for it cannot be built.
    fn refuse_rejected(&self, message: &Value) -> Result<(), ElicitError> {
        let name = message
            .get("params")
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        match self
            .shared
            .state
            .lock()
            .expect("state lock")
            .rejected
            .get(name)
        {
            Some(reason) => Err(ElicitError::Server(ServerError::ToolSetAside {
                tool: elicit_core::text::sanitize::sanitize_line(name),
                reason: elicit_core::text::sanitize::sanitize_line(reason),
            })),
            None => Ok(()),
        }
    }

    /// Switches to the legacy HTTP+SSE transport and sends `message` there.
    fn fall_back(
        &mut self,
        message: &Value,
        status: u16,
        deadline: Option<Instant>,
    ) -> Result<(), ElicitError> {
        let headers = self.shared.client.headers.clone();
        let log = self.shared.client.log.clone();
        let auth = self.shared.client.auth.lock().expect("auth lock").take();
        let timeout = self.shared.client.timeout;
        let mut legacy = super::sse::SseTransport::connect(
            &self.shared.url,
            Client::new(headers, auth, log, timeout),
        )
        .map_err(|e| {
            ElicitError::Server(ServerError::NoTransport {
                status,
                legacy: Box::new(e),
            })
        })?;
        legacy.send_unlogged(message, deadline)?;
        self.legacy = Some(legacy);
        Ok(())
    }

    fn send_request(
        &mut self,
        message: &Value,
        id: &Value,
        method: &str,
        deadline: Option<Instant>,
    ) -> Result<(), ElicitError> {
        let id_text = id.to_string();
        if matches!(method, wire::INITIALIZE | wire::TOOLS_LIST) {
            self.shared
                .state
                .lock()
                .expect("state lock")
                .watched
                .insert(id_text.clone(), method.to_string());
        }
        // The connection phase waits for the response head here: its status
        // decides the era and the transport. Later requests are sent on their
        // own thread, so a server that holds the POST open while it elicits
        // on the GET stream is still answered.
        let connecting = matches!(method, wire::INITIALIZE | wire::SERVER_DISCOVER);
        if !connecting {
            let shared = self.shared.clone();
            let message = message.clone();
            let method = method.to_string();
            std::thread::spawn(move || {
                match shared.post(&message, &format!("sending {method}"), Bound::Stream) {
                    Ok(response) => handle_request_response(
                        &shared, response, &id_text, &method, &message, true,
                    ),
                    Err(e) => fail_request(&shared, &id_text, e),
                }
            });
            return Ok(());
        }
        // Off the session thread, so Ctrl-C ends the wait; within --timeout.
        let limit = within(self.shared.client.timeout, deadline);
        let shared = self.shared.clone();
        let posted = message.clone();
        let what = format!("sending {method}");
        let check_refusal = method == wire::INITIALIZE && self.legacy_fallback;
        let outcome = off_thread(&self.shared.client, move || {
            let response = shared.post(&posted, &what, Bound::Whole(limit))?;
            let status = response.status().as_u16();
            if check_refusal && matches!(status, 400 | 404 | 405) {
                let ct = content_type(&response);
                let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
                return Ok(Connecting::Refused { status, ct, bytes });
            }
            Ok(Connecting::Answered(response))
        })?;
        let response = match outcome? {
            Connecting::Answered(response) => response,
            Connecting::Refused { status, ct, bytes } => {
                if !is_modern_error(&ct, &bytes) {
                    return self.fall_back(message, status, deadline);
                }
                deliver_http_error(&self.shared, status, &ct, &bytes, &id_text, method);
                return Ok(());
            }
        };
        let status = response.status().as_u16();
        if method == wire::INITIALIZE && (200..300).contains(&status) {
            if let Some(s) = header(&response, "mcp-session-id") {
                self.shared.state.lock().expect("state lock").session_id = Some(s);
            }
        }
        let shared = self.shared.clone();
        let method = method.to_string();
        let message = message.clone();
        std::thread::spawn(move || {
            handle_request_response(&shared, response, &id_text, &method, &message, true)
        });
        Ok(())
    }
}

/// A JSON-RPC error only a modern (2026) server sends: unsupported version,
/// unknown method, header mismatch, missing capability.
pub(super) fn is_modern_error(ct: &str, bytes: &[u8]) -> bool {
    if ct != "application/json" {
        return false;
    }
    let Ok(v) = message_limits::parse_bytes(bytes) else {
        return false;
    };
    let code = v
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64);
    let has_supported = v
        .get("error")
        .and_then(|e| e.get("data"))
        .and_then(|d| d.get("supported"))
        .is_some();
    has_supported
        || matches!(
            code,
            Some(
                wire::HEADER_MISMATCH
                    | wire::MISSING_CAPABILITY
                    | wire::UNSUPPORTED_VERSION
                    | wire::DRAFT_MISSING_CAPABILITY
            )
        )
}

/// The answer to a connecting request (initialize, server/discover).
pub(super) enum Connecting {
    Answered(Response<Body>),
    /// `initialize` refused with 400/404/405: the legacy transport, unless
    /// the body is a modern server's JSON-RPC error.
    Refused {
        status: u16,
        ct: String,
        bytes: Vec<u8>,
    },
}

impl Transport for HttpTransport {
    fn send(&mut self, message: &Value) -> Result<(), ElicitError> {
        self.send_by(message, None)
    }

    fn send_by(&mut self, message: &Value, deadline: Option<Instant>) -> Result<(), ElicitError> {
        if let Some(l) = self.legacy.as_mut() {
            return l.send_by(message, deadline);
        }
        self.shared.client.record("send", Ok(message));
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|i| !i.is_null());
        if let (Some(method), Some(id)) = (method, id) {
            if method == wire::TOOLS_CALL {
                self.refuse_rejected(message)?;
            }
            return self.send_request(message, id, method, deadline);
        }
        // Notifications and responses: 202 (or any 2xx) expected.
        let what = match method {
            Some(m) => format!("sending {m}"),
            None => "sending a reply to the server".to_string(),
        };
        // Off the session thread, so Ctrl-C ends the wait; within --timeout
        // (and the deadline of the request being waited for).
        let limit = within(self.shared.client.timeout, deadline);
        let shared = self.shared.clone();
        let posted = message.clone();
        off_thread(&self.shared.client, move || {
            let response = shared.post(&posted, &what, Bound::Ack(limit))?;
            let status = response.status().as_u16();
            if let Some(e) = shared.session_gone(status) {
                return Err(e);
            }
            if !(200..300).contains(&status) {
                let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
                return Err(ElicitError::Server(ServerError::HttpStatus {
                    what: what.to_string(),
                    status,
                    body: preview(&bytes),
                }));
            }
            // A body on a 2xx here is not expected; drained off the
            // connection (for reuse) within ACK_BODY_WAIT, else dropped.
            let _ = read_body(response.into_body().into_reader());
            Ok(())
        })??;
        if method == Some(wire::INITIALIZED) {
            self.open_standalone_stream();
        }
        Ok(())
    }

    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError> {
        if let Some(l) = self.legacy.as_mut() {
            return l.receive(timeout);
        }
        // A sign-in on a request's thread (a person at the browser) does
        // not count against the wait for the server: the time it took is
        // waited again (up to MAX_ANSWER_CREDIT), and while one runs the
        // wait goes on.
        let client = &self.shared.client;
        let mut left = timeout;
        let mut credited = Duration::ZERO;
        loop {
            let spent_before = client.sign_in_spent();
            let got = crate::transport::receive_delivery(&self.rx, left)?;
            if !matches!(got, Incoming::TimedOut) {
                return Ok(got);
            }
            let spent = client.sign_in_spent().saturating_sub(spent_before);
            let grant =
                spent.min(crate::transport::seam::MAX_ANSWER_CREDIT.saturating_sub(credited));
            credited += grant;
            let busy = client.sign_in_activity().0;
            if grant.is_zero() && !busy {
                return Ok(Incoming::TimedOut);
            }
            left = Some(grant.max(Duration::from_millis(100)));
        }
    }

    fn waker(&self) -> Option<crate::transport::Waker> {
        // After a fall-back, messages arrive on the legacy transport's channel.
        if let Some(l) = &self.legacy {
            return l.waker();
        }
        let shared = self.shared.clone();
        // Never waits on a full queue: anything queued wakes the owner too.
        Some(Arc::new(move || {
            shared.tx.send_if_empty(Ok(Incoming::TimedOut))
        }))
    }

    fn close(&mut self, grace: Duration) {
        if let Some(l) = self.legacy.as_mut() {
            return l.close(grace);
        }
        let session = {
            let mut st = self.shared.state.lock().expect("state lock");
            st.closed = true;
            st.session_id.clone()
        };
        if let Some(session) = session {
            // Within `grace` (and --timeout): the result is out already,
            // and a server that never answers must not hold elicit.
            let bound = Bound::Whole(grace.min(self.shared.client.timeout));
            let shared = self.shared.clone();
            let _ = off_thread(&self.shared.client, move || {
                shared
                    .client
                    .execute(&shared.url, "ending the session", &|agent| {
                        let mut req = bound.apply(agent.delete(&shared.url));
                        for (k, v) in shared.client.base_headers("DELETE", &shared.url) {
                            req = req.header(k, v);
                        }
                        req = req.header("Mcp-Session-Id", &session);
                        if let Some(v) = &shared.state.lock().expect("state lock").protocol_version
                        {
                            req = req.header("MCP-Protocol-Version", v);
                        }
                        req.call()
                    })
            });
        }
    }
}
