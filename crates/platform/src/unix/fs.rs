//! Private files on Unix: modes 0700/0600, owners by uid, `O_NOFOLLOW`,
//! `flock` (through std's `File::lock`).

use std::fs::{self, File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use crate::temp_dir::PrivateTempDir;

/// The user's data directory, where elicit keeps what it keeps between
/// runs: `$XDG_DATA_HOME`, else `~/.local/share` (on macOS,
/// `~/Library/Application Support`). `None` when neither variable is set.
pub fn user_data_dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = env("XDG_DATA_HOME") {
        return Some(PathBuf::from(d));
    }
    let home = PathBuf::from(env("HOME")?);
    if cfg!(target_os = "macos") {
        Some(home.join("Library/Application Support"))
    } else {
        Some(home.join(".local/share"))
    }
}

/// How [`user_data_dir`] is chosen, for messages and help.
pub const DATA_DIR_SOURCES: &str = "XDG_DATA_HOME or HOME";

/// Creates `dir` (and its parents) readable by the owner alone (0700).
/// An existing directory is left as it is (see [`make_private`]).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Opens `path` with `options` (which create the file: `create` or
/// `create_new`), a new file readable by the owner alone (mode 0600; an
/// existing file keeps its mode). On Windows the new file gets an owner-only
/// access list: std's `OpenOptions` cannot carry one, so every private file
/// is opened through here.
pub fn open_private(options: &OpenOptions, path: &Path) -> io::Result<File> {
    options.clone().mode(0o600).open(path)
}

/// Opens `path` with `options` (which create the file) for what only this
/// user may read, such as a record of answers: created as
/// [`open_private`] does, never through a symbolic link nor waiting on a
/// FIFO; a file that is not a regular file, is another user's or is open
/// to others is refused (in a shared folder another user could have
/// planted it, to read what is written).
pub fn open_private_for_writing(options: &OpenOptions, path: &Path) -> io::Result<File> {
    let mut options = options.clone();
    let file = open_private(no_follow_non_blocking(&mut options), path).map_err(|e| {
        if is_link_refused(&e) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a symbolic link, which elicit does not follow here; remove it",
            )
        } else {
            e
        }
    })?;
    crate::access::refuse_unless_private(&file, describe_kind, file_access)?;
    Ok(file)
}

/// Makes the open refuse a symbolic link as the last component
/// (`O_NOFOLLOW`); see [`is_link_refused`].
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
}

/// Makes the open not wait for a writer (a FIFO), nor the file's later
/// reads (`O_NONBLOCK`).
pub fn non_blocking(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
}

/// [`no_follow`] and [`non_blocking`] together.
pub fn no_follow_non_blocking(options: &mut OpenOptions) -> &mut OpenOptions {
    options
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
}

/// Whether an open failed because [`no_follow`] met a symbolic link.
pub fn is_link_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
}

pub use crate::regular_file::read_regular_file;
pub use crate::Access;

/// Who owns the open `file`, and whether others may write or open it.
pub fn file_access(file: &File) -> io::Result<Access> {
    Ok(access(&file.metadata()?))
}

/// As [`file_access`], for the folder (or file) at `path`, links followed.
pub fn dir_access(path: &Path) -> io::Result<Access> {
    Ok(access(&fs::metadata(path)?))
}

/// The owner by uid; writable by others when group or others may write
/// (`mode 664`); open to others when group or others have any bit.
fn access(meta: &Metadata) -> Access {
    Access {
        mine: meta.uid() == rustix::process::geteuid().as_raw(),
        who: format!("uid {}", meta.uid()),
        writable_by_others: (meta.mode() & 0o022 != 0)
            .then(|| format!("mode {:o}", meta.mode() & 0o7777)),
        open_to_others: meta.mode() & 0o077 != 0,
    }
}

/// Takes every access away from others than the owner (0700 for a
/// directory, 0600 for a file).
pub fn make_private(path: &Path, meta: &Metadata) -> io::Result<()> {
    let mode = if meta.is_dir() { 0o700 } else { 0o600 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

/// As [`make_private`], for a file already open.
pub fn make_file_private(file: &File) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(0o600))
}

/// Waits for an exclusive lock on `file` (released when it is closed, or
/// by [`unlock`]).
pub fn lock_exclusive(file: &File) -> io::Result<()> {
    file.lock()
}

/// Releases a lock [`lock_exclusive`] took.
pub fn unlock(file: &File) -> io::Result<()> {
    file.unlock()
}

/// What a file that is not a regular file is, for a message.
pub fn describe_kind(kind: FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// A second handle on elicit's stdin, as a file (to ask for its size when
/// it is redirected from one).
pub fn stdin_file() -> Option<File> {
    use std::os::fd::AsFd;
    std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(File::from)
}

/// Whether a failed `accept` (or open) ran out of descriptors or buffers:
/// the process or system limit, which closing an idle connection relieves.
pub fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// What identifies a folder however it is reached (through links): its
/// device and inode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FolderId(u64, u64);

/// The identity of the folder at `path` (links followed).
pub fn folder_identity(path: &Path) -> io::Result<FolderId> {
    let meta = fs::metadata(path)?;
    Ok(FolderId(meta.dev(), meta.ino()))
}

/// A folder only this user can enter (0700), under `TMPDIR`, removed when
/// dropped or when elicit is terminated. (`tempfile` makes its files 0600
/// but its folders with the umask's mode unless told.)
pub fn private_temp_dir(prefix: &str) -> io::Result<PrivateTempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir()
        .map(PrivateTempDir::listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_private_creates_a_file_for_the_owner_alone_and_leaves_one_that_exists() {
        let dir = private_temp_dir("elicit-fs-").unwrap();
        let path = dir.path().join("record.jsonl");
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        drop(open_private(&options, &path).unwrap());
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        drop(open_private(&options, &path).unwrap());
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o640);
        let mut new_only = OpenOptions::new();
        new_only.create_new(true).write(true);
        let e = open_private(&new_only, &path).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    }

    #[test]
    fn open_private_for_writing_refuses_links_files_open_to_others_and_what_is_not_a_file() {
        let dir = private_temp_dir("elicit-fs-").unwrap();
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        let path = dir.path().join("record.jsonl");
        drop(open_private_for_writing(&options, &path).unwrap());
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let e = open_private_for_writing(&options, &path).unwrap_err();
        assert!(e.to_string().contains("other users may open it"), "{e}");
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = open_private_for_writing(&options, &link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let mut write = OpenOptions::new();
        write.create(true).read(true).write(true);
        let e = open_private_for_writing(&write, &fifo).unwrap_err();
        assert!(e.to_string().contains("a FIFO, not a regular file"), "{e}");
    }
}
