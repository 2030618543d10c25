//! `elicit call` against a deterministic fake server of our own
//! (tests/servers/fake_server.py, Python stdlib only): both protocol
//! generations, server requests elicit does not handle, faults, logs, and no
//! child process left behind.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{Run, Test};

fn fake() -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/fake_server.py");
    vec!["python3".into(), script.display().to_string()]
}

/// `elicit call --no-input --timeout 10s ARGS -- fake SERVER_ARGS`.
fn call(args: &[&str], server_args: &[&str]) -> Test {
    Test::new()
        .args(["call", "--no-input", "--timeout", "10s"])
        .args(args)
        .server(&[fake(), server_args.iter().map(|a| a.to_string()).collect()].concat())
        .limit(Duration::from_secs(60))
}

/// The JSON the fake server put in its text result (the run succeeded).
fn echoed(a: &Run) -> Value {
    let out = a.json();
    serde_json::from_str(out["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn handshake_form_elicitation_is_answered_with_the_same_id() {
    let a = call(
        &[
            "--tool", "form", "-a", "name=Ada", "-a", "accept", "--arg", "count=2",
        ],
        &[],
    )
    .run();
    assert_eq!(
        echoed(&a),
        json!({"reply": {"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"name":"Ada","age":30}}}, "args": {"count": 2}})
    );
}

#[test]
fn handshake_declares_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    call(
        &[
            "--tool",
            "form",
            "-a",
            "decline",
            "--log",
            log.to_str().unwrap(),
        ],
        &[],
    )
    .stdout(concat!(
        r#"{"content":[{"type":"text","text":"{\"reply\":{\"jsonrpc\":\"2.0\",\"id\":0,"#,
        r#"\"result\":{\"action\":\"decline\"}},\"args\":{}}"}],"isError":false}"#,
        "\n"
    ))
    .run();
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let init = lines
        .iter()
        .find(|l| l["message"]["method"] == "initialize")
        .expect("initialize is logged");
    assert_eq!(init["dir"], "send");
    assert_eq!(
        init["message"]["params"]["capabilities"],
        json!({"elicitation":{"form":{},"url":{}}})
    );
    assert!(init["time"].as_str().unwrap().ends_with('Z'));
    let elicitation = lines
        .iter()
        .find(|l| l["message"]["method"] == "elicitation/create")
        .expect("the server's request is logged");
    assert_eq!(elicitation["dir"], "recv");
    let reply = lines
        .iter()
        .find(|l| l["dir"] == "send" && l["message"]["result"]["action"] == "decline")
        .expect("our decline is logged");
    assert_eq!(reply["message"]["id"], 0);
}

#[test]
fn url_elicitation_accept_sends_no_content() {
    let a = call(&["--tool", "url", "-a", "accept"], &[]).run();
    assert_eq!(
        echoed(&a),
        json!({"jsonrpc":"2.0","id":0,"result":{"action":"accept"}})
    );
}

#[test]
fn unhandled_server_requests_get_errors_and_ping_is_answered() {
    let a = call(
        &["--tool", "sampling", "-a", "name=Bo", "-a", "accept"],
        &[],
    )
    .run();
    let e = echoed(&a);
    assert_eq!(e["sampling"]["error"]["code"], -32601);
    assert_eq!(e["ping"]["result"], json!({}));
    assert_eq!(e["form"]["result"]["content"]["name"], "Bo");
}

#[test]
fn stateless_server_input_required_is_retried_with_responses_and_state() {
    let a = call(
        &["--tool", "form", "-a", "name=Ada", "-a", "accept"],
        &["--stateless"],
    )
    .run();
    assert_eq!(
        echoed(&a),
        json!({"responses": {"who": {"action":"accept","content":{"name":"Ada","age":30}}}, "requestState": "state-é-1", "args": {}})
    );
    let a = call(&["--tool", "url", "-a", "accept"], &["--stateless"]).run();
    assert_eq!(
        echoed(&a)["responses"],
        json!({"link": {"action": "accept"}})
    );
}

#[test]
fn explicit_protocol_choice_is_honoured() {
    call(
        &[
            "--protocol",
            "2026-07-28",
            "--tool",
            "form",
            "-a",
            "decline",
        ],
        &[],
    )
    .status(1)
    .run()
    .stderr_has("server/discover failed");
    let a = call(
        &["--protocol", "2025-06-18", "--tool", "form", "-a", "cancel"],
        &[],
    )
    .run();
    assert_eq!(echoed(&a)["reply"]["result"], json!({"action": "cancel"}));
}

#[test]
fn url_required_error_is_resolved_and_retried_once() {
    let a = call(&["--tool", "url_required", "-a", "accept"], &[]).run();
    assert_eq!(echoed(&a), json!({"calls": 2}));
    call(&["--tool", "url_required", "-a", "decline"], &[])
        .status(1)
        .run()
        .stderr_has("needs a URL elicitation first");
}

#[test]
fn a_server_that_keeps_asking_is_stopped() {
    call(
        &["--tool", "lost_state", "-a", "name=A", "-a", "accept"],
        &["--stateless"],
    )
    .status(1)
    .run()
    .stderr_has("asked for input 32 times");
}

#[test]
fn faults_are_clear_errors_and_leave_no_child_behind() {
    let dir = tempfile::tempdir().unwrap();
    // The timeout also bounds the handshake, and a loaded machine can take
    // a second to start Python: the cases that must time out get a few
    // seconds, the others a bound they never reach.
    for (tool, timeout, want) in [
        ("crash", "60s", "the server exited (exit status: 3)"),
        ("malformed", "60s", "not JSON-RPC"),
        ("hang", "5s", "within 5s (--timeout)"),
        (
            "chatty",
            "5s",
            "no reply to tools/call within 5s (--timeout)",
        ),
    ] {
        let pid_file = dir.path().join(format!("{tool}.pid"));
        Test::new()
            .env("FAKE_PID_FILE", &pid_file)
            .args([
                "call",
                "--no-input",
                "--timeout",
                timeout,
                "--tool",
                tool,
                "-a",
                "accept",
            ])
            .server(&fake())
            .limit(Duration::from_secs(90))
            .status(1)
            .run()
            .stdout_is("")
            .stderr_has(want);
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "{tool}: the server (pid {pid}) was left running");
    }
}

#[test]
fn missing_answers_without_a_terminal_stop_the_call() {
    call(&["--tool", "form"], &[])
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("name, age, tags")
        .stderr_has("--answer");
}

#[test]
fn no_tool_without_a_terminal_lists_the_tools() {
    call(&[], &[])
        .status(2)
        .run()
        .stderr_has("form, url, sampling");
}

#[test]
fn bad_arguments_and_commands() {
    call(&["--tool", "form", "--arg", "count=many"], &[])
        .status(2)
        .run()
        .stderr_has("count");
    Test::new()
        .args(["call", "--tool", "x", "--", "/no/such/server"])
        .status(1)
        .run()
        .stderr_has("cannot start server");
}

#[test]
fn server_stderr_goes_to_the_server_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    Test::new()
        .args([
            "call",
            "--no-input",
            "--tool",
            "crash",
            "--server-log",
            log.to_str().unwrap(),
        ])
        .server(&["sh", "-c", "echo from-the-server >&2; exit 5"])
        .limit(Duration::from_secs(30))
        .status(1)
        .run()
        .stderr_lacks("from-the-server");
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("from-the-server"));
}

#[test]
fn ctrl_c_while_waiting_for_the_server_ends_the_call_and_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("hang.pid");
    let called = dir.path().join("called");
    let elicit = Test::new()
        .env("FAKE_PID_FILE", &pid_file)
        .env("FAKE_HANG_MARK", &called)
        .words("call --no-input --timeout 60s --tool hang -a accept")
        .server(&fake())
        .status(1)
        .spawn();
    crate::common::wait_until(Duration::from_secs(10), "the call under way", || {
        called.exists()
    });
    elicit.signal(libc::SIGINT);
    elicit.wait().stderr_has("interrupted");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    crate::common::wait_until(Duration::from_secs(5), "the server ended", || unsafe {
        libc::kill(pid, 0) != 0
    });
}

#[test]
fn an_unknown_tool_is_refused_before_calling_with_the_nearest_names() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    call(&["--tool", "summ", "--log", log.to_str().unwrap()], &[])
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("the server has no tool named \"summ\"; nearest: sum,");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(!log.contains("tools/call"), "the tool was called anyway");
}

#[test]
fn a_missing_required_argument_is_named_before_calling() {
    call(&["--tool", "sum", "--arg", "a=2"], &[])
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("the tool sum needs the argument(s) b (required by its inputSchema)");
    let a = call(&["--tool", "sum", "--arg", "a=2", "--arg", "b=3"], &[]).run();
    assert_eq!(echoed(&a), json!({"sum": 5}));
}

#[test]
fn bad_args_json_names_the_flag() {
    call(&["--tool", "sum", "--args", "{message:1}"], &[])
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("--args: invalid JSON at line 1, column 2");
}

#[test]
fn verbose_says_the_protocol_in_words() {
    call(&["-v", "--tool", "sum", "--args", r#"{"a":1,"b":1}"#], &[])
        .stdout(
            "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"sum\\\":2}\"}],\"isError\":false}\n",
        )
        .run()
        .stderr_has("connected to fake (protocol 2025-11-25, initialize handshake)")
        .stderr_lacks("Handshake(");
}

#[test]
fn errors_do_not_stutter() {
    call(&["--tool", "crash"], &[])
        .status(1)
        .run()
        .stderr_lacks("server: ");
}
