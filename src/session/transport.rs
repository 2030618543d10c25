//! A stdio MCP server as a child process: newline-delimited JSON-RPC in
//! both directions, every message optionally recorded to a log file.
//!
//! The child runs in its own process group, so a Ctrl-C at the terminal
//! reaches elicit (which answers `cancel`) rather than killing the server
//! mid-call, and so the whole group (npx and the node it starts, say) can be
//! ended on the way out: no child is left behind.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::error::ElicitError;

/// What arrives from the server.
#[derive(Debug)]
pub enum Incoming {
    /// One parsed JSON-RPC message.
    Message(Value),
    /// A line that is not JSON (the server wrote something else to stdout).
    Malformed { line: String, error: String },
    /// The server closed its stdout (it exited or is exiting).
    Closed,
}

/// Records every message, both ways, as JSON lines:
/// `{"dir":"send"|"recv","time":RFC 3339,"message":…}` (or `"raw"` for a
/// line that was not JSON). A recorded session can be replayed as fixtures.
#[derive(Clone)]
pub struct MessageLog {
    file: Arc<Mutex<File>>,
}

impl MessageLog {
    pub fn create(path: &Path) -> Result<Self, ElicitError> {
        let file = File::create(path)
            .map_err(|e| ElicitError::io(format!("cannot create log {}", path.display()), e))?;
        Ok(MessageLog {
            file: Arc::new(Mutex::new(file)),
        })
    }

    pub fn record(&self, dir: &str, message: Result<&Value, &str>) {
        let time = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        let entry = match message {
            Ok(m) => json!({"dir": dir, "time": time, "message": m}),
            Err(raw) => json!({"dir": dir, "time": time, "raw": raw}),
        };
        self.write_entry(&entry);
    }

    pub(crate) fn write_entry(&self, entry: &Value) {
        if let Ok(mut f) = self.file.lock() {
            let _ = writeln!(f, "{entry}");
            let _ = f.flush();
        }
    }
}

/// Starts a server command with piped stdin/stdout, in its own process
/// group; its stderr goes to ours, or to `server_log`.
pub fn spawn_server(command: &[String], server_log: Option<&Path>) -> Result<Child, ElicitError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| ElicitError::Usage("no server command given: put it after `--`".into()))?;
    let stderr = match server_log {
        Some(p) => Stdio::from(File::create(p).map_err(|e| {
            ElicitError::io(format!("cannot create server log {}", p.display()), e)
        })?),
        None => Stdio::inherit(),
    };
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .map_err(|e| ElicitError::io(format!("cannot start server {program:?}"), e))
}

/// Sends `signal` to the process group led by `pid` (our server and
/// whatever it started).
pub fn signal_group(pid: u32, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid names
    // the process group created with process_group(0).
    unsafe {
        libc::kill(-(pid as libc::pid_t), signal);
    }
}

/// A running server.
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Incoming>,
    log: Option<MessageLog>,
    pub verbose: bool,
}

impl ServerProcess {
    /// Starts `command`. The server's stderr goes to elicit's stderr, or to
    /// `server_log` when given.
    pub fn spawn(
        command: &[String],
        server_log: Option<&Path>,
        log: Option<MessageLog>,
    ) -> Result<Self, ElicitError> {
        let mut child = spawn_server(command, server_log)?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel();
        let reader_log = log.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Incoming::Closed);
                        return;
                    }
                    Ok(_) => {}
                }
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                let msg = match serde_json::from_str::<Value>(line) {
                    Ok(v) => {
                        if let Some(l) = &reader_log {
                            l.record("recv", Ok(&v));
                        }
                        Incoming::Message(v)
                    }
                    Err(e) => {
                        if let Some(l) = &reader_log {
                            l.record("recv", Err(line));
                        }
                        Incoming::Malformed {
                            line: line.to_string(),
                            error: e.to_string(),
                        }
                    }
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        Ok(ServerProcess {
            child,
            stdin,
            incoming: rx,
            log,
            verbose: false,
        })
    }

    /// Sends one message as a line.
    pub fn send(&mut self, message: &Value) -> Result<(), ElicitError> {
        if let Some(l) = &self.log {
            l.record("send", Ok(message));
        }
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| ElicitError::Server("the server's stdin is closed".into()))?;
        let mut line = serde_json::to_vec(message).expect("values serialise");
        line.push(b'\n');
        stdin
            .write_all(&line)
            .and_then(|_| stdin.flush())
            .map_err(|e| {
                ElicitError::Server(format!("cannot write to the server: {e} (did it exit?)"))
            })
    }

    /// Waits for the next message, up to `timeout` (None: forever). A
    /// Ctrl-C pressed meanwhile ends the wait.
    pub fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError> {
        let started = Instant::now();
        let interrupts = crate::terminal::tty::interrupt_count();
        loop {
            if crate::terminal::tty::interrupt_count() != interrupts {
                return Err(ElicitError::Server(
                    "interrupted (Ctrl-C) while waiting for the server".into(),
                ));
            }
            let mut slice = Duration::from_millis(100);
            if let Some(t) = timeout {
                let left = t.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Err(ElicitError::Server(format!(
                        "the server did not answer within {}",
                        humantime::format_duration(t)
                    )));
                }
                slice = slice.min(left);
            }
            match self.incoming.recv_timeout(slice) {
                Ok(m) => return Ok(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ElicitError::Server("the server's output ended".into()))
                }
            }
        }
    }

    /// How the server ended, if it has.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Closes the server's stdin, gives it `grace` to exit, then ends its
    /// whole process group. Returns its exit status when known.
    pub fn shutdown(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.stdin.take();
        let deadline = Instant::now() + grace;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.kill_group(libc::SIGTERM);
                return Some(status);
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill_group(libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill_group(libc::SIGKILL);
        self.child.wait().ok()
    }

    fn kill_group(&self, signal: libc::c_int) {
        signal_group(self.child.id(), signal);
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.exit_status().is_none() {
            self.shutdown(Duration::from_millis(200));
        } else {
            self.kill_group(libc::SIGTERM);
        }
    }
}
