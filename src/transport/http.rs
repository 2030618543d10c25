//! Streamable HTTP: the MCP endpoint is one URL; every message is a POST.
//!
//! Both generations are carried without [`crate::mcp::client::McpClient`]
//! knowing which one it speaks: everything HTTP-specific is derived here from
//! the messages themselves.
//!
//! - 2025-06-18 / 2025-11-25: `Mcp-Session-Id` is taken from the initialize
//!   response and sent on every later request; `MCP-Protocol-Version` is the
//!   version the initialize result names; a request's reply is JSON or an SSE
//!   stream that may carry server requests (answered by POSTing the
//!   response); the optional GET stream is opened once the session is
//!   initialized (a server may send an elicitation there; 405: the server
//!   has none); a stream that
//!   closes before its response is resumed with GET + `Last-Event-ID` after
//!   the server's `retry:` time; DELETE ends the session on the way out.
//! - 2026-07-28: a request whose `_meta` names the protocol version gets
//!   `MCP-Protocol-Version` from it, plus `Mcp-Method`, `Mcp-Name` and
//!   `Mcp-Param-*` for tool parameters marked `x-mcp-header` (learnt from
//!   the `tools/list` results that pass through; tools whose annotations
//!   break the spec's rules are removed from those results, as the spec
//!   requires of HTTP clients).
//! - A request refused with 400 `HeaderMismatchError` (-32020) is sent once
//!   more, as the spec recommends; for `tools/call`, after reading
//!   `tools/list` again (the tool's `x-mcp-header` parameters may have
//!   changed since it was listed).
//! - An HTTP failure answering a request becomes a JSON-RPC error reply to
//!   that request, so the client's era fallback (`server/discover`, then
//!   `initialize`) works as on stdio; an `initialize` POST refused with
//!   400/404/405 (and no modern JSON-RPC error) switches to the legacy
//!   HTTP+SSE transport ([`super::sse`]) when `--transport auto`.
//!
//! Why `ureq` 3: blocking with rustls, streaming bodies readable on a plain
//! thread, one keep-alive agent reused for the session; elicit's transports
//! are thread-per-stream, so an async stack (reqwest's blocking mode runs a
//! tokio runtime inside) would add weight and nothing else.
//!
//! TLS trusts the system's root certificates (`rustls-native-certs`: the
//! distribution bundle, or `SSL_CERT_FILE`/`SSL_CERT_DIR`) plus Mozilla's
//! bundled roots (`webpki-root-certs`): ureq's own `platform-verifier`
//! would use the system store alone, and a machine without one would reach
//! nothing.
//!
//! Every body is read with a cap ([`MAX_MESSAGE_BYTES`]): a JSON reply over
//! it, or an SSE event over it, ends that stream with an error.
//!
//! # Sign-in hook
//!
//! [`Authenticator`] is how OAuth sign-in plugs in: before each request it is
//! asked for an `Authorization` value; on 401/403 it is called with the
//! status and the `WWW-Authenticate` header, and returns `true` to have the
//! request sent once more (with the new `Authorization`). Without one, 401
//! and 403 end the session with an error that names `--header`. The time
//! a sign-in takes (a person at the browser) does not count against the
//! wait for the server's reply. `crate::auth::hook::SignInHook` is the
//! implementation `call` and `proxy` use.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ureq::http::Response;
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::{Agent, Body};

use super::message_limits;
use super::queue::{self, QueueReceiver, QueueSender};
use super::replay::{server_request_id, RecentIds};
use super::sse_reader::SseReader;
use super::{Delivery, Incoming, MessageLog, Transport};
use crate::error::ElicitError;

/// The largest single message (a JSON body or one SSE event) elicit reads.
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;
/// How long the first request after `initialized` waits for the standalone
/// GET stream's answer.
const STANDALONE_OPEN_WAIT: Duration = Duration::from_secs(2);
/// How many times a stream that closed before its response is resumed.
const MAX_RESUMES: usize = 10;
/// The wait before resuming when the server gave no `retry:`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest wait before resuming a stream, whatever `retry:` says (a
/// request's wait also ends a second before its `--timeout`).
pub const MAX_RETRY: Duration = Duration::from_secs(30);
const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// The first revision with the standard request headers.
const HEADERS_SINCE: &str = "2026-07-28";
/// Requests sent again after the sign-in hook said so: a sign-in, then up
/// to the step-ups the hook allows (it enforces its own limits).
const MAX_AUTH_RETRIES: u32 = 4;
/// How long each exchange the session waits on (a connecting POST, a
/// notification, a reply, the closing DELETE, opening a stream) may take
/// when no `--timeout` says (`proxy`).
pub const DEFAULT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the body of an acknowledgement (the 202 to a notification or
/// a reply) may take: none is expected, and one that trickles must not
/// hold the session.
const ACK_BODY_WAIT: Duration = Duration::from_secs(1);

/// How one HTTP exchange is bounded in time.
#[derive(Clone, Copy)]
pub(crate) enum Bound {
    /// A request whose reply may stream for as long as the server works
    /// (a tool that elicits): only the wait for the response head is
    /// bounded, by the session's `receive` and the stream's own reads.
    Stream,
    /// The whole exchange, body included, within this time.
    Whole(Duration),
    /// An acknowledgement: the response within this time, any body within
    /// [`ACK_BODY_WAIT`].
    Ack(Duration),
    /// A stream opened with GET: its response head within this time.
    Head(Duration),
}

impl Bound {
    /// The request with this bound's ureq timeouts.
    pub(crate) fn apply<B>(self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match self {
            Bound::Stream => req,
            Bound::Whole(d) => req.config().timeout_global(Some(d)).build(),
            Bound::Ack(d) => req
                .config()
                .timeout_global(Some(d))
                .timeout_recv_body(Some(d.min(ACK_BODY_WAIT)))
                .build(),
            Bound::Head(d) => req.config().timeout_recv_response(Some(d)).build(),
        }
    }
}

/// What is left of `limit`, and of the time until `deadline` when one is
/// given (at least a millisecond: ureq reads zero as no timeout at all).
pub(crate) fn within(limit: Duration, deadline: Option<Instant>) -> Duration {
    let left = deadline.map_or(limit, |d| {
        limit.min(d.saturating_duration_since(Instant::now()))
    });
    left.max(Duration::from_millis(1))
}

/// Runs one exchange the session thread would otherwise block on, on a
/// thread of its own, and waits for it: a Ctrl-C for the server ends the
/// wait at once (a blocked socket read would not notice it); not one that
/// a prompt owns (it cancels that elicitation), nor one during a sign-in
/// (it answers Ctrl-C itself). The exchange's own ureq timeouts end the
/// thread.
pub(crate) fn off_thread<T: Send + 'static>(
    client: &Client,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ElicitError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    let interrupts = crate::signals::ctrl_c_for_server();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(v) => return Ok(v),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(ElicitError::Server(
                    "an HTTP exchange ended without an outcome".into(),
                ))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if crate::signals::ctrl_c_for_server() != interrupts && !client.sign_in_activity().0 {
            return Err(ElicitError::Server(
                "interrupted (Ctrl-C) while waiting for the server".into(),
            ));
        }
    }
}

/// Supplies credentials for a remote server (the OAuth sign-in plugs in
/// here). See the module docs.
pub trait Authenticator: Send {
    /// The `Authorization` header value to send, if any.
    fn authorization(&mut self, url: &str) -> Option<String>;
    /// The credential headers for one request (`method` to `url`):
    /// `Authorization`, and a `DPoP` proof for a DPoP-bound token.
    fn credentials(&mut self, _method: &str, url: &str) -> Vec<(String, String)> {
        self.authorization(url)
            .map(|v| vec![("Authorization".to_string(), v)])
            .unwrap_or_default()
    }
    /// A response from `url` carried a `DPoP-Nonce` (RFC 9449 §9).
    fn dpop_nonce(&mut self, _url: &str, _nonce: &str) {}
    /// The server answered 401 or 403. Returns true to send the request once
    /// more (after a sign-in, say), false to give up with the usual error.
    fn challenge(
        &mut self,
        url: &str,
        status: u16,
        www_authenticate: Option<&str>,
    ) -> Result<bool, ElicitError>;
}

/// What an HTTP transport is opened with.
pub struct HttpOptions {
    /// `--header`s: sent on every request. Values are never printed.
    pub headers: Vec<(String, String)>,
    pub auth: Option<Box<dyn Authenticator>>,
    pub log: Option<MessageLog>,
    /// Fall back to the legacy HTTP+SSE transport when `initialize` is
    /// refused (`--transport auto`).
    pub legacy_fallback: bool,
    /// The most each exchange the session waits on may take (`--timeout`).
    pub timeout: Duration,
}

/// What the two HTTP transports share: the agent, the headers, the sign-in
/// hook, the log.
pub(crate) struct Client {
    pub agent: Agent,
    pub headers: Vec<(String, String)>,
    pub auth: Mutex<Option<Box<dyn Authenticator>>>,
    pub log: Option<MessageLog>,
    /// The most each exchange the session waits on may take (`--timeout`).
    pub timeout: Duration,
    /// True while the sign-in hook runs (a person may be signing in: the
    /// time does not count against `--timeout`).
    signing_in: AtomicBool,
    /// Successful sign-ins so far: a request that got 401 while another one
    /// signed in is retried with the new credentials, not signed in again.
    sign_ins: AtomicU64,
    /// Time spent in the sign-in hook so far, and since when the one
    /// running (if any) started: credited back to the wait for a reply.
    sign_in_time: Mutex<(Duration, Option<Instant>)>,
}

/// The root certificates elicit trusts: the system's store (read by
/// `rustls-native-certs`: `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the
/// distribution's bundle) plus Mozilla's bundled roots (`webpki-root-certs`),
/// so a company CA installed on the machine works, and a machine without a
/// usable store still reaches public servers. Read once per process.
fn root_certs() -> RootCerts {
    static ROOTS: OnceLock<RootCerts> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let system = rustls_native_certs::load_native_certs();
            let mut certs: Vec<Certificate<'static>> = system
                .certs
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()).to_owned())
                .collect();
            certs.extend(
                webpki_root_certs::TLS_SERVER_ROOT_CERTS
                    .iter()
                    .map(|c| Certificate::from_der(c.as_ref()).to_owned()),
            );
            RootCerts::new_with_certs(&certs)
        })
        .clone()
}

/// The agent every remote request goes through (MCP and sign-in alike).
pub fn new_agent() -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        // Redirects are not followed for POST (the body would be lost or
        // sent somewhere unexpected): a 3xx is reported.
        .max_redirects(0)
        .max_redirects_will_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .user_agent(format!("elicit/{}", env!("CARGO_PKG_VERSION")))
        .tls_config(TlsConfig::builder().root_certs(root_certs()).build())
        .build()
        .into()
}

impl Client {
    pub fn new(
        headers: Vec<(String, String)>,
        auth: Option<Box<dyn Authenticator>>,
        log: Option<MessageLog>,
        timeout: Duration,
    ) -> Self {
        Client {
            agent: new_agent(),
            headers,
            auth: Mutex::new(auth),
            log,
            timeout,
            signing_in: AtomicBool::new(false),
            sign_ins: AtomicU64::new(0),
            sign_in_time: Mutex::new((Duration::ZERO, None)),
        }
    }

    /// Whether a sign-in is running, and how many finished.
    pub fn sign_in_activity(&self) -> (bool, u64) {
        (
            self.signing_in.load(Ordering::SeqCst),
            self.sign_ins.load(Ordering::SeqCst),
        )
    }

    /// The time spent signing in so far (the one running included): a
    /// wait for the server gets it back.
    pub fn sign_in_spent(&self) -> Duration {
        let t = self.sign_in_time.lock().expect("sign-in time lock");
        t.0 + t.1.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Sends a request built by `build` (called again for a retry after a
    /// sign-in), with the `--header`s and `Authorization` added. 401/403 go
    /// to the sign-in hook, else become an error naming `--header`.
    pub fn execute(
        &self,
        url: &str,
        what: &str,
        build: &dyn Fn(&Agent) -> Result<Response<Body>, ureq::Error>,
    ) -> Result<Response<Body>, ElicitError> {
        // One retry after a sign-in; a 403 step-up may need a few more.
        let mut retries = 0;
        let mut resent = false;
        loop {
            let before = self.sign_ins.load(Ordering::SeqCst);
            let response = match build(&self.agent) {
                Ok(r) => r,
                // A server may close an idle kept-alive connection just as
                // elicit reuses it: the request never reached it. Sent once
                // more, on a new connection.
                Err(e) if !resent && stale_connection(&e) => {
                    resent = true;
                    continue;
                }
                Err(e) => return Err(network_error(url, what, e)),
            };
            let status = response.status().as_u16();
            // Only then the lock: a sign-in elsewhere holds it meanwhile.
            if let Some(n) = header(&response, "dpop-nonce") {
                if let Some(a) = self.auth.lock().expect("auth lock").as_mut() {
                    a.dpop_nonce(url, &n);
                }
            }
            if status != 401 && status != 403 {
                return Ok(response);
            }
            let www = header(&response, "www-authenticate");
            let mut auth = self.auth.lock().expect("auth lock");
            if auth.is_some() && retries < MAX_AUTH_RETRIES {
                retries += 1;
                if self.sign_ins.load(Ordering::SeqCst) != before {
                    // Another request signed in meanwhile: use its token.
                    continue;
                }
                let a = auth.as_mut().expect("checked above");
                self.signing_in.store(true, Ordering::SeqCst);
                let started = Instant::now();
                self.sign_in_time.lock().expect("sign-in time lock").1 = Some(started);
                let outcome = a.challenge(url, status, www.as_deref());
                {
                    let mut t = self.sign_in_time.lock().expect("sign-in time lock");
                    t.0 += started.elapsed();
                    t.1 = None;
                }
                self.signing_in.store(false, Ordering::SeqCst);
                if outcome? {
                    self.sign_ins.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
            }
            return Err(auth_error(status, www.as_deref(), auth.is_some()));
        }
    }

    /// The `--header`s and the credentials for one `method` request to
    /// `url` (`Authorization`, and `DPoP` for a DPoP-bound token), in order.
    pub fn base_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let mut out = self.headers.clone();
        if let Some(a) = self.auth.lock().expect("auth lock").as_mut() {
            for (name, v) in a.credentials(method, url) {
                out.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                out.push((name, v));
            }
        }
        out
    }

    pub fn record(&self, dir: &str, message: Result<&Value, &str>) {
        if let Some(l) = &self.log {
            l.record(dir, message);
        }
    }
}

/// A response header as text.
pub(crate) fn header(response: &Response<Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The media type of a response, lower-cased, without parameters.
pub(crate) fn content_type(response: &Response<Body>) -> String {
    header(response, "content-type")
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// A network failure in words a person can act on.
pub(crate) fn network_error(url: &str, what: &str, e: ureq::Error) -> ElicitError {
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| format!("{h}:{}", u.port_or_known_default().unwrap_or(0)))
        })
        .unwrap_or_else(|| url.to_string());
    let text = match &e {
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("cannot connect to {host}: connection refused (is the server running, and on that port?)")
        }
        ureq::Error::HostNotFound => {
            format!("cannot resolve the host name of {url} (check the spelling, or the network)")
        }
        ureq::Error::Rustls(t) => format!(
            "TLS failure with {host}: {t} (a self-signed or otherwise untrusted certificate is refused)"
        ),
        ureq::Error::Tls(t) => format!("TLS failure with {host}: {t}"),
        ureq::Error::Timeout(_) => {
            format!("timed out talking to {host}: no answer within the time allowed (--timeout)")
        }
        ureq::Error::BodyExceedsLimit(n) => {
            format!("a message from {host} is over the limit of {n} bytes")
        }
        ureq::Error::BadUri(u) => format!("bad URL {u}"),
        ureq::Error::ConnectionFailed => format!("cannot connect to {host}"),
        // rustls reports through io::Error (InvalidData) during the handshake.
        ureq::Error::Io(io) if is_https(url) && looks_like_tls(io) => format!(
            "TLS failure with {host}: {io} (a self-signed or otherwise untrusted certificate is refused)"
        ),
        ureq::Error::Io(io) => format!("connection to {host} failed: {io}"),
        other => format!("request to {host} failed: {other}"),
    };
    ElicitError::Server(format!("{what}: {text}"))
}

fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// Whether a failure looks like the server dropped a kept-alive
/// connection as elicit reused it (reset, or closed before any response).
fn stale_connection(e: &ureq::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e, ureq::Error::Io(io) if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof))
}

fn looks_like_tls(io: &std::io::Error) -> bool {
    let text = io.to_string().to_ascii_lowercase();
    // Not "peer": a plain "connection reset by peer" is no TLS failure.
    ["certificate", "tls", "handshake"]
        .iter()
        .any(|w| text.contains(w))
}

fn auth_error(status: u16, www: Option<&str>, had_hook: bool) -> ElicitError {
    let scheme = www
        .and_then(|w| w.split_whitespace().next())
        .map(|s| {
            format!(
                " (it asks for {} credentials)",
                crate::text::sanitize::sanitize_line(s)
            )
        })
        .unwrap_or_default();
    let what = if status == 401 {
        "401 Unauthorized: the server needs credentials"
    } else {
        "403 Forbidden: the credentials sent are not enough"
    };
    let hint = if had_hook {
        "sign-in did not succeed"
    } else {
        "pass them with --header 'Authorization: Bearer TOKEN' (or sign in, where supported)"
    };
    ElicitError::Server(format!("HTTP {what}{scheme}; {hint}"))
}

/// Reads a whole body up to [`MAX_MESSAGE_BYTES`].
pub(crate) fn read_body(reader: impl Read) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_MESSAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_MESSAGE_BYTES {
        return Err(format!("the body is over {MAX_MESSAGE_BYTES} bytes"));
    }
    Ok(bytes)
}

/// A short, sanitised preview of a body for an error message.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]);
    let line = crate::text::sanitize::sanitize_line(
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
    );
    crate::text::truncate(&line, 160)
}

/// Session facts learnt from the traffic.
#[derive(Default)]
struct State {
    session_id: Option<String>,
    /// The version the initialize result named (2025 era).
    protocol_version: Option<String>,
    /// Tool name -> its `Mcp-Param-*` headers: (name part, property path).
    tool_headers: HashMap<String, Vec<(String, Vec<String>)>>,
    /// The standalone GET stream was opened (once per session).
    get_stream_opened: bool,
    /// Tools set aside for a bad `x-mcp-header` annotation: name -> why.
    rejected: HashMap<String, String>,
    /// Requests whose replies teach something: id (JSON text) -> method.
    watched: HashMap<String, String>,
    closed: bool,
}

struct Shared {
    client: Client,
    url: String,
    state: Mutex<State>,
    /// Bounded: a reader thread waits here (and stops reading its
    /// stream) while the session thread is busy.
    tx: QueueSender<Delivery>,
    /// SSE event ids seen on any stream of the session (ids are unique
    /// across a session's streams): a repeat is dropped.
    seen_events: Mutex<RecentIds>,
    /// Server requests delivered: one sent again is dropped.
    seen_requests: Mutex<RecentIds>,
}

impl Shared {
    /// Hands one delivery over, `bytes` being the size of the text it was
    /// read from; waits while the queue is full.
    fn push(&self, d: Delivery, bytes: usize) {
        let _ = self.tx.send(d, bytes);
    }

    /// Hands one SSE `data` or JSON body to the client; true when it holds
    /// the reply to `pending`.
    fn deliver(&self, text: &str, pending: Option<&str>) -> bool {
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
    fn learn(&self, id: &str, msg: &mut Value) {
        let mut st = self.state.lock().expect("state lock");
        let Some(method) = st.watched.remove(id) else {
            return;
        };
        let Some(result) = msg.get_mut("result") else {
            return;
        };
        match method.as_str() {
            "initialize" => {
                st.protocol_version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            "tools/list" => learn_tools(&mut st, result, true),
            _ => {}
        }
    }

    /// The headers for one POST of `message`.
    fn post_headers(&self, message: &Value) -> Vec<(String, String)> {
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
                if matches!(method, "tools/call" | "resources/read" | "prompts/get") {
                    let name = params
                        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
                        .and_then(Value::as_str);
                    if let Some(name) = name {
                        h.push(("Mcp-Name".into(), encode_header_value(name)));
                    }
                }
                if method == "tools/call" {
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

    fn post(
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
    fn get(&self, last_event_id: Option<&str>, what: &str) -> Result<Response<Body>, ElicitError> {
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

    fn session_gone(&self, status: u16) -> Option<ElicitError> {
        let st = self.state.lock().expect("state lock");
        (status == 404 && st.session_id.is_some()).then(|| {
            ElicitError::Server(
                "the server no longer knows this session (HTTP 404): it ended or expired on the server's side; run the command again to start a new one".into(),
            )
        })
    }
}

/// Learns the `x-mcp-header` parameters of the tools in a `tools/list`
/// result and removes (with a warning, when `warn`) the tools whose
/// annotations break the spec's rules.
fn learn_tools(st: &mut State, result: &mut Value, warn: bool) {
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
                        crate::text::sanitize::sanitize_line(name),
                        crate::text::sanitize::sanitize_line(&reason)
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
const HEADER_MISMATCH: i64 = -32020;
/// How many `tools/list` pages a refresh after a header mismatch reads.
const MAX_REFRESH_PAGES: usize = 20;

/// The JSON-RPC error code of an error body, if it is one.
fn error_code(ct: &str, bytes: &[u8]) -> Option<i64> {
    if ct != "application/json" {
        return None;
    }
    message_limits::parse_bytes(bytes)
        .ok()?
        .get("error")?
        .get("code")?
        .as_i64()
}

/// The reply to one request of elicit's own (not the client's), read from
/// a JSON body or an SSE stream; None when there is none.
fn private_reply(response: Response<Body>, id: &str) -> Option<Value> {
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
fn refresh_tool_headers(shared: &Shared, message: &Value) {
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
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
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
fn resend_after_mismatch(shared: &Shared, message: &Value, id: &str, method: &str) {
    if method == "tools/call" {
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
            return fail_request(shared, id, ElicitError::Server(format!(
                "the server refused the headers of tools/call (-32020 header mismatch), and its tool {} now breaks the x-mcp-header rules ({}): not calling it",
                crate::text::sanitize::sanitize_line(name),
                crate::text::sanitize::sanitize_line(&reason)
            )));
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

/// How a stream ended.
enum StreamEnd {
    Answered,
    /// Ended (or broke) before the reply; resumable when an event id was seen.
    Cut {
        last_id: Option<String>,
        retry: Option<Duration>,
        error: Option<String>,
    },
}

/// Reads an SSE body, delivering each message; stops at the reply to
/// `pending`.
fn read_stream(shared: &Shared, body: Body, pending: Option<&str>) -> StreamEnd {
    let mut sse = SseReader::new(BufReader::new(body.into_reader()));
    let mut error = None;
    for event in sse.by_ref() {
        match event {
            Ok(ev) => {
                if ev.data.is_empty() || ev.event != "message" {
                    continue; // priming events, unknown event types
                }
                let replayed = ev.own_id
                    && ev.id.as_deref().is_some_and(|id| {
                        !shared.seen_events.lock().expect("ids lock").first_time(id)
                    });
                if replayed {
                    continue;
                }
                if shared.deliver(&ev.data, pending) {
                    read_past_reply(shared, &mut sse);
                    return StreamEnd::Answered;
                }
            }
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    StreamEnd::Cut {
        last_id: sse.last_event_id().map(str::to_string),
        retry: sse.retry(),
        error,
    }
}

/// How many request streams may be read on past their reply at once.
const MAX_READ_PAST_REPLY: usize = 8;
/// Request streams being read on past their reply.
static READING_PAST_REPLY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// After the reply, a server ends the stream (the spec says it should), and
/// its end is usually in the same read as the reply: reading on to it hands
/// the connection back to the agent's pool, where dropping the body would
/// close it and cost the next request a new connection. What else comes on
/// the stream meanwhile is delivered. A server that holds streams open
/// holds at most [`MAX_READ_PAST_REPLY`] of these threads; past that, a
/// stream is dropped at its reply.
fn read_past_reply<R: std::io::BufRead>(shared: &Shared, sse: &mut SseReader<R>) {
    use std::sync::atomic::Ordering;
    if READING_PAST_REPLY.fetch_add(1, Ordering::SeqCst) < MAX_READ_PAST_REPLY {
        for ev in sse.by_ref() {
            match ev {
                Ok(ev) if !ev.data.is_empty() && ev.event == "message" => {
                    shared.deliver(&ev.data, None);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    READING_PAST_REPLY.fetch_sub(1, Ordering::SeqCst);
}

/// Reads a request's reply (JSON or a stream, resumed as needed); every
/// failure goes to the client as an error.
fn read_reply(shared: &Shared, response: Response<Body>, id: &str, method: &str) {
    if let Err(e) = try_read_reply(shared, response, id, method) {
        fail_request(shared, id, e);
    }
}

/// A request that cannot get its reply gets a JSON-RPC error in its place
/// (so a relayed client is never left waiting, and `call` reports it).
fn fail_request(shared: &Shared, id: &str, e: ElicitError) {
    let reply = json!({"jsonrpc": "2.0",
        "id": serde_json::from_str::<Value>(id).unwrap_or(Value::Null),
        "error": {"code": crate::error::rpc_code::INTERNAL_ERROR, "message": e.to_string()}});
    shared.client.record("recv", Ok(&reply));
    shared.push(Ok(Incoming::Message(reply)), 0);
}

fn try_read_reply(
    shared: &Shared,
    response: Response<Body>,
    id: &str,
    method: &str,
) -> Result<(), ElicitError> {
    let kind = content_type(&response);
    let body = response.into_body();
    if kind == "application/json" {
        let bytes = read_body(body.into_reader())
            .map_err(|e| ElicitError::Server(format!("reading the reply to {method}: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        shared.deliver(&text, Some(id));
        return Ok(());
    }
    // A resumption waits no later than a second before the request's
    // --timeout (counted from about when it was sent).
    let deadline = Instant::now() + shared.client.timeout;
    let mut end = read_stream(shared, body, Some(id));
    for _ in 0..MAX_RESUMES {
        let (last_id, retry, error) = match end {
            StreamEnd::Answered => return Ok(()),
            StreamEnd::Cut {
                last_id,
                retry,
                error,
            } => (last_id, retry, error),
        };
        let Some(last_id) = last_id else {
            let why = error.map(|e| format!(" ({e})")).unwrap_or_default();
            return Err(ElicitError::Server(format!(
                "the server closed the stream for {method} before sending its reply{why}"
            )));
        };
        if !wait_to_resume(shared, retry, Some(deadline)) {
            return Ok(());
        }
        let response = shared.get(Some(&last_id), &format!("resuming the stream for {method}"))?;
        let status = response.status().as_u16();
        if let Some(e) = shared.session_gone(status) {
            return Err(e);
        }
        if status != 200 || content_type(&response) != "text/event-stream" {
            return Err(ElicitError::Server(format!(
                "the server closed the stream for {method} before its reply, and refused to resume it (GET with Last-Event-ID: HTTP {status})"
            )));
        }
        end = read_stream(shared, response.into_body(), Some(id));
    }
    Err(ElicitError::Server(format!(
        "the stream for {method} was cut {MAX_RESUMES} times without a reply; giving up"
    )))
}

/// Waits before resuming a stream: the server's `retry:` (else a second),
/// at most [`MAX_RETRY`], and ending a second before `deadline`. False
/// when the session closed meanwhile (or before).
fn wait_to_resume(shared: &Shared, retry: Option<Duration>, deadline: Option<Instant>) -> bool {
    let mut wait = retry.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY);
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        wait = wait.min(left.saturating_sub(Duration::from_secs(1)));
    }
    let until = Instant::now() + wait;
    loop {
        if shared.state.lock().expect("state lock").closed {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// The standalone GET stream of a 2025 session: server messages not tied
/// to a request. 405 (or any refusal) means there is none.
/// `opened` hears once the first GET has its answer (or failed).
fn standalone_stream(shared: Arc<Shared>, opened: Sender<()>) {
    let mut last_id: Option<String> = None;
    for _ in 0..MAX_RESUMES {
        let got = shared.get(last_id.as_deref(), "opening the server's message stream");
        let _ = opened.send(());
        let Ok(response) = got else {
            return;
        };
        if response.status().as_u16() != 200 || content_type(&response) != "text/event-stream" {
            return;
        }
        match read_stream(&shared, response.into_body(), None) {
            StreamEnd::Answered => return,
            StreamEnd::Cut {
                last_id: id, retry, ..
            } => {
                if id.is_none() || !wait_to_resume(&shared, retry, None) {
                    return;
                }
                last_id = id;
            }
        }
    }
}

/// The Streamable HTTP transport.
pub struct HttpTransport {
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
        match self.shared.state.lock().expect("state lock").rejected.get(name) {
            Some(reason) => Err(ElicitError::Server(format!(
                "not calling the tool {}: its definition breaks the x-mcp-header rules ({}), so elicit set it aside as the MCP spec requires",
                crate::text::sanitize::sanitize_line(name),
                crate::text::sanitize::sanitize_line(reason)
            ))),
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
            ElicitError::Server(format!(
                "the server refused the Streamable HTTP POST (HTTP {status}), and the legacy HTTP+SSE GET failed too: {e}"
            ))
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
        if matches!(method, "initialize" | "tools/list") {
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
        let connecting = matches!(method, "initialize" | "server/discover");
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
        let check_refusal = method == "initialize" && self.legacy_fallback;
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
        if method == "initialize" && (200..300).contains(&status) {
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

/// Everything after the response head of a request.
/// `message` is the request (sent again once after a header mismatch while
/// `may_retry`).
fn handle_request_response(
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
                    ElicitError::Server(format!(
                        "the server accepted {method} (HTTP 202) but sent no reply"
                    )),
                );
            } else {
                let shown = if ct.is_empty() {
                    "no content type".to_string()
                } else {
                    crate::text::sanitize::sanitize_line(&ct)
                };
                fail_request(shared, id, ElicitError::Server(format!(
                    "the server answered {method} with {shown}, not MCP (application/json or text/event-stream): is {} an MCP endpoint?",
                    crate::text::sanitize::sanitize_line(&shared.url)
                )));
            }
        }
        300..=399 => {
            let to = header(&response, "location").unwrap_or_default();
            fail_request(shared, id, ElicitError::Server(format!(
                "the server redirected {method} (HTTP {status}) to {}; elicit does not follow redirects for POST: use that URL",
                crate::text::sanitize::sanitize_line(&to)
            )));
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
fn deliver_http_error(
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
            "code": crate::error::rpc_code::INTERNAL_ERROR,
            "message": format!("HTTP {status} answering {method}: {}", preview(bytes)),
        }),
    };
    let reply = json!({"jsonrpc": "2.0", "id": id_value, "error": error});
    shared.client.record("recv", Ok(&reply));
    shared.push(Ok(Incoming::Message(reply)), 0);
}

/// A JSON-RPC error only a modern (2026) server sends: unsupported version,
/// unknown method, header mismatch, missing capability.
fn is_modern_error(ct: &str, bytes: &[u8]) -> bool {
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
    has_supported || matches!(code, Some(-32020 | -32021 | -32022 | -32003))
}

/// The answer to a connecting request (initialize, server/discover).
enum Connecting {
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
            if method == "tools/call" {
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
                return Err(ElicitError::Server(format!(
                    "{what}: the server answered HTTP {status}: {}",
                    preview(&bytes)
                )));
            }
            // A body on a 2xx here is not expected; drained off the
            // connection (for reuse) within ACK_BODY_WAIT, else dropped.
            let _ = read_body(response.into_body().into_reader());
            Ok(())
        })??;
        if method == Some("notifications/initialized") {
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
            let got = super::receive_delivery(&self.rx, left)?;
            if !matches!(got, Incoming::TimedOut) {
                return Ok(got);
            }
            let spent = client.sign_in_spent().saturating_sub(spent_before);
            let grant = spent.min(super::MAX_ANSWER_CREDIT.saturating_sub(credited));
            credited += grant;
            let busy = client.sign_in_activity().0;
            if grant.is_zero() && !busy {
                return Ok(Incoming::TimedOut);
            }
            left = Some(grant.max(Duration::from_millis(100)));
        }
    }

    fn waker(&self) -> Option<super::Waker> {
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

/// The `Mcp-Param-*` headers a tool's `inputSchema` asks for, or why the
/// tool must be set aside (the spec's constraints on `x-mcp-header`).
pub fn tool_param_headers(schema: Option<&Value>) -> Result<Vec<(String, Vec<String>)>, String> {
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

fn collect_reachable(
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
                    crate::text::sanitize::sanitize_line(name)
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
fn count_annotations(v: &Value, is_property_map: bool) -> usize {
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

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The header text of the value at `path` in the arguments (None when
/// absent or null).
fn value_at(args: &Value, path: &[String]) -> Option<String> {
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
pub fn encode_header_value(value: &str) -> String {
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
