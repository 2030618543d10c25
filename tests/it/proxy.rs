//! `elicit proxy` between a fake client (this test) and a fake server
//! (tests/servers/relay_server.py): thousands of interleaved messages and
//! elicitations, 20 MB lines both ways, a crash, and a client hang-up in the
//! middle of a prompt.

use crate::common::installed;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{
    answers, client_session, http_server, replies_to, wait_line_mode, wait_raw_mode, HttpServer,
    Running, Test,
};

fn server() -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/relay_server.py");
    vec!["python3".into(), script.display().to_string()]
}

/// `elicit proxy --no-input --shutdown-grace 5s EXTRA -- relay_server`,
/// its stdin the test's to write.
fn spawn_proxy(extra: &[&str]) -> Running {
    Test::new()
        .args(["proxy", "--no-input", "--shutdown-grace", "5s"])
        .args(extra)
        .server(&server())
        .limit(Duration::from_secs(60))
        .feed()
        .spawn()
}

#[test]
fn interleaved_traffic_is_relayed_in_order_unaltered_and_elicitations_answered() {
    let mut proxy = spawn_proxy(&["-a", "accept"]);
    const N: usize = 3000;
    // Written while the proxy's replies are read on (the run drains them).
    let mut sent = Vec::new();
    let init = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"dumb","version":"0"}}}"#;
    proxy.write(format!("{init}\n").as_bytes());
    for i in 0..N {
        // Odd spacing and escapes: a re-serialiser would change them.
        let line = format!(
            r#"{{"jsonrpc": "2.0", "id": {i}, "method": "echo", "params": {{"seq": {i}, "s": "x\u00e9\/{i}"}}}}"#
        );
        proxy.write(format!("{line}\n").as_bytes());
        sent.push(line);
        if i % 15 == 0 {
            proxy.write(
                format!(r#"{{"jsonrpc":"2.0","id":"a-{i}","method":"ask","params":{{"n":{i}}}}}"#)
                    .as_bytes(),
            );
            proxy.write(b"\n");
        }
    }
    // The client keeps its end open until every reply is in: hanging up
    // earlier would (rightly) cancel the elicitations still pending.
    let expected = 1 + N + N / 10 + N.div_ceil(15);
    let lines: Vec<String> = (0..expected).map(|_| proxy.next_line()).collect();
    proxy.close_stdin();
    proxy.wait();

    let init: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(init["id"], "init");
    assert_eq!(
        init["result"]["received"]["capabilities"]["elicitation"],
        json!({"form": {}, "url": {}}),
        "the client's initialize gains the elicitation capability"
    );
    let mut next_seq = 0;
    let mut ticks = 0;
    let mut asks = 0;
    for line in &lines[1..] {
        assert!(
            !line.contains("elicitation/create"),
            "an elicitation reached the client: {line}"
        );
        let v: Value = serde_json::from_str(line).unwrap();
        if v["method"] == "notifications/tick" {
            ticks += 1;
            assert_eq!(v["params"]["n"], ticks * 10);
            assert!(
                line.starts_with(r#"{"jsonrpc": "2.0", "method""#),
                "not byte for byte: {line}"
            );
            continue;
        }
        if let Some(a) = v["id"].as_str().and_then(|s| s.strip_prefix("a-")) {
            let n: i64 = a.parse().unwrap();
            assert_eq!(
                v["result"]["reply"]["result"],
                json!({"action":"accept","content":{"n":n}})
            );
            asks += 1;
            continue;
        }
        assert_eq!(v["id"], json!(next_seq), "reordered");
        assert!(
            line.starts_with(&format!(r#"{{"id": {next_seq}, "jsonrpc": "2.0""#)),
            "not byte for byte: {line}"
        );
        assert!(
            line.ends_with(r#""odd": "caf\u00e9 \/"}}"#),
            "not byte for byte: {line}"
        );
        assert_eq!(
            v["result"]["raw"], sent[next_seq],
            "the server got an altered line"
        );
        next_seq += 1;
    }
    assert_eq!(next_seq, N, "lost echo responses");
    assert_eq!(ticks, N / 10);
    assert_eq!(asks, N.div_ceil(15));
}

#[test]
fn twenty_megabyte_lines_pass_whole_both_ways() {
    let mut proxy = spawn_proxy(&[]);
    let pad = "z".repeat(20 * 1024 * 1024);
    let big_line =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{"pad":"{pad}"}}}}"#);
    proxy.write(format!("{big_line}\n").as_bytes());
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"big","params":{"size":20971520}}"#,
            "\n"
        )
        .as_bytes(),
    );
    proxy.close_stdin();
    let out = proxy.wait();
    let out = out.stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    let echo: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(echo["result"]["raw"].as_str().unwrap(), big_line);
    let big: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(
        big["result"]["blob"].as_str().unwrap().len(),
        20 * 1024 * 1024
    );
}

#[test]
fn a_server_crash_ends_the_proxy_with_its_status_after_delivering_everything() {
    let mut proxy = spawn_proxy(&[]);
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#,
            "\n"
        )
        .as_bytes(),
    );
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"crash","params":{"code":7}}"#,
            "\n"
        )
        .as_bytes(),
    );
    // The client's end stays open: the server's crash alone ends the proxy.
    let out = proxy.status(7).wait();
    let out = out.stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[1].contains("notifications/bye"));
}

#[test]
fn passthrough_declared_leaves_elicitations_to_a_client_that_declared_them() {
    let mut proxy = spawn_proxy(&["--passthrough-declared", "-a", "accept"]);
    proxy.write(concat!(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"elicitation":{}}}}"#, "\n").as_bytes());
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ask","params":{"n":1}}"#,
            "\n"
        )
        .as_bytes(),
    );
    let init = proxy.next_json();
    assert_eq!(
        init["result"]["received"]["capabilities"]["elicitation"],
        json!({"form": {}, "url": {}}),
        "url is added; form stays declared"
    );
    let q = proxy.next_json();
    assert_eq!(
        q["method"], "elicitation/create",
        "the client answers form elicitations itself"
    );
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":"q-1","result":{"action":"decline"}}"#,
            "\n"
        )
        .as_bytes(),
    );
    let reply = proxy.next_json();
    assert_eq!(reply["result"]["reply"]["result"]["action"], "decline");
    proxy.close_stdin();
    proxy.wait();
}

#[test]
fn client_hang_up_mid_elicitation_tells_the_server_cancel() {
    use expectrl::Expect;
    let PtyProxy {
        dir: _dir,
        record,
        mut session,
        mut client,
    } = pty_proxy();
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{}}}}"#
    )
    .unwrap();
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":1,"method":"ask","params":{{"n":5}}}}"#
    )
    .unwrap();
    client.flush().unwrap();
    session.expect("Question 5").unwrap();
    drop(client); // the client hangs up while the person is being asked
    session.expect(expectrl::Eof).unwrap();
    let replies = std::fs::read_to_string(&record).unwrap();
    let reply: Value = serde_json::from_str(replies.lines().next().unwrap()).unwrap();
    assert_eq!(reply["id"], "q-5");
    assert_eq!(reply["result"], json!({"action": "cancel"}));
}

#[test]
fn sigterm_is_forwarded_and_the_proxy_ends_with_the_servers_status() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("proxy.jsonl");
    let mut proxy = spawn_proxy(&["--log", log.to_str().unwrap()]);
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#,
            "\n"
        )
        .as_bytes(),
    );
    let line = proxy.next_line();
    assert!(line.contains("\"raw\""), "{line}");
    proxy.signal(libc::SIGTERM);
    // The server (python) dies of the forwarded SIGTERM; the proxy reports it.
    proxy.status(128 + libc::SIGTERM).wait();
    let entries: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries[0]["dir"], "send");
    assert_eq!(entries[0]["by"], "client");
    assert_eq!(entries[0]["message"]["method"], "echo");
    assert_eq!(entries[1]["dir"], "recv");
    assert_eq!(entries[1]["to"], "client");
}

#[test]
fn ctrl_c_at_a_prompt_cancels_that_elicitation_only() {
    use expectrl::Expect;
    let PtyProxy {
        dir: _dir,
        record,
        mut session,
        mut client,
    } = pty_proxy();
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":1,"method":"ask","params":{{"n":1}}}}"#
    )
    .unwrap();
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":2,"method":"ask","params":{{"n":2}}}}"#
    )
    .unwrap();
    client.flush().unwrap();
    session.expect("Question 1").unwrap();
    session.expect("›").unwrap();
    wait_raw_mode(&session).unwrap();
    session.send("\x03").unwrap();
    // The second question is still asked, not cancelled along with the first.
    session.expect("Question 2").unwrap();
    session.expect("›").unwrap();
    wait_raw_mode(&session).unwrap();
    session.send("\r").unwrap();
    session.expect("Send these answers?").unwrap();
    wait_raw_mode(&session).unwrap();
    session.send("\r").unwrap();
    // Both replies reached the server before the client hangs up.
    for _ in 0..100 {
        if std::fs::read_to_string(&record)
            .map(|r| r.lines().count())
            .unwrap_or(0)
            >= 2
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(client);
    session.expect(expectrl::Eof).unwrap();
    let replies: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies[0]["id"], "q-1");
    assert_eq!(replies[0]["result"], json!({"action": "cancel"}));
    assert_eq!(replies[1]["id"], "q-2");
    assert_eq!(
        replies[1]["result"],
        json!({"action": "accept", "content": {"n": 2}})
    );
}

/// The proxy on a pseudo-terminal (so it prompts), its client side a FIFO
/// the test writes to, and the relay server recording each elicitation
/// reply it receives.
struct PtyProxy {
    dir: tempfile::TempDir,
    record: PathBuf,
    session: expectrl::session::OsSession,
    client: std::fs::File,
}

fn pty_proxy() -> PtyProxy {
    pty_proxy_with(&[], &server().join(" "))
}

/// The Python SDK's test server (PyPI `mcp`, pinned in .deps/venv).
fn py_server() -> String {
    installed();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    format!(
        "{} {}",
        root.join(".deps/venv/bin/python").display(),
        root.join("tests/servers/py_elicit_server.py").display()
    )
}

/// `elicit proxy EXTRA -- SERVER` on a pty; the client's replies land in
/// `dir/out.jsonl`. `SERVER` is a shell command line.
fn pty_proxy_with(extra: &[&str], server: &str) -> PtyProxy {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("client.fifo");
    let record = dir.path().join("replies.jsonl");
    let out = dir.path().join("out.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let script = format!(
        "exec {} proxy {} -- {} < {} > {}",
        env!("CARGO_BIN_EXE_elicit"),
        extra.join(" "),
        server,
        fifo.display(),
        out.display()
    );
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script])
        .env("RELAY_RECORD", &record)
        .env("RELAY_SIGNALS", dir.path().join("signals.txt"))
        .env("NO_COLOR", "1");
    let mut session = expectrl::Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    let client = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    PtyProxy {
        dir,
        record,
        session,
        client,
    }
}

/// Waits for the client's reply with `id` in `out` (the proxy's stdout).
fn reply_for(out: &std::path::Path, id: i64) -> Value {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(out) {
            for line in text.lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    if v["id"] == json!(id) {
                        return v;
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "no reply {id}: {}",
        std::fs::read_to_string(out).unwrap_or_default()
    );
}

/// The client's handshake with a real server, through the proxy.
fn handshake(client: &mut std::fs::File, out: &std::path::Path) -> Value {
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"dumb","version":"0"}}}}}}"#
    )
    .unwrap();
    client.flush().unwrap();
    let init = reply_for(out, 0);
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    client.flush().unwrap();
    init
}

fn call_tool(client: &mut std::fs::File, id: i64, tool: &str) {
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
    .unwrap();
    client.flush().unwrap();
}

#[test]
fn ctrl_c_at_a_prompt_leaves_a_real_server_running_for_the_next_call() {
    use expectrl::Expect;
    let PtyProxy {
        dir,
        mut session,
        mut client,
        ..
    } = pty_proxy_with(&[], &py_server());
    let out = dir.path().join("out.jsonl");
    handshake(&mut client, &out);
    for id in [1, 2, 3] {
        call_tool(&mut client, id, "confirm_delete");
        // The header names the server from its initialize reply.
        session
            .expect("elicit-py-test-server asks for input")
            .unwrap();
        session.expect("Delete report.txt?").unwrap();
        session.expect("Really delete it?").unwrap();
        wait_raw_mode(&session).unwrap();
        session.send("\x03").unwrap();
        let reply = reply_for(&out, id);
        assert_eq!(
            reply["result"]["content"][0]["text"], r#"{"action":"cancel","content":null}"#,
            "call {id}: Ctrl-C cancels the elicitation, the tool still answers: {reply}"
        );
    }
    // And the server is still there for an ordinary request.
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list"}}"#
    )
    .unwrap();
    client.flush().unwrap();
    let list = reply_for(&out, 4);
    assert!(list["result"]["tools"].is_array(), "{list}");
    drop(client);
    session.expect(expectrl::Eof).unwrap();
}

#[test]
fn ctrl_c_with_no_prompt_up_goes_to_the_server() {
    use expectrl::Expect;
    let PtyProxy {
        dir,
        mut session,
        mut client,
        ..
    } = pty_proxy();
    let out = dir.path().join("out.jsonl");
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{}}}}"#
    )
    .unwrap();
    client.flush().unwrap();
    reply_for(&out, 1);
    wait_line_mode(&session).unwrap();
    // The relay server records the SIGINT it got and exits; the proxy ends
    // with it although the client is still connected.
    session.send("\x03").unwrap();
    session.expect(expectrl::Eof).unwrap();
    drop(client);
    let signals = std::fs::read_to_string(dir.path().join("signals.txt")).unwrap_or_default();
    assert_eq!(signals, "SIGINT\n", "the server never saw the Ctrl-C");
}

/// `elicit proxy -v --no-input ARGS -- SERVER`: sends `messages` (each with
/// an id waits for its reply), hangs up; returns the replies by id and
/// stderr.
fn verbose_session(args: &[&str], server: &[String], messages: &[Value]) -> (Vec<Value>, String) {
    let proxy = Test::new()
        .args(["proxy", "-v", "--no-input"])
        .args(args)
        .server(server)
        .limit(Duration::from_secs(60));
    let (got, run) = client_session(proxy, messages);
    (replies_to(got, messages), run.stderr().to_string())
}

fn py_server_argv() -> Vec<String> {
    py_server().split(' ').map(str::to_string).collect()
}

#[test]
fn verbose_says_what_the_proxy_decided_in_words() {
    let (replies, err) = verbose_session(
        &["-a", "accept", "-a", "confirm=true"],
        &py_server_argv(),
        &[
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"dumb","version":"0"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm_delete","arguments":{}}}),
        ],
    );
    assert!(
        replies[1]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("accept"),
        "{replies:?}"
    );
    for said in [
        "elicit proxy: declared elicitation (form and url) for the client in its initialize",
        "elicit proxy: answered the server's elicitation ",
        " (form mode): accept",
    ] {
        assert!(err.contains(said), "missing {said:?} in:\n{err}");
    }
    assert!(!err.contains("Some("), "Rust debug output: {err}");

    // 2026-07-28: input_required resolved and retried, then the final reply.
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"dumb","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}});
    let (replies, err) = verbose_session(
        &answers(&["accept", "name=Ada", "age=36", "color=blue"]),
        &py_server_argv(),
        &[
            json!({"jsonrpc":"2.0","id":"c-9","method":"tools/call","params":{"name":"ask_profile","arguments":{},"_meta":meta}}),
        ],
    );
    assert_eq!(
        replies[0]["result"]["resultType"], "complete",
        "{replies:?}"
    );
    for said in [
        r#"declared elicitation (form and url) for the client in the _meta of its tools/call "c-9""#,
        r#"resolved input_required for the client's request "c-9" (round 1; "#,
        r#"and sent it again as "elicit-proxy-1""#,
        r#"the server answered the retried request "c-9""#,
    ] {
        assert!(err.contains(said), "missing {said:?} in:\n{err}");
    }

    // Passthrough: the client declared form itself.
    let (_, err) = verbose_session(
        &["--passthrough-declared"],
        &server(),
        &[
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"elicitation":{}}}}),
        ],
    );
    assert!(
        err.contains("declared elicitation (url) for the client in its initialize"),
        "{err}"
    );
}

#[test]
fn verbose_notes_a_passed_through_elicitation() {
    let mut proxy = Test::new()
        .args(["proxy", "-v", "--no-input", "--passthrough-declared"])
        .server(&server())
        .limit(Duration::from_secs(30))
        .feed()
        .spawn();
    proxy.write(concat!(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"elicitation":{}}}}"#, "\n").as_bytes());
    proxy.write(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ask","params":{"n":1}}"#,
            "\n"
        )
        .as_bytes(),
    );
    proxy.next_json();
    let line = proxy.next_json();
    assert_eq!(line["method"], "elicitation/create", "{line}");
    proxy.close_stdin();
    proxy.wait().stderr_has(r#"passed the server's elicitation "q-1" (form mode) to the client: it declared that mode itself"#);
}

// ---- Remote servers (`elicit proxy URL`): the same behaviour ----------

/// The Python SDK's server over Streamable HTTP.
fn py_http() -> HttpServer {
    installed();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    http_server(
        root.join(".deps/venv/bin/python").to_str().unwrap(),
        &["tests/servers/py_http_server.py"],
    )
}

#[test]
fn remote_proxy_gives_up_on_endless_input_required_and_warns_of_unused_answers() {
    let server = http_server("python3", &["tests/servers/http_input_forever.py"]);
    let mut proxy = Test::new()
        .args(["proxy", "--no-input", "-a", "name=x", "-a", "accept"])
        .args(["-a", "nosuch=1", &server.url()])
        .limit(Duration::from_secs(60))
        .feed()
        .spawn();
    proxy.write(concat!(r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#, "\n").as_bytes());
    let reply = proxy.next_json();
    assert_eq!(reply["id"], "call", "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("32 times"), "{reply}");
    proxy.close_stdin();
    proxy
        .wait()
        .stderr_has("warning: unused answer nosuch: no form in this session had that field")
        .stderr_lacks("unused answer name");
}

#[test]
fn remote_proxy_ctrl_c_at_a_prompt_cancels_only_it_and_verbose_says_so() {
    use expectrl::Expect;
    let server = py_http();
    let PtyProxy {
        dir,
        mut session,
        mut client,
        ..
    } = pty_proxy_script(&["-v", &server.url()], None);
    let out = dir.path().join("out.jsonl");
    handshake(&mut client, &out);
    session
        .expect("declared elicitation (form and url) for the client in its initialize")
        .unwrap();
    for id in [1, 2] {
        call_tool(&mut client, id, "confirm_delete");
        session
            .expect("elicit-py-test-server asks for input")
            .unwrap();
        session.expect("Really delete it?").unwrap();
        wait_raw_mode(&session).unwrap();
        session.send("\x03").unwrap();
        let reply = reply_for(&out, id);
        assert_eq!(
            reply["result"]["content"][0]["text"], r#"{"action":"cancel","content":null}"#,
            "call {id}: {reply}"
        );
        session.expect("(form mode): cancel").unwrap();
    }
    writeln!(
        client,
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list"}}"#
    )
    .unwrap();
    client.flush().unwrap();
    assert!(reply_for(&out, 4)["result"]["tools"].is_array());
    // With no prompt up, Ctrl-C ends the session, as a stdio server
    // stopped by it would.
    wait_line_mode(&session).unwrap();
    session.send("\x03").unwrap();
    session.expect("EXIT=130").unwrap();
    drop(client);
}

// Fails on the relay before the one core: the remote proxy ended the session
// on the client's hang-up without answering the prompt's elicitation.
#[test]
fn remote_proxy_client_hang_up_mid_elicitation_tells_the_server_cancel() {
    use expectrl::Expect;
    let answers = tempfile::tempdir().unwrap();
    let record = answers.path().join("answers.jsonl");
    let server = http_server(
        "python3",
        &[
            "tests/servers/http_stalling.py",
            "ask",
            record.to_str().unwrap(),
        ],
    );
    // The directory holds the client's fifo and the proxy's stdout: bound
    // (not left to `..`, which drops it here) so it outlives the shell's
    // redirections; dropped early, sh fails on `> out.jsonl` and the proxy
    // never runs.
    let PtyProxy {
        dir: _dir,
        mut session,
        mut client,
        ..
    } = pty_proxy_script(&[&server.url()], None);
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#,
    ] {
        writeln!(client, "{line}").unwrap();
    }
    client.flush().unwrap();
    session.expect("How old are you?").unwrap();
    drop(client); // the client hangs up while the person is being asked
    session.expect("EXIT=0").unwrap();
    let replies = std::fs::read_to_string(&record).expect("the server got an answer");
    let reply: Value = serde_json::from_str(replies.lines().next().unwrap()).unwrap();
    assert_eq!(reply["id"], "q-5");
    assert_eq!(reply["result"], json!({"action": "cancel"}));
}

/// Runs `elicit proxy ARGS` on a pty from a shell that reports its exit
/// status and the terminal's mode afterwards (`EXIT=n`, `stty -a`), with
/// elicit's pid in `dir/pid`. `server`: a command after `--`.
fn pty_proxy_script(args: &[&str], server: Option<&str>) -> PtyProxy {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("client.fifo");
    let record = dir.path().join("replies.jsonl");
    let out = dir.path().join("out.jsonl");
    let pid = dir.path().join("pid");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let server = server.map(|s| format!("-- {s}")).unwrap_or_default();
    let script = format!(
        "trap '' INT; stty -a; echo STTY-BEFORE; {} proxy {} {server} < {} > {} & echo $! > {}; wait $!; echo EXIT=$?; stty -a; echo STTY-DONE",
        env!("CARGO_BIN_EXE_elicit"),
        args.join(" "),
        fifo.display(),
        out.display(),
        pid.display(),
    );
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script])
        .env("RELAY_RECORD", &record)
        .env("NO_COLOR", "1");
    let mut session = expectrl::Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    let client = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    PtyProxy {
        dir,
        record,
        session,
        client,
    }
}

/// Sends `sig` to the proxy of a [`pty_proxy_script`] run while its prompt
/// is up, and checks the terminal is back in its line mode afterwards.
fn signal_at_prompt_restores_the_terminal(mut p: PtyProxy, sig: i32, first: &str, expect: &str) {
    use expectrl::Expect;
    let m = p.session.expect("STTY-BEFORE").unwrap();
    let before = String::from_utf8_lossy(m.before()).into_owned();
    p.client.write_all(first.as_bytes()).unwrap();
    p.client.flush().unwrap();
    p.session.expect(expect).unwrap();
    wait_raw_mode(&p.session).unwrap();
    let pid: i32 = std::fs::read_to_string(p.dir.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signalling the proxy this test started.
    unsafe { libc::kill(pid, sig) };
    let m = p.session.expect("STTY-DONE").unwrap();
    let after = String::from_utf8_lossy(m.before()).into_owned();
    let stty = &after[after.find("EXIT=").expect("the proxy exited")..];
    assert!(stty.starts_with(&format!("EXIT={}", 128 + sig)), "{stty}");
    let mode = |s: &str| -> Vec<String> {
        s.split_whitespace()
            .filter(|w| !w.contains('='))
            .map(str::to_string)
            .collect()
    };
    let after = stty.split_once('\n').map(|(_, rest)| rest).unwrap_or("");
    assert_eq!(
        mode(after),
        mode(before.trim()),
        "the terminal's mode changed:\nbefore: {before}\nafter: {after}"
    );
    drop(p.client);
}

#[test]
fn sigterm_at_a_stdio_proxy_prompt_restores_the_terminal() {
    let p = pty_proxy_script(&[], Some(&server().join(" ")));
    let ask = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ask\",\"params\":{\"n\":7}}\n";
    signal_at_prompt_restores_the_terminal(p, libc::SIGTERM, ask, "Question 7");
}

#[test]
fn sigterm_and_sighup_at_a_remote_proxy_prompt_restore_the_terminal() {
    let server = py_http();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"dumb","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;
    let call = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"ask_profile\",\"arguments\":{{}},{meta}}}}}\n"
    );
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let p = pty_proxy_script(&[&server.url()], None);
        signal_at_prompt_restores_the_terminal(p, sig, &call, "Tell us about yourself");
    }
}
