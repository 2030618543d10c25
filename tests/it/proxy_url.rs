//! `elicit proxy URL` against servers that stall (tests/servers/http_stalling.py): requests in
//! flight are bounded and time out with a JSON-RPC error, and the relay ends at once on a
//! signal or the client's hang-up while a send to the server never completes.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{http_server, wait_until, HttpServer, Running, Test};

fn stalling(mode: &str) -> HttpServer {
    http_server("python3", &["tests/servers/http_stalling.py", mode])
}

/// `elicit proxy --no-input EXTRA URL`, its stdin ours.
fn proxy(server: &HttpServer, extra: &[&str]) -> Running {
    Test::new()
        .args(["proxy", "--no-input"])
        .args(extra)
        .arg(server.url())
        .limit(Duration::from_secs(60))
        .feed()
        .spawn()
}

/// initialize (answered) and the initialized notification.
fn handshake(proxy: &mut Running) {
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    );
    let reply = proxy.next_json();
    assert_eq!(reply["id"], 0, "{reply}");
    proxy.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

fn threads_of(proxy: &Running) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", proxy.id()))
        .map(|d| d.count())
        .unwrap_or(0)
}

// Fails on the relay before the in-flight bound: every ping held a thread and
// a socket, and none was ever answered.
#[test]
fn requests_past_the_in_flight_bound_get_a_json_rpc_error_at_once() {
    let server = stalling("silent");
    let mut child = proxy(&server, &[]);
    handshake(&mut child);
    for id in 1..=100 {
        child.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
    }
    let mut refused = Vec::new();
    while refused.len() < 36 {
        let reply = child.next_json();
        assert_eq!(reply["error"]["code"], -32000, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("64 requests already wait for the server's reply"),
            "{message}"
        );
        refused.push(reply["id"].as_i64().unwrap());
    }
    assert_eq!(refused, (65..=100).collect::<Vec<_>>());
    let threads = threads_of(&child);
    assert!(threads < 64 + 20, "{threads} threads");
    child.close_stdin();
    child.wait_within(Duration::from_secs(10));
}

// Fails on the relay before `--request-timeout`: the client never heard back.
#[test]
fn a_request_the_server_never_answers_times_out_with_a_json_rpc_error() {
    let server = stalling("silent");
    let mut child = proxy(&server, &["--request-timeout", "1s"]);
    handshake(&mut child);
    let started = Instant::now();
    child.send(
        &json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "t"}}),
    );
    let reply = child.next_json();
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(reply["id"], "c");
    assert_eq!(reply["error"]["code"], -32001, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        "elicit proxy: the server did not answer tools/call within 1s (--request-timeout)"
    );
    child.close_stdin();
    child.wait_within(Duration::from_secs(10));
}

/// A proxy whose server holds the `notifications/initialized` POST open
/// (the folder of the server's record, to keep while it runs).
fn stalled_send() -> (HttpServer, Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("held");
    let server = http_server(
        "python3",
        &[
            "tests/servers/http_stalling.py",
            "stall-notify",
            record.to_str().unwrap(),
        ],
    );
    let mut child = proxy(&server, &[]);
    handshake(&mut child);
    wait_until(Duration::from_secs(20), "the server holds a POST", || {
        record.exists()
    });
    (server, child, dir)
}

// Fails on the relay that held the transport's lock across the send: only
// SIGKILL ended it.
#[test]
fn signals_end_the_proxy_at_once_while_a_send_never_completes() {
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let (_server, child, _record) = stalled_send();
        let started = Instant::now();
        child.signal(sig);
        // (The client's end stays open: only the signal ends the proxy.)
        let run = child.status(128 + sig).wait_within(Duration::from_secs(6));
        assert!(started.elapsed() < Duration::from_secs(4), "signal {sig}");
        if sig == libc::SIGINT {
            run.stderr_has("elicit proxy: interrupted (Ctrl-C) while waiting for the server");
        }
    }
}

// Fails on the relay that held the transport's lock across the send: the
// client's EOF went unnoticed.
#[test]
fn the_client_hanging_up_ends_the_proxy_while_a_send_never_completes() {
    let (_server, mut child, _record) = stalled_send();
    let started = Instant::now();
    child.close_stdin();
    child.wait_within(Duration::from_secs(6));
    assert!(started.elapsed() < Duration::from_secs(4));
}

// Fails before the event stream of a request was read to its end: each
// request's connection was closed at its reply, and the next one opened
// another.
#[test]
fn sequential_requests_reuse_one_connection() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("posts.jsonl");
    let server = http_server(
        "python3",
        &[
            "tests/servers/http_stalling.py",
            "count",
            record.to_str().unwrap(),
        ],
    );
    let mut child = proxy(&server, &[]);
    handshake(&mut child);
    for id in 1..=5 {
        child.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t"}}),
        );
        let reply = child.next_json();
        assert_eq!(reply["id"], id, "{reply}");
    }
    child.close_stdin();
    child.wait_within(Duration::from_secs(10));
    let ports: std::collections::HashSet<u64> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|p| p["method"] == "tools/call")
        .map(|p| p["port"].as_u64().unwrap())
        .collect();
    // One, or two when a call starts before the previous stream's end was read.
    assert!(
        ports.len() <= 2,
        "five calls came on {} connections",
        ports.len()
    );
}
