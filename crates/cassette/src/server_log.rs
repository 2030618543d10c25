//! A server's stderr during a replay or an explored variant: kept in a
//! private file and read back, its last words or the exception it reported,
//! when a test fails.

use std::path::PathBuf;

use elicit_core::text::sanitize::sanitize_line;
use elicit_session::transport::server_stderr::log_tail;

/// A file for one server's stderr, read back when the test fails: created
/// 0600 in a folder of its own created 0700 (both by `tempfile`, under
/// `TMPDIR`), so no other local user can read what the server wrote. Both
/// are removed when it is dropped.
pub(crate) struct ServerLog {
    file: Option<tempfile::NamedTempFile>,
    _dir: Option<elicit_platform::fs::PrivateTempDir>,
}

impl ServerLog {
    pub(crate) fn new() -> Self {
        let dir = elicit_platform::fs::private_temp_dir("elicit-test-").ok();
        let file = dir.as_ref().and_then(|d| {
            tempfile::Builder::new()
                .prefix("server-")
                .suffix(".log")
                .tempfile_in(d.path())
                .ok()
        });
        ServerLog { file, _dir: dir }
    }

    pub(crate) fn path(&self) -> Option<PathBuf> {
        self.file.as_ref().map(|f| f.path().to_path_buf())
    }

    /// The last lines the server wrote, sanitised, for a failure report;
    /// of a boxed traceback (FastMCP's, drawn by rich), its exception line
    /// rather than the box's rows.
    pub(crate) fn tail(&self) -> Vec<String> {
        last_words(&self.tail_text())
    }

    /// The exception the server last reported on stderr, on one line, if
    /// any: a failure the server caught itself still left it there.
    pub(crate) fn exception(&self) -> Option<String> {
        let text = self.tail_text();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        exception_line(&lines)
    }

    fn tail_text(&self) -> String {
        self.path().map(|p| log_tail(&p, 4096)).unwrap_or_default()
    }
}

/// The last 8 non-blank lines of a server's stderr, sanitised; when they
/// hold a boxed traceback, its exception line alone (or, with none found,
/// the lines outside the box).
fn last_words(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if !lines.iter().any(|l| is_box_row(l)) {
        let from = lines.len().saturating_sub(8);
        return lines[from..].iter().map(|l| sanitize_line(l)).collect();
    }
    if let Some(exception) = exception_line(&lines) {
        return vec![exception];
    }
    let outside: Vec<&str> = lines.into_iter().filter(|l| !is_box_row(l)).collect();
    let from = outside.len().saturating_sub(8);
    outside[from..].iter().map(|l| sanitize_line(l)).collect()
}

/// A row of a box drawn around a traceback (rich's, or another's).
fn is_box_row(line: &str) -> bool {
    line.trim_start()
        .starts_with(['│', '╭', '╰', '┃', '┏', '┗', '║', '╔', '╚'])
}

/// The last `Name…Error: message` line (inside a box or not), with the
/// lines a narrow log wrapped it onto, on one sanitised line.
fn exception_line(lines: &[&str]) -> Option<String> {
    static EXCEPTION: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let pattern = EXCEPTION.get_or_init(|| {
        regex::Regex::new(
            r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Iteration|Group)(?::\s.*)?$",
        )
        .expect("a valid pattern")
    });
    let bare = |l: &str| l.trim().trim_matches(['│', '┃', '║']).trim().to_string();
    let at = lines.iter().rposition(|l| pattern.is_match(&bare(l)))?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut text = bare(lines[at]);
    for more in lines[at + 1..].iter().take(4) {
        if is_box_row(more)
            || indent(more) != indent(lines[at])
            || more.trim_start().starts_with('[')
        {
            break;
        }
        text.push(' ');
        text.push_str(more.trim());
    }
    Some(sanitize_line(&text))
}
