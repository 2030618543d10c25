//! A client kept alive while a person answers: a TypeScript SDK client with
//! a short request timeout that progress resets, through `elicit proxy`
//! to a server that elicits, answered on the page long after that timeout.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::page::{csrf_token, open_page, root, NoTerminal};
use crate::common::{installed, python_sdk_server, BIN};

/// The client gives up on a request this long after the last sign of life.
const CLIENT_TIMEOUT_MS: u64 = 5000;
/// When the person answers, counted from when the page is announced.
const ANSWERED_AFTER: Duration = Duration::from_secs(12);
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn a_client_with_a_5_s_timeout_reset_by_progress_gets_a_result_answered_at_12_s() {
    installed();
    let mut args = vec![
        root()
            .join("tests/sdk/ts_progress_client.cjs")
            .display()
            .to_string(),
        "confirm_delete".into(),
        "{}".into(),
        CLIENT_TIMEOUT_MS.to_string(),
        "--".into(),
        BIN.into(),
        "proxy".into(),
        "--ui".into(),
        "browser".into(),
        "--no-open".into(),
        "--server-log".into(),
        "/dev/null".into(),
        "--".into(),
    ];
    args.extend(python_sdk_server());
    let mut node = Command::new("node");
    node.args(&args).current_dir(root());
    let client = NoTerminal::spawn_command(node, None);
    let address = client.page_address();
    let asked = Instant::now();
    // The person takes their time: well past the client's own timeout.
    crate::common::quiet_for(
        ANSWERED_AFTER.saturating_sub(asked.elapsed()),
        "the person answers well past the client's own timeout",
    );
    if let Ok(gave_up) = client.lines.try_recv() {
        panic!("the client gave up before the person answered: {gave_up}");
    }
    let page = open_page(&address);
    let port = page.port;
    let (status, html) = page.request("GET", "", "", "");
    assert_eq!(status, 200, "{html}");
    let form = format!("csrf={}&confirm=true&action=accept", csrf_token(&html));
    let (status, reply) = page.request(
        "POST",
        "answer/1",
        &format!("Origin: http://127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"),
        &form,
    );
    assert_eq!(status, 200, "{reply}");
    let line = client
        .lines
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("the client printed nothing; stderr:\n{}", client.stderr()));
    let out: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        out["content"][0],
        r#"{"action":"accept","content":{"confirm":true}}"#,
        "the client gave up or got something else: {out}\nstderr:\n{}",
        client.stderr()
    );
    let progress: Vec<f64> = out["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    assert!(
        progress.len() >= 3,
        "12 s of a person answering, a few keep-alives: {out}"
    );
    assert!(
        progress.windows(2).all(|w| w[1] > w[0]),
        "progress must increase: {out}"
    );
    assert_eq!(out["errors"], serde_json::json!([]), "{out}");
    assert!(client.finish().success());
}
