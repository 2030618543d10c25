//! `elicit mock --http PORT`: Streamable HTTP on 127.0.0.1, over the
//! page's bounded listener (heads, connections, body time). `POST /mcp`
//! takes one JSON-RPC message (at most [`wire::MAX_MESSAGE_BYTES`], checked
//! for values and depth before it is parsed). A handshake `tools/call` that
//! elicits is answered with an event stream: each recorded elicitation as
//! an event, the client's answer `POST`ed back (202), the result as the
//! last event. Everything else is answered with one JSON reply. A request
//! from a web page of another origin gets 403.

use std::collections::HashMap;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Mock;
use elicit_core::elicitation::protocol::wire;
use elicit_http::Request;

/// The served mock, and the event stream of each call in flight (by the
/// call's id as text).
struct Shared {
    mock: Mutex<Mock>,
    streams: Mutex<HashMap<String, Sender<Value>>>,
    /// The most a call's stream waits for the client's next answer.
    wait: Duration,
    port: u16,
}

/// Serves `mock` on `127.0.0.1:port` (0: any free port) on threads of its
/// own; returns the address. `wait` bounds how long a call waits for an
/// answer.
pub fn serve(mock: Mock, port: u16, wait: Duration) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        mock: Mutex::new(mock),
        streams: Mutex::new(HashMap::new()),
        wait,
        port: addr.port(),
    });
    elicit_http::serve(listener, move |req| handle(&shared, req))?;
    Ok(addr)
}

fn key(id: &Value) -> String {
    id.to_string()
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

fn json_reply(req: Request, status: &str, body: &Value, session: bool) {
    let text = body.to_string();
    let session = if session {
        "Mcp-Session-Id: elicit-mock\r\n"
    } else {
        ""
    };
    req.respond(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{session}Connection: close\r\n\r\n{text}",
            text.len()
        )
        .as_bytes(),
    );
}

/// Whether a browser's `Origin`, when there is one, is this server's own.
fn same_origin(req: &Request, port: u16) -> bool {
    req.header("Origin").is_none_or(|o| {
        o == format!("http://127.0.0.1:{port}") || o == format!("http://localhost:{port}")
    })
}

fn handle(shared: &Shared, mut req: Request) {
    let path = req.url().split('?').next().unwrap_or("").to_string();
    if path != "/mcp" {
        return plain(req, "404 Not Found", "elicit mock serves /mcp");
    }
    if !same_origin(&req, shared.port) {
        return plain(req, "403 Forbidden", "refused: another origin");
    }
    match req.method() {
        "POST" => {}
        "DELETE" => return plain(req, "200 OK", "session ended"),
        _ => return plain(req, "405 Method Not Allowed", "POST a JSON-RPC message"),
    }
    let length = match req.body_length() {
        Some(n) if n <= wire::MAX_MESSAGE_BYTES => n,
        Some(_) => {
            return plain(
                req,
                "413 Content Too Large",
                "refused: over the message limit",
            )
        }
        None => return plain(req, "411 Length Required", "a Content-Length is required"),
    };
    let Ok(body) = req.read_body(length) else {
        return plain(req, "400 Bad Request", "the body did not arrive");
    };
    let msg = match crate::transport::message_limits::parse_bytes(&body) {
        Ok(m) if m.is_object() => m,
        Ok(_) => return plain(req, "400 Bad Request", "one JSON-RPC message, an object"),
        Err(e) => {
            return plain(
                req,
                "400 Bad Request",
                &format!("not a JSON-RPC message: {e}"),
            )
        }
    };
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = msg.get("id").cloned();
    let Some(id) = id.filter(|_| method.is_some()) else {
        return answered(shared, req, &msg);
    };
    let (tx, rx) = channel();
    shared
        .streams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key(&id), tx);
    let outs = shared
        .mock
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .handle(&msg);
    let done = |m: &Value| m.get("id") == Some(&id) && m.get("method").is_none();
    if outs.iter().any(|o| done(&o.message)) || outs.is_empty() {
        unregister(shared, &id);
        let reply = outs
            .into_iter()
            .map(|o| o.message)
            .find(done)
            .unwrap_or(Value::Null);
        return json_reply(
            req,
            "200 OK",
            &reply,
            method.as_deref() == Some("initialize"),
        );
    }
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    let stream = req.stream();
    let mut ok = { stream }.write_all(head.as_bytes()).is_ok();
    for o in outs {
        ok = ok && event(stream, &o.message);
    }
    let deadline = Instant::now() + shared.wait;
    while ok {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(m) = rx.recv_timeout(left) else { break };
        ok = event(stream, &m) && !done(&m);
    }
    unregister(shared, &id);
    req.respond(b"");
}

fn unregister(shared: &Shared, id: &Value) {
    shared
        .streams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&key(id));
}

/// Writes one server-sent event; false when the client is gone.
fn event(stream: &std::net::TcpStream, m: &Value) -> bool {
    let mut stream = stream;
    stream
        .write_all(format!("event: message\ndata: {m}\n\n").as_bytes())
        .and_then(|()| stream.flush())
        .is_ok()
}

/// A response or notification from the client: what it makes the mock
/// send goes to the stream of the call it belongs to; 202.
fn answered(shared: &Shared, req: Request, msg: &Value) {
    let outs = shared
        .mock
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .handle(msg);
    let streams = shared.streams.lock().unwrap_or_else(|p| p.into_inner());
    for o in outs {
        if let Some(tx) = o.call.as_ref().and_then(|c| streams.get(&key(c))) {
            let _ = tx.send(o.message);
        }
    }
    drop(streams);
    req.respond(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}
