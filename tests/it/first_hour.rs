//! A server author's first hour: `elicit call` with no `--protocol` flag
//! against servers built on the Python frameworks (PyPI `fastmcp` 4.2.3 and
//! `mcp` 2.3.0, pinned by scripts/install-test-servers into .deps/), over
//! stdio and Streamable HTTP on 127.0.0.1, plus a stdlib server that fails
//! in words no framework uses (tests/servers/two_era_server.py).

use crate::common::installed;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_elicit");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> String {
    installed();
    root().join(".deps/venv/bin/python").display().to_string()
}

fn server_file(name: &str) -> String {
    root()
        .join("tests/servers")
        .join(name)
        .display()
        .to_string()
}

fn fastmcp() -> Vec<String> {
    vec![python(), server_file("fastmcp_server.py")]
}

fn py_mcp() -> Vec<String> {
    vec![python(), server_file("py_elicit_server.py")]
}

fn two_era() -> Vec<String> {
    vec!["python3".into(), server_file("two_era_server.py")]
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `elicit call ARGS -- SERVER...` (or `elicit call ARGS URL` when `server`
/// is one `http://` URL), with no terminal and no `--protocol` flag.
fn call(args: &[&str], server: &[String]) -> Out {
    let mut cmd = Command::new(BIN);
    cmd.args(["call", "--timeout", "60s", "--server-log", "/dev/null"])
        .args(args);
    if server.len() == 1 && server[0].starts_with("http://") {
        cmd.arg(&server[0]);
    } else {
        cmd.arg("--").args(server);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let limit = Duration::from_secs(120);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("elicit call {args:?} did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The JSON a test tool put in its result's one text block.
fn echoed(out: &Out) -> Value {
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    let result: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", out.stdout));
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str(text).unwrap()
}

/// A server process on 127.0.0.1, killed when dropped.
struct HttpServer(Child, u16);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl HttpServer {
    /// `python SCRIPT PORT` on a free port, once it listens.
    fn start(script: &str) -> HttpServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(python())
            .arg(server_file(script))
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the test server");
        let server = HttpServer(child, port);
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the test server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn url(&self) -> Vec<String> {
        vec![format!("http://127.0.0.1:{}/mcp", self.1)]
    }
}

const FORM_ARGS: [&str; 10] = [
    "--tool",
    "form_ctx",
    "-a",
    "name=Bo",
    "-a",
    "age=30",
    "-a",
    "color=red",
    "-a",
    "accept",
];

fn assert_form_accepted(out: &Out) {
    assert_eq!(
        echoed(out),
        json!({"action":"accept","content":{"name":"Bo","age":30,"color":"red"}})
    );
    assert!(!out.stderr.contains("unused answer"), "{}", out.stderr);
}

/// FastMCP's `ctx.elicit` fails on 2026-07-28 connections before asking:
/// `--protocol auto` calls the tool again over the handshake, where it works.
#[test]
fn fastmcp_form_over_stdio_with_no_protocol_flag() {
    assert_form_accepted(&call(&FORM_ARGS, &fastmcp()));
}

#[test]
fn fastmcp_form_over_streamable_http_with_no_protocol_flag() {
    let server = HttpServer::start("fastmcp_server.py");
    assert_form_accepted(&call(&FORM_ARGS, &server.url()));
}

#[test]
fn fastmcp_choice_url_and_decline_tools_work_with_no_protocol_flag() {
    let server = fastmcp();
    let pick = call(
        &["--tool", "pick_color", "-a", "value=green", "-a", "accept"],
        &server,
    );
    assert_eq!(echoed(&pick), json!({"action":"accept","content":"green"}));
    let url = call(&["--tool", "connect_url", "-a", "accept"], &server);
    assert_eq!(echoed(&url), json!({"action":"accept","content":null}));
    let declined = call(&["--tool", "always_decline", "-a", "decline"], &server);
    assert_eq!(
        echoed(&declined),
        json!({"action":"decline","content":null})
    );
}

/// A tool that asks with `input_required` keeps 2026-07-28: nothing is
/// called twice, and `-v` says which protocol and why.
#[test]
fn fastmcp_guard_pattern_stays_on_2026_07_28() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let path = log.path().to_str().unwrap();
    let out = call(
        &[
            "-v",
            "--log",
            path,
            "--tool",
            "guard_form",
            "-a",
            "name=Bo",
            "-a",
            "accept",
        ],
        &fastmcp(),
    );
    assert_eq!(
        echoed(&out),
        json!({"action":"accept","content":{"name":"Bo"}})
    );
    assert!(
        out.stderr.contains(
            "(protocol 2026-07-28, stateless): --protocol auto, and server/discover lists 2026-07-28"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("again"), "{}", out.stderr);
    let sent = std::fs::read_to_string(log.path()).unwrap();
    assert!(!sent.contains("\"initialize\""), "{sent}");
}

#[test]
fn verbose_says_why_a_call_is_made_again_over_the_handshake() {
    let mut args = vec!["-v"];
    args.extend_from_slice(&FORM_ARGS);
    let out = call(&args, &fastmcp());
    assert_form_accepted(&out);
    for said in [
        "(protocol 2026-07-28, stateless): --protocol auto",
        "the tool returned an error result on 2026-07-28 before the server asked anything",
        "calling it again over the initialize handshake (2025-11-25)",
        "connected again (protocol 2025-11-25, initialize handshake)",
    ] {
        assert!(
            out.stderr.contains(said),
            "{said:?} not in:\n{}",
            out.stderr
        );
    }
}

/// PyPI `mcp` 2.3.0: the imperative `ctx.elicit` (handshake only) and the
/// declarative resolver (2026-07-28 `input_required`), stdio and HTTP.
#[test]
fn python_sdk_tools_work_with_no_protocol_flag_over_stdio_and_http() {
    let http = HttpServer::start("py_http_server.py");
    for server in [py_mcp(), http.url()] {
        let confirm = call(
            &[
                "--tool",
                "confirm_delete",
                "-a",
                "confirm=true",
                "-a",
                "accept",
            ],
            &server,
        );
        assert_eq!(
            echoed(&confirm),
            json!({"action":"accept","content":{"confirm":true}})
        );
        let profile = call(
            &[
                "-v",
                "--tool",
                "ask_profile",
                "-a",
                "name=Ada",
                "-a",
                "age=36",
                "-a",
                "color=blue",
                "-a",
                "accept",
            ],
            &server,
        );
        assert_eq!(
            echoed(&profile),
            json!({"action":"accept","content":{"name":"Ada","age":36,"subscribe":false,"color":"blue"}})
        );
        assert!(!profile.stderr.contains("again"), "{}", profile.stderr);
        let url = call(&["--tool", "connect_account", "-a", "accept"], &server);
        assert_eq!(echoed(&url)["action"], "accept");
    }
}

/// The retry is decided on protocol facts: a failure in words no framework
/// uses, before the server asked anything, is tried again over the handshake.
#[test]
fn any_wording_of_an_early_failure_is_tried_over_the_handshake() {
    let out = call(
        &["--tool", "ask", "-a", "name=Bo", "-a", "accept"],
        &two_era(),
    );
    assert_eq!(
        echoed(&out),
        json!({"reply":{"action":"accept","content":{"name":"Bo"}},"era":"handshake"})
    );
}

/// A tool that asked through `input_required` and then failed keeps its
/// failure: calling it again elsewhere would ask twice.
#[test]
fn a_failure_after_the_server_asked_is_not_tried_again() {
    let out = call(
        &["--tool", "asks_then_fails", "-a", "name=Bo", "-a", "accept"],
        &two_era(),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("that name is taken"), "{}", out.stdout);
    assert!(out.stdout.contains("stateless"), "{}", out.stdout);
}

/// A JSON-RPC error about the request itself is not a lifecycle problem.
#[test]
fn invalid_params_are_not_tried_again() {
    let out = call(&["-v", "--tool", "bad_params"], &two_era());
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("-32602 Invalid params"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("again"), "{}", out.stderr);
}

/// A tool that fails before any form came: the failure is the news, not a
/// line per scripted answer that no form had.
#[test]
fn no_unused_answer_warnings_when_the_tool_failed_before_any_form() {
    let out = call(
        &["--tool", "broken", "-a", "name=Bo", "-a", "accept"],
        &two_era(),
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("the disk is full"), "{}", out.stdout);
    assert!(!out.stderr.contains("unused answer"), "{}", out.stderr);
}

/// `elicit ARGS` with `input` on stdin and no terminal.
fn resolve(args: &[&str], input: &str) -> Out {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn form_request(schema: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
        "params": {"mode": "form", "message": "m", "requestedSchema": schema}})
    .to_string()
}

/// What the Python SDK sends for a pydantic model (a top-level `title`),
/// and the annotations the spec allows, pass without a word.
#[test]
fn a_pydantic_form_and_a_schema_with_dollar_schema_resolve_with_nothing_on_stderr() {
    let pydantic =
        std::fs::read_to_string(root().join("fixtures/python-mcp/form.request.json")).unwrap();
    let out = resolve(
        &[
            "-a",
            "name=A",
            "-a",
            "age=3",
            "-a",
            "color=red",
            "-a",
            "accept",
        ],
        &pydantic,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    let annotated = form_request(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Profile", "description": "Who you are", "additionalProperties": false,
        "type": "object", "properties": {"name": {"type": "string"}}}));
    let out = resolve(&["-a", "name=A", "-a", "accept"], &annotated);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
}

/// Anything else at the top level still warns, once per schema: a stream
/// of the same request warns on its first line only.
#[test]
fn other_top_level_keywords_warn_once_per_schema() {
    let odd = form_request(json!({"type": "object", "additionalProperties": true,
        "properties": {"name": {"type": "string"}}}));
    let out = resolve(
        &["--lines", "-a", "name=A", "-a", "accept"],
        &format!("{odd}\n{odd}\n{odd}\n"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
    assert_eq!(
        out.stderr
            .matches("keyword \"additionalProperties\" is not part of an MCP form schema")
            .count(),
        1,
        "{}",
        out.stderr
    );
}

/// In a session, a server that asks the same form twice is warned about once.
#[test]
fn a_session_warns_once_per_schema() {
    let out = call(
        &[
            "--protocol",
            "2025-11-25",
            "--tool",
            "asks_twice",
            "-a",
            "name=Bo",
            "-a",
            "accept",
        ],
        &two_era(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("keyword \"x-layout\"").count(),
        1,
        "{}",
        out.stderr
    );
}
