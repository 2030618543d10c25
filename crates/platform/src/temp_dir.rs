//! Private temporary folders that a termination does not leave behind.
//!
//! A folder is removed when its [`PrivateTempDir`] is dropped, but SIGTERM
//! and SIGHUP end elicit with `exit` from the handler's thread
//! ([`crate::handlers::exit_on_termination`]), where nothing is dropped:
//! so every live folder is also listed here, and the handler removes what
//! is listed before it exits.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Folders to remove at a termination.
struct Listed(Mutex<Vec<PathBuf>>);

impl Listed {
    fn paths(&self) -> MutexGuard<'_, Vec<PathBuf>> {
        // A panic while the list was held leaves it whole: go on with it.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn add(&self, path: &Path) {
        self.paths().push(path.to_path_buf());
    }

    fn take_out(&self, path: &Path) {
        self.paths().retain(|listed| listed != path);
    }

    /// Removes every listed folder; what cannot be removed is left (there is
    /// nobody to tell at that moment).
    fn remove_all(&self) {
        for path in self.paths().drain(..) {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// The folders of the [`PrivateTempDir`]s alive now.
static LIVE: Listed = Listed(Mutex::new(Vec::new()));

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
        LIVE.add(dir.path());
        PrivateTempDir { dir }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        LIVE.take_out(self.dir.path());
    }
}

/// Removes every folder still alive, for a process about to exit without
/// dropping them.
pub(crate) fn remove_all_live() {
    LIVE.remove_all();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_temp_dir_is_listed_while_it_lives() {
        let dir = PrivateTempDir::listed(tempfile::tempdir().unwrap());
        let path = dir.path().to_path_buf();
        assert!(LIVE.paths().contains(&path));
        drop(dir);
        assert!(!path.exists());
        assert!(!LIVE.paths().contains(&path));
    }

    // On a list of its own: the process-wide one holds other tests' folders.
    #[test]
    fn remove_all_removes_what_is_listed_and_nothing_taken_out() {
        let listed = Listed(Mutex::new(Vec::new()));
        let (kept, taken_out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(kept.path().join("server.log"), "x").unwrap();
        listed.add(kept.path());
        listed.add(taken_out.path());
        listed.take_out(taken_out.path());
        listed.remove_all();
        assert!(!kept.path().exists(), "a listed folder outlived remove_all");
        assert!(taken_out.path().exists());
        assert!(listed.paths().is_empty());
    }
}
