//! What every area shares: the one way to run the binary ([`Test`], with
//! its pseudo-terminal variant in `pty`), server starters, stub openers and
//! waits with a limit.

#![allow(dead_code)]

pub mod fake_auth;
pub mod page;
pub mod pty;
pub mod test;

pub use test::{Run, Running, Test};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::session::OsSession;
use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_elicit");
pub const TIMEOUT: Duration = Duration::from_secs(10);

pub const DOWN: &str = "\x1b[B";
pub const UP: &str = "\x1b[A";
pub const ENTER: &str = "\r";
pub const SPACE: &str = " ";
pub const ESC: &str = "\x1b";
pub const CTRL_C: &str = "\x03";
pub const CTRL_D: &str = "\x04";
pub const SHOW_CURSOR: &[u8] = b"\x1b[?25h";

/// The repository's fixtures directory.
pub fn fixture(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Quotes a word for `sh`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Waits (up to [`TIMEOUT`]) until the program on the pty has taken the
/// terminal out of canonical (line) mode, as a prompt in raw mode has it:
/// keys sent before are edited by the line discipline (Ctrl-D becomes an
/// end of file that is never read as a key, Backspace is eaten).
///
/// Canonical mode, not echo, is the flag to watch: the pty is spawned with
/// echo already off, so echo says nothing about the prompt.
pub fn wait_raw_mode(session: &OsSession) -> Result<(), String> {
    wait_raw_mode_within(session, TIMEOUT)
}

/// [`wait_raw_mode`] with a time limit of its own.
pub fn wait_raw_mode_within(session: &OsSession, limit: Duration) -> Result<(), String> {
    wait_terminal_mode(session, false, limit)
}

/// Waits (up to [`TIMEOUT`]) until the terminal is back in canonical
/// (line) mode, as it is with no prompt up: Ctrl-C is then a signal to the
/// foreground processes, not a key a prompt reads.
pub fn wait_line_mode(session: &OsSession) -> Result<(), String> {
    wait_terminal_mode(session, true, TIMEOUT)
}

/// Waits up to `limit` until the terminal's canonical flag is `canonical`.
fn wait_terminal_mode(session: &OsSession, canonical: bool, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    let master = session
        .get_process()
        .get_raw_handle()
        .map_err(|e| format!("cannot reach the pty: {e}"))?;
    loop {
        match rustix::termios::tcgetattr(&master) {
            Ok(t) if t.local_modes.contains(rustix::termios::LocalModes::ICANON) == canonical => {
                return Ok(())
            }
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(_) => {
                let mode = if canonical { "raw" } else { "line" };
                return Err(format!(
                    "the terminal was still in {mode} mode after {limit:?}"
                ));
            }
            Err(e) => return Err(format!("cannot read the terminal's mode: {e}")),
        }
    }
}

/// `-a A -a B …`: each scripted answer after its flag.
pub fn answers<'a>(given: &[&'a str]) -> Vec<&'a str> {
    given.iter().flat_map(|a| ["-a", a]).collect()
}

/// Writes an executable shell script.
pub fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(body.as_bytes()).unwrap();
    drop(f);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// True when `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// A bare form request (params only) with this schema.
pub fn form(message: &str, schema: Value) -> String {
    serde_json::json!({
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema}
    })
    .to_string()
}

/// A JSON-RPC form request with id 1.
pub fn form_rpc(message: &str, schema: Value) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1,
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema}
    })
    .to_string()
}

/// Waits until `done` holds, checking it every few milliseconds; fails the
/// test naming `what` once `limit` has passed without it.
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Lets `window` pass with nothing waited for: only where no condition
/// fits, because the test checks that something does NOT happen within
/// the window (a negative check) or stands for a person taking their
/// time. `why` says which, for the reader.
pub fn quiet_for(window: Duration, why: &str) {
    let _ = why;
    std::thread::sleep(window);
}

/// Waits for `child` at most `limit`; kills it and fails the test past
/// that, so a regression hangs nothing.
pub fn wait_at_most(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    wait_up_to(child, limit).unwrap_or_else(|| panic!("elicit did not exit within {limit:?}"))
}

/// Waits for `child` at most `limit`; past that kills it and returns None
/// (for a test that still wants to read what it said).
pub fn wait_up_to(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The programs a system opener may be (`xdg-open` and friends): each a
/// script in `dir` that records `NAME ARGS` in `dir/opened.log` and exits
/// with `status`. Put `dir` first on `PATH` and nothing real is ever opened.
pub fn stub_openers(dir: &Path, status: i32) {
    for name in [
        "xdg-open",
        "gio",
        "gnome-open",
        "kde-open",
        "kde-open5",
        "kde-open6",
        "wslview",
    ] {
        write_script(
            &dir.join(name),
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"{name} $*\" >> '{}'\nexit {status}\n",
                dir.join("opened.log").display()
            ),
        );
    }
}

/// A scripted client speaking to `proxy` (a [`Test`] of `elicit proxy …`):
/// each message with an id waits for its reply, as real clients do.
/// Returns every message the client got, in order (the reply to the last
/// request last), and the run, which must end as `proxy` expects (with
/// success unless told) once the client closes stdin.
pub fn client_session(proxy: Test, messages: &[Value]) -> (Vec<Value>, Run) {
    let mut proxy = proxy.feed().spawn();
    let mut got = Vec::new();
    for m in messages {
        proxy.send(m);
        let Some(id) = m.get("id") else { continue };
        loop {
            let v = proxy.next_json();
            let reply = &v["id"] == id && v.get("method").is_none();
            got.push(v);
            if reply {
                break;
            }
        }
    }
    proxy.close_stdin();
    let run = proxy.wait();
    (got, run)
}

/// The replies among `got` to the requests in `messages` (not the server's
/// own requests or notifications).
pub fn replies_to(got: Vec<Value>, messages: &[Value]) -> Vec<Value> {
    got.into_iter()
        .filter(|v| {
            v.get("method").is_none() && messages.iter().any(|m| m.get("id") == Some(&v["id"]))
        })
        .collect()
}

/// [`client_session`] of a client that declares no elicitation: none may
/// reach it.
pub fn dumb_client(proxy: Test, messages: &[Value]) -> Vec<Value> {
    let (got, _) = client_session(proxy, messages);
    for v in &got {
        assert_ne!(
            v["method"], "elicitation/create",
            "an elicitation reached the client"
        );
    }
    got
}

/// Installs the pinned real servers into `.deps/` once per test run
/// (scripts/install-test-servers takes a lock and is a no-op when its stamp
/// matches); panics with the script's output when it fails.
pub fn installed() {
    static DONE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let r = DONE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = std::process::Command::new("bash")
            .arg(root.join("scripts/install-test-servers"))
            .output()
            .map_err(|e| format!("cannot run scripts/install-test-servers: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "scripts/install-test-servers failed; the tests of real servers need the npm registry and PyPI.\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}

/// A server process on 127.0.0.1, killed when dropped.
pub struct HttpServer(pub std::process::Child, pub u16);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl HttpServer {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.1)
    }
}

/// Starts `program ARGS… PORT` and waits for it to listen. The first of
/// ARGS is a script, relative to the repository.
pub fn http_server(program: &str, args: &[&str]) -> HttpServer {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let port = free_port();
    let (script, rest) = args.split_first().expect("a script");
    let child = Command::new(program)
        .arg(root.join(script))
        .args(rest)
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpServer(child, port);
    wait_listening(port, Duration::from_secs(30), script);
    server
}

/// A free port on 127.0.0.1 (for a server the test starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on 127.0.0.1:`port`; fails the test
/// naming `what` past `limit`.
pub fn wait_listening(port: u16, limit: Duration, what: &str) {
    let deadline = Instant::now() + limit;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on {port} within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Closes `s` with a TCP reset (SO_LINGER 0) rather than a clean FIN, as a
/// server dropping a kept-alive connection under a request does.
pub fn close_with_reset(s: std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a correctly sized option value.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

/// The argv of server-everything over stdio (installed first).
pub fn server_everything() -> Vec<String> {
    installed();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join(".deps/node/node_modules/.bin/mcp-server-everything");
    vec![bin.display().to_string(), "stdio".into()]
}

/// The argv of the PyPI `mcp` SDK server of the tests over stdio
/// (tests/servers/py_elicit_server.py, installed first).
pub fn python_sdk_server() -> Vec<String> {
    installed();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        root.join(".deps/venv/bin/python").display().to_string(),
        root.join("tests/servers/py_elicit_server.py")
            .display()
            .to_string(),
    ]
}

/// An `input_required` result asking two questions in one round, "First"
/// then "Second", each for a required `name`.
pub fn two_name_questions() -> String {
    let entry = |title: &str| {
        json!({"method": "elicitation/create", "params": {"message": title,
            "requestedSchema": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string", "title": "Name"}}}}})
    };
    json!({"resultType": "input_required",
        "inputRequests": {"first": entry("First"), "second": entry("Second")}})
    .to_string()
}
