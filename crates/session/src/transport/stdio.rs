//! A stdio MCP server as a child process: newline-delimited JSON-RPC in
//! both directions, every message optionally recorded to a log file.
//!
//! The child runs in its own process group, so a Ctrl-C at the terminal
//! reaches elicit (which answers `cancel`) rather than killing the server
//! mid-call, and so the whole group (npx and the node it starts, say) can be
//! ended on the way out: no child is left behind ([`super::process_group`]).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::process_group::{self, ProcessGroup};
use super::queue::{self, QueueReceiver};
use super::server_stderr::StderrRelay;
use super::stdin_writer::{Refused, StdinWriter};
use super::{Incoming, MessageLog, Transport};
use elicit_core::bounded::LineRead;
use elicit_core::error::{ElicitError, ServerError};

/// The most one message from a server may take: the input limit
/// ([`elicit_core::elicitation::protocol::MAX_MESSAGE_BYTES`], 64 MiB). A longer line ends the
/// session with an error, having held at most this much of it.
const LINE_LIMIT: usize = elicit_core::elicitation::protocol::MAX_MESSAGE_BYTES as usize;

/// A server just started: the child, and the relay of its stderr (none
/// when it goes to `--server-log`).
pub struct Spawned {
    /// The server's process, its stdin and stdout piped.
    pub child: Child,
    /// The relay of its stderr, unless that goes to `--server-log`.
    pub stderr: Option<StderrRelay>,
    /// Everything the server starts; end it with [`ProcessGroup::terminate`].
    pub group: ProcessGroup,
}

/// Empties (or creates) a `--server-log` file before a session's first
/// server starts; every server run of the session then adds to it.
pub fn start_server_log(path: &Path) -> Result<(), ElicitError> {
    File::create(path)
        .map(drop)
        .map_err(|e| ElicitError::io(format!("cannot create server log {}", path.display()), e))
}

/// Starts a server command with piped stdin/stdout, in its own process
/// group. Its stderr goes to `server_log`, or through the sanitising relay
/// ([`super::server_stderr`]) to ours: never raw to a terminal.
pub fn spawn_server(command: &[String], server_log: Option<&Path>) -> Result<Spawned, ElicitError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| ElicitError::Usage("no server command given: put it after `--`".into()))?;
    let stderr = match server_log {
        // Appended to: a session that starts its server twice keeps both
        // runs' words ([`start_server_log`] empties it once, first).
        Some(p) => Stdio::from(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| {
                    ElicitError::io(format!("cannot create server log {}", p.display()), e)
                })?,
        ),
        None => Stdio::piped(),
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let how = process_group::isolate(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| ElicitError::io(format!("cannot start server {program:?}"), e))?;
    let group = match ProcessGroup::register(&child, how) {
        Ok(group) => group,
        Err(e) => {
            // Not started in a tree of its own: it must not run untracked.
            let _ = child.kill();
            let _ = child.wait();
            return Err(ElicitError::io(
                format!("cannot start server {program:?}"),
                e,
            ));
        }
    };
    let stderr = child.stderr.take().map(StderrRelay::start);
    Ok(Spawned {
        child,
        stderr,
        group,
    })
}

/// A running server.
pub(crate) struct ServerProcess {
    child: Child,
    stderr: Option<StderrRelay>,
    group: ProcessGroup,
    /// Set once shut down, so that dropping does not do it again.
    ended: Option<Option<ExitStatus>>,
    /// The server's stdin, written on a thread of its own: a server that
    /// stops reading cannot stall the session past `--timeout` or Ctrl-C.
    stdin: StdinWriter,
    incoming: QueueReceiver<Incoming>,
    log: Option<MessageLog>,
}

impl ServerProcess {
    /// Starts `command`. The server's stderr goes to elicit's stderr
    /// (sanitised, `server: ` before each line), or to `server_log`.
    pub fn spawn(
        command: &[String],
        server_log: Option<&Path>,
        log: Option<MessageLog>,
    ) -> Result<Self, ElicitError> {
        let Spawned {
            mut child,
            stderr,
            group,
        } = spawn_server(command, server_log)?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = StdinWriter::start(child.stdin.take().expect("stdin is piped"));
        // Bounded: while the session is busy (a person at a prompt), a
        // server that keeps writing fills its stdout pipe and waits.
        let (tx, rx) = queue::bounded();
        let reader_log = log.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut buf = Vec::new();
            loop {
                // Bounded: a server cannot grow elicit with one endless line.
                match elicit_core::bounded::read_line_limited(
                    &mut reader,
                    &mut buf,
                    LINE_LIMIT,
                    false,
                ) {
                    Ok(LineRead::Line) => {}
                    Ok(LineRead::TooLong { .. }) => {
                        if let Some(l) = &reader_log {
                            l.record(
                                "recv",
                                Err("(a line over the 64 MiB message limit; not read)"),
                            );
                        }
                        let _ = tx.send(
                            Incoming::Malformed {
                                line: String::new(),
                                error: format!(
                                    "a line longer than the {} MiB message limit; elicit stopped reading the server",
                                    LINE_LIMIT >> 20
                                ),
                            },
                            0,
                        );
                        let _ = tx.send(Incoming::Closed, 0);
                        return;
                    }
                    Ok(LineRead::Eof) | Err(_) => {
                        let _ = tx.send(Incoming::Closed, 0);
                        return;
                    }
                }
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                let (parsed, weight) = super::message_limits::parse_weighed(line);
                let msg = match parsed {
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
                            line: super::message_limits::excerpt(line),
                            error: e,
                        }
                    }
                };
                if tx.send(msg, weight).is_err() {
                    return;
                }
            }
        });
        Ok(ServerProcess {
            child,
            stderr,
            group,
            ended: None,
            stdin,
            incoming: rx,
            log,
        })
    }

    /// Closes the server's stdin, gives it `grace` to exit, then ends
    /// whatever is left of it (its group and tagged descendants: TERM, a
    /// short grace, KILL), also when the server itself already exited.
    /// Returns its exit status when known.
    pub fn shutdown(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.ended {
            return status;
        }
        self.stdin.close();
        // A server usually exits within a few milliseconds of its stdin
        // closing; `elicit test` pays this wait once per cassette.
        process_group::wait_for_exit(&mut self.child, grace);
        self.group.terminate(process_group::TERM_GRACE);
        let status = self.child.wait().ok();
        self.ended = Some(status);
        // The server's last words (why it failed, often) come before ours.
        if let Some(relay) = &self.stderr {
            relay.drain(Duration::from_millis(300));
        }
        status
    }
}

impl Transport for ServerProcess {
    /// Sends one message as a line.
    fn send(&mut self, message: &Value) -> Result<(), ElicitError> {
        if let Some(l) = &self.log {
            l.record("send", Ok(message));
        }
        let mut line = serde_json::to_vec(message).expect("values serialise");
        line.push(b'\n');
        self.stdin.send(line).map_err(|refused| {
            ElicitError::Server(match refused {
                Refused::Failed(e) => ServerError::CannotWrite(e),
                Refused::Closed => ServerError::StdinClosed,
                Refused::NotReading { pending } => ServerError::NotReadingStdin { pending },
            })
        })
    }

    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError> {
        super::receive_from(&self.incoming, timeout)
    }

    fn close(&mut self, grace: Duration) {
        self.shutdown(grace);
    }

    fn gone_detail(&mut self) -> Option<String> {
        // The reader sees the pipe close a moment before the exit is
        // reaped: give it that moment.
        process_group::wait_for_exit(&mut self.child, Duration::from_millis(50))
            .map(|status| format!("the server exited ({status})"))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.shutdown(Duration::from_millis(200));
    }
}
