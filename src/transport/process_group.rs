//! Everything a stdio server started, and how to end all of it.
//!
//! The server runs in its own process group, and its environment carries a
//! tag ([`TAG_VAR`], unique per server) that every process it starts
//! inherits. Ending the server ends both: the group (`npx` and the `node` it
//! runs, a grandchild that ignores SIGTERM), and any process with the tag
//! that left the group (a grandchild that called `setsid`, or a double-fork
//! daemon). Each gets SIGTERM, a grace period, then SIGKILL; this happens on
//! every way out (normal end, error, Ctrl-C, SIGTERM/SIGHUP to elicit),
//! also when the server itself has already exited.
//!
//! Why a tag rather than `PR_SET_CHILD_SUBREAPER`: as a subreaper elicit
//! would adopt every orphan below it, including the browser the URL flow
//! opens, and could not tell the server's daemon from the person's browser;
//! it would also have to reap them itself, beside `std::process::Child`.
//! The tag names exactly the server's descendants, wherever they were
//! reparented. A process that clears its environment (`env -i`) and leaves
//! the group escapes both; that is the documented limit.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that marks a server's descendants.
pub const TAG_VAR: &str = "ELICIT_SERVER_TAG";

/// How long processes get between SIGTERM and SIGKILL once elicit has
/// decided to end them.
pub const TERM_GRACE: Duration = Duration::from_millis(500);

/// One server's processes: its group and its tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessGroup {
    pgid: libc::pid_t,
    tag: String,
}

/// Groups not yet ended, for [`terminate_all`] (a signal handler).
static LIVE: Mutex<Vec<ProcessGroup>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<ProcessGroup>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A fresh tag value for a server about to be started.
pub fn new_tag() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl ProcessGroup {
    /// Records the group led by `leader` (started with `process_group(0)`
    /// and `TAG_VAR=tag`), so that a signal to elicit can end it too.
    pub fn register(leader: u32, tag: String) -> Self {
        let group = ProcessGroup {
            pgid: leader as libc::pid_t,
            tag,
        };
        live().push(group.clone());
        group
    }

    /// Sends `signal` to the group and to every tagged process outside it.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill has no memory-safety preconditions; a negative pid
        // names the process group.
        unsafe {
            libc::kill(-self.pgid, signal);
        }
        for (pid, in_group) in self.members() {
            if !in_group {
                // SAFETY: as above, for one process found by its tag.
                unsafe {
                    libc::kill(pid, signal);
                }
            }
        }
    }

    /// Ends every process of the server: SIGTERM, up to `grace` for them
    /// to go, then SIGKILL. The leader, once exited, is left for its
    /// `Child` to reap.
    pub fn terminate(&self, grace: Duration) {
        if !self.members().is_empty() {
            self.signal(libc::SIGTERM);
            if !self.wait_gone(grace) {
                self.signal(libc::SIGKILL);
                self.wait_gone(TERM_GRACE);
            }
        }
        live().retain(|g| g != self);
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

    /// Live processes (zombies excluded) of the group or with the tag, and
    /// whether each is in the group.
    pub fn members(&self) -> Vec<(libc::pid_t, bool)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            // No /proc: the group is all that can be seen.
            // SAFETY: signal 0 only checks that the group exists.
            let exists = unsafe { libc::kill(-self.pgid, 0) } == 0;
            return if exists {
                vec![(self.pgid, true)]
            } else {
                Vec::new()
            };
        };
        let needle = format!("{TAG_VAR}={}\0", self.tag);
        let me = std::process::id() as libc::pid_t;
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // After the command name (which may hold anything, even ')'):
            // state ppid pgrp …
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            if state == "Z" || state == "X" {
                continue;
            }
            let pgrp = fields.nth(1).and_then(|p| p.parse::<libc::pid_t>().ok());
            if pgrp == Some(self.pgid) {
                out.push((pid, true));
            } else if std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| memchr::memmem::find(&env, needle.as_bytes()).is_some())
            {
                out.push((pid, false));
            }
        }
        out
    }
}

/// Ends every server still running (TERM, `grace`, KILL).
pub fn terminate_all(grace: Duration) {
    let groups: Vec<ProcessGroup> = live().clone();
    for g in &groups {
        g.signal(libc::SIGTERM);
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
    crate::signals::exit_on_termination(|| terminate_all(TERM_GRACE));
}

/// Called by the main thread before it reports an outcome (see
/// [`crate::signals::defer_to_termination`]).
pub fn defer_to_signal() {
    crate::signals::defer_to_termination();
}
