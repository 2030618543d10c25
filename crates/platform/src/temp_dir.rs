//! Private temporary folders that a termination does not leave behind.
//!
//! A folder is removed when its [`PrivateTempDir`] is dropped, but SIGTERM
//! and SIGHUP end elicit with `exit` from the handler's thread
//! ([`crate::handlers::exit_on_termination`]), where nothing is dropped:
//! so every live folder is also listed here, and the handler removes what
//! is listed before it exits.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The folders of the [`PrivateTempDir`]s alive now.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it whole: go on with it.
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A folder only this user can enter (see each system's
/// `fs::private_temp_dir`), removed when dropped or when elicit is
/// terminated.
#[derive(Debug)]
pub struct PrivateTempDir {
    dir: tempfile::TempDir,
}

impl PrivateTempDir {
    /// Lists `dir` among the folders a termination removes.
    pub(crate) fn listed(dir: tempfile::TempDir) -> PrivateTempDir {
        live().push(dir.path().to_path_buf());
        PrivateTempDir { dir }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        live().retain(|path| path != self.dir.path());
    }
}

/// Removes every listed folder, for a process about to exit without
/// dropping them; what cannot be removed is left (nothing to tell anyone
/// at that moment).
pub(crate) fn remove_all_live() {
    for path in live().drain(..) {
        let _ = std::fs::remove_dir_all(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_folder_is_removed_by_remove_all_live_and_a_dropped_one_is_no_longer_listed() {
        let kept = PrivateTempDir::listed(tempfile::tempdir().unwrap());
        let dropped = PrivateTempDir::listed(tempfile::tempdir().unwrap());
        let dropped_path = dropped.path().to_path_buf();
        drop(dropped);
        assert!(!dropped_path.exists());
        assert!(!live().contains(&dropped_path));
        let kept_path = kept.path().to_path_buf();
        std::fs::write(kept_path.join("server.log"), "x").unwrap();
        assert!(live().contains(&kept_path));
        remove_all_live();
        assert!(
            !kept_path.exists(),
            "a listed folder outlived remove_all_live"
        );
        drop(kept);
    }
}
