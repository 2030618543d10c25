//! Reading a file a person named (`@FILE`, an answers file, a cassette):
//! only a regular file, and only up to a limit. `/dev/zero`, a FIFO or a
//! huge file would otherwise be read without end (or block forever waiting
//! for a writer).

use std::io::{self, Read};

use crate::fs::{describe_kind, non_blocking};

/// The text of the regular file at `path`, at most `limit` bytes of it. The
/// file is opened non-blocking and checked on the open descriptor, so a
/// FIFO never blocks and nothing can be swapped in between the check and
/// the read; a file whose size is over `limit` is refused before anything
/// is read. The errors say what the file is, for "cannot read FILE: …".
pub fn read_regular_file(path: &str, limit: u64) -> io::Result<String> {
    let file = match non_blocking(std::fs::OpenOptions::new().read(true)).open(path) {
        Ok(file) => file,
        // Windows does not open a folder as a file (access denied): say
        // what it is, as a Unix open followed by the check below does.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(match std::fs::metadata(path) {
                Ok(meta) if meta.is_dir() => not_regular(meta.file_type()),
                _ => e,
            })
        }
        Err(e) => return Err(e),
    };
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(not_regular(kind));
    }
    let size = file.metadata()?.len();
    if size > limit {
        return Err(io::Error::other(format!(
            "it is {size} bytes: more than {limit} bytes, over the limit"
        )));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::other(format!(
            "it is more than {limit} bytes, over the input limit"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is not valid UTF-8 (first bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Why a file of `kind` is not read.
fn not_regular(kind: std::fs::FileType) -> io::Error {
    let what = describe_kind(kind);
    io::Error::other(format!("it is {what}: @FILE reads only regular files"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(bytes: &[u8]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers.json");
        std::fs::write(&path, bytes).unwrap();
        (dir, path.to_string_lossy().into_owned())
    }

    #[test]
    fn a_regular_file_within_the_limit_is_read_whole() {
        let (_dir, path) = written(b"{\"name\":\"Ada\"}");
        assert_eq!(read_regular_file(&path, 14).unwrap(), "{\"name\":\"Ada\"}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_unread() {
        let (_dir, path) = written(b"0123456789");
        let e = read_regular_file(&path, 9).unwrap_err().to_string();
        assert_eq!(e, "it is 10 bytes: more than 9 bytes, over the limit");
    }

    #[test]
    fn a_directory_is_refused_by_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular_file(&dir.path().to_string_lossy(), 100).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a directory: @FILE reads only regular files"
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_with_its_offset() {
        let (_dir, path) = written(b"ab\xffcd");
        let e = read_regular_file(&path, 100).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            "it is not valid UTF-8 (first bad byte at offset 2)"
        );
    }
}
