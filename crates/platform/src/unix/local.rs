//! A private local endpoint on Unix: a socket file (0600) in a folder only
//! the user can enter (0700), whose every peer's uid is checked as well
//! (`SO_PEERCRED` on Linux, `getpeereid` elsewhere), so a folder made
//! reachable by mistake still lets nobody else in.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The user's private folder for elicit's live endpoints:
/// `$XDG_RUNTIME_DIR/elicit`, else `elicit-UID` in the temporary folder;
/// created 0700, and refused unless it is a folder (not a link) of this
/// user's that nobody else may enter.
pub fn runtime_dir() -> io::Result<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(base) => PathBuf::from(base).join("elicit"),
        None => std::env::temp_dir().join(format!("elicit-{uid}")),
    };
    match fs::DirBuilder::new().mode_private().create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = fs::symlink_metadata(&dir)?;
    let refuse = |why: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: {why}; it must be a folder of uid {uid} that only its owner may enter",
                dir.display()
            ),
        ))
    };
    if !meta.is_dir() {
        return refuse("it is not a folder".into());
    }
    if meta.uid() != uid {
        return refuse(format!("it belongs to uid {}", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return refuse(format!("its mode is {:o}", meta.mode() & 0o7777));
    }
    Ok(dir)
}

trait PrivateDirBuilder {
    fn mode_private(&mut self) -> &mut Self;
}

impl PrivateDirBuilder for fs::DirBuilder {
    fn mode_private(&mut self) -> &mut Self {
        use std::os::unix::fs::DirBuilderExt;
        self.mode(0o700)
    }
}

/// The uid at the other end of `stream`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    Ok(rustix::net::sockopt::socket_peercred(stream)?.uid.as_raw())
}

/// The uid at the other end of `stream`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: rustix offers no getpeereid; it only writes the two integers
    // it is given, for a socket descriptor `stream` keeps open.
    let done = unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(uid)
}

/// Whether the peer of `stream` is this user.
fn peer_is_me(stream: &UnixStream) -> io::Result<bool> {
    Ok(peer_uid(stream)? == rustix::process::geteuid().as_raw())
}

/// A listening endpoint at a path only this user reaches; the socket file
/// goes with it.
#[derive(Debug)]
pub struct Endpoint {
    listener: UnixListener,
    path: PathBuf,
}

impl Endpoint {
    /// Listens at `path` (in a folder [`runtime_dir`] gave), mode 0600.
    pub fn bind(path: &Path) -> io::Result<Endpoint> {
        let listener = UnixListener::bind(path)?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
        Ok(Endpoint {
            listener,
            path: path.to_path_buf(),
        })
    }

    /// The next peer of this user's; others are hung up on unheard.
    pub fn accept(&self) -> io::Result<Channel> {
        loop {
            let (stream, _) = self.listener.accept()?;
            if peer_is_me(&stream).unwrap_or(false) {
                return Ok(Channel(stream));
            }
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// One connection to or from an [`Endpoint`], both ends this user's.
#[derive(Debug)]
pub struct Channel(UnixStream);

impl Channel {
    /// Connects to the endpoint at `path`; one held by another user is
    /// refused (`PermissionDenied`).
    pub fn connect(path: &Path) -> io::Result<Channel> {
        let stream = UnixStream::connect(path)?;
        if !peer_is_me(&stream)? {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is held by another user", path.display()),
            ));
        }
        Ok(Channel(stream))
    }

    /// A second handle on the same connection.
    pub fn try_clone(&self) -> io::Result<Channel> {
        self.0.try_clone().map(Channel)
    }

    /// How long a read may wait (`None`: for ever).
    pub fn set_read_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        self.0.set_read_timeout(limit)
    }

    /// How long a write may wait (`None`: for ever).
    pub fn set_write_timeout(&self, limit: Option<Duration>) -> io::Result<()> {
        self.0.set_write_timeout(limit)
    }
}

/// Whether `e` says nobody listens at an endpoint's path any more (it
/// ended without removing it).
pub fn is_stale(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ConnectionRefused
}

impl Read for Channel {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Channel {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_talks_to_its_own_user_and_its_socket_goes_with_it() {
        let dir = crate::fs::private_temp_dir("elicit-local-").unwrap();
        let path = dir.path().join("a.sock");
        let endpoint = Endpoint::bind(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let mut client = Channel::connect(&path).unwrap();
        let mut server = endpoint.accept().unwrap();
        client.write_all(b"hi").unwrap();
        let mut got = [0u8; 2];
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hi");
        drop(endpoint);
        assert!(!path.exists());
        assert!(Channel::connect(&path).is_err());
    }
}
