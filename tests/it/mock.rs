//! `elicit mock`: the shipped cassette of server-everything's 13-field form
//! served as an MCP server, answered by `elicit call` over stdio and
//! Streamable HTTP, on the handshake and on 2026-07-28; a wrong answer
//! reported (and, with `--strict`, an error); `elicit proxy` in front of it
//! as an offline loop.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{free_port, wait_at_most, wait_listening, HttpServer, Test};
use crate::sdk_resolvers::{python_client, ts_client};

const BIN: &str = env!("CARGO_BIN_EXE_elicit");
const EVERYTHING: &str = "fixtures/server-everything/everything.cassette.json";

fn fixture() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(EVERYTHING);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `elicit call` of the cassette's tool with `answers`, against `server`
/// (a URL, or the mock's argv after `--`).
fn call(extra: &[&str], answers: &[&str], server: &[&str]) -> Test {
    Test::new()
        .args(["call", "--tool", "trigger-elicitation-request"])
        .args(extra)
        .args(answers.iter().flat_map(|a| ["-a", *a]))
        .args(server)
        .limit(Duration::from_secs(60))
}

fn stdio_mock(strict: bool) -> Vec<&'static str> {
    let mut argv = vec!["--", BIN, "mock"];
    if strict {
        argv.push("--strict");
    }
    argv.push(EVERYTHING);
    argv
}

#[test]
fn the_recorded_form_answered_as_recorded_gives_the_recorded_result_on_both_generations() {
    let recorded = fixture();
    let form = &recorded["elicitations"][0]["request"]["requestedSchema"]["properties"];
    assert_eq!(form.as_object().unwrap().len(), 13, "the 13-field form");
    for protocol in ["2025-11-25", "2026-07-28"] {
        let out = call(
            &["--protocol", protocol],
            &["accept", "name=Ada"],
            &stdio_mock(false),
        )
        .run();
        let got: Value = serde_json::from_str(out.stdout()).unwrap();
        let mut want = recorded["result"].clone();
        if protocol == "2026-07-28" {
            want["resultType"] = json!("complete");
        }
        assert_eq!(got, want, "{protocol}");
        assert!(!out.stderr().contains("differs"));
    }
}

#[test]
fn a_wrong_answer_is_reported_on_stderr_and_in_the_result_and_strict_makes_it_an_error() {
    let out = call(&[], &["accept", "name=Bob"], &stdio_mock(false)).run();
    let stderr = out.stderr();
    assert!(
        stderr.contains(r#"elicit mock: elicitation 1: the answer differs from the recorded one (name): ~ /content/name: "Ada" → "Bob""#),
        "{stderr}"
    );
    let got: Value = serde_json::from_str(out.stdout()).unwrap();
    let said = &got["_meta"]["elicit/mock"]["mismatches"];
    assert_eq!(said.as_array().unwrap().len(), 1, "{got}");
    let last = got["content"].as_array().unwrap().last().unwrap();
    assert!(
        last["text"].as_str().unwrap().contains("/content/name"),
        "{last}"
    );

    let strict = call(&[], &["accept", "name=Bob"], &stdio_mock(true))
        .status(1)
        .run();
    strict.stderr_has("the answer differs from the recorded one (name)");
    let got: Value = serde_json::from_str(strict.stdout()).unwrap();
    assert_eq!(got["isError"], true);
    assert!(got["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("\"Ada\" → \"Bob\""));

    let declined = call(&[], &["decline"], &stdio_mock(true)).status(1).run();
    declined.stderr_has("the answer differs from the recorded one");
    let got: Value = serde_json::from_str(declined.stdout()).unwrap();
    assert!(
        got["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("/action"),
        "{got}"
    );
}

/// An answer that differs in several fields is reported once for its
/// elicitation, the line naming each field, on both generations.
#[test]
fn a_wrong_answer_is_reported_once_per_elicitation_listing_the_fields() {
    for protocol in ["2025-11-25", "2026-07-28"] {
        let out = call(
            &["--protocol", protocol],
            &["accept", "name=Bob", "integer=7"],
            &stdio_mock(false),
        )
        .run();
        let said: Vec<&str> = out
            .stderr()
            .lines()
            .filter(|l| l.contains("the answer differs"))
            .collect();
        assert_eq!(said.len(), 1, "{protocol}: {}", out.stderr());
        assert!(
            said[0].contains(r#"elicitation 1: the answer differs from the recorded one (name, integer): ~ /content/name: "Ada" → "Bob"; ~ /content/integer: 42 → 7"#),
            "{protocol}: {}",
            said[0]
        );
        let got: Value = serde_json::from_str(out.stdout()).unwrap();
        let mismatches = &got["_meta"]["elicit/mock"]["mismatches"];
        assert_eq!(
            mismatches.as_array().map(Vec::len),
            Some(1),
            "{protocol}: {got}"
        );
    }
}

/// `elicit mock --http PORT` on a free port of 127.0.0.1, killed when
/// dropped.
fn http_mock() -> HttpServer {
    let port = free_port();
    let child = Test::new()
        .words("mock --http")
        .args([&port.to_string(), EVERYTHING])
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpServer(child, port);
    wait_listening(port, Duration::from_secs(6), "elicit mock");
    server
}

#[test]
fn over_streamable_http_both_generations_give_the_recorded_result_and_a_wrong_answer_is_said() {
    let mock = http_mock();
    let url = mock.url();
    let recorded = fixture();
    for protocol in ["2025-11-25", "2026-07-28"] {
        let out = call(&["--protocol", protocol], &["accept", "name=Ada"], &[&url]).run();
        let got: Value = serde_json::from_str(out.stdout()).unwrap();
        assert_eq!(got["content"], recorded["result"]["content"], "{protocol}");
    }
    let out = call(&[], &["accept", "name=Bob"], &[&url]).run();
    let got: Value = serde_json::from_str(out.stdout()).unwrap();
    assert!(got["_meta"]["elicit/mock"]["mismatches"][0]
        .as_str()
        .unwrap()
        .contains("/content/name"));
    // Another origin (a web page in a browser) is refused.
    let refused = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "POST",
            "-H",
            "Origin: http://evil.example",
            "--data",
            "{}",
            &url,
        ])
        .output();
    if let Ok(r) = refused {
        assert_eq!(String::from_utf8_lossy(&r.stdout), "403");
    }
}

#[test]
fn proxy_in_front_of_mock_is_an_offline_loop() {
    let mut proxy = Test::new()
        .words("proxy --no-input -a accept -a name=Ada")
        .server(&[BIN, "mock", EVERYTHING])
        .limit(Duration::from_secs(60))
        .feed()
        .spawn();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "no-elicitation", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "trigger-elicitation-request", "arguments": {}}}),
    ];
    // All at once, before any reply (pipelined).
    for l in &lines {
        proxy.send(l);
    }
    let mut replies = Vec::new();
    loop {
        let v = proxy.next_json();
        let last = v["id"] == 3;
        replies.push(v);
        if last {
            break;
        }
    }
    proxy.close_stdin();
    proxy.wait();
    let tools = &replies.iter().find(|v| v["id"] == 2).expect("tools/list")["result"]["tools"];
    assert_eq!(tools[0]["name"], "trigger-elicitation-request");
    let result = &replies
        .iter()
        .find(|v| v["id"] == 3)
        .expect("the call's result")["result"];
    assert_eq!(result, &fixture()["result"]);
    assert!(
        !replies.iter().any(|v| v["method"] == "elicitation/create"),
        "the proxy answered it"
    );
}

#[test]
fn a_bad_cassette_is_named_and_nothing_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cassette.json");
    std::fs::write(
        &bad,
        r#"{"elicit": "cassette/1", "server": {"command": []}, "tool": "x"}"#,
    )
    .unwrap();
    Test::new()
        .arg("mock")
        .arg(&bad)
        .limit(Duration::from_secs(10))
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("bad.cassette.json")
        .stderr_has("/server");
}

#[test]
fn a_message_past_the_transports_bounds_gets_a_parse_error_and_the_mock_goes_on() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let out = Test::new()
        .args(["mock", EVERYTHING])
        .stdin(format!("{deep}\n{ping}\n"))
        .limit(Duration::from_secs(30))
        .run();
    let out = out.stdout();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["error"]["code"], -32700);
    assert!(
        lines[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("128"),
        "{out}"
    );
    assert_eq!(lines[1], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
}

/// MCP Inspector's CLI (npm `@modelcontextprotocol/inspector --cli`,
/// pinned) calls the cassette's tool through `elicit proxy` in front of
/// `elicit mock`: the proxy answers the form (`-a`) for the Inspector, which
/// declares no elicitation, and the Inspector prints the recorded result;
/// a wrong answer comes back reported in the result.
#[test]
fn the_inspector_cli_through_the_proxy_gets_the_recorded_result_and_a_wrong_answer_reported() {
    crate::common::installed();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let inspector = root.join(".deps/inspector/node_modules/.bin/mcp-inspector");
    let dir = tempfile::tempdir().unwrap();
    let inspect = |name: &str| -> (Value, String) {
        // The Inspector takes the server's command from a config file: on its
        // command line it would swallow the proxy's `--`.
        let config = dir.path().join(format!("{name}.json"));
        let answer = format!("name={name}");
        let mut args: Vec<&str> = "proxy --no-input --server-log /dev/null -a accept -a"
            .split(' ')
            .collect();
        args.extend([answer.as_str(), "--", BIN, "mock", EVERYTHING]);
        let servers = json!({"mcpServers": {"mocked": {"command": BIN, "args": args}}});
        std::fs::write(&config, servers.to_string()).unwrap();
        let out_path = dir.path().join(format!("{name}.out"));
        let mut child = Command::new(&inspector)
            .current_dir(root)
            .args(["--cli", "--config"])
            .arg(&config)
            .args(["--server", "mocked", "--method", "tools/call"])
            .args(["--tool-name", "trigger-elicitation-request"])
            .env("MCP_INSPECTOR_SECRET_STORE", "memory")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let status = wait_at_most(&mut child, Duration::from_secs(90));
        let out = std::fs::read_to_string(&out_path).unwrap();
        assert!(status.success(), "the Inspector failed: {status:?}\n{out}");
        let got: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("the Inspector printed no JSON ({e}): {out}"));
        (got, out)
    };
    let (got, out) = inspect("Ada");
    assert_eq!(got["content"], fixture()["result"]["content"], "{out}");
    assert!(
        got.get("_meta")
            .and_then(|m| m.get("elicit/mock"))
            .is_none(),
        "{out}"
    );

    let (got, out) = inspect("Bob");
    let said = &got["_meta"]["elicit/mock"]["mismatches"];
    assert_eq!(said.as_array().map(Vec::len), Some(1), "{out}");
    let last = got["content"].as_array().unwrap().last().unwrap();
    assert!(
        last["text"]
            .as_str()
            .unwrap()
            .contains(r#"/content/name: "Ada" → "Bob""#),
        "{out}"
    );
}

/// The official SDKs' clients in their default modes (the Python SDK's
/// `Client` negotiates 2026-07-28, the TypeScript SDK's the handshake) use
/// `elicit mock` over stdio and `--http`: they list its tools (the Python
/// one rejects a 2026-07-28 list without `ttlMs` and `cacheScope`), call
/// the recorded one, answer its form with the one-line resolvers (`-a`) and
/// get the recorded result, with no mismatch said.
#[test]
fn the_sdk_clients_in_their_default_modes_use_the_mock_over_stdio_and_http() {
    let mock = http_mock();
    let tool = "trigger-elicitation-request";
    let options = json!({"answers": ["accept", "name=Ada"]});
    let recorded: Vec<Value> = fixture()["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].clone())
        .collect();
    let stdio: Vec<String> = [BIN, "mock", EVERYTHING].map(String::from).to_vec();
    for (transport, server) in [("stdio", stdio), ("--http", vec![mock.url()])] {
        let python = python_client("mcp", tool, options.clone(), &server, &[]).output();
        assert_eq!(
            python["protocol"], "2026-07-28",
            "Python over {transport}: {python}"
        );
        let ts = ts_client(tool, options.clone(), &server, &[]).output();
        for (sdk, out) in [("Python", python), ("TypeScript", ts)] {
            assert_eq!(out["tools"], json!([tool]), "{sdk} over {transport}: {out}");
            assert_eq!(out["isError"], false, "{sdk} over {transport}: {out}");
            assert_eq!(
                out["content"],
                json!(recorded),
                "{sdk} over {transport}: {out}"
            );
        }
    }
}
