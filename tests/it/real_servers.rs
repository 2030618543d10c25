//! `elicit call` against real MCP servers nobody here wrote: npm
//! `@modelcontextprotocol/server-everything` and a server built on PyPI
//! `mcp` with the SDK's own elicitation API. Both are installed, pinned, by
//! `scripts/install-test-servers` (into .deps/) on first use; when a
//! registry cannot be reached these tests fail loudly, never skip.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{answers, dumb_client, python_sdk_server, Test};

fn call(server: &[String], args: &[&str], log: &Path) -> Value {
    Test::new()
        .words("call --no-input --timeout 60s --server-log /dev/null --log")
        .arg(log)
        .args(args)
        .server(server)
        .run()
        .json()
}

/// The ElicitResults elicit sent, from its `--log`.
fn sent_results(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["dir"] == "send" && l["message"]["result"]["action"].is_string())
        .map(|l| l["message"]["result"].clone())
        .collect()
}

/// server-everything's tool result ends with "Raw result: <JSON>".
fn raw_result(result: &Value) -> Value {
    let blocks = result["content"].as_array().unwrap();
    let last = blocks.last().unwrap()["text"].as_str().unwrap();
    let at = last
        .find("Raw result: ")
        .expect("server-everything echoes the raw result");
    serde_json::from_str(&last[at + "Raw result: ".len()..]).unwrap()
}

#[test]
fn server_everything_form_receives_exactly_what_elicit_sent() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    let result = call(
        &crate::common::server_everything(),
        &[
            &["--tool", "trigger-elicitation-request"][..],
            &answers(&[
                "accept",
                "name=Ada",
                "check=yes",
                "untitledMultipleSelectEnum=Piano",
                "untitledMultipleSelectEnum=Drums",
                "titledSingleSelectEnum=Wonder Woman",
                "legacyTitledEnum=Dogs",
                "integer=7",
            ]),
        ]
        .concat(),
        &log,
    );
    let sent = sent_results(&log);
    assert_eq!(sent.len(), 1, "one elicitation: {sent:?}");
    assert_eq!(raw_result(&result), sent[0]);
    let content = &sent[0]["content"];
    assert_eq!(content["name"], "Ada");
    assert_eq!(content["check"], true);
    assert_eq!(content["integer"], json!(7));
    assert_eq!(
        content["untitledMultipleSelectEnum"],
        json!(["Piano", "Drums"])
    );
    assert_eq!(content["titledSingleSelectEnum"], "hero-3");
    assert_eq!(content["legacyTitledEnum"], "pet-2");
}

#[test]
fn server_everything_decline_and_cancel_reach_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    for word in ["decline", "cancel"] {
        let log = dir.path().join(format!("{word}.jsonl"));
        let result = call(
            &crate::common::server_everything(),
            &["--tool", "trigger-elicitation-request", "-a", word],
            &log,
        );
        assert_eq!(raw_result(&result), json!({"action": word}));
    }
}

#[test]
fn server_everything_url_mode() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("u.jsonl");
    let result = call(
        &crate::common::server_everything(),
        &[
            "--tool",
            "trigger-url-elicitation",
            "--arg",
            "url=https://example.com/connect?session=abc",
            "--arg",
            "elicitationId=el-42",
            "-a",
            "accept",
        ],
        &log,
    );
    assert_eq!(raw_result(&result), json!({"action": "accept"}));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("el-42") && text.contains("https://example.com/connect?session=abc"),
        "{text}"
    );
}

/// The Python tool results are one text block of compact JSON.
fn py_echo(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn python_sdk_form_url_and_decline_on_both_generations() {
    let dir = tempfile::tempdir().unwrap();
    for protocol in ["2025-11-25", "2026-07-28"] {
        let log = dir.path().join(format!("{protocol}.jsonl"));
        let result = call(
            &crate::common::python_sdk_server(),
            &[
                &["--protocol", protocol, "--tool", "ask_profile"][..],
                &answers(&["name=Ada", "age=36", "color=Green", "accept"]),
            ]
            .concat(),
            &log,
        );
        assert_eq!(
            py_echo(&result),
            json!({"action":"accept","content":{"name":"Ada","age":36,"subscribe":false,"color":"green"}}),
            "{protocol}"
        );
        assert_eq!(
            sent_results(&log).len(),
            usize::from(protocol == "2025-11-25"),
            "{protocol}: answers travel as responses only on the handshake"
        );

        let log = dir.path().join(format!("{protocol}-decline.jsonl"));
        let result = call(
            &crate::common::python_sdk_server(),
            &[
                "--protocol",
                protocol,
                "--tool",
                "ask_profile",
                "-a",
                "decline",
            ],
            &log,
        );
        assert_eq!(
            py_echo(&result),
            json!({"action":"decline","content":null}),
            "{protocol}"
        );

        let log = dir.path().join(format!("{protocol}-url.jsonl"));
        let result = call(
            &crate::common::python_sdk_server(),
            &[
                "--protocol",
                protocol,
                "--tool",
                "connect_account",
                "-a",
                "accept",
            ],
            &log,
        );
        assert_eq!(py_echo(&result)["action"], "accept", "{protocol}");
    }
}

#[test]
fn python_sdk_receives_the_raw_answer_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("raw.jsonl");
    let result = call(
        &crate::common::python_sdk_server(),
        &[
            "--protocol",
            "2025-11-25",
            "--tool",
            "ask_profile_raw",
            "-a",
            "name=Ada",
            "-a",
            "age=36",
            "-a",
            "color=red",
            "-a",
            "subscribe=yes",
        ],
        &log,
    );
    let sent = sent_results(&log);
    assert_eq!(py_echo(&result), sent[0]);
    assert!(
        sent[0]["content"]["age"].is_i64(),
        "integers go out as JSON integers"
    );
}

#[test]
fn python_sdk_url_required_error_is_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("req.jsonl");
    // The test server always raises -32042: elicit resolves it, retries once,
    // then reports the second refusal as a failure.
    Test::new()
        .args([
            "call",
            "--no-input",
            "--protocol",
            "2025-11-25",
            "--tool",
            "require_url",
            "-a",
            "accept",
            "--log",
        ])
        .arg(&log)
        .server(&python_sdk_server())
        .status(1)
        .run()
        .stderr_has("-32042 URL elicitation required (still, after its URL elicitation was resolved and the call retried once)");
    let calls = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"tools/call\""))
        .count();
    assert_eq!(calls, 2, "the call is retried exactly once");
}

/// [`dumb_client`] through `elicit proxy --no-input PROXY_ARGS -- SERVER`:
/// the reply to the last message.
fn dumb_proxy(proxy_args: &[&str], server: &[String], messages: &[Value]) -> Value {
    let proxy = Test::new()
        .args(["proxy", "--no-input", "--server-log", "/dev/null"])
        .args(proxy_args)
        .server(server);
    dumb_client(proxy, messages).pop().expect("a reply")
}

#[test]
fn proxy_gives_a_client_without_elicitation_the_server_everything_form() {
    let reply = dumb_proxy(
        &["-a", "accept", "-a", "name=Ada"],
        &crate::common::server_everything(),
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"dumb","version":"0"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}),
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-elicitation-request","arguments":{}}}),
        ],
    );
    let raw = raw_result(&reply["result"]);
    assert_eq!(raw["action"], "accept");
    assert_eq!(raw["content"]["name"], "Ada");
}

#[test]
fn proxy_resolves_2026_input_required_for_the_client() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"dumb","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}});
    let reply = dumb_proxy(
        &answers(&["accept", "name=Ada", "age=36", "color=blue"]),
        &crate::common::python_sdk_server(),
        &[
            json!({"jsonrpc":"2.0","id":"c-9","method":"tools/call","params":{"name":"ask_profile","arguments":{},"_meta":meta}}),
        ],
    );
    assert_eq!(
        reply["id"], "c-9",
        "the final result comes under the client's own id"
    );
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(
        py_echo(&reply["result"]),
        json!({"action":"accept","content":{"name":"Ada","age":36,"subscribe":false,"color":"blue"}})
    );
}

/// Under `--protocol auto` the Python SDK's imperative `ctx.elicit`
/// works at once: auto chooses the handshake, where it has a channel for
/// the elicitation, before the tool runs (and `-v` says so).
#[test]
fn auto_chooses_the_handshake_for_a_tool_that_needs_a_back_channel() {
    let out = Test::new()
        .args([
            "call",
            "-v",
            "--no-input",
            "--timeout",
            "60s",
            "--server-log",
            "/dev/null",
        ])
        .args(["--tool", "confirm_delete", "-a", "decline"])
        .server(&python_sdk_server())
        .run();
    out.stderr_has("(protocol 2025-11-25, initialize handshake)")
        .stderr_lacks("again");
    assert_eq!(py_echo(&out.json())["action"], "decline");
}
