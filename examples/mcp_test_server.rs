//! A small stdio MCP server for checking elicit on other platforms (built
//! for Windows and run under Wine by tests/it/wine.rs): it answers
//! `initialize`, `tools/list` and `tools/call` of its one tool, `greet`,
//! which asks the client for a name with one `elicitation/create` and
//! greets whoever was named. It also starts a helper process of its own
//! (itself, with `--helper MARKER`) that would run for a minute, so that a
//! test can check that ending the server ends everything it started.
//!
//! `cargo run --example mcp_test_server` (newline-delimited JSON-RPC on
//! stdin and stdout; what it does goes to stderr).

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

fn send(out: &mut impl Write, msg: &Value) {
    let _ = writeln!(out, "{msg}");
    let _ = out.flush();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--helper") {
        // The helper: a process the server started, to be ended with it.
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    // A word to find the helper by (the first argument, else this).
    let marker = args
        .get(1)
        .cloned()
        .or_else(|| std::env::var("MCP_TEST_SERVER_MARKER").ok())
        .unwrap_or_else(|| "none".into());
    let helper = std::env::current_exe().ok().and_then(|exe| {
        Command::new(exe)
            .args(["--helper", &marker])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .ok()
    });
    eprintln!(
        "mcp_test_server: started helper {:?}",
        helper.as_ref().map(|h| h.id())
    );
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut out = std::io::stdout().lock();
    while let Some(Ok(line)) = lines.next() {
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id").cloned() else {
            continue; // a notification
        };
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let reply = match method {
            "initialize" => {
                let version = msg["params"]["protocolVersion"].clone();
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mcp_test_server", "version": "1"}}})
            }
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
                "name": "greet",
                "description": "Asks for a name, then greets it",
                "inputSchema": {"type": "object", "properties": {}}}]}}),
            "tools/call" => {
                send(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
                        "params": {"mode": "form", "message": "Who is there?",
                        "requestedSchema": {"type": "object",
                            "properties": {"name": {"type": "string", "title": "Name"}},
                            "required": ["name"]}}}),
                );
                let mut answer = Value::Null;
                for line in lines.by_ref() {
                    let Ok(line) = line else { break };
                    if let Ok(v) = serde_json::from_str::<Value>(&line) {
                        if v.get("id") == Some(&json!("ask-1")) {
                            answer = v;
                            break;
                        }
                    }
                }
                let result = &answer["result"];
                let text = if result["action"] == "accept" {
                    format!(
                        "Hello, {}!",
                        result["content"]["name"].as_str().unwrap_or("?")
                    )
                } else {
                    format!("No name ({})", result["action"].as_str().unwrap_or("error"))
                };
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": text}]}})
            }
            _ => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": format!("method not found: {method}")}}),
        };
        send(&mut out, &reply);
    }
}
