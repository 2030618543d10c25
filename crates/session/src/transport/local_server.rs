//! A server `elicit test --start-server` starts for the HTTP cassettes:
//! started once before them, in a process tree of its own like a stdio
//! server (so it is ended whole, also on SIGTERM/SIGHUP to elicit and, on
//! Linux, when elicit is killed), waited for until its own processes
//! listen on its port (with a bound; a port another process listens on
//! fails the start before anything is sent there), and ended when dropped,
//! however the run ends.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::process_group::{self, ProcessGroup, TERM_GRACE};
use elicit_core::error::ElicitError;
use elicit_core::text::sanitize::sanitize_line;
use elicit_platform::Listener;

/// A server started on this machine, listening on 127.0.0.1.
pub struct LocalServer {
    child: Child,
    group: ProcessGroup,
    /// Its stdout and stderr, in a private folder (0700, the file 0600):
    /// read back when it fails to start.
    log: tempfile::NamedTempFile,
    _dir: elicit_platform::fs::PrivateTempDir,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
}

impl LocalServer {
    /// Starts `command` (its stdin empty, its output to a private log) and
    /// waits up to `limit` for its processes to listen on 127.0.0.1:`port`.
    /// Fails, with the server's last words, when it exits first, the limit
    /// passes, or another process listens there (and then it is ended).
    pub fn start(command: &[String], port: u16, limit: Duration) -> Result<Self, ElicitError> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| ElicitError::Usage("--start-server: no command given".into()))?;
        let io = |e| ElicitError::io("cannot create the started server's log", e);
        let dir = elicit_platform::fs::private_temp_dir("elicit-test-").map_err(io)?;
        let log = tempfile::Builder::new()
            .prefix("started-server-")
            .suffix(".log")
            .tempfile_in(dir.path())
            .map_err(io)?;
        let out = log.reopen().map_err(io)?;
        let err = log.reopen().map_err(io)?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err));
        let how = process_group::isolate(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| ElicitError::io(format!("cannot start server {program:?}"), e))?;
        let group = match ProcessGroup::register(&child, how) {
            Ok(group) => group,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ElicitError::io(
                    format!("cannot start server {program:?}"),
                    e,
                ));
            }
        };
        let mut server = LocalServer {
            child,
            group,
            log,
            _dir: dir,
            port,
        };
        server.wait_accepting(limit)?;
        Ok(server)
    }

    /// Until the port is listened on by the server's processes, the
    /// server exits, or `limit` passes. Nothing connects to the port
    /// meanwhile: whether a listener is the server's is read from the
    /// system ([`ProcessGroup::loopback_listener`]), and a listener of
    /// anyone else (another local user who took the port first) fails the
    /// start at once, before elicit sends it anything.
    fn wait_accepting(&mut self, limit: Duration) -> Result<(), ElicitError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let deadline = Instant::now() + limit;
        loop {
            let listener = self.group.loopback_listener(self.port).map_err(|e| {
                ElicitError::io(
                    format!("--start-server: cannot tell who listens on {addr}, so nothing is sent there"),
                    e,
                )
            })?;
            let other = match listener {
                Listener::Tree => return Ok(()),
                Listener::Other(who) => Some(who),
                Listener::Nobody => None,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let failure = if let Some(who) = other {
                format!(
                    "another process ({who}) listens on {addr}, not the server --start-server started: nothing was sent to it"
                )
            } else if left.is_zero() {
                format!(
                    "the server --start-server started did not accept connections on {addr} within {}",
                    humantime::format_duration(limit)
                )
            } else {
                // The pause between looks ends at once if the server exits.
                match process_group::wait_for_exit(&mut self.child, left.min(Duration::from_millis(50))) {
                    None => continue,
                    Some(status) => format!(
                        "the server --start-server started exited (status {}) before it accepted connections on {addr}",
                        elicit_platform::process::exit_code(status)
                    ),
                }
            };
            let tail = self.tail();
            return Err(ElicitError::Usage(if tail.is_empty() {
                failure
            } else {
                format!("{failure}; its last words:\n  {}", tail.join("\n  "))
            }));
        }
    }

    /// The last lines the server wrote, sanitised.
    pub fn tail(&self) -> Vec<String> {
        let text = super::server_stderr::log_tail(self.log.path(), 4096);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let from = lines.len().saturating_sub(8);
        lines[from..].iter().map(|l| sanitize_line(l)).collect()
    }

    /// Where its output is written (removed when this is dropped).
    pub fn log_path(&self) -> PathBuf {
        self.log.path().to_path_buf()
    }
}

impl Drop for LocalServer {
    /// Ends the server and all it started: SIGTERM, a grace, SIGKILL.
    fn drop(&mut self) {
        self.group.terminate(TERM_GRACE);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 that nothing listens on now (the kernel's choice),
/// for a server told which port to use.
pub fn free_port() -> std::io::Result<u16> {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()
        .map(|a| a.port())
}
