//! A server author's first hour: `elicit call` with no `--protocol` flag
//! against servers built on the Python frameworks (PyPI `fastmcp` 4.2.3 and
//! `mcp` 2.3.0, pinned by scripts/install-test-servers into .deps/), over
//! stdio and Streamable HTTP on 127.0.0.1, plus a stdlib server that fails
//! in words no framework uses (tests/servers/two_era_server.py).

use crate::common::installed;
use crate::common::{answers, Run, Test};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

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

/// `elicit call ARGS -- SERVER...` (or `elicit call ARGS URL` when `server`
/// is one `http://` URL), with no terminal and no `--protocol` flag.
fn call(args: &[&str], server: &[String]) -> Test {
    let test = Test::new()
        .args(["call", "--timeout", "60s", "--server-log", "/dev/null"])
        .args(args);
    if server.len() == 1 && server[0].starts_with("http://") {
        test.arg(&server[0])
    } else {
        test.server(server)
    }
}

/// The JSON a test tool put in its result's one text block.
fn echoed(out: &Run) -> Value {
    assert_eq!(
        out.code(),
        0,
        "stdout: {}\nstderr: {}",
        out.stdout(),
        out.stderr()
    );
    let result: Value = serde_json::from_str(out.stdout())
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", out.stdout()));
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
        crate::common::wait_listening(port, Duration::from_secs(60), "the test server");
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

fn assert_form_accepted(out: &Run) {
    assert_eq!(
        echoed(out),
        json!({"action":"accept","content":{"name":"Bo","age":30,"color":"red"}})
    );
    assert!(!out.stderr().contains("unused answer"), "{}", out.stderr());
}

/// FastMCP's `ctx.elicit` works only over the handshake, which
/// `--protocol auto` chooses before any tool runs.
#[test]
fn fastmcp_form_over_stdio_with_no_protocol_flag() {
    assert_form_accepted(&call(&FORM_ARGS, &fastmcp()).run());
}

#[test]
fn fastmcp_form_over_streamable_http_with_no_protocol_flag() {
    let server = HttpServer::start("fastmcp_server.py");
    assert_form_accepted(&call(&FORM_ARGS, &server.url()).run());
}

#[test]
fn fastmcp_choice_url_and_decline_tools_work_with_no_protocol_flag() {
    let server = fastmcp();
    let pick = call(
        &["--tool", "pick_color", "-a", "value=green", "-a", "accept"],
        &server,
    )
    .run();
    assert_eq!(echoed(&pick), json!({"action":"accept","content":"green"}));
    let url = call(&["--tool", "connect_url", "-a", "accept"], &server).run();
    assert_eq!(echoed(&url), json!({"action":"accept","content":null}));
    let declined = call(&["--tool", "always_decline", "-a", "decline"], &server).run();
    assert_eq!(
        echoed(&declined),
        json!({"action":"decline","content":null})
    );
}

/// A guard-pattern tool (it asks with `input_required`) is refused on the
/// handshake before it does anything, and called over 2026-07-28, where
/// it works; `-v` says which protocol and why.
#[test]
fn fastmcp_guard_pattern_is_called_over_2026_07_28_after_the_handshake_refused_it() {
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
    )
    .run();
    assert_eq!(
        echoed(&out),
        json!({"action":"accept","content":{"name":"Bo"}})
    );
    for said in [
        "(protocol 2025-11-25, initialize handshake): --protocol auto, and the server accepted the initialize handshake",
        "because the tool asks with input_required",
        "calling it again over 2026-07-28",
        "connected again (protocol 2026-07-28, stateless)",
    ] {
        assert!(out.stderr().contains(said), "{said:?} not in:\n{}", out.stderr());
    }
    let sent = std::fs::read_to_string(log.path()).unwrap();
    assert!(sent.contains("\"server/discover\""), "{sent}");
}

#[test]
fn verbose_says_which_protocol_and_why() {
    let mut args = vec!["-v"];
    args.extend_from_slice(&FORM_ARGS);
    let out = call(&args, &fastmcp()).run();
    assert_form_accepted(&out);
    assert!(
        out.stderr().contains(
            "(protocol 2025-11-25, initialize handshake): --protocol auto, and the server accepted the initialize handshake, where it can ask in every way"
        ),
        "{}",
        out.stderr()
    );
    assert!(!out.stderr().contains("again"), "{}", out.stderr());
}

fn ledger_lines(ledger: &tempfile::NamedTempFile) -> Vec<String> {
    std::fs::read_to_string(ledger.path())
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The class of issue #29's blocker: a tool that did its work and then
/// failed is never called again, over stdio or HTTP, with no flag.
#[test]
fn a_tool_that_charged_and_then_failed_runs_once() {
    let http = HttpServer::start("fastmcp_server.py");
    for server in [fastmcp(), http.url()] {
        let ledger = tempfile::NamedTempFile::new().unwrap();
        let arg = format!("ledger={}", ledger.path().display());
        let out = call(&["-v", "--tool", "charge", "--arg", &arg], &server)
            .status(1)
            .run();
        assert!(
            out.stdout()
                .contains("the card was declined after the charge"),
            "{}",
            out.stdout()
        );
        assert_eq!(ledger_lines(&ledger), ["charged 5"], "{}", out.stderr());
        assert!(!out.stderr().contains("again"), "{}", out.stderr());
    }
}

/// A tool that charges, then asks, then charges nothing more: once; and a
/// guard-pattern tool that asks first and charges on the answer: once too,
/// although its call is made on two connections.
#[test]
fn tools_that_charge_around_an_elicitation_run_once() {
    let ledger = tempfile::NamedTempFile::new().unwrap();
    let arg = format!("ledger={}", ledger.path().display());
    let out = call(
        &[
            "--tool",
            "charge_then_ask",
            "--arg",
            &arg,
            "-a",
            "value=true",
            "-a",
            "accept",
        ],
        &fastmcp(),
    )
    .run();
    assert_eq!(echoed(&out), json!({"action":"accept","content":true}));
    assert_eq!(ledger_lines(&ledger), ["charged 5"]);
    let ledger = tempfile::NamedTempFile::new().unwrap();
    let arg = format!("ledger={}", ledger.path().display());
    let out = call(
        &[
            "-v",
            "--tool",
            "guard_charge",
            "--arg",
            &arg,
            "-a",
            "ok=true",
            "-a",
            "accept",
        ],
        &fastmcp(),
    )
    .status(1)
    .run();
    out.stdout_has("the card was declined after the charge");
    assert!(
        out.stderr().contains("calling it again over 2026-07-28"),
        "{}",
        out.stderr()
    );
    assert_eq!(ledger_lines(&ledger), ["charged 5"], "{}", out.stderr());
}

/// A refusal that does not say the tool needs input_required stands: the
/// tool may have done its work before the server refused.
#[test]
fn a_refusal_that_names_nothing_is_not_tried_again() {
    let out = call(&["-v", "--tool", "refuses"], &two_era())
        .status(1)
        .run();
    assert!(
        out.stderr()
            .contains("Internal error after the work was done"),
        "{}",
        out.stderr()
    );
    assert!(!out.stderr().contains("again"), "{}", out.stderr());
}

/// `--server-log` keeps what every server run of the call said.
#[test]
fn the_server_log_keeps_both_runs_of_a_call_made_again() {
    let log = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(log.path(), "from an earlier call\n").unwrap();
    Test::new()
        .args(["call", "--timeout", "60s", "--server-log"])
        .arg(log.path())
        .args(["--tool", "asks_then_fails", "-a", "name=Bo", "-a", "accept"])
        .server(&two_era())
        .status(1)
        .run()
        .stdout_has("that name is taken");
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(text.matches("two-era server started").count(), 2, "{text}");
    assert!(!text.contains("from an earlier call"), "{text}");
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
        )
        .run();
        assert_eq!(
            echoed(&confirm),
            json!({"action":"accept","content":{"confirm":true}})
        );
        let profile = call(
            &[
                &["-v", "--tool", "ask_profile"][..],
                &answers(&["name=Ada", "age=36", "color=blue", "accept"]),
            ]
            .concat(),
            &server,
        )
        .run();
        assert_eq!(
            echoed(&profile),
            json!({"action":"accept","content":{"name":"Ada","age":36,"subscribe":false,"color":"blue"}})
        );
        assert!(!profile.stderr().contains("again"), "{}", profile.stderr());
        let url = call(&["--tool", "connect_account", "-a", "accept"], &server).run();
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
    )
    .run();
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
    )
    .status(1)
    .run();
    assert!(
        out.stdout().contains("that name is taken"),
        "{}",
        out.stdout()
    );
    assert!(out.stdout().contains("stateless"), "{}", out.stdout());
}

/// A JSON-RPC error about the request itself is not a lifecycle problem.
#[test]
fn invalid_params_are_not_tried_again() {
    let out = call(&["-v", "--tool", "bad_params"], &two_era())
        .status(1)
        .run();
    assert!(
        out.stderr().contains("-32602 Invalid params"),
        "{}",
        out.stderr()
    );
    assert!(!out.stderr().contains("again"), "{}", out.stderr());
}

/// A tool that fails before any form came: the failure is the news, not a
/// line per scripted answer that no form had.
#[test]
fn no_unused_answer_warnings_when_the_tool_failed_before_any_form() {
    let out = call(
        &["--tool", "broken", "-a", "name=Bo", "-a", "accept"],
        &two_era(),
    )
    .status(1)
    .run();
    assert!(
        out.stdout().contains("the disk is full"),
        "{}",
        out.stdout()
    );
    assert!(!out.stderr().contains("unused answer"), "{}", out.stderr());
}

/// `elicit ARGS` with `input` on stdin and no terminal.
fn resolve(args: &[&str], input: &str) -> Test {
    Test::new().args(args).stdin(input)
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
    )
    .stderr("")
    .run();
    assert_eq!(out.json()["result"]["action"], "accept");
    let annotated = form_request(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Profile", "description": "Who you are", "additionalProperties": false,
        "type": "object", "properties": {"name": {"type": "string"}}}));
    resolve(&["-a", "name=A", "-a", "accept"], &annotated)
        .stdout("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":\"accept\",\"content\":{\"name\":\"A\"}}}\n")
        .stderr("")
        .run();
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
    )
    .run();
    assert_eq!(out.stdout().lines().count(), 3, "{}", out.stdout());
    assert_eq!(
        out.stderr()
            .matches("keyword \"additionalProperties\" is not part of an MCP form schema")
            .count(),
        1,
        "{}",
        out.stderr()
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
    )
    .run();
    // Both questions were answered.
    let result = out.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains(r#""replies":[{"action":"accept""#),
        "{result}"
    );
    assert_eq!(
        out.stderr().matches("keyword \"x-layout\"").count(),
        1,
        "{}",
        out.stderr()
    );
}

/// A wrong scripted value for a required field is one problem, said once:
/// the real reason, not also "no --answer gave it a value".
#[test]
fn an_invalid_answer_to_a_required_field_is_one_error() {
    let req = form_request(json!({"type": "object",
        "properties": {"name": {"type": "string", "minLength": 3}, "age": {"type": "integer"}},
        "required": ["name", "age"]}));
    let out = resolve(&["-a", "name=Hi", "-a", "accept"], &req)
        .status(2)
        .run();
    assert_eq!(out.stdout(), "");
    assert!(
        out.stderr()
            .contains("  - name: \"Hi\" is too short: at least 3 characters"),
        "{}",
        out.stderr()
    );
    assert_eq!(
        out.stderr().matches("  - name:").count(),
        1,
        "{}",
        out.stderr()
    );
    // A field with no value at all still says so.
    assert!(
        out.stderr()
            .contains("  - age: required, has no default, and no --answer gave it a value"),
        "{}",
        out.stderr()
    );
}

#[test]
fn timeout_and_prompt_timeout_together_are_one_usage_error() {
    let req = form_request(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    let out = resolve(
        &["--timeout", "1s", "--prompt-timeout", "2s", "-a", "a=x"],
        &req,
    )
    .status(2)
    .run();
    assert_eq!(out.stdout(), "");
    assert_eq!(
        out.stderr(),
        "elicit: --timeout and --prompt-timeout are the same setting here: give one\n"
    );
}

fn fake() -> Vec<String> {
    vec!["python3".into(), server_file("fake_server.py")]
}

/// `call -e`: 3 when an elicitation of the call was declined, 4 when one
/// was cancelled, the result still printed; without -e the tool decides.
#[test]
fn call_exit_status_says_decline_and_cancel() {
    // The exit status is checked as each run ends; whether the result was
    // printed is given back.
    let printed = |args: &[&str], server: &[String], status: i32| {
        let out = call(args, server).status(status).run();
        !out.stdout().is_empty()
    };
    assert!(printed(
        &["-e", "--tool", "form", "-a", "decline"],
        &fake(),
        3
    ));
    assert!(printed(
        &["-e", "--tool", "form", "-a", "cancel"],
        &fake(),
        4
    ));
    assert!(printed(
        &["-e", "--tool", "form", "-a", "name=Bo", "-a", "accept"],
        &fake(),
        0
    ));
    assert!(printed(&["--tool", "form", "-a", "decline"], &fake(), 0));
    // Over 2026-07-28's input_required too.
    let stateless = vec![
        "python3".into(),
        server_file("fake_server.py"),
        "--stateless".into(),
    ];
    assert!(printed(
        &["--exit-status", "--tool", "form", "-a", "decline"],
        &stateless,
        3
    ));
    // A declined -32042 URL elicitation fails the call: the decline decides.
    call(&["-e", "--tool", "url_required", "-a", "decline"], &fake())
        .status(3)
        .stdout("")
        .run()
        .stderr_has("tools/call needs a URL elicitation first, and it was declined");
}

/// The `call --help` examples that name the README's example server
/// (server-everything over Streamable HTTP on port 3001) run against it.
#[test]
fn call_help_examples_run_against_the_readme_server() {
    installed();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child =
        Command::new("node")
            .arg(root().join(
                ".deps/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
    let _server = HttpServer(child, port);
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "server-everything did not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let help = Test::new()
        .args(["call", "--help"])
        .run()
        .stdout()
        .to_string();
    let mut ran = 0;
    for line in help.lines().map(str::trim) {
        if !(line.starts_with("elicit call ") && line.contains("http://127.0.0.1:3001/mcp")) {
            continue;
        }
        let line = line.replace("127.0.0.1:3001", &format!("127.0.0.1:{port}"));
        let words: Vec<&str> = line.split_whitespace().skip(1).collect();
        Test::new()
            .args(&words)
            .arg("--no-input")
            .run()
            .stdout_has("The sum of 1 and 2 is 3.");
        ran += 1;
    }
    assert!(
        ran >= 1,
        "no call --help example names the README's server:\n{help}"
    );
}

/// A server command written without `--` gets the line with `--` as a tip,
/// not clap's bare "unexpected argument".
#[test]
fn a_server_command_without_dashes_gets_a_hint() {
    let out = Test::new()
        .args(["call", "--tool", "t", "./venv/bin/python", "server.py"])
        .status(2)
        .run();
    let err = out.stderr();
    assert!(
        err.contains(
            "tip: to run a stdio server, put its command after `--`: elicit call [OPTIONS] -- ./venv/bin/python server.py"
        ),
        "{err}"
    );
}

/// The README's install line honours Cargo.lock.
#[test]
fn the_readme_installs_with_the_lock_file() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let installs: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("cargo install") && l.contains("--path ."))
        .collect();
    assert!(!installs.is_empty());
    for l in installs {
        assert!(l.contains("--locked"), "{l}");
    }
}

/// The README's "Test your own server" lines run as written (with the
/// pinned venv's python, and a free port for 8000), in a fresh folder as
/// in a new repository: the record line makes `elicit-tests/`, and the
/// loop's `elicit test` then replays what it recorded.
#[test]
fn the_readme_test_your_own_server_lines_run() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## Test your own server")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the README has a Test your own server section");
    let http = HttpServer::start("fastmcp_server.py");
    let python = python();
    let repo = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for line in section.lines() {
        let line = line.trim().trim_end_matches('.').trim_matches('`');
        let line = line.split("   # ").next().unwrap_or(line).trim();
        let Some(rest) = line.strip_prefix("elicit call ") else {
            continue;
        };
        let (cmd, expect_code) = match rest.split_once(" >/dev/null; test $? -eq ") {
            Some((cmd, code)) => (cmd.to_string(), code.parse::<i32>().unwrap()),
            None => (rest.to_string(), 0),
        };
        let cmd = cmd
            .replace(
                "python tests/servers/",
                &format!("{python} {}/", root().join("tests/servers").display()),
            )
            .replace(
                "-- elicit mock fixtures/",
                &format!(
                    "-- {} mock {}/",
                    crate::common::BIN,
                    root().join("fixtures").display()
                ),
            )
            .replace("127.0.0.1:8000", &format!("127.0.0.1:{}", http.1));
        let words: Vec<&str> = cmd.split_whitespace().collect();
        Test::new()
            .current_dir(repo.path())
            .arg("call")
            .args(["--server-log", "/dev/null"])
            .args(&words)
            .status(expect_code)
            .stdout_unchecked("the README checks only the exit status of these lines")
            .run();
        ran += 1;
    }
    assert_eq!(ran, 5, "{section}");
    // The loop's second step, in the same folder: what step 1 recorded replays.
    assert!(section.contains("\nelicit test\n"), "{section}");
    let replay = Test::new().current_dir(repo.path()).arg("test").run();
    assert!(
        replay.stderr().contains("1 test, 1 passed, 0 failed"),
        "{}",
        replay.stderr()
    );
}

/// A scripted accept of a URL elicitation launches nothing.
#[test]
fn a_scripted_accept_of_a_url_opens_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("opened");
    let req = json!({"method": "elicitation/create", "params": {"mode": "url",
        "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"}})
    .to_string();
    let browser = format!("touch {}", mark.display());
    let out = resolve(&["--browser", &browser, "-a", "accept"], &req).run();
    assert_eq!(
        serde_json::from_str::<Value>(out.stdout()).unwrap(),
        json!({"action": "accept"})
    );
    assert!(!mark.exists(), "the browser was launched");
}

fn man(page: &[&str]) -> Test {
    Test::new().arg("man").args(page)
}

/// The man pages: examples and exit status under their own headings, the
/// keys, every environment variable elicit reads; `man nope` offers only
/// real pages.
#[test]
fn man_pages_have_examples_keys_and_the_whole_environment() {
    for page in [vec![], vec!["call"], vec!["proxy"]] {
        let out = man(&page).run();
        let text = out.stdout();
        assert!(!text.contains(".SH EXTRA"), "{page:?}");
        for heading in [".SH EXAMPLES", ".SH KEYS", ".SH ENVIRONMENT"] {
            assert!(text.contains(heading), "{page:?} lacks {heading}");
        }
        for var in [
            "ELICIT_BROWSER",
            "ELICIT_CLIENT_ID",
            "ELICIT_CLIENT_SECRET",
            "ELICIT_DATA_DIR",
            "XDG_DATA_HOME",
        ] {
            assert!(text.contains(var), "{page:?} lacks {var}");
        }
    }
    assert!(man(&[]).run().stdout().contains(".SH \"EXIT STATUS\""));
    let nope = man(&["nope"]).status(2).run();
    assert!(
        nope.stderr().contains("man pages exist for: call, proxy"),
        "{}",
        nope.stderr()
    );
    assert!(!nope.stderr().contains("help"), "{}", nope.stderr());
}

/// `call --help` describes `--server` in words that fit a live session.
#[test]
fn call_help_describes_server_for_a_session() {
    let out = Test::new().args(["call", "--help"]).run();
    let help = out
        .stdout()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("the name the server gives itself, in its serverInfo"),
        "{help}"
    );
}

/// `proxy URL --log` writes who sent each message (`by`) and who got it
/// (`to`), as the stdio proxy does.
#[test]
fn remote_proxy_log_says_by_and_to() {
    let server = HttpServer::start("py_http_server.py");
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut proxy = Test::new()
        .args(["proxy", "--no-input", "--log", log.path().to_str().unwrap()])
        .args(answers(&["name=Ada", "age=36", "color=blue", "accept"]))
        .arg(&server.url()[0])
        .limit(Duration::from_secs(60))
        .feed()
        .spawn();
    proxy.write(concat!(r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"ask_profile","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#, "\n").as_bytes());
    let reply = proxy.next_json();
    assert_eq!(reply["id"], "c1", "{reply}");
    proxy.close_stdin();
    proxy.wait();
    let entries: Vec<Value> = std::fs::read_to_string(log.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(entries.len() >= 4, "{entries:?}");
    for e in &entries {
        let party = match e["dir"].as_str() {
            Some("send") => &e["by"],
            Some("recv") => &e["to"],
            _ => panic!("no dir: {e}"),
        };
        assert!(party == "client" || party == "elicit", "{e}");
    }
    let has =
        |dir: &str, key: &str, who: &str| entries.iter().any(|e| e["dir"] == dir && e[key] == who);
    assert!(has("send", "by", "client"), "{entries:?}");
    assert!(
        has("recv", "to", "elicit"),
        "the input_required result: {entries:?}"
    );
    assert!(has("send", "by", "elicit"), "the retry: {entries:?}");
    assert!(has("recv", "to", "client"), "the final reply: {entries:?}");
}

/// An explicit `--protocol 2026-07-28` is kept; `-v` says what auto would do.
#[test]
fn an_explicit_2026_protocol_is_kept_and_verbose_says_what_auto_would_do() {
    let out = call(
        &["-v", "--protocol", "2026-07-28", "--tool", "ask"],
        &two_era(),
    )
    .status(1)
    .run();
    assert!(out.stdout().contains("stateless"), "{}", out.stdout());
    assert!(
        out.stderr()
            .contains("--protocol auto would use the initialize handshake"),
        "{}",
        out.stderr()
    );
}
