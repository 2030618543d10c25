//! Clients that start `elicit proxy` their own way: a command line without
//! `--`, a person starting it by hand on a terminal, a client that declared
//! no elicitation at all.

use std::time::Duration;

use expectrl::{Eof, Expect};
use serde_json::json;

use crate::common::{dumb_client, python_sdk_server, Test};

/// MCP Inspector's CLI swallows `--`: the first word that is no option
/// starts the server's command, and what follows it, `-v` included, is the
/// command's (as `env` and `timeout` run a command).
#[test]
fn a_server_command_without_dashes_runs_with_its_own_options() {
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args.txt");
    let server = format!(
        "printf '%s\\n' \"$0\" \"$@\" > {}; exec cat > /dev/null",
        crate::common::sh_quote(&args.display().to_string())
    );
    let run = Test::new()
        .args(["proxy", "--no-input", "--server-log", "/dev/null"])
        .args(["sh", "-c", &server, "first", "-v"])
        .stdin("")
        .run();
    assert_eq!(std::fs::read_to_string(&args).unwrap(), "first\n-v\n");
    // The proxy's own -v was not taken: no notes.
    run.stderr_lacks("elicit proxy:");
}

/// Started by hand on a terminal, the proxy says at once what it is for
/// (before, it sat silent, waiting for a client's JSON-RPC).
#[test]
fn a_proxy_started_by_hand_on_a_terminal_says_it_speaks_json_rpc_for_a_client() {
    let mut session = Test::new()
        .words("proxy --server-log /dev/null")
        .server(&["sh", "-c", "cat > /dev/null"])
        .limit(Duration::from_secs(10))
        .terminal();
    session
        .expect("speaks JSON-RPC (MCP) on stdin and stdout for an MCP client")
        .expect("told at once");
    // Ctrl-D ends the run, as said.
    session.send("\x04").unwrap();
    session.expect(Eof).expect("the run ends");
}

/// A client that declared no elicitation gets no completion of the URL
/// elicitation elicit answered for it.
#[test]
fn no_completion_reaches_a_client_that_declared_no_elicitation() {
    let proxy = Test::new()
        .args([
            "proxy",
            "--no-input",
            "-a",
            "accept",
            "--server-log",
            "/dev/null",
        ])
        .server(&python_sdk_server());
    let got = dumb_client(
        proxy,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "no-elicitation", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "connect_account", "arguments": {}}}),
        ],
    );
    let result = got.last().unwrap();
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(r#""action":"accept""#)),
        "{result}"
    );
    for v in &got {
        assert_ne!(v["method"], "notifications/elicitation/complete", "{v}");
    }
}

/// The terminal's `y: yes · n: no` hint goes with the yes/no question once
/// it is answered: only `✔ question · answer` stays.
#[test]
fn the_yes_no_hint_does_not_stay_after_the_answer() {
    use crate::common::{form, Test};
    let schema = json!({"type": "object", "required": ["agree"], "properties": {
        "agree": {"type": "boolean", "title": "Agree"}, "name": {"type": "string", "title": "Name"}}});
    let mut p = Test::new().stdin(form("Terms", schema)).pty();
    p.expect("y: yes · n: no")
        .answer_settled("? Agree", "y")
        .answer("? Name", "Ada\r")
        .answer("Send these answers?", "\r");
    let done =
        p.finish_with(json!({"action": "accept", "content": {"agree": true, "name": "Ada"}}));
    let screen = done.visible();
    assert!(screen.contains("✔ Agree * (yes/no) · Yes"), "{screen}");
    assert!(
        !screen.contains("y: yes · n: no"),
        "the hint stayed:\n{screen}"
    );
}

/// A desktop client's proxy with no terminal and no browser that opens the
/// page: the message says "no terminal" once and names the ways to the
/// page beside the answers.
#[test]
fn no_terminal_and_no_browser_names_the_ways_to_the_page() {
    let openers = tempfile::tempdir().unwrap();
    crate::common::stub_openers(openers.path(), 3);
    let path = format!(
        "{}:{}",
        openers.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let proxy = Test::new()
        .args(["proxy", "--server-log", "/dev/null"])
        .env("PATH", path)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("BROWSER")
        .env_remove("ELICIT_BROWSER")
        .env_remove("CI")
        .no_terminal()
        .server(&python_sdk_server());
    let (got, run) = crate::common::client_session(
        proxy,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "desktop", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "confirm_delete", "arguments": {}}}),
        ],
    );
    assert!(got.last().is_some(), "the call had a reply");
    let said = &run.stderr();
    assert_eq!(said.matches("no terminal").count(), 1, "{said}");
    for fix in [
        "--browser",
        "ELICIT_BROWSER",
        "--no-open",
        "--answer",
        "--answers",
    ] {
        assert!(said.contains(fix), "{fix} not named:\n{said}");
    }
}
