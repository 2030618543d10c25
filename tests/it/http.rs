//! Remote servers: `elicit call URL` and `elicit proxy URL` against real
//! servers started here on 127.0.0.1 (npm server-everything in its
//! `streamableHttp` and `sse` modes, the PyPI `mcp` test server over
//! streamable-http), and the error paths against small misbehaving servers
//! (tests/servers/http_misbehaving.py). Nothing here talks to any other
//! address. The servers come from scripts/install-test-servers (.deps/).

use crate::common::{answers, dumb_client, free_port, installed, wait_listening, Test};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(mut cmd: Command, port: u16) -> Server {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the test server");
    let server = Server(child);
    wait_listening(port, Duration::from_secs(30), "the test server");
    server
}

/// server-everything in `mode` (streamableHttp or sse) on a free port.
fn everything(mode: &str) -> (Server, u16) {
    installed();
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(
        root()
            .join(".deps/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    )
    .arg(mode)
    .env("PORT", port.to_string());
    (start(cmd, port), port)
}

fn python_http() -> (Server, u16) {
    installed();
    let port = free_port();
    let mut cmd = Command::new(root().join(".deps/venv/bin/python"));
    cmd.arg(root().join("tests/servers/py_http_server.py"))
        .arg(port.to_string());
    (start(cmd, port), port)
}

fn misbehaving(mode: &str, extra: &[&Path]) -> (Server, u16) {
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("tests/servers/http_misbehaving.py"))
        .arg(mode)
        .arg(port.to_string())
        .args(extra);
    (start(cmd, port), port)
}

fn call_ok(args: &[&str]) -> Value {
    Test::new()
        .args(["call", "--no-input", "--timeout", "30s"])
        .args(args)
        .run()
        .json()
}

/// A call that fails: its stderr.
fn call_err(args: &[&str]) -> String {
    Test::new()
        .args(["call", "--no-input", "--timeout", "20s"])
        .args(args)
        .failure()
        .run()
        .stderr()
        .to_string()
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn everything_streamable_http_form_accept_and_decline() {
    let (_server, port) = everything("streamableHttp");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let mut args = vec!["--log", log.to_str().unwrap()];
    args.extend("--tool trigger-elicitation-request -a accept -a name=Ada".split(' '));
    args.push(&url);
    let result = call_ok(&args);
    let text = text_of(&result);
    assert!(text.contains("\"name\": \"Ada\""), "{text}");
    assert!(text.contains("\"action\": \"accept\""), "{text}");
    // The elicitation arrived on the POST's stream and was answered by a POST.
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("elicitation/create"), "{log}");

    let result = call_ok(&[
        "--tool",
        "trigger-elicitation-request",
        "-a",
        "decline",
        &url,
    ]);
    assert!(text_of(&result).contains("declined"), "{result}");
}

#[test]
fn everything_legacy_sse_by_fallback_and_by_choice() {
    let (_server, port) = everything("sse");
    let url = format!("http://127.0.0.1:{port}/sse");
    let result = call_ok(&[
        "--tool",
        "trigger-elicitation-request",
        "-a",
        "accept",
        "-a",
        "name=Ada",
        &url,
    ]);
    assert!(text_of(&result).contains("\"name\": \"Ada\""), "{result}");
    let result = call_ok(&[
        "--transport",
        "sse",
        "--tool",
        "trigger-elicitation-request",
        "-a",
        "cancel",
        &url,
    ]);
    assert!(text_of(&result).contains("cancel"), "{result}");
}

/// A client that declares no elicitation, through `elicit proxy URL`: the
/// reply to its call (nothing but its own reply came before the handshake's).
fn proxied_call(proxy_args: &[&str], tool: &str, arguments: Value) -> Value {
    let got = dumb_client(
        Test::new().arg("proxy").args(proxy_args),
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"dumb","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
        ],
    );
    assert_eq!(got[0]["id"], 1, "{}", got[0]);
    got.last().expect("a reply").clone()
}

#[test]
fn proxy_url_gives_a_client_without_elicitation_the_final_result() {
    let (_server, port) = everything("streamableHttp");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let reply = proxied_call(
        &["-a", "accept", "-a", "name=Ada", &url],
        "trigger-elicitation-request",
        json!({}),
    );
    assert!(
        text_of(&reply["result"]).contains("\"name\": \"Ada\""),
        "{reply}"
    );
}

#[test]
fn proxy_url_over_legacy_sse() {
    let (_server, port) = everything("sse");
    let url = format!("http://127.0.0.1:{port}/sse");
    let reply = proxied_call(
        &["-a", "decline", &url],
        "trigger-elicitation-request",
        json!({}),
    );
    assert!(text_of(&reply["result"]).contains("declined"), "{reply}");
}

fn py_echo(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn python_sdk_over_streamable_http_both_generations() {
    let (_server, port) = python_http();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for protocol in ["2025-11-25", "2026-07-28"] {
        let result = call_ok(
            &[
                &["--protocol", protocol, "--tool", "ask_profile"][..],
                &answers(&["name=Ada", "age=36", "color=Green", "accept"]),
                &[&url],
            ]
            .concat(),
        );
        assert_eq!(
            py_echo(&result),
            json!({"action":"accept","content":{"name":"Ada","age":36,"subscribe":false,"color":"green"}}),
            "{protocol}"
        );
        let result = call_ok(&[
            "--protocol",
            protocol,
            "--tool",
            "ask_profile",
            "-a",
            "decline",
            &url,
        ]);
        assert_eq!(
            py_echo(&result),
            json!({"action":"decline","content":null}),
            "{protocol}"
        );
        let result = call_ok(&[
            "--protocol",
            protocol,
            "--tool",
            "connect_account",
            "-a",
            "accept",
            &url,
        ]);
        assert_eq!(py_echo(&result)["action"], "accept", "{protocol}");
    }
}

#[test]
fn a_server_answering_html_is_named_as_not_mcp() {
    let (_server, port) = misbehaving("html", &[]);
    let err = call_err(&["--tool", "t", &format!("http://127.0.0.1:{port}/mcp")]);
    assert!(
        err.contains("text/html") && err.contains("not MCP"),
        "{err}"
    );
}

#[test]
fn a_server_that_dies_mid_stream_is_reported() {
    let (_server, port) = misbehaving("dies", &[]);
    let err = call_err(&["--tool", "t", &format!("http://127.0.0.1:{port}/mcp")]);
    assert!(
        err.contains("closed the stream for tools/call before sending its reply"),
        "{err}"
    );
}

#[test]
fn a_lost_session_says_so() {
    let (_server, port) = misbehaving("gone", &[]);
    let err = call_err(&["--tool", "t", &format!("http://127.0.0.1:{port}/mcp")]);
    assert!(err.contains("no longer knows this session"), "{err}");
}

#[test]
fn unauthorized_names_the_header_option_and_never_prints_its_value() {
    let (_server, port) = misbehaving("auth", &[]);
    let err = call_err(&[
        "-H",
        "Authorization: Bearer WRONG-SECRET-123",
        "--tool",
        "t",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    assert!(err.contains("401") && err.contains("--header"), "{err}");
    assert!(!err.contains("WRONG-SECRET-123"), "{err}");
}

#[test]
fn connection_refused_is_named() {
    let port = free_port();
    let err = call_err(&["--tool", "t", &format!("http://127.0.0.1:{port}/mcp")]);
    assert!(err.contains("connection refused"), "{err}");
}

/// A self-signed certificate for localhost and 127.0.0.1 and its key,
/// written in `dir`: (cert.pem, key.pem).
fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    (cert_path, key_path)
}

#[test]
fn a_self_signed_certificate_is_a_clear_tls_error() {
    let dir = tempfile::tempdir().unwrap();
    let (cert_path, key_path) = self_signed(dir.path());
    let (_server, port) = misbehaving("tls", &[&cert_path, &key_path]);
    let err = call_err(&["--tool", "t", &format!("https://127.0.0.1:{port}/mcp")]);
    assert!(err.contains("TLS failure"), "{err}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
}

/// A 2026-07-28 server answering a tools/call with 400 -32020 (header
/// mismatch) because the tool gained an `x-mcp-header` parameter since it
/// was listed: elicit reads tools/list again and sends the call once more,
/// now with `Mcp-Param-Region`.
#[test]
fn a_header_mismatch_rereads_the_tools_and_retries_once() {
    let (_server, port) = misbehaving("mismatch", &[]);
    let result = call_ok(&[
        "--protocol",
        "2026-07-28",
        "--tool",
        "t",
        "--arg",
        "region=eu-west",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    assert_eq!(text_of(&result), "region eu-west");
}

/// With --protocol auto, a server that refuses server/discover with an
/// error only a 2026-07-28 server sends (-32021, missing client
/// capability) is recognised as modern: elicit says so instead of falling
/// back to an initialize handshake that cannot work.
#[test]
fn a_modern_refusal_of_server_discover_is_not_taken_for_an_old_server() {
    let (_server, port) = misbehaving("capability", &[]);
    let err = call_err(&[
        "--protocol",
        "auto",
        "--tool",
        "t",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    assert!(
        err.contains("speaks 2026-07-28 but refused server/discover")
            && err.contains("Missing required client capability"),
        "{err}"
    );
}

/// A certificate in the system's trust store (here: named by
/// SSL_CERT_FILE, which the system store reader honours) is trusted
/// alongside the bundled roots.
#[test]
fn a_certificate_trusted_by_the_system_store_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let (cert_path, key_path) = self_signed(dir.path());
    let (_server, port) = misbehaving("tlsok", &[&cert_path, &key_path]);
    let result = Test::new()
        .args([
            "call",
            "--no-input",
            "--timeout",
            "20s",
            "--protocol",
            "2025-11-25",
            "--tool",
            "t",
            &format!("https://127.0.0.1:{port}/mcp"),
        ])
        .env("SSL_CERT_FILE", &cert_path)
        .run()
        .json();
    assert_eq!(text_of(&result), "ok");
}

/// Without --header, a 401 starts sign-in; a server that offers none gets
/// an error naming both sign-in and --header. With an Authorization
/// --header, elicit leaves the credentials to the person (no sign-in).
#[test]
fn unauthorized_without_a_header_tries_sign_in_and_names_both_ways() {
    let (_server, port) = misbehaving("auth", &[]);
    let store = tempfile::tempdir().unwrap();
    Test::new()
        .args(["call", "--no-input", "--timeout", "20s", "--tool", "t"])
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .env("ELICIT_DATA_DIR", store.path())
        .status(1)
        .run()
        .stderr_has("signing in to")
        .stderr_has("--header");
}

/// A server that answers one request per connection with keep-alive
/// headers, then resets the connection (SO_LINGER 0) instead of reading
/// the next request: the reused connection fails before any response.
/// elicit sends the request again on a new connection, and calls the
/// failure neither a TLS problem nor fatal.
#[test]
fn a_dropped_keep_alive_connection_is_retried_on_a_new_one() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut len = 0usize;
                let mut line = String::new();
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0u8; len];
                std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let result = match msg["method"].as_str() {
                    Some("initialize") => json!({"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "drops", "version": "1"}}),
                    Some("tools/call") => json!({"content": [{"type": "text", "text": "ok"}]}),
                    _ => json!({"tools": []}),
                };
                let mut s = stream;
                if msg.get("id").is_none() {
                    let _ = s.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
                } else {
                    let reply =
                        json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}).to_string();
                    let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{reply}", reply.len());
                }
                let _ = s.flush();
                // Give the client time to reuse the connection, then reset it.
                std::thread::sleep(Duration::from_millis(50));
                crate::common::close_with_reset(s);
            });
        }
    });
    let result = call_ok(&[
        "--protocol",
        "2025-11-25",
        "--tool",
        "t",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    assert_eq!(text_of(&result), "ok");
}
