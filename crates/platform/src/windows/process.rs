//! A server's process tree on Windows: a job object. Every process the
//! server starts joins its job (unless it breaks away, which the job does
//! not allow); the job is created with "kill on close", so when elicit
//! ends, however it ends, Windows ends every process in it: nothing
//! outlives elicit. The server is also started in a console process group
//! of its own, so a Ctrl-C on elicit's console does not reach it, and a
//! Ctrl-Break can be sent to it alone as the polite way to ask it to end.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{
    SetHandleInformation, ERROR_ACCESS_DENIED, ERROR_INVALID_PARAMETER, FILETIME,
    HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::System::Console::{
    GenerateConsoleCtrlEvent, GetStdHandle, CTRL_BREAK_EVENT, STD_ERROR_HANDLE, STD_INPUT_HANDLE,
    STD_OUTPUT_HANDLE,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetProcessTimes, OpenProcess, WaitForSingleObject,
    CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, DETACHED_PROCESS,
    INFINITE, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
};

use crate::Signal;

/// How a command was set up to start a tree of its own ([`isolate`]).
pub struct Isolation(());

/// Sets `cmd` up to start in a console process group of its own (the job
/// is made when it has started: [`Tree::adopt`]).
pub fn isolate(cmd: &mut Command) -> Isolation {
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
    Isolation(())
}

/// The job object that holds one server's processes.
#[derive(Debug)]
struct Job(OwnedHandle);

/// One server's processes: its job and its leader.
#[derive(Debug, Clone)]
pub struct Tree {
    job: Arc<Job>,
    leader: u32,
}

impl PartialEq for Tree {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.job, &other.job)
    }
}

impl Eq for Tree {}

impl Tree {
    /// The tree of `leader`: a new job, ended when its last handle closes
    /// (when elicit exits at the latest), with the leader in it. What the
    /// leader starts from then on joins the job too; what it started in
    /// the moment between its start and this call does not (the limit of
    /// a job assigned after the spawn, which std's `Command` requires).
    pub fn adopt(leader: &Child, _how: Isolation) -> io::Result<Tree> {
        // SAFETY: FFI without a safe wrapper; null attributes and name ask
        // for an unnamed job with default security.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(raw) });
        // SAFETY: an all-zero JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a
        // valid value (plain integers and structs of integers).
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: FFI; the job handle is open, and the pointer and size
        // describe `limits`, which lives for the call.
        let ok = unsafe {
            SetInformationJobObject(
                job.0.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: FFI; both handles are open (the child's is owned by
        // `leader`, which outlives the call).
        if unsafe { AssignProcessToJobObject(job.0.as_raw_handle(), leader.as_raw_handle()) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tree {
            job: Arc::new(job),
            leader: leader.id(),
        })
    }

    /// Asks the tree to end (Ctrl-Break to the server's console process
    /// group: the closest Windows has to SIGINT, SIGTERM and SIGHUP), or
    /// ends it at once ([`Signal::Kill`]: every process in the job).
    pub fn signal(&self, signal: Signal) {
        match signal {
            Signal::Kill => {
                // SAFETY: FFI; the job handle is open.
                unsafe {
                    TerminateJobObject(self.job.0.as_raw_handle(), 1);
                }
            }
            _ => {
                // SAFETY: FFI; a process group id and an event, no memory.
                unsafe {
                    GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, self.leader);
                }
            }
        }
    }

    /// The processes still running in the job (each "in the group").
    pub fn members(&self) -> Vec<(u32, bool)> {
        /// JOBOBJECT_BASIC_PROCESS_ID_LIST with room for 1024 ids.
        #[repr(C)]
        struct IdList {
            assigned: u32,
            listed: u32,
            ids: [usize; 1024],
        }
        let mut list = IdList {
            assigned: 0,
            listed: 0,
            ids: [0; 1024],
        };
        // SAFETY: FFI; the job handle is open, and the pointer and size
        // describe `list`, laid out as the API's variable-length struct.
        let ok = unsafe {
            QueryInformationJobObject(
                self.job.0.as_raw_handle(),
                JobObjectBasicProcessIdList,
                (&mut list as *mut IdList).cast(),
                std::mem::size_of::<IdList>() as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            // More than 1024 processes (or the query failed): the tree
            // is not empty.
            return vec![(self.leader, true)];
        }
        let n = (list.listed as usize).min(list.ids.len());
        list.ids[..n].iter().map(|&id| (id as u32, true)).collect()
    }

    /// Who listens on 127.0.0.1:`port` (or [::1]:`port`): nobody yet,
    /// only processes of this job, or some other process (from the TCP
    /// tables' owning process ids).
    pub fn loopback_listener(&self, port: u16) -> io::Result<crate::Listener> {
        let members: Vec<u32> = self.members().into_iter().map(|(pid, _)| pid).collect();
        super::listeners::on_loopback(port, &members)
    }
}

/// Waits up to `limit` for `child` to exit, and returns how it ended (the
/// `Child` keeps the status for a later `wait`).
pub fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    let mut nap = Duration::from_millis(1);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        std::thread::sleep(nap.min(left));
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

/// Sets `cmd` up to run apart from elicit's console (a browser): Ctrl-C or
/// closing the console does not reach it.
pub fn detach(cmd: &mut Command) {
    cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
}

/// Starts `cmd` in the background, to outlive elicit (a parked call's
/// holder). It gets a console of its own that no window shows, so the
/// servers it starts share that console: none of them opens a window, and
/// a Ctrl-Break sent to one's process group reaches it. It leaves a job
/// elicit may be in (one that ends its processes when it closes) where the
/// job lets it, and it inherits none of elicit's standard handles: a
/// reader waiting for the end of elicit's output is not kept waiting for
/// the holder's end.
pub fn spawn_background(cmd: &mut Command) -> io::Result<Child> {
    keep_standard_handles();
    cmd.creation_flags(CREATE_NO_WINDOW | CREATE_BREAKAWAY_FROM_JOB);
    match cmd.spawn() {
        // In a job that lets nothing break away: started in it.
        Err(e) if e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) => {
            cmd.creation_flags(CREATE_NO_WINDOW);
            cmd.spawn()
        }
        started => started,
    }
}

/// Marks elicit's standard handles as not inherited by the processes it
/// starts (std hands a child the handles it is given as copies of their
/// own, so those are unaffected).
fn keep_standard_handles() {
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: FFI; GetStdHandle returns a handle elicit holds (or null
        // or INVALID_HANDLE_VALUE, skipped), which the second call only
        // marks; neither needs closing.
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() && handle != INVALID_HANDLE_VALUE {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
}

/// A process's exit status as one number (Windows always has a code).
pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// Ends elicit when the process that started it is gone (a client killed
/// by its own time limit): then every action registered for
/// [`Signal::Terminate`] runs, as on log-off, and the process exits with
/// 128 + 15 unless one of them ends it. Watched on a thread of its own,
/// waiting on the parent's process handle.
pub fn end_with_parent() {
    // Gone already (its id unknown, or taken by a newer process), or not
    // ours to watch: the run goes on unwatched, as on Unix when the parent
    // went before the watch began.
    let Ok(Some(parent)) = parent_process() else {
        return;
    };
    let watching = std::thread::Builder::new()
        .name("end-with-parent".into())
        .spawn(move || {
            // SAFETY: FFI; `parent` is a valid handle with SYNCHRONIZE,
            // owned by this closure for the wait.
            unsafe { WaitForSingleObject(parent.as_raw_handle(), INFINITE) };
            super::signals::terminate_self();
        });
    drop(watching);
}

/// A handle on the process that started elicit; `None` when it is gone.
fn parent_process() -> io::Result<Option<OwnedHandle>> {
    let Some(id) = parent_of(std::process::id()) else {
        return Ok(None);
    };
    // SAFETY: FFI; a null handle is checked below.
    let raw = unsafe {
        OpenProcess(
            PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
            0,
            id,
        )
    };
    if raw.is_null() {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32) {
            return Ok(None);
        }
        return Err(e);
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
    let parent = unsafe { OwnedHandle::from_raw_handle(raw) };
    // A process that took the parent's id after it exited started later
    // than elicit.
    let started = |h| created(h).unwrap_or(0);
    // SAFETY: GetCurrentProcess is a pseudo-handle that needs no closing.
    let me = started(unsafe { GetCurrentProcess() });
    if started(parent.as_raw_handle()) > me {
        return Ok(None);
    }
    Ok(Some(parent))
}

/// The id of the process that started process `me`, from a snapshot of
/// the processes (Windows keeps no parent link other than this record).
fn parent_of(me: u32) -> Option<u32> {
    // SAFETY: FFI; the result is checked before use.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return None;
    }
    // SAFETY: `snap` is a fresh, valid handle that nothing else owns.
    let snap = unsafe { OwnedHandle::from_raw_handle(snap) };
    // SAFETY: PROCESSENTRY32W is plain data, valid all zeros.
    let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    // SAFETY: FFI; `entry` lives for the calls, its size set as required.
    let mut more = unsafe { Process32FirstW(snap.as_raw_handle(), &mut entry) };
    while more != 0 {
        if entry.th32ProcessID == me {
            return Some(entry.th32ParentProcessID);
        }
        // SAFETY: as for Process32FirstW.
        more = unsafe { Process32NextW(snap.as_raw_handle(), &mut entry) };
    }
    None
}

/// When the process behind `handle` started, in 100-nanosecond units.
fn created(handle: windows_sys::Win32::Foundation::HANDLE) -> Option<u64> {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: FFI; `handle` is valid for the call, the four pointers are to
    // FILETIMEs that live for it.
    let ok = unsafe { GetProcessTimes(handle, &mut created, &mut exited, &mut kernel, &mut user) };
    (ok != 0).then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}

/// elicit's own processor time so far (user and kernel, all its threads,
/// not the processes it started).
pub fn cpu_time() -> Duration {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: FFI; GetCurrentProcess is a pseudo-handle that needs no
    // closing, and the four pointers are to FILETIMEs that live for the call.
    let ok = unsafe {
        GetProcessTimes(
            GetCurrentProcess(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return Duration::ZERO;
    }
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    // 100-nanosecond units.
    Duration::from_nanos((ticks(kernel) + ticks(user)).saturating_mul(100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_holds_the_tree_and_kill_ends_all_of_it() {
        // cmd starts ping: two processes, both in the job.
        let mut cmd = Command::new("cmd.exe");
        cmd.args(["/c", "ping -n 60 127.0.0.1 > NUL"]);
        let how = isolate(&mut cmd);
        let mut leader = cmd.spawn().unwrap();
        let tree = Tree::adopt(&leader, how).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while tree.members().len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let members = tree.members();
        assert!(members.contains(&(leader.id(), true)), "{members:?}");
        assert!(members.len() >= 2, "{members:?}");
        tree.signal(Signal::Kill);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !tree.members().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(tree.members().is_empty(), "{:?}", tree.members());
        assert_eq!(exit_code(leader.wait().unwrap()), 1);
    }

    #[test]
    fn a_childs_parent_is_found_and_started_before_it() {
        // Under Wine the test's own parent is a Linux process: a child of
        // the test is looked at instead.
        let mut child = Command::new("cmd.exe")
            .args(["/c", "ping", "-n", "3", "127.0.0.1"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        assert_eq!(parent_of(child.id()), Some(std::process::id()));
        let own = std::os::windows::io::AsRawHandle::as_raw_handle(&child);
        // SAFETY: GetCurrentProcess is a pseudo-handle that needs no closing.
        let me = created(unsafe { GetCurrentProcess() }).unwrap();
        assert!(created(own).unwrap() >= me);
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn cpu_time_is_read() {
        let mut x = 0u64;
        let until = Instant::now() + Duration::from_millis(50);
        while Instant::now() < until {
            x = x.wrapping_add(1);
        }
        assert!(x > 0 && cpu_time() > Duration::ZERO);
    }
}
