//! Who owns a file or folder on disk and whom else it lets in, as
//! [`super::file_access`] and [`super::dir_access`] read it back (the
//! descriptor's judgement itself is tested in access.rs, in memory), and
//! [`super::make_private`] and [`super::make_file_private`] closing it.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use windows_sys::Win32::Security::{CONTAINER_INHERIT_ACE, OBJECT_INHERIT_ACE};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ALL_ACCESS, FILE_GENERIC_READ, FILE_GENERIC_WRITE,
};

use super::{
    create_private_dir, dir_access, file_access, make_file_private, make_private, open_private,
};
use crate::windows::acl::{
    allowing, current_user_sid, set_dacl_on_path, sid_from_bytes, under_wine,
};

/// S-1-1-0, Everyone.
const EVERYONE: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];

fn private_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("elicit-access-{}", uuid::Uuid::new_v4()));
    create_private_dir(&dir).unwrap();
    dir
}

fn new_private_file(path: &Path) -> File {
    let mut options = OpenOptions::new();
    options.create_new(true).write(true);
    open_private(&options, path).unwrap()
}

/// An access list allowing this user everything, then `others`.
fn mine_and(others: &[(&[u64], u32, u32)]) -> Vec<u64> {
    let me = current_user_sid().unwrap();
    let mut entries = vec![(me.as_slice(), FILE_ALL_ACCESS, 0)];
    entries.extend_from_slice(others);
    allowing(&entries).unwrap()
}

#[test]
fn a_private_file_and_folder_read_back_as_mine_and_closed() {
    let dir = private_dir();
    let path = dir.join("entry.json");
    let f = new_private_file(&path);
    for (what, access) in [
        ("folder", dir_access(&dir).unwrap()),
        ("file", file_access(&f).unwrap()),
    ] {
        assert!(access.mine, "{what}: {access:?}");
        assert!(access.who.starts_with("S-1-"), "{what}: {access:?}");
        assert_eq!(access.writable_by_others, None, "{what}: {access:?}");
        assert!(!access.open_to_others, "{what}: {access:?}");
    }
    drop(f);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_list_that_lets_everyone_write_reads_as_writable_by_others_until_made_private() {
    let dir = private_dir();
    let path = dir.join("entry.json");
    drop(new_private_file(&path));
    let everyone = sid_from_bytes(&EVERYONE);
    let open = mine_and(&[(
        everyone.as_slice(),
        FILE_GENERIC_READ | FILE_GENERIC_WRITE,
        0,
    )]);
    set_dacl_on_path(&path, open.as_ptr().cast(), true).unwrap();
    let f = File::open(&path).unwrap();
    let access = file_access(&f).unwrap();
    assert!(access.mine, "{access:?}");
    let why = access.writable_by_others.clone().unwrap_or_default();
    assert!(why.contains("Everyone (S-1-1-0)"), "{access:?}");
    assert!(why.starts_with("its access list lets "), "{access:?}");
    assert!(access.open_to_others, "{access:?}");
    make_file_private(&f).unwrap();
    let access = file_access(&f).unwrap();
    assert_eq!(access.writable_by_others, None, "{access:?}");
    assert!(!access.open_to_others, "{access:?}");
    drop(f);

    // A folder likewise, by its path.
    let inner = dir.join("tokens");
    create_private_dir(&inner).unwrap();
    let inherit = OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE;
    let open = mine_and(&[(everyone.as_slice(), FILE_ALL_ACCESS, inherit)]);
    set_dacl_on_path(&inner, open.as_ptr().cast(), true).unwrap();
    let access = dir_access(&inner).unwrap();
    assert!(access.mine && access.open_to_others, "{access:?}");
    assert!(
        access
            .writable_by_others
            .as_deref()
            .is_some_and(|w| w.contains("S-1-1-0")),
        "{access:?}"
    );
    make_private(&inner, &fs::metadata(&inner).unwrap()).unwrap();
    let access = dir_access(&inner).unwrap();
    assert!(!access.open_to_others, "{access:?}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_null_dacl_on_a_file_reads_as_open_to_everyone() {
    // On a file: Windows keeps the NULL DACL; Wine (storing no
    // descriptor) turns it into mode 777, read back as an entry
    // allowing Everyone everything.
    let dir = private_dir();
    let path = dir.join("entry.json");
    drop(new_private_file(&path));
    set_dacl_on_path(&path, std::ptr::null(), false).unwrap();
    let access = file_access(&File::open(&path).unwrap()).unwrap();
    assert!(access.open_to_others, "{access:?}");
    let why = access.writable_by_others.unwrap_or_default();
    let expected = if under_wine() {
        "Everyone (S-1-1-0)"
    } else {
        "NULL DACL"
    };
    assert!(why.contains(expected), "{why:?}");
    fs::remove_dir_all(&dir).unwrap();
}
