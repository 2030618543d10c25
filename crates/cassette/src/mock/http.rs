//! `elicit mock --http PORT`: Streamable HTTP on 127.0.0.1, over the
//! page's bounded listener (heads, connections, body time). `POST /mcp`
//! takes one JSON-RPC message (at most [`wire::MAX_MESSAGE_BYTES`], checked
//! for values and depth before it is parsed). A handshake `tools/call` that
//! elicits is answered with an event stream: each recorded elicitation as
//! an event, the client's answer `POST`ed back (202), the result as the
//! last event. Everything else is answered with one JSON reply. A request
//! from a web page of another origin gets 403.
//!
//! Another local user may be the client, so what a call holds is bounded
//! and ends with it. A session is its `Mcp-Session-Id` (`initialize` gives
//! a fresh one; requests without one share one). A call's stream is held
//! out of the listener's request slots ([`elicit_http::Request::hold`]), so
//! streams waiting on answers never keep those answers, `initialize` or
//! another session out; instead a session has at most
//! [`STREAMS_PER_SESSION`] streams, and all together at most
//! [`MAX_STREAMS`]: past that, the oldest stream of the session holding the
//! most is ended for a session holding fewer. A stream, and the mock's
//! entry for its call, end with the call's result, when the client is
//! gone, when the client cancels it, or after the wait. A request id is at
//! most [`MAX_ID_BYTES`]; an answer is taken only from the session whose
//! call asked.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::Mock;
use elicit_core::elicitation::protocol::wire;
use elicit_core::error::rpc_code;
use elicit_http::Request;

/// Bytes of a request id (its JSON text): ids are counters or UUIDs.
pub const MAX_ID_BYTES: usize = 1024;

/// Calls of one session waiting on an answer at once.
pub const STREAMS_PER_SESSION: usize = 8;

/// Calls waiting on an answer at once, every session together.
pub const MAX_STREAMS: usize = 64;

/// Bytes of an `Mcp-Session-Id` (visible ASCII, as the transport says).
const MAX_SESSION_ID_BYTES: usize = 128;

/// How often a waiting stream looks whether its client has gone.
const CLIENT_CHECK: Duration = Duration::from_millis(200);

/// How long one event may wait for a client that does not read: a stream
/// ended (no longer counted) must not hold its connection past that.
const WRITE_TIME: Duration = Duration::from_secs(10);

/// The served mock and the streams of the calls waiting on an answer,
/// changed together under one lock.
struct State {
    mock: Mock,
    streams: Vec<Stream>,
    next: u64,
}

/// A call's event stream, waiting for the client's answer.
struct Stream {
    /// Unique, in the order opened.
    number: u64,
    session: String,
    call: Value,
    /// The elicitation it waits on (our `elicitation/create` id).
    ask: Value,
    tx: Sender<Value>,
}

struct Shared {
    state: Mutex<State>,
    /// The most a call's stream waits for the client's next answer.
    wait: Duration,
    port: u16,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    fn count(&self, session: &str) -> usize {
        self.streams.iter().filter(|s| s.session == session).count()
    }

    /// Ends stream `i` (its thread sees its channel closed) and forgets
    /// the elicitation it waited on.
    fn end(&mut self, i: usize) {
        let stream = self.streams.remove(i);
        self.mock.forget(&stream.ask);
    }

    /// Ends the streams `which` picks.
    fn end_where(&mut self, which: impl Fn(&Stream) -> bool) {
        while let Some(i) = self.streams.iter().position(&which) {
            self.end(i);
        }
    }

    /// With every stream taken, ends the oldest stream of the session
    /// holding the most, when that is more than `session` holds.
    fn make_room(&mut self, session: &str) -> bool {
        let mine = self.count(session);
        let most = self
            .streams
            .iter()
            .map(|s| (self.count(&s.session), std::cmp::Reverse(s.number)))
            .max()
            .filter(|(n, _)| *n > mine);
        let Some((_, std::cmp::Reverse(number))) = most else {
            return false;
        };
        self.end_where(|s| s.number == number);
        true
    }

    /// Why a new stream for `call` of `session` is refused (a JSON-RPC
    /// code and message), if it is.
    fn refusal(&mut self, session: &str, call: &Value) -> Option<(i64, String)> {
        let taken = |s: &Stream| s.session == session && &s.call == call;
        if self.streams.iter().any(taken) {
            let why = format!("a call with id {call} still waits for an answer");
            return Some((rpc_code::INVALID_REQUEST, why));
        }
        let why = if self.count(session) >= STREAMS_PER_SESSION {
            format!("{STREAMS_PER_SESSION} calls of this session already wait for an answer")
        } else if self.streams.len() >= MAX_STREAMS && !self.make_room(session) {
            format!("{MAX_STREAMS} calls already wait for an answer")
        } else {
            return None;
        };
        Some((wire::TOO_MANY_IN_FLIGHT, why))
    }
}

/// Serves `mock` on `127.0.0.1:port` (0: any free port) on threads of its
/// own; returns the address. `wait` bounds how long a call waits for an
/// answer.
pub fn serve(mock: Mock, port: u16, wait: Duration) -> std::io::Result<SocketAddr> {
    start(mock, port, wait).map(|(addr, _)| addr)
}

fn start(mock: Mock, port: u16, wait: Duration) -> std::io::Result<(SocketAddr, Arc<Shared>)> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            mock,
            streams: Vec::new(),
            next: 0,
        }),
        wait,
        port: addr.port(),
    });
    let served = shared.clone();
    elicit_http::serve(listener, move |req| handle(&served, req))?;
    Ok((addr, shared))
}

fn plain(req: Request, status: &str, text: &str) {
    let body = format!("{text}\n");
    req.respond(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}

/// One JSON reply; `session`: the `Mcp-Session-Id` it gives.
fn json_reply(req: Request, status: &str, body: &Value, session: Option<&str>) {
    let text = body.to_string();
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    req.respond(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{session}Connection: close\r\n\r\n{text}",
            text.len()
        )
        .as_bytes(),
    );
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Whether a browser's `Origin`, when there is one, is this server's own.
fn same_origin(req: &Request, port: u16) -> bool {
    req.header("Origin").is_none_or(|o| {
        o == format!("http://127.0.0.1:{port}") || o == format!("http://localhost:{port}")
    })
}

/// The request's session: its `Mcp-Session-Id`, `""` without one; `None`
/// when the header is not a session id.
fn session_of(req: &Request) -> Option<String> {
    match req.header("Mcp-Session-Id") {
        None => Some(String::new()),
        Some(s)
            if !s.is_empty()
                && s.len() <= MAX_SESSION_ID_BYTES
                && s.bytes().all(|b| (0x21..=0x7e).contains(&b)) =>
        {
            Some(s.to_string())
        }
        Some(_) => None,
    }
}

/// Whether `id` is a request id elicit takes: a string or a number, at
/// most [`MAX_ID_BYTES`] as JSON.
fn fair_id(id: &Value) -> bool {
    (id.is_string() || id.is_number()) && id.to_string().len() <= MAX_ID_BYTES
}

/// The one JSON-RPC message of a `POST`, or the response refusing it.
fn message(req: &mut Request) -> Result<Value, (&'static str, String)> {
    let length = match req.body_length() {
        Some(n) if n <= wire::MAX_MESSAGE_BYTES => n,
        Some(_) => {
            return Err((
                "413 Content Too Large",
                "refused: over the message limit".into(),
            ))
        }
        None => return Err(("411 Length Required", "a Content-Length is required".into())),
    };
    let Ok(body) = req.read_body(length) else {
        return Err(("400 Bad Request", "the body did not arrive".into()));
    };
    match elicit_session::transport::message_limits::parse_bytes(&body) {
        Ok(m) if m.is_object() => Ok(m),
        Ok(_) => Err(("400 Bad Request", "one JSON-RPC message, an object".into())),
        Err(e) => Err(("400 Bad Request", format!("not a JSON-RPC message: {e}"))),
    }
}

fn handle(shared: &Shared, mut req: Request) {
    let path = req.url().split('?').next().unwrap_or("").to_string();
    if path != "/mcp" {
        return plain(req, "404 Not Found", "elicit mock serves /mcp");
    }
    if !same_origin(&req, shared.port) {
        return plain(req, "403 Forbidden", "refused: another origin");
    }
    let Some(session) = session_of(&req) else {
        return plain(
            req,
            "400 Bad Request",
            "refused: not a session id (Mcp-Session-Id)",
        );
    };
    match req.method() {
        "POST" => {}
        "DELETE" => {
            if !session.is_empty() {
                shared.lock().end_where(|s| s.session == session);
            }
            return plain(req, "200 OK", "session ended");
        }
        _ => return plain(req, "405 Method Not Allowed", "POST a JSON-RPC message"),
    }
    let msg = match message(&mut req) {
        Ok(m) => m,
        Err((status, text)) => return plain(req, status, &text),
    };
    let method = msg.get("method").and_then(Value::as_str);
    match msg.get("id") {
        Some(id) if !fair_id(id) => {
            let why = format!(
                "refused: a request id is a string or a number of at most {MAX_ID_BYTES} bytes"
            );
            let error = rpc_error(&Value::Null, rpc_code::INVALID_REQUEST, &why);
            json_reply(req, "400 Bad Request", &error, None)
        }
        Some(id) if method.is_some() => {
            let initialize = method == Some("initialize");
            call(shared, req, &session, &msg, id.clone(), initialize)
        }
        _ => answered(shared, &session, req, &msg),
    }
}

/// A request from the client: one JSON reply, or for a call that elicits,
/// an event stream until its result.
fn call(shared: &Shared, req: Request, session: &str, msg: &Value, id: Value, initialize: bool) {
    let done = |m: &Value| m.get("id") == Some(&id) && m.get("method").is_none();
    let mut state = shared.lock();
    let outs = state.mock.handle(msg);
    let asks = |m: &Value| m.get("method").is_some().then(|| m["id"].clone());
    let Some(ask) = outs.iter().rev().find_map(|o| asks(&o.message)) else {
        drop(state);
        let reply = outs.into_iter().map(|o| o.message).find(done);
        let session = initialize.then(|| uuid::Uuid::new_v4().simple().to_string());
        return json_reply(
            req,
            "200 OK",
            &reply.unwrap_or(Value::Null),
            session.as_deref(),
        );
    };
    if let Some((code, why)) = state.refusal(session, &id) {
        state.mock.forget(&ask);
        drop(state);
        let error = rpc_error(&id, code, &format!("elicit mock: {why}"));
        return json_reply(req, "200 OK", &error, None);
    }
    let (tx, rx) = channel();
    state.next += 1;
    let number = state.next;
    state.streams.push(Stream {
        number,
        session: session.to_string(),
        call: id.clone(),
        ask,
        tx,
    });
    drop(state);
    req.hold();
    let messages: Vec<Value> = outs.into_iter().map(|o| o.message).collect();
    stream(shared, &req, &messages, &rx, &done);
    let mut state = shared.lock();
    if let Some(i) = state.streams.iter().position(|s| s.number == number) {
        state.end(i);
    }
    drop(state);
    req.respond(b"");
}

/// Writes the event stream of a call: `first`, then what `rx` brings until
/// the call's result, the client is gone, the stream is ended (`rx`
/// closed) or the wait is over.
fn stream(
    shared: &Shared,
    req: &Request,
    first: &[Value],
    rx: &Receiver<Value>,
    done: &dyn Fn(&Value) -> bool,
) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    let stream = req.stream();
    if stream.set_write_timeout(Some(WRITE_TIME)).is_err() {
        return;
    }
    if { stream }.write_all(head.as_bytes()).is_err() || !first.iter().all(|m| event(stream, m)) {
        return;
    }
    let deadline = Instant::now() + shared.wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        match rx.recv_timeout(left.min(CLIENT_CHECK)) {
            Ok(m) if !event(stream, &m) || done(&m) => return,
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) if gone(stream) => return,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Whether the client closed the connection (what it sent meanwhile is
/// read and dropped: nothing more is taken on it).
fn gone(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut sink = [0u8; 4096];
    let gone = match { stream }.read(&mut sink) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    };
    gone || stream.set_nonblocking(false).is_err()
}

/// Writes one server-sent event; false when the client is gone.
fn event(stream: &TcpStream, m: &Value) -> bool {
    let mut stream = stream;
    stream
        .write_all(format!("event: message\ndata: {m}\n\n").as_bytes())
        .and_then(|()| stream.flush())
        .is_ok()
}

/// A response or notification from the client; 202. An answer goes to
/// the mock only from the session whose call waits on it, and what it
/// makes the mock send goes to that call's stream; a cancelled call's
/// stream ends.
fn answered(shared: &Shared, session: &str, req: Request, msg: &Value) {
    let mut state = shared.lock();
    if msg.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
        if let Some(call) = msg.get("params").and_then(|p| p.get("requestId")) {
            state.end_where(|s| s.session == session && &s.call == call);
        }
    } else if let Some(id) = msg.get("id").filter(|_| msg.get("method").is_none()) {
        let waiting = state
            .streams
            .iter()
            .position(|s| s.session == session && &s.ask == id);
        if let Some(i) = waiting {
            let outs = state.mock.handle(msg);
            forward(&mut state, i, outs.into_iter().map(|o| o.message));
        }
    }
    drop(state);
    req.respond(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

/// Sends `messages` to stream `i`: its next elicitation, which it then
/// waits on, or its result, which ends it.
fn forward(state: &mut State, i: usize, messages: impl Iterator<Item = Value>) {
    let mut ended = false;
    for m in messages {
        let stream = &mut state.streams[i];
        if m.get("method").is_some() {
            stream.ask = m["id"].clone();
        } else if m.get("id") == Some(&stream.call) {
            ended = true;
        }
        let _ = stream.tx.send(m);
    }
    if ended {
        // The mock holds nothing more for the call: the entry just goes.
        state.streams.remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cassette;

    fn mock() -> Mock {
        let c = Cassette::from_value(&json!({
            "elicit": "cassette/1",
            "server": {"command": ["x"]},
            "tool": "ask",
            "arguments": {},
            "elicitations": [{"request": {"message": "Name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}}},
                "answer": {"action": "accept", "content": {"name": "Ada"}}}],
            "result": {"content": [{"type": "text", "text": "hi Ada"}]}
        }))
        .unwrap();
        Mock::new(vec![c], false)
    }

    fn post(port: u16, session: Option<&str>, body: &Value) -> TcpStream {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let body = body.to_string();
        let session = session
            .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: x\r\n{session}Content-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(format!("{head}{body}").as_bytes()).unwrap();
        s
    }

    /// A whole (short) response.
    fn exchange(port: u16, session: Option<&str>, body: &Value) -> String {
        let mut out = String::new();
        let _ = post(port, session, body).read_to_string(&mut out);
        out
    }

    /// A call's stream, and the first event it sent (`Null` when the call
    /// got a plain reply instead, `reply` then holds it).
    fn open_call(port: u16, session: Option<&str>, id: &Value) -> (TcpStream, Value, String) {
        let call =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "ask"}});
        let mut s = post(port, session, &call);
        let mut got = Vec::new();
        let mut chunk = [0u8; 4096];
        let event = loop {
            let text = String::from_utf8_lossy(&got).to_string();
            if let Some(data) = text.split("data: ").nth(1).filter(|d| d.contains("\n\n")) {
                break serde_json::from_str(data.split("\n\n").next().unwrap()).unwrap();
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return (s, Value::Null, text),
                Ok(n) => got.extend_from_slice(&chunk[..n]),
            }
        };
        (s, event, String::new())
    }

    /// Waits (boundedly) until `what` holds of the state.
    fn until(shared: &Shared, what: impl Fn(&State) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if what(&shared.lock()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// A call its client leaves (the connection closed after the first
    /// elicitation), cancels, or that waits past its time, leaves nothing behind:
    /// neither its stream nor the mock's entry for it. An id past the
    /// bound is refused before anything is kept.
    #[test]
    fn an_abandoned_call_frees_its_stream_and_entry() {
        let (addr, shared) = start(mock(), 0, Duration::from_secs(120)).unwrap();
        // Each in a session of its own: a session's limit does not end them.
        for n in 0..20 {
            let session = format!("s{n}");
            let (s, event, reply) = open_call(addr.port(), Some(&session), &json!(n));
            assert_eq!(event["method"], "elicitation/create", "{reply}");
            drop(s);
        }
        let freed = until(&shared, |s| s.streams.is_empty() && s.mock.waiting() == 0);
        let state = shared.lock();
        let left = (state.streams.len(), state.mock.waiting());
        assert!(freed, "streams and entries left: {left:?}");
        drop(state);

        let long = json!("x".repeat(MAX_ID_BYTES + 1));
        let (_s, event, reply) = open_call(addr.port(), None, &long);
        assert_eq!(event, Value::Null);
        assert!(reply.starts_with("HTTP/1.1 400"), "{reply}");
        assert!(reply.contains("at most 1024 bytes"), "{reply}");
        assert_eq!(shared.lock().mock.waiting(), 0);

        let (_kept, event, _) = open_call(addr.port(), Some("c"), &json!(7));
        assert_eq!(event["method"], "elicitation/create");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
        assert!(exchange(addr.port(), Some("c"), &cancel).starts_with("HTTP/1.1 202"));
        let freed = until(&shared, |s| s.streams.is_empty() && s.mock.waiting() == 0);
        assert!(freed, "a cancelled call left its entry");

        let (addr, shared) = start(mock(), 0, Duration::from_millis(300)).unwrap();
        let (_held, event, _) = open_call(addr.port(), None, &json!(1));
        assert_eq!(event["method"], "elicitation/create");
        let freed = until(&shared, |s| s.streams.is_empty() && s.mock.waiting() == 0);
        assert!(freed, "a call past its wait left its entry");
    }

    /// Streams waiting on answers never keep others out: one client
    /// without a session holds at most [`STREAMS_PER_SESSION`]; with every
    /// stream taken by other sessions, a new client's `initialize`, call and
    /// answer are still served (an attacker's stream is ended for its
    /// call), and an answer from another session is not taken.
    #[test]
    fn a_client_is_served_while_others_hold_every_stream() {
        let (addr, shared) = start(mock(), 0, Duration::from_secs(120)).unwrap();
        let port = addr.port();
        let mut held = Vec::new();
        for n in 0..STREAMS_PER_SESSION {
            let (s, event, reply) = open_call(port, None, &json!(n));
            assert_eq!(event["method"], "elicitation/create", "{reply}");
            held.push(s);
        }
        let (_s, event, reply) = open_call(port, None, &json!("one more"));
        assert_eq!(event, Value::Null);
        assert!(
            reply.contains("8 calls of this session already wait"),
            "{reply}"
        );
        for n in STREAMS_PER_SESSION..MAX_STREAMS {
            let session = format!("attacker-{}", n / STREAMS_PER_SESSION);
            let (s, event, reply) = open_call(port, Some(&session), &json!(n));
            assert_eq!(event["method"], "elicitation/create", "{reply}");
            held.push(s);
        }
        assert_eq!(shared.lock().streams.len(), MAX_STREAMS);

        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
        let reply = exchange(port, None, &init);
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        let session = reply
            .lines()
            .find_map(|l| l.strip_prefix("Mcp-Session-Id: "))
            .expect("a session id")
            .to_string();
        let (mut stream, ask, reply) = open_call(port, Some(&session), &json!(1));
        assert_eq!(ask["method"], "elicitation/create", "{reply}");
        assert_eq!(shared.lock().streams.len(), MAX_STREAMS);

        let answer = |name: &str| json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": name}}});
        let stolen = exchange(port, Some("attacker-1"), &answer("Eve"));
        assert!(stolen.starts_with("HTTP/1.1 202"), "{stolen}");
        let taken = exchange(port, Some(&session), &answer("Ada"));
        assert!(taken.starts_with("HTTP/1.1 202"), "{taken}");
        let mut rest = String::new();
        let _ = stream.read_to_string(&mut rest);
        let result = rest.split("data: ").nth(1).expect("the result event");
        let result: Value = serde_json::from_str(result.trim()).unwrap();
        assert_eq!(
            result,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi Ada"}]}})
        );
        drop(held);
    }
}
