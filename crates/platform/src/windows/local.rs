//! A private local endpoint on Windows: a named pipe whose access list
//! lets the user elicit runs as alone in (one entry, protected: see
//! [`super::acl`]), local clients only. Its first instance is made with
//! `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a pipe someone else made under the
//! same name first is refused rather than joined; and each side checks
//! that the process at the other end runs as this user too (the client the
//! pipe's server, the server each client), so a pipe held by someone else
//! is never spoken to.
//!
//! A pipe has no place in the file system: its name is derived from a path
//! in the user's private folder ([`runtime_dir`]), and a marker file at
//! that path stands for it while it listens, so that what lists endpoints
//! by their files (parked calls) finds it as it finds a socket on Unix.
//!
//! Reads and writes are overlapped, so that a time limit really bounds
//! them: an operation not done by then is cancelled (`CancelIoEx`).
//!
//! windows-sys has no safe wrappers; each `unsafe` block below is one
//! Win32 call, with why its pointers and handles are valid.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use windows_sys::core::BOOL;
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_BROKEN_PIPE, ERROR_FILE_NOT_FOUND, ERROR_IO_PENDING, ERROR_NO_DATA,
    ERROR_OPERATION_ABORTED, ERROR_PIPE_BUSY, ERROR_PIPE_CONNECTED, ERROR_PIPE_NOT_CONNECTED,
    GENERIC_READ, GENERIC_WRITE, HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, ReadFile, WriteFile, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED,
    OPEN_EXISTING, PIPE_ACCESS_DUPLEX, SECURITY_IDENTIFICATION, SECURITY_SQOS_PRESENT,
};
use windows_sys::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, GetNamedPipeClientProcessId, GetNamedPipeServerProcessId,
    WaitNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE,
    PIPE_UNLIMITED_INSTANCES, PIPE_WAIT,
};
use windows_sys::Win32::System::Threading::{
    CreateEventW, OpenProcess, WaitForSingleObject, INFINITE, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::System::IO::{CancelIoEx, GetOverlappedResult, OVERLAPPED};

use super::acl::{current_user_sid, process_user_sid, same_sid, Object, OwnerOnly};

/// How long [`Channel::connect`] waits for a free instance of a pipe
/// whose instances are all taken.
const BUSY_WAIT: Duration = Duration::from_secs(5);
/// The pipe's buffer each way (the lines between a holder and a command
/// are short; a longer write waits for the reader).
const BUFFER: u32 = 64 * 1024;

/// The user's private folder for elicit's live endpoints:
/// `%LOCALAPPDATA%\elicit\run`; created with the owner-only access list,
/// and refused unless it is a folder (not a link) of this user's that
/// nobody else may open.
pub fn runtime_dir() -> io::Result<PathBuf> {
    let base = super::fs::user_data_dir().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "%LOCALAPPDATA% is not set (parked calls live in %LOCALAPPDATA%\\elicit\\run)",
        )
    })?;
    let dir = base.join("elicit").join("run");
    super::fs::create_private_dir(&dir)?;
    let meta = fs::symlink_metadata(&dir)?;
    let why = if !meta.is_dir() {
        Some("it is not a folder".to_string())
    } else {
        let access = super::access::of_path(&dir)?;
        if !access.mine {
            Some(format!("it belongs to {}", access.who))
        } else if access.open_to_others {
            Some("its access list lets other users in".to_string())
        } else {
            None
        }
    };
    match why {
        None => Ok(dir),
        Some(why) => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: {why}; it must be a folder of yours that only you may open",
                dir.display()
            ),
        )),
    }
}

/// The pipe that stands for `path`: `\\.\pipe\elicit-` and 16 hex digits
/// of a hash of the path (FNV-1a over its UTF-16 units: the same in every
/// process and build), NUL-terminated.
fn pipe_name(path: &Path) -> Vec<u16> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for unit in path.as_os_str().encode_wide() {
        for byte in unit.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!(r"\\.\pipe\elicit-{hash:016x}")
        .encode_utf16()
        .chain(Some(0))
        .collect()
}

/// A new instance of the pipe `name`, with the owner-only access list,
/// overlapped, bytes both ways, local clients only; `first`: the pipe must
/// not exist yet (else `ERROR_ACCESS_DENIED`).
fn create_instance(name: &[u16], first: bool) -> io::Result<OwnedHandle> {
    let owner_only = OwnerOnly::new(Object::File)?;
    let first = if first {
        FILE_FLAG_FIRST_PIPE_INSTANCE
    } else {
        0
    };
    // SAFETY: `name` is NUL-terminated; the attributes (and the descriptor
    // and list they point at) live for the call.
    let raw = owner_only.with_attributes(|sa| unsafe {
        CreateNamedPipeW(
            name.as_ptr(),
            PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | first,
            PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
            PIPE_UNLIMITED_INSTANCES,
            BUFFER,
            BUFFER,
            0,
            sa,
        )
    })?;
    if raw == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(raw) })
}

/// Whether process `pid` runs as the user elicit runs as (one that cannot
/// be looked at, such as another user's, does not).
fn runs_as_me(pid: u32) -> io::Result<bool> {
    // SAFETY: FFI; a null handle is checked below.
    let raw = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
    let process = unsafe { OwnedHandle::from_raw_handle(raw) };
    let theirs = process_user_sid(process.as_raw_handle())?;
    Ok(same_sid(&theirs, &current_user_sid()?))
}

/// Whether the process at the other end of `pipe` runs as this user:
/// `query` is `GetNamedPipeClientProcessId` or
/// `GetNamedPipeServerProcessId`.
fn peer_is_me(
    pipe: &OwnedHandle,
    query: unsafe extern "system" fn(HANDLE, *mut u32) -> BOOL,
) -> io::Result<bool> {
    let mut pid = 0u32;
    // SAFETY: the pipe's handle is open; `pid` is a valid place.
    if unsafe { query(pipe.as_raw_handle(), &mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    runs_as_me(pid)
}

/// A limit in milliseconds for a Win32 wait: at least 1, below INFINITE.
fn millis(limit: Duration) -> u32 {
    limit.as_millis().clamp(1, u128::from(INFINITE - 1)) as u32
}

/// Runs one overlapped operation on `pipe`, which `start` begins with the
/// OVERLAPPED it is given, and waits for it at most `limit` (`None`: for
/// ever): the bytes it moved; `TimedOut` once it is cancelled unfinished.
fn overlapped(
    pipe: HANDLE,
    limit: Option<Duration>,
    start: impl FnOnce(*mut OVERLAPPED) -> BOOL,
) -> io::Result<usize> {
    // SAFETY: FFI; an unnamed manual-reset event, not signalled, default
    // security; a null handle is checked below.
    let raw = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
    let event = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: an all-zero OVERLAPPED is a valid value (integers, a union
    // of integers, a null event); the event is set next.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    ov.hEvent = event.as_raw_handle();
    // `ov` stays where it is until the operation is over: every way out
    // below waits for its end (GetOverlappedResult).
    if start(&mut ov) == 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(ERROR_IO_PENDING as i32) {
            return Err(e);
        }
        let wait = limit.map_or(INFINITE, millis);
        // SAFETY: FFI; the event is open.
        if unsafe { WaitForSingleObject(ov.hEvent, wait) } != WAIT_OBJECT_0 {
            // SAFETY: FFI; cancels this one operation (if it is still
            // going) on the open pipe; `ov` is the one it was begun with.
            unsafe { CancelIoEx(pipe, &ov) };
            return match result(pipe, &ov, true) {
                Err(e) if e.raw_os_error() == Some(ERROR_OPERATION_ABORTED as i32) => {
                    Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the other end did not answer in time",
                    ))
                }
                // Done before the cancel reached it.
                done => done,
            };
        }
    }
    result(pipe, &ov, false)
}

/// The bytes the operation begun with `ov` moved (`wait`: once it ends).
fn result(pipe: HANDLE, ov: &OVERLAPPED, wait: bool) -> io::Result<usize> {
    let mut moved = 0u32;
    // SAFETY: FFI; the pipe is open, `ov` is the operation's, alive, and
    // `moved` a valid place.
    if unsafe { GetOverlappedResult(pipe, ov, &mut moved, BOOL::from(wait)) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(moved as usize)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A listening endpoint only this user reaches: the pipe's instance that
/// waits for the next client, and the marker file, which goes with it.
#[derive(Debug)]
pub struct Endpoint {
    name: Vec<u16>,
    path: PathBuf,
    listening: Mutex<OwnedHandle>,
}

impl Endpoint {
    /// Listens at `path` (in a folder [`runtime_dir`] gave): the pipe its
    /// name derives from, made first by this process, and the marker file
    /// (new: one there already is an endpoint there, or one left behind).
    pub fn bind(path: &Path) -> io::Result<Endpoint> {
        let name = pipe_name(path);
        let first = create_instance(&name, true).map_err(|e| {
            let what = if e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) {
                "is taken (made first by another process)"
            } else {
                "cannot be made"
            };
            io::Error::new(
                e.kind(),
                format!("the pipe for {} {what}: {e}", path.display()),
            )
        })?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut marker = super::fs::open_private(&options, path)?;
        marker.write_all(&String::from_utf16_lossy(&name[..name.len() - 1]).into_bytes())?;
        Ok(Endpoint {
            name,
            path: path.to_path_buf(),
            listening: Mutex::new(first),
        })
    }

    /// The next peer of this user's; others are hung up on unheard. The
    /// pipe's next instance is made as each client is taken, so the name
    /// never goes away while the endpoint is there.
    pub fn accept(&self) -> io::Result<Channel> {
        let mut listening = lock(&self.listening);
        loop {
            let pipe = listening.as_raw_handle();
            // SAFETY: FFI; the instance is open, and `ov` is the helper's.
            let connected = match overlapped(pipe, None, |ov| unsafe { ConnectNamedPipe(pipe, ov) })
            {
                Ok(_) => true,
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_CONNECTED as i32) => true,
                // A client came and went before the wait began.
                Err(e) if e.raw_os_error() == Some(ERROR_NO_DATA as i32) => false,
                Err(e) => return Err(e),
            };
            let next = create_instance(&self.name, false)?;
            let client = std::mem::replace(&mut *listening, next);
            if connected && peer_is_me(&client, GetNamedPipeClientProcessId).unwrap_or(false) {
                return Ok(Channel::new(client));
            }
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // The marker first: once it is gone nobody looks for the pipe.
        let _ = fs::remove_file(&self.path);
    }
}

/// How long each way may wait, shared by a channel's clones (as a
/// socket's are on Unix).
#[derive(Debug, Default)]
struct Limits {
    read: Mutex<Option<Duration>>,
    write: Mutex<Option<Duration>>,
}

/// One connection to or from an [`Endpoint`], both ends this user's.
#[derive(Debug)]
pub struct Channel {
    pipe: Arc<OwnedHandle>,
    limits: Arc<Limits>,
}

impl Channel {
    fn new(pipe: OwnedHandle) -> Channel {
        Channel {
            pipe: Arc::new(pipe),
            limits: Arc::default(),
        }
    }

    /// Connects to the endpoint at `path`: its marker must be there
    /// (`NotFound` otherwise, as for a removed socket), its pipe listening
    /// (`ConnectionRefused` otherwise: see [`is_stale`]); one held by
    /// another user is refused (`PermissionDenied`).
    pub fn connect(path: &Path) -> io::Result<Channel> {
        fs::symlink_metadata(path)?;
        let pipe = open_pipe(&pipe_name(path), path)?;
        if !peer_is_me(&pipe, GetNamedPipeServerProcessId).unwrap_or(false) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is held by another user", path.display()),
            ));
        }
        Ok(Channel::new(pipe))
    }

    /// A second handle on the same connection (the connection ends when
    /// the last one is dropped).
    pub fn try_clone(&self) -> io::Result<Channel> {
        Ok(Channel {
            pipe: Arc::clone(&self.pipe),
            limits: Arc::clone(&self.limits),
        })
    }

    /// How long a read may wait (`None`: for ever).
    pub fn set_read_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        *lock(&self.limits.read) = checked(limit)?;
        Ok(())
    }

    /// How long a write may wait (`None`: for ever).
    pub fn set_write_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        *lock(&self.limits.write) = checked(limit)?;
        Ok(())
    }
}

/// A time limit as a socket takes one: zero is refused.
fn checked(limit: Option<Duration>) -> io::Result<Option<Duration>> {
    if limit == Some(Duration::ZERO) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a zero time limit is not allowed",
        ));
    }
    Ok(limit)
}

/// Opens the client's end of pipe `name` (standing for `path`), waiting a
/// bounded while for a free instance when all are taken.
fn open_pipe(name: &[u16], path: &Path) -> io::Result<OwnedHandle> {
    let deadline = Instant::now() + BUSY_WAIT;
    loop {
        // SAFETY: `name` is NUL-terminated; no attributes or template.
        // SECURITY_IDENTIFICATION: the server may learn who connects but
        // not act as them.
        let raw = unsafe {
            CreateFileW(
                name.as_ptr(),
                GENERIC_READ | GENERIC_WRITE,
                0,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                std::ptr::null_mut(),
            )
        };
        if raw != INVALID_HANDLE_VALUE {
            // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
            return Ok(unsafe { OwnedHandle::from_raw_handle(raw) });
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error().map(|code| code as u32) {
            Some(ERROR_FILE_NOT_FOUND) => {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!("nobody listens at {} any more", path.display()),
                ))
            }
            Some(ERROR_PIPE_BUSY) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{} stayed busy", path.display()),
                    ));
                }
                // SAFETY: `name` is NUL-terminated. Whatever it returns
                // (a free instance, the time up, the pipe gone), the next
                // open tells.
                unsafe { WaitNamedPipeW(name.as_ptr(), millis(left)) };
            }
            _ => return Err(e),
        }
    }
}

/// Whether `e` says nobody listens at an endpoint's path any more (it
/// ended without removing its marker).
pub fn is_stale(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ConnectionRefused
}

impl Read for Channel {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let pipe = self.pipe.as_raw_handle();
        let limit = *lock(&self.limits.read);
        let (at, len) = (buf.as_mut_ptr(), buf.len().min(u32::MAX as usize) as u32);
        // SAFETY: FFI; the pipe is open, `buf` outlives the operation (the
        // helper waits for its end) and holds `len` bytes.
        let read = overlapped(pipe, limit, |ov| unsafe {
            ReadFile(pipe, at, len, std::ptr::null_mut(), ov)
        });
        match read {
            // The other end closed: the end of the stream.
            Err(e)
                if [ERROR_BROKEN_PIPE, ERROR_PIPE_NOT_CONNECTED]
                    .map(|c| Some(c as i32))
                    .contains(&e.raw_os_error()) =>
            {
                Ok(0)
            }
            other => other,
        }
    }
}

impl Write for Channel {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let pipe = self.pipe.as_raw_handle();
        let limit = *lock(&self.limits.write);
        let (at, len) = (buf.as_ptr(), buf.len().min(u32::MAX as usize) as u32);
        // SAFETY: FFI; the pipe is open, `buf` outlives the operation (the
        // helper waits for its end) and holds `len` bytes.
        overlapped(pipe, limit, |ov| unsafe {
            WriteFile(pipe, at, len, std::ptr::null_mut(), ov)
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::Security::Authorization::{GetSecurityInfo, SE_KERNEL_OBJECT};
    use windows_sys::Win32::Security::{
        AclSizeInformation, GetAce, GetAclInformation, GetLengthSid, ACCESS_ALLOWED_ACE,
        ACE_HEADER, ACL, ACL_SIZE_INFORMATION, DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR,
    };
    use windows_sys::Win32::System::SystemServices::ACCESS_ALLOWED_ACE_TYPE;

    fn endpoint() -> (crate::fs::PrivateTempDir, PathBuf, Endpoint) {
        let dir = crate::fs::private_temp_dir("elicit-local-").unwrap();
        let path = dir.path().join("a.sock");
        let endpoint = Endpoint::bind(&path).unwrap();
        (dir, path, endpoint)
    }

    #[test]
    fn an_endpoint_talks_to_its_own_user_and_its_marker_goes_with_it() {
        let (_dir, path, endpoint) = endpoint();
        assert!(path.is_file());
        for word in [&b"hi"[..], b"again"] {
            let mut client = Channel::connect(&path).unwrap();
            let mut server = endpoint.accept().unwrap();
            client.write_all(word).unwrap();
            let mut got = vec![0u8; word.len()];
            server.read_exact(&mut got).unwrap();
            assert_eq!(got, word);
            server.try_clone().unwrap().write_all(b"ok").unwrap();
            let mut reply = [0u8; 2];
            client.read_exact(&mut reply).unwrap();
            assert_eq!(&reply, b"ok");
            drop(client);
            // The client gone: the end of the server's stream.
            assert_eq!(server.read(&mut got).unwrap(), 0);
        }
        drop(endpoint);
        assert!(!path.exists());
        let gone = Channel::connect(&path).unwrap_err();
        assert_eq!(gone.kind(), io::ErrorKind::NotFound, "{gone}");
        // A marker whose pipe is gone (its holder was killed) is stale.
        fs::write(&path, b"").unwrap();
        let stale = Channel::connect(&path).unwrap_err();
        assert!(is_stale(&stale), "{stale}");
    }

    #[test]
    fn a_pipe_name_taken_already_is_refused() {
        if crate::windows::acl::under_wine() {
            // Wine 8.0 makes another instance of a pipe that exists
            // whatever FILE_FLAG_FIRST_PIPE_INSTANCE says (see
            // docs/TESTING.md): only Windows can show the refusal.
            eprintln!("not under Wine: FILE_FLAG_FIRST_PIPE_INSTANCE is not enforced there");
            return;
        }
        let (_dir, path, endpoint) = endpoint();
        fs::remove_file(&path).unwrap();
        let taken = Endpoint::bind(&path).unwrap_err();
        assert!(taken.to_string().contains("is taken"), "{taken}");
        assert!(!path.exists());
        drop(endpoint);
    }

    #[test]
    fn a_process_of_this_user_passes_and_one_that_cannot_be_looked_at_does_not() {
        assert!(runs_as_me(std::process::id()).unwrap());
        // Process ids are multiples of 4: 3 is nobody's.
        assert!(runs_as_me(3).is_err());
    }

    #[test]
    fn time_limits_bound_a_read_and_a_write_that_get_nowhere() {
        let (_dir, path, endpoint) = endpoint();
        let mut client = Channel::connect(&path).unwrap();
        let mut server = endpoint.accept().unwrap();
        client
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let started = Instant::now();
        let mut byte = [0u8; 1];
        let waited = client.read(&mut byte).unwrap_err();
        assert_eq!(waited.kind(), io::ErrorKind::TimedOut, "{waited}");
        assert!(started.elapsed() < Duration::from_secs(10));
        // The cancelled read took nothing: what comes next is read whole.
        server.write_all(b"x").unwrap();
        client.read_exact(&mut byte).unwrap();
        assert_eq!(&byte, b"x");
        // A reader that never reads: the write gives up.
        server
            .set_write_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let started = Instant::now();
        let stuck = server.write_all(&vec![7u8; 4 << 20]).unwrap_err();
        assert_eq!(stuck.kind(), io::ErrorKind::TimedOut, "{stuck}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(client.set_read_timeout(Some(Duration::ZERO)).is_err());
    }

    /// Each entry of the access list of the kernel object behind `handle`:
    /// (its type, its SID's bytes); `None` for no list (a NULL DACL).
    fn entries(handle: HANDLE) -> Option<Vec<(u32, Vec<u8>)>> {
        let (mut dacl, mut sd): (*mut ACL, PSECURITY_DESCRIPTOR) =
            (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the handle is open (with READ_CONTROL); only the list is
        // asked for, into valid places; the descriptor is freed below.
        let status = unsafe {
            GetSecurityInfo(
                handle,
                SE_KERNEL_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut dacl,
                std::ptr::null_mut(),
                &mut sd,
            )
        };
        assert_eq!(status, 0, "GetSecurityInfo");
        let mut found = None;
        if !dacl.is_null() {
            let mut size = ACL_SIZE_INFORMATION::default();
            // SAFETY: `dacl` is a list inside `sd`, alive; `size` is the
            // class's struct, with its size.
            let ok = unsafe {
                GetAclInformation(
                    dacl,
                    (&mut size as *mut ACL_SIZE_INFORMATION).cast(),
                    std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
                    AclSizeInformation,
                )
            };
            assert_ne!(ok, 0, "GetAclInformation");
            let mut list = Vec::new();
            for i in 0..size.AceCount {
                let mut ace: *mut c_void = std::ptr::null_mut();
                // SAFETY: `i` is below the count; `ace` a valid place; an
                // entry starts with its header, and an allow entry's SID
                // starts at SidStart.
                unsafe {
                    assert_ne!(GetAce(dacl, i, &mut ace), 0, "GetAce");
                    let kind = u32::from((*ace.cast::<ACE_HEADER>()).AceType);
                    let sid = std::ptr::addr_of_mut!((*ace.cast::<ACCESS_ALLOWED_ACE>()).SidStart);
                    let len = GetLengthSid(sid.cast()) as usize;
                    list.push((
                        kind,
                        std::slice::from_raw_parts(sid.cast::<u8>(), len).to_vec(),
                    ));
                }
            }
            found = Some(list);
        }
        // SAFETY: GetSecurityInfo allocated `sd` for the caller to free;
        // nothing read from it is used after.
        unsafe { LocalFree(sd) };
        found
    }

    #[test]
    fn the_pipe_lets_its_user_alone_in() {
        let (_dir, path, endpoint) = endpoint();
        let client = Channel::connect(&path).unwrap();
        let me = current_user_sid().unwrap();
        // SAFETY: a SID from current_user_sid, in its buffer.
        let len = unsafe { GetLengthSid(me.as_ptr() as *mut c_void) } as usize;
        // SAFETY: the buffer holds `len` bytes of the SID.
        let me = unsafe { std::slice::from_raw_parts(me.as_ptr().cast::<u8>(), len) }.to_vec();
        let listening = lock(&endpoint.listening).as_raw_handle();
        for handle in [listening, client.pipe.as_raw_handle()] {
            let list = entries(handle).expect("an access list, not a NULL DACL");
            assert_eq!(list, vec![(ACCESS_ALLOWED_ACE_TYPE, me.clone())]);
        }
    }
}
