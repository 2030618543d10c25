//! Hostile servers (tests/servers/hostile/server.py) driven through `elicit
//! call` and `elicit proxy`: what a server writes cannot act on the
//! terminal, nothing it starts outlives elicit, no line grows elicit without
//! bound, and a server cannot keep elicit busy forever.

use crate::common::{self, Run, Running, Test};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

fn hostile(mode: &str) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/hostile/server.py");
    vec!["python3".into(), script.display().to_string(), mode.into()]
}

/// What the hostile server's tool gives when it ends well.
const OK_RESULT: &str =
    "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"ok\\\":true}\"}],\"isError\":false}\n";

/// `elicit call --no-input --tool t ARGS -- server.py MODE`.
fn call(mode: &str, args: &[&str], env: &[(&str, &Path)]) -> Test {
    let mut test = Test::new()
        .args(["call", "--no-input", "--timeout", "20s", "--tool", "t"])
        .args(args)
        .server(&hostile(mode))
        .limit(Duration::from_secs(60));
    for (k, v) in env {
        test = test.env(k, v);
    }
    test
}

/// Whether a process is alive (a zombie nobody reaped counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Waits (a little) for a process to be gone; false if it stays.
fn gone_soon(pid: i32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_pid(path: &Path) -> i32 {
    for _ in 0..500 {
        if let Ok(t) = std::fs::read_to_string(path) {
            if let Ok(pid) = t.trim().parse() {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no pid in {}", path.display());
}

fn kill_if_alive(pid: i32) {
    if alive(pid) {
        // SAFETY: cleaning up a process this test caused to exist.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

// ---- 1. Server stderr never reaches the terminal raw -------------------

#[test]
fn server_stderr_is_sanitised_and_marked_as_the_servers() {
    let out = call("stderr_escapes", &[], &[]).stdout(OK_RESULT).run();
    let err = out.stderr();
    for needle in ["title", "clip", "move", "bidi", "8bit"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("server: ") && l.contains(needle)),
            "no `server: {needle}…` line in {err:?}"
        );
    }
    assert!(
        !out.stderr().contains('\u{1b}'),
        "an ESC reached stderr: {err:?}"
    );
    assert!(!err.contains('\u{202e}'), "a bidi override reached stderr");
    assert!(!err.contains('\u{9b}'), "an 8-bit CSI reached stderr");
    assert!(err.contains("<U+202E>"), "{err:?}");
}

#[test]
fn server_stderr_at_a_prompt_is_shown_after_it_not_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark");
    let mut args = vec!["call".to_string(), "--tool".into(), "t".into(), "--".into()];
    args.extend(hostile("stderr_at_prompt"));
    let mut p = Test::new()
        .stdin("")
        .args(args)
        .env("HOSTILE_MARK", mark.to_str().unwrap())
        .pty();
    p.expect("? name *");
    // The server has written its stderr line while the prompt is up.
    for _ in 0..500 {
        if mark.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(mark.exists(), "the server never wrote its stderr line");
    common::quiet_for(
        Duration::from_millis(300),
        "the server's stderr must not be drawn while the prompt is up",
    );
    assert!(p.alive());
    assert!(
        !common::contains(&p.transcript, b"LEAK-DURING-PROMPT"),
        "server stderr was drawn into the prompt: {}",
        String::from_utf8_lossy(&p.transcript).escape_debug()
    );
    // (alive() drained the screen: the prompt is already on it.)
    p.send("Ada\r").answer("Send these answers?", "\r");
    p.expect("server: LEAK-DURING-PROMPT");
    let f = p.finish();
    assert!(f.stdout().contains(r#"\"name\":\"Ada\""#), "{}", f.stdout());
    let after = f.screen_text();
    let at = after.find("server: LEAK-DURING-PROMPT").unwrap();
    assert!(
        !after[at..].contains('\u{7}') && !after[at..].contains("]0;T"),
        "the title escape was not neutralised: {:?}",
        &after[at..]
    );
}

/// `elicit proxy --no-input ARGS -- server.py MODE`, its stdin ours.
fn proxy(mode: &str, args: &[&str], env: &[(&str, &Path)]) -> Running {
    let mut test = Test::new()
        .args(["proxy", "--no-input", "--shutdown-grace", "2s"])
        .args(args)
        .server(&hostile(mode))
        .limit(Duration::from_secs(60))
        .feed();
    for (k, v) in env {
        test = test.env(k, v);
    }
    test.spawn()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"t","arguments":{}}}"#;

/// Sends `lines` to the proxy, reads `replies` lines back (failing past
/// the run's limit rather than hanging), hangs up, and returns the replies
/// and the run.
fn proxy_exchange(mut proxy: Running, lines: &[&str], replies: usize) -> (Vec<Value>, Run) {
    for l in lines {
        proxy.write(format!("{l}\n").as_bytes());
    }
    let got = (0..replies).map(|_| proxy.next_json()).collect();
    proxy.close_stdin();
    (got, proxy.wait())
}

#[test]
fn proxy_relays_server_stderr_sanitised() {
    let (replies, out) = proxy_exchange(proxy("stderr_escapes", &[], &[]), &[INIT, CALL], 2);
    assert_eq!(replies.len(), 2);
    let err = out.stderr();
    assert!(
        err.lines().any(|l| l.starts_with("server: clip")),
        "{err:?}"
    );
    assert!(
        !out.stderr().contains('\u{1b}'),
        "an ESC reached stderr: {err:?}"
    );
}

// ---- 6. SIGTERM / SIGHUP to `elicit call` ------------------------------

fn signal_during_hang(signal: libc::c_int, status: i32) -> (Run, i32) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("server.pid");
    let mark = dir.path().join("mark");
    let elicit = Test::new()
        .env("HOSTILE_PID_FILE", &pid_file)
        .env("HOSTILE_MARK", &mark)
        .args(["call", "--no-input", "--timeout", "60s", "--tool", "t"])
        .server(&hostile("hang"))
        .limit(Duration::from_secs(60))
        .status(status)
        .spawn();
    let server = read_pid(&pid_file);
    common::wait_until(
        Duration::from_secs(20),
        "the server has the tools/call",
        || mark.exists(),
    );
    elicit.signal(signal);
    let out = elicit.wait();
    let left = !gone_soon(server);
    kill_if_alive(server);
    assert!(!left, "the server (pid {server}) was left running");
    (out, server)
}

#[test]
fn sigterm_to_call_ends_the_server_and_exits_143() {
    // The exit status is checked as the run ends.
    signal_during_hang(libc::SIGTERM, 143);
}

#[test]
fn sighup_to_call_ends_the_server_and_exits_129() {
    signal_during_hang(libc::SIGHUP, 129);
}

// ---- 10. Nothing the server started outlives `call` --------------------

fn grandchild_survives(mode: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    call(mode, &[], &[("HOSTILE_PID_FILE", &pid_file)])
        .stdout(OK_RESULT)
        .run();
    let grandchild = read_pid(&pid_file);
    let survived = !gone_soon(grandchild);
    kill_if_alive(grandchild);
    survived
}

#[test]
fn a_grandchild_ignoring_sigterm_does_not_survive_call() {
    assert!(
        !grandchild_survives("grandchild"),
        "the grandchild was left running"
    );
}

#[test]
fn a_grandchild_that_called_setsid_does_not_survive_call() {
    assert!(
        !grandchild_survives("grandchild_setsid"),
        "the setsid grandchild was left running"
    );
}

// ---- 11. The proxy ends with the server, whatever holds its stdout -----

#[test]
fn proxy_ends_when_the_server_exits_though_a_grandchild_holds_its_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let mut child = proxy(
        "exit_with_grandchild",
        &[],
        &[("HOSTILE_PID_FILE", &pid_file)],
    );
    child.write(format!("{INIT}\n").as_bytes());
    let reply = child.next_json();
    assert_eq!(reply["id"], "init");
    let grandchild = read_pid(&pid_file);
    // The client stays connected: only the server's exit can end the run.
    child.wait();
    let survived = !gone_soon(grandchild);
    kill_if_alive(grandchild);
    assert!(!survived, "the grandchild was left running");
}

// ---- 9. The proxy stops a server that asks for input forever ----------

#[test]
fn proxy_gives_up_on_endless_input_required_with_an_error_to_the_client() {
    let call = r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let (replies, out) = proxy_exchange(
        proxy("input_forever", &["-a", "name=x", "-a", "accept"], &[]),
        &[INIT, call],
        2,
    );
    let reply = &replies[1];
    assert_eq!(reply["id"], "call", "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("32 times"), "{reply}\n{}", out.stderr());
    assert!(reply["error"]["code"].is_i64());
}

// ---- 12. Escaped method names do not slip past the proxy --------------

#[test]
fn proxy_answers_elicitations_whose_method_is_escaped() {
    let (replies, out) = proxy_exchange(
        proxy("escaped_method", &["-a", "name=Ada", "-a", "accept"], &[]),
        &[INIT, CALL],
        2,
    );
    let reply = &replies[1];
    assert_eq!(
        reply["id"],
        "call",
        "an escaped elicitation reached the client: {reply}\n{}",
        out.stderr()
    );
    let got: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    for k in ["a", "b"] {
        assert_eq!(
            got[k]["result"],
            json!({"action": "accept", "content": {"name": "Ada"}}),
            "{got}"
        );
    }
}

#[test]
fn proxy_declares_elicitation_on_an_escaped_initialize() {
    let init = r#"{"jsonrpc":"2.0","id":"init","method":"\u0069nitialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let (replies, _) = proxy_exchange(proxy("", &[], &[]), &[init], 1);
    assert_eq!(
        replies[0]["result"]["client"]["capabilities"]["elicitation"],
        json!({"form": {}, "url": {}}),
        "{}",
        replies[0]
    );
}

// ---- 13. Scripted answers span the forms of a session -----------------

#[test]
fn call_scripts_a_tool_that_asks_two_forms() {
    let out = call(
        "two_forms",
        &["-a", "a=1", "-a", "b=2", "-a", "c=3", "-a", "accept"],
        &[],
    )
    .run();
    let err = out.stderr();
    let result: Value = serde_json::from_str(out.stdout()).unwrap();
    let got: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        got["a"]["result"],
        json!({"action": "accept", "content": {"a": "1"}})
    );
    assert_eq!(
        got["b"]["result"],
        json!({"action": "accept", "content": {"b": "2"}})
    );
    assert!(err.contains("warning: unused answer c"), "{err}");
    assert!(
        !err.contains("unused answer a") && !err.contains("unused answer b"),
        "{err}"
    );
}

#[test]
fn proxy_scripts_a_tool_that_asks_two_forms() {
    let (replies, out) = proxy_exchange(
        proxy(
            "two_forms",
            &["-a", "a=1", "-a", "b=2", "-a", "c=3", "-a", "accept"],
            &[],
        ),
        &[INIT, CALL],
        2,
    );
    let got: Value =
        serde_json::from_str(replies[1]["result"]["content"][0]["text"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}: {}", replies[1]));
    assert_eq!(got["a"]["result"]["content"], json!({"a": "1"}));
    assert_eq!(got["b"]["result"]["content"], json!({"b": "2"}));
    let err = out.stderr();
    assert!(err.contains("warning: unused answer c"), "{err}");
    assert!(!err.contains("unused answer a"), "{err}");
}

// ---- 8. One line cannot grow elicit without bound ----------------------

/// The peak resident memory of a running process, in MiB.
fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024
}

/// Loose: with a 100 MB line, elicit before bounded reading peaked at
/// 246 MiB (`--lines`) and 382 MiB (proxy, both ways); now near 90 MiB.
const PEAK_LIMIT_MIB: u64 = 150;
const BIG: usize = 100_000_000;

#[test]
fn call_stops_at_an_endless_line_with_a_clear_error() {
    let out = call("endless_line", &[], &[]).status(1).run();
    let err = out.stderr();
    assert!(err.contains("64 MiB message limit"), "{err}");
    assert!(out.stdout().is_empty());
}

#[test]
fn proxy_streams_lines_over_the_limit_both_ways_without_holding_them() {
    let mut child = proxy("big_line", &[], &[]);
    // (big_line answers tools/call with one BIG-byte line.)
    child.write(format!("{INIT}\n").as_bytes());
    child.next_raw_line();
    // Client → server: a BIG-byte request the server gets whole (it is not
    // one elicit reads, so it is passed on in pieces).
    let pad = "y".repeat(BIG);
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"t","arguments":{{"pad":"{pad}"}}}}}}"#
    );
    drop(pad);
    child.write(request.as_bytes());
    child.write(b"\n");
    drop(request);
    // Server → client: the BIG-byte reply arrives whole, byte for byte.
    let line = child.next_raw_line();
    let env_bytes = 70_000_000usize; // HOSTILE_BYTES default in server.py
    assert_eq!(line.len(), env_bytes, "the reply was not relayed whole");
    assert!(line.starts_with(r#"{"jsonrpc":"2.0","id":"big","result""#));
    assert!(line.ends_with("\"}]}}\n"));
    drop(line);
    let peak = peak_rss_mib(child.id());
    child.close_stdin();
    child.wait();
    assert!(peak < PEAK_LIMIT_MIB, "the proxy peaked at {peak} MiB");
}

#[test]
fn lines_mode_rejects_an_oversized_line_without_holding_it() {
    let valid = r#"{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}"#;
    let mut writer = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import sys,time\nsys.stdout.write('x'*{BIG} + '\\n' + '{valid}' + '\\n')\nsys.stdout.flush()\ntime.sleep(60)"
            ),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut elicit = Test::new()
        .args(["--lines", "--no-input", "-a", "accept"])
        .stdin_from(writer.stdout.take().unwrap())
        .limit(Duration::from_secs(60))
        // The first line fails (over the limit), the second is answered.
        .status(2)
        .spawn();
    let first = elicit.next_line();
    let second = elicit.next_line();
    let peak = peak_rss_mib(elicit.id());
    let _ = writer.kill();
    let _ = writer.wait();
    // It ends once its input does: not killed.
    let out = elicit.wait();
    out.stderr_has("elicit: 1 of 2 lines failed");
    let first: Value = serde_json::from_str(&first).unwrap();
    let message = first["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("{BIG} bytes")), "{first}");
    assert_eq!(first["error"]["line"], 1);
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!(second["action"], "accept", "{second}");
    assert!(peak < PEAK_LIMIT_MIB, "elicit --lines peaked at {peak} MiB");
}
