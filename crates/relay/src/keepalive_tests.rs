//! Keep-alives over the in-memory sides of the core's tests: what the
//! client hears while a person answers, and never after its result.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::super::tests::{core_with_options, slow_person, Core, WAIT};
use super::super::{RelayOptions, Taken};
use elicit_core::elicitation::protocol::wire;

/// Short, so that several keep-alives come within a test.
const INTERVAL: Duration = Duration::from_millis(20);

/// A relay whose person answers only when told (through the sender), a
/// prompt up once the receiver hears.
fn core() -> (Core, Receiver<()>, std::sync::mpsc::Sender<()>) {
    let (person, asked, release) = slow_person();
    let options = RelayOptions {
        keepalive_interval: Some(INTERVAL),
        ..RelayOptions::default()
    };
    (core_with_options(&[], person, options), asked, release)
}

fn call(c: &Core, id: i64, token: Option<&str>) {
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "t", "arguments": {}}});
    if let Some(t) = token {
        msg["params"]["_meta"] = json!({"progressToken": t});
    }
    c.relay.client_message(&mut msg);
}

fn elicitation(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "message": "Your name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}}}})
}

fn progress(token: &str, value: f64) -> Value {
    json!({"jsonrpc": "2.0", "method": wire::PROGRESS,
        "params": {"progressToken": token, "progress": value}})
}

/// The next `n` messages to the client, each a progress notification:
/// their tokens and values.
fn keep_alives(c: &Core, n: usize) -> Vec<(Value, f64)> {
    (0..n)
        .map(|_| {
            let m = c.to_client.recv_timeout(WAIT).expect("a keep-alive");
            assert_eq!(m["method"], wire::PROGRESS, "{m}");
            (
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Nothing reaches the client for several intervals.
fn quiet(c: &Core) {
    if let Ok(m) = c.to_client.recv_timeout(INTERVAL * 8) {
        panic!("the client got {m}");
    }
}

#[test]
fn a_person_answering_keeps_the_call_alive_above_the_servers_progress() {
    let (c, asked, release) = core();
    call(&c, 7, Some("tok"));
    call(&c, 8, None);
    // The server's own progress passes, and sets the floor.
    assert_eq!(
        c.relay.server_message(&progress("tok", 3.0)),
        Taken::Withheld
    );
    assert_eq!(
        c.to_client.recv_timeout(WAIT).unwrap(),
        progress("tok", 3.0)
    );
    quiet(&c);
    assert_eq!(c.relay.server_message(&elicitation("q1")), Taken::Withheld);
    asked.recv_timeout(WAIT).expect("the person is asked");
    let got = keep_alives(&c, 4);
    let mut last = 3.0;
    for (token, value) in &got {
        assert_eq!(token, "tok", "only the call that gave a token: {got:?}");
        assert!(*value > last, "progress must rise: {got:?}");
        assert!(
            *value < 3.001,
            "a keep-alive is no progress of the tool: {got:?}"
        );
        last = *value;
    }
    // A server value that is not above what the client got is withheld.
    assert_eq!(
        c.relay.server_message(&progress("tok", 3.0)),
        Taken::Withheld
    );
    // The person answers: the keep-alives stop.
    release.send(()).unwrap();
    c.to_server.recv_timeout(WAIT).expect("the answer");
    let start = Instant::now();
    while let Ok(m) = c.to_client.recv_timeout(INTERVAL * 8) {
        assert_eq!(m["method"], wire::PROGRESS, "{m}");
        assert_eq!(m["params"]["progressToken"], "tok", "{m}");
        assert!(m["params"]["progress"].as_f64().unwrap() > last, "{m}");
        assert!(start.elapsed() < WAIT, "keep-alives after the answer");
    }
    // The server's next step, above them, reaches the client.
    assert_eq!(
        c.relay.server_message(&progress("tok", 4.0)),
        Taken::Withheld
    );
    assert_eq!(
        c.to_client.recv_timeout(WAIT).unwrap(),
        progress("tok", 4.0)
    );
}

#[test]
fn no_keep_alive_follows_the_calls_result() {
    let (c, asked, release) = core();
    call(&c, 7, Some("tok"));
    c.relay.server_message(&elicitation("q1"));
    asked.recv_timeout(WAIT).expect("the person is asked");
    keep_alives(&c, 1);
    // The result goes out (the side writes it after the core saw it); the
    // person is still answering, but the call is over.
    let result = json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}});
    assert_eq!(c.relay.server_message(&result), Taken::Relay);
    // One decided before the result may be on its way; none after.
    let _ = c.to_client.recv_timeout(INTERVAL * 2);
    quiet(&c);
    // The server's progress for a token elicit no longer follows is the
    // client's business: relayed as it came.
    assert_eq!(c.relay.server_message(&progress("tok", 9.0)), Taken::Relay);
    drop(release);
}

#[test]
fn a_cancelled_call_hears_no_more() {
    let (c, asked, _release) = core();
    call(&c, 7, Some("tok"));
    c.relay.server_message(&elicitation("q1"));
    asked.recv_timeout(WAIT).expect("the person is asked");
    keep_alives(&c, 1);
    let mut cancel = json!({"jsonrpc": "2.0", "method": wire::CANCELLED,
        "params": {"requestId": 7}});
    c.relay.client_message(&mut cancel);
    let _ = c.to_client.recv_timeout(INTERVAL * 2);
    quiet(&c);
}
