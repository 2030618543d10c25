//! The relay core over an in-memory pair of sides: what goes to the server
//! and to the client is recorded on channels.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use serde_json::{json, Value};

use super::envelope::RequestId;
use super::server_side::MAX_PENDING_ELICITATIONS;
use super::*;
use elicit_core::elicitation::protocol::wire::{self, CAPS_META, VERSION_META};
use elicit_core::elicitation::resolve::{Elicitation, NoTerminal, Pending};
use elicit_session::mcp::call::MAX_INPUT_ROUNDS;
use std::sync::Arc;

/// Sides that record what they are given.
pub(crate) struct Recorder {
    server: Sender<Value>,
    client: Sender<Value>,
}

impl Sides for Recorder {
    fn to_server(&self, message: &Value, _for_client: Option<&RequestId>) {
        let _ = self.server.send(message.clone());
    }
    fn to_client(&self, message: &Value) {
        let _ = self.client.send(message.clone());
    }
}

pub(super) struct Core {
    pub(super) relay: Arc<Relay<Recorder>>,
    pub(super) to_server: Receiver<Value>,
    pub(super) to_client: Receiver<Value>,
}

pub(super) const WAIT: Duration = Duration::from_secs(10);

fn core_with(answers: &[&str], person: Box<dyn Resolver + Send>, passthrough: bool) -> Core {
    let options = RelayOptions {
        passthrough_declared: passthrough,
        verbose: false,
        ..RelayOptions::default()
    };
    core_with_options(answers, person, options)
}

pub(super) fn core_with_options(
    answers: &[&str],
    person: Box<dyn Resolver + Send>,
    options: RelayOptions,
) -> Core {
    let (server, to_server) = mpsc::channel();
    let (client, to_client) = mpsc::channel();
    let scripted = ScriptedAnswers::parse(answers, |_| {
        Err(std::io::Error::other("no files in these tests"))
    })
    .expect("answers parse");
    Core {
        relay: Relay::start(Recorder { server, client }, options, scripted, person),
        to_server,
        to_client,
    }
}

pub(super) fn nobody() -> Box<dyn Resolver + Send> {
    Box::new(NoTerminal {
        detail: "no terminal in unit tests".into(),
    })
}

fn core(answers: &[&str]) -> Core {
    core_with(answers, nobody(), false)
}

fn elicitation(id: Value, mode: Option<&str>) -> Value {
    let mut params = json!({"message": "Your name?", "requestedSchema": {
        "type": "object", "properties": {"name": {"type": "string"}}}});
    if let Some(m) = mode {
        params["mode"] = json!(m);
        if m == "url" {
            params = json!({"mode": "url", "message": "Sign in",
                "url": "https://example.com/x", "elicitationId": "e1"});
        }
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params})
}

fn call_2026(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "t", "arguments": {},
        "_meta": {VERSION_META: "2026-07-28"}}})
}

fn input_required(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "input_required",
        "requestState": "s1",
        "inputRequests": {"q": {"method": "elicitation/create", "params": {
            "message": "Name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}}}}}}})
}

#[test]
fn initialize_declares_both_modes_and_remembers_what_the_client_declared() {
    let c = core(&[]);
    let mut msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"capabilities": {"elicitation": {}}}});
    assert!(c.relay.client_message(&mut msg));
    assert_eq!(
        msg["params"]["capabilities"]["elicitation"],
        json!({"form": {}, "url": {}})
    );
    assert_eq!(
        c.relay.lock().client_modes,
        Modes {
            form: true,
            url: false
        }
    );
    // A client that declared both is left alone.
    let mut both = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {"elicitation": {"form": {}, "url": {}}}}});
    let before = both.clone();
    assert!(!c.relay.client_message(&mut both));
    assert_eq!(both, before);
    // Replies and other requests pass unchanged.
    let mut reply = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
    assert!(!c.relay.client_message(&mut reply));
    let mut list = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"});
    assert!(!c.relay.client_message(&mut list));
}

/// What the proxy declares follows the revision the client asked for: URL
/// mode is not declared to a 2025-06-18 server, elicitation not at all to
/// an older one.
#[test]
fn initialize_declares_only_what_the_clients_revision_defines() {
    for (version, expected) in [
        ("2025-06-18", Some(json!({"form": {}}))),
        ("2024-11-05", None),
        ("2025-11-25", Some(json!({"form": {}, "url": {}}))),
        ("2026-07-28", Some(json!({"form": {}, "url": {}}))),
    ] {
        let c = core(&[]);
        let mut msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}}});
        c.relay.client_message(&mut msg);
        assert_eq!(
            msg["params"]["capabilities"].get("elicitation"),
            expected.as_ref(),
            "{version}"
        );
    }
}

#[test]
fn the_server_name_comes_from_the_initialize_reply() {
    let c = core(&[]);
    let mut init = json!({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {}});
    c.relay.client_message(&mut init);
    assert!(c.relay.awaits_reply_in(br#"{"id":"i"}"#));
    let reply = json!({"jsonrpc": "2.0", "id": "i", "result": {"serverInfo": {"name": "weather"}}});
    assert_eq!(c.relay.server_message(&reply), Taken::Relay);
    assert_eq!(c.relay.lock().server_name.as_deref(), Some("weather"));
    assert!(!c.relay.awaits_reply_in(br#"{"id":"i"}"#));
}

#[test]
fn a_server_elicitation_is_withheld_and_answered_to_the_server() {
    let c = core(&["name=Ada"]);
    assert_eq!(
        c.relay.server_message(&elicitation(json!("q-1"), None)),
        Taken::Withheld
    );
    let reply = c.to_server.recv_timeout(WAIT).expect("an answer");
    assert_eq!(reply["id"], "q-1");
    assert_eq!(reply["result"]["action"], "accept");
    assert_eq!(reply["result"]["content"]["name"], "Ada");
    assert!(c.relay.lock().pending.is_empty());
    assert!(c.to_client.try_recv().is_err(), "nothing for the client");
}

#[test]
fn an_elicitation_nobody_can_answer_gets_an_error_reply() {
    let c = core(&[]);
    c.relay.server_message(&elicitation(json!(7), None));
    let reply = c.to_server.recv_timeout(WAIT).expect("a reply");
    assert_eq!(reply["id"], 7);
    assert!(reply["error"]["message"].is_string(), "{reply}");
}

#[test]
fn passthrough_declared_leaves_the_clients_own_modes_to_it() {
    let c = core_with(&["accept"], nobody(), true);
    let mut init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"capabilities": {"elicitation": {"form": {}}}}});
    c.relay.client_message(&mut init);
    assert_eq!(
        c.relay.server_message(&elicitation(json!(1), Some("form"))),
        Taken::Relay
    );
    assert_eq!(
        c.relay.server_message(&elicitation(json!(2), Some("url"))),
        Taken::Withheld
    );
}

#[test]
fn input_required_is_resolved_retried_and_the_final_reply_gets_the_clients_id() {
    let c = core(&["name=Ada"]);
    let mut call = call_2026(json!("c-9"));
    assert!(c.relay.client_message(&mut call), "per-request caps added");
    assert!(call["params"]["_meta"][CAPS_META]["elicitation"]["url"].is_object());
    assert_eq!(
        c.relay.server_message(&input_required("c-9")),
        Taken::Withheld
    );
    let retry = c.to_server.recv_timeout(WAIT).expect("a retry");
    assert_eq!(retry["id"], "elicit-proxy-1");
    assert_eq!(retry["method"], "tools/call");
    assert_eq!(retry["params"]["requestState"], "s1");
    assert_eq!(
        retry["params"]["inputResponses"]["q"]["content"]["name"],
        "Ada"
    );
    assert_eq!(
        c.relay
            .client_id_of(&RequestId::from("elicit-proxy-1".to_string())),
        RequestId::from("c-9".to_string())
    );
    let done = json!({"jsonrpc": "2.0", "id": "elicit-proxy-1", "result": {"content": []}});
    match c.relay.server_message(&done) {
        Taken::Rewritten(v) => {
            assert_eq!(v["id"], "c-9");
            assert_eq!(v["result"], json!({"content": []}));
        }
        other => panic!("{other:?}"),
    }
    let st = c.relay.lock();
    assert!(st.tracked.is_empty() && st.retries.is_empty() && st.rounds.is_empty());
}

#[test]
fn endless_input_required_ends_with_an_error_to_the_client() {
    let c = core(&["name=Ada"]);
    let mut call = call_2026(json!(3));
    c.relay.client_message(&mut call);
    let mut id = "3".to_string();
    for _ in 1..MAX_INPUT_ROUNDS {
        let mut reply = input_required("x");
        reply["id"] = serde_json::from_str(&id).unwrap();
        assert_eq!(c.relay.server_message(&reply), Taken::Withheld);
        let retry = c.to_server.recv_timeout(WAIT).expect("a retry");
        id = retry["id"].to_string();
    }
    let mut reply = input_required("x");
    reply["id"] = serde_json::from_str(&id).unwrap();
    c.relay.server_message(&reply);
    let error = c.to_client.recv_timeout(WAIT).expect("an error");
    assert_eq!(error["id"], 3);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("32 times"), "{message}");
    assert!(c.relay.lock().tracked.is_empty());
}

#[test]
fn input_required_for_an_unknown_request_is_relayed() {
    let c = core(&["name=Ada"]);
    assert_eq!(
        c.relay.server_message(&input_required("nope")),
        Taken::Relay
    );
}

/// A person who takes as long as the test says.
struct SlowPerson {
    asked: Sender<()>,
    release: Receiver<()>,
}

impl Resolver for SlowPerson {
    fn resolve(
        &mut self,
        _: &Elicitation,
        _: Pending,
    ) -> Result<elicit_core::elicitation::contract::Answer, ElicitError> {
        let _ = self.asked.send(());
        let _ = self.release.recv();
        Err(ElicitError::Terminal("the person left".into()))
    }
}

/// A relay whose person is asked (a prompt is up) until `release` is sent.
pub(crate) fn slow_person() -> (Box<dyn Resolver + Send>, Receiver<()>, Sender<()>) {
    let (asked_tx, asked) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let person = SlowPerson {
        asked: asked_tx,
        release: release_rx,
    };
    (Box::new(person), asked, release)
}

use elicit_core::error::ElicitError;

#[test]
fn a_client_hang_up_while_a_prompt_is_up_answers_cancel_once() {
    let (person, asked, release) = slow_person();
    let c = core_with(&[], person, false);
    c.relay.server_message(&elicitation(json!("q-5"), None));
    asked.recv_timeout(WAIT).expect("the person is asked");
    c.relay.client_hung_up();
    let cancel = c.to_server.recv_timeout(WAIT).expect("a cancel");
    assert_eq!(
        cancel,
        json!({"jsonrpc": "2.0", "id": "q-5", "result": {"action": "cancel"}})
    );
    // The person gives up later: nothing more goes to the server.
    release.send(()).unwrap();
    assert!(c
        .to_server
        .recv_timeout(Duration::from_millis(300))
        .is_err());
    // And no more are asked.
    c.relay.server_message(&elicitation(json!("q-6"), None));
    assert!(asked.recv_timeout(Duration::from_millis(300)).is_err());
}

#[test]
fn time_spent_resolving_is_counted() {
    let (person, asked, release) = slow_person();
    let c = core_with(&[], person, false);
    assert_eq!(c.relay.resolving_time(), Duration::ZERO);
    c.relay.server_message(&elicitation(json!(1), None));
    asked.recv_timeout(WAIT).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(c.relay.resolving_time() >= Duration::from_millis(50));
    release.send(()).unwrap();
    c.to_server.recv_timeout(WAIT).expect("an error reply");
    // The reply goes out just before the job ends.
    std::thread::sleep(Duration::from_millis(100));
    let done = c.relay.resolving_time();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(c.relay.resolving_time(), done, "the clock stops when idle");
}

#[test]
fn a_flood_of_elicitations_is_refused_past_the_bound() {
    let (person, asked, release) = slow_person();
    let c = core_with(&[], person, false);
    for n in 0..MAX_PENDING_ELICITATIONS {
        assert_eq!(
            c.relay.server_message(&elicitation(json!(n), None)),
            Taken::Withheld
        );
    }
    asked
        .recv_timeout(WAIT)
        .expect("the person is asked the first");
    // One past the bound: refused at once, not queued.
    assert_eq!(
        c.relay
            .server_message(&elicitation(json!("one-too-many"), None)),
        Taken::Withheld
    );
    let refusal = c.to_server.recv_timeout(WAIT).expect("a refusal");
    assert_eq!(refusal["id"], "one-too-many");
    assert_eq!(refusal["error"]["code"], wire::TOO_MANY_IN_FLIGHT);
    // Answering one makes room for one more.
    release.send(()).unwrap();
    let first = c.to_server.recv_timeout(WAIT).expect("the first's reply");
    assert_eq!(first["id"], 0);
    assert_eq!(
        c.relay.server_message(&elicitation(json!("room"), None)),
        Taken::Withheld
    );
    assert!(
        c.to_server
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "nothing refused once there is room"
    );
    drop(release);
}

/// #30 item 5: repeating an id must not bypass the bound. A request whose
/// id is still pending is refused (it would otherwise queue one more job,
/// and one more form, under a set entry that was already there).
#[test]
fn an_elicitation_reusing_a_pending_id_is_refused() {
    let (person, asked, release) = slow_person();
    let c = core_with(&[], person, false);
    for _ in 0..300 {
        assert_eq!(
            c.relay.server_message(&elicitation(json!(7), None)),
            Taken::Withheld
        );
    }
    asked.recv_timeout(WAIT).expect("the person is asked once");
    for _ in 0..299 {
        let refusal = c.to_server.recv_timeout(WAIT).expect("a refusal");
        assert_eq!(refusal["id"], 7);
        assert_eq!(refusal["error"]["code"], wire::INVALID_REQUEST, "{refusal}");
    }
    release.send(()).unwrap();
    let first = c.to_server.recv_timeout(WAIT).expect("the first's reply");
    assert!(first.get("error").is_none() || first["error"]["code"] != wire::INVALID_REQUEST);
    // No second form for the same id.
    assert!(asked.recv_timeout(Duration::from_millis(300)).is_err());
    drop(release);
}

/// #30 item 6: what waits is bounded in bytes too, not only in number.
#[test]
fn elicitations_past_the_byte_bound_are_refused() {
    let (person, asked, release) = slow_person();
    let c = core_with(&[], person, false);
    let big = |n: usize| {
        let mut e = elicitation(json!(n), None);
        e["params"]["message"] = json!("x".repeat(MAX_PENDING_ELICITATION_BYTES / 4));
        e
    };
    for n in 0..3 {
        assert_eq!(c.relay.server_message(&big(n)), Taken::Withheld);
    }
    asked.recv_timeout(WAIT).expect("the person is asked");
    assert!(c
        .to_server
        .recv_timeout(Duration::from_millis(200))
        .is_err());
    // The fourth would take the total past the bound.
    c.relay.server_message(&big(3));
    let refusal = c.to_server.recv_timeout(WAIT).expect("a refusal");
    assert_eq!(refusal["id"], 3);
    assert_eq!(refusal["error"]["code"], wire::TOO_MANY_IN_FLIGHT);
    // A small one still fits.
    c.relay.server_message(&elicitation(json!("small"), None));
    assert!(c
        .to_server
        .recv_timeout(Duration::from_millis(200))
        .is_err());
    // Answering frees its bytes.
    release.send(()).unwrap();
    let first = c.to_server.recv_timeout(WAIT).expect("the first's reply");
    assert_eq!(first["id"], 0);
    c.relay.server_message(&big(4));
    assert!(c
        .to_server
        .recv_timeout(Duration::from_millis(200))
        .is_err());
    drop(release);
}

/// `input_required` rounds wait for the same person as the server's
/// elicitations: they count in the same bounds, in number and in bytes.
#[test]
fn input_required_rounds_count_in_the_waiting_bounds() {
    let (person, asked, release) = slow_person();
    let c = core_with(&[], person, false);
    for n in 0..MAX_PENDING_ELICITATIONS {
        c.relay.server_message(&elicitation(json!(n), None));
    }
    asked
        .recv_timeout(WAIT)
        .expect("the person is asked the first");
    let mut call = call_2026(json!("c-1"));
    c.relay.client_message(&mut call);
    assert_eq!(
        c.relay.server_message(&input_required("c-1")),
        Taken::Withheld
    );
    let refusal = c.to_client.recv_timeout(WAIT).expect("the client is told");
    assert_eq!(refusal["id"], "c-1");
    assert_eq!(
        refusal["error"]["code"],
        wire::TOO_MANY_IN_FLIGHT,
        "{refusal}"
    );
    assert!(c.relay.lock().tracked.is_empty());
    drop(release);

    // In bytes: one round over the bound alone.
    let (person, _asked, release) = slow_person();
    let c = core_with(&[], person, false);
    let mut call = call_2026(json!("c-2"));
    c.relay.client_message(&mut call);
    let mut big = input_required("c-2");
    big["result"]["inputRequests"]["q"]["params"]["message"] =
        json!("x".repeat(MAX_PENDING_ELICITATION_BYTES + 1));
    assert_eq!(c.relay.server_message(&big), Taken::Withheld);
    let refusal = c.to_client.recv_timeout(WAIT).expect("the client is told");
    assert_eq!(
        refusal["error"]["code"],
        wire::TOO_MANY_IN_FLIGHT,
        "{refusal}"
    );
    assert_eq!(c.relay.lock().pending_bytes, 0);
    drop(release);
}

/// A round that was admitted counts until it is settled, then no more.
#[test]
fn a_settled_input_required_round_no_longer_counts() {
    let c = core(&["name=Ada"]);
    let mut call = call_2026(json!("c-3"));
    c.relay.client_message(&mut call);
    assert_eq!(
        c.relay.server_message(&input_required("c-3")),
        Taken::Withheld
    );
    c.to_server.recv_timeout(WAIT).expect("a retry");
    let deadline = std::time::Instant::now() + WAIT;
    while !c.relay.lock().pending.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let st = c.relay.lock();
    assert!(st.pending.is_empty() && st.pending_bytes == 0);
}

/// Ids match as the wire spells them: `1` is not `"1"`, `1e3` is not
/// `1000`, and a reply under the other spelling is not the request's.
#[test]
fn replies_match_requests_by_the_id_as_spelled() {
    for (sent, other) in [
        ("1", r#""1""#),
        ("1e+3", "1000"),
        (r#""7""#, "7"),
        ("2.0", "2"),
    ] {
        let c = core(&["name=Ada"]);
        let mut call = call_2026(serde_json::from_str(sent).unwrap());
        c.relay.client_message(&mut call);
        let mut reply = input_required("x");
        reply["id"] = serde_json::from_str(other).unwrap();
        assert_eq!(c.relay.server_message(&reply), Taken::Relay, "{other}");
        assert!(c.relay.lock().pending.is_empty(), "{other} settles nothing");
        reply["id"] = serde_json::from_str(sent).unwrap();
        assert_eq!(c.relay.server_message(&reply), Taken::Withheld, "{sent}");
        let retry = c.to_server.recv_timeout(WAIT).expect("a retry");
        let done = json!({"jsonrpc": "2.0", "id": retry["id"], "result": {"content": []}});
        match c.relay.server_message(&done) {
            Taken::Rewritten(v) => assert_eq!(serde_json::to_string(&v["id"]).unwrap(), sent),
            other => panic!("{sent}: {other:?}"),
        }
    }
}

/// A number id past every integer type gets its final reply under its
/// exact digits, and so does an error elicit writes for it.
#[test]
fn a_huge_number_id_comes_back_digit_for_digit() {
    let digits = "123456789012345678901234567890";
    let c = core(&["name=Ada"]);
    let mut call = call_2026(serde_json::from_str(digits).unwrap());
    c.relay.client_message(&mut call);
    let mut reply = input_required("x");
    reply["id"] = call["id"].clone();
    assert_eq!(c.relay.server_message(&reply), Taken::Withheld);
    let retry = c.to_server.recv_timeout(WAIT).expect("a retry");
    let refused = json!({"jsonrpc": "2.0", "id": retry["id"],
        "error": {"code": -32603, "message": "no"}});
    match c.relay.server_message(&refused) {
        Taken::Rewritten(v) => {
            let line = serde_json::to_string(&v).unwrap();
            assert!(line.contains(&format!(r#""id":{digits}"#)), "{line}");
        }
        other => panic!("{other:?}"),
    }
}

/// An elicitation whose id is no JSON-RPC id goes on to the client as it
/// came: elicit cannot answer it under an id nobody could match.
#[test]
fn an_elicitation_under_an_id_that_is_no_id_goes_on_as_it_came() {
    let c = core(&["name=Ada"]);
    for id in [json!({"a": 1}), json!([1]), Value::Null, json!(true)] {
        assert_eq!(
            c.relay.server_message(&elicitation(id.clone(), None)),
            Taken::Relay,
            "{id}"
        );
    }
    assert!(c.relay.lock().pending.is_empty());
    assert!(c.to_server.try_recv().is_err(), "nothing answered");
}

/// A client request under an id that is no id is passed on unchanged and
/// not watched: no reply could be matched to it.
#[test]
fn a_client_request_under_an_id_that_is_no_id_is_not_watched() {
    let c = core(&[]);
    for id in [json!({"a": 1}), json!([1]), Value::Null] {
        let mut init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"capabilities": {}}});
        let before = init.clone();
        assert!(!c.relay.client_message(&mut init), "{id}");
        assert_eq!(init, before);
        let mut call = call_2026(id.clone());
        assert!(!c.relay.client_message(&mut call), "{id}");
    }
    let st = c.relay.lock();
    assert!(st.info_ids.is_empty() && st.tracked.is_empty() && st.tool_calls.is_empty());
}

/// A reply with both `result` and `error` ends its request, and elicit
/// acts on no result its sender also called a failure.
#[test]
fn a_reply_with_both_result_and_error_ends_the_request_and_settles_nothing() {
    let c = core(&["name=Ada"]);
    let mut call = call_2026(json!("c-2"));
    c.relay.client_message(&mut call);
    let mut reply = input_required("c-2");
    reply["error"] = json!({"code": -32603, "message": "both"});
    assert_eq!(c.relay.server_message(&reply), Taken::Relay);
    let st = c.relay.lock();
    assert!(st.tracked.is_empty() && st.pending.is_empty() && st.rounds.is_empty());
    drop(st);
    assert!(c.to_server.try_recv().is_err(), "no retry");
}

/// A server that leaves out `jsonrpc` still has its elicitations answered.
#[test]
fn an_elicitation_without_jsonrpc_is_answered() {
    let c = core(&["name=Ada"]);
    let mut msg = elicitation(json!("q-9"), None);
    msg.as_object_mut().unwrap().remove("jsonrpc");
    assert_eq!(c.relay.server_message(&msg), Taken::Withheld);
    let reply = c.to_server.recv_timeout(WAIT).expect("an answer");
    assert_eq!(reply["id"], "q-9");
    assert_eq!(reply["result"]["content"]["name"], "Ada");
}

/// The stdio side parses a server line that may answer a watched request:
/// it holds the id's text, or the id has an exponent a server may spell
/// its own way (`1E3` for the `1e+3` elicit read).
#[test]
fn a_line_answering_a_watched_id_is_looked_at() {
    let c = core(&[]);
    let mut list: Value =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":41,"method":"tools/list"}"#).unwrap();
    c.relay.client_message(&mut list);
    assert!(c
        .relay
        .awaits_reply_in(br#"{"jsonrpc":"2.0","id":41,"result":{}}"#));
    assert!(!c
        .relay
        .awaits_reply_in(br#"{"jsonrpc":"2.0","id":42,"result":{}}"#));
    let mut list: Value =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}"#).unwrap();
    c.relay.client_message(&mut list);
    assert!(c
        .relay
        .awaits_reply_in(br#"{"jsonrpc":"2.0","id":1E3,"result":{}}"#));
    let reply: Value = serde_json::from_str(r#"{"jsonrpc":"2.0","id":1E3,"result":{}}"#).unwrap();
    assert_eq!(c.relay.server_message(&reply), Taken::Relay);
    assert!(!c
        .relay
        .lock()
        .list_ids
        .contains(&envelope::RequestId::Number(
            serde_json::from_str("1e3").unwrap()
        )));
}
