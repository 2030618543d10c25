//! The browser page's shared test helpers: a headless Chromium session
//! through chromedriver (W3C WebDriver over plain HTTP+JSON), an elicit with
//! no terminal (its own session, pipes), and the page's one-time address
//! used by hand (its cookie, raw requests). Used by `browser` and
//! `page_hostile`.

use super as common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_elicit");

/// How long anything here waits before failing the test.
pub const LIMIT: Duration = Duration::from_secs(30);

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs an install script once per test binary (each takes its own lock).
pub fn install(script: &str) {
    use std::sync::{Mutex, OnceLock};
    static DONE: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(Vec::new()));
    let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
    if done.iter().any(|s| s == script) {
        return;
    }
    let out = Command::new("bash")
        .arg(root().join("scripts").join(script))
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/{script}: {e}"));
    assert!(
        out.status.success(),
        "scripts/{script} failed; the browser tests need it.\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    done.push(script.to_string());
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

// ---------------------------------------------------------------------------
// WebDriver

#[path = "webdriver.rs"]
mod webdriver;
pub use webdriver::Browser;

/// Installs Chromium and chromedriver (once per run) before a [`Browser`]
/// starts.
fn install_browser() {
    install("install-browser");
}

// ---------------------------------------------------------------------------
// elicit with no terminal

/// An elicit process in its own session (no controlling terminal) with
/// pipes: its stdout lines and the page address from its stderr arrive on
/// channels.
pub struct NoTerminal {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: mpsc::Receiver<String>,
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl NoTerminal {
    pub fn spawn(args: &[&str], stdin_text: Option<&str>) -> NoTerminal {
        NoTerminal::spawn_limited(args, stdin_text, None)
    }

    /// [`NoTerminal::spawn`], with at most `open_files` file descriptors
    /// (soft and hard `RLIMIT_NOFILE`) when given.
    pub fn spawn_limited(
        args: &[&str],
        stdin_text: Option<&str>,
        open_files: Option<u64>,
    ) -> NoTerminal {
        let cmd = super::Test::new().args(args).command();
        NoTerminal::start(cmd, stdin_text, open_files)
    }

    /// Another program that runs elicit (an SDK client with elicit's
    /// resolver), started as [`NoTerminal::spawn`] starts elicit: its own
    /// session, pipes, none of the person's browser or UI settings; its
    /// stderr, where elicit's words are relayed, is read for the page's
    /// address the same way.
    pub fn spawn_command(cmd: Command, stdin_text: Option<&str>) -> NoTerminal {
        NoTerminal::start(cmd, stdin_text, None)
    }

    fn start(mut cmd: Command, stdin_text: Option<&str>, open_files: Option<u64>) -> NoTerminal {
        cmd.env_remove("ELICIT_BROWSER")
            .env_remove("BROWSER")
            .env_remove("ELICIT_UI")
            // These runs stand for a desktop client, not a CI job.
            .env_remove("CI")
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe; the child gets no
        // controlling terminal, as under a desktop app.
        unsafe {
            cmd.pre_exec(move || {
                libc::setsid();
                if let Some(n) = open_files {
                    let limit = libc::rlimit {
                        rlim_cur: n,
                        rlim_max: n,
                    };
                    libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("start elicit");
        let mut stdin = child.stdin.take();
        if let Some(text) = stdin_text {
            let mut s = stdin.take().unwrap();
            s.write_all(text.as_bytes()).unwrap();
        }
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        {
            let stderr = stderr.clone();
            let err = child.stderr.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let mut s = stderr.lock().unwrap();
                    s.push_str(&line);
                    s.push('\n');
                }
            });
        }
        NoTerminal {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The page's address, from elicit's stderr.
    pub fn page_address(&self) -> String {
        self.nth_page_address(1)
    }

    /// The address of the `n`th time (from 1) the page was announced (each
    /// time an elicitation arrives while nothing waits, with a new one-time
    /// address, the earlier one being spent), so a later one must wait for
    /// its own announcement, not reuse the first.
    pub fn nth_page_address(&self, n: usize) -> String {
        const SAID: &str = "answer on the page ";
        let deadline = Instant::now() + LIMIT;
        loop {
            let err = self.stderr();
            if let Some((at, _)) = err.match_indices(SAID).nth(n - 1) {
                let rest = &err[at + SAID.len()..];
                return rest.split_whitespace().next().unwrap().to_string();
            }
            assert!(
                Instant::now() < deadline,
                "elicit did not announce the page {n} time(s):\n{err}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Fails when the reply with this id comes within `wait` (other lines,
    /// such as the server's notifications, are passed over).
    pub fn no_reply_within(&self, id: i64, wait: Duration) {
        let until = Instant::now() + wait;
        while let Ok(line) = self
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            let v: Value = serde_json::from_str(&line).unwrap();
            assert!(
                v["id"] != json!(id),
                "something was sent before the person answered: {line}"
            );
        }
    }

    /// The reply with this JSON-RPC id (other lines are skipped, but no
    /// elicitation may reach the client).
    pub fn reply(&self, id: i64) -> Value {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no reply {id} from the proxy; stderr:\n{}", self.stderr())
            });
            let v: Value = serde_json::from_str(&line).unwrap();
            assert_ne!(v["method"], "elicitation/create", "reached the client");
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v;
            }
        }
    }

    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        common::wait_at_most(&mut self.child, LIMIT)
    }
}

impl Drop for NoTerminal {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `elicit proxy EXTRA -- SERVER` (or `elicit proxy EXTRA URL`), with no terminal, initialised as a
/// client that lacks elicitation.
pub fn proxy(extra: &[&str], server: &[String]) -> NoTerminal {
    let mut args = vec!["proxy", "--server-log", "/dev/null"];
    args.extend_from_slice(extra);
    // A URL is the remote proxy's target; a command comes after `--`.
    if !matches!(server, [url] if url.starts_with("http://")) {
        args.push("--");
    }
    args.extend(server.iter().map(String::as_str));
    let mut p = NoTerminal::spawn(&args, None);
    p.send(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desktop-app","version":"0"}}}));
    p.reply(1);
    p.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    p
}

pub fn call_tool(p: &mut NoTerminal, id: i64, name: &str, arguments: Value) {
    p.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}}));
}

/// server-everything's echo of the ElicitResult it got.
pub fn raw_result(reply: &Value) -> Value {
    let blocks = reply["result"]["content"].as_array().unwrap();
    let last = blocks.last().unwrap()["text"].as_str().unwrap();
    let at = last
        .find("Raw result: ")
        .unwrap_or_else(|| panic!("no raw result in {reply}"));
    serde_json::from_str(&last[at + "Raw result: ".len()..]).unwrap()
}

/// The selector of the control for property `name` with `value`.
pub fn choice(name: &str, value: &str) -> String {
    format!("[name={name:?}][value={value:?}]")
}

/// One HTTP request by hand (headers a browser would never send).
pub fn http(port: u16, head: &str, body: &str) -> (u16, String) {
    http_within(port, head, body, LIMIT)
}

/// [`http`], waiting at most `limit` for the response (status 0 past it,
/// or when nothing listens).
pub fn http_within(port: u16, head: &str, body: &str, limit: Duration) -> (u16, String) {
    let mut s = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => return (0, format!("cannot connect: {e}")),
    };
    s.set_read_timeout(Some(limit)).unwrap();
    write!(
        s,
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// The port of a page address (`http://127.0.0.1:PORT/...`).
pub fn page_port(address: &str) -> u16 {
    address
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A page opened by hand through its one-time address: the page's path
/// (`/SECRET/`) and its session cookie (`elicit=...`).
pub struct PageSession {
    pub port: u16,
    pub path: String,
    pub cookie: String,
}

impl PageSession {
    /// A request on the page with its cookie: `METHOD PATH-UNDER-THE-PAGE`
    /// and extra header lines (each ending in `\r\n`).
    pub fn request(&self, method: &str, under: &str, headers: &str, body: &str) -> (u16, String) {
        self.request_within(method, under, headers, body, LIMIT)
    }

    /// [`PageSession::request`], waiting at most `limit` for the response.
    pub fn request_within(
        &self,
        method: &str,
        under: &str,
        headers: &str,
        body: &str,
        limit: Duration,
    ) -> (u16, String) {
        let port = self.port;
        http_within(
            port,
            &format!(
                "{method} {}{under} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {}\r\n{headers}X-Pad: 1",
                self.path, self.cookie
            ),
            body,
            limit,
        )
    }
}

/// The page's CSRF token, from its HTML.
pub fn csrf_token(html: &str) -> String {
    html.split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no CSRF token in the page:\n{html}"))
        .to_string()
}

/// Opens the page by hand as a browser would: the one-time `address`
/// answers with a redirect to the page and its cookie (a bare page address
/// is the page itself, with no cookie).
pub fn open_page(address: &str) -> PageSession {
    let port = page_port(address);
    let at = address["http://127.0.0.1:".len()..].find('/').unwrap() + "http://127.0.0.1:".len();
    let path = &address[at..];
    let (status, head) = http(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}"),
        "",
    );
    if status == 200 {
        return PageSession {
            port,
            path: path.to_string(),
            cookie: String::new(),
        };
    }
    assert_eq!(status, 303, "{head}");
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no {name} in {head}"))
    };
    let cookie = header("Set-Cookie").split(';').next().unwrap().to_string();
    PageSession {
        port,
        path: header("Location"),
        cookie,
    }
}

/// `program ARGS` as another local user (`nobody`/`nogroup`, no
/// supplementary groups, through `setpriv`), for the attacks that need
/// one. `None` when the tests do not run as root (then they cannot switch
/// user, and the caller skips, saying SKIPPED on stderr); under CI (`CI`
/// set) that is a failure instead, so a run that could not attack never
/// reads as one that held.
pub fn as_other_user(program: &str, args: &[&str]) -> Option<Command> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let why =
            "this attack needs a second local user; run the tests as root to run it as nobody";
        assert!(std::env::var_os("CI").is_none(), "CI is set but {why}");
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let mut cmd = Command::new("setpriv");
    cmd.args([
        "--reuid",
        "nobody",
        "--regid",
        "nogroup",
        "--clear-groups",
        "--",
        program,
    ])
    .args(args)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    Some(cmd)
}

/// A copy of the repository file `rel` that the second user of
/// [`as_other_user`] can read: a checkout in a private folder (0700, as a
/// home is) is closed to that user, so what it runs is copied into a
/// folder of its own under the system's temporary folder (0755, the file
/// 0644), removed when the copy is dropped.
pub fn readable_by_other_user(rel: &str) -> OtherUserCopy {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("elicit-other-user-")
        .tempdir()
        .expect("a folder for the second user's files");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let from = root().join(rel);
    let path = dir.path().join(from.file_name().expect("a file name"));
    std::fs::copy(&from, &path).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    OtherUserCopy { _dir: dir, path }
}

/// A file the second user can read, in a folder that goes with it.
pub struct OtherUserCopy {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}
