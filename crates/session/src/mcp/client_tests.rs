//! [`McpClient`] and the tool call in process, over the in-memory
//! transport: a test plays the server on a thread of its own, message by
//! message, so the lifecycle, the negotiation, the answers to the server's
//! own requests and every bound run without a process.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::call::{call_tool_end, CallEnd, MAX_INPUT_ROUNDS};
use super::client::{
    McpClient, ProtocolChoice, HANDSHAKE_VERSION, STATELESS_VERSION, UNSUPPORTED_VERSION,
};
use super::handler::ElicitHandler;
use super::session::stateless_retry_reason;
use crate::transport::memory::{pair, MemoryServer};
use crate::transport::Transport;
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::contract::Answer;
use elicit_core::elicitation::protocol::wire;
use elicit_core::elicitation::protocol::Revision;
use elicit_core::elicitation::resolve::{Elicitation, NoTerminal, Pending, Resolver};
use elicit_core::error::{ElicitError, ServerError};

/// The longest any step waits for the other side: a broken client fails
/// the test here rather than hanging it.
const WAIT: Duration = Duration::from_secs(10);

/// The server's end, as a test script drives it.
struct Fake(MemoryServer);

impl Fake {
    /// The client's next message (fails past [`WAIT`]).
    fn next(&self) -> Value {
        self.0
            .receive(WAIT)
            .expect("the client sent its next message in time")
    }

    /// The client's next message, which must be a request for `method`.
    fn request(&self, method: &str) -> Value {
        let msg = self.next();
        assert_eq!(msg["method"], method, "the client's next request: {msg}");
        assert!(!msg["id"].is_null(), "a request has an id: {msg}");
        msg
    }

    fn reply(&self, request: &Value, result: Value) {
        self.0
            .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
    }

    fn refuse(&self, request: &Value, error: Value) {
        self.0
            .send(json!({"jsonrpc": "2.0", "id": request["id"], "error": error}));
    }

    /// Accepts the handshake with `version`; returns `initialize`'s params.
    fn handshake(&self, version: &str, capabilities: Value) -> Value {
        let init = self.request(wire::INITIALIZE);
        self.reply(
            &init,
            json!({"protocolVersion": version, "capabilities": capabilities,
                   "serverInfo": {"name": "fake", "version": "1"}}),
        );
        assert_eq!(self.next()["method"], wire::INITIALIZED);
        init["params"].clone()
    }
}

/// Runs `server` on a thread against a client over the in-memory
/// transport; `client` gets the transport. The server script's own
/// failures fail the test.
fn with_server<T>(
    server: impl FnOnce(Fake) + Send + 'static,
    client: impl FnOnce(Box<dyn Transport>) -> T,
) -> T {
    let (transport, end) = pair();
    let script = thread::spawn(move || server(Fake(end)));
    let out = client(Box::new(transport));
    if let Err(panic) = script.join() {
        std::panic::resume_unwind(panic);
    }
    out
}

/// A person who answers every form with `values`, and notes each message.
#[derive(Clone, Default)]
struct Person {
    values: Map<String, Value>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Resolver for Person {
    fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
        self.asked.lock().unwrap().push(e.params.message.clone());
        let Pending::Form { mut values, .. } = pending else {
            panic!("only forms are asked here");
        };
        values.extend(self.values.clone());
        Ok(Answer::accepted("", values))
    }
}

fn no_answers() -> ScriptedAnswers {
    ScriptedAnswers::default()
}

fn nobody() -> NoTerminal {
    NoTerminal {
        detail: "no terminal in this test".into(),
    }
}

fn connect(
    transport: Box<dyn Transport>,
    choice: ProtocolChoice,
    handler: &mut ElicitHandler<'_>,
) -> Result<McpClient, ElicitError> {
    McpClient::connect(transport, choice, Some(WAIT), false, handler)
}

fn name_form(message: &str) -> Value {
    json!({"message": message, "requestedSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    }})
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn server_error(e: ElicitError) -> ServerError {
    match e {
        ElicitError::Server(s) => s,
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn auto_takes_the_handshake_and_the_version_the_server_answers() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let client = with_server(
        |s| {
            let params = s.handshake("2025-06-18", json!({}));
            assert_eq!(params["protocolVersion"], HANDSHAKE_VERSION);
            assert!(
                params["capabilities"].get("elicitation").is_some(),
                "elicit declares elicitation: {params}"
            );
            assert_eq!(params["clientInfo"]["name"], "elicit");
        },
        |t| connect(t, ProtocolChoice::Auto, &mut handler),
    )
    .expect("connected");
    assert_eq!(client.revision, Revision::V2025_06_18);
    assert_eq!(client.protocol_version(), "2025-06-18");
    assert!(!client.is_stateless());
    assert_eq!(
        client.describe_protocol(),
        "protocol 2025-06-18, initialize handshake"
    );
    assert_eq!(client.server_name().as_deref(), Some("fake"));
    assert_eq!(handler.server_name.as_deref(), Some("fake"));
    assert!(client.why.contains("accepted the initialize handshake"));
}

#[test]
fn a_version_elicit_does_not_know_goes_on_over_the_handshake_under_its_own_name() {
    // An older version, and the stateless one, which has no handshake: the
    // session stays on the handshake (no stamps on its requests), is checked
    // as the newest handshake revision, and keeps the server's version for
    // `-v` and a cassette.
    for version in ["2024-11-05", STATELESS_VERSION] {
        let (scripted, mut person) = (no_answers(), nobody());
        let mut handler = ElicitHandler::new(&scripted, &mut person);
        let client = with_server(
            move |s| {
                s.handshake(version, json!({}));
                let list = s.request(wire::TOOLS_LIST);
                assert!(
                    list["params"].get("_meta").is_none(),
                    "a handshake request carries no stateless _meta: {list}"
                );
                s.reply(&list, json!({"tools": []}));
            },
            |t| {
                let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
                client.list_tools(&mut handler)?;
                Ok::<_, ElicitError>(client)
            },
        )
        .expect("connected");
        assert!(!client.is_stateless(), "{version}");
        assert_eq!(client.revision, Revision::V2025_11_25, "{version}");
        assert_eq!(client.protocol_version(), version);
        assert_eq!(
            client.describe_protocol(),
            format!("protocol {version}, initialize handshake")
        );
    }
}

#[test]
fn a_revision_given_is_the_one_asked_for() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let client = with_server(
        |s| {
            let params = s.handshake("2025-06-18", json!({}));
            assert_eq!(params["protocolVersion"], "2025-06-18");
        },
        |t| connect(t, ProtocolChoice::Only(Revision::V2025_06_18), &mut handler),
    )
    .expect("connected");
    assert_eq!(client.why, "--protocol 2025-06-18 given");

    // A refused handshake for a revision given is the failure: no discover.
    let err = with_server(
        |s| {
            let init = s.request(wire::INITIALIZE);
            s.refuse(&init, json!({"code": -32600, "message": "no such version"}));
        },
        |t| connect(t, ProtocolChoice::Only(Revision::V2025_11_25), &mut handler),
    )
    .err()
    .expect("the refusal fails the connection");
    match server_error(err) {
        ServerError::InitializeFailed { detail } => {
            assert!(detail.contains("no such version"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn auto_falls_back_to_discover_and_asks_again_once_when_refused_a_listed_version() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let client = with_server(
        |s| {
            let init = s.request(wire::INITIALIZE);
            s.refuse(
                &init,
                json!({"code": -32601, "message": "no initialize here"}),
            );
            let first = s.request(wire::SERVER_DISCOVER);
            assert_eq!(
                first["params"]["_meta"][wire::VERSION_META],
                STATELESS_VERSION
            );
            s.refuse(
                &first,
                json!({"code": UNSUPPORTED_VERSION, "message": "try again",
                       "data": {"supported": [STATELESS_VERSION]}}),
            );
            let again = s.request(wire::SERVER_DISCOVER);
            assert_ne!(again["id"], first["id"], "a new request, not the same id");
            s.reply(
                &again,
                json!({"supportedVersions": [STATELESS_VERSION],
                       "serverInfo": {"name": "modern"}}),
            );
        },
        |t| connect(t, ProtocolChoice::Auto, &mut handler),
    )
    .expect("connected over discover");
    assert_eq!(client.revision, Revision::V2026_07_28);
    assert!(client.is_stateless());
    assert_eq!(client.describe_protocol(), "protocol 2026-07-28, stateless");
    assert_eq!(client.server_name().as_deref(), Some("modern"));
    assert!(
        client.why.contains("initialize was refused") && client.why.contains("no initialize here"),
        "{}",
        client.why
    );
}

#[test]
fn discover_fails_in_words_for_each_way_a_server_refuses_it() {
    type Check = fn(ServerError) -> bool;
    let cases: [(Value, Check); 3] = [
        // Answers, but without the stateless revision.
        (
            json!({"result": {"supportedVersions": ["2025-11-25"]}}),
            |e| matches!(e, ServerError::VersionNotSupported { .. }),
        ),
        // A modern server's refusal of the request itself.
        (
            json!({"error": {"code": wire::HEADER_MISMATCH, "message": "header"}}),
            |e| matches!(e, ServerError::DiscoverRefused { .. }),
        ),
        // Any other error; an unsupported version not listed is not asked again.
        (
            json!({"error": {"code": UNSUPPORTED_VERSION, "message": "no",
                              "data": {"supported": ["2025-11-25"]}}}),
            |e| matches!(e, ServerError::DiscoverFailed { .. }),
        ),
    ];
    for (answer, check) in cases {
        let (scripted, mut person) = (no_answers(), nobody());
        let mut handler = ElicitHandler::new(&scripted, &mut person);
        let shown = answer.to_string();
        let err = with_server(
            move |s| {
                let discover = s.request(wire::SERVER_DISCOVER);
                let mut reply = answer;
                reply["jsonrpc"] = json!("2.0");
                reply["id"] = discover["id"].clone();
                s.0.send(reply);
                // Asked once: nothing more comes.
                assert!(s.0.receive(Duration::from_millis(100)).is_none());
            },
            |t| connect(t, ProtocolChoice::Only(Revision::V2026_07_28), &mut handler),
        )
        .err()
        .unwrap_or_else(|| panic!("{shown}: discover must fail"));
        let e = server_error(err);
        let seen = format!("{e:?}");
        assert!(check(e), "{shown}: {seen}");
    }
}

#[test]
fn an_elicitation_is_answered_through_the_resolver_then_the_call_ends_with_its_result() {
    let scripted = no_answers();
    let mut person = Person {
        values: Map::from_iter([("name".to_string(), json!("Ada"))]),
        ..Person::default()
    };
    let asked = person.asked.clone();
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let end = with_server(
        |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            let call = s.request(wire::TOOLS_CALL);
            assert_eq!(call["params"], json!({"name": "greet", "arguments": {}}));
            s.0.send(
                json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                            "params": name_form("Who?")}),
            );
            let answer = s.next();
            assert_eq!(
                answer,
                json!({"jsonrpc": "2.0", "id": "e1",
                       "result": {"action": "accept", "content": {"name": "Ada"}}})
            );
            // The same request again (same id) is not answered twice.
            s.0.send(
                json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                            "params": name_form("Who?")}),
            );
            s.reply(&call, text_result("hello Ada"));
            assert!(s.0.receive(Duration::from_millis(100)).is_none());
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            call_tool_end(&mut client, &mut handler, "greet", &Map::new())
        },
    )
    .expect("the call ended");
    let CallEnd::Result(result) = end else {
        panic!("{end:?}")
    };
    assert_eq!(result, text_result("hello Ada"));
    assert_eq!(*asked.lock().unwrap(), ["Who?"]);
    assert_eq!(handler.answered.len(), 1);
}

#[test]
fn input_required_rounds_are_answered_and_retried_with_the_state_echoed() {
    let scripted = ScriptedAnswers::parse(["name=Ada"], |_| Err(std::io::Error::other("no files")))
        .expect("answers");
    let mut person = nobody();
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let end = with_server(
        |s| {
            let discover = s.request(wire::SERVER_DISCOVER);
            s.reply(&discover, json!({"supportedVersions": [STATELESS_VERSION]}));
            let call = s.request(wire::TOOLS_CALL);
            s.reply(
                &call,
                json!({"resultType": "input_required", "requestState": "opaque-1",
                       "inputRequests": {"who": {"method": "elicitation/create",
                                                 "params": name_form("Who?")}}}),
            );
            let retry = s.request(wire::TOOLS_CALL);
            assert_eq!(retry["params"]["requestState"], "opaque-1");
            assert_eq!(
                retry["params"]["inputResponses"]["who"],
                json!({"action": "accept", "content": {"name": "Ada"}})
            );
            s.reply(&retry, text_result("hello Ada"));
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Only(Revision::V2026_07_28), &mut handler)?;
            call_tool_end(&mut client, &mut handler, "greet", &Map::new())
        },
    )
    .expect("the call ended");
    assert!(matches!(end, CallEnd::Result(r) if r == text_result("hello Ada")));
}

#[test]
fn a_server_error_is_a_refusal_and_an_is_error_result_a_result() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let ends = with_server(
        |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            let call = s.request(wire::TOOLS_CALL);
            s.refuse(&call, json!({"code": -32603, "message": "disk full"}));
            let call = s.request(wire::TOOLS_CALL);
            s.reply(&call, json!({"isError": true, "content": []}));
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            let refused = call_tool_end(&mut client, &mut handler, "save", &Map::new())?;
            let failed = call_tool_end(&mut client, &mut handler, "save", &Map::new())?;
            Ok::<_, ElicitError>((client, refused, failed))
        },
    )
    .expect("both calls ended");
    let (client, refused, failed) = ends;
    match &refused {
        CallEnd::Refused { error, message } => {
            assert_eq!(error["code"], -32603);
            assert_eq!(message, "tools/call save failed: -32603 disk full");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(failed, CallEnd::Result(ref r) if r["isError"] == true));
    // Neither is called again over 2026-07-28: nothing names input_required.
    assert!(
        stateless_retry_reason(ProtocolChoice::Auto, client.is_stateless(), &refused, false)
            .is_none()
    );
}

#[test]
fn a_refusal_naming_input_required_is_called_again_over_discover() {
    // What `Session::call_tool` does under auto, one connection after the
    // other: the handshake's refusal, the reason, then the stateless call.
    let scripted = ScriptedAnswers::parse(["name=Ada"], |_| Err(std::io::Error::other("no files")))
        .expect("answers");
    let mut person = nobody();
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let refused = with_server(
        |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            let call = s.request(wire::TOOLS_CALL);
            s.refuse(
                &call,
                json!({"code": -32602, "message": "this tool needs input_required"}),
            );
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            let end = call_tool_end(&mut client, &mut handler, "guard", &Map::new())?;
            Ok::<_, ElicitError>((client.is_stateless(), end))
        },
    )
    .expect("refused");
    let why = stateless_retry_reason(ProtocolChoice::Auto, refused.0, &refused.1, false)
        .expect("called again");
    assert!(why.contains("input_required"), "{why}");
}

#[test]
fn a_server_that_hangs_up_fails_the_request_waiting_on_it() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let err = with_server(
        |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            s.request(wire::TOOLS_CALL);
            s.0.hang_up();
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            call_tool_end(&mut client, &mut handler, "t", &Map::new())
        },
    )
    .expect_err("the call fails");
    match server_error(err) {
        ServerError::WhileWaiting { cause, method, .. } => {
            assert!(matches!(*cause, ServerError::ClosedOutput), "{cause:?}");
            assert_eq!(method, wire::TOOLS_CALL);
        }
        other => panic!("{other:?}"),
    }

    // A transport gone altogether: sending fails, nothing waits.
    let (transport, end) = pair();
    drop(end);
    let err = connect(Box::new(transport), ProtocolChoice::Auto, &mut handler)
        .err()
        .expect("nothing to connect to");
    assert!(matches!(server_error(err), ServerError::InMemoryGone));
}

#[test]
fn a_reply_that_never_comes_ends_at_the_timeout() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let err = with_server(
        |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            s.request(wire::TOOLS_CALL);
            // A notification does not extend the wait for the reply.
            s.0.send(json!({"jsonrpc": "2.0", "method": "notifications/progress"}));
            // Held until the client gave up (its end is dropped then).
            let _ = s.0.receive(WAIT);
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            client.timeout = Some(Duration::from_millis(200));
            let started = std::time::Instant::now();
            let end = call_tool_end(&mut client, &mut handler, "slow", &Map::new());
            assert!(started.elapsed() < WAIT / 2, "{:?}", started.elapsed());
            end
        },
    )
    .expect_err("no reply");
    assert!(
        matches!(server_error(err), ServerError::NoReply { ref method, .. } if method == wire::TOOLS_CALL)
    );
}

#[test]
fn a_task_that_never_ends_is_cancelled_when_the_wait_gives_up() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let cancelled = Arc::new(Mutex::new(None));
    let seen = cancelled.clone();
    let err = with_server(
        move |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            let call = s.request(wire::TOOLS_CALL);
            s.reply(
                &call,
                json!({"resultType": "task", "taskId": "t-1", "status": "working",
                       "pollIntervalMs": 20}),
            );
            loop {
                let msg = s.next();
                if msg["method"] == wire::TASKS_CANCEL {
                    *seen.lock().unwrap() = Some(msg["params"]["taskId"].clone());
                    s.reply(&msg, json!({}));
                    break;
                }
                assert_eq!(msg["method"], wire::TASKS_GET, "{msg}");
                s.reply(
                    &msg,
                    json!({"taskId": "t-1", "status": "working",
                                     "pollIntervalMs": 20}),
                );
            }
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            client.timeout = Some(Duration::from_millis(300));
            call_tool_end(&mut client, &mut handler, "forever", &Map::new())
        },
    )
    .expect_err("the task never ended");
    assert!(
        matches!(server_error(err), ServerError::NoReply { ref method, .. } if method.starts_with(wire::TASKS_GET))
    );
    assert_eq!(
        *cancelled.lock().unwrap(),
        Some(json!("t-1")),
        "tasks/cancel sent for the task"
    );
}

#[test]
fn a_2025_task_whose_result_never_comes_is_cancelled_when_the_wait_gives_up() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let cancelled = Arc::new(Mutex::new(None));
    let seen = cancelled.clone();
    let err = with_server(
        move |s| {
            s.handshake(
                HANDSHAKE_VERSION,
                json!({"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}),
            );
            let list = s.request(wire::TOOLS_LIST);
            s.reply(
                &list,
                json!({"tools": [{"name": "research", "inputSchema": {"type": "object"},
                                  "execution": {"taskSupport": "required"}}]}),
            );
            let call = s.request(wire::TOOLS_CALL);
            assert!(
                call["params"].get("task").is_some(),
                "called as a task: {call}"
            );
            s.reply(
                &call,
                json!({"task": {"taskId": "r-1", "status": "working"}}),
            );
            s.request(wire::TASKS_RESULT);
            // No result: the client's wait ends at its timeout.
            let cancel = s.request(wire::TASKS_CANCEL);
            *seen.lock().unwrap() = Some(cancel["params"]["taskId"].clone());
            s.reply(&cancel, json!({}));
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            client.timeout = Some(Duration::from_millis(300));
            call_tool_end(&mut client, &mut handler, "research", &Map::new())
        },
    )
    .expect_err("the task never ended");
    assert!(
        matches!(server_error(err), ServerError::NoReply { ref method, .. } if method == wire::TASKS_RESULT)
    );
    assert_eq!(
        *cancelled.lock().unwrap(),
        Some(json!("r-1")),
        "tasks/cancel sent for the task"
    );
}

#[test]
fn a_server_that_keeps_asking_is_stopped_after_the_most_rounds() {
    let scripted = ScriptedAnswers::parse(["name=Ada"], |_| Err(std::io::Error::other("no files")))
        .expect("answers");
    let mut person = nobody();
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let err = with_server(
        |s| {
            let discover = s.request(wire::SERVER_DISCOVER);
            s.reply(&discover, json!({"supportedVersions": [STATELESS_VERSION]}));
            for round in 0..MAX_INPUT_ROUNDS {
                let call = s.request(wire::TOOLS_CALL);
                s.reply(
                    &call,
                    json!({"resultType": "input_required", "requestState": round.to_string(),
                           "inputRequests": {"who": {"method": "elicitation/create",
                                                     "params": name_form("Who?")}}}),
                );
            }
            // No call past the bound.
            assert!(s.0.receive(Duration::from_millis(200)).is_none());
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Only(Revision::V2026_07_28), &mut handler)?;
            call_tool_end(&mut client, &mut handler, "ask", &Map::new())
        },
    )
    .expect_err("stopped");
    assert!(
        matches!(server_error(err), ServerError::TooManyRounds { rounds } if rounds == MAX_INPUT_ROUNDS)
    );
}

#[test]
fn with_nobody_to_answer_the_server_is_told_and_the_call_fails() {
    let (scripted, mut person) = (no_answers(), nobody());
    let mut handler = ElicitHandler::new(&scripted, &mut person);
    let err = with_server(
        |s| {
            s.handshake(HANDSHAKE_VERSION, json!({}));
            s.request(wire::TOOLS_CALL);
            s.0.send(
                json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
                            "params": name_form("Who?")}),
            );
            let told = s.next();
            assert_eq!(told["id"], 7);
            assert!(told["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("could not resolve")));
        },
        |t| {
            let mut client = connect(t, ProtocolChoice::Auto, &mut handler)?;
            call_tool_end(&mut client, &mut handler, "t", &Map::new())
        },
    )
    .expect_err("nobody answers");
    assert!(
        matches!(err, ElicitError::NeedsAnswers { ref fields, .. } if fields == &["name"]),
        "{err:?}"
    );
}
