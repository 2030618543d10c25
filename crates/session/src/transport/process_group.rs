//! Everything a stdio server started, and how to end all of it.
//!
//! The server is started in a process tree of its own
//! ([`elicit_platform::process::Tree`]: on Unix its process group plus a
//! tag in the environment every process it starts inherits, so a
//! grandchild that called `setsid` or a double-fork daemon is found too;
//! on Windows a job object, which every descendant joins and which ends
//! with elicit). Ending the server ends all of it: SIGTERM (Ctrl-Break on
//! Windows), a grace period, then SIGKILL (`TerminateJobObject`); this
//! happens on every way out (normal end, error, Ctrl-C, SIGTERM/SIGHUP to
//! elicit, a console closed), also when the server itself has already
//! exited.

use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use elicit_platform::process::{Isolation, Tree};
use elicit_platform::Signal;

/// How long processes get between SIGTERM and SIGKILL once elicit has
/// decided to end them.
pub const TERM_GRACE: Duration = Duration::from_millis(500);

/// One server's processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessGroup {
    tree: Tree,
}

/// Groups not yet ended, for [`terminate_all`] (a signal handler).
static LIVE: Mutex<Vec<ProcessGroup>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<ProcessGroup>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sets `cmd` up to start a server in a tree of its own; pass the result to
/// [`ProcessGroup::register`] once it is spawned.
pub fn isolate(cmd: &mut Command) -> Isolation {
    elicit_platform::process::isolate(cmd)
}

impl ProcessGroup {
    /// Records the tree led by `leader` (spawned from a command
    /// [`isolate`]d), so that a signal to elicit can end it too.
    pub fn register(leader: &Child, how: Isolation) -> std::io::Result<Self> {
        let group = ProcessGroup {
            tree: Tree::adopt(leader, how)?,
        };
        live().push(group.clone());
        Ok(group)
    }

    /// Sends `signal` to every process of the tree.
    pub fn signal(&self, signal: Signal) {
        self.tree.signal(signal);
    }

    /// Who listens on 127.0.0.1:`port`: nobody yet, only this server's
    /// processes, or another process.
    pub fn loopback_listener(&self, port: u16) -> std::io::Result<elicit_platform::Listener> {
        self.tree.loopback_listener(port)
    }

    /// Ends every process of the server: SIGTERM, up to `grace` for them
    /// to go, then SIGKILL. The leader, once exited, is left for its
    /// `Child` to reap.
    pub fn terminate(&self, grace: Duration) {
        if !self.members().is_empty() {
            self.signal(Signal::Terminate);
            if !self.wait_gone(grace) {
                self.signal(Signal::Kill);
                self.wait_gone(TERM_GRACE);
            }
        }
        live().retain(|g| g != self);
    }

    /// Sends `signal` to every process of the tree, gives them up to
    /// `grace` to go, then sends SIGKILL to what is left (a server that
    /// ignores `signal` is ended all the same).
    pub fn end_with(&self, signal: Signal, grace: Duration) {
        self.signal(signal);
        if !self.wait_gone(grace) {
            self.signal(Signal::Kill);
            self.wait_gone(TERM_GRACE);
        }
    }

    fn wait_gone(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.members().is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Live processes of the tree (process ids), and whether each is in
    /// the server's group (on Unix; on Windows every one is in the job).
    pub fn members(&self) -> Vec<(u32, bool)> {
        self.tree.members()
    }
}

/// Waits up to `limit` for `child` to exit, and returns how it ended (the
/// `Child` keeps the status for a later `wait`).
pub(crate) fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    elicit_platform::process::wait_for_exit(child, limit)
}

/// Ends every server still running (TERM, `grace`, KILL).
pub fn terminate_all(grace: Duration) {
    let groups: Vec<ProcessGroup> = live().clone();
    for g in &groups {
        g.signal(Signal::Terminate);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && groups.iter().any(|g| !g.members().is_empty()) {
        std::thread::sleep(Duration::from_millis(25));
    }
    for g in &groups {
        g.terminate(Duration::ZERO);
    }
}

/// Makes SIGTERM and SIGHUP to elicit end it cleanly: every server's
/// processes are ended (TERM, grace, KILL), the terminal is put back (mode,
/// cursor), and elicit exits with 128 + the signal's number. Without this a
/// terminal hangup would kill elicit and leave the server (in its own
/// group, out of the terminal's reach) running.
pub fn exit_on_signals() {
    elicit_platform::handlers::exit_on_termination(|| terminate_all(TERM_GRACE));
}

/// Called by the main thread before it reports an outcome (see
/// [`elicit_platform::handlers::defer_to_termination`]).
pub fn defer_to_signal() {
    elicit_platform::handlers::defer_to_termination();
}
