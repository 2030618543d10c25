//! A stdio server never outlives elicit: not when it ignores SIGTERM (the
//! proxy passes the signal on, then ends the server by force), and not
//! when elicit itself is killed with SIGKILL, which no handler sees (on
//! Linux the server dies with it, `PR_SET_PDEATHSIG`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::Test;

fn ignoring_server(pidfile: &Path) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/ignores_term.py");
    vec![
        "python3".into(),
        script.display().to_string(),
        pidfile.display().to_string(),
    ]
}

/// Waits up to `limit` for `cond`, looking every 20 ms.
fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a process that still runs (a zombie has ended).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next()),
            Some('Z') | Some('X')
        ),
        Err(_) => false,
    }
}

/// The server's pid, once it has started and ignores SIGTERM.
fn server_pid(pidfile: &Path) -> i32 {
    let mut pid = None;
    let started = eventually(Duration::from_secs(20), || {
        pid = std::fs::read_to_string(pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok());
        pid.is_some()
    });
    // (A failure here ends elicit too: a `Running` dropped is killed.)
    assert!(started, "the server never started");
    pid.unwrap()
}

/// Ends `pid` if a test failed with it still running, so a failure leaves
/// nothing behind either.
struct Reap(i32);

impl Drop for Reap {
    fn drop(&mut self) {
        if running(self.0) {
            // SAFETY: signalling a process this test started (through elicit).
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}

#[test]
fn sigterm_ends_the_proxy_and_a_server_that_ignores_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    let proxy = Test::new()
        .args(["proxy", "--no-input"])
        .server(&ignoring_server(&pidfile))
        .feed()
        .spawn();
    let pid = server_pid(&pidfile);
    let _reap = Reap(pid);
    let began = Instant::now();
    proxy.signal(libc::SIGTERM);
    // The client still holds the proxy's stdin open: only the signal ends
    // it (a proxy that ignored SIGTERM because its server did fails here).
    // Passed on, a grace, then SIGKILL: the server's status says so.
    proxy
        .status(128 + libc::SIGKILL)
        .wait_within(Duration::from_secs(15));
    assert!(
        eventually(Duration::from_secs(5), || !running(pid)),
        "the server is still running"
    );
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn sighup_ends_the_proxy_and_a_server_that_ignores_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    let proxy = Test::new()
        .args(["proxy", "--no-input"])
        .server(&ignoring_server(&pidfile))
        .feed()
        .spawn();
    let pid = server_pid(&pidfile);
    let _reap = Reap(pid);
    proxy.signal(libc::SIGHUP);
    // A proxy that ignored SIGHUP because its server did fails here; the
    // server, ignoring it too, is ended by SIGKILL after the grace.
    proxy
        .status(128 + libc::SIGKILL)
        .wait_within(Duration::from_secs(15));
    assert!(eventually(Duration::from_secs(5), || !running(pid)));
}

/// SIGKILL of elicit, then the server: gone within seconds (Linux: the
/// parent-death signal is what ends it).
#[cfg(target_os = "linux")]
fn sigkill_leaves_no_server(args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    let elicit = Test::new()
        .args(args)
        .server(&ignoring_server(&pidfile))
        .feed()
        .spawn();
    let pid = server_pid(&pidfile);
    let _reap = Reap(pid);
    elicit.kill(); // SIGKILL
    assert!(
        eventually(Duration::from_secs(10), || !running(pid)),
        "the server (pid {pid}) outlived a SIGKILL of elicit {args:?}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_of_the_proxy_leaves_no_stdio_server_behind() {
    sigkill_leaves_no_server(&["proxy", "--no-input"]);
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_of_call_leaves_no_stdio_server_behind() {
    sigkill_leaves_no_server(&["call", "--no-input", "--tool", "anything"]);
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_of_elicit_test_leaves_no_stdio_server_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    let cassette = dir.path().join("hang.cassette.json");
    let server = ignoring_server(&pidfile);
    std::fs::write(
        &cassette,
        serde_json::json!({
            "elicit": "cassette/1",
            "server": {"command": server},
            "tool": "anything",
            "arguments": {},
            "elicitations": [],
            "result": {"content": []}
        })
        .to_string(),
    )
    .unwrap();
    let elicit = Test::new()
        .args(["test", cassette.to_str().unwrap()])
        .stderr_unchecked("killed mid-run: what it said by then is not the point")
        .spawn();
    let pid = server_pid(&pidfile);
    let _reap = Reap(pid);
    elicit.kill();
    assert!(
        eventually(Duration::from_secs(10), || !running(pid)),
        "the server (pid {pid}) outlived a SIGKILL of elicit test"
    );
}

/// SIGTERM in the middle of `elicit test`: the replay's server is ended and
/// the private folder its log was kept in goes too, whichever comes first:
/// the replay dropping it, or the handler's exit (which drops nothing, so
/// it removes the folder itself; the platform's unit test shows that part).
#[test]
fn sigterm_during_a_replay_leaves_no_private_folder_behind() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let pidfile = dir.path().join("server.pid");
    let cassette = dir.path().join("hang.cassette.json");
    let c = serde_json::json!({"elicit": "cassette/1",
        "server": {"command": ignoring_server(&pidfile)}, "tool": "t", "elicitations": []});
    std::fs::write(&cassette, c.to_string()).unwrap();
    let replay = Test::new()
        .arg("test")
        .arg(&cassette)
        .env("TMPDIR", &tmp)
        .stderr_unchecked("ended by a signal in the middle: what is left behind is the point")
        .spawn();
    let pid = server_pid(&pidfile);
    let _reap = Reap(pid);
    let entries = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        entries().len(),
        1,
        "the replay's log folder: {:?}",
        entries()
    );
    replay.signal(libc::SIGTERM);
    replay
        .status(128 + libc::SIGTERM)
        .wait_within(Duration::from_secs(15));
    assert!(entries().is_empty(), "left behind: {:?}", entries());
    assert!(eventually(Duration::from_secs(5), || !running(pid)));
}
