//! Who owns a file or folder on Windows, and whom else its access list
//! lets in: read from its security descriptor (the owner SID and the
//! DACL), where Unix reads the owner's uid and the mode.
//!
//! Trusted besides the user elicit runs as (the process token's user):
//! SYSTEM and the Administrators group. They can change any file on the
//! machine anyway, a profile folder's inherited list names them, and an
//! elevated process's files are owned by Administrators by default; an
//! owner or entry for anyone else is another user's.
//!
//! The entries are read, not evaluated as an access check would: an allow
//! entry for another SID counts even if a deny entry before it takes the
//! same rights away, so a list can be judged more open than it is, never
//! less. Entries that only pass on to what is created inside (inherit
//! only) do not apply to the object itself and are skipped.
//!
//! windows-sys has no safe wrappers; each `unsafe` block below is one
//! Win32 call or a read of what one returned, with why it is sound.

use std::ffi::c_void;
use std::io;
use std::path::Path;

use windows_sys::Win32::Foundation::{
    LocalFree, ERROR_INSUFFICIENT_BUFFER, GENERIC_ALL, GENERIC_READ, GENERIC_WRITE, HANDLE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, GetNamedSecurityInfoW, GetSecurityInfo, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    AclSizeInformation, GetAce, GetAclInformation, GetLengthSid, GetSecurityDescriptorDacl,
    GetSecurityDescriptorOwner, IsValidSid, LookupAccountSidW, ACCESS_ALLOWED_ACE, ACE_HEADER, ACL,
    ACL_SIZE_INFORMATION, DACL_SECURITY_INFORMATION, INHERIT_ONLY_ACE, OWNER_SECURITY_INFORMATION,
    PSECURITY_DESCRIPTOR, PSID,
};
use windows_sys::Win32::Storage::FileSystem::{
    DELETE, FILE_APPEND_DATA, FILE_DELETE_CHILD, FILE_READ_DATA, FILE_WRITE_DATA, WRITE_DAC,
    WRITE_OWNER,
};
use windows_sys::Win32::System::SystemServices::{
    ACCESS_ALLOWED_ACE_TYPE, ACCESS_ALLOWED_CALLBACK_ACE_TYPE,
};

use super::acl::{current_user_sid, sid_from_bytes, wide, win32_result};
use crate::Access;

/// What is read of a descriptor: its owner and its DACL.
const WHAT: u32 = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;

/// Rights that change what a file says, or who may: its data (a folder's
/// new entries), a folder's entries removed, its access list, its owner.
/// Attributes and extended attributes leave the content as it is, and
/// `DELETE` alone removes a file without changing it (a rename into a
/// private folder needs that folder's write right too).
const WRITE: u32 = FILE_WRITE_DATA
    | FILE_APPEND_DATA
    | FILE_DELETE_CHILD
    | WRITE_DAC
    | WRITE_OWNER
    | GENERIC_WRITE
    | GENERIC_ALL;

/// Rights that read what a file says (a folder's list of entries), or
/// remove it: any of them, or a write right, opens the file to others.
const OPEN: u32 = FILE_READ_DATA | GENERIC_READ | DELETE | WRITE;

/// S-1-5-18, SYSTEM.
const SYSTEM: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0];
/// S-1-5-32-544, the Administrators group.
const ADMINISTRATORS: [u8; 16] = [1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 0x02, 0, 0];
/// S-1-3-4, OWNER RIGHTS: whoever owns the object.
const OWNER_RIGHTS: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 3, 4, 0, 0, 0];

/// A security descriptor the system allocated for the caller, freed with
/// `LocalFree` when dropped.
struct Allocated(PSECURITY_DESCRIPTOR);

impl Drop for Allocated {
    fn drop(&mut self) {
        // SAFETY: GetSecurityInfo or GetNamedSecurityInfoW allocated it for
        // the caller to free with LocalFree; nothing read from it (owner,
        // list) outlives this value: what is kept is copied out.
        unsafe { LocalFree(self.0) };
    }
}

/// The owner and access list of an open file (its handle needs
/// `READ_CONTROL`, which every open for reading or writing carries).
pub(crate) fn of_handle(handle: HANDLE) -> io::Result<Access> {
    // SAFETY: the caller's handle is open; the owner, group and list
    // pointers may be null since the whole descriptor is asked for, into
    // the place `read` gives.
    read(|sd| unsafe {
        GetSecurityInfo(
            handle,
            SE_FILE_OBJECT,
            WHAT,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sd,
        )
    })
}

/// The owner and access list of the file or folder at `path` (links
/// followed, as `std::fs::metadata` follows them).
pub(crate) fn of_path(path: &Path) -> io::Result<Access> {
    let name = wide(path);
    // SAFETY: `name` is NUL-terminated; as in [`of_handle`].
    read(|sd| unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            WHAT,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sd,
        )
    })
}

/// Judges the descriptor `get` puts in the place it is given (a Win32
/// call that allocates it, returning a status), then frees it.
fn read(get: impl FnOnce(*mut PSECURITY_DESCRIPTOR) -> u32) -> io::Result<Access> {
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    win32_result(get(&mut sd))?;
    let sd = Allocated(sd);
    // SAFETY: `sd` is the descriptor just returned, alive for the call.
    unsafe { judge(sd.0) }
}

/// One allow entry of a list that applies to the object itself.
struct Allowed {
    mask: u32,
    sid: Vec<u8>,
}

/// What the descriptor `sd` says, for the user elicit runs as.
///
/// # Safety
///
/// `sd` is a valid security descriptor (self-relative, as the system
/// returns them, or absolute), alive for the call.
unsafe fn judge(sd: PSECURITY_DESCRIPTOR) -> io::Result<Access> {
    let me = current_user_sid()?;
    // SAFETY: a SID from current_user_sid, in its buffer.
    let me = unsafe { sid_bytes(me.as_ptr() as PSID) }.unwrap_or_default();

    let (mut owner, mut defaulted): (PSID, i32) = (std::ptr::null_mut(), 0);
    // SAFETY: `sd` is valid (the caller's promise); the out pointers are
    // valid places.
    if unsafe { GetSecurityDescriptorOwner(sd, &mut owner, &mut defaulted) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the owner is null or a SID inside `sd`, alive.
    let owner = unsafe { sid_bytes(owner) };

    let (mut present, mut dacl): (i32, *mut ACL) = (0, std::ptr::null_mut());
    // SAFETY: `sd` is valid; the out pointers are valid places.
    if unsafe { GetSecurityDescriptorDacl(sd, &mut present, &mut dacl, &mut defaulted) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let entries = if present == 0 || dacl.is_null() {
        None
    } else {
        // SAFETY: a list inside `sd`, alive.
        Some(unsafe { allowed_entries(dacl) }?)
    };
    Ok(assess(&me, owner.as_deref(), entries.as_deref()))
}

/// The owner and list read, judged: see the module.
fn assess(me: &[u8], owner: Option<&[u8]>, entries: Option<&[Allowed]>) -> Access {
    let mine = owner.is_some_and(|o| o == me || o == SYSTEM || o == ADMINISTRATORS);
    let trusted = |sid: &[u8]| {
        sid == me || sid == SYSTEM || sid == ADMINISTRATORS || (mine && sid == OWNER_RIGHTS)
    };
    let who = match owner {
        None => "no owner".to_string(),
        // A name lookup can ask a domain controller: only for a message.
        Some(o) if mine => sid_string(o),
        Some(o) => describe(o),
    };
    let Some(entries) = entries else {
        return Access {
            mine,
            who,
            writable_by_others: Some(
                "it has no access list (a NULL DACL), which lets everyone read and write it".into(),
            ),
            open_to_others: true,
        };
    };
    let others: Vec<&Allowed> = entries.iter().filter(|e| !trusted(&e.sid)).collect();
    // Each account once, in the list's order.
    let mut writers: Vec<&[u8]> = Vec::new();
    for e in others.iter().filter(|e| e.mask & WRITE != 0) {
        if !writers.contains(&e.sid.as_slice()) {
            writers.push(&e.sid);
        }
    }
    let writable_by_others = (!writers.is_empty()).then(|| {
        let names: Vec<String> = writers.into_iter().map(describe).collect();
        format!("its access list lets {} write to it", names.join(", "))
    });
    Access {
        mine,
        who,
        writable_by_others,
        open_to_others: others.iter().any(|e| e.mask & OPEN != 0),
    }
}

/// The allow entries of `acl` that apply to the object itself.
///
/// # Safety
///
/// `acl` is a valid access list, alive for the call.
unsafe fn allowed_entries(acl: *const ACL) -> io::Result<Vec<Allowed>> {
    let mut size = ACL_SIZE_INFORMATION::default();
    // SAFETY: `acl` is valid (the caller's promise); `size` is the
    // class's struct, with its size.
    let ok = unsafe {
        GetAclInformation(
            acl,
            (&mut size as *mut ACL_SIZE_INFORMATION).cast(),
            std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut entries = Vec::new();
    for i in 0..size.AceCount {
        let mut ace: *mut c_void = std::ptr::null_mut();
        // SAFETY: `i` is below the list's count; `ace` is a valid place.
        if unsafe { GetAce(acl, i, &mut ace) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: every ACE starts with an ACE_HEADER.
        let header = unsafe { *ace.cast::<ACE_HEADER>() };
        let kind = u32::from(header.AceType);
        let allows = kind == ACCESS_ALLOWED_ACE_TYPE || kind == ACCESS_ALLOWED_CALLBACK_ACE_TYPE;
        if !allows || u32::from(header.AceFlags) & INHERIT_ONLY_ACE != 0 {
            continue;
        }
        let allowed = ace.cast::<ACCESS_ALLOWED_ACE>();
        // SAFETY: an allow entry (plain or with a condition after its SID)
        // is laid out as ACCESS_ALLOWED_ACE: the mask, then the SID from
        // SidStart, inside the entry.
        let (mask, sid) = unsafe {
            (
                (*allowed).Mask,
                sid_bytes(std::ptr::addr_of_mut!((*allowed).SidStart).cast()),
            )
        };
        // An entry whose SID is not valid grants nobody anything.
        if let Some(sid) = sid {
            entries.push(Allowed { mask, sid });
        }
    }
    Ok(entries)
}

/// The bytes of `sid`; `None` for a null or invalid one.
///
/// # Safety
///
/// `sid` is null or points at a SID's readable memory.
unsafe fn sid_bytes(sid: PSID) -> Option<Vec<u8>> {
    // SAFETY: `sid` is not null (checked first) and readable (the
    // caller's promise); IsValidSid checks its header before its length
    // is read.
    unsafe {
        if sid.is_null() || IsValidSid(sid) == 0 {
            return None;
        }
        let len = GetLengthSid(sid) as usize;
        Some(std::slice::from_raw_parts(sid.cast::<u8>(), len).to_vec())
    }
}

/// A SID for a message: its account's name, if it has one, and its
/// string form (`BUILTIN\Users (S-1-5-32-545)`).
fn describe(sid: &[u8]) -> String {
    let text = sid_string(sid);
    match account_name(sid) {
        Some(name) => format!("{name} ({text})"),
        None => text,
    }
}

/// The string form of a SID (`S-1-5-21-…`).
fn sid_string(sid: &[u8]) -> String {
    let sid = sid_from_bytes(sid);
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is a valid SID in an aligned buffer; `text` is a valid
    // place for the string, which the call allocates (freed below).
    if unsafe { ConvertSidToStringSidW(sid.as_ptr() as PSID, &mut text) } == 0 || text.is_null() {
        return "an unreadable SID".into();
    }
    // SAFETY: `text` is the NUL-terminated string just allocated.
    let shown = unsafe {
        let len = (0..).take_while(|&i| *text.add(i) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(text, len))
    };
    // SAFETY: allocated by ConvertSidToStringSidW for the caller to free
    // with LocalFree; not used after.
    unsafe { LocalFree(text.cast()) };
    shown
}

/// The account a SID names (`DOMAIN\name`, or `name` for one without a
/// domain, as Everyone), if the system knows it.
fn account_name(sid: &[u8]) -> Option<String> {
    let sid = sid_from_bytes(sid);
    let (mut name_len, mut domain_len, mut kind) = (0u32, 0u32, 0);
    // SAFETY: a size query: null buffers of length 0; the lengths and
    // kind are valid places; the SID is valid.
    let ok = unsafe {
        LookupAccountSidW(
            std::ptr::null(),
            sid.as_ptr() as PSID,
            std::ptr::null_mut(),
            &mut name_len,
            std::ptr::null_mut(),
            &mut domain_len,
            &mut kind,
        )
    };
    let error = io::Error::last_os_error();
    if ok != 0 || error.raw_os_error() != Some(ERROR_INSUFFICIENT_BUFFER as i32) {
        return None;
    }
    let mut name = vec![0u16; name_len as usize];
    let mut domain = vec![0u16; domain_len as usize];
    // SAFETY: the buffers hold the lengths the size query gave, and the
    // lengths say so.
    let ok = unsafe {
        LookupAccountSidW(
            std::ptr::null(),
            sid.as_ptr() as PSID,
            name.as_mut_ptr(),
            &mut name_len,
            domain.as_mut_ptr(),
            &mut domain_len,
            &mut kind,
        )
    };
    if ok == 0 {
        return None;
    }
    let name = String::from_utf16_lossy(&name[..name_len as usize]);
    let domain = String::from_utf16_lossy(&domain[..domain_len as usize]);
    Some(if domain.is_empty() {
        name
    } else {
        format!("{domain}\\{name}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::acl::allowing;
    use windows_sys::Win32::Security::{
        InitializeSecurityDescriptor, SetSecurityDescriptorDacl, SetSecurityDescriptorOwner,
        OBJECT_INHERIT_ACE, SECURITY_DESCRIPTOR,
    };
    use windows_sys::Win32::Storage::FileSystem::{FILE_ALL_ACCESS, FILE_GENERIC_READ};
    use windows_sys::Win32::System::SystemServices::SECURITY_DESCRIPTOR_REVISION;

    /// S-1-1-0, Everyone.
    const EVERYONE: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];
    /// S-1-5-32-545, the Users group (every local user).
    const USERS: [u8; 16] = [1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x21, 0x02, 0, 0];
    /// S-1-5-21-1-2-3-1001: a user of another (made-up) machine.
    const STRANGER: [u8; 28] = [
        1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0xe9, 3, 0, 0,
    ];

    /// An access list allowing this user everything, then `others`.
    fn mine_and(others: &[(&[u64], u32, u32)]) -> Vec<u64> {
        let me = current_user_sid().unwrap();
        let mut entries = vec![(me.as_slice(), FILE_ALL_ACCESS, 0)];
        entries.extend_from_slice(others);
        allowing(&entries).unwrap()
    }

    /// What [`judge`] says of an in-memory descriptor with this owner and,
    /// if `present`, this list (`None`: a NULL DACL).
    fn judged(owner: &[u64], present: bool, acl: Option<&[u64]>) -> Access {
        // SAFETY: an all-zero SECURITY_DESCRIPTOR is a valid value; it is
        // initialised next.
        let mut sd: SECURITY_DESCRIPTOR = unsafe { std::mem::zeroed() };
        let psd: PSECURITY_DESCRIPTOR = (&mut sd as *mut SECURITY_DESCRIPTOR).cast();
        let acl = acl.map_or(std::ptr::null(), |a| a.as_ptr().cast::<ACL>());
        // SAFETY: `psd` points at `sd`, which lives (as do the owner SID and
        // the list it refers to) until `judge` returns.
        unsafe {
            assert_ne!(
                InitializeSecurityDescriptor(psd, SECURITY_DESCRIPTOR_REVISION),
                0
            );
            assert_ne!(
                SetSecurityDescriptorOwner(psd, owner.as_ptr() as PSID, 0),
                0
            );
            assert_ne!(
                SetSecurityDescriptorDacl(psd, i32::from(present), acl, 0),
                0
            );
            judge(psd).unwrap()
        }
    }

    #[test]
    fn a_null_dacl_in_memory_reads_as_open_to_everyone() {
        let me = current_user_sid().unwrap();
        // The list's absence itself (on a file: fs_access_tests.rs).
        for present in [true, false] {
            let access = judged(&me, present, None);
            assert!(access.mine && access.open_to_others, "{access:?}");
            assert!(
                access
                    .writable_by_others
                    .as_deref()
                    .is_some_and(|w| w.contains("NULL DACL")),
                "{access:?}"
            );
        }
    }

    #[test]
    fn owners_and_entries_of_others_are_told_apart_from_this_users() {
        let me = current_user_sid().unwrap();
        let (stranger, users) = (sid_from_bytes(&STRANGER), sid_from_bytes(&USERS));
        let (system, admins) = (sid_from_bytes(&SYSTEM), sid_from_bytes(&ADMINISTRATORS));
        let closed = mine_and(&[
            (system.as_slice(), FILE_ALL_ACCESS, 0),
            (admins.as_slice(), FILE_ALL_ACCESS, 0),
        ]);

        // Another user's: not mine, named by its SID.
        let access = judged(&stranger, true, Some(&closed));
        assert!(!access.mine, "{access:?}");
        assert!(access.who.contains("S-1-5-21-1-2-3-1001"), "{access:?}");
        assert!(!access.open_to_others, "{access:?}");
        // The Administrators' (an elevated run's) and SYSTEM's count as the
        // user's own, as does the user's.
        for owner in [&admins, &system, &me] {
            let access = judged(owner, true, Some(&closed));
            assert!(access.mine, "{access:?}");
            assert!(!access.open_to_others, "{access:?}");
        }

        // Read by Users: open, not writable.
        let read = mine_and(&[(users.as_slice(), FILE_GENERIC_READ, 0)]);
        let access = judged(&me, true, Some(&read));
        assert!(access.open_to_others, "{access:?}");
        assert_eq!(access.writable_by_others, None, "{access:?}");
        // Written by another user: writable, named.
        let written = mine_and(&[(stranger.as_slice(), FILE_WRITE_DATA, 0)]);
        let access = judged(&me, true, Some(&written));
        let why = access.writable_by_others.unwrap_or_default();
        assert!(why.contains("S-1-5-21-1-2-3-1001"), "{why:?}");
        // An entry only passed on to what a folder holds is not the
        // folder's own.
        let everyone = sid_from_bytes(&EVERYONE);
        let passed_on = mine_and(&[(
            everyone.as_slice(),
            FILE_ALL_ACCESS,
            OBJECT_INHERIT_ACE | INHERIT_ONLY_ACE,
        )]);
        let access = judged(&me, true, Some(&passed_on));
        assert!(!access.open_to_others, "{access:?}");
    }
}
