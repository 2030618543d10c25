//! Who owns a file or folder and whom else it lets in ([`Access`]), and
//! what that means for a file that only its user may read: the judgement
//! both systems' `fs` share, below them (it imports nothing of the crate).

use std::fs::{File, FileType};
use std::io::{self, Error, ErrorKind};

/// Who owns a file or folder and whom else it lets in, as far as trusting
/// it goes: read from the owner's uid and the mode on Unix, from the owner
/// SID and the access list on Windows ([`crate::fs::file_access`],
/// [`crate::fs::dir_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// It belongs to the user elicit runs as (on Windows, also to SYSTEM
    /// or the Administrators group, who may change any file anyway).
    pub mine: bool,
    /// The owner, for a message (`uid 1000`; a SID, with the account's
    /// name when it is not the user's).
    pub who: String,
    /// Why others than the owner could write it (`mode 664`; which
    /// accounts its access list lets write), if they can.
    pub writable_by_others: Option<String>,
    /// Whether others than the owner have any access to it (what
    /// `make_private` takes away).
    pub open_to_others: bool,
}

/// Refuses `file` (just opened by `fs::open_private_for_writing`) for what
/// only this user may read: not a regular file, another user's, or open
/// to others. Said as the error, without the path (the caller has it).
/// The system's own `describe_kind` and `file_access` are passed in: this
/// file is below both systems' `fs`, which call it.
pub(crate) fn refuse_unless_private(
    file: &File,
    describe_kind: fn(FileType) -> &'static str,
    file_access: fn(&File) -> io::Result<Access>,
) -> io::Result<()> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = describe_kind(meta.file_type());
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file"),
        ));
    }
    let access = file_access(file)?;
    let refusal = if !access.mine {
        format!(
            "it belongs to another user ({}), who could read what is written; remove it",
            access.who
        )
    } else if access.open_to_others {
        "other users may open it; make it yours alone (chmod 600) or remove it".to_string()
    } else {
        return Ok(());
    };
    Err(Error::new(ErrorKind::PermissionDenied, refusal))
}
