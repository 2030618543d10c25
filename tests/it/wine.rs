//! The Windows build (`x86_64-pc-windows-gnu`), run under Wine: the same
//! documents give the same bytes as the Linux build, and `call` and `proxy`
//! drive a stdio server built for Windows (`examples/mcp_test_server.rs`),
//! leaving none of its processes behind.
//!
//! The Windows binaries are built by `scripts/wine-build` (which `.ci/run`
//! runs before `cargo test`); Wine and the MinGW compiler are installed by
//! `scripts/install-cross`. Without them every test here says why it did
//! not run and passes, unless `ELICIT_REQUIRE_WINE=1` (set by `.ci/run`),
//! which makes a missing piece a failure. What Wine cannot show (a real
//! console's raw keys, access lists) is said in docs/TESTING.md.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::Test;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where cargo builds: `CARGO_TARGET_DIR` (relative to the repository, as
/// cargo reads it), else `target/`, as `scripts/wine-build` builds there.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => repo().join(dir),
        None => repo().join("target"),
    }
}

/// The Windows binaries and Wine, or why they are not there.
struct Wine {
    elicit: PathBuf,
    server: PathBuf,
    prefix: PathBuf,
    /// The tests share one prefix and one wineserver: they run one at a
    /// time (a Wine process has been seen to die of SIGSEGV as it exited
    /// while the other Wine tests, which start and kill holders, ran
    /// beside it on a loaded machine).
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

static ONE_WINE_TEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn wine() -> Option<Wine> {
    let dir = target_dir().join("x86_64-pc-windows-gnu/debug");
    let elicit = dir.join("elicit.exe");
    let server = dir.join("examples/mcp_test_server.exe");
    let why = if Command::new("wine").arg("--version").output().is_err() {
        Some("wine is not installed (scripts/install-cross)".to_string())
    } else if !elicit.exists() || !server.exists() {
        Some(format!(
            "{} or {} is not built (scripts/wine-build)",
            elicit.display(),
            server.display()
        ))
    } else {
        None
    };
    if let Some(why) = why {
        if std::env::var_os("ELICIT_REQUIRE_WINE").is_some_and(|v| v == "1") {
            panic!("ELICIT_REQUIRE_WINE=1 but {why}");
        }
        eprintln!("wine: SKIPPED: {why}");
        return None;
    }
    Some(Wine {
        elicit,
        server,
        prefix: target_dir().join("wine-prefix"),
        _one_at_a_time: ONE_WINE_TEST.lock().unwrap_or_else(|e| e.into_inner()),
    })
}

impl Wine {
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new("wine");
        c.arg(program)
            .current_dir(repo())
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            // No Mono or Gecko installer dialogs in a fresh prefix.
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env_remove("DISPLAY");
        c
    }

    /// Runs elicit.exe with `args` and `stdin`, within a minute.
    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut c = self.command(&self.elicit);
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("wine starts");
        let mut input = child.stdin.take().unwrap();
        let stdin = stdin.to_string();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(stdin.as_bytes());
        });
        let out = wait_output(child, Duration::from_secs(120));
        let _ = writer.join();
        out
    }
}

/// The child's output once it exits (read as it comes, so a full pipe
/// never stalls it), within `limit`.
fn wait_output(child: std::process::Child, limit: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("wine did not finish within {limit:?}");
        }
    }
}

/// The Linux build's stdout for `args` and `stdin`, which must end with
/// `status` (the Windows build's).
fn linux(args: &[&str], stdin: &str, status: i32) -> Vec<u8> {
    let run = Test::new()
        .args(args)
        .stdin(stdin)
        .status(status)
        .stderr_unchecked("only stdout and the status are compared with Windows")
        .run();
    run.stdout().as_bytes().to_vec()
}

/// The same bytes on stdout and the same exit status from both builds.
fn same_as_linux(w: &Wine, args: &[&str], stdin: &str) {
    same_as_linux_but(w, args, stdin, |b| b.to_vec());
}

/// As [`same_as_linux`], after `mask` (for what is fresh on every run).
fn same_as_linux_but(w: &Wine, args: &[&str], stdin: &str, mask: impl Fn(&[u8]) -> Vec<u8>) {
    // The Linux run must end as the Windows one did (checked as it ends).
    let mut win = w.run(args, stdin);
    let status = win
        .status
        .code()
        .expect("the Windows build exits with a code");
    let linux_stdout = mask(&linux(args, stdin, status));
    win.stdout = mask(&win.stdout);
    assert_eq!(
        String::from_utf8_lossy(&win.stdout),
        String::from_utf8_lossy(&linux_stdout),
        "stdout of {args:?} differs; Windows stderr: {}",
        String::from_utf8_lossy(&win.stderr)
    );
    assert_eq!(win.stdout, linux_stdout, "bytes of {args:?}");
}

/// Processes (Linux pids of Wine's processes) whose command line holds
/// `marker` (the server gets it as an argument, its helper too).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if line.contains(marker) {
                found.push(format!("{name}: {line}"));
            }
        }
    }
    found
}

/// Waits up to `limit` for no process to carry `marker`.
fn none_left(marker: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = processes_with(marker);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn marker() -> String {
    format!("elicit-wine-{}", uuid::Uuid::new_v4())
}

#[test]
fn plain_resolution_prints_the_same_bytes_as_the_linux_build() {
    let Some(w) = wine() else { return };
    same_as_linux(
        &w,
        &[
            "-a",
            "accept",
            "-a",
            "name=Ada",
            "fixtures/server-everything/form.request.json",
        ],
        "",
    );
    same_as_linux(
        &w,
        &[
            "-a",
            "decline",
            "fixtures/server-everything/url.request.json",
        ],
        "",
    );
}

#[test]
fn lines_request_result_and_sarif_match_the_linux_build() {
    let Some(w) = wine() else { return };
    let form = std::fs::read_to_string(repo().join("fixtures/server-everything/form.request.json"))
        .unwrap();
    let two = format!("{}\n{}\n", form.trim(), form.trim());
    same_as_linux(&w, &["--lines", "-a", "accept", "-a", "name=Ada"], &two);
    // Each Request gets a fresh id.
    let fresh = regex::bytes::Regex::new("elc-[0-9a-f-]{36}").unwrap();
    same_as_linux_but(
        &w,
        &["request", "fixtures/shapes/input-required.json"],
        "",
        |b| fresh.replace_all(b, &b"elc-ID"[..]).into_owned(),
    );
    same_as_linux(
        &w,
        &["result", "--input", "fixtures/shapes/input-required.json"],
        r#"[{"id":"a","ok":true,"data":{"labels":["bug"]}},{"id":"b","ok":true}]"#,
    );
    same_as_linux(
        &w,
        &[
            "lint",
            "--format",
            "sarif",
            "fixtures/lint/nested-password-inverted.json",
            "fixtures/lint/clean.json",
        ],
        "",
    );
}

#[test]
fn call_answers_the_elicitation_and_leaves_no_process_behind() {
    let Some(w) = wine() else { return };
    let marker = marker();
    let server = w.server.to_string_lossy().into_owned();
    let mut c = w.command(&w.elicit);
    c.args([
        "call",
        "--tool",
        "greet",
        "-a",
        "accept",
        "-a",
        "name=Ada",
        "--timeout",
        "60s",
        "--",
    ])
    .args([&server, &marker])
    .env("MCP_TEST_SERVER_MARKER", &marker)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let out = wait_output(c.spawn().unwrap(), Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Hello, Ada!"),
        "status {:?}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let left = none_left(&marker, Duration::from_secs(10));
    assert!(left.is_empty(), "left behind: {left:#?}");
}

#[test]
fn proxy_answers_the_elicitation_and_leaves_no_process_behind() {
    let Some(w) = wine() else { return };
    let marker = marker();
    let mut c = w.command(&w.elicit);
    c.args(["proxy", "-a", "accept", "-a", "name=Ada", "--"])
        .arg(&w.server)
        .arg(&marker)
        .env("MCP_TEST_SERVER_MARKER", &marker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut to_proxy = child.stdin.take().unwrap();
    let from_proxy = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(from_proxy).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let mut send = |v: Value| {
        writeln!(to_proxy, "{v}").unwrap();
        to_proxy.flush().unwrap();
    };
    let reply_to = |id: i64| -> Value {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = rx.recv_timeout(left).expect("a reply from the proxy");
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "wine-test", "version": "1"}}}),
    );
    let init = reply_to(1);
    assert_eq!(
        init["result"]["serverInfo"]["name"], "mcp_test_server",
        "{init}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}),
    );
    let result = reply_to(2);
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, Ada!",
        "{result}"
    );
    drop(to_proxy);
    let out = wait_output(child, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "status {:?}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let left = none_left(&marker, Duration::from_secs(10));
    assert!(left.is_empty(), "left behind: {left:#?}");
}

/// Resolves the region form on the page (`--ui browser --no-open`),
/// answered over HTTP as a browser would; the build's stdout.
fn answered_on_the_page(mut command: Command) -> Vec<u8> {
    command
        .args([
            "--ui",
            "browser",
            "--no-open",
            "fixtures/shapes/form-region.json",
        ])
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let address = loop {
        assert!(Instant::now() < deadline, "no page announced");
        let line = lines.next().expect("the page's address on stderr").unwrap();
        if let Some(at) = line.find("http://") {
            break line[at..].split_whitespace().next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    // The browser's way in: the one-time address, exchanged for the page's
    // path and session cookie.
    let page = crate::common::page::open_page(&address);
    let port = page.port;
    let (status, html) = page.request("GET", "", "", "");
    assert_eq!(status, 200, "{html}");
    let csrf = crate::common::page::csrf_token(&html);
    let form = format!("csrf={csrf}&region=us-east-1&replicas=4&dryRun=false&action=accept");
    let (status, reply) = page.request(
        "POST",
        "answer/1",
        &format!("Origin: http://127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"),
        &form,
    );
    assert_eq!(status, 200, "{reply}");
    wait_output(child, Duration::from_secs(60)).stdout
}

#[test]
fn the_page_answered_over_http_gives_the_same_result_as_on_linux() {
    let Some(w) = wine() else { return };
    let linux = answered_on_the_page(Test::new().command());
    assert_eq!(
        String::from_utf8_lossy(&linux),
        "{\"action\":\"accept\",\"content\":{\"region\":\"us-east-1\",\"replicas\":4,\"dryRun\":false}}\n"
    );
    let windows = answered_on_the_page(w.command(&w.elicit));
    assert_eq!(
        String::from_utf8_lossy(&windows),
        String::from_utf8_lossy(&linux)
    );
}

/// A prompt is drawn on the console (`CONOUT$`), not on stderr: with
/// stderr redirected to a file, the form still appears on the console
/// (Wine maps its console onto the pty the test holds, which it does only
/// when stdout is that pty too: with both redirected Wine's console is
/// headless) and nothing of it reaches the file. Before, such a run
/// refused to prompt ("on Windows a prompt is drawn on stderr, which is
/// redirected here").
#[test]
fn a_prompt_is_drawn_on_the_console_with_stderr_redirected() {
    use expectrl::{Eof, Expect};
    let Some(w) = wine() else { return };
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("err.log");
    let script = format!(
        "exec wine {} fixtures/server-everything/form.request.json 2> {}",
        crate::common::sh_quote(w.elicit.to_str().unwrap()),
        crate::common::sh_quote(err.to_str().unwrap()),
    );
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&script)
        .current_dir(repo())
        .env("WINEPREFIX", &w.prefix)
        .env("WINEDEBUG", "-all")
        .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
        .env("TERM", "xterm-256color")
        .env("NO_COLOR", "1")
        .env_remove("DISPLAY");
    let mut s = expectrl::session::OsSession::spawn(cmd).expect("spawn under a pty");
    s.set_expect_timeout(Some(Duration::from_secs(120)));
    if let Err(e) = s.expect("Please provide inputs") {
        panic!(
            "no prompt on the console: {e}; stderr: {}",
            std::fs::read_to_string(&err).unwrap_or_default()
        );
    }
    s.expect("Your full, legal name").expect("the first field");
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        !stderr.contains("Please provide inputs") && !stderr.contains("legal name"),
        "the prompt reached stderr: {stderr}"
    );
    // Esc cancels the form; past a minute the run is ended.
    std::thread::sleep(Duration::from_millis(300));
    s.send("\x1b").unwrap();
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    if s.expect(Eof).is_err() {
        let pid = s.get_process().pid().as_raw();
        // SAFETY: signalling the process this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The files of parked call `id` in the test prefix's folder of parked
/// calls (`%LOCALAPPDATA%\elicit\run`; Wine names its user after the Unix
/// user).
fn parked_files(w: &Wine, id: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for user in std::fs::read_dir(w.prefix.join("drive_c/users"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let run = user.path().join("AppData/Local/elicit/run");
        for entry in std::fs::read_dir(run).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(id) {
                found.push(entry.path());
            }
        }
    }
    found
}

/// Waits up to `limit` for call `id`'s files to be gone; what is left.
/// Wine removes a file that is still open when its last handle closes (a
/// holder's output file is its stdout until it exits), not at once.
fn parked_files_left(w: &Wine, id: &str, limit: Duration) -> Vec<PathBuf> {
    let deadline = Instant::now() + limit;
    loop {
        let left = parked_files(w, id);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `elicit.exe call --park` (with `extra` flags) of the Windows server's
/// `greet`, whose question nobody answers: exit 5 and the parked object;
/// its id. Its stderr goes to a file: Wine gives every process it starts
/// its own Unix stderr (for its debug output), so the holder would keep a
/// pipe there open, and a reader waiting for its end, until the call ends
/// (Windows hands a process no such thing).
fn park_greet(w: &Wine, marker: &str, extra: &[&str]) -> String {
    let server = w.server.to_string_lossy().into_owned();
    let mut args = vec!["call", "--park", "--tool", "greet"];
    args.extend_from_slice(extra);
    args.extend(["--", &server, marker]);
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut c = w.command(&w.elicit);
    c.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err.reopen().unwrap());
    let out = wait_output(c.spawn().unwrap(), Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(5),
        "stdout: {stdout}\nstderr: {}",
        std::fs::read_to_string(err.path()).unwrap_or_default()
    );
    let object: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(object["tool"], "greet", "{object}");
    assert_eq!(object["elicitation"]["prompt"], "Who is there?", "{object}");
    let id = object["parked"].as_str().unwrap().to_string();
    assert_eq!(object["respond"], format!("elicit respond {id}"));
    id
}

#[test]
fn a_parked_call_is_listed_refuses_a_wrong_answer_and_takes_the_right_one() {
    let Some(w) = wine() else { return };
    let marker = marker();
    let id = park_greet(&w, &marker, &[]);
    assert!(
        parked_files(&w, &id)
            .iter()
            .any(|f| f.ends_with(format!("{id}.sock"))),
        "{:?}",
        parked_files(&w, &id)
    );
    assert!(!processes_with(&marker).is_empty(), "the server runs");
    assert!(!processes_with(&id).is_empty(), "the holder runs");

    let listed = w.run(&["pending", "--json"], "");
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&listed.stderr));
    });
    let call = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|call| call["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} is not listed: {listed}"));
    assert_eq!(call["question"], "Who is there?", "{call}");

    // A name that is not a string: refused before anything is sent.
    let wrong = w.run(&["respond", &id, "-a", r#"{"name":5}"#], "");
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(2), "stderr: {said}");
    assert!(said.contains("name"), "{said}");

    let right = w.run(&["respond", &id, "-a", "name=Ada"], "");
    let stdout = String::from_utf8_lossy(&right.stdout);
    assert!(
        right.status.success() && stdout.contains("Hello, Ada!"),
        "status {:?}\nstdout: {stdout}\nstderr: {}",
        right.status,
        String::from_utf8_lossy(&right.stderr)
    );
    let left = none_left(&marker, Duration::from_secs(20));
    assert!(left.is_empty(), "left behind: {left:#?}");
    assert_eq!(
        parked_files_left(&w, &id, Duration::from_secs(10)),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn a_parked_call_that_expires_ends_whole() {
    let Some(w) = wine() else { return };
    let marker = marker();
    let id = park_greet(&w, &marker, &["--park-for", "3s"]);
    assert!(!processes_with(&marker).is_empty(), "the server runs");
    assert!(!processes_with(&id).is_empty(), "the holder runs");
    let left = none_left(&marker, Duration::from_secs(40));
    assert!(left.is_empty(), "left after the expiry: {left:#?}");
    let left = none_left(&id, Duration::from_secs(20));
    assert!(
        left.is_empty(),
        "the holder is left after the expiry: {left:#?}"
    );
    let late = w.run(&["respond", &id, "-a", "name=Ada"], "");
    let said = String::from_utf8_lossy(&late.stderr);
    assert_eq!(late.status.code(), Some(6), "stderr: {said}");
    assert!(said.contains("expired"), "{said}");
    assert_eq!(
        parked_files_left(&w, &id, Duration::from_secs(10)),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn a_killed_holders_call_is_gone_and_nothing_of_it_is_left() {
    let Some(w) = wine() else { return };
    let marker = marker();
    let id = park_greet(&w, &marker, &[]);
    // The holder's command line names its call's id (the call's own words
    // reach it through its environment); the server's carries the marker.
    let holders: Vec<String> = processes_with(&id)
        .into_iter()
        .filter(|p| p.contains("__park-hold"))
        .collect();
    assert_eq!(holders.len(), 1, "{holders:#?}");
    let pid = holders[0].split(':').next().unwrap();
    let killed = Command::new("kill").args(["-KILL", pid]).status().unwrap();
    assert!(killed.success());
    // The server and its helper end with the holder (their job closes).
    let left = none_left(&marker, Duration::from_secs(20));
    assert!(left.is_empty(), "left after the holder: {left:#?}");
    let left = none_left(&id, Duration::from_secs(20));
    assert!(left.is_empty(), "the holder is left: {left:#?}");
    let late = w.run(&["respond", &id, "-a", "name=Ada"], "");
    let said = String::from_utf8_lossy(&late.stderr);
    assert_eq!(late.status.code(), Some(6), "stderr: {said}");
    assert_eq!(
        parked_files_left(&w, &id, Duration::from_secs(10)),
        Vec::<PathBuf>::new()
    );
}
