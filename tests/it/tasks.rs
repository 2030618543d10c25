//! Tools that run as tasks (2025-11-25, SEP-1686) against the pinned
//! server-everything, whose `simulate-research-query` requires a task and,
//! with `ambiguous`, asks for a clarification while its task is in
//! `input_required`: through `elicit call`, recorded and replayed by
//! `elicit test`, explored, and through `elicit proxy` for a client that
//! runs the task itself.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{elicit_command, server_everything, wait_at_most};

const TOOL: &str = "simulate-research-query";

#[test]
fn a_task_that_asks_works_through_call_and_records_replays_and_explores() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("research.cassette.json");
    let out = elicit_command()
        .args(["call", "--record"])
        .arg(&cassette)
        .args([
            "--tool",
            TOOL,
            "--arg",
            "topic=rust",
            "--arg",
            "ambiguous=true",
        ])
        .args(["-a", "accept", "-a", "interpretation=technical", "--"])
        .args(server_everything())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("**Clarification**: technical"), "{text}");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let asked = &recorded["elicitations"][0];
    assert!(
        asked["request"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"].is_string(),
        "the elicitation belongs to the task: {asked}"
    );
    assert_eq!(asked["answer"]["content"]["interpretation"], "technical");

    // A new task id every run: the replay passes all the same.
    let replay = elicit_command()
        .arg("test")
        .arg(&cassette)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );

    let explore = elicit_command()
        .args(["test", "--explore", "-j", "4", "--format", "json"])
        .arg(&cassette)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert_eq!(
        explore.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&explore.stderr)
    );
    let report: Value = serde_json::from_slice(&explore.stdout).unwrap();
    let declined = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"].as_str().unwrap().ends_with("decline-at-1"))
        .expect("a decline variant");
    assert_eq!(declined["class"], "result");
    assert!(
        declined["details"][0]
            .as_str()
            .unwrap()
            .contains("User declined"),
        "{declined}"
    );
}

#[test]
fn a_client_running_a_task_through_proxy_gets_its_elicitation_answered() {
    let mut argv = vec![
        "proxy",
        "--no-input",
        "-a",
        "accept",
        "-a",
        "interpretation=historical",
        "--",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    argv.extend(server_everything());
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_elicit"))
        .args(&argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = proxy.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let next = |id: i64| -> Value {
        loop {
            let v = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("a reply in time");
            assert_ne!(v["method"], "elicitation/create", "the proxy answers it");
            if v["id"] == id {
                return v;
            }
        }
    };
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tasks", "version": "0"}}}),
    );
    next(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": TOOL, "arguments": {"topic": "rust", "ambiguous": true}, "task": {"ttl": 60000}}}),
    );
    let created = next(2);
    let task = created["result"]["task"]["taskId"].clone();
    assert!(task.is_string(), "{created}");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task}}));
    let done = next(3);
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("**Clarification**: historical"), "{text}");
    drop(stdin);
    wait_at_most(&mut proxy, Duration::from_secs(30));
}
