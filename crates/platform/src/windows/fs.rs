//! Private files on Windows.
//!
//! A private directory or file gets an access list of its own: one entry,
//! for the user elicit runs as, protected, so that nothing is inherited
//! from the folder above (see [`super::acl`]). A directory is created with
//! that list ([`create_private_dir`], `CreateDirectoryW`), and its entry is
//! inherited by what is made inside it, so a file opened there with std's
//! options alone (which cannot carry a list) is the user's
//! alone too; [`open_private`] creates a file with the list of its own
//! (`CreateFileW`). Owners and access lists are read back
//! ([`file_access`], [`dir_access`]; see [`super::access`]) for the checks
//! the Unix side makes of a file's owner and mode. Locks are std's
//! `File::lock` (`LockFileEx`).

use std::fs::{self, File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{
    ERROR_ALREADY_EXISTS, ERROR_FILE_EXISTS, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateDirectoryW, CreateFileW, ReOpenFile, CREATE_NEW, FILE_ATTRIBUTE_NORMAL,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    READ_CONTROL, WRITE_DAC,
};

use super::access;
use super::acl::{wide, Object, OwnerOnly};

pub use crate::temp_dir::PrivateTempDir;

/// The user's data directory: `%LOCALAPPDATA%`.
pub fn user_data_dir() -> Option<PathBuf> {
    std::env::var_os("LOCALAPPDATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// How [`user_data_dir`] is chosen, for messages and help.
pub const DATA_DIR_SOURCES: &str = "LOCALAPPDATA";

/// Creates `dir` (and its missing parents), each with the owner-only,
/// protected access list from the moment it exists. An existing directory
/// is left as it is (see [`make_private`]).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dir(parent)?;
    }
    let owner_only = OwnerOnly::new(Object::Directory)?;
    let path = wide(dir);
    // SAFETY: `path` is NUL-terminated; the attributes (and the descriptor
    // and list they point at) live for the call.
    let created =
        owner_only.with_attributes(|sa| unsafe { CreateDirectoryW(path.as_ptr(), sa) })?;
    if created == 0 {
        let e = io::Error::last_os_error();
        // Made by someone else meanwhile: as an existing one.
        if e.raw_os_error() == Some(ERROR_ALREADY_EXISTS as i32) && dir.is_dir() {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Opens `path` with `options` (which create the file: `create` or
/// `create_new`); a file that did not exist is created with the
/// owner-only, protected access list first (`CreateFileW` with it, so it is
/// never readable by others, not even empty), then opened as `options`
/// say. A file that exists is opened as it is (`create_new` refuses it),
/// like a mode on Unix, which applies only to a new file.
pub fn open_private(options: &OpenOptions, path: &Path) -> io::Result<File> {
    let owner_only = OwnerOnly::new(Object::File)?;
    let name = wide(path);
    // SAFETY: `name` is NUL-terminated; the attributes live for the call.
    // CREATE_NEW never opens what exists, and the reparse-point flag never
    // creates through a link.
    let raw = owner_only.with_attributes(|sa| unsafe {
        CreateFileW(
            name.as_ptr(),
            READ_CONTROL,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            sa,
            CREATE_NEW,
            FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
            std::ptr::null_mut(),
        )
    })?;
    if raw == INVALID_HANDLE_VALUE {
        let e = io::Error::last_os_error();
        let exists = [ERROR_FILE_EXISTS, ERROR_ALREADY_EXISTS].map(|c| Some(c as i32));
        if exists.contains(&e.raw_os_error()) {
            return options.open(path);
        }
        return Err(e);
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns; it is
    // closed here, the file stays.
    drop(unsafe { OwnedHandle::from_raw_handle(raw) });
    let mut existing = options.clone();
    existing.create(false).create_new(false);
    existing.open(path).inspect_err(|_| {
        // Nothing half-made is left when the caller's open fails.
        let _ = fs::remove_file(path);
    })
}

/// Opens `path` with `options` (which create the file) for what only this
/// user may read, such as a record of answers: created as
/// [`open_private`] does, a link opened as itself (and refused as not a
/// regular file); a file another account owns or whose access list lets
/// others in is refused.
pub fn open_private_for_writing(options: &OpenOptions, path: &Path) -> io::Result<File> {
    let mut options = options.clone();
    let file = open_private(no_follow_non_blocking(&mut options), path)?;
    crate::access::refuse_unless_private(&file, describe_kind, file_access)?;
    Ok(file)
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

pub use crate::regular_file::read_regular_file;
pub use crate::Access;

/// Who owns the open `file`, and whether others may write or open it: its
/// owner SID and access list (see [`super::access`]). The handle needs
/// `READ_CONTROL`, which every open for reading or writing carries.
pub fn file_access(file: &File) -> io::Result<Access> {
    access::of_handle(file.as_raw_handle())
}

/// As [`file_access`], for the folder (or file) at `path`, links followed.
pub fn dir_access(path: &Path) -> io::Result<Access> {
    access::of_path(path)
}

/// Replaces the access list of the file or directory at `path` by the
/// owner-only, protected one (a directory's entry inherited by what is made
/// in it).
pub fn make_private(path: &Path, meta: &Metadata) -> io::Result<()> {
    let object = if meta.is_dir() {
        Object::Directory
    } else {
        Object::File
    };
    OwnerOnly::new(object)?.set_on_path(path)
}

/// As [`make_private`], for a file already open (through a second handle
/// to the same file that may change its list).
pub fn make_file_private(file: &File) -> io::Result<()> {
    // SAFETY: the file's handle is open for the call; the new handle asks
    // for the right to read and write the list only.
    let raw = unsafe {
        ReOpenFile(
            file.as_raw_handle(),
            READ_CONTROL | WRITE_DAC,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            0,
        )
    };
    if raw == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
    let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
    OwnerOnly::new(Object::File)?.set_on_handle(handle.as_raw_handle())
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

/// A temporary folder of this user's, removed when dropped or when elicit
/// is terminated: under `%TEMP%` (in the user's profile), given the
/// owner-only, protected access list before it is returned.
pub fn private_temp_dir(prefix: &str) -> io::Result<PrivateTempDir> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
    OwnerOnly::new(Object::Directory)?.set_on_path(dir.path())?;
    Ok(PrivateTempDir::listed(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::acl::{current_user_sid, under_wine};
    use windows_sys::Win32::Foundation::{LocalFree, ERROR_SUCCESS};
    use windows_sys::Win32::Security::Authorization::GetNamedSecurityInfoW;
    use windows_sys::Win32::Security::Authorization::SE_FILE_OBJECT;
    use windows_sys::Win32::Security::{
        AclSizeInformation, GetAce, GetAclInformation, GetLengthSid, GetSecurityDescriptorControl,
        ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, ACL_SIZE_INFORMATION, CONTAINER_INHERIT_ACE,
        DACL_SECURITY_INFORMATION, INHERITED_ACE, OBJECT_INHERIT_ACE, PSECURITY_DESCRIPTOR,
        SE_DACL_PROTECTED,
    };
    use windows_sys::Win32::Storage::FileSystem::FILE_ALL_ACCESS;
    use windows_sys::Win32::System::SystemServices::ACCESS_ALLOWED_ACE_TYPE;

    /// One entry of an access list, as read back.
    #[derive(Debug)]
    struct Ace {
        kind: u8,
        flags: u8,
        mask: u32,
        /// The SID's bytes (for an allow entry; empty for other kinds).
        sid: Vec<u8>,
    }

    /// The access list of `path` as the system reports it: whether it is
    /// protected, and its entries.
    fn read_dacl(path: &Path) -> (bool, Vec<Ace>) {
        let name = wide(path);
        let mut dacl: *mut ACL = std::ptr::null_mut();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `name` is NUL-terminated; `dacl` and `sd` are valid places
        // for the results; the descriptor is freed below with LocalFree.
        let status = unsafe {
            GetNamedSecurityInfoW(
                name.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut dacl,
                std::ptr::null_mut(),
                &mut sd,
            )
        };
        assert_eq!(
            status,
            ERROR_SUCCESS,
            "GetNamedSecurityInfoW {}",
            path.display()
        );
        assert!(
            !dacl.is_null(),
            "{} has a null DACL (everyone)",
            path.display()
        );
        let (mut control, mut revision) = (0u16, 0u32);
        // SAFETY: `sd` is the descriptor just returned; the out pointers
        // are valid.
        let ok = unsafe { GetSecurityDescriptorControl(sd, &mut control, &mut revision) };
        assert_ne!(ok, 0);
        let mut size = ACL_SIZE_INFORMATION::default();
        // SAFETY: `dacl` points into `sd`, alive; `size` is the class's
        // struct with its size.
        let ok = unsafe {
            GetAclInformation(
                dacl,
                (&mut size as *mut ACL_SIZE_INFORMATION).cast(),
                std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
                AclSizeInformation,
            )
        };
        assert_ne!(ok, 0);
        let mut aces = Vec::new();
        for i in 0..size.AceCount {
            let mut ace: *mut std::ffi::c_void = std::ptr::null_mut();
            // SAFETY: `i` is below the list's count; `ace` is a valid place.
            assert_ne!(unsafe { GetAce(dacl, i, &mut ace) }, 0);
            // SAFETY: every ACE starts with an ACE_HEADER.
            let header = unsafe { *ace.cast::<ACE_HEADER>() };
            let (mut mask, mut sid) = (0, Vec::new());
            if u32::from(header.AceType) == ACCESS_ALLOWED_ACE_TYPE {
                let allowed = ace.cast::<ACCESS_ALLOWED_ACE>();
                // SAFETY: an allow ACE is an ACCESS_ALLOWED_ACE whose SID
                // starts at SidStart and runs GetLengthSid bytes, inside
                // the ACE.
                unsafe {
                    mask = (*allowed).Mask;
                    let start = std::ptr::addr_of_mut!((*allowed).SidStart).cast();
                    let len = GetLengthSid(start) as usize;
                    sid = std::slice::from_raw_parts(start.cast::<u8>(), len).to_vec();
                }
            }
            aces.push(Ace {
                kind: header.AceType,
                flags: header.AceFlags,
                mask,
                sid,
            });
        }
        // SAFETY: `sd` was allocated by GetNamedSecurityInfoW for the caller
        // to free; `dacl` (inside it) is not used after.
        unsafe { LocalFree(sd) };
        (control & SE_DACL_PROTECTED != 0, aces)
    }

    fn my_sid() -> Vec<u8> {
        let sid = current_user_sid().unwrap();
        // SAFETY: a SID from current_user_sid, GetLengthSid bytes long.
        let len = unsafe { GetLengthSid(sid.as_ptr() as *mut std::ffi::c_void) } as usize;
        sid.iter().flat_map(|w| w.to_ne_bytes()).take(len).collect()
    }

    /// The SID of SYSTEM (S-1-5-18), which Wine puts in every list it
    /// reports.
    const SYSTEM_SID: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0];

    /// Asserts the owner-only list: protected, one allow entry for this
    /// user with full control, nothing inherited; `inherits` says whether
    /// the entry passes on to what is made inside (a directory's).
    ///
    /// Under Wine (Debian's 8.0, built without extended attributes) no
    /// security descriptor is stored: a list set is turned into the Unix
    /// mode's owner and other bits, and the list read back is made up from
    /// the mode (SYSTEM and the owner, Everyone when others have access;
    /// never protected; a directory's entries always inheritable). What it
    /// shows is only that this user has full control and nobody else but
    /// SYSTEM has an entry (no Everyone): the rest is for Windows.
    fn assert_owner_only(path: &Path, inherits: bool) {
        let (protected, aces) = read_dacl(path);
        let shown = path.display();
        let me = my_sid();
        if under_wine() {
            assert!(
                aces.iter()
                    .any(|a| u32::from(a.kind) == ACCESS_ALLOWED_ACE_TYPE
                        && a.sid == me
                        && a.mask == FILE_ALL_ACCESS),
                "{shown}: no full-control entry for this user: {aces:?}"
            );
            assert!(
                aces.iter().all(|a| a.sid == me || a.sid == SYSTEM_SID),
                "{shown}: an entry for someone else: {aces:?}"
            );
            return;
        }
        assert!(protected, "{shown}: the DACL is not protected: {aces:?}");
        assert!(
            aces.iter().all(|a| u32::from(a.flags) & INHERITED_ACE == 0),
            "{shown}: an inherited ACE: {aces:?}"
        );
        assert_eq!(aces.len(), 1, "{shown}: not exactly one ACE: {aces:?}");
        let ace = &aces[0];
        assert_eq!(
            u32::from(ace.kind),
            ACCESS_ALLOWED_ACE_TYPE,
            "{shown}: {ace:?}"
        );
        assert_eq!(
            ace.sid, me,
            "{shown}: the ACE is not for this user: {ace:?}"
        );
        assert_eq!(ace.mask, FILE_ALL_ACCESS, "{shown}: {ace:?}");
        let inherit = if inherits {
            OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE
        } else {
            0
        };
        assert_eq!(u32::from(ace.flags), inherit, "{shown}: {ace:?}");
    }

    #[test]
    fn private_files_and_directories_are_the_owners_alone() {
        let base = std::env::temp_dir().join(format!("elicit-acl-{}", uuid::Uuid::new_v4()));
        // A directory with a missing parent: both are made private.
        let dir = base.join("tokens");
        create_private_dir(&dir).unwrap();
        assert_owner_only(&base, true);
        assert_owner_only(&dir, true);
        // An existing directory is left as it is, without an error.
        create_private_dir(&dir).unwrap();

        let path = dir.join("entry.json");
        let mut options = OpenOptions::new();
        options.create_new(true).write(true);
        let mut f = open_private(no_follow(&mut options), &path).unwrap();
        io::Write::write_all(&mut f, b"{}").unwrap();
        drop(f);
        assert_owner_only(&path, false);
        assert_eq!(fs::read(&path).unwrap(), b"{}");
        // create_new still refuses a file that exists; create opens it.
        assert_eq!(
            open_private(&options, &path).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        let mut append = OpenOptions::new();
        append.create(true).append(true);
        let mut f = open_private(&append, &path).unwrap();
        io::Write::write_all(&mut f, b"\n").unwrap();
        drop(f);
        assert_eq!(fs::read(&path).unwrap(), b"{}\n");

        // A file made in the directory by a plain open (the token store's
        // lock and temporary files) gets the directory's entry, inherited:
        // this user alone. (Wine does not inherit entries it does not
        // store: Windows only.)
        let lock = dir.join(".lock");
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        drop(open_private(&options, &lock).unwrap());
        if !under_wine() {
            let (_, aces) = read_dacl(&lock);
            assert_eq!(aces.len(), 1, "{aces:?}");
            assert_eq!(aces[0].sid, my_sid(), "{aces:?}");
            assert_ne!(u32::from(aces[0].flags) & INHERITED_ACE, 0, "{aces:?}");
        }

        // A file with a list of another kind is made the owner's alone.
        // (In the private directory: Wine, which stores no descriptor, adds
        // the parent's inheritable entries to a list set on an existing
        // file, protected or not; this parent's are the owner's.)
        let loose = dir.join("loose");
        fs::write(&loose, b"x").unwrap();
        make_private(&loose, &fs::metadata(&loose).unwrap()).unwrap();
        assert_owner_only(&loose, false);
        fs::remove_file(&loose).unwrap();
        // Likewise through an open handle (read-only: the list is changed
        // through a second handle).
        fs::write(&loose, b"x").unwrap();
        let f = File::open(&loose).unwrap();
        make_file_private(&f).unwrap();
        drop(f);
        assert_owner_only(&loose, false);
        fs::remove_file(&loose).unwrap();
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_private_temporary_folder_is_the_owners_alone() {
        let dir = private_temp_dir("elicit-acl-").unwrap();
        // Its list is set once it exists, and Wine adds the temporary
        // folder's inheritable entries (Everyone's, from its mode) to a list
        // set so, protected or not: only Windows shows it.
        if !under_wine() {
            assert_owner_only(dir.path(), true);
        }
    }

    #[test]
    fn a_private_file_is_created_locked_and_read_back() {
        let dir = std::env::temp_dir().join(format!("elicit-fs-{}", uuid::Uuid::new_v4()));
        create_private_dir(&dir).unwrap();
        let path = dir.join("entry.json");
        let mut options = OpenOptions::new();
        options.create_new(true).write(true);
        let f = open_private(no_follow(&mut options), &path).unwrap();
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
        assert!(f.metadata().unwrap().is_file());
        let access = file_access(&f).unwrap();
        assert!(access.mine && access.writable_by_others.is_none());
        drop(f);
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
#[path = "fs_access_tests.rs"]
mod access_tests;
