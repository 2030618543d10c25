//! A private local endpoint on Windows: not there yet. A named pipe with
//! an owner-only access list is the plan; until then parking a call says
//! so instead of opening an endpoint anyone could reach.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "parked calls are not available on Windows yet",
    )
}

/// The user's private folder for elicit's live endpoints (not on Windows
/// yet).
pub fn runtime_dir() -> io::Result<PathBuf> {
    Err(unsupported())
}

/// A listening endpoint only this user reaches (not on Windows yet).
#[derive(Debug)]
pub struct Endpoint(());

impl Endpoint {
    /// Listens at `path` (not on Windows yet).
    pub fn bind(_path: &Path) -> io::Result<Endpoint> {
        Err(unsupported())
    }

    /// The next peer of this user's.
    pub fn accept(&self) -> io::Result<Channel> {
        Err(unsupported())
    }
}

/// One connection to or from an [`Endpoint`].
#[derive(Debug)]
pub struct Channel(());

impl Channel {
    /// Connects to the endpoint at `path` (not on Windows yet).
    pub fn connect(_path: &Path) -> io::Result<Channel> {
        Err(unsupported())
    }

    /// A second handle on the same connection.
    pub fn try_clone(&self) -> io::Result<Channel> {
        Err(unsupported())
    }

    /// How long a read may wait.
    pub fn set_read_timeout(&self, _limit: Option<Duration>) -> io::Result<()> {
        Err(unsupported())
    }

    /// How long a write may wait.
    pub fn set_write_timeout(&self, _limit: Option<Duration>) -> io::Result<()> {
        Err(unsupported())
    }
}

/// Whether `e` says nobody listens at an endpoint's path any more.
pub fn is_stale(_e: &io::Error) -> bool {
    false
}

impl Read for Channel {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        Err(unsupported())
    }
}

impl Write for Channel {
    fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
        Err(unsupported())
    }

    fn flush(&mut self) -> io::Result<()> {
        Err(unsupported())
    }
}
