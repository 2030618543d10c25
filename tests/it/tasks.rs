//! Tools that run as tasks and ask for input.
//!
//! 2025-11-25 tasks, against npm server-everything's
//! `simulate-research-query`: a tool that requires task augmentation and,
//! when the topic is ambiguous, sends an elicitation tied to its task while
//! the client waits on `tasks/result`. Through `call`, `--record` and
//! `elicit test`, and `proxy` for a client that runs the task itself or
//! for one that runs no tasks (the proxy runs the task for it).
//!
//! The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663), against PyPI fastmcp-tasks (tests/servers/fastmcp_tasks_server.py):
//! a tool call answered with a task, polled with `tasks/get`, whose
//! `input_required` questions are answered with `tasks/update`. Through
//! `call`, `--record` and `elicit test`, `lint`, and `proxy` (for a
//! client that polls, and for one that declares no tasks: `task_only`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{installed, server_everything, Run, Running, Test};

const TOOL: &str = "simulate-research-query";

fn report(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn call(extra: &[&str]) -> Test {
    Test::new()
        .words("call --no-input --timeout 60s --server-log /dev/null")
        .args(["--tool", TOOL])
        .words("--arg topic=python --arg ambiguous=true")
        .args(extra)
        .server(&server_everything())
}

#[test]
fn a_task_that_asks_gets_the_answer_through_call() {
    let out = call(&["-a", "accept", "-a", "interpretation=programming"]).run();
    let result: Value = serde_json::from_str(out.stdout()).unwrap();
    let text = report(&result);
    assert!(
        text.contains("# Research Report: python (programming)"),
        "{text}"
    );
    assert!(
        text.contains("`input_required`"),
        "the task went through input_required: {text}"
    );
    assert_eq!(result["isError"], Value::Null);
}

#[test]
fn a_task_declined_reaches_the_tool_as_declined() {
    let out = call(&["-a", "decline"]).run();
    let result: Value = serde_json::from_str(out.stdout()).unwrap();
    assert!(
        report(&result).contains("User declined"),
        "{}",
        report(&result)
    );
}

#[test]
fn a_task_flow_records_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("research.cassette.json");
    call(&[
        "-a",
        "accept",
        "-a",
        "interpretation=snake",
        "--record",
        cassette.to_str().unwrap(),
    ])
    .stdout_unchecked("the tool's result is read back from the cassette")
    .run();
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let asked = recorded["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{recorded}");
    assert_eq!(asked[0]["answer"]["content"]["interpretation"], "snake");
    // A fresh task id on every run does not fail the replay.
    replays(&cassette);
}

/// A client that runs the task itself (task-augmented `tools/call`, then
/// `tasks/result`) but has no elicitation: the proxy answers the task's
/// elicitation on its behalf, and nothing of it reaches the client.
#[test]
fn proxy_answers_a_task_elicitation_for_a_client_that_runs_the_task() {
    let mut proxy = Test::new()
        .words("proxy --no-input --server-log /dev/null -a accept -a interpretation=comedy")
        .server(&server_everything())
        .limit(Duration::from_secs(120))
        .feed()
        .spawn();
    let send = |proxy: &mut Running, m: Value| proxy.send(&m);
    let reply_to = |proxy: &mut Running, id: i64| -> Value {
        loop {
            let v = proxy.next_json();
            assert_ne!(
                v["method"], "elicitation/create",
                "an elicitation reached the client"
            );
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v;
            }
        }
    };
    send(
        &mut proxy,
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tasks-client","version":"0"}}}),
    );
    let init = reply_to(&mut proxy, 1);
    assert!(
        init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(),
        "{init}"
    );
    send(
        &mut proxy,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    send(
        &mut proxy,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":TOOL,"arguments":{"topic":"python","ambiguous":true},"task":{"ttl":60000}}}),
    );
    let created = reply_to(&mut proxy, 2);
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_string();
    send(
        &mut proxy,
        json!({"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":task_id}}),
    );
    let done = reply_to(&mut proxy, 3);
    assert!(
        report(&done["result"]).contains("python (comedy)"),
        "{done}"
    );
    proxy.close_stdin();
    // The proxy ends when its client hangs up. server-everything keeps its
    // task's time-to-live timer running, so it does not exit when its stdin
    // closes: the proxy ends it after the grace period (SIGTERM) and exits
    // with the server's status, 128 + 15.
    proxy
        .status_in(&[0, 143])
        .wait_within(Duration::from_secs(30));
}

/// The cassette `--record` wrote.
fn recorded(cassette: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(cassette).unwrap()).unwrap()
}

/// `elicit test` of a cassette passes.
fn replays(cassette: &std::path::Path) {
    Test::new()
        .args(["test", "--timeout", "60s"])
        .arg(cassette)
        .run()
        .stderr_has(", 0 failed (");
}

/// A proxy whose client hung up, ended (server-everything is ended after
/// the grace period: 128 + 15).
fn hung_up(mut proxy: Running) -> Run {
    proxy.close_stdin();
    proxy
        .status_in(&[0, 143])
        .wait_within(Duration::from_secs(30))
}

/// A client that asks `proxy`, and reads the replies to its own requests,
/// failing the test if a question of the server reaches it.
fn ask_through(proxy: &mut Running, id: i64, method: &str, params: Value) -> Value {
    ask_through_seeing(proxy, id, method, params).0
}

/// As [`ask_through`], with the notifications the client got meanwhile.
fn ask_through_seeing(
    proxy: &mut Running,
    id: i64,
    method: &str,
    params: Value,
) -> (Value, Vec<Value>) {
    proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    let mut notifications = Vec::new();
    loop {
        let v = proxy.next_json();
        assert_ne!(
            v["method"], "elicitation/create",
            "an elicitation reached the client"
        );
        assert!(
            v.get("method").is_none() || v.get("id").is_none(),
            "a request of the server reached the client: {v}"
        );
        if v["id"] == json!(id) && v.get("method").is_none() {
            return (v, notifications);
        }
        notifications.push(v);
    }
}

/// A client that knows nothing of tasks (and has no elicitation) calls a
/// tool that runs only as a task, without `task`: the proxy runs the task
/// for it (task added, `tasks/result` waited on, the task's elicitation
/// answered) and the client gets the final report under its own id. Its
/// `--record` cassette replays with `elicit test`.
#[test]
fn proxy_runs_a_task_only_tool_for_a_client_that_runs_no_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("proxied-research.cassette.json");
    let mut proxy = Test::new()
        .args(["proxy", "--no-input", "--server-log", "/dev/null"])
        .args(["-a", "accept", "-a", "interpretation=snake", "--record"])
        .arg(&cassette)
        .server(&server_everything())
        .limit(Duration::from_secs(120))
        .feed()
        .spawn();
    ask_through(
        &mut proxy,
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "task-unaware", "version": "0"}}),
    );
    proxy.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = ask_through(&mut proxy, 2, "tools/list", json!({}));
    let listed = tools["result"]["tools"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|t| t["name"] == TOOL && t["execution"]["taskSupport"] == "required"),
        "{tools}"
    );
    let (done, seen) = ask_through_seeing(
        &mut proxy,
        3,
        "tools/call",
        json!({"name": TOOL, "arguments": {"topic": "python", "ambiguous": true}}),
    );
    assert!(done.get("error").is_none(), "{done}");
    assert!(
        report(&done["result"]).contains("# Research Report: python (snake)"),
        "{done}"
    );
    // The task is elicit's: the client hears nothing of it.
    assert!(
        !seen
            .iter()
            .any(|n| n["method"] == "notifications/tasks/status"),
        "{seen:?}"
    );
    hung_up(proxy);
    let recorded = recorded(&cassette);
    assert_eq!(recorded["tool"], TOOL, "{recorded}");
    assert_eq!(
        recorded["elicitations"][0]["answer"]["content"]["interpretation"],
        "snake"
    );
    replays(&cassette);
}

/// The argv of the fastmcp-tasks server (its own pinned venv, installed first).
fn fastmcp_tasks_server() -> Vec<String> {
    installed();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        root.join(".deps/venv-tasks/bin/python")
            .display()
            .to_string(),
        root.join("tests/servers/fastmcp_tasks_server.py")
            .display()
            .to_string(),
    ]
}

/// `elicit call` of a fastmcp-tasks tool over 2026-07-28, with `extra`.
fn call_task(tool: &str, extra: &[&str]) -> crate::common::test::Run {
    Test::new()
        .args([
            "call",
            "--protocol",
            "2026-07-28",
            "--no-input",
            "--timeout",
            "60s",
            "--server-log",
            "/dev/null",
            "--tool",
            tool,
        ])
        .args(extra)
        .server(&fastmcp_tasks_server())
        .run()
}

/// What a fastmcp-tasks tool reported: `{"action", "content"}`.
fn echoed(result: &Value) -> Value {
    serde_json::from_str(&report(result)).unwrap_or(Value::Null)
}

#[test]
fn an_extension_task_asks_twice_and_call_answers_each_with_tasks_update() {
    let run = call_task("task_steps", &["-a", "name=Ada", "-a", "color=green"]);
    let result = run.json();
    assert_eq!(
        echoed(&result),
        json!({"action": "accept", "content": {"name": "Ada", "color": "green"}}),
        "{result}"
    );
    assert_eq!(result["isError"], false);
}

#[test]
fn an_extension_task_declined_reaches_the_tool_as_declined() {
    let run = call_task("task_steps", &["-a", "decline"]);
    assert_eq!(
        echoed(&run.json()),
        json!({"action": "decline", "content": null})
    );
}

#[test]
fn an_extension_task_flow_records_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("steps.cassette.json");
    call_task(
        "task_steps",
        &[
            "-a",
            "name=Grace",
            "-a",
            "color=blue",
            "--record",
            cassette.to_str().unwrap(),
        ],
    )
    .stdout_has("Grace");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let asked = recorded["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{recorded}");
    assert_eq!(asked[0]["answer"]["content"]["name"], "Grace");
    assert_eq!(asked[1]["request"]["message"], "Hello Grace: your colour?");
    assert_eq!(asked[1]["answer"]["content"]["color"], "blue");
    assert_eq!(
        echoed(&recorded["result"])["content"],
        json!({"name": "Grace", "color": "blue"})
    );
    // A fresh task id (and so fresh question keys) on every run does not
    // fail the replay.
    replays(&cassette);
    // A server whose task asks something else fails it.
    let edited = std::fs::read_to_string(&cassette)
        .unwrap()
        .replace("Hello Grace: your colour?", "Hello Grace: your flavour?");
    std::fs::write(&cassette, edited).unwrap();
    Test::new()
        .args(["test", "--timeout", "60s"])
        .arg(&cassette)
        .failure()
        .run()
        .stderr_has("FAIL    ");
}

#[test]
fn lint_reads_the_questions_of_an_extension_task() {
    // A `tasks/get` reply of a task waiting for input, as the server sends
    // it: `resultType` "complete", `status` "input_required".
    let reply = json!({"jsonrpc": "2.0", "id": 4, "result": {
        "resultType": "complete", "taskId": "t1", "status": "input_required",
        "createdAt": "2026-07-28T10:00:00Z", "lastUpdatedAt": "2026-07-28T10:00:01Z",
        "ttlMs": 60000, "pollIntervalMs": 100,
        "inputRequests": {"t1:q1": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Your name?",
            "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["nope"]}}}}}});
    let run = Test::new()
        .args(["lint", "--format", "json", "-"])
        .stdin(reply.to_string())
        .status(1)
        .run();
    assert!(
        run.stdout().contains("required-not-a-property"),
        "{}",
        run.stdout()
    );
}

/// `elicit proxy --no-input ARGS` in front of the fastmcp-tasks server, fed
/// by the test as a client.
fn proxy_to_tasks_server(args: &[&str]) -> Running {
    Test::new()
        .args(["proxy", "--no-input", "--server-log", "/dev/null"])
        .args(args)
        .arg("--")
        .args(fastmcp_tasks_server())
        .feed()
        .limit(Duration::from_secs(180))
        .spawn()
}

/// The `_meta` a 2026-07-28 client sends with each request.
fn meta_2026(client: &str, capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 client that runs tasks of the extension itself (polling
/// `tasks/get`) but answers no elicitation: the proxy answers the task's
/// questions with `tasks/update` of its own, the client sees the task
/// working until it completes, and no question reaches it.
#[test]
fn proxy_answers_an_extension_tasks_questions_for_a_client_that_polls() {
    let mut proxy = proxy_to_tasks_server(&["-a", "name=Lin", "-a", "color=red"]);
    let meta = meta_2026(
        "polling-client",
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    let mut ask = |id: i64, method: &str, mut params: Value| -> Value {
        params["_meta"] = meta.clone();
        proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = proxy.next_json();
            assert_ne!(
                v["method"], "elicitation/create",
                "an elicitation reached the client"
            );
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v;
            }
        }
    };
    ask(1, "server/discover", json!({}));
    let created = ask(
        2,
        "tools/call",
        json!({"name": "task_steps", "arguments": {}}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut id = 3;
    let done = loop {
        let polled = ask(id, "tasks/get", json!({"taskId": task_id}));
        id += 1;
        let status = polled["result"]["status"].as_str().unwrap_or_default();
        assert_ne!(
            status, "input_required",
            "a question reached the client: {polled}"
        );
        assert!(polled["result"].get("inputRequests").is_none(), "{polled}");
        if status != "working" {
            break polled;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task never ended: {polled}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        echoed(&done["result"]["result"]),
        json!({"action": "accept", "content": {"name": "Lin", "color": "red"}})
    );
    hung_up(proxy);
}

/// A 2026-07-28 client that does not declare the tasks extension calls
/// `task_only` (task mode "required"), through the proxy with `answers`:
/// the proxy declares the extension for that call, polls the task, answers
/// its question with `tasks/update`, and the client gets the tool's result.
/// Returns that reply and what the proxy said.
fn task_only_through_proxy(answers: &[&str], record: Option<&std::path::Path>) -> (Value, String) {
    let mut args = answers.to_vec();
    if let Some(path) = record {
        args.extend(["--record", path.to_str().unwrap()]);
    }
    let mut proxy = proxy_to_tasks_server(&args);
    let meta = meta_2026("task-unaware", json!({}));
    let discovered = ask_through(&mut proxy, 1, "server/discover", json!({"_meta": meta}));
    assert!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discovered}"
    );
    // The 2026-07-28 list does not say the tool runs only as a task: the
    // server's refusal of the plain call does (-32021).
    let tools = ask_through(&mut proxy, 2, "tools/list", json!({"_meta": meta}));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "task_only"),
        "{tools}"
    );
    let done = ask_through(
        &mut proxy,
        3,
        "tools/call",
        json!({"name": "task_only", "arguments": {}, "_meta": meta}),
    );
    let run = hung_up(proxy);
    (done, run.stderr().to_string())
}

#[test]
fn proxy_runs_an_extension_task_for_a_client_that_declares_no_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("task-only.cassette.json");
    let (done, stderr) = task_only_through_proxy(&["-a", "name=Lin"], Some(&cassette));
    assert_ne!(done["result"]["resultType"], "task", "{done}");
    assert_eq!(
        echoed(&done["result"]),
        json!({"action": "accept", "content": {"name": "Lin"}}),
        "{done} {stderr}"
    );
    let recorded = recorded(&cassette);
    assert_eq!(recorded["protocol"], "2026-07-28", "{recorded}");
    assert_eq!(
        recorded["elicitations"][0]["answer"]["content"]["name"],
        "Lin"
    );
    replays(&cassette);
}

#[test]
fn proxy_declines_an_extension_tasks_question_for_a_client_that_declares_no_tasks() {
    let (done, stderr) = task_only_through_proxy(&["-a", "decline"], None);
    assert_eq!(
        echoed(&done["result"]),
        json!({"action": "decline", "content": null}),
        "{done} {stderr}"
    );
}
