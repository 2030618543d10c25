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

use std::process::{Child, ExitStatus};
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
    /// The boot-time clock just before the leader was spawned, in the
    /// ticks of `/proc/PID/stat`'s start time (0 when unknown): no process
    /// older than that can be one of its descendants, so the tag is looked
    /// for only in younger ones.
    started: u64,
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
    /// and `TAG_VAR=tag`, after `started`: [`ticks_since_boot`] read just
    /// before the spawn), so that a signal to elicit can end it too.
    pub fn register(leader: u32, tag: String, started: u64) -> Self {
        let group = ProcessGroup {
            pgid: leader as libc::pid_t,
            tag,
            started,
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
            let Some(fields) = StatFields::parse(&stat) else {
                continue;
            };
            if fields.state == 'Z' || fields.state == 'X' {
                continue;
            }
            if fields.pgrp == self.pgid {
                out.push((pid, true));
            } else if fields.started >= self.started
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| memchr::memmem::find(&env, needle.as_bytes()).is_some())
            {
                out.push((pid, false));
            }
        }
        out
    }
}

/// Now, in the clock `/proc/PID/stat` gives a process's start in (ticks of
/// the boot-time clock): read before a spawn, no process the spawn starts
/// can have an earlier start. Taken from the clock rather than from the
/// new process's `stat`, which would be read while it is being exec'd.
/// 0 (no process excluded) where the clock cannot be read.
pub fn ticks_since_boot() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
        let per_second = rustix::param::clock_ticks_per_second();
        let ns = now.tv_sec as u128 * 1_000_000_000 + now.tv_nsec as u128;
        (ns * per_second as u128 / 1_000_000_000) as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// What [`ProcessGroup::members`] needs of a `/proc/PID/stat` line.
struct StatFields {
    state: char,
    pgrp: libc::pid_t,
    started: u64,
}

impl StatFields {
    fn parse(stat: &str) -> Option<Self> {
        // After the command name (which may hold anything, even ')'):
        // state ppid pgrp … with the start time the 20th field from there.
        let (_, rest) = stat.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
        Some(StatFields {
            state: fields.first()?.chars().next()?,
            pgrp: fields.get(2)?.parse().ok()?,
            started: fields.get(19)?.parse().ok()?,
        })
    }
}

/// Waits up to `limit` for `child` to exit, and returns how it ended (the
/// `Child` keeps the status for a later `wait`). On Linux the wait is a
/// pidfd's readiness, so it ends the moment the child does; elsewhere, or
/// where pidfds are refused, it looks again every few milliseconds.
pub fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    #[cfg(target_os = "linux")]
    let mut pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_child(child),
        rustix::process::PidfdFlags::empty(),
    )
    .ok();
    let mut nap = Duration::from_millis(1);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        #[cfg(target_os = "linux")]
        if let Some(fd) = &pidfd {
            if exit_or_timeout(fd, left) {
                continue;
            }
            // Refused: naps from here on.
            pidfd = None;
        }
        std::thread::sleep(nap.min(left));
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

/// Waits up to `left` for the process behind `pidfd` to exit (it becomes
/// readable then); false when the wait itself failed.
#[cfg(target_os = "linux")]
fn exit_or_timeout(pidfd: &std::os::fd::OwnedFd, left: Duration) -> bool {
    let Ok(timeout) = rustix::event::Timespec::try_from(left) else {
        return false;
    };
    let mut fds = [rustix::event::PollFd::new(
        pidfd,
        rustix::event::PollFlags::IN,
    )];
    matches!(
        rustix::event::poll(&mut fds, Some(&timeout)),
        Ok(_) | Err(rustix::io::Errno::INTR)
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn the_clock_before_a_spawn_is_not_after_the_process_start() {
        let before = ticks_since_boot();
        let child = Command::new("sleep").arg("5").spawn().unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        let started = StatFields::parse(&stat).unwrap().started;
        let mut child = child;
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(before > 0);
        assert!(before <= started, "{before} > {started}");
        // And not far before it: the same clock.
        assert!(started - before < 100, "{before} vs {started}");
    }

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        // A command name may hold spaces and ')' of its own.
        let stat =
            "4242 (a) b) c) S 1 4240 4240 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let f = StatFields::parse(stat).expect("parsed");
        assert_eq!(f.state, 'S');
        assert_eq!(f.pgrp, 4240);
        assert_eq!(f.started, 987654);
        assert!(StatFields::parse("4242 (cut short) S 1").is_none());
    }

    #[test]
    fn wait_for_exit_returns_when_the_child_ends_and_not_before() {
        let mut quick = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let status = wait_for_exit(&mut quick, Duration::from_secs(10)).expect("exited");
        assert_eq!(status.code(), Some(3));

        let mut slow = Command::new("sleep").arg("30").spawn().unwrap();
        let began = Instant::now();
        assert!(wait_for_exit(&mut slow, Duration::from_millis(100)).is_none());
        assert!(began.elapsed() >= Duration::from_millis(100));
        slow.kill().unwrap();
        let status = wait_for_exit(&mut slow, Duration::from_secs(10)).expect("killed");
        assert_eq!(status.code(), None);
        // The status stays with the Child for its own wait.
        assert_eq!(slow.wait().unwrap().code(), None);
    }

    #[test]
    fn members_finds_the_group_and_a_tagged_process_outside_it() {
        let tag = new_tag();
        let started = ticks_since_boot();
        let mut leader = Command::new("sh")
            .args(["-c", "setsid sleep 30 & exec sleep 30"])
            .env(TAG_VAR, &tag)
            .process_group(0)
            .spawn()
            .unwrap();
        let group = ProcessGroup::register(leader.id(), tag, started);
        let deadline = Instant::now() + Duration::from_secs(10);
        while group.members().len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let members = group.members();
        assert!(
            members.contains(&(leader.id() as libc::pid_t, true)),
            "{members:?}"
        );
        assert!(
            members.iter().any(|&(_, in_group)| !in_group),
            "{members:?}"
        );
        group.terminate(TERM_GRACE);
        assert!(group.members().is_empty());
        leader.wait().unwrap();
    }
}
