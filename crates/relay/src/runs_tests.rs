//! Tasks the relay runs for a client that runs none, over the in-memory
//! sides of the core's tests: what goes to the server and to the client.

use std::time::Duration;

use serde_json::{json, Value};

use super::super::tests::{core_with_options, nobody, Core, WAIT};
use super::super::{RelayOptions, Taken};
use elicit_core::elicitation::protocol::wire::{self, CAPS_META, TASKS_EXTENSION, VERSION_META};

fn core(budget: Option<Duration>) -> Core {
    let options = RelayOptions {
        task_budget: budget,
        ..RelayOptions::default()
    };
    core_with_options(&["name=Ada"], nobody(), options)
}

fn reply(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

const TOOLS: &str = r#"[{"name": "research", "execution": {"taskSupport": "required"}},
    {"name": "maybe", "execution": {"taskSupport": "optional"}}, {"name": "plain"}]"#;

/// A 2025-11-25 session: the server runs tool calls as tasks, and the
/// client listed its tools.
fn handshake_session(c: &Core) {
    let mut init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}});
    c.relay.client_message(&mut init);
    let caps = json!({"capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}});
    assert_eq!(c.relay.server_message(&reply(json!(0), caps)), Taken::Relay);
    let mut list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert!(!c.relay.client_message(&mut list), "a list goes unchanged");
    let tools: Value = serde_json::from_str(TOOLS).unwrap();
    let listed = reply(json!(1), json!({ "tools": tools }));
    assert_eq!(c.relay.server_message(&listed), Taken::Relay);
}

fn call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}})
}

fn next(c: &Core, method: &str) -> Value {
    let m = c
        .to_server
        .recv_timeout(WAIT)
        .expect("a request of elicit's");
    assert_eq!(m["method"], method, "{m}");
    assert!(
        m["id"].as_str().unwrap().starts_with("elicit-proxy-"),
        "{m}"
    );
    m
}

#[test]
fn a_task_only_tool_is_run_as_a_task_and_its_result_reaches_the_client() {
    let c = core(None);
    handshake_session(&c);
    // Tools that do not require a task, and a client that asks for one
    // itself, are left alone.
    for tool in ["maybe", "plain"] {
        let mut plain = call(2, tool);
        assert!(!c.relay.client_message(&mut plain), "{tool}");
    }
    let mut own = call(3, "research");
    own["params"]["task"] = json!({"ttl": 1000});
    let before = own.clone();
    assert!(!c.relay.client_message(&mut own));
    assert_eq!(own, before);
    assert!(
        c.relay.lock().client_makes_tasks,
        "a call with `task` is the client's task"
    );

    let mut research = call(4, "research");
    assert!(c.relay.client_message(&mut research));
    assert!(research["params"]["task"]["ttl"].is_u64(), "{research}");
    // The server's news of that task is not for this client: it made no
    // task of its own (the call above with `task` was another client's
    // way, undone below), and a server may send it before naming the task.
    let status = |task: &str| {
        json!({"jsonrpc": "2.0", "method": wire::TASK_STATUS,
            "params": {"taskId": task, "status": "working", "ttl": 1000}})
    };
    c.relay.lock().client_makes_tasks = false;
    let early = status("t-1");
    assert!(c.relay.awaits_reply_in(early.to_string().as_bytes()));
    assert_eq!(c.relay.server_message(&early), Taken::Withheld);
    let created = reply(
        json!(4),
        json!({"task": {"taskId": "t-1", "status": "working"}}),
    );
    assert_eq!(c.relay.server_message(&created), Taken::Withheld);
    let wait = next(&c, wire::TASKS_RESULT);
    assert_eq!(wait["params"]["taskId"], "t-1");
    // Once named, by its id (the stdio side parses such a line to see it).
    let named = status("t-1");
    assert!(c.relay.awaits_reply_in(named.to_string().as_bytes()));
    assert_eq!(c.relay.server_message(&named), Taken::Withheld);
    // A task of a client that makes tasks itself is the client's news.
    c.relay.lock().client_makes_tasks = true;
    assert_eq!(c.relay.server_message(&status("own-task")), Taken::Relay);
    let done = reply(
        wait["id"].clone(),
        json!({"content": [{"type": "text", "text": "report"}]}),
    );
    assert_eq!(c.relay.server_message(&done), Taken::Withheld);
    let got = c.to_client.recv_timeout(WAIT).expect("the tool's result");
    assert_eq!(got["id"], 4);
    assert_eq!(got["result"]["content"][0]["text"], "report");
    assert!(c.relay.lock().runs.is_empty());
    assert!(c.to_server.try_recv().is_err(), "nothing cancelled");
}

#[test]
fn a_client_cancelling_a_call_elicit_runs_as_a_task_cancels_the_task() {
    let c = core(None);
    handshake_session(&c);
    let mut research = call(4, "research");
    assert!(c.relay.client_message(&mut research));
    let created = reply(
        json!(4),
        json!({"task": {"taskId": "t-1", "status": "working"}}),
    );
    assert_eq!(c.relay.server_message(&created), Taken::Withheld);
    let wait = next(&c, wire::TASKS_RESULT);
    let mut cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 4, "reason": "user"}});
    assert!(!c.relay.client_message(&mut cancelled));
    let cancel = next(&c, wire::TASKS_CANCEL);
    assert_eq!(cancel["params"]["taskId"], "t-1");
    // The late replies are nobody's: the client asked for no answer.
    let late = reply(wait["id"].clone(), json!({"content": []}));
    assert_eq!(c.relay.server_message(&late), Taken::Withheld);
    let cancelled_reply = reply(cancel["id"].clone(), json!({"taskId": "t-1"}));
    assert_eq!(c.relay.server_message(&cancelled_reply), Taken::Withheld);
    assert!(c.to_client.try_recv().is_err());

    // Cancelled before the server named the task: cancelled once it does.
    let mut early = call(5, "research");
    c.relay.client_message(&mut early);
    let mut cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5}});
    c.relay.client_message(&mut cancelled);
    let created = reply(
        json!(5),
        json!({"task": {"taskId": "t-2", "status": "working"}}),
    );
    assert_eq!(c.relay.server_message(&created), Taken::Withheld);
    assert_eq!(next(&c, wire::TASKS_CANCEL)["params"]["taskId"], "t-2");

    // A client that hangs up has its tasks cancelled too.
    let mut third = call(6, "research");
    c.relay.client_message(&mut third);
    let created = reply(
        json!(6),
        json!({"task": {"taskId": "t-3", "status": "working"}}),
    );
    c.relay.server_message(&created);
    next(&c, wire::TASKS_RESULT);
    c.relay.client_hung_up();
    assert_eq!(next(&c, wire::TASKS_CANCEL)["params"]["taskId"], "t-3");
    assert!(c.to_client.try_recv().is_err());
}

fn meta() -> Value {
    json!({VERSION_META: "2026-07-28", CAPS_META: {}})
}

/// A 2026-07-28 client that declares no tasks extension, to a server that
/// offers it and lists a tool that runs only as a task.
fn extension_session(c: &Core) {
    let mut discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
        "params": {"_meta": meta()}});
    c.relay.client_message(&mut discover);
    let caps = json!({"capabilities": {"extensions": {TASKS_EXTENSION: {}}}});
    c.relay.server_message(&reply(json!(0), caps));
    let mut list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": meta()}});
    c.relay.client_message(&mut list);
    let tools: Value = serde_json::from_str(TOOLS).unwrap();
    c.relay
        .server_message(&reply(json!(1), json!({ "tools": tools })));
}

fn extension_call(c: &Core, id: i64) {
    let mut research = call(id, "research");
    research["params"]["_meta"] = meta();
    assert!(c.relay.client_message(&mut research));
    assert!(
        research["params"]["_meta"][CAPS_META]["extensions"][TASKS_EXTENSION].is_object(),
        "{research}"
    );
    let created = reply(
        json!(id),
        json!({"resultType": "task", "taskId": "t-9", "status": "working", "pollIntervalMs": 20}),
    );
    assert_eq!(c.relay.server_message(&created), Taken::Withheld);
}

#[test]
fn an_extension_task_is_polled_its_questions_answered_and_its_result_sent() {
    let c = core(None);
    extension_session(&c);
    extension_call(&c, 7);
    let poll = next(&c, wire::TASKS_GET);
    assert_eq!(poll["params"]["taskId"], "t-9");
    assert!(poll["params"]["_meta"][CAPS_META]["extensions"][TASKS_EXTENSION].is_object());
    let asking = reply(
        poll["id"].clone(),
        json!({"resultType": "complete", "taskId": "t-9", "status": "input_required",
            "pollIntervalMs": 20, "inputRequests": {"t-9:q": {"method": "elicitation/create",
            "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}}}}}}),
    );
    assert_eq!(c.relay.server_message(&asking), Taken::Withheld);
    // The answer (tasks/update) and the next poll come in either order.
    let (mut update, mut poll) = (None, None);
    while update.is_none() || poll.is_none() {
        let m = c
            .to_server
            .recv_timeout(WAIT)
            .expect("an update and a poll");
        match m["method"].as_str() {
            Some(wire::TASKS_UPDATE) => update = Some(m),
            Some(wire::TASKS_GET) => poll = Some(m),
            _ => panic!("{m}"),
        }
    }
    let update = update.unwrap();
    assert_eq!(
        update["params"]["inputResponses"]["t-9:q"]["content"]["name"],
        "Ada"
    );
    let done = reply(
        poll.unwrap()["id"].clone(),
        json!({"resultType": "complete", "taskId": "t-9", "status": "completed",
            "result": {"content": [{"type": "text", "text": "hi Ada"}]}}),
    );
    assert_eq!(c.relay.server_message(&done), Taken::Withheld);
    let got = c.to_client.recv_timeout(WAIT).expect("the result");
    assert_eq!(got["id"], 7);
    assert_eq!(got["result"]["content"][0]["text"], "hi Ada");
    // The client's `tools/call` result, valid in its revision.
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
}

#[test]
fn an_extension_task_past_its_bound_is_cancelled_and_the_client_told() {
    let c = core(Some(Duration::from_millis(300)));
    extension_session(&c);
    extension_call(&c, 8);
    // The task keeps working: each poll is answered so.
    let cancel = loop {
        let m = c.to_server.recv_timeout(WAIT).expect("a poll or a cancel");
        if m["method"] == wire::TASKS_CANCEL {
            break m;
        }
        assert_eq!(m["method"], wire::TASKS_GET, "{m}");
        let working = json!({"resultType": "complete", "taskId": "t-9", "status": "working",
            "pollIntervalMs": 20});
        c.relay.server_message(&reply(m["id"].clone(), working));
    };
    assert_eq!(cancel["params"]["taskId"], "t-9");
    assert!(cancel["params"]["_meta"][CAPS_META]["extensions"][TASKS_EXTENSION].is_object());
    let told = c.to_client.recv_timeout(WAIT).expect("an error");
    assert_eq!(told["id"], 8);
    assert_eq!(told["error"]["code"], wire::REQUEST_TIMED_OUT);
}

fn refusal(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": wire::MISSING_CAPABILITY,
        "message": "Tool 'research' requires the tasks extension",
        "data": {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}}})
}

/// 2026-07-28 lists do not say which tools run only as tasks: the server's
/// refusal does, and elicit calls again with the extension declared.
#[test]
fn a_call_refused_for_want_of_the_extension_is_sent_again_as_a_task_and_cancelled_with_the_client()
{
    let c = core(None);
    let mut research = call(9, "research");
    research["params"]["_meta"] = meta();
    c.relay.client_message(&mut research);
    assert!(research["params"]["_meta"][CAPS_META]["extensions"].is_null());
    assert_eq!(c.relay.server_message(&refusal(json!(9))), Taken::Withheld);
    let again = next(&c, wire::TOOLS_CALL);
    assert_eq!(again["params"]["name"], "research");
    assert!(again["params"]["_meta"][CAPS_META]["extensions"][TASKS_EXTENSION].is_object());
    assert!(again["params"]["_meta"][CAPS_META]["elicitation"].is_object());
    let created = reply(
        again["id"].clone(),
        json!({"resultType": "task", "taskId": "t-4", "status": "working", "pollIntervalMs": 20}),
    );
    assert_eq!(c.relay.server_message(&created), Taken::Withheld);
    let poll = next(&c, wire::TASKS_GET);
    assert_eq!(poll["params"]["taskId"], "t-4");
    let mut cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9}});
    c.relay.client_message(&mut cancelled);
    let cancel = next(&c, wire::TASKS_CANCEL);
    assert_eq!(cancel["params"]["taskId"], "t-4");
    assert!(cancel["params"]["_meta"][CAPS_META]["extensions"][TASKS_EXTENSION].is_object());
    assert!(
        c.to_client.try_recv().is_err(),
        "a cancelled call gets no reply"
    );

    // A client that declared the extension itself gets the refusal.
    let mut own = call(10, "research");
    own["params"]["_meta"] = meta();
    own["params"]["_meta"][CAPS_META]["extensions"] = json!({TASKS_EXTENSION: {}});
    c.relay.client_message(&mut own);
    assert_eq!(c.relay.server_message(&refusal(json!(10))), Taken::Relay);
    // And a call the server answers without a task after all: its reply is
    // the client's, under its id.
    let mut plain = call(11, "research");
    plain["params"]["_meta"] = meta();
    c.relay.client_message(&mut plain);
    c.relay.server_message(&refusal(json!(11)));
    let again = next(&c, wire::TOOLS_CALL);
    let result = reply(again["id"].clone(), json!({"content": []}));
    match c.relay.server_message(&result) {
        Taken::Rewritten(v) => assert_eq!(v, reply(json!(11), json!({"content": []}))),
        other => panic!("{other:?}"),
    }
}
