//! The remote relay over an in-memory transport and in-memory client pipes.

use std::io::{Read, Write};
use std::sync::atomic::AtomicI32;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use super::*;
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::resolve::{NoTerminal, Resolver};
use elicit_session::transport::memory::{pair, MemoryServer};

const WAIT: Duration = Duration::from_secs(10);

/// The client's stdin: lines sent on a channel; EOF when it is dropped.
struct ClientIn {
    lines: Receiver<Vec<u8>>,
    left: Vec<u8>,
}

impl Read for ClientIn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left.is_empty() {
            match self.lines.recv() {
                Ok(l) => self.left = l,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.left.len());
        buf[..n].copy_from_slice(&self.left[..n]);
        self.left.drain(..n);
        Ok(n)
    }
}

/// The client's stdout: each write on a channel.
struct ClientOut(Sender<Vec<u8>>);

impl Write for ClientOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.send(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Session {
    server: MemoryServer,
    client: Option<Sender<Vec<u8>>>,
    out: Receiver<Vec<u8>>,
    pending_out: Vec<u8>,
    /// Set to a signal number to "deliver" it.
    signal: Arc<AtomicI32>,
    exit: Receiver<i32>,
}

impl Session {
    fn start(options: RemoteProxyOptions, person: Box<dyn Resolver + Send>) -> Session {
        let (transport, server) = pair();
        let (client, lines) = mpsc::channel();
        let (out_tx, out) = mpsc::channel();
        let signal = Arc::new(AtomicI32::new(0));
        let (exit_tx, exit) = mpsc::channel();
        let sig = signal.clone();
        std::thread::spawn(move || {
            let scripted =
                ScriptedAnswers::parse(["name=Ada"], |_| Err(std::io::Error::other("no files")))
                    .unwrap();
            let signalled = move || match sig.load(Ordering::SeqCst) {
                0 => None,
                s => Some((128 + s, "SIGTERM")),
            };
            let parties = Parties {
                scripted,
                person,
                client_in: Box::new(ClientIn {
                    lines,
                    left: Vec::new(),
                }),
                client_out: Box::new(ClientOut(out_tx)),
            };
            let code = relay(Box::new(transport), options, parties, &signalled);
            let _ = exit_tx.send(code);
        });
        Session {
            server,
            client: Some(client),
            out,
            pending_out: Vec::new(),
            signal,
            exit,
        }
    }

    fn send(&self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.client.as_ref().unwrap().send(line).unwrap();
    }

    /// The next line the client gets.
    fn reply(&mut self, within: Duration) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(nl) = self.pending_out.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending_out.drain(..=nl).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            self.pending_out
                .extend(self.out.recv_timeout(left).ok()?.iter());
        }
    }

    fn hang_up(&mut self) {
        self.client = None;
    }
}

fn nobody() -> Box<dyn Resolver + Send> {
    Box::new(NoTerminal {
        detail: "no terminal".into(),
    })
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

#[test]
fn messages_pass_both_ways_and_initialize_declares_elicitation() {
    let mut s = Session::start(RemoteProxyOptions::default(), nobody());
    s.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}),
    );
    let got = s
        .server
        .receive(WAIT)
        .expect("initialize reaches the server");
    assert_eq!(
        got["params"]["capabilities"]["elicitation"],
        json!({"form": {}, "url": {}})
    );
    s.server
        .send(json!({"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "mem"}}}));
    assert_eq!(
        s.reply(WAIT).unwrap()["result"]["serverInfo"]["name"],
        "mem"
    );
    // An elicitation is answered by elicit, not relayed.
    s.server.send(
        json!({"jsonrpc": "2.0", "id": "q", "method": "elicitation/create",
        "params": {"message": "Name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}}}}),
    );
    let answer = s.server.receive(WAIT).expect("an answer");
    assert_eq!(answer["result"]["content"]["name"], "Ada");
    // Many round trips, in order.
    for id in 1..=50 {
        s.send(ping(id));
        let got = s.server.receive(WAIT).unwrap();
        assert_eq!(got["id"], id);
        s.server
            .send(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
        assert_eq!(s.reply(WAIT).unwrap()["id"], id);
    }
    assert!(s.out.try_recv().is_err());
    s.hang_up();
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(0));
    assert!(s.server.was_closed(), "the session was ended");
}

#[test]
fn requests_past_the_in_flight_bound_get_an_error_at_once() {
    let options = RemoteProxyOptions {
        max_in_flight: 3,
        ..RemoteProxyOptions::default()
    };
    let mut s = Session::start(options, nobody());
    for id in 1..=5 {
        s.send(ping(id));
    }
    for id in [4, 5] {
        let r = s.reply(WAIT).expect("an error reply");
        assert_eq!(r["id"], id);
        assert_eq!(r["error"]["code"], TOO_MANY_IN_FLIGHT);
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("3 requests already wait"));
    }
    for id in 1..=3 {
        assert_eq!(s.server.receive(WAIT).unwrap()["id"], id);
    }
    // An answer frees a slot.
    s.server
        .send(json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(s.reply(WAIT).unwrap()["id"], 2);
    s.send(ping(6));
    assert_eq!(s.server.receive(WAIT).unwrap()["id"], 6);
    // Notifications are never refused.
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/x"}));
    assert_eq!(s.server.receive(WAIT).unwrap()["method"], "notifications/x");
    s.hang_up();
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(0));
}

#[test]
fn a_request_the_server_does_not_answer_times_out_and_its_late_reply_is_dropped() {
    let options = RemoteProxyOptions {
        request_timeout: Duration::from_millis(200),
        max_in_flight: 1,
        ..RemoteProxyOptions::default()
    };
    let mut s = Session::start(options, nobody());
    s.send(
        json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "t"}}),
    );
    s.server.receive(WAIT).unwrap();
    let started = Instant::now();
    let r = s.reply(WAIT).expect("a timeout error");
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(r["id"], "slow");
    assert_eq!(r["error"]["code"], REQUEST_TIMED_OUT);
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("did not answer tools/call within 200ms"),
        "{message}"
    );
    // Its slot is held until the server is done with it...
    s.send(ping(2));
    assert_eq!(s.reply(WAIT).unwrap()["error"]["code"], TOO_MANY_IN_FLIGHT);
    // ...and the late reply is not relayed. The slot frees when the relay
    // has taken the late reply, which races a ping sent right after it:
    // until then a ping is refused (to the client), never relayed.
    s.server
        .send(json!({"jsonrpc": "2.0", "id": "slow", "result": {}}));
    let deadline = Instant::now() + WAIT;
    loop {
        s.send(ping(3));
        if let Some(m) = s.server.receive(Duration::from_millis(100)) {
            assert_eq!(m["id"], 3);
            break;
        }
        let refused = s.reply(WAIT).expect("a refusal while the slot is held");
        assert_eq!(refused["error"]["code"], TOO_MANY_IN_FLIGHT, "{refused}");
        assert!(Instant::now() < deadline, "the slot was never freed");
    }
    s.server
        .send(json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    assert_eq!(s.reply(WAIT).unwrap()["id"], 3);
    s.hang_up();
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(0));
}

#[test]
fn a_send_that_never_completes_does_not_stop_the_client_hanging_up() {
    let mut s = Session::start(RemoteProxyOptions::default(), nobody());
    s.server.stall_sends(true);
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(ping(1));
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    s.hang_up();
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(0));
    assert!(started.elapsed() < END_WAIT + Duration::from_secs(1));
    s.server.stall_sends(false);
}

#[test]
fn a_send_that_never_completes_does_not_stop_a_signal() {
    let s = Session::start(RemoteProxyOptions::default(), nobody());
    s.server.stall_sends(true);
    s.send(ping(1));
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    s.signal.store(
        elicit_platform::Signal::Terminate.number(),
        Ordering::SeqCst,
    );
    assert_eq!(
        s.exit.recv_timeout(WAIT),
        Ok(elicit_platform::Signal::Terminate.exit_code())
    );
    assert!(started.elapsed() < END_WAIT + Duration::from_secs(1));
    s.server.stall_sends(false);
}

#[test]
fn a_client_hang_up_while_a_prompt_is_up_answers_cancel_and_ends() {
    let (person, asked, _release) = super::super::tests::slow_person();
    let mut s = Session::start(RemoteProxyOptions::default(), person);
    s.server.send(
        json!({"jsonrpc": "2.0", "id": "q-5", "method": "elicitation/create",
        "params": {"message": "Age?", "requestedSchema": {"type": "object",
            "properties": {"age": {"type": "integer"}}, "required": ["age"]}}}),
    );
    asked.recv_timeout(WAIT).expect("the person is asked");
    s.hang_up();
    let cancel = s.server.receive(WAIT).expect("a cancel");
    assert_eq!(
        cancel,
        json!({"jsonrpc": "2.0", "id": "q-5", "result": {"action": "cancel"}})
    );
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(0));
}

#[test]
fn the_server_going_away_ends_the_run_after_what_it_sent() {
    let mut s = Session::start(RemoteProxyOptions::default(), nobody());
    s.server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}));
    s.server.hang_up();
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(1));
    assert_eq!(s.reply(WAIT).unwrap()["method"], "notifications/message");
}

/// A task elicit runs for a client (a tool that runs only as a task,
/// called without `task`) is cancelled when the proxy ends on a signal.
#[test]
fn a_task_elicit_runs_for_the_client_is_cancelled_when_the_proxy_ends() {
    let mut s = Session::start(RemoteProxyOptions::default(), nobody());
    s.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}));
    s.server.receive(WAIT).expect("initialize");
    s.server.send(json!({"jsonrpc": "2.0", "id": 0, "result": {
        "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}}}));
    s.reply(WAIT).expect("the handshake's reply");
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    s.server.receive(WAIT).expect("tools/list");
    s.server
        .send(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "research", "execution": {"taskSupport": "required"}}]}}));
    s.reply(WAIT).expect("the list");
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "research", "arguments": {}}}));
    let call = s.server.receive(WAIT).expect("the call");
    assert!(call["params"]["task"].is_object(), "{call}");
    s.server.send(json!({"jsonrpc": "2.0", "id": 2, "result": {
        "task": {"taskId": "t-7", "status": "working"}}}));
    let wait = s.server.receive(WAIT).expect("tasks/result");
    assert_eq!(wait["method"], "tasks/result");
    s.signal.store(
        elicit_platform::Signal::Terminate.number(),
        Ordering::SeqCst,
    );
    let cancel = s.server.receive(WAIT).expect("tasks/cancel");
    assert_eq!(cancel["method"], "tasks/cancel");
    assert_eq!(cancel["params"]["taskId"], "t-7");
    assert_eq!(
        s.exit.recv_timeout(WAIT),
        Ok(elicit_platform::Signal::Terminate.exit_code())
    );
}

/// Slots are held by the id as the wire has it: a request under an id that
/// is no id takes none (no reply could free it), and a reply under `"1"`
/// does not free the slot of the request `1`.
#[test]
fn in_flight_slots_are_held_by_typed_ids() {
    let options = RemoteProxyOptions {
        max_in_flight: 1,
        ..RemoteProxyOptions::default()
    };
    let mut s = Session::start(options, nobody());
    s.send(json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}));
    assert_eq!(s.server.receive(WAIT).unwrap()["id"], json!({"a": 1}));
    s.send(ping(1));
    assert_eq!(s.server.receive(WAIT).unwrap()["id"], 1);
    s.server
        .send(json!({"jsonrpc": "2.0", "id": "1", "result": {}}));
    assert_eq!(s.reply(WAIT).unwrap()["id"], "1");
    s.send(ping(2));
    assert_eq!(s.reply(WAIT).unwrap()["error"]["code"], TOO_MANY_IN_FLIGHT);
    s.server
        .send(json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(s.reply(WAIT).unwrap()["id"], 1);
    s.send(ping(3));
    assert_eq!(s.server.receive(WAIT).unwrap()["id"], 3);
    s.hang_up();
    assert_eq!(s.exit.recv_timeout(WAIT), Ok(0));
}
