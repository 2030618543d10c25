//! A small MCP client over any [`Transport`]: the lifecycles of the
//! handshake revisions and of the stateless one, request/response matching,
//! and dispatch of the server's own requests to the [`ElicitHandler`].
//!
//! Why not `rmcp`: its typed model rejects whole requests over things a
//! server author needs to see (an unknown `format`, a nested property) and
//! drops others (`task`); elicit must show and answer what the server really
//! sent, and carry the 2026-07-28 stateless flow (per-request `_meta`,
//! `input_required` retries) next to the 2025 handshake. Line-delimited
//! JSON-RPC is small enough to own.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::handler::{ElicitHandler, HandlerError};
use super::strict::Strict;
use crate::transport::{Incoming, Transport};
use elicit_core::elicitation::protocol::{wire, Revision};
use elicit_core::error::{ElicitError, ServerError};
use elicit_core::text::sanitize::sanitize_line;

/// The newest handshake revision elicit speaks.
pub const HANDSHAKE_REVISION: Revision = Revision::V2025_11_25;
/// [`HANDSHAKE_REVISION`] as on the wire.
pub const HANDSHAKE_VERSION: &str = wire::V2025_11_25;
/// The stateless revision.
pub const STATELESS_VERSION: &str = wire::V2026_07_28;

pub use wire::UNSUPPORTED_VERSION;

pub use crate::transport::MAX_ANSWER_CREDIT;

/// Whether a JSON-RPC error is one only a 2026-07-28 server sends about
/// the request itself: `HeaderMismatchError` (-32020) or
/// `MissingRequiredClientCapabilityError` (-32021).
fn modern_refusal(e: &Value) -> bool {
    matches!(
        e.get("code").and_then(Value::as_i64),
        Some(wire::HEADER_MISMATCH | wire::MISSING_CAPABILITY)
    )
}

/// Which lifecycle to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolChoice {
    /// The `initialize` handshake, where a server can ask in every way
    /// (its own requests, and the SDKs' resolvers); `server/discover`
    /// (2026-07-28) when the server refuses it. A tool refused on the
    /// handshake because it asks with `input_required` is called over
    /// 2026-07-28 (see [`crate::mcp::session`]).
    Auto,
    /// Only this revision: the handshake asking for it, or
    /// `server/discover` for 2026-07-28.
    Only(Revision),
}

/// The reply to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A result.
    Result(Value),
    /// A JSON-RPC error object.
    Error(Value),
}

/// A client of one MCP server: requests and their replies, over a transport.
pub struct McpClient {
    /// The transport to the server.
    pub server: Box<dyn Transport>,
    next_id: i64,
    /// The revision in use: a stateless one ([`Revision::is_stateless`],
    /// no session, capabilities on every request) or the one the
    /// `initialize` handshake negotiated.
    pub revision: Revision,
    /// The version a handshake negotiated when elicit knows no revision by
    /// it (or it is the stateless one, which has no handshake), as the
    /// server spelled it: the session goes on over the handshake, checked
    /// as the newest handshake revision ([`HANDSHAKE_REVISION`]), and is
    /// shown and recorded under the server's version.
    other_version: Option<String>,
    /// How long to wait for the reply to each request. The wait is for the
    /// reply itself: notifications, stray messages and automatic replies
    /// (a `ping`, however slowly the server takes it) do not extend it; the
    /// time a person spends answering an elicitation does not count (up to
    /// [`MAX_ANSWER_CREDIT`] a request).
    pub timeout: Option<Duration>,
    /// The server's `serverInfo` (its name and version), from the handshake.
    pub server_info: Option<Value>,
    /// What the server said it supports (the handshake's `capabilities`).
    pub server_capabilities: Option<Value>,
    /// The server's tools, once listed in this session (what they need to be
    /// called: a task, say).
    pub tools: Option<Vec<Value>>,
    /// `--verbose`: show the messages.
    pub verbose: bool,
    /// Why [`Self::revision`] is the one in use, in words for `--verbose`.
    pub why: String,
    /// Messages read ahead (by `--strict`, to see what the server sent
    /// before elicit answered it), handed out before the transport's.
    held: std::collections::VecDeque<Result<Incoming, ElicitError>>,
    /// Server requests answered in this session: one sent again (same id)
    /// is not answered twice.
    answered_requests: crate::transport::recent_ids::RecentIds,
}

/// The capabilities elicit declares with `--modes`: the elicitation modes
/// given, and no `elicitation` at all for `none`.
pub(crate) fn capabilities_for(modes: super::modes::ElicitModes) -> Value {
    match modes.capability() {
        Some(e) => json!({ "elicitation": e }),
        None => json!({}),
    }
}

pub(crate) fn client_info() -> Value {
    json!({"name": "elicit", "version": env!("CARGO_PKG_VERSION")})
}

impl McpClient {
    /// Connects: the 2026 discovery or the handshake, as chosen.
    pub fn connect(
        server: Box<dyn Transport>,
        choice: ProtocolChoice,
        timeout: Option<Duration>,
        verbose: bool,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<Self, ElicitError> {
        let mut client = McpClient {
            server,
            next_id: 0,
            revision: Revision::V2026_07_28,
            other_version: None,
            timeout,
            server_info: None,
            server_capabilities: None,
            tools: None,
            verbose,
            why: String::new(),
            held: Default::default(),
            answered_requests: Default::default(),
        };
        let handshake =
            |c: &mut McpClient, h: &mut ElicitHandler<'_>, version: &str| c.handshake(version, h);
        match choice {
            ProtocolChoice::Only(Revision::V2026_07_28) => {
                client.discover(handler)?;
                client.why = format!("--protocol {STATELESS_VERSION} given");
            }
            ProtocolChoice::Only(revision) => {
                handshake(&mut client, handler, revision.as_str())?;
                client.why = format!("--protocol {revision} given");
            }
            ProtocolChoice::Auto => match client.try_handshake(HANDSHAKE_VERSION, handler)? {
                None => {
                    client.why = "--protocol auto, and the server accepted the initialize handshake, where it can ask in every way".into();
                }
                Some(refusal) => {
                    client.note(&format!(
                        "initialize refused ({refusal}); trying server/discover ({STATELESS_VERSION})"
                    ));
                    client.discover(handler)?;
                    client.why = format!(
                        "--protocol auto, initialize was refused ({refusal}), and server/discover lists {STATELESS_VERSION}"
                    );
                }
            },
        }
        handler.server_name = client.server_name();
        Ok(client)
    }

    /// The server's name from its `serverInfo`.
    pub(crate) fn server_name(&self) -> Option<String> {
        self.server_info
            .as_ref()?
            .get("name")?
            .as_str()
            .map(str::to_string)
    }

    /// Whether the session is stateless (2026-07-28): no `initialize`
    /// handshake, what it would have said on every request.
    pub fn is_stateless(&self) -> bool {
        self.revision.is_stateless()
    }

    /// The protocol version in use, as on the wire (what a cassette
    /// records).
    pub fn protocol_version(&self) -> &str {
        self.other_version
            .as_deref()
            .unwrap_or(self.revision.as_str())
    }

    /// The protocol in use, in words, for `--verbose` and messages.
    pub fn describe_protocol(&self) -> String {
        let version = self.protocol_version();
        if self.is_stateless() {
            format!("protocol {version}, stateless")
        } else {
            format!("protocol {version}, initialize handshake")
        }
    }

    /// Goes on over the handshake with `version` (the one asked for, then
    /// the one the server's `protocolVersion` names).
    fn set_handshake_version(&mut self, version: &str) {
        match Revision::from_version(version) {
            Some(revision) if !revision.is_stateless() => {
                self.revision = revision;
                self.other_version = None;
            }
            _ => {
                self.revision = HANDSHAKE_REVISION;
                self.other_version = Some(version.to_string());
            }
        }
    }

    /// `server/discover`: an error unless the server speaks 2026-07-28.
    fn discover(&mut self, handler: &mut ElicitHandler<'_>) -> Result<(), ElicitError> {
        self.revision = Revision::V2026_07_28;
        self.other_version = None;
        let mut reply = self.request(wire::SERVER_DISCOVER, json!({}), handler)?;
        // A modern server that refuses the version once but lists it as
        // supported (UnsupportedProtocolVersionError) is asked again.
        if let Reply::Error(e) = &reply {
            let supported = e
                .get("data")
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|x| x.as_str() == Some(STATELESS_VERSION)));
            if e.get("code").and_then(Value::as_i64) == Some(UNSUPPORTED_VERSION) && supported {
                self.note(
                    "server/discover refused the version it lists as supported; asking again",
                );
                reply = self.request(wire::SERVER_DISCOVER, json!({}), handler)?;
            }
        }
        let result = match reply {
            Reply::Result(r) => r,
            // -32020 (header mismatch) and -32021 (missing client
            // capability) only come from a modern server: it speaks
            // 2026-07-28 and refused this request, so the handshake would
            // not help (the spec's era detection).
            Reply::Error(e) if modern_refusal(&e) => {
                return Err(ElicitError::Server(ServerError::DiscoverRefused {
                    version: STATELESS_VERSION,
                    detail: short(&e),
                }))
            }
            Reply::Error(e) => {
                return Err(ElicitError::Server(ServerError::DiscoverFailed {
                    version: STATELESS_VERSION,
                    detail: short(&e),
                }))
            }
        };
        let speaks = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|x| x.as_str() == Some(STATELESS_VERSION)));
        if !speaks {
            return Err(ElicitError::Server(ServerError::VersionNotSupported {
                version: STATELESS_VERSION,
            }));
        }
        self.server_capabilities = result.get("capabilities").cloned();
        self.server_info = result.get("serverInfo").cloned().or_else(|| {
            result
                .get("_meta")
                .and_then(|m| m.get(elicit_core::elicitation::input::SERVER_INFO_META))
                .cloned()
        });
        Ok(())
    }

    fn handshake(
        &mut self,
        version: &str,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<(), ElicitError> {
        match self.try_handshake(version, handler)? {
            None => Ok(()),
            Some(detail) => Err(ElicitError::Server(ServerError::InitializeFailed {
                detail,
            })),
        }
    }

    /// The `initialize` handshake; `Some` holds the server's refusal in
    /// words (the connection is still open, for `server/discover`).
    fn try_handshake(
        &mut self,
        version: &str,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<Option<String>, ElicitError> {
        self.set_handshake_version(version);
        let params = json!({
            "protocolVersion": version,
            "capabilities": capabilities_for(handler.modes),
            "clientInfo": client_info(),
        });
        let result = match self.request(wire::INITIALIZE, params, handler)? {
            Reply::Result(r) => r,
            Reply::Error(e) => return Ok(Some(short(&e))),
        };
        let negotiated = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(version)
            .to_string();
        self.server_info = result.get("serverInfo").cloned();
        self.server_capabilities = result.get("capabilities").cloned();
        self.set_handshake_version(&negotiated);
        self.server
            .send(&json!({"jsonrpc": "2.0", "method": wire::INITIALIZED}))?;
        Ok(None)
    }

    /// Sends a request and waits for its reply, answering the server's own
    /// requests and showing its notifications (with `--verbose`) meanwhile.
    pub fn request(
        &mut self,
        method: &str,
        mut params: Value,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<Reply, ElicitError> {
        self.stamp_stateless_meta(method, &mut params, handler);
        self.next_id += 1;
        let id = self.next_id;
        self.server
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut deadline = self.timeout.map(|t| Instant::now() + t);
        let mut credited = Duration::ZERO;
        loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let msg = self.next_message(method, left)?;
            let Some(obj) = msg.as_object() else {
                return Err(ElicitError::Server(ServerError::NotAMessage {
                    kind: elicit_core::elicitation::json_kind(&msg),
                }));
            };
            // Rounds of one call are compared by the method retried.
            handler.observe(&msg, Some(method));
            if let Some(m) = obj.get("method").and_then(Value::as_str) {
                match obj.get("id") {
                    Some(sid)
                        if !sid.is_null()
                            && !self.answered_requests.first_time(&sid.to_string()) =>
                    {
                        self.note(&format!("ignored server request {m} sent again (id {sid})"));
                    }
                    Some(sid) if !sid.is_null() => {
                        // A person answering a form is not the server being
                        // slow: that time (and only that: not sending the
                        // reply, not a ping) is added back to the deadline.
                        let before = handler.answering;
                        let sent = self.answer_server_request(
                            sid.clone(),
                            m,
                            obj.get("params"),
                            handler,
                            deadline,
                        );
                        let grant = (handler.answering - before)
                            .min(MAX_ANSWER_CREDIT.saturating_sub(credited));
                        credited += grant;
                        if let Some(d) = deadline.as_mut() {
                            *d += grant;
                        }
                        sent?;
                    }
                    _ => self.note(&format!(
                        "notification {m}{}",
                        params_preview(obj.get("params"))
                    )),
                }
                continue;
            }
            if obj.get("id") == Some(&json!(id)) {
                let stateless = self.is_stateless();
                handler.observe_reply(method, stateless, &msg);
                if let Some(e) = obj.get("error") {
                    return Ok(Reply::Error(e.clone()));
                }
                return Ok(Reply::Result(
                    obj.get("result").cloned().unwrap_or(Value::Null),
                ));
            }
            self.note(&format!(
                "ignored a response to an unknown id {}",
                obj.get("id").unwrap_or(&Value::Null)
            ));
        }
    }

    /// In 2026-07-28 (stateless) every request carries what a handshake
    /// would have said: the revision, the client and its capabilities.
    fn stamp_stateless_meta(&self, method: &str, params: &mut Value, handler: &ElicitHandler<'_>) {
        if self.is_stateless() {
            let meta = params
                .as_object_mut()
                .expect("request params are objects")
                .entry("_meta")
                .or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert(wire::VERSION_META.into(), json!(STATELESS_VERSION));
                m.insert(wire::CLIENT_INFO_META.into(), client_info());
                let mut caps = capabilities_for(handler.modes);
                // A tool call may become a task (the 2026-07-28 tasks
                // extension) when the server offers it: elicit follows one,
                // declaring it on the task's own requests too.
                if [
                    wire::TOOLS_CALL,
                    wire::TASKS_GET,
                    wire::TASKS_UPDATE,
                    wire::TASKS_CANCEL,
                ]
                .contains(&method)
                    && super::tasks::server_offers_extension(self.server_capabilities.as_ref())
                {
                    super::tasks::declare_extension(&mut caps);
                }
                m.insert(wire::CAPS_META.into(), caps);
            }
        }
    }

    /// The next message from the server (one held back first), or why none
    /// came while `method` waited for its reply.
    fn next_message(&mut self, method: &str, left: Option<Duration>) -> Result<Value, ElicitError> {
        let next = match self.held.pop_front() {
            Some(held) => held,
            None => self.server.receive(left),
        };
        let msg = match next {
            Ok(m) => m,
            Err(e) => return Err(self.explain(e, method)),
        };
        match msg {
            Incoming::Message(m) => Ok(m),
            Incoming::Malformed { line, error } => {
                Err(ElicitError::Server(ServerError::NotJsonRpc {
                    error,
                    line: elicit_core::text::truncate(&sanitize_line(&line), 200),
                }))
            }
            Incoming::Closed => {
                Err(self.explain(ElicitError::Server(ServerError::ClosedOutput), method))
            }
            Incoming::TimedOut => {
                let waited = self.timeout.unwrap_or_default();
                Err(ElicitError::Server(ServerError::NoReply {
                    method: method.to_string(),
                    waited,
                }))
            }
        }
    }

    /// Answers one server request; the reply is sent by `deadline` (that
    /// of the request being waited for) plus the time the answer took.
    fn answer_server_request(
        &mut self,
        id: Value,
        method: &str,
        params: Option<&Value>,
        handler: &mut ElicitHandler<'_>,
        deadline: Option<Instant>,
    ) -> Result<(), ElicitError> {
        let before = handler.answering;
        self.note(&format!("server request {method} (id {id})"));
        let outcome = handler.handle(method, params);
        if method == elicit_core::elicitation::protocol::ELICITATION_METHOD {
            self.read_ahead_for_strict(handler);
        }
        let reply = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(HandlerError::Rpc { code, message }) => {
                self.note(&format!("answered {method} with error {code}: {message}"));
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
            Err(HandlerError::Fatal(e)) => {
                // Tell the server before giving up, so it is not left waiting.
                let _ = self
                    .server
                    .send(&json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": elicit_core::error::rpc_code::INTERNAL_ERROR,
                        "message": format!("elicit could not resolve the elicitation: {e}"),
                    }}));
                return Err(e);
            }
        };
        let spent = (handler.answering - before).min(MAX_ANSWER_CREDIT);
        self.server.send_by(&reply, deadline.map(|d| d + spent))
    }

    /// `--strict`: before an elicitation's answer goes out, whatever the
    /// server has already sent is read ahead (and held for the loop); an
    /// `elicitation/create` among it was sent while this one was
    /// unanswered.
    fn read_ahead_for_strict(&mut self, handler: &ElicitHandler<'_>) {
        let Some(strict) = &handler.strict else {
            return;
        };
        loop {
            // The shortest wait that still takes what is already queued.
            let next = self.server.receive(Some(Duration::from_millis(1)));
            match &next {
                Ok(Incoming::TimedOut) => return,
                Ok(Incoming::Message(m))
                    if m.get("method").and_then(Value::as_str)
                        == Some(elicit_core::elicitation::protocol::ELICITATION_METHOD)
                        && m.get("id").is_some_and(|i| !i.is_null()) =>
                {
                    strict.concurrent(m, 1);
                }
                Ok(Incoming::Message(_)) => {}
                _ => {
                    self.held.push_back(next);
                    return;
                }
            }
            self.held.push_back(next);
        }
    }

    /// `--strict`: a URL elicitation's completion may come after the
    /// call's result, or on a stream of its own (Streamable HTTP's GET,
    /// read on another thread), so before the session ends what the server
    /// sends is read a moment more, while a completion is still awaited
    /// and at most for `within`. What comes is shown as the call's loop
    /// shows it (`-v`).
    pub(crate) fn await_completions(&mut self, strict: &Strict, within: Duration) {
        let deadline = Instant::now() + within;
        while strict.awaits_completion() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let next = match self.held.pop_front() {
                Some(held) => held,
                None => self.server.receive(Some(left)),
            };
            let Ok(Incoming::Message(msg)) = next else {
                return;
            };
            strict.observe(&msg, None);
            if let Some(m) = msg.get("method").and_then(Value::as_str) {
                if msg.get("id").is_none_or(Value::is_null) {
                    self.note(&format!(
                        "notification {m}{}",
                        params_preview(msg.get("params"))
                    ));
                }
            }
        }
    }

    /// Adds the server's exit status to a failure, when it has exited.
    fn explain(&mut self, e: ElicitError, method: &str) -> ElicitError {
        match e {
            ElicitError::Server(cause) => ElicitError::Server(ServerError::WhileWaiting {
                cause: Box::new(cause),
                method: method.to_string(),
                detail: self.server.gone_detail(),
            }),
            other => other,
        }
    }

    fn note(&self, text: &str) {
        if self.verbose {
            eprintln!("elicit: {}", sanitize_line(text));
        }
    }

    /// Lists the server's tools (following `nextCursor`).
    pub(crate) fn list_tools(
        &mut self,
        handler: &mut ElicitHandler<'_>,
    ) -> Result<Vec<Value>, ElicitError> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            match self.request(wire::TOOLS_LIST, params, handler)? {
                Reply::Result(r) => {
                    if let Some(list) = r.get("tools").and_then(Value::as_array) {
                        tools.extend(list.iter().cloned());
                    }
                    cursor = r.get("nextCursor").filter(|c| !c.is_null()).cloned();
                    if cursor.is_none() {
                        break;
                    }
                }
                Reply::Error(e) => {
                    return Err(ElicitError::Server(ServerError::ToolsListFailed {
                        detail: short(&e),
                    }))
                }
            }
        }
        self.tools = Some(tools.clone());
        Ok(tools)
    }
}

fn params_preview(params: Option<&Value>) -> String {
    match params {
        Some(p) => format!(" {}", elicit_core::text::truncate(&p.to_string(), 160)),
        None => String::new(),
    }
}

/// `code: message` of a JSON-RPC error object.
pub fn short(error: &Value) -> String {
    let code = error.get("code").map(Value::to_string).unwrap_or_default();
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    sanitize_line(&format!("{code} {message}"))
}

/// Builds `tools/call` params.
pub(crate) fn call_params(name: &str, arguments: &Map<String, Value>) -> Value {
    json!({"name": name, "arguments": arguments})
}
