//! elicit ends when the process that started it is gone: a client killed
//! by its own time limit (Claude Code's hook timeout kills the shell
//! around the hook) leaves elicit reparented, its page still listening or
//! its server still served, for nobody. The hook, the SDK resolvers' runs
//! (`--exit-with-parent`) and `mock` on stdio each end with their parent.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::page::{NoTerminal, BIN, LIMIT};

/// `elicit ARGS` as the child of a shell, which says elicit's pid first;
/// the shell's stdin is elicit's.
fn under_a_shell(args: &[&str], stdin_text: Option<&str>) -> (NoTerminal, u32) {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(r#"exec 3<&0; "$0" "$@" <&3 & echo $!; wait"#)
        .arg(BIN)
        .args(args);
    let run = NoTerminal::spawn_command(shell, stdin_text);
    let pid = run
        .lines
        .recv_timeout(LIMIT)
        .expect("the shell says elicit's pid");
    (run, pid.trim().parse().unwrap())
}

/// Whether `pid` is running (a zombie nobody reaped yet has ended).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Kills the shell as a client's time limit would (SIGKILL: no word to
/// its child), then waits a bounded time for elicit to end.
fn kill_the_shell_and_see_elicit_end(mut shell: NoTerminal, elicit: u32) {
    assert!(running(elicit), "elicit runs before its parent goes");
    shell.child.kill().unwrap();
    let _ = shell.child.wait();
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(elicit) {
        if Instant::now() > deadline {
            // Not left behind by the test either.
            let _ = Command::new("kill")
                .args(["-KILL", &elicit.to_string()])
                .status();
            panic!("elicit outlived its parent: {}", shell.stderr());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn hook_input() -> String {
    json!({
        "session_id": "9f1c2d3e-0000-4000-8000-000000000002",
        "hook_event_name": "Elicitation",
        "mcp_server_name": "deploy-bot",
        "message": "Where should we deploy?",
        "mode": "form",
        "requested_schema": {"type": "object", "properties": {"region": {"type": "string"}}}
    })
    .to_string()
}

/// The hook on the page path, its shell killed while the page waits.
#[test]
fn the_hook_and_its_page_end_with_the_shell_around_it() {
    let (shell, elicit) = under_a_shell(
        &["hook", "claude-code", "--ui", "browser", "--no-open"],
        Some(&hook_input()),
    );
    shell.page_address();
    kill_the_shell_and_see_elicit_end(shell, elicit);
}

/// A run as the SDK resolvers start it (`--exit-with-parent`), its client
/// killed while the page waits.
#[test]
fn an_sdk_resolvers_run_ends_with_its_client() {
    let form = json!({"message": "Region?", "requestedSchema": {"type": "object",
        "properties": {"region": {"type": "string"}}}});
    let (shell, elicit) = under_a_shell(
        &["--exit-with-parent", "--ui", "browser", "--no-open", "-"],
        Some(&form.to_string()),
    );
    shell.page_address();
    kill_the_shell_and_see_elicit_end(shell, elicit);
}

/// `mock` on stdio, its client killed while the pipe to it stays open
/// (held by another process, here the test).
#[test]
fn mock_on_stdio_ends_with_its_client() {
    let cassette = "fixtures/server-everything/everything.cassette.json";
    let (mut shell, elicit) = under_a_shell(&["mock", cassette], None);
    shell.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let reply = shell.lines.recv_timeout(LIMIT).expect("mock answers");
    assert!(reply.contains("\"id\":1"), "{reply}");
    kill_the_shell_and_see_elicit_end(shell, elicit);
}
