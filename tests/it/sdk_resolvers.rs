//! The one-line resolvers for the SDKs' clients (issue 34, item 2): the
//! Python module `elicit_mcp` (python/, shipped in the wheel) as the Python
//! SDK's `elicitation_callback` and fastmcp's `elicitation_handler`, and the
//! npm package's `elicitHandler` (npm/elicit-mcp) for the TypeScript SDK's
//! client. Each SDK's real client (the pinned ones in .deps/: mcp 2.3.0,
//! fastmcp 4.2.3, @modelcontextprotocol/sdk 1.32.2) calls a real server that
//! elicits (server-everything's `trigger-elicitation-request`, FastMCP's
//! `ctx.elicit` in tests/servers/fastmcp_server.py), answered from rules and
//! scripted answers, then on the page in headless Chromium. The modules run
//! from the source tree (PYTHONPATH=python; npm/elicit-mcp) with the freshly
//! built binary in ELICIT_BINARY, the variable both honour. The clients are
//! tests/sdk/*: written as a user writes one.

// server-everything's default for its number field is 3.14, a literal, not π.
#![allow(clippy::approx_constant)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::page::{choice, Browser, NoTerminal};
use crate::common::{installed, server_everything, BIN};

/// A client run may start Python, the SDK, a server and elicit under load.
const CLIENT_LIMIT: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn venv_python() -> String {
    root().join(".deps/venv/bin/python").display().to_string()
}

fn fastmcp_server() -> Vec<String> {
    installed();
    vec![
        venv_python(),
        root()
            .join("tests/servers/fastmcp_server.py")
            .display()
            .to_string(),
    ]
}

/// An SDK client, running with no terminal (its own session, as under a
/// desktop app or CI runner); the whole process group (the client, its
/// server, elicit) is ended when dropped.
pub(crate) struct SdkClient(NoTerminal);

impl Drop for SdkClient {
    fn drop(&mut self) {
        if let Ok(None) = self.0.child.try_wait() {
            // SAFETY: kill has no preconditions; the child leads its own
            // process group (setsid), so this reaches only what it started.
            unsafe {
                libc::kill(-(self.0.pid() as i32), libc::SIGKILL);
            }
        }
    }
}

impl SdkClient {
    /// The client's one line of JSON (see tests/sdk/*), and its exit.
    pub(crate) fn output(&self) -> Value {
        let line = self.0.lines.recv_timeout(CLIENT_LIMIT).unwrap_or_else(|_| {
            panic!(
                "the client printed nothing within {CLIENT_LIMIT:?}; stderr:\n{}",
                self.0.stderr()
            )
        });
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\nstderr:\n{}", self.0.stderr()))
    }
}

/// What a client gives the module: the built binary, the source tree's
/// Python module, and `env`.
fn client_command(program: &str, args: &[String], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(root())
        .env("ELICIT_BINARY", BIN)
        .env("PYTHONPATH", root().join("python"))
        .env_remove("ELICIT_ANSWERS")
        .env_remove("ELICIT_NO_INPUT")
        .env_remove("ELICIT_NO_OPEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// tests/sdk/python_client.py SDK TOOL ARGS OPTIONS -- SERVER.
pub(crate) fn python_client(
    sdk: &str,
    tool: &str,
    options: Value,
    server: &[String],
    env: &[(&str, &str)],
) -> SdkClient {
    installed();
    let mut args = vec![
        root()
            .join("tests/sdk/python_client.py")
            .display()
            .to_string(),
        sdk.into(),
        tool.into(),
        "{}".into(),
        options.to_string(),
        "--".into(),
    ];
    args.extend(server.iter().cloned());
    SdkClient(NoTerminal::spawn_command(
        client_command(&venv_python(), &args, env),
        None,
    ))
}

/// tests/sdk/ts_client.cjs MODULE TOOL ARGS OPTIONS -- SERVER, with the
/// module of the source tree.
pub(crate) fn ts_client(
    tool: &str,
    options: Value,
    server: &[String],
    env: &[(&str, &str)],
) -> SdkClient {
    installed();
    let mut args = vec![
        root().join("tests/sdk/ts_client.cjs").display().to_string(),
        root().join("npm/elicit-mcp").display().to_string(),
        tool.into(),
        "{}".into(),
        options.to_string(),
        "--".into(),
    ];
    args.extend(server.iter().cloned());
    SdkClient(NoTerminal::spawn_command(
        client_command("node", &args, env),
        None,
    ))
}

/// Answer rules for both servers, matched on the server's name (which only
/// the SDK knows: the resolver passes it on) and the fields.
fn rules(dir: &Path) -> String {
    let path = dir.join("answers.json");
    std::fs::write(
        &path,
        json!({"elicit": "answers/1", "rules": [
            {"match": {"server": "mcp-servers/everything", "fields": ["name", "email"]},
             "answer": {"name": "Ada Lovelace", "email": "ada@example.com", "integer": 7,
                        "untitledSingleSelectEnum": "Joey", "titledMultipleSelectEnum": ["fish-2"]}},
            {"match": {"server": "fastmcp-elicit-test", "message": "Tell us about yourself"},
             "answer": {"name": "Grace", "age": "85", "color": "green"}},
            {"match": {"server": "fastmcp-elicit-test", "message": "Your name, please"},
             "answer": {"name": "Barbara"}}
        ]})
        .to_string(),
    )
    .unwrap();
    path.display().to_string()
}

/// server-everything's echo of the ElicitResult it got (its last text block,
/// after "Raw result: ").
fn everything_raw(out: &Value) -> Value {
    let last = out["content"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text blocks: {out}"));
    let at = last
        .find("Raw result: ")
        .unwrap_or_else(|| panic!("no raw result in {out}"));
    serde_json::from_str(&last[at + "Raw result: ".len()..]).unwrap()
}

/// The FastMCP test server's one JSON text block.
fn fastmcp_echo(out: &Value) -> Value {
    assert_eq!(out["isError"], false, "{out}");
    serde_json::from_str(
        out["content"][0]
            .as_str()
            .unwrap_or_else(|| panic!("{out}")),
    )
    .unwrap()
}

/// What the rules give server-everything's 13-field form: the rule's
/// values, the schema's defaults for the rest.
fn everything_from_rules() -> Value {
    json!({"action": "accept", "content": {
        "name": "Ada Lovelace",
        "firstLine": "It was a dark and stormy night.",
        "email": "ada@example.com",
        "integer": 7,
        "number": 3.14,
        "untitledSingleSelectEnum": "Joey",
        "untitledMultipleSelectEnum": ["Guitar"],
        "titledSingleSelectEnum": "hero-1",
        "titledMultipleSelectEnum": ["fish-2"],
        "legacyTitledEnum": "pet-1"
    }})
}

// ---------------------------------------------------------------------------
// Python: the Python SDK (mcp 2.3.0) and fastmcp (4.2.3)

/// The Python SDK's `Client(..., elicitation_callback=elicitation_callback)`
/// (and `ClientSession(...)`) against server-everything, answered by rules
/// from ELICIT_ANSWERS (the flag's environment form) with ELICIT_NO_INPUT,
/// matched on the server's name the SDK knows; then `Elicit(answers=…)` as
/// `-a`, and a decline.
#[test]
fn python_sdk_client_answers_server_everything_from_rules_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let answers = rules(dir.path());
    let env = [
        ("ELICIT_ANSWERS", answers.as_str()),
        ("ELICIT_NO_INPUT", "1"),
    ];
    let out = python_client(
        "mcp",
        "trigger-elicitation-request",
        Value::Null,
        &server_everything(),
        &env,
    )
    .output();
    assert_eq!(out["sdk"], "mcp", "{out}");
    assert_eq!(everything_raw(&out), everything_from_rules());
    // The same callback on the low-level ClientSession.
    let out = python_client(
        "mcp-session",
        "trigger-elicitation-request",
        Value::Null,
        &server_everything(),
        &env,
    )
    .output();
    assert_eq!(everything_raw(&out), everything_from_rules(), "{out}");

    let out = python_client(
        "mcp",
        "trigger-elicitation-request",
        json!({"answers": ["accept", "name=Ada", "check=yes"], "no_input": true}),
        &server_everything(),
        &[],
    )
    .output();
    let raw = everything_raw(&out);
    assert_eq!(raw["action"], "accept", "{out}");
    assert_eq!(raw["content"]["name"], "Ada");
    assert_eq!(raw["content"]["check"], true);
    assert_eq!(raw["content"]["integer"], 42, "defaults filled: {raw}");

    let out = python_client(
        "mcp",
        "trigger-elicitation-request",
        json!({"answers": ["decline"]}),
        &server_everything(),
        &[],
    )
    .output();
    assert_eq!(everything_raw(&out), json!({"action": "decline"}), "{out}");
}

/// fastmcp's `Client(..., elicitation_handler=elicitation_handler)`: a
/// FastMCP `ctx.elicit` tool (over the handshake, where it sends
/// elicitation/create) answered by the rules; on a 2026-07-28 connection an
/// `input_required` round (`guard_form`) goes through the same handler.
#[test]
fn fastmcp_client_answers_ctx_elicit_from_rules() {
    let dir = tempfile::tempdir().unwrap();
    let answers = rules(dir.path());
    let env = [
        ("ELICIT_ANSWERS", answers.as_str()),
        ("ELICIT_NO_INPUT", "1"),
    ];
    let out = python_client(
        "fastmcp-legacy",
        "form_ctx",
        Value::Null,
        &fastmcp_server(),
        &env,
    )
    .output();
    assert_eq!(out["sdk"], "fastmcp", "{out}");
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "accept", "content": {"name": "Grace", "age": 85, "color": "green"}})
    );
    let out = python_client(
        "fastmcp",
        "guard_form",
        Value::Null,
        &fastmcp_server(),
        &env,
    )
    .output();
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "accept", "content": {"name": "Barbara"}})
    );
    // URL mode (`ctx.session.elicit_url`): a scripted accept says the person is done and
    // opens nothing; the tool gets the action.
    let out = python_client(
        "fastmcp-legacy",
        "connect_url",
        json!({"answers": ["accept"]}),
        &fastmcp_server(),
        &[],
    )
    .output();
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "accept", "content": null})
    );
    // The Python SDK's own client against the FastMCP server, with options.
    let out = python_client(
        "mcp-legacy",
        "form_ctx",
        json!({"answers": ["name=Bo", "age=30", "color=red"], "no_input": true}),
        &fastmcp_server(),
        &[],
    )
    .output();
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "accept", "content": {"name": "Bo", "age": 30, "color": "red"}})
    );
}

/// Nobody may be asked and nothing answers, or there is no binary: the
/// server gets a JSON-RPC error (-32603) with elicit's own words or the
/// missing binary named, never a made-up answer; the tool reports it.
#[test]
fn resolver_failures_reach_the_server_as_errors() {
    let words =
        "fields are left to answer and no terminal to ask on (--no-input was given): name, check,";
    // The resolvers' session elicit (--lines) says it in an error line and
    // goes on.
    let said = format!("elicit failed: {words}");
    let out = python_client(
        "mcp",
        "trigger-elicitation-request",
        json!({"no_input": true}),
        &server_everything(),
        &[],
    )
    .output();
    assert_eq!(out["isError"], true, "{out}");
    let text = out["content"][0].as_str().unwrap();
    assert!(
        text.starts_with(&format!("MCP error -32603: {said}")),
        "{out}"
    );
    let out = python_client(
        "mcp",
        "trigger-elicitation-request",
        Value::Null,
        &server_everything(),
        &[("ELICIT_BINARY", "/nonexistent/elicit")],
    )
    .output();
    assert_eq!(
        out["content"][0],
        "MCP error -32603: ELICIT_BINARY is set to '/nonexistent/elicit', which is not a file. Unset it to use the elicit binary installed with the elicit-mcp package.",
        "{out}"
    );
    let out = ts_client(
        "trigger-elicitation-request",
        json!({"noInput": true}),
        &server_everything(),
        &[],
    )
    .output();
    assert_eq!(out["isError"], true, "{out}");
    let text = out["content"][0].as_str().unwrap();
    assert!(
        text.starts_with(&format!("MCP error -32603: {said}")),
        "{out}"
    );
}

/// The module's edges: scripted answers, elicit's errors in the exception,
/// a missing binary named, a bare ELICIT_BINARY looked up on PATH only
/// (never the working directory's file), the timeout bounding a run (cancel), two at once
/// taking turns, and a cancelled callback ending its elicit
/// (tests/sdk/python_module_checks.py).
#[test]
fn python_module_errors_are_clear_and_runs_are_bounded() {
    installed();
    let dir = tempfile::tempdir().unwrap();
    let args = vec![
        root()
            .join("tests/sdk/python_module_checks.py")
            .display()
            .to_string(),
        dir.path().display().to_string(),
    ];
    let out = SdkClient(NoTerminal::spawn_command(
        client_command(&venv_python(), &args, &[]),
        None,
    ))
    .output();
    assert_eq!(
        out["answered"],
        json!({"action": "accept", "content": {"region": "apac"}})
    );
    assert_eq!(out["bad_answer"]["type"], "ElicitError", "{out}");
    assert_eq!(out["bad_answer"]["returncode"], 2);
    let said = out["bad_answer"]["message"].as_str().unwrap();
    assert!(
        said.contains("nosuchfield: not a field of the requested schema"),
        "{said}"
    );
    let env_missing = out["env_missing"]["message"].as_str().unwrap();
    assert!(
        env_missing.contains("ELICIT_BINARY is set to") && env_missing.contains("not a file"),
        "{env_missing}"
    );
    assert_eq!(out["env_missing"]["is_file_not_found"], true);
    assert!(
        out["binary_missing"]
            .as_str()
            .unwrap()
            .contains("cannot run elicit"),
        "{out}"
    );
    // ELICIT_BINARY=NAME: PATH's file, never the working directory's.
    let bare = &out["bare_name"];
    assert_eq!(
        bare["elicit-on-path"],
        json!(dir.path().join("bin/elicit-on-path")),
        "{out}"
    );
    let planted = bare["elicit-planted"].as_str().unwrap();
    assert!(
        planted.starts_with(
            "not found: ELICIT_BINARY is set to 'elicit-planted', which is not a file on PATH"
        ),
        "{planted}"
    );
    // Run from the source tree, no wheel installed its binary (unless a
    // wheel is installed for this Python: then it is found).
    if let Some(not_found) = out["not_found"].as_str() {
        assert!(
            not_found.contains("Looked in:") && not_found.contains("ELICIT_BINARY"),
            "{not_found}"
        );
    } else {
        assert!(out["found"].as_str().unwrap().ends_with("elicit"), "{out}");
    }
    assert_eq!(out["timed_out"]["result"], json!({"action": "cancel"}));
    let seconds = out["timed_out"]["seconds"].as_f64().unwrap();
    assert!((0.9..10.0).contains(&seconds), "{seconds}");
    assert_eq!(
        out["two_at_once"]["results"],
        json!([{"action": "cancel"}, {"action": "cancel"}])
    );
    let seconds = out["two_at_once"]["seconds"].as_f64().unwrap();
    assert!(seconds >= 1.9, "one at a time: {seconds}");
    assert_eq!(
        out["cancelled"],
        json!({"was_running": true, "ended": true}),
        "{out}"
    );
    // A client killed outright leaves no elicit behind (tests/it/parent_gone.rs).
    let args = out["args"].as_array().unwrap();
    assert!(args.contains(&json!("--exit-with-parent")), "{out}");
    assert!(
        out["relayed"]
            .as_str()
            .unwrap()
            .contains("elicit: answer on the page http://127.0.0.1:"),
        "elicit's stderr is relayed: {out}"
    );
    assert_eq!(
        out["main"],
        concat!("elicit ", env!("CARGO_PKG_VERSION")),
        "python -m elicit_mcp: {out}"
    );
    assert_eq!(
        out["session"],
        json!({"contents": [{"region": "emea"}, {"region": "emea"}], "processes_for_two": 1,
               "cancel_ended_it": true, "after": "cancel", "processes_after_cancel": 2}),
        "one elicit per session, ended by a cancel and started again: {out}"
    );
    assert_eq!(out["callback_is_sdk_type"], true, "{out}");
    assert_eq!(out["callback_action"], "decline");
}

// ---------------------------------------------------------------------------
// TypeScript: the TypeScript SDK (v1, 1.32.2)

/// The TypeScript SDK's client with
/// `setRequestHandler(ElicitRequestSchema, elicitHandler(options))`:
/// server-everything answered by scripted answers, the FastMCP server's
/// `ctx.elicit` by the rules (ELICIT_ANSWERS, with the server's name given
/// by the `server` option), and a decline.
#[test]
fn typescript_sdk_client_answers_from_rules_and_answers() {
    let out = ts_client(
        "trigger-elicitation-request",
        json!({"answers": ["accept", "name=Ada", "email=ada@example.com"], "noInput": true}),
        &server_everything(),
        &[],
    )
    .output();
    // The SDK that server-everything brings, pinned by scripts/servers/package-lock.json.
    assert_eq!(out["sdk"], "1.32.2", "{out}");
    let raw = everything_raw(&out);
    assert_eq!(raw["action"], "accept", "{out}");
    assert_eq!(raw["content"]["name"], "Ada");
    assert_eq!(raw["content"]["email"], "ada@example.com");
    assert_eq!(raw["content"]["integer"], 42, "defaults filled: {raw}");

    let dir = tempfile::tempdir().unwrap();
    let answers = rules(dir.path());
    let env = [
        ("ELICIT_ANSWERS", answers.as_str()),
        ("ELICIT_NO_INPUT", "1"),
    ];
    let out = ts_client(
        "trigger-elicitation-request",
        json!({"server": "mcp-servers/everything"}),
        &server_everything(),
        &env,
    )
    .output();
    assert_eq!(everything_raw(&out), everything_from_rules(), "{out}");
    let out = ts_client(
        "form_ctx",
        json!({"server": "fastmcp-elicit-test"}),
        &fastmcp_server(),
        &env,
    )
    .output();
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "accept", "content": {"name": "Grace", "age": 85, "color": "green"}})
    );
    // URL mode: the FastMCP server's `elicit_url`, declined.
    let out = ts_client(
        "connect_url",
        json!({"answers": "decline"}),
        &fastmcp_server(),
        &[],
    )
    .output();
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "decline", "content": null})
    );
    let out = ts_client(
        "trigger-elicitation-request",
        json!({"answers": "decline"}),
        &server_everything(),
        &[],
    )
    .output();
    assert_eq!(everything_raw(&out), json!({"action": "decline"}), "{out}");
}

/// The handler's edges (tests/sdk/js_module_checks.cjs): the request as the
/// SDK passes it, bare params, elicit's errors, a missing binary or platform
/// package named, the timeout (cancel), two at once taking turns, an
/// aborted request ending elicit.
#[test]
fn typescript_handler_errors_are_clear_and_runs_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let args = vec![
        root()
            .join("tests/sdk/js_module_checks.cjs")
            .display()
            .to_string(),
        root().join("npm/elicit-mcp").display().to_string(),
        dir.path().display().to_string(),
    ];
    let out = SdkClient(NoTerminal::spawn_command(
        client_command("node", &args, &[]),
        None,
    ))
    .output();
    assert!(out.get("crashed").is_none(), "{out}");
    assert_eq!(
        out["answered"],
        json!({"action": "accept", "content": {"region": "apac"}})
    );
    assert_eq!(out["bareParams"], json!({"action": "decline"}));
    assert_eq!(out["badAnswer"]["name"], "ElicitError", "{out}");
    assert_eq!(out["badAnswer"]["exitCode"], 2);
    assert!(
        out["badAnswer"]["message"]
            .as_str()
            .unwrap()
            .contains("nosuchfield: not a field of the requested schema"),
        "{out}"
    );
    assert_eq!(out["binaryMissing"]["name"], "ElicitNotFound", "{out}");
    assert_eq!(out["binaryMissing"]["isElicitError"], true);
    // The source tree has no platform package installed: the message says
    // which package, as the `elicit` command's launcher does.
    let not_found = out["notFound"]["message"].as_str().unwrap_or_default();
    assert!(
        not_found.contains("no elicit binary for this platform")
            && not_found.contains("@elicit-mcp/linux-"),
        "{out}"
    );
    assert!(
        out["badTimeout"]
            .as_str()
            .unwrap()
            .starts_with("TypeError: timeout must be a positive number"),
        "{out}"
    );
    assert_eq!(out["timedOut"]["result"], json!({"action": "cancel"}));
    let seconds = out["timedOut"]["seconds"].as_f64().unwrap();
    assert!((0.9..10.0).contains(&seconds), "{seconds}");
    assert_eq!(
        out["twoAtOnce"]["results"],
        json!([{"action": "cancel"}, {"action": "cancel"}])
    );
    let seconds = out["twoAtOnce"]["seconds"].as_f64().unwrap();
    assert!(seconds >= 1.9, "one at a time: {seconds}");
    assert_eq!(
        out["aborted"],
        json!({"reason": "the server withdrew the request", "wasRunning": true, "ended": true}),
        "{out}"
    );
    // A client killed outright leaves no elicit behind (tests/it/parent_gone.rs).
    let args = out["args"].as_array().unwrap();
    assert!(args.contains(&json!("--exit-with-parent")), "{out}");
}

// ---------------------------------------------------------------------------
// The page, in headless Chromium

/// Waits for the client's stderr to carry the page's address (elicit's
/// words, relayed by the resolver), and goes there.
fn open_the_page(b: &Browser, client: &SdkClient) {
    let deadline = Instant::now() + CLIENT_LIMIT;
    loop {
        if client.0.stderr().contains("answer on the page ") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no page announced; the client's stderr:\n{}",
            client.0.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    b.goto(&client.0.page_address());
    b.find("form[action$='/answer/1']");
}

/// server-everything's form, some fields filled on the page.
fn fill_everything(b: &Browser) {
    b.type_into("[name=name]", "Ada Lovelace");
    b.click(&choice("check", "true"));
    b.type_into("[name=email]", "ada@example.com");
    b.type_into("[name=integer]", "7");
    b.click("select[name=titledSingleSelectEnum] option[value=hero-3]");
    b.click("button[name=action][value=accept]");
}

fn everything_from_the_page(raw: &Value) {
    assert_eq!(raw["action"], "accept", "{raw}");
    let c = &raw["content"];
    assert_eq!(c["name"], "Ada Lovelace", "{raw}");
    assert_eq!(c["check"], true);
    assert_eq!(c["email"], "ada@example.com");
    assert_eq!(c["integer"], 7);
    assert_eq!(c["titledSingleSelectEnum"], "hero-3");
    assert_eq!(c["number"], 3.14, "pre-filled default: {raw}");
}

/// With no terminal, the Python SDK client's callback asks on the page
/// (ELICIT_NO_OPEN: its address on stderr instead of a browser launch), and
/// the server gets what was filled in.
#[test]
fn python_sdk_client_answered_on_the_page_in_chromium() {
    let b = Browser::start();
    let client = python_client(
        "mcp",
        "trigger-elicitation-request",
        Value::Null,
        &server_everything(),
        &[("ELICIT_NO_OPEN", "1")],
    );
    open_the_page(&b, &client);
    assert!(
        b.body_text().contains("mcp-servers/everything"),
        "the page names the server the SDK knows:\n{}",
        b.body_text()
    );
    fill_everything(&b);
    everything_from_the_page(&everything_raw(&client.output()));
}

/// fastmcp's handler asks on the page too (`Elicit(no_open=True)`), for a
/// FastMCP `ctx.elicit` tool; a decline on the page reaches the tool.
#[test]
fn fastmcp_client_answered_on_the_page_in_chromium() {
    let b = Browser::start();
    let client = python_client(
        "fastmcp-legacy",
        "form_ctx",
        json!({"no_open": true}),
        &fastmcp_server(),
        &[],
    );
    open_the_page(&b, &client);
    b.type_into("[name=name]", "Grace");
    b.type_into("[name=age]", "85");
    b.click("select[name=color] option[value=blue]");
    b.click("button[name=action][value=accept]");
    assert_eq!(
        fastmcp_echo(&client.output()),
        json!({"action": "accept", "content": {"name": "Grace", "age": 85, "color": "blue"}})
    );

    let client = python_client(
        "fastmcp-legacy",
        "form_ctx",
        json!({"no_open": true}),
        &fastmcp_server(),
        &[],
    );
    open_the_page(&b, &client);
    b.click("button[name=action][value=decline]");
    assert_eq!(
        fastmcp_echo(&client.output()),
        json!({"action": "decline", "content": null})
    );
}

/// The URLs a recording browser (`ELICIT_BROWSER`, see [`recording_browser`])
/// was handed, once there are `n` of them.
fn openings(record: &Path, n: usize, client: &SdkClient) -> Vec<String> {
    let deadline = Instant::now() + CLIENT_LIMIT;
    loop {
        let text = std::fs::read_to_string(record).unwrap_or_default();
        let urls: Vec<String> = text.lines().map(str::to_string).collect();
        if urls.len() >= n {
            return urls;
        }
        assert!(
            Instant::now() < deadline,
            "the browser was opened {} times, not {n}; the client's stderr:\n{}",
            urls.len(),
            client.0.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A browser command that records each address it is handed in `record`.
fn recording_browser(record: &Path) -> String {
    format!("sh -c 'printf \"%s\\n\" \"$1\" >> {}' sh", record.display())
}

/// One page for a client's whole session (issue 41): the Python SDK
/// client's callback keeps one elicit for the session, so a tool that asks
/// twice opens the browser once, and the second question comes to the tab
/// the first was answered on.
#[test]
fn python_sdk_client_answers_two_questions_on_one_page() {
    let b = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("opened");
    let browser = recording_browser(&record);
    let client = python_client(
        "mcp-legacy",
        "two_questions",
        Value::Null,
        &fastmcp_server(),
        &[(
            "CLIENT_ENV",
            &json!({"ELICIT_UI": "browser", "ELICIT_BROWSER": browser}).to_string(),
        )],
    );
    b.goto(&openings(&record, 1, &client)[0]);
    b.type_into("form[action$='/answer/1'] [name=name]", "Ada");
    b.click("form[action$='/answer/1'] button[name=action][value=accept]");
    b.click("form[action$='/answer/2'] select option[value=green]");
    b.click("form[action$='/answer/2'] button[name=action][value=accept]");
    assert_eq!(
        fastmcp_echo(&client.output()),
        json!({"name": {"action": "accept", "content": "Ada"},
               "color": {"action": "accept", "content": "green"}})
    );
    assert_eq!(
        openings(&record, 1, &client).len(),
        1,
        "the browser opened once"
    );
}

/// The same for the TypeScript SDK's client: its handler keeps one elicit,
/// so the browser opens once and both questions are answered on one tab.
#[test]
fn typescript_sdk_client_answers_two_questions_on_one_page() {
    let b = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("opened");
    let client = ts_client(
        "two_questions",
        json!({"ui": "browser", "browser": recording_browser(&record)}),
        &fastmcp_server(),
        &[],
    );
    b.goto(&openings(&record, 1, &client)[0]);
    b.type_into("form[action$='/answer/1'] [name=name]", "Bo");
    b.click("form[action$='/answer/1'] button[name=action][value=accept]");
    b.click("form[action$='/answer/2'] select option[value=red]");
    b.click("form[action$='/answer/2'] button[name=action][value=accept]");
    assert_eq!(
        fastmcp_echo(&client.output()),
        json!({"name": {"action": "accept", "content": "Bo"},
               "color": {"action": "accept", "content": "red"}})
    );
    assert_eq!(
        openings(&record, 1, &client).len(),
        1,
        "the browser opened once"
    );
}

/// The TypeScript SDK client's handler asks on the page with no terminal,
/// for server-everything and for the FastMCP server's `ctx.elicit`.
#[test]
fn typescript_sdk_client_answered_on_the_page_in_chromium() {
    let b = Browser::start();
    let client = ts_client(
        "trigger-elicitation-request",
        json!({"noOpen": true}),
        &server_everything(),
        &[],
    );
    open_the_page(&b, &client);
    fill_everything(&b);
    everything_from_the_page(&everything_raw(&client.output()));

    let client = ts_client(
        "form_ctx",
        Value::Null,
        &fastmcp_server(),
        &[("ELICIT_NO_OPEN", "1")],
    );
    open_the_page(&b, &client);
    b.type_into("[name=name]", "Bo");
    b.type_into("[name=age]", "30");
    b.click("select[name=color] option[value=red]");
    b.click("button[name=action][value=accept]");
    assert_eq!(
        fastmcp_echo(&client.output()),
        json!({"action": "accept", "content": {"name": "Bo", "age": 30, "color": "red"}})
    );
}

// ---------------------------------------------------------------------------
// The packages' READMEs

/// Everything a finished client printed (its stdout, until the end).
fn all_lines(run: &SdkClient) -> String {
    let mut out = String::new();
    while let Ok(line) = run.0.lines.recv_timeout(CLIENT_LIMIT) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The fenced block of `lang` in a package's README.
fn readme_example(readme: &str, lang: &str) -> String {
    let text = std::fs::read_to_string(root().join(readme)).unwrap();
    let start = text
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("no {lang} example in {readme}"))
        + lang.len()
        + 4;
    let len = text[start..].find("```").unwrap();
    text[start..start + len].to_string()
}

/// The ten-line examples of python/README.md (the wheel's) and
/// npm/elicit-mcp/README.md (the npm package's) run as written, with the
/// pinned server-everything in place of `npx -y …` (no registry here) and
/// answer rules from ELICIT_ANSWERS in place of a person.
#[test]
fn the_package_readme_examples_run() {
    installed();
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(
        &answers,
        json!({"elicit": "answers/1", "rules": [
            {"match": {"fields": ["name", "email"]}, "answer": {"name": "Ada Lovelace"}}
        ]})
        .to_string(),
    )
    .unwrap();
    let everything = server_everything();
    let env = [
        ("ELICIT_ANSWERS", answers.to_str().unwrap()),
        ("ELICIT_NO_INPUT", "1"),
    ];

    let python = readme_example("python/README.md", "python").replace(
        r#"command="npx", args=["-y", "@modelcontextprotocol/server-everything"]"#,
        &format!(r#"command="{}", args=["stdio"]"#, everything[0]),
    );
    assert!(python.contains(&everything[0]), "{python}");
    assert!(python.lines().count() <= 12, "{python}");
    let script = dir.path().join("example.py");
    std::fs::write(&script, python).unwrap();
    let mut run = SdkClient(NoTerminal::spawn_command(
        client_command(&venv_python(), &[script.display().to_string()], &env),
        None,
    ));
    let status = crate::common::wait_at_most(&mut run.0.child, CLIENT_LIMIT);
    let out = all_lines(&run);
    assert!(status.success(), "{}", run.0.stderr());
    assert!(
        out.contains(r#""name": "Ada Lovelace""#),
        "{out}\n{}",
        run.0.stderr()
    );

    let js = readme_example("npm/elicit-mcp/README.md", "js").replace(
        r#"command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"]"#,
        &format!(r#"command: "{}", args: ["stdio"]"#, everything[0]),
    );
    assert!(js.contains(&everything[0]), "{js}");
    assert!(js.lines().count() <= 12, "{js}");
    // A project of its own: the SDK as installed by scripts/install-test-servers, and
    // elicit-mcp as the source tree's package.
    let modules = dir.path().join("node_modules");
    std::fs::create_dir(&modules).unwrap();
    std::os::unix::fs::symlink(
        root().join(".deps/node/node_modules/@modelcontextprotocol"),
        modules.join("@modelcontextprotocol"),
    )
    .unwrap();
    std::os::unix::fs::symlink(root().join("npm/elicit-mcp"), modules.join("elicit-mcp")).unwrap();
    let script = dir.path().join("example.mjs");
    std::fs::write(&script, js).unwrap();
    let mut cmd = client_command("node", &[script.display().to_string()], &env);
    cmd.current_dir(dir.path());
    let mut run = SdkClient(NoTerminal::spawn_command(cmd, None));
    let status = crate::common::wait_at_most(&mut run.0.child, CLIENT_LIMIT);
    let out = all_lines(&run);
    assert!(status.success(), "{}", run.0.stderr());
    assert!(
        out.contains(r#""name": "Ada Lovelace""#),
        "{out}\n{}",
        run.0.stderr()
    );
}

// ---------------------------------------------------------------------------
// A person at the terminal

/// An SDK client started on a pseudo-terminal, as a developer runs one:
/// the resolver's elicit finds the terminal (its stdin and stdout are the
/// resolver's pipes) and asks there; the client's one JSON line comes last.
fn on_a_terminal(program: &str, args: &[String]) -> expectrl::session::OsSession {
    let mut cmd = client_command(program, args, &[]);
    cmd.env("NO_COLOR", "1")
        .env("TERM", "xterm-256color")
        .env_remove("ELICIT_UI")
        .env_remove("CI");
    let mut s = expectrl::session::OsSession::spawn(cmd).expect("spawn under a pty");
    s.set_expect_timeout(Some(CLIENT_LIMIT));
    s
}

/// Waits for `prompt` and for the prompt to take the terminal (raw mode),
/// then types `keys`.
fn type_at(s: &mut expectrl::session::OsSession, prompt: &str, keys: &str) {
    use expectrl::Expect;
    s.expect(prompt)
        .unwrap_or_else(|e| panic!("waiting for {prompt:?}: {e}"));
    crate::common::wait_raw_mode(s).unwrap_or_else(|e| panic!("at {prompt:?}: {e}"));
    s.send(keys).unwrap();
}

/// The JSON line the client prints at the end, from what the terminal showed.
fn last_json(s: &mut expectrl::session::OsSession) -> Value {
    use expectrl::Expect;
    let m = s.expect(expectrl::Eof).expect("the client ends");
    let text = String::from_utf8_lossy(m.as_bytes()).into_owned();
    // The line may follow the prompt's last redraw codes on the same row.
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.find("{\"").map(|at| l[at..].trim()))
        .unwrap_or_else(|| panic!("no JSON line:\n{}", text.escape_debug()));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// With a terminal, the resolvers ask there (the default `--ui auto`):
/// fastmcp's handler and the TypeScript SDK's, a FastMCP `ctx.elicit` form
/// typed in by a person.
#[test]
fn sdk_clients_ask_at_the_terminal_when_there_is_one() {
    installed();
    let server = fastmcp_server();
    let mut args = vec![
        root()
            .join("tests/sdk/python_client.py")
            .display()
            .to_string(),
        "fastmcp-legacy".into(),
        "form_ctx".into(),
        "{}".into(),
        "null".into(),
        "--".into(),
    ];
    args.extend(server.iter().cloned());
    let mut s = on_a_terminal(&venv_python(), &args);
    type_at(&mut s, "Name *", "Grace\r");
    type_at(&mut s, "Age *", "85\r");
    type_at(&mut s, "Color *", "\r");
    type_at(&mut s, "Send these answers?", "\r");
    let out = last_json(&mut s);
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "accept", "content": {"name": "Grace", "age": 85, "color": "red"}})
    );

    let mut args = vec![
        root().join("tests/sdk/ts_client.cjs").display().to_string(),
        root().join("npm/elicit-mcp").display().to_string(),
        "form_ctx".into(),
        "{}".into(),
        "null".into(),
        "--".into(),
    ];
    args.extend(server.iter().cloned());
    let mut s = on_a_terminal("node", &args);
    type_at(&mut s, "Name *", "Bo\r");
    // Esc cancels the whole form: the tool gets cancel, not an error.
    type_at(&mut s, "Age *", "\x1b");
    let out = last_json(&mut s);
    assert_eq!(
        fastmcp_echo(&out),
        json!({"action": "cancel", "content": null})
    );
}
