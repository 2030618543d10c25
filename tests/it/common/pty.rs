//! The pseudo-terminal variant of [`Test`]: `Test::new().stdin(request)
//! .args([...]).pty()` runs elicit as a person at a terminal meets it.
//!
//! Each run spawns `sh -c "read; stty …; exec elicit ARGS < req.json > out.json"`
//! under a pty, in its own temporary directory: stdin and stdout are files
//! (as in a pipeline) while stderr and `/dev/tty` are the pty. The
//! environment is the builder's clean one. Every expect has a timeout, so a
//! broken prompt fails the test instead of hanging it, and the end
//! ([`Pty::finish`]) is checked as [`Test::run`]'s is: the exit status,
//! and what elicit wrote on stdout.

use std::cell::Cell;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use expectrl::{Eof, Expect};
use serde_json::Value;

use super::test::{Expected, Output};
use super::{quiet_for, sh_quote, wait_raw_mode, Test, BIN, TIMEOUT};

/// The pseudo-terminal's settings, kept on the [`Test`] until [`Test::pty`].
#[derive(Clone, Debug, PartialEq)]
pub struct Terminal {
    size: (u16, u16),
    stderr_file: bool,
    stub_path: bool,
}

impl Default for Terminal {
    fn default() -> Self {
        Terminal {
            size: (120, 40),
            stderr_file: false,
            stub_path: false,
        }
    }
}

impl Terminal {
    /// Whether nothing was set (a run off the terminal must not set any).
    pub fn is_default(&self) -> bool {
        *self == Terminal::default()
    }
}

impl Test {
    /// The terminal's size (columns, rows); 120x40 unless told. For
    /// [`Test::pty`].
    pub fn size(mut self, cols: u16, rows: u16) -> Test {
        self.terminal.size = (cols, rows);
        self
    }

    /// Sends stderr to `err.log` in the run's folder, not the terminal.
    /// For [`Test::pty`].
    pub fn stderr_to_file(mut self) -> Test {
        self.terminal.stderr_file = true;
        self
    }

    /// Puts the run's folder first on PATH (for stub openers) and hides
    /// any desktop, so `open` falls back to `xdg-open`. For [`Test::pty`].
    pub fn stub_path(mut self) -> Test {
        self.terminal.stub_path = true;
        self
    }

    /// Starts it on a pseudo-terminal in a fresh temporary folder, its
    /// stdin bytes the file it reads.
    pub fn pty(self) -> Pty {
        self.pty_in(tempfile::tempdir().expect("tempdir"))
    }

    /// As [`Test::pty`], in `dir` (holding a stub the test wrote first).
    pub fn pty_in(mut self, dir: tempfile::TempDir) -> Pty {
        let terminal = std::mem::take(&mut self.terminal);
        let (cmd, request, limit, expected) = self.into_parts();
        std::fs::write(dir.path().join("req.json"), request).unwrap();
        let script = terminal.script(&cmd);
        let mut shell = Command::new("/bin/sh");
        shell.arg("-c").arg(&script).current_dir(dir.path());
        shell.env("TERM", "xterm-256color");
        if terminal.stub_path {
            for name in ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"] {
                shell.env_remove(name);
            }
            shell.env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()));
        }
        // After the stub's: what the test set itself wins.
        for (name, value) in cmd.get_envs() {
            match value {
                Some(value) => shell.env(name, value),
                None => shell.env_remove(name),
            };
        }
        let mut session = OsSession::spawn(shell).expect("spawn under a pty");
        session.set_expect_timeout(Some(limit.unwrap_or(TIMEOUT)));
        // ptyprocess sets 80x24 from the parent after the child started, which
        // can land after the child's own `stty`: the script waits for this
        // line, sent once the size is final.
        let (cols, rows) = terminal.size;
        session
            .get_process_mut()
            .set_window_size(cols, rows)
            .expect("window size");
        session.send("\n").expect("start line");
        Pty {
            dir,
            session,
            transcript: Vec::new(),
            script,
            size: terminal.size,
            limit: limit.unwrap_or(TIMEOUT),
            expected,
        }
    }
}

impl Terminal {
    /// The shell's script: wait for the go line, size the terminal, then
    /// become `cmd` (elicit with its arguments) reading and writing files.
    fn script(&self, cmd: &Command) -> String {
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| sh_quote(&a.to_string_lossy()))
            .collect();
        // With stderr in a file, elicit holds no pty descriptor until it
        // opens /dev/tty, and the pty would report end of output: keep one
        // open on fd 3 (closed when elicit exits).
        let err = if self.stderr_file {
            " 2> err.log 3<&1"
        } else {
            ""
        };
        format!(
            "read -r go && stty cols {} rows {} && exec {} {}{err} < req.json > out.json",
            self.size.0,
            self.size.1,
            sh_quote(BIN),
            args.join(" ")
        )
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
    /// The most each wait takes.
    limit: Duration,
    expected: Expected,
}

/// The end of a run.
#[derive(Debug)]
pub struct Finished {
    /// Checked against the expected status as it ended.
    pub code: i32,
    /// out.json as text: read through [`Finished::stdout`] or
    /// [`Finished::json`], or expected at the start ([`Test::stdout`]).
    stdout: String,
    stdout_seen: Cell<bool>,
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
    /// out.json, for the test to examine.
    pub fn stdout(&self) -> &str {
        self.stdout_seen.set(true);
        &self.stdout
    }

    /// stdout parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?}\n--- screen ---\n{}",
                self.stdout,
                String::from_utf8_lossy(&self.screen)
            )
        })
    }
    /// Everything the terminal showed, as text.
    pub fn screen_text(&self) -> String {
        String::from_utf8_lossy(&self.screen).into_owned()
    }
    /// The final screen as a person sees it (see [`render`]).
    pub fn visible(&self) -> String {
        render(&self.screen, self.size)
    }
}

impl Pty {
    /// A file in the run's folder.
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

    /// Waits (up to the run's limit) for `text` on the pty.
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
        let deadline = Instant::now() + self.limit;
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
        let stdout = std::fs::read_to_string(self.path("out.json")).unwrap_or_default();
        if !self.expected.status.holds(code) {
            let what = format!("exit status {code} ({:?} expected)", self.expected.status);
            self.fail(&what, format!("stdout {stdout:?}"));
        }
        let stdout_seen = match &self.expected.stdout {
            Output::Unread => stdout.is_empty(),
            Output::Unchecked => true,
            Output::Is(want) if *want == stdout => true,
            Output::Is(want) => self.fail(&format!("stdout {want:?} expected"), &stdout),
        };
        Finished {
            code,
            stdout,
            stdout_seen: Cell::new(stdout_seen),
            screen: self.transcript.clone(),
            dir: self.dir.path().to_path_buf(),
            size: self.size,
        }
    }

    /// Finishes as [`Pty::finish`] does and checks the exact JSON on stdout.
    pub fn finish_with(&mut self, expected: Value) -> Finished {
        let f = self.finish();
        assert_eq!(
            f.json(),
            expected,
            "\n--- screen ---\n{}",
            f.screen_text().escape_debug()
        );
        f
    }
}

/// What elicit wrote on stdout cannot go unexamined (as [`super::Run`]'s).
impl Drop for Finished {
    fn drop(&mut self) {
        if !std::thread::panicking() && !self.stdout_seen.get() {
            panic!(
                "elicit on a terminal: stdout was neither expected nor read: {:?}\n--- screen ---\n{}",
                self.stdout,
                self.screen_text().escape_debug()
            );
        }
    }
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

/// The terminal variant checks its end as [`Test::run`] does.
mod checks {
    use super::Test;

    #[test]
    #[should_panic(expected = "exit status 2 (Code(0) expected)")]
    fn a_failure_nobody_expected_fails_the_test() {
        Test::new().stdin("not an elicitation").pty().finish();
    }

    #[test]
    #[should_panic(expected = "stdout was neither expected nor read")]
    fn a_forgotten_stdout_fails_the_test() {
        Test::new()
            .stdin(r#"{"message":"m","requestedSchema":{"type":"object","properties":{}}}"#)
            .args(["-a", "accept"])
            .pty()
            .finish();
    }

    #[test]
    fn a_run_whose_stdout_was_read_passes() {
        let done = Test::new()
            .stdin("not an elicitation")
            .status(2)
            .pty()
            .finish();
        assert_eq!(done.stdout(), "");
    }
}
