//! Hostile servers, repositories and local users against `proxy --record`
//! and `elicit test` (#30 items 7-13): giant cassettes, symlink loops,
//! secrets in recordings, server logs other users could read, and the
//! command a cassette names.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::page::as_other_user;

const BIN: &str = env!("CARGO_BIN_EXE_elicit");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A hand-written cassette for `server`, calling `tool` with no elicitation.
fn cassette(server: &[&str], tool: &str) -> Value {
    json!({"elicit": "cassette/1", "server": {"command": server}, "tool": tool,
        "elicitations": []})
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, v.to_string()).unwrap();
}

/// The mode bits of a file.
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

// ---- 11. Server logs are private -------------------------------------------

#[test]
fn a_servers_log_is_private_to_elicits_user() {
    let dir = tempfile::tempdir().unwrap();
    // A world-traversable TMPDIR, as /tmp is.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let file = dir.path().join("slow.cassette.json");
    // The server writes a secret on stderr, then never answers.
    write(
        &file,
        &cassette(&["sh", "-c", "echo the-secret-token >&2; sleep 4"], "t"),
    );
    let mut child = Command::new(BIN)
        .args(["test", "--timeout", "3s", file.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Find the log while the test runs.
    let start = Instant::now();
    let log = loop {
        let found = walk(&tmp)
            .into_iter()
            .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("the-secret-token")));
        if let Some(f) = found {
            break f;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no server log under {}",
            tmp.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let parent = log.parent().unwrap();
    assert_eq!(mode(&log), 0o600, "{}", log.display());
    assert_ne!(parent, tmp, "the log is in a folder of its own");
    assert_eq!(mode(parent), 0o700, "{}", parent.display());
    // Another local user can read neither.
    if let Some(mut cat) = as_other_user("cat", &[log.to_str().unwrap()]) {
        let out = cat.output().unwrap();
        assert!(!out.status.success(), "nobody read the server's log");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("the-secret-token"));
    }
    let _ = crate::common::wait_at_most(&mut child, Duration::from_secs(30));
    assert!(walk(&tmp).is_empty(), "the log is removed at the end");
}

/// Every file under `dir` (not following links).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(walk(&p)),
            Ok(_) => out.push(p),
            Err(_) => {}
        }
    }
    out
}

// ---- 9. Symlink loops -------------------------------------------------------

#[test]
fn links_that_loop_in_elicit_tests_are_followed_once() {
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("elicit-tests");
    std::fs::create_dir(&tests).unwrap();
    std::os::unix::fs::symlink(".", tests.join("a")).unwrap();
    std::os::unix::fs::symlink(".", tests.join("b")).unwrap();
    std::fs::create_dir(tests.join("sub")).unwrap();
    std::os::unix::fs::symlink("..", tests.join("sub").join("up")).unwrap();
    write(&tests.join("one.cassette.json"), &cassette(&["false"], "t"));
    let mut child = Command::new(BIN)
        .args(["test", "--timeout", "5s"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = crate::common::wait_at_most(&mut child, Duration::from_secs(30));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("1 test"), "the cassette runs once: {err}");
}
