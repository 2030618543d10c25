//! `elicit proxy URL`: a client on stdio talks to a remote server through
//! elicit, message by message over the [`Transport`] seam (like the npm
//! `mcp-remote` bridge), with elicitations answered by the relay core
//! (`super::Relay`) exactly as for a stdio server.
//!
//! Byte-exact relay is not possible across transports (HTTP carries JSON
//! bodies, not lines), so messages are parsed and re-serialised: their
//! order and content (as JSON values) are kept.
//!
//! Threads, and why no lock is ever held across a wait on the server:
//!
//! - the server thread owns the transport: it sends what the others queue
//!   for it (woken at once through [`Transport::waker`]) and waits for the
//!   server in between; a send that blocks (a server that never answers a
//!   POST) stalls only this thread;
//! - the client reader parses the client's lines, refuses requests past
//!   [`MAX_IN_FLIGHT`], and queues the rest for the server thread;
//! - the core's resolver answers elicitations, one at a time;
//! - this thread watches: the client hanging up, signals, the server going
//!   away, and requests the server has not answered in time
//!   (`--request-timeout`). It never waits on the server, nor on the
//!   client's pipe (it only tries its lock), so it ends the run at once
//!   whatever the server does.
//!
//! What goes to the client is written whole, message by message, under the
//! lock of the client's stdout (held for that write only): no thread hop on
//! the way back, which is most of a round trip's cost on a busy machine.
//!
//! Signals, as for a stdio server: Ctrl-C at a prompt cancels that
//! elicitation only, decided when it arrives ([`elicit_platform::handlers`]); a Ctrl-C with
//! no prompt up (or with no terminal) ends the session (DELETE) and elicit
//! exits 130, as a stdio server stopped by it would end the proxy. SIGTERM
//! and SIGHUP end the session the same way (exit 128 + the signal), with
//! the terminal put back if a prompt was up.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::envelope::{Message, RequestId};
use super::{Parties, Relay, Sides, Taken};
use elicit_core::error::{rpc_code, ElicitError};
use elicit_platform::Signal;
use elicit_session::transport::{Incoming, Transport, Waker};

/// The longest line read from the client.
const MAX_LINE: u64 = 64 * 1024 * 1024;
/// How many of the client's requests may wait for the server at once. Each
/// holds a connection (and, over Streamable HTTP, a thread) until the server
/// answers or the transport gives up on it; one past the limit is answered
/// at once with [`TOO_MANY_IN_FLIGHT`].
pub const MAX_IN_FLIGHT: usize = 64;
/// How long a request may wait for the server's reply by default (the time
/// a person spends answering its elicitations does not count).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// The JSON-RPC error for a request the server did not answer in time (the
/// code the MCP SDKs use for a request timeout).
pub use elicit_core::elicitation::protocol::wire::REQUEST_TIMED_OUT;
/// The JSON-RPC error for a request refused because [`MAX_IN_FLIGHT`]
/// requests already wait for the server (a server error, JSON-RPC 2.0 §5.1).
pub use elicit_core::elicitation::protocol::wire::TOO_MANY_IN_FLIGHT;
/// How often the watching thread looks at signals and timeouts.
const TICK: Duration = Duration::from_millis(50);
/// How long the server thread waits for the server between sends; with a
/// waker a send ends the wait at once, without one this is the latency.
const SLICE_WOKEN: Duration = Duration::from_millis(500);
const SLICE_UNWOKEN: Duration = Duration::from_millis(20);
/// How long ending the session (and delivering what is queued for the
/// client) may take before elicit exits regardless.
const END_WAIT: Duration = Duration::from_secs(2);

/// Settings of a remote relay.
pub struct RemoteProxyOptions {
    /// See [`MAX_IN_FLIGHT`].
    pub max_in_flight: usize,
    /// See [`REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// `--log`: every message to and from the server, with who sent it
    /// (`by`) or got it (`to`): `client` or `elicit`, as the stdio proxy
    /// writes. Kept here, not in the transport, which cannot tell.
    pub log: Option<elicit_session::transport::MessageLog>,
    /// What both proxies share: the relay core's options.
    pub relay: super::RelayOptions,
}

impl Default for RemoteProxyOptions {
    fn default() -> Self {
        RemoteProxyOptions {
            max_in_flight: MAX_IN_FLIGHT,
            request_timeout: REQUEST_TIMEOUT,
            log: None,
            relay: super::RelayOptions::default(),
        }
    }
}

/// What the server thread is handed.
enum Outgoing {
    /// A message for the server; `for_client`: the id of the client
    /// request it is or stands for (answered with an error if it cannot be
    /// sent).
    Message {
        message: Value,
        for_client: Option<RequestId>,
    },
    /// End the session and stop.
    Close,
}

/// A request sent to the server and not answered yet.
struct Flight {
    /// The client's id, for an error reply.
    client_id: RequestId,
    method: String,
    started: Instant,
    /// [`Relay::resolving_time`] when it started (filled in by the first
    /// look at the timeouts, a tick later at most).
    resolving_at_start: Option<Duration>,
    /// The client has had its answer (an error: timed out) or does not
    /// want one (it cancelled): a late reply is dropped.
    answered: bool,
}

/// What the watching thread hears of.
enum Event {
    ClientGone,
    ServerClosed,
    /// The server thread ended the session and stopped.
    Closed,
}

/// The remote relay's two sides: queues to the server thread and the
/// client writer, and the requests in flight.
struct Remote {
    outbox: Sender<Outgoing>,
    waker: Mutex<Option<Waker>>,
    /// The client's stdout: one whole message per write, then a flush.
    client_out: Mutex<Box<dyn Write + Send>>,
    /// By the id the server was sent.
    flights: Mutex<HashMap<RequestId, Flight>>,
    max_in_flight: usize,
    request_timeout: Duration,
    log: Option<elicit_session::transport::MessageLog>,
    record: Option<super::Recording>,
}

type RemoteRelay = Relay<Remote>;

impl Remote {
    /// Records a message in `--log`: `dir` relative to the server, `party`
    /// who sent it (`send`) or got it (`recv`).
    fn log(&self, dir: &str, party: &str, message: Result<&Value, &str>) {
        if let Some(log) = &self.log {
            log.record_party(dir, party, message);
        }
    }

    fn queue(&self, message: Value, for_client: Option<RequestId>) {
        let _ = self.outbox.send(Outgoing::Message {
            message,
            for_client,
        });
        self.wake();
    }

    fn wake(&self) {
        let waker = self.waker.lock().ok().and_then(|w| w.clone());
        if let Some(wake) = waker {
            wake();
        }
    }

    fn flights(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Flight>> {
        self.flights.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sides for Remote {
    fn to_server(&self, message: &Value, for_client: Option<&RequestId>) {
        let sent_id = message.get("id").and_then(RequestId::from_value);
        if let (Some(client_id), Some(id)) = (for_client, sent_id) {
            // A retry of ours: in flight for the client's request.
            self.flights().insert(
                id,
                Flight {
                    client_id: client_id.clone(),
                    method: method_of(message).to_string(),
                    started: Instant::now(),
                    resolving_at_start: None,
                    answered: false,
                },
            );
        }
        self.log("send", "elicit", Ok(message));
        self.queue(message.clone(), for_client.cloned());
    }

    fn to_client(&self, message: &Value) {
        if let Some(Ok(mut r)) = self.record.as_ref().map(|r| r.lock()) {
            r.message("recv", message);
        }
        let mut out = self.client_out.lock().unwrap_or_else(|e| e.into_inner());
        write_line(&mut **out, message);
    }

    fn to_client_if(&self, make: &dyn Fn() -> Option<Value>) {
        let mut out = self.client_out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(message) = make() {
            self.log("recv", "client", Ok(&message));
            write_line(&mut **out, &message);
        }
    }
}

/// One message as one line, in one write.
fn write_line(out: &mut dyn Write, message: &Value) {
    let mut line = serde_json::to_vec(message).expect("values serialise");
    line.push(b'\n');
    let _ = out.write_all(&line).and_then(|_| out.flush());
}

fn method_of(message: &Value) -> &str {
    message.get("method").and_then(Value::as_str).unwrap_or("")
}

fn error_reply(id: &RequestId, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Runs the relay until the client hangs up (exit 0), the server is lost
/// (exit 1), or a signal ends it (130 for a Ctrl-C with no prompt up,
/// 128 + the signal for SIGTERM and SIGHUP).
pub fn run_remote_proxy(
    server: Box<dyn Transport>,
    options: RemoteProxyOptions,
    parties: Parties,
) -> Result<i32, ElicitError> {
    elicit_platform::handlers::install_interrupt_handler();
    let terminated = elicit_platform::handlers::termination_flag();
    let ended = move || match Signal::from_number(terminated.load(Ordering::SeqCst) as i32) {
        None => None,
        Some(Signal::HangUp) => Some((Signal::HangUp.exit_code(), "SIGHUP")),
        Some(sig) => Some((sig.exit_code(), "SIGTERM")),
    };
    Ok(relay(server, options, parties, &ended))
}

/// The relay proper; `signalled` says whether a signal ended the run
/// (exit status, what to call it).
fn relay(
    server: Box<dyn Transport>,
    options: RemoteProxyOptions,
    parties: Parties,
    signalled: &dyn Fn() -> Option<(i32, &'static str)>,
) -> i32 {
    let (outbox, outgoing) = mpsc::channel();
    let (events, event_rx) = mpsc::channel();
    let sides = Remote {
        outbox,
        waker: Mutex::new(server.waker()),
        client_out: Mutex::new(parties.client_out),
        flights: Mutex::new(HashMap::new()),
        max_in_flight: options.max_in_flight.max(1),
        request_timeout: options.request_timeout,
        log: options.log,
        record: options.relay.record.clone(),
    };
    let client_in = parties.client_in;
    let core = options.relay.clone();
    let relay = Relay::start(sides, core, parties.scripted, parties.person);
    {
        let relay = relay.clone();
        let events = events.clone();
        std::thread::spawn(move || serve(&relay, server, outgoing, &events));
    }
    {
        let relay = relay.clone();
        let events = events.clone();
        std::thread::spawn(move || {
            read_client(&relay, client_in);
            let _ = events.send(Event::ClientGone);
        });
    }
    let interrupts = elicit_platform::handlers::ctrl_c_for_server();
    loop {
        let event = match event_rx.recv_timeout(TICK) {
            Ok(e) => Some(e),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Event::ServerClosed),
        };
        let end = match event {
            Some(Event::ClientGone) => {
                relay.client_hung_up();
                Some((0, "the client hung up"))
            }
            Some(Event::ServerClosed) | Some(Event::Closed) => {
                eprintln!("elicit proxy: the server closed the connection");
                relay.warn_unused();
                return 1;
            }
            None if elicit_platform::handlers::ctrl_c_for_server() != interrupts => {
                Some((Signal::Interrupt.exit_code(), "Ctrl-C with no prompt up"))
            }
            None => signalled(),
        };
        if let Some((code, why)) = end {
            if code != 0 {
                // A prompt may be up (its thread is abandoned): the terminal
                // goes back to how it was before elicit exits.
                elicit_platform::handlers::restore_terminal_now();
            }
            relay.note(&format!("{why}: ending the session"));
            // Tasks elicit runs for the client stop with the session.
            relay.cancel_runs(why);
            end_session(&relay, &event_rx);
            relay.warn_unused();
            return code;
        }
        time_out_requests(&relay);
    }
}

/// Asks the server thread to end the session (after what is queued), and
/// waits for it at most [`END_WAIT`]: a server that does not answer does
/// not keep elicit running.
fn end_session(relay: &RemoteRelay, events: &Receiver<Event>) {
    let _ = relay.side.outbox.send(Outgoing::Close);
    relay.side.wake();
    let deadline = Instant::now() + END_WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(Event::Closed) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Answers, with [`REQUEST_TIMED_OUT`], the client's requests the server
/// has not answered within the timeout. Their slots stay taken until the
/// transport is done with them (a late reply is dropped).
fn time_out_requests(relay: &RemoteRelay) {
    let timeout = relay.side.request_timeout;
    let resolving = relay.resolving_time();
    let mut late = Vec::new();
    {
        let mut flights = relay.side.flights();
        for f in flights.values_mut().filter(|f| !f.answered) {
            let at_start = *f.resolving_at_start.get_or_insert(resolving);
            let waited = f
                .started
                .elapsed()
                .saturating_sub(resolving.saturating_sub(at_start));
            if waited < timeout {
                continue;
            }
            let reply = error_reply(
                &f.client_id,
                REQUEST_TIMED_OUT,
                format!(
                    "elicit proxy: the server did not answer {} within {} (--request-timeout)",
                    elicit_core::text::sanitize::sanitize_line(&f.method),
                    humantime::format_duration(timeout)
                ),
            );
            // A write to the client under way (a client that does not read):
            // try again on the next tick, never wait here.
            let Ok(mut out) = relay.side.client_out.try_lock() else {
                break;
            };
            write_line(&mut **out, &reply);
            f.answered = true;
            late.push(f.client_id.clone());
        }
    }
    for client_id in late {
        relay.note(&format!(
            "the server did not answer the client's request {} in time: the client got an error",
            super::notes::quote(&client_id.to_string())
        ));
        relay.untrack(&client_id);
    }
}

/// The server thread: sends what is queued, waits for the server in
/// between, and hands what arrives to the core.
fn serve(
    relay: &RemoteRelay,
    mut server: Box<dyn Transport>,
    outgoing: Receiver<Outgoing>,
    events: &Sender<Event>,
) {
    loop {
        loop {
            match outgoing.try_recv() {
                Ok(Outgoing::Message {
                    message,
                    for_client,
                }) => send(relay, server.as_mut(), &message, for_client.as_ref()),
                Ok(Outgoing::Close) | Err(TryRecvError::Disconnected) => {
                    server.close(END_WAIT);
                    let _ = events.send(Event::Closed);
                    return;
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        // A send may change how the transport is reached (a fall-back to
        // the legacy transport), and with it how a wait is ended.
        let waker = server.waker();
        let slice = if waker.is_some() {
            SLICE_WOKEN
        } else {
            SLICE_UNWOKEN
        };
        if let Ok(mut w) = relay.side.waker.lock() {
            *w = waker;
        }
        let ctrl_c = elicit_platform::handlers::interrupt_count();
        match server.receive(Some(slice)) {
            Ok(Incoming::Message(msg)) => from_server(relay, msg),
            Ok(Incoming::TimedOut) => {}
            Ok(Incoming::Malformed { line, error }) => {
                relay.side.log("recv", "elicit", Err(&line));
                eprintln!(
                    "elicit proxy: the server sent something that is not JSON ({error}): {}",
                    elicit_core::text::truncate(
                        &elicit_core::text::sanitize::sanitize_line(&line),
                        200
                    )
                )
            }
            Ok(Incoming::Closed) => {
                let _ = events.send(Event::ServerClosed);
                return;
            }
            // A Ctrl-C ended the wait: whose it was is decided elsewhere.
            Err(_) if elicit_platform::handlers::interrupt_count() != ctrl_c => {}
            // Anything else ends the connection (the event stream broke).
            Err(e) => {
                eprintln!(
                    "elicit proxy: {}",
                    elicit_core::text::sanitize::sanitize_block(&e.to_string())
                );
                let _ = events.send(Event::ServerClosed);
                return;
            }
        }
    }
}

/// Sends one message; a request that cannot be sent is answered to the
/// client with an error (when it came from the client), never dropped.
fn send(
    relay: &RemoteRelay,
    server: &mut dyn Transport,
    message: &Value,
    for_client: Option<&RequestId>,
) {
    let Err(e) = server.send(message) else {
        return;
    };
    eprintln!(
        "elicit proxy: {}",
        elicit_core::text::sanitize::sanitize_block(&e.to_string())
    );
    let Some(client_id) = for_client else {
        return;
    };
    let sent = message.get("id").and_then(RequestId::from_value);
    let answered = sent
        .and_then(|id| relay.side.flights().remove(&id))
        .is_some_and(|f| f.answered);
    relay.untrack(client_id);
    if !answered {
        relay.side.to_client(&error_reply(
            client_id,
            rpc_code::INTERNAL_ERROR,
            e.to_string(),
        ));
    }
}

/// A message from the server: a reply frees its request's slot (and is
/// dropped when the client already had its answer); the core decides the
/// rest.
fn from_server(relay: &RemoteRelay, msg: Value) {
    let message = Message::parse(&msg);
    if let Some(id) = message.reply_to() {
        let flight = relay.side.flights().remove(id);
        if flight.is_some_and(|f| f.answered) {
            relay.note(&format!(
                "dropped the server's late reply to {}: the client had its answer",
                super::notes::quote(&relay.client_id_of(id).to_string())
            ));
            return;
        }
    }
    match relay.server_envelope(&msg, &message) {
        Taken::Withheld => relay.side.log("recv", "elicit", Ok(&msg)),
        Taken::Rewritten(reply) => {
            relay.side.log("recv", "client", Ok(&msg));
            relay.side.to_client(&reply)
        }
        Taken::Relay => {
            relay.side.log("recv", "client", Ok(&msg));
            relay.side.to_client(&msg)
        }
    }
}

fn read_client(relay: &RemoteRelay, client_in: Box<dyn Read + Send>) {
    let mut reader = BufReader::with_capacity(64 * 1024, client_in);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut reader).take(MAX_LINE + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.len() as u64 > MAX_LINE {
            eprintln!("elicit proxy: the client sent a line over {MAX_LINE} bytes; stopping");
            return;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match elicit_session::transport::message_limits::parse(text) {
            Ok(msg) => from_client(relay, msg),
            Err(e) => eprintln!(
                "elicit proxy: the client sent a line that is not JSON ({e}); not relayed"
            ),
        }
    }
}

/// A message from the client: a request takes a slot (or is refused when
/// none is left), the core rewrites it, and it is queued for the server.
fn from_client(relay: &RemoteRelay, mut msg: Value) {
    let (request_id, cancels) = match Message::parse(&msg) {
        Message::Request { id, .. } => (Some(id), false),
        Message::Notification { method, .. } => (
            None,
            method == elicit_core::elicitation::protocol::wire::CANCELLED,
        ),
        _ => (None, false),
    };
    if let Some(id) = &request_id {
        let mut flights = relay.side.flights();
        if !flights.contains_key(id) {
            if flights.len() >= relay.side.max_in_flight {
                drop(flights);
                relay.side.to_client(&error_reply(
                    id,
                    TOO_MANY_IN_FLIGHT,
                    format!(
                        "elicit proxy: {} requests already wait for the server's reply; try again when one is answered",
                        relay.side.max_in_flight
                    ),
                ));
                return;
            }
            flights.insert(
                id.clone(),
                Flight {
                    client_id: id.clone(),
                    method: method_of(&msg).to_string(),
                    started: Instant::now(),
                    resolving_at_start: None,
                    answered: false,
                },
            );
        }
    } else if cancels {
        // The client gave up on a request: a reply is no longer wanted,
        // nor an error when it times out.
        let cancelled = msg
            .pointer("/params/requestId")
            .and_then(RequestId::from_value);
        if let Some(id) = cancelled {
            if let Some(f) = relay.side.flights().get_mut(&id) {
                f.answered = true;
            }
        }
    }
    relay.client_message(&mut msg);
    relay.side.log("send", "client", Ok(&msg));
    if let Some(Ok(mut r)) = relay.side.record.as_ref().map(|r| r.lock()) {
        r.message("send", &msg);
    }
    relay.side.queue(msg, request_id);
}

#[cfg(test)]
#[path = "remote_tests.rs"]
mod tests;
