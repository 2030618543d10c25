//! Shared helpers for the pseudo-terminal tests (`tests/pty_*.rs`).
//!
//! Each run spawns `sh -c "read; stty …; exec elicit ARGS < req.json > out.json"`
//! under a pty, in its own temporary directory: stdin and stdout are files
//! (as in a pipeline) while stderr and `/dev/tty` are the pty. Every expect
//! has a timeout, so a broken prompt fails the test instead of hanging it.

#![allow(dead_code)]

pub mod fake_auth;
pub mod page;
pub mod test;

pub use test::{Run, Running, Test};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use expectrl::{Eof, Expect};
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

/// How to run elicit under the pty.
pub struct Spec {
    request: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    unset: Vec<String>,
    stderr_file: bool,
    color: bool,
    path_first: bool,
    size: (u16, u16),
}

pub fn elicit(request: &str) -> Spec {
    Spec {
        request: request.to_string(),
        args: Vec::new(),
        env: Vec::new(),
        unset: Vec::new(),
        stderr_file: false,
        color: false,
        path_first: false,
        size: (120, 40),
    }
}

impl Spec {
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, args: I) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_string()));
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }
    /// Sends stderr to `err.log` (inside the sh -c).
    pub fn stderr_to_file(mut self) -> Self {
        self.stderr_file = true;
        self
    }
    /// Do not set NO_COLOR.
    pub fn with_color(mut self) -> Self {
        self.color = true;
        self
    }
    /// Put the run's temporary directory first on PATH (for stub openers)
    /// and hide any desktop, so `open` falls back to `xdg-open`.
    pub fn stub_path(mut self) -> Self {
        self.path_first = true;
        self.unset
            .extend(["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].map(String::from));
        self
    }

    /// The terminal's size (columns, rows); 120x40 unless told.
    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.size = (cols, rows);
        self
    }

    /// Writes the request and a possible stub into a fresh tempdir and runs.
    pub fn spawn(self) -> Pty {
        let dir = tempfile::tempdir().expect("tempdir");
        self.spawn_in(dir)
    }

    pub fn spawn_in(self, dir: tempfile::TempDir) -> Pty {
        std::fs::write(dir.path().join("req.json"), &self.request).unwrap();
        let args: Vec<String> = self.args.iter().map(|a| sh_quote(a)).collect();
        // With stderr in a file, elicit holds no pty descriptor until it
        // opens /dev/tty, and the pty would report end of output: keep one
        // open on fd 3 (closed when elicit exits).
        let err = if self.stderr_file {
            " 2> err.log 3<&1"
        } else {
            ""
        };
        let script = format!(
            "read -r go && stty cols {} rows {} && exec {} {}{err} < req.json > out.json",
            self.size.0,
            self.size.1,
            sh_quote(BIN),
            args.join(" ")
        );
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(&script).current_dir(dir.path());
        cmd.env("TERM", "xterm-256color");
        if !self.color {
            cmd.env("NO_COLOR", "1");
        } else {
            cmd.env_remove("NO_COLOR");
        }
        cmd.env_remove("ELICIT_BROWSER");
        for k in &self.unset {
            cmd.env_remove(k);
        }
        if self.path_first {
            cmd.env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()));
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut session = OsSession::spawn(cmd).expect("spawn under a pty");
        session.set_expect_timeout(Some(TIMEOUT));
        // ptyprocess sets 80x24 from the parent after the child started, which
        // can land after the child's own `stty`: the script waits for this
        // line, sent once the size is final.
        session
            .get_process_mut()
            .set_window_size(self.size.0, self.size.1)
            .expect("window size");
        session.send("\n").expect("start line");
        Pty {
            dir,
            session,
            transcript: Vec::new(),
            script,
            size: self.size,
        }
    }
}

/// A running elicit on a pty.
pub struct Pty {
    pub dir: tempfile::TempDir,
    session: OsSession,
    /// Everything read from the pty so far.
    pub transcript: Vec<u8>,
    script: String,
    size: (u16, u16),
}

/// The end of a run.
#[derive(Debug)]
pub struct Finished {
    pub code: i32,
    /// out.json as text.
    pub stdout: String,
    /// Everything the pty showed.
    pub screen: Vec<u8>,
    pub dir: PathBuf,
    size: (u16, u16),
}

/// What a person sees after `bytes` were drawn on a terminal of `size`
/// (columns, rows): its rows, trailing blanks trimmed. Redraws and clears are applied, so a line that was erased is
/// not there.
pub fn render(bytes: &[u8], size: (u16, u16)) -> String {
    let mut parser = vt100::Parser::new(size.1, size.0, 0);
    parser.process(bytes);
    let screen = parser.screen();
    let mut rows: Vec<String> = screen.rows(0, size.0).collect();
    while rows.last().is_some_and(|r| r.trim().is_empty()) {
        rows.pop();
    }
    rows.iter()
        .map(|r| r.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Finished {
    /// stdout parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?}\n--- screen ---\n{}",
                self.stdout,
                String::from_utf8_lossy(&self.screen)
            )
        })
    }
    pub fn screen_text(&self) -> String {
        String::from_utf8_lossy(&self.screen).into_owned()
    }
    /// The final screen as a person sees it (see [`render`]).
    pub fn visible(&self) -> String {
        render(&self.screen, self.size)
    }
}

impl Pty {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn fail(&mut self, what: &str, err: impl std::fmt::Display) -> ! {
        // Drain whatever is pending, for the message.
        let mut pending = Vec::new();
        let mut buf = [0u8; 4096];
        let until = Instant::now() + Duration::from_millis(200);
        while Instant::now() < until {
            match self.session.try_read(&mut buf) {
                Ok(0) => break,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        let read = |name: &str| std::fs::read_to_string(self.path(name)).unwrap_or_default();
        panic!(
            "{what}: {err}\n--- script ---\n{}\n--- screen so far ---\n{}\n--- not yet matched ---\n{}\n--- out.json ---\n{}\n--- err.log ---\n{}",
            self.script,
            String::from_utf8_lossy(&self.transcript).escape_debug(),
            String::from_utf8_lossy(&pending).escape_debug(),
            read("out.json"),
            read("err.log"),
        );
    }

    /// Waits (up to [`TIMEOUT`]) for `text` on the pty.
    pub fn expect(&mut self, text: &str) -> &mut Self {
        match self.session.expect(text) {
            Ok(c) => self.transcript.extend_from_slice(c.as_bytes()),
            Err(e) => self.fail(&format!("waiting for {text:?}"), e),
        }
        self
    }

    /// Waits for a regular expression.
    pub fn expect_re(&mut self, re: &str) -> &mut Self {
        match self.session.expect(expectrl::Regex(re)) {
            Ok(c) => self.transcript.extend_from_slice(c.as_bytes()),
            Err(e) => self.fail(&format!("waiting for /{re}/"), e),
        }
        self
    }

    /// Sends keys.
    pub fn send(&mut self, keys: &str) -> &mut Self {
        if let Err(e) = self.session.send(keys) {
            self.fail(&format!("sending {keys:?}"), e);
        }
        let _ = self.session.flush();
        self
    }

    /// Waits for `text`, then sends `keys`.
    pub fn answer(&mut self, text: &str, keys: &str) -> &mut Self {
        self.expect(text);
        self.send(keys)
    }

    /// Waits for `text`, gives the prompt a moment to switch the terminal to
    /// raw mode, then sends `keys`. Only for keys the line discipline would
    /// eat in cooked mode (Ctrl-C, Backspace, Ctrl-U).
    pub fn answer_settled(&mut self, text: &str, keys: &str) -> &mut Self {
        self.expect(text);
        if let Err(e) = wait_raw_mode(&self.session) {
            self.fail(&format!("after {text:?}"), e);
        }
        self.send(keys)
    }

    /// Sends `keys` once the program reads keys in raw mode (see
    /// [`wait_raw_mode`]): for keys the line discipline would edit.
    pub fn send_settled(&mut self, keys: &str) -> &mut Self {
        if let Err(e) = wait_raw_mode(&self.session) {
            self.fail(&format!("before sending {keys:?}"), e);
        }
        self.send(keys)
    }

    /// The screen so far as a person sees it (see [`render`]).
    pub fn visible(&self) -> String {
        render(&self.transcript, self.size)
    }

    /// [`quiet_for`] `ms` milliseconds, in a chain of keys and expects.
    pub fn quiet_for(&mut self, ms: u64, why: &str) -> &mut Self {
        quiet_for(Duration::from_millis(ms), why);
        self
    }

    /// Waits for the end of output and the exit status; reads out.json.
    pub fn finish(&mut self) -> Finished {
        match self.session.expect(Eof) {
            Ok(c) => self.transcript.extend_from_slice(c.as_bytes()),
            Err(e) => self.fail("waiting for the end of output", e),
        }
        let deadline = Instant::now() + TIMEOUT;
        let code = loop {
            match self.session.get_process().status() {
                Ok(WaitStatus::Exited(_, code)) => break code,
                Ok(WaitStatus::Signaled(_, sig, _)) => {
                    self.fail("the process", format!("killed by {sig:?}"))
                }
                Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                Ok(other) => self.fail("waiting for the exit", format!("{other:?}")),
                Err(e) => self.fail("waiting for the exit", e),
            }
        };
        Finished {
            code,
            stdout: std::fs::read_to_string(self.path("out.json")).unwrap_or_default(),
            screen: self.transcript.clone(),
            dir: self.dir.path().to_path_buf(),
            size: self.size,
        }
    }

    /// Finishes and checks exit status 0 and the exact JSON on stdout.
    pub fn finish_with(&mut self, expected: Value) -> Finished {
        let f = self.finish();
        assert_eq!(
            f.code,
            0,
            "exit status; stdout {:?}\n--- screen ---\n{}",
            f.stdout,
            f.screen_text().escape_debug()
        );
        assert_eq!(
            f.json(),
            expected,
            "\n--- screen ---\n{}",
            f.screen_text().escape_debug()
        );
        f
    }
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

impl Pty {
    /// Whether elicit is still running (drains its output meanwhile).
    pub fn alive(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        while let Ok(n) = self.session.try_read(&mut buf) {
            if n == 0 {
                break;
            }
            self.transcript.extend_from_slice(&buf[..n]);
        }
        self.session.get_process().is_alive().unwrap_or(false)
    }
}

impl Pty {
    /// The child's threads' states, for diagnosing a hang.
    pub fn proc_state(&self) -> String {
        let pid = self.session.get_process().pid().as_raw();
        let mut out = String::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let p = t.path();
                let stat = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
                let wchan = std::fs::read_to_string(p.join("wchan")).unwrap_or_default();
                let stack = std::fs::read_to_string(p.join("stack")).unwrap_or_default();
                out.push_str(&format!("{stat}\nwchan={wchan}\n{stack}\n"));
            }
        }
        out
    }
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

/// The one command builder for running the binary: from the repository's
/// root (fixtures are named relative to it), with no colour and none of the
/// person's own browser or UI settings leaking in from the environment.
pub fn elicit_command() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("elicit").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("ELICIT_BROWSER")
        .env_remove("BROWSER")
        .env_remove("ELICIT_UI")
        .env_remove("ELICIT_NO_OPEN")
        // A test says when it stands for a CI job; the suite's own CI
        // variable must not change what elicit does.
        .env_remove("CI")
        .env("NO_COLOR", "1");
    c
}

/// A scripted client speaking to `proxy` (a [`Test`] of `elicit proxy …`):
/// each message with an id waits for its reply, as real clients do.
/// Returns every message the client got, in order (the reply to the last
/// request last), and the run, which must end with success once the client
/// closes stdin.
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
    run.success();
    (got, run)
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
