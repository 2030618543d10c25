//! The one way a test runs the binary without a terminal (as `just`'s
//! `Test`): `Test::new().args([...]).server(&argv).env(K, V).stdin(text).run()`.
//!
//! Every run starts from the same clean slate (the repository's root as its
//! folder, so fixtures are named relative to it; no colour; none of the
//! person's browser, UI, client or CI settings), has a bounded wait (killed
//! and failed past its limit, with what it said so far), and fails the test
//! if elicit panicked, whatever the test itself checks.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
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

/// A run of `elicit` being put together.
pub struct Test {
    cmd: Command,
    stdin: Option<Vec<u8>>,
    limit: Duration,
    shown: Vec<String>,
}

/// How a run ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code (-1 when a signal ended it).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
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
            limit: RUN_LIMIT,
            shown: Vec::new(),
        }
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

    pub fn current_dir(mut self, dir: impl AsRef<std::path::Path>) -> Test {
        self.cmd.current_dir(dir);
        self
    }

    /// What elicit reads on stdin (none: /dev/null).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(bytes.into());
        self
    }

    /// The most the run may take.
    pub fn limit(mut self, limit: Duration) -> Test {
        self.limit = limit;
        self
    }

    /// Runs it to its end (or its limit).
    pub fn run(mut self) -> Run {
        if self.stdin.is_some() {
            self.cmd.stdin(Stdio::piped());
        }
        let mut child = self.cmd.spawn().expect("the elicit binary starts");
        if let Some(bytes) = self.stdin.take() {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            // A thread of its own: elicit may stop reading (an error at the
            // first line) while its output fills the other pipes.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let read = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut bytes);
                }
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let stdout = read(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = read(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > self.limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let run = Run {
            code: status.and_then(|s| s.code()).unwrap_or(-1),
            stdout: stdout.join().unwrap(),
            stderr: stderr.join().unwrap(),
        };
        let shown = self.shown.join(" ");
        assert!(
            status.is_some(),
            "elicit {shown} did not end within {:?}; it said: {}{}",
            self.limit,
            run.stdout,
            run.stderr
        );
        assert!(
            !run.stderr.contains("panicked at"),
            "elicit {shown} panicked: {}",
            run.stderr
        );
        run
    }
}

impl Run {
    /// Stdout as one JSON value (a failure shows what it was).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// Fails the test unless the run exited with `code`; the run, to go on.
    pub fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit {} (expected {code})\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Fails the test unless the run succeeded.
    pub fn success(&self) -> &Run {
        self.expect_code(0)
    }
}
