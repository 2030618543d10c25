//! A server's process tree on Unix: a process group, plus a tag in the
//! environment every descendant inherits (to find one that left the
//! group: a grandchild that called `setsid`, a double-fork daemon).
//!
//! Why a tag rather than `PR_SET_CHILD_SUBREAPER`: as a subreaper elicit
//! would adopt every orphan below it, including the browser the URL flow
//! opens, and could not tell the server's daemon from the person's browser;
//! it would also have to reap them itself, beside `std::process::Child`.
//! The tag names exactly the server's descendants, wherever they were
//! reparented. A process that clears its environment (`env -i`) and leaves
//! the group escapes both; that is the documented limit. Without `/proc`
//! (macOS) the tag cannot be read, and the tree is the process group.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use rustix::process::{kill_process, kill_process_group, test_kill_process_group, Pid};

use crate::Signal;

/// The environment variable that marks a server's descendants.
pub(crate) const TAG_VAR: &str = "ELICIT_SERVER_TAG";

/// How a command was set up to start a tree of its own ([`isolate`]).
pub struct Isolation {
    tag: String,
    started: u64,
}

/// Sets `cmd` up to start in a process group of its own, with a fresh tag
/// that its descendants inherit.
pub fn isolate(cmd: &mut Command) -> Isolation {
    let tag = uuid::Uuid::new_v4().to_string();
    cmd.env(TAG_VAR, &tag).process_group(0);
    #[cfg(target_os = "linux")]
    die_with_parent(cmd);
    Isolation {
        tag,
        // Read before the spawn: no process it starts can be older.
        started: ticks_since_boot(),
    }
}

/// Linux: the server's leader gets SIGKILL when elicit dies, however it
/// dies (`PR_SET_PDEATHSIG`). Every other way out ends the whole tree
/// gracefully ([`Tree::signal`]); this is for the one no handler sees, a
/// SIGKILL of elicit (a client's last resort), which would otherwise leave
/// the server running with nobody to end it. SIGKILL, since a server that
/// ignores SIGTERM is what this must not leave behind. The leader only:
/// the setting is not inherited by the processes it starts (a server that
/// is a launcher, `npx` or `uv run`, usually ends its child when it dies,
/// but one that does not leaves it; that is the documented limit).
///
/// The death signal is sent when the *thread* that spawned the child ends:
/// servers are spawned by the thread that runs their session (the main
/// thread, or an `elicit test` worker for the test's length), never by one
/// that ends before its server should.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: std has no safe way to run code between fork and exec, and
    // PR_SET_PDEATHSIG must be set in the child itself. The closure only
    // makes two system calls (prctl, getppid), both async-signal-safe; it
    // allocates nothing, takes no lock and touches no memory but its
    // captured `Pid` (a copy).
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(io::Error::from)?;
            // elicit died between the fork and the prctl: the signal was
            // never going to come, so do not start the server at all.
            if rustix::process::getppid() != Some(parent) {
                // (ESRCH: an error that allocates nothing.)
                return Err(io::Error::from(rustix::io::Errno::SRCH));
            }
            Ok(())
        });
    }
}

/// One server's processes: its group and its tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pgid: Pid,
    tag: String,
    /// The boot-time clock just before the leader was spawned, in the
    /// ticks of `/proc/PID/stat`'s start time (0 when unknown): no process
    /// older than that can be one of its descendants, so the tag is looked
    /// for only in younger ones.
    started: u64,
}

impl Tree {
    /// The tree led by `leader`, started by a command [`isolate`]d.
    pub fn adopt(leader: &Child, how: Isolation) -> io::Result<Tree> {
        Ok(Tree {
            pgid: Pid::from_child(leader),
            tag: how.tag,
            started: how.started,
        })
    }

    /// Sends `signal` to the group and to every tagged process outside it.
    pub fn signal(&self, signal: Signal) {
        let sig = raw(signal);
        let _ = kill_process_group(self.pgid, sig);
        for (pid, in_group) in self.members() {
            if !in_group {
                if let Some(pid) = Pid::from_raw(pid as i32) {
                    let _ = kill_process(pid, sig);
                }
            }
        }
    }

    /// Live processes (zombies excluded) of the group or with the tag, and
    /// whether each is in the group.
    pub fn members(&self) -> Vec<(u32, bool)> {
        let pgid = self.pgid.as_raw_pid();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            // No /proc (macOS): the group is all that can be seen.
            return if test_kill_process_group(self.pgid).is_ok() {
                vec![(pgid as u32, true)]
            } else {
                Vec::new()
            };
        };
        let needle = format!("{TAG_VAR}={}\0", self.tag);
        let me = std::process::id();
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
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
            if fields.pgrp == pgid {
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

    /// Who listens on 127.0.0.1:`port` (or `[::1]:port`): nobody yet,
    /// only processes of this tree, or some other process. Linux reads
    /// the kernel's socket tables and the tree's descriptors; macOS asks
    /// libproc for every inspectable process's sockets, the tree being
    /// the process group there (no tag can be read of a process that left
    /// it, which is then another process). Elsewhere there is no check:
    /// an error, so that a caller fails closed rather than trusting
    /// whoever listens.
    pub fn loopback_listener(&self, port: u16) -> io::Result<crate::Listener> {
        #[cfg(target_os = "linux")]
        {
            let members: Vec<u32> = self.members().into_iter().map(|(pid, _)| pid).collect();
            super::listeners::on_loopback(port, &members)
        }
        #[cfg(target_os = "macos")]
        {
            super::darwin_listeners::on_loopback(port, self.pgid.as_raw_pid() as u32)
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            let _ = port;
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "who listens on a port cannot be checked on this system yet",
            ))
        }
    }
}

fn raw(signal: Signal) -> rustix::process::Signal {
    use rustix::process::Signal as S;
    match signal {
        Signal::Interrupt => S::INT,
        Signal::Terminate => S::TERM,
        Signal::HangUp => S::HUP,
        Signal::Quit => S::QUIT,
        Signal::Kill => S::KILL,
    }
}

/// Now, in the clock `/proc/PID/stat` gives a process's start in (ticks of
/// the boot-time clock): read before a spawn, no process the spawn starts
/// can have an earlier start. Taken from the clock rather than from the
/// new process's `stat`, which would be read while it is being exec'd.
/// 0 (no process excluded) where the clock cannot be read.
fn ticks_since_boot() -> u64 {
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

/// What [`Tree::members`] needs of a `/proc/PID/stat` line.
struct StatFields {
    state: char,
    pgrp: i32,
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

/// Ends elicit when the process that started it is gone (a client killed
/// by its own time limit, whose children are reparented rather than
/// ended): elicit then sends itself SIGTERM, so whatever it does on
/// termination (the terminal put back, servers ended) is done. Watched on
/// a thread of its own: on Linux a pidfd of the parent, which becomes
/// readable when it exits; elsewhere, or where pidfds are refused, the
/// parent's id looked at a few times a second.
pub fn end_with_parent() {
    // No parent in this pid namespace (elicit is its init): nothing to lose.
    let Some(parent) = rustix::process::getppid() else {
        return;
    };
    let watching = std::thread::Builder::new()
        .name("end-with-parent".into())
        .spawn(move || {
            wait_for_parent(parent);
            let _ = kill_process(rustix::process::getpid(), rustix::process::Signal::TERM);
        });
    // Without a thread the watch is lost, not the run.
    drop(watching);
}

/// How often [`end_with_parent`] looks at the parent's id where it has no
/// pidfd.
const PARENT_LOOK: Duration = Duration::from_millis(200);

/// Returns once `parent` is no longer elicit's parent.
fn wait_for_parent(parent: Pid) {
    #[cfg(target_os = "linux")]
    if let Ok(pidfd) = rustix::process::pidfd_open(parent, rustix::process::PidfdFlags::empty()) {
        // Still the parent after the open: the pidfd is the parent's, not
        // a process that took its id after it exited.
        if rustix::process::getppid() != Some(parent) {
            return;
        }
        let mut fds = [rustix::event::PollFd::new(
            &pidfd,
            rustix::event::PollFlags::IN,
        )];
        loop {
            match rustix::event::poll(&mut fds, None) {
                Ok(_) => return,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            }
        }
    }
    while rustix::process::getppid() == Some(parent) {
        std::thread::sleep(PARENT_LOOK);
    }
}

/// Sets `cmd` up to run apart from elicit's terminal session (a browser,
/// a parked call's holder): Ctrl-C or closing the terminal does not reach
/// it, and it has no controlling terminal.
pub fn detach(cmd: &mut Command) {
    // SAFETY: std has no safe way to run code between fork and exec
    // (`process_group` puts the child in a new group but does not start a
    // session); setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| rustix::process::setsid().map(drop).map_err(io::Error::from));
    }
}

/// Starts `cmd` in the background, to outlive elicit (a parked call's
/// holder): detached ([`detach`]) in a session of its own, with no
/// controlling terminal; elicit's descriptors are close-on-exec, so only
/// the standard streams `cmd` is given reach it.
pub fn spawn_background(cmd: &mut Command) -> io::Result<Child> {
    detach(cmd);
    cmd.spawn()
}

/// A process's exit status as one number: its code, or 128 + the signal
/// that ended it (as a shell reports it), 1 when neither is known.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    }
}

/// elicit's own processor time so far (user and system, all its threads,
/// not the processes it started).
pub fn cpu_time() -> Duration {
    // SAFETY: rustix has no getrusage; getrusage only fills the struct it
    // is given, which is zeroed (a valid value of this plain C struct).
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
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
        assert_eq!(exit_code(status), 137);
        // The status stays with the Child for its own wait.
        assert_eq!(slow.wait().unwrap().code(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn members_finds_the_group_and_a_tagged_process_outside_it() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "setsid sleep 30 & exec sleep 30"]);
        let how = isolate(&mut cmd);
        let mut leader = cmd.spawn().unwrap();
        let tree = Tree::adopt(&leader, how).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Until the background child has called setsid (before, it is
        // still in the group, and counting members would race it).
        while !tree.members().iter().any(|&(_, in_group)| !in_group) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let members = tree.members();
        assert!(members.contains(&(leader.id(), true)), "{members:?}");
        assert!(
            members.iter().any(|&(_, in_group)| !in_group),
            "{members:?}"
        );
        tree.signal(Signal::Kill);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !tree.members().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(tree.members().is_empty());
        leader.wait().unwrap();
    }

    #[test]
    fn cpu_time_grows() {
        let before = cpu_time();
        let mut x = 0u64;
        let until = Instant::now() + Duration::from_millis(30);
        while Instant::now() < until {
            x = x.wrapping_add(1);
        }
        assert!(x > 0 && cpu_time() >= before);
    }
}
