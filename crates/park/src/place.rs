//! Where parked calls live: one private folder per user
//! (`elicit_platform::local::runtime_dir`), and in it, per call, its
//! endpoint (`ID.sock`: the socket; on Windows the marker that stands for
//! its named pipe) and what the holder prints (`ID.out`, `ID.err`,
//! read back when the call parks or ends). Nothing else is kept, and the
//! holder removes all three when the call ends.

use std::path::{Path, PathBuf};

use crate::ParkError;

/// A parked call's id: 12 lower-case hex digits, fresh for each call.
pub fn fresh_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

/// Checks an id given on the command line (it names files: nothing but
/// hex digits passes).
pub fn check_id(id: &str) -> Result<(), ParkError> {
    if id.len() == 12
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        Ok(())
    } else {
        Err(ParkError::usage(format!(
            "{:?} is not a parked call's id (12 hex digits, as `elicit call --park` printed)",
            elicit_core::text::sanitize::sanitize_line(id)
        )))
    }
}

/// The user's folder of parked calls, made private if new, refused if it
/// is not.
pub fn folder() -> Result<PathBuf, ParkError> {
    elicit_platform::local::runtime_dir()
        .map_err(|e| ParkError::failed(format!("cannot use the folder of parked calls: {e}")))
}

/// The files of one parked call.
#[derive(Debug, Clone)]
pub struct Files {
    /// The holder's endpoint (on Windows, its pipe's marker).
    pub socket: PathBuf,
    /// The holder's standard output.
    pub out: PathBuf,
    /// The holder's standard error.
    pub err: PathBuf,
}

impl Files {
    /// The files of call `id` in `folder`.
    pub fn of(folder: &Path, id: &str) -> Files {
        Files {
            socket: folder.join(format!("{id}.sock")),
            out: folder.join(format!("{id}.out")),
            err: folder.join(format!("{id}.err")),
        }
    }

    /// Removes them (what is already gone is no error).
    pub fn remove(&self) {
        for path in [&self.socket, &self.out, &self.err] {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The ids of the calls in `folder` with an endpoint, sorted.
pub fn ids(folder: &Path) -> Result<Vec<String>, ParkError> {
    let entries = std::fs::read_dir(folder)
        .map_err(|e| ParkError::failed(format!("cannot list {}: {e}", folder.display())))?;
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".sock")?.to_string();
            check_id(&id).ok().map(|_| id)
        })
        .collect();
    ids.sort();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fresh_looking_ids_pass() {
        let id = fresh_id();
        assert!(check_id(&id).is_ok());
        for bad in [
            "../../etc/x",
            "",
            "ABCDEF012345",
            "0123456789abc",
            "0123456789a/",
        ] {
            assert_eq!(check_id(bad).unwrap_err().exit, 2, "{bad}");
        }
    }
}
