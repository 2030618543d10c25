//! The owner-only access list elicit gives what it keeps private on
//! Windows: one ACE allowing the user elicit runs as (the SID of the
//! process token's user) full control, marked protected so that nothing is
//! inherited from the folder above. On a directory the ACE is inherited by
//! what is created inside it (files and folders), so a file made there is
//! the user's alone from its first instant, even before it gets a list of
//! its own.
//!
//! windows-sys has no safe wrappers; each `unsafe` block below is one
//! Win32 call, with why its pointers are valid.

use std::ffi::c_void;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::Path;

use windows_sys::Win32::Foundation::{ERROR_SUCCESS, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    SetNamedSecurityInfoW, SetSecurityInfo, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    AddAccessAllowedAceEx, CopySid, EqualSid, GetLengthSid, GetTokenInformation, InitializeAcl,
    InitializeSecurityDescriptor, SetSecurityDescriptorControl, SetSecurityDescriptorDacl,
    TokenUser, ACCESS_ALLOWED_ACE, ACL, ACL_REVISION, CONTAINER_INHERIT_ACE,
    DACL_SECURITY_INFORMATION, OBJECT_INHERIT_ACE, PROTECTED_DACL_SECURITY_INFORMATION,
    SECURITY_ATTRIBUTES, SECURITY_DESCRIPTOR, SE_DACL_PROTECTED, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::FILE_ALL_ACCESS;
use windows_sys::Win32::System::SystemServices::SECURITY_DESCRIPTOR_REVISION;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// What the list is for: a directory's ACE is inherited by what is created
/// in it; a file's is not inheritable (files have no children).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Object {
    File,
    Directory,
}

/// A zeroed buffer of at least `bytes` bytes, 8-byte aligned: enough for
/// the structures below (SIDs and ACLs need 4, TOKEN_USER a pointer's).
fn aligned(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8)]
}

/// The size in bytes of a buffer from [`aligned`].
fn byte_len(buffer: &[u64]) -> u32 {
    (buffer.len() * 8) as u32
}

/// The SID of the user elicit runs as (its process token's user), copied
/// into a buffer of its own.
pub(crate) fn current_user_sid() -> io::Result<Vec<u64>> {
    // SAFETY: GetCurrentProcess is a pseudo-handle (no closing needed),
    // open for the whole process's life.
    process_user_sid(unsafe { GetCurrentProcess() })
}

/// The SID of the user a process runs as (its token's user), copied into
/// a buffer of its own; `process` is open with at least
/// `PROCESS_QUERY_LIMITED_INFORMATION`.
pub(crate) fn process_user_sid(process: HANDLE) -> io::Result<Vec<u64>> {
    let mut raw: HANDLE = std::ptr::null_mut();
    // SAFETY: the caller's process handle is open; `raw` is a valid place
    // for the token handle.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut raw) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid handle that nothing else owns.
    let token = unsafe { OwnedHandle::from_raw_handle(raw) };
    let mut needed = 0u32;
    // SAFETY: a size query: a null buffer of length 0, and `needed` is a
    // valid place for the size (the call fails with
    // ERROR_INSUFFICIENT_BUFFER, as asked).
    unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TokenUser,
            std::ptr::null_mut(),
            0,
            &mut needed,
        )
    };
    if needed == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut info = aligned(needed as usize);
    // SAFETY: `info` holds `needed` bytes (rounded up), aligned for
    // TOKEN_USER; the token is open.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TokenUser,
            info.as_mut_ptr().cast(),
            byte_len(&info),
            &mut needed,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: GetTokenInformation wrote a TOKEN_USER at the start of
    // `info`, which is aligned for it.
    let sid = unsafe { (*info.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    // SAFETY: `sid` points at a valid SID inside `info`, alive here.
    let len = unsafe { GetLengthSid(sid) };
    let mut copy = aligned(len as usize);
    // SAFETY: `copy` holds `len` bytes; `sid` is valid (as above).
    if unsafe { CopySid(len, copy.as_mut_ptr().cast(), sid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(copy)
}

/// Whether two SIDs (as [`current_user_sid`] gives them) are the same.
pub(crate) fn same_sid(a: &[u64], b: &[u64]) -> bool {
    // SAFETY: both are valid SIDs in their buffers, only read.
    unsafe { EqualSid(a.as_ptr() as *mut c_void, b.as_ptr() as *mut c_void) != 0 }
}

/// The access list: one ACE allowing `sid` full control (inherited by
/// what is created in a directory).
fn owner_only_acl(sid: &[u64], object: Object) -> io::Result<Vec<u64>> {
    let inherit = match object {
        Object::File => 0,
        Object::Directory => OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE,
    };
    allowing(&[(sid, FILE_ALL_ACCESS, inherit)])
}

/// An access list of allow entries, in order: each a SID (as
/// [`current_user_sid`] or [`sid_from_bytes`] give it), the rights it is
/// allowed and the entry's inheritance flags.
pub(crate) fn allowing(entries: &[(&[u64], u32, u32)]) -> io::Result<Vec<u64>> {
    // The ACL header, then each ACE, whose SidStart field is its SID's
    // first 4 bytes.
    let mut size = std::mem::size_of::<ACL>();
    for (sid, _, _) in entries {
        // SAFETY: every SID given is a valid SID in its buffer.
        let sid_len = unsafe { GetLengthSid(sid.as_ptr() as *mut c_void) } as usize;
        size += std::mem::size_of::<ACCESS_ALLOWED_ACE>() - std::mem::size_of::<u32>() + sid_len;
    }
    let mut acl = aligned(size);
    let size = byte_len(&acl);
    // SAFETY: `acl` holds `size` bytes, aligned as an ACL must be.
    if unsafe { InitializeAcl(acl.as_mut_ptr().cast(), size, ACL_REVISION) } == 0 {
        return Err(io::Error::last_os_error());
    }
    for &(sid, mask, inherit) in entries {
        // SAFETY: `acl` is an initialised ACL with room for every entry
        // (sized above); the SID is valid and only read.
        let ok = unsafe {
            AddAccessAllowedAceEx(
                acl.as_mut_ptr().cast(),
                ACL_REVISION,
                inherit,
                mask,
                sid.as_ptr() as *mut c_void,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(acl)
}

/// A SID given as its bytes, in a buffer aligned as a SID must be.
pub(crate) fn sid_from_bytes(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|chunk| {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            u64::from_ne_bytes(word)
        })
        .collect()
}

/// Replaces the access list of the file or directory at `path` by `acl`
/// (null: a NULL DACL, which lets everyone in), protected or not.
pub(crate) fn set_dacl_on_path(path: &Path, acl: *const ACL, protected: bool) -> io::Result<()> {
    let wide = wide(path);
    let protection = if protected {
        PROTECTED_DACL_SECURITY_INFORMATION
    } else {
        0
    };
    // SAFETY: `wide` is a NUL-terminated path; `acl` is null or a valid
    // list (the caller's); only the DACL is set, the owner, group and SACL
    // pointers are null as the call allows.
    let status = unsafe {
        SetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | protection,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            acl,
            std::ptr::null(),
        )
    };
    win32_result(status)
}

/// The owner-only list for the current user.
pub(crate) struct OwnerOnly {
    acl: Vec<u64>,
}

impl OwnerOnly {
    /// The list for a file or a directory of the user elicit runs as.
    pub(crate) fn new(object: Object) -> io::Result<OwnerOnly> {
        let sid = current_user_sid()?;
        Ok(OwnerOnly {
            acl: owner_only_acl(&sid, object)?,
        })
    }

    fn acl(&self) -> *const ACL {
        self.acl.as_ptr().cast()
    }

    /// Calls `f` with security attributes that give a new object this list,
    /// protected (for CreateFileW, CreateDirectoryW).
    pub(crate) fn with_attributes<R>(
        &self,
        f: impl FnOnce(&SECURITY_ATTRIBUTES) -> R,
    ) -> io::Result<R> {
        // SAFETY: an all-zero SECURITY_DESCRIPTOR is a valid value (integers
        // and null pointers); it is initialised next.
        let mut sd: SECURITY_DESCRIPTOR = unsafe { std::mem::zeroed() };
        let psd: *mut c_void = (&mut sd as *mut SECURITY_DESCRIPTOR).cast();
        // SAFETY: `psd` points at a SECURITY_DESCRIPTOR that lives for the
        // calls below and `f`; the ACL it refers to lives in `self`.
        unsafe {
            if InitializeSecurityDescriptor(psd, SECURITY_DESCRIPTOR_REVISION) == 0
                || SetSecurityDescriptorDacl(psd, 1, self.acl(), 0) == 0
                || SetSecurityDescriptorControl(psd, SE_DACL_PROTECTED, SE_DACL_PROTECTED) == 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        let attributes = SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: psd,
            bInheritHandle: 0,
        };
        Ok(f(&attributes))
    }

    /// Replaces the access list of the file or directory at `path` by this
    /// one, protected (what it inherited is dropped).
    pub(crate) fn set_on_path(&self, path: &Path) -> io::Result<()> {
        set_dacl_on_path(path, self.acl(), true)
    }

    /// As [`OwnerOnly::set_on_path`], through a handle opened with
    /// `WRITE_DAC`.
    pub(crate) fn set_on_handle(&self, handle: HANDLE) -> io::Result<()> {
        // SAFETY: the caller's handle is open; only the DACL is set.
        let status = unsafe {
            SetSecurityInfo(
                handle,
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                self.acl(),
                std::ptr::null(),
            )
        };
        win32_result(status)
    }
}

/// A Win32 status as a result.
pub(crate) fn win32_result(status: u32) -> io::Result<()> {
    if status == ERROR_SUCCESS {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(status as i32))
    }
}

/// `path` as a NUL-terminated UTF-16 string.
pub(crate) fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}

/// Whether the tests run under Wine (ntdll exports `wine_get_version`),
/// which reports access lists in part (see docs/TESTING.md).
#[cfg(test)]
pub(crate) fn under_wine() -> bool {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    let ntdll: Vec<u16> = "ntdll.dll".encode_utf16().chain(Some(0)).collect();
    // SAFETY: NUL-terminated names; ntdll is loaded in every process,
    // and the module handle needs no release.
    unsafe {
        let module = GetModuleHandleW(ntdll.as_ptr());
        !module.is_null() && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
    }
}
