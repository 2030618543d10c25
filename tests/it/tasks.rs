//! Tools that run as tasks and ask for input (2025-11-25 tasks), against
//! npm server-everything's `simulate-research-query`: a tool that requires
//! task augmentation and, when the topic is ambiguous, sends an elicitation
//! tied to its task while the client waits on `tasks/result`. Through
//! `call`, `--record` and `elicit test`, and `proxy` for a client that runs
//! the task itself.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{server_everything, Run, Running, Test};

const TOOL: &str = "simulate-research-query";

fn report(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn call(extra: &[&str]) -> Run {
    let mut args = vec![
        "call",
        "--no-input",
        "--timeout",
        "60s",
        "--server-log",
        "/dev/null",
        "--tool",
        TOOL,
        "--arg",
        "topic=python",
        "--arg",
        "ambiguous=true",
    ];
    args.extend_from_slice(extra);
    Test::new().args(args).server(&server_everything()).run()
}

#[test]
fn a_task_that_asks_gets_the_answer_through_call() {
    let out = call(&["-a", "accept", "-a", "interpretation=programming"]);
    assert!(out.code == 0, "{}", out.stderr.as_str());
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
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
    let out = call(&["-a", "decline"]);
    assert!(out.code == 0, "{}", out.stderr.as_str());
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
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
    let out = call(&[
        "-a",
        "accept",
        "-a",
        "interpretation=snake",
        "--record",
        cassette.to_str().unwrap(),
    ]);
    assert!(out.code == 0, "{}", out.stderr.as_str());
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let asked = recorded["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{recorded}");
    assert_eq!(asked[0]["answer"]["content"]["interpretation"], "snake");
    // A fresh task id on every run does not fail the replay.
    Test::new()
        .args(["test", "--timeout", "60s"])
        .arg(&cassette)
        .run()
        .success();
}

/// A client that runs the task itself (task-augmented `tools/call`, then
/// `tasks/result`) but has no elicitation: the proxy answers the task's
/// elicitation on its behalf, and nothing of it reaches the client.
#[test]
fn proxy_answers_a_task_elicitation_for_a_client_that_runs_the_task() {
    let mut proxy = Test::new()
        .args([
            "proxy",
            "--no-input",
            "--server-log",
            "/dev/null",
            "-a",
            "accept",
        ])
        .args(["-a", "interpretation=comedy"])
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
    let run = proxy.wait_within(Duration::from_secs(30));
    assert!(matches!(run.code, 0 | 143), "proxy exit {}", run.code);
}
