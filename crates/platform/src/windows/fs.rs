//! Private files on Windows.
//!
//! What elicit keeps lives in the user's profile (`%LOCALAPPDATA%`), whose
//! inherited access list grants the user, SYSTEM and the administrators
//! only: files and directories created there are the user's alone without
//! an access list of their own. Owners and access lists are not read back
//! (the checks the Unix side makes of a file's owner and mode are not made
//! here; see docs/SECURITY.md). Locks are std's `File::lock`
//! (`LockFileEx`).

use std::fs::{self, File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;

/// The user's data directory: `%LOCALAPPDATA%`.
pub fn user_data_dir() -> Option<PathBuf> {
    std::env::var_os("LOCALAPPDATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// How [`user_data_dir`] is chosen, for messages and help.
pub const DATA_DIR_SOURCES: &str = "LOCALAPPDATA";

/// Creates `dir` (and its parents), inheriting the profile's access list.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// A new file inherits its directory's access list (see the module).
pub fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Opens a symbolic link (a reparse point) itself rather than what it
/// points at: it is then not a regular file, and refused as one.
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
}

/// Windows files have no FIFOs to wait on: a plain open.
pub fn non_blocking(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// [`no_follow`] and [`non_blocking`] together.
pub fn no_follow_non_blocking(options: &mut OpenOptions) -> &mut OpenOptions {
    no_follow(options)
}

/// Whether an open failed because [`no_follow`] met a link (never on
/// Windows: the link is opened, then refused as not a regular file).
pub fn is_link_refused(_e: &io::Error) -> bool {
    false
}

/// Who owns a file, as far as trusting it goes.
pub struct Owner {
    /// The file belongs to the user elicit runs as.
    pub mine: bool,
    /// The owner, for a message.
    pub who: String,
}

/// Not read on Windows (see the module): every file in the user's profile
/// counts as the user's.
pub fn owner(_meta: &Metadata) -> Owner {
    Owner {
        mine: true,
        who: "you".into(),
    }
}

/// Not read on Windows (see the module).
pub fn writable_by_others(_meta: &Metadata) -> Option<String> {
    None
}

/// Not read on Windows (see the module).
pub fn open_to_others(_meta: &Metadata) -> bool {
    false
}

/// Nothing to take away (see the module).
pub fn make_private(_path: &Path, _meta: &Metadata) -> io::Result<()> {
    Ok(())
}

/// Nothing to take away (see the module).
pub fn make_file_private(_file: &File) -> io::Result<()> {
    Ok(())
}

/// Waits for an exclusive lock on `file`.
pub fn lock_exclusive(file: &File) -> io::Result<()> {
    file.lock()
}

/// Releases a lock [`lock_exclusive`] took (closing the file releases it
/// too; callers may ignore an error here).
pub fn unlock(file: &File) -> io::Result<()> {
    file.unlock()
}

/// What a file that is not a regular file is, for a message.
pub fn describe_kind(kind: FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// A second handle on elicit's stdin, as a file.
pub fn stdin_file() -> Option<File> {
    use std::os::windows::io::AsHandle;
    std::io::stdin()
        .as_handle()
        .try_clone_to_owned()
        .ok()
        .map(File::from)
}

/// Whether a failed `accept` (or open) ran out of sockets or buffers
/// (`WSAEMFILE`, `WSAENOBUFS`): closing an idle connection relieves it.
pub fn out_of_descriptors(e: &io::Error) -> bool {
    const WSAEMFILE: i32 = 10024;
    const WSAENOBUFS: i32 = 10055;
    matches!(e.raw_os_error(), Some(WSAEMFILE | WSAENOBUFS))
}

/// What identifies a folder however it is reached (through junctions and
/// links): its canonical path (std has no stable file index on Windows).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FolderId(PathBuf);

/// The identity of the folder at `path` (links followed).
pub fn folder_identity(path: &Path) -> io::Result<FolderId> {
    fs::canonicalize(path).map(FolderId)
}

/// A temporary folder of this user's, removed when dropped: under
/// `%TEMP%`, in the user's profile, whose inherited access list keeps
/// other users out (see the module).
pub fn private_temp_dir(prefix: &str) -> io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix(prefix).tempdir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_file_is_created_locked_and_read_back() {
        let dir = std::env::temp_dir().join(format!("elicit-fs-{}", uuid::Uuid::new_v4()));
        create_private_dir(&dir).unwrap();
        let path = dir.join("entry.json");
        let mut options = OpenOptions::new();
        options.create_new(true).write(true);
        let f = no_follow(private(&mut options)).open(&path).unwrap();
        lock_exclusive(&f).unwrap();
        // Another handle cannot have it while it is held; closing the file
        // releases it (as the token store relies on: its unlock is best
        // effort; under Wine 8 std's `unlock` reports a lock violation on
        // its second UnlockFile, where Windows says "not locked").
        let other = OpenOptions::new().write(true).open(&path).unwrap();
        assert!(other.try_lock().is_err());
        drop(f);
        assert!(other.try_lock().is_ok());
        drop(other);
        let f = no_follow_non_blocking(OpenOptions::new().read(true))
            .open(&path)
            .unwrap();
        let meta = f.metadata().unwrap();
        assert!(meta.is_file());
        assert!(owner(&meta).mine && writable_by_others(&meta).is_none());
        drop(f);
        fs::remove_dir_all(&dir).unwrap();
    }
}
