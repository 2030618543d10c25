//! What the tests share: the pinned real servers (scripts/install-test-servers,
//! into the repository's .deps/), an rmcp client on an `ElicitHandler`, and
//! headless Chromium through chromedriver (scripts/install-browser) for the
//! page. Nothing here talks to any address but 127.0.0.1.
//!
//! A missing dependency skips a test, saying why on stderr, unless CI says
//! it must be there: `ELICIT_REQUIRE_SERVERS=1` (the servers),
//! `ELICIT_REQUIRE_BROWSER=1` (Chromium and chromedriver); `.ci/run` sets
//! both.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::Value;

use elicit_rmcp::ElicitHandler;

/// How long anything here waits before failing the test.
pub const LIMIT: Duration = Duration::from_secs(60);

/// The repository's root (this crate is integrations/rmcp).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| v == "1")
}

/// Runs `scripts/NAME` once per test binary; `Err` says why it failed.
fn install(script: &str) -> Result<(), String> {
    /// Each script run, and how it went.
    type Runs = Mutex<Vec<(String, Result<(), String>)>>;
    static DONE: OnceLock<Runs> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(Vec::new()));
    let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = done.iter().find(|(s, _)| s == script) {
        return r.clone();
    }
    let result = match Command::new("bash")
        .arg(root().join("scripts").join(script))
        .stdin(Stdio::null())
        .output()
    {
        Err(e) => Err(format!("cannot run scripts/{script}: {e}")),
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "scripts/{script} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )),
    };
    done.push((script.to_string(), result.clone()));
    result
}

/// Whether a dependency is there: `false` (and a line on stderr) skips the
/// test; with `require_var=1` a missing one fails it instead.
fn available(test: &str, script: &str, require_var: &str) -> bool {
    match install(script) {
        Ok(()) => true,
        Err(why) if required(require_var) => panic!("{require_var}=1 but {why}"),
        Err(why) => {
            eprintln!("{test}: SKIPPED: {why}");
            false
        }
    }
}

/// The pinned test servers, or `false` when they cannot be installed here
/// (no node/npm/python, no registry).
pub fn servers(test: &str) -> bool {
    available(test, "install-test-servers", "ELICIT_REQUIRE_SERVERS")
}

/// server-everything over stdio (the pinned npm package).
pub fn server_everything() -> tokio::process::Command {
    let mut c = tokio::process::Command::new(
        root().join(".deps/node/node_modules/.bin/mcp-server-everything"),
    );
    c.arg("stdio");
    c
}

/// tests/servers/fastmcp_server.py over stdio, in the pinned venv.
pub fn fastmcp() -> tokio::process::Command {
    let mut c = tokio::process::Command::new(root().join(".deps/venv/bin/python"));
    c.arg(root().join("tests/servers/fastmcp_server.py"));
    c
}

/// A connected rmcp client answering with `handler`.
pub async fn connect(
    handler: ElicitHandler,
    server: tokio::process::Command,
) -> RunningService<RoleClient, ElicitHandler> {
    let (transport, _stderr) = TokioChildProcess::builder(server)
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    tokio::time::timeout(LIMIT, handler.serve(transport))
        .await
        .expect("the handshake timed out")
        .expect("the handshake failed")
}

/// Calls `tool` with `arguments` (an object).
pub async fn call(
    client: &RunningService<RoleClient, ElicitHandler>,
    tool: &'static str,
    arguments: Value,
) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool);
    if let Value::Object(args) = arguments {
        params = params.with_arguments(args);
    }
    tokio::time::timeout(LIMIT, client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} timed out"))
        .unwrap_or_else(|e| panic!("{tool} failed: {e}"))
}

/// Ends the client and its server.
pub async fn close(client: RunningService<RoleClient, ElicitHandler>) {
    let _ = tokio::time::timeout(LIMIT, client.cancel()).await;
}

/// The text blocks of a tool result, joined.
pub fn text(result: &CallToolResult) -> String {
    let v = serde_json::to_value(result).unwrap();
    v["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// server-everything's echo of the ElicitResult it got.
pub fn raw_result(result: &CallToolResult) -> Value {
    let text = text(result);
    let at = text
        .find("Raw result: ")
        .unwrap_or_else(|| panic!("no raw result in {text}"));
    serde_json::from_str(text[at + "Raw result: ".len()..].trim())
        .unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The FastMCP test server's `{"action", "content"}` answer.
pub fn fastmcp_answer(result: &CallToolResult) -> Value {
    let text = text(result);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

// ---------------------------------------------------------------------------
// The page in headless Chromium

/// Chromium and chromedriver, or `false` when they cannot be installed.
pub fn browser_available(test: &str) -> bool {
    available(test, "install-browser", "ELICIT_REQUIRE_BROWSER")
}

/// A browser command for the handler (`Options::browser`) that hands the
/// page's one-time address to the test: it appends the URL to `file`.
pub fn browser_command(file: &std::path::Path) -> String {
    format!(
        "sh -c 'echo \"$1\" >> \"$0\"' {}",
        shell_quote(&file.display().to_string())
    )
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The `n`th address (from 1) the handler opened through
/// [`browser_command`], waited for.
pub fn opened_address(file: &std::path::Path, n: usize) -> String {
    let deadline = Instant::now() + LIMIT;
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if let Some(line) = text.lines().nth(n - 1) {
            return line.trim().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "the page was not opened {n} time(s); opened: {text:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[path = "../../../../tests/it/common/webdriver.rs"]
mod webdriver;
// Only the page test drives a browser.
#[allow(unused_imports)]
pub use webdriver::Browser;

/// Run before a [`Browser`] starts: [`browser_available`] has installed
/// Chromium already (the script runs once), so this only says why not.
fn install_browser() {
    if let Err(why) = install("install-browser") {
        panic!("{why}");
    }
}

/// The selector of the control for property `name` with `value`.
pub fn choice(name: &str, value: &str) -> String {
    format!("[name={name:?}][value={value:?}]")
}
