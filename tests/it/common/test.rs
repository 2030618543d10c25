//! The one way a test runs the binary (as `just`'s `Test`):
//! `Test::new().args([...]).server(&argv).env(K, V).stdin(text).run()`;
//! `.spawn()` to drive it as it runs, `.pty()` for a person at a terminal
//! (see `pty`), `.terminal()` for all its streams on a pseudo-terminal,
//! `.command()` for a test that must handle the process itself.
//!
//! It checks by default: the exit status when the run ends (0 unless the
//! test says otherwise), and that neither stdout nor stderr holds anything
//! the test did not expect, read or set aside with a reason. A check that
//! fails shows the command, where it was run, the status and both streams.
//!
//! Every run starts from the same clean slate (the repository's root as its
//! folder, so fixtures are named relative to it; no colour; none of the
//! person's browser, UI, client or CI settings), has a bounded wait (killed
//! and failed past its limit, with what it said so far), and fails the test
//! if elicit panicked, whatever the test itself checks.

use std::cell::Cell;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::panic::Location;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a run may take unless the test says otherwise: generous, since
/// many runs start real servers on a loaded machine; a hang still fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// What the environment could carry in that would change what elicit
/// does: a test that wants one sets it again.
const CLEARED: [&str; 8] = [
    "ELICIT_BROWSER",
    "BROWSER",
    "ELICIT_UI",
    "ELICIT_NO_OPEN",
    "ELICIT_CLIENT_ID",
    "ELICIT_CLIENT_SECRET",
    "ELICIT_CLIENT_ISSUER",
    // A test says when it stands for a CI job; the suite's own CI variable
    // must not change what elicit does.
    "CI",
];

/// A run of `elicit` being put together, with what it must show when it
/// ends: exit status 0 unless [`Test::status`] or [`Test::failure`] says
/// otherwise, and nothing on stdout or stderr that the test did not expect
/// ([`Test::stdout`], [`Test::stderr`]), read ([`Run`]'s accessors and
/// checks) or set aside with a reason ([`Test::stdout_unchecked`]).
pub struct Test {
    cmd: Command,
    stdin: Option<Vec<u8>>,
    limit: Option<Duration>,
    shown: Vec<String>,
    feed: bool,
    expected: Expected,
    pub(super) terminal: super::pty::Terminal,
}

/// The exit a run must end with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Status {
    Code(i32),
    /// One of these codes (a run over data whose outcome the test does not
    /// know in advance).
    OneOf(&'static [i32]),
    /// Any code but 0.
    Failure,
    /// Whatever it is: only for a run the test killed ([`Running::kill`]).
    Any,
}

impl Status {
    pub(super) fn holds(self, code: i32) -> bool {
        match self {
            Status::Code(c) => c == code,
            Status::OneOf(codes) => codes.contains(&code),
            Status::Failure => code != 0,
            Status::Any => true,
        }
    }
}

/// What a stream must hold when the run ends.
#[derive(Clone, Debug, Default)]
pub(super) enum Output {
    /// Nothing the test did not read.
    #[default]
    Unread,
    /// Exactly this.
    Is(String),
    /// Whatever it is, for the reason given.
    Unchecked,
}

/// The run's expected end.
#[derive(Clone, Debug)]
pub(super) struct Expected {
    pub(super) status: Status,
    pub(super) stdout: Output,
    pub(super) stderr: Output,
}

/// How a run ended. The exit status was checked as it ended; what it
/// printed is read through the accessors and checks below, and a stream
/// holding anything nobody looked at fails the test when the run is
/// dropped.
#[derive(Debug)]
pub struct Run {
    /// The exit code (-1 when a signal ended it).
    code: i32,
    stdout: String,
    stderr: String,
    /// From its start to its end.
    took: Duration,
    shown: String,
    /// Whether each stream was looked at (or needs no look: empty, read
    /// line by line as it came, expected at the start).
    stdout_seen: Cell<bool>,
    stderr_seen: Cell<bool>,
}

impl Test {
    pub fn new() -> Test {
        let mut cmd = Command::new(super::BIN);
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in CLEARED {
            cmd.env_remove(name);
        }
        Test {
            cmd,
            stdin: None,
            limit: None,
            shown: Vec::new(),
            feed: false,
            expected: Expected {
                status: Status::Code(0),
                stdout: Output::Unread,
                stderr: Output::Unread,
            },
            terminal: Default::default(),
        }
    }

    /// The exit code the run must end with (0 unless told).
    pub fn status(mut self, code: i32) -> Test {
        self.expected.status = Status::Code(code);
        self
    }

    /// The run must end with one of `codes`.
    pub fn status_in(mut self, codes: &'static [i32]) -> Test {
        self.expected.status = Status::OneOf(codes);
        self
    }

    /// The run must fail: any exit code but 0.
    pub fn failure(mut self) -> Test {
        self.expected.status = Status::Failure;
        self
    }

    /// Stdout must be exactly `text` ("" for nothing at all).
    pub fn stdout(mut self, text: impl Into<String>) -> Test {
        self.expected.stdout = Output::Is(text.into());
        self
    }

    /// Stderr must be exactly `text` ("" for nothing at all).
    pub fn stderr(mut self, text: impl Into<String>) -> Test {
        self.expected.stderr = Output::Is(text.into());
        self
    }

    /// Whatever stdout holds is not this test's business, for the reason
    /// `why` (shown to the reader, not used).
    pub fn stdout_unchecked(mut self, why: &str) -> Test {
        let _ = why;
        self.expected.stdout = Output::Unchecked;
        self
    }

    /// Whatever stderr holds is not this test's business, for the reason
    /// `why` (a server's own log on it, say).
    pub fn stderr_unchecked(mut self, why: &str) -> Test {
        let _ = why;
        self.expected.stderr = Output::Unchecked;
        self
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Test {
        self.shown.push(arg.as_ref().to_string_lossy().into_owned());
        self.cmd.arg(arg);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Test {
        for a in args {
            self = self.arg(a);
        }
        self
    }

    /// Arguments written as on a command line, split at spaces (none of
    /// them holds one): `.words("call --no-input --tool echo")`.
    pub fn words(self, line: &str) -> Test {
        self.args(line.split_whitespace())
    }

    /// `-- SERVER...`: the stdio server's command line.
    pub fn server<S: AsRef<OsStr>>(self, argv: &[S]) -> Test {
        self.arg("--").args(argv)
    }

    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Test {
        self.cmd.env(name, value);
        self
    }

    pub fn envs(mut self, vars: &[(&str, &str)]) -> Test {
        for (k, v) in vars {
            self.cmd.env(k, v);
        }
        self
    }

    pub fn env_remove(mut self, name: &str) -> Test {
        self.cmd.env_remove(name);
        self
    }

    /// elicit's data directory (its token store and state) in `dir`, not
    /// the person's.
    pub fn data_dir(self, dir: impl AsRef<std::path::Path>) -> Test {
        self.env("ELICIT_DATA_DIR", dir.as_ref())
    }

    pub fn current_dir(mut self, dir: impl AsRef<std::path::Path>) -> Test {
        self.cmd.current_dir(dir);
        self
    }

    /// What elicit reads on stdin (none: /dev/null).
    pub fn stdin(mut self, bytes: impl AsRef<[u8]>) -> Test {
        self.stdin = Some(bytes.as_ref().to_vec());
        self
    }

    /// Stdin redirected from `from`: a file (its size known, as `< FILE`),
    /// another process's output.
    pub fn stdin_from(mut self, from: impl Into<Stdio>) -> Test {
        self.cmd.stdin(from);
        self
    }

    /// Stdout sent to `to` instead of the pipe the test reads (say, a pipe
    /// whose reader is gone).
    pub fn stdout_to(mut self, to: impl Into<Stdio>) -> Test {
        self.cmd.stdout(to);
        self
    }

    /// No controlling terminal (a session of its own, as a CI job or an
    /// editor's hook runs it): `/dev/tty` cannot be opened.
    pub fn no_terminal(mut self) -> Test {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            self.cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        self
    }

    /// Stdin a pipe the test writes to as it goes ([`Running::write`]).
    pub fn feed(mut self) -> Test {
        self.feed = true;
        self
    }

    /// The most the run may take ([`RUN_LIMIT`] unless told; on a
    /// pseudo-terminal, the most each wait for the screen may take).
    pub fn limit(mut self, limit: Duration) -> Test {
        self.limit = Some(limit);
        self
    }

    /// Runs it to its end (or its limit).
    #[track_caller]
    pub fn run(self) -> Run {
        self.spawn().wait()
    }

    /// Runs it to its end as [`Test::run`] does, with its peak resident
    /// memory in KiB (see [`Running::wait_measured`]).
    #[track_caller]
    pub fn run_measured(self) -> (Run, u64) {
        self.spawn().wait_measured()
    }

    /// The command as built (the clean environment, the folder, stdout and
    /// stderr piped), for a test that handles the process itself: one that
    /// reads its memory from /proc until it reaps it, say. Stdin is /dev/null
    /// unless [`Test::stdin_from`] set it. Nothing is checked for it: the
    /// test checks what it needs.
    pub fn command(self) -> Command {
        assert!(
            self.stdin.is_none() && !self.feed,
            "Test::command: stdin bytes are written by Test::spawn"
        );
        self.cmd
    }

    /// Splits the builder for the pseudo-terminal runner: the command, the
    /// stdin bytes, the wait limit (if told), the terminal's settings and
    /// the expected end.
    pub(super) fn into_parts(self) -> (Command, Vec<u8>, Option<Duration>, Expected) {
        assert!(
            !self.feed,
            "a run on a pseudo-terminal reads a file, not a feed"
        );
        let stdin = self.stdin.unwrap_or_default();
        (self.cmd, stdin, self.limit, self.expected)
    }

    /// Starts it on a pseudo-terminal of its own (stdin, stdout, stderr and
    /// `/dev/tty` all the terminal, as a person runs it), the variant of
    /// [`Test::spawn`] for prompts: the session waits up to the run's limit
    /// for what is expected.
    pub fn terminal(mut self) -> expectrl::session::OsSession {
        // Piped or null streams would replace the terminal at exec.
        self.cmd
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .env("TERM", "xterm-256color");
        let mut session = expectrl::session::OsSession::spawn(self.cmd).expect("spawn under a pty");
        session.set_expect_timeout(Some(self.limit.unwrap_or(RUN_LIMIT)));
        session
    }

    /// Starts it and returns at once: for a test that signals it, feeds
    /// its stdin as it goes, or reads its pid; [`Running::wait`] ends it
    /// as [`Test::run`] does.
    #[track_caller]
    pub fn spawn(mut self) -> Running {
        assert!(
            self.terminal.is_default(),
            "the terminal's settings are for Test::pty"
        );
        if self.stdin.is_some() || self.feed {
            self.cmd.stdin(Stdio::piped());
        }
        let mut child = self.cmd.spawn().expect("the elicit binary starts");
        let mut stdin = child.stdin.take();
        if let Some(bytes) = self.stdin.take() {
            let mut pipe = stdin.take().expect("stdin is piped");
            // A thread of its own: elicit may stop reading (an error at the
            // first line) while its output fills the other pipes.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let (lines, stdout) = read_lines(child.stdout.take());
        let (stderr_lines, stderr) = read_lines(child.stderr.take());
        Running {
            child,
            stdin,
            lines,
            stderr_lines,
            stdout: Some(stdout),
            stderr: Some(stderr),
            started: Instant::now(),
            limit: self.limit.unwrap_or(RUN_LIMIT),
            shown: format!("{} (run at {})", self.shown.join(" "), Location::caller()),
            expected: self.expected,
            stdout_taken: 0,
            stderr_taken: 0,
        }
    }
}

/// Reads stdout on a thread of its own, handing on each line as it comes
/// (for [`Running::next_json`]) and the whole at the end.
fn read_lines(pipe: Option<impl Read + Send + 'static>) -> (Receiver<String>, JoinHandle<String>) {
    let (send, lines) = mpsc::channel();
    let all = std::thread::spawn(move || {
        let mut all = String::new();
        let Some(pipe) = pipe else { return all };
        let mut reader = BufReader::new(pipe);
        let mut bytes = Vec::new();
        while matches!(reader.read_until(b'\n', &mut bytes), Ok(n) if n > 0) {
            let line = String::from_utf8_lossy(&bytes).into_owned();
            all.push_str(&line);
            let _ = send.send(line);
            bytes.clear();
        }
        all
    });
    (lines, all)
}

/// A run under way ([`Test::spawn`]).
pub struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr_lines: Receiver<String>,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    started: Instant,
    limit: Duration,
    shown: String,
    expected: Expected,
    /// Bytes of each stream the test took line by line as they came.
    stdout_taken: usize,
    stderr_taken: usize,
}

impl Running {
    /// elicit's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The exit code the run must end with, for a status known only once
    /// it runs (after a signal the test sends, say).
    pub fn status(mut self, code: i32) -> Running {
        self.expected.status = Status::Code(code);
        self
    }

    /// As [`Running::status`], for one of `codes`.
    pub fn status_in(mut self, codes: &'static [i32]) -> Running {
        self.expected.status = Status::OneOf(codes);
        self
    }

    /// Sends elicit `signal`.
    pub fn signal(&self, signal: i32) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// Writes `bytes` to elicit's stdin (a client speaking as it goes).
    pub fn write(&mut self, bytes: &[u8]) {
        let pipe = self.stdin.as_mut().expect("stdin still open");
        pipe.write_all(bytes).expect("elicit reads its stdin");
        pipe.flush().expect("elicit reads its stdin");
    }

    /// Writes one JSON-RPC message, a line, to elicit's stdin.
    pub fn send(&mut self, message: &Value) {
        self.write(format!("{message}\n").as_bytes());
    }

    /// The next line elicit writes on stdout, as JSON: fails the test when
    /// none comes within the run's limit, or stdout ends first.
    pub fn next_json(&mut self) -> Value {
        let line = self.next_raw_line();
        serde_json::from_str(line.trim())
            .unwrap_or_else(|e| panic!("elicit {}: a line not JSON ({e}): {line:?}", self.shown))
    }

    /// The next line elicit writes on stdout, as it wrote it (without its
    /// line end): fails the test as [`Running::next_json`] does.
    pub fn next_line(&mut self) -> String {
        self.next_raw_line()
            .trim_end_matches(['\n', '\r'])
            .to_string()
    }

    /// The next line on stdout with its line end (none at the very end).
    pub fn next_raw_line(&mut self) -> String {
        let left = self.limit.saturating_sub(self.started.elapsed());
        let line = self
            .lines
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("elicit {}: no line on stdout ({e})", self.shown));
        self.stdout_taken += line.len();
        line
    }

    /// The next line elicit writes on stderr, waiting up to `limit`.
    pub fn next_stderr_line(&mut self, limit: Duration) -> Option<String> {
        let line = self.stderr_lines.recv_timeout(limit).ok()?;
        self.stderr_taken += line.len();
        Some(line)
    }

    /// As [`Running::wait`], up to `limit` from now (after a signal, say).
    pub fn wait_within(mut self, limit: Duration) -> Run {
        self.limit = self.started.elapsed() + limit;
        self.wait()
    }

    /// Kills elicit (a run that would wait for a person) and returns what
    /// it said; its exit status, the kill's, is not checked.
    pub fn kill(mut self) -> Run {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.expected.status = Status::Any;
        self.wait()
    }

    /// Ends elicit's stdin (the client is done).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Whether elicit is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for its end (up to the limit from its start; past it, kills
    /// it and fails the test with what it said). Stdin stays open while it
    /// runs unless [`Running::close_stdin`] closed it: a client that hangs
    /// up says so first.
    pub fn wait(mut self) -> Run {
        let status = self.reap(|child| child.try_wait().unwrap());
        self.finish(status)
    }

    /// As [`Running::wait`], with elicit's peak resident memory in KiB:
    /// `ru_maxrss` from `wait4`, its `VmHWM` at its exit (which /proc no
    /// longer shows once it is reaped).
    pub fn wait_measured(mut self) -> (Run, u64) {
        use std::os::unix::process::ExitStatusExt;
        let pid = self.child.id() as libc::pid_t;
        let mut peak_kib = 0;
        let status = self.reap(|_| {
            let mut status = 0;
            // SAFETY: an all-zero rusage is valid.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: waits for our own child, with valid pointers.
            let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            (got == pid).then(|| {
                peak_kib = usage.ru_maxrss as u64;
                std::process::ExitStatus::from_raw(status)
            })
        });
        (self.finish(status), peak_kib)
    }

    /// Polls `ended` until it gives elicit's exit status; past the limit
    /// kills elicit and gives None.
    fn reap(
        &mut self,
        mut ended: impl FnMut(&mut Child) -> Option<std::process::ExitStatus>,
    ) -> Option<std::process::ExitStatus> {
        loop {
            if let Some(status) = ended(&mut self.child) {
                return Some(status);
            }
            if self.started.elapsed() > self.limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The run that ended with `status` (None: killed past its limit),
    /// failing the test if it hung, panicked, ended with another status than
    /// the expected one or printed other than the expected text.
    fn finish(&mut self, status: Option<std::process::ExitStatus>) -> Run {
        let stdout = self
            .stdout
            .take()
            .map(|t| t.join().unwrap())
            .unwrap_or_default();
        let stderr = self
            .stderr
            .take()
            .map(|t| t.join().unwrap())
            .unwrap_or_default();
        let run = Run {
            took: self.started.elapsed(),
            code: status.and_then(|s| s.code()).unwrap_or(-1),
            stdout_seen: Cell::new(stdout.len() <= self.stdout_taken),
            stderr_seen: Cell::new(stderr.len() <= self.stderr_taken),
            stdout,
            stderr,
            shown: std::mem::take(&mut self.shown),
        };
        if status.is_none() {
            run.fail(&format!("it did not end within {:?}", self.limit));
        }
        if run.stderr.contains("panicked at") {
            run.fail("it panicked");
        }
        if !self.expected.status.holds(run.code) {
            run.fail(&format!("exit status {:?} expected", self.expected.status));
        }
        run.expect_stream(
            "stdout",
            &run.stdout,
            &run.stdout_seen,
            &self.expected.stdout,
        );
        run.expect_stream(
            "stderr",
            &run.stderr,
            &run.stderr_seen,
            &self.expected.stderr,
        );
        run
    }
}

/// A test that fails while elicit runs leaves nothing running.
impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Run {
    /// Fails the test with `what` and all the run showed.
    fn fail(&self, what: &str) -> ! {
        // Seen: the failure already shows them, and the drop must not fail
        // a second time.
        self.stdout_seen.set(true);
        self.stderr_seen.set(true);
        panic!(
            "elicit {}: {what}\nexit status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.shown, self.code, self.stdout, self.stderr
        )
    }

    /// Checks `text`, one of the run's streams, against what was `expected`
    /// of it at the start.
    fn expect_stream(&self, name: &str, text: &str, seen: &Cell<bool>, expected: &Output) {
        match expected {
            Output::Unread => {}
            Output::Unchecked => seen.set(true),
            Output::Is(want) if want == text => seen.set(true),
            Output::Is(want) => self.fail(&format!("{name} expected: {want:?}")),
        }
    }

    /// The exit code (-1 when a signal ended it), already checked against
    /// the expected one.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// How long it ran.
    pub fn took(&self) -> Duration {
        self.took
    }

    /// All of stdout, for the test to examine.
    pub fn stdout(&self) -> &str {
        self.stdout_seen.set(true);
        &self.stdout
    }

    /// All of stderr, for the test to examine.
    pub fn stderr(&self) -> &str {
        self.stderr_seen.set(true);
        &self.stderr
    }

    /// Stdout as one JSON value (a failure shows what it was).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout().trim())
            .unwrap_or_else(|e| self.fail(&format!("stdout is not JSON ({e})")))
    }

    /// Fails the test unless `holds` (what was looked for, in `what`).
    fn check(&self, holds: bool, what: String) -> &Run {
        if !holds {
            self.fail(&what);
        }
        self
    }

    /// Fails the test unless stdout is exactly `text`.
    pub fn stdout_is(&self, text: &str) -> &Run {
        self.check(self.stdout() == text, format!("stdout expected: {text:?}"))
    }

    /// Fails the test unless stderr is exactly `text`.
    pub fn stderr_is(&self, text: &str) -> &Run {
        self.check(self.stderr() == text, format!("stderr expected: {text:?}"))
    }

    /// Fails the test unless stdout holds `text`.
    pub fn stdout_has(&self, text: &str) -> &Run {
        self.check(
            self.stdout().contains(text),
            format!("stdout lacks {text:?}"),
        )
    }

    /// Fails the test if stdout holds `text`.
    pub fn stdout_lacks(&self, text: &str) -> &Run {
        self.check(
            !self.stdout().contains(text),
            format!("stdout has {text:?}"),
        )
    }

    /// Fails the test unless stderr holds `text`.
    pub fn stderr_has(&self, text: &str) -> &Run {
        self.check(
            self.stderr().contains(text),
            format!("stderr lacks {text:?}"),
        )
    }

    /// Fails the test if stderr holds `text`.
    pub fn stderr_lacks(&self, text: &str) -> &Run {
        self.check(
            !self.stderr().contains(text),
            format!("stderr has {text:?}"),
        )
    }

    /// Fails the test unless stdout starts with `text`.
    pub fn stdout_starts_with(&self, text: &str) -> &Run {
        self.check(
            self.stdout().starts_with(text),
            format!("stdout does not start with {text:?}"),
        )
    }
}

/// What a run printed cannot go unexamined: a stream that holds anything
/// the test neither expected nor read fails it (unless it already fails).
impl Drop for Run {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        for (name, text, seen) in [
            ("stdout", &self.stdout, &self.stdout_seen),
            ("stderr", &self.stderr, &self.stderr_seen),
        ] {
            if !text.is_empty() && !seen.get() {
                self.fail(&format!(
                    "{name} was neither expected nor read (say what it holds, or why it does not matter)"
                ));
            }
        }
    }
}

/// The checks `Test` makes unasked fail a run that breaks them.
mod checks {
    use super::Test;

    /// A usage error: exit 2, nothing on stdout, the error on stderr.
    fn bad_flag() -> Test {
        Test::new().arg("--no-such-flag")
    }

    #[test]
    #[should_panic(expected = "exit status Code(0) expected")]
    fn a_failure_nobody_expected_fails_the_test() {
        bad_flag()
            .stderr_unchecked("the status is what fails")
            .run();
    }

    #[test]
    #[should_panic(expected = "stderr was neither expected nor read")]
    fn a_forgotten_stderr_fails_the_test() {
        bad_flag().status(2).stdout("").run();
    }

    #[test]
    #[should_panic(expected = "stdout was neither expected nor read")]
    fn a_forgotten_stdout_fails_the_test() {
        Test::new().arg("--version").run();
    }

    #[test]
    #[should_panic(expected = "stderr expected")]
    fn another_stderr_than_the_expected_one_fails_the_test() {
        bad_flag().status(2).stderr("something else").run();
    }

    #[test]
    fn a_run_whose_output_was_looked_at_passes() {
        bad_flag()
            .status(2)
            .stdout("")
            .run()
            .stderr_has("--no-such-flag");
        let version = Test::new().arg("--version").run();
        assert!(version.stdout().starts_with("elicit "));
    }
}
