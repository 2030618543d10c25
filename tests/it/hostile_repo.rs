//! Hostile servers, repositories and local users against `proxy --record`
//! and `elicit test` (#30 items 7-13): giant cassettes, symlink loops,
//! secrets in recordings, server logs other users could read, and the
//! command a cassette names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::page::as_other_user;
use crate::common::{Run, Test};

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
    let running = Test::new()
        .words("test --timeout 3s")
        .arg(&file)
        .env("TMPDIR", &tmp)
        .status(1)
        .spawn();
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
    running
        .wait_within(Duration::from_secs(30))
        .stderr_has("ERROR   ");
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
    Test::new()
        .words("test --timeout 5s")
        .current_dir(dir.path())
        .limit(Duration::from_secs(30))
        .status(1)
        .run()
        .stderr_has("1 test");
}

// ---- 8. Giant files ---------------------------------------------------------

/// Runs `test` to its end (at most `limit`): its stderr and its peak
/// resident memory in KiB.
pub(crate) fn run_measured(test: Test, limit: Duration) -> (String, u64) {
    let (run, peak_kib) = test.limit(limit).run_measured();
    (run.stderr().to_string(), peak_kib)
}

/// elicit's peak memory doing `args` on nothing much: the idle size.
fn idle_kib() -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("small.cassette.json");
    std::fs::write(&f, "{}").unwrap();
    // Not a cassette: refused at once (2), the least elicit does.
    let test = Test::new().arg("test").arg(&f).status(2);
    run_measured(
        test.stderr_unchecked("only its size is measured"),
        Duration::from_secs(30),
    )
    .1
}

const MIB: u64 = 1024;

#[test]
fn a_giant_cassette_is_refused_within_64_mib_of_idle() {
    let idle = idle_kib();
    let dir = tempfile::tempdir().unwrap();
    // 32 MiB of [0,0,…], and 15 MiB (under the byte cap) of the same.
    for (name, size) in [("huge", 32usize << 20), ("values", 15 << 20)] {
        let f = dir.path().join(format!("{name}.cassette.json"));
        let mut text = String::with_capacity(size + 2);
        text.push('[');
        while text.len() < size {
            text.push_str("0,");
        }
        text.push_str("0]");
        std::fs::write(&f, &text).unwrap();
        drop(text);
        let test = Test::new().arg("test").arg(&f);
        let (err, peak) = run_measured(test.status(2), Duration::from_secs(60));
        eprintln!("{name}: peak {peak} KiB, idle {idle} KiB");
        assert!(err.contains(&f.display().to_string()), "{err}");
        assert!(err.contains("over the limit"), "the limit is named: {err}");
        assert!(
            peak < idle + 64 * MIB,
            "{name}: peak {peak} KiB, idle {idle} KiB"
        );
    }
}

#[test]
fn giant_answer_rules_and_lint_input_are_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rules.json");
    let mut text = String::from("[");
    while text.len() < (12 << 20) {
        text.push_str("0,");
    }
    text.push_str("0]");
    std::fs::write(&f, &text).unwrap();
    drop(text);
    let idle = idle_kib();
    let test = Test::new().arg("lint").arg(&f);
    let (err, peak) = run_measured(test.failure(), Duration::from_secs(60));
    assert!(err.contains("more than 500000 values"), "{err}");
    assert!(
        peak < idle + 64 * MIB,
        "lint: peak {peak} KiB, idle {idle} KiB"
    );
    let cassette = dir.path().join("a.cassette.json");
    write(&cassette, &cassette_value());
    let test = Test::new().words("test --answers").arg(&f).arg(&cassette);
    let (err, peak) = run_measured(test.status(2), Duration::from_secs(60));
    assert!(
        err.contains("rules.json") && err.contains("over the limit"),
        "{err}"
    );
    assert!(
        peak < idle + 64 * MIB,
        "rules: peak {peak} KiB, idle {idle} KiB"
    );
}

fn cassette_value() -> Value {
    cassette(&["false"], "t")
}

// ---- 7. proxy --record parses within bounds -------------------------------

fn hostile(mode: &str) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/hostile/server.py");
    vec!["python3".into(), script.display().to_string(), mode.into()]
}

fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"t","arguments":{}}}"#;

/// The proxy's peak memory above its size after the handshake, relaying a
/// 48 MB reply, with `extra` flags.
fn proxy_big_reply_growth(extra: &[&str]) -> u64 {
    let mut proxy = Test::new()
        .words("proxy --no-input --shutdown-grace 2s")
        .args(extra)
        .server(&hostile("big_line"))
        .env("HOSTILE_BYTES", "48000000")
        .feed()
        .spawn();
    proxy.write(format!("{INIT}\n").as_bytes());
    proxy.next_raw_line();
    let idle = vm_hwm_kib(proxy.id());
    proxy.write(format!("{CALL}\n").as_bytes());
    let reply = proxy.next_raw_line();
    assert_eq!(reply.len(), 48_000_000, "the reply is relayed whole");
    drop(reply);
    let peak = vm_hwm_kib(proxy.id());
    proxy.close_stdin();
    proxy.wait_within(Duration::from_secs(30));
    eprintln!(
        "proxy {extra:?}: VmHWM {idle} KiB after the handshake, {peak} KiB after a 48 MB reply"
    );
    peak.saturating_sub(idle)
}

#[test]
fn proxy_record_relays_a_48_mb_reply_within_64_mib() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.cassette.json");
    let growth = proxy_big_reply_growth(&["--record", file.to_str().unwrap()]);
    assert!(growth < 64 * MIB, "grew {growth} KiB with --record");
}

// ---- 10. --record keeps no secrets ------------------------------------------

fn cassette_server() -> Vec<String> {
    vec![
        "python3".into(),
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/servers/cassette_server.py")
            .display()
            .to_string(),
    ]
}

/// `elicit ARGS` with `env`, ending with `status`: its stderr.
fn elicit_env(args: &[&str], env: &[(&str, &str)], status: i32) -> String {
    let run = Test::new()
        .args(args)
        .env_remove("ELICIT_SECRET_PASSWORD")
        .envs(env)
        .status(status)
        .stdout_unchecked(
            "the server's echo of the answers; what is kept out of the cassette is checked",
        )
        .run();
    run.stderr().to_string()
}

#[test]
fn a_masked_fields_value_is_left_out_of_a_recording_and_replayed_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.cassette.json");
    let server = cassette_server();
    let mut args: Vec<&str> = "call --no-input --server-log /dev/null --record"
        .split(' ')
        .collect();
    args.push(file.to_str().unwrap());
    args.extend("--tool profile -a name=Ada -a password=hunter2 -a accept --".split(' '));
    args.extend(server.iter().map(String::as_str));
    let secret = [("CASSETTE_FORM", "secret")];
    let err = elicit_env(&args, &secret, 0);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let answer = &v["elicitations"][0]["answer"];
    assert_eq!(answer["content"]["name"], "Ada");
    assert_eq!(
        answer["content"]["password"],
        json!({"$env": "ELICIT_SECRET_PASSWORD"}),
        "{v}"
    );
    assert!(
        err.contains("password") && err.contains("ELICIT_SECRET_PASSWORD"),
        "what was left out is said: {err}"
    );
    // Replay: the variable unset is named; set, the test passes.
    let err = elicit_env(&["test", file.to_str().unwrap()], &secret, 1);
    assert!(
        err.contains("set the environment variable ELICIT_SECRET_PASSWORD"),
        "{err}"
    );
    elicit_env(
        &["test", file.to_str().unwrap()],
        &[
            ("CASSETTE_FORM", "secret"),
            ("ELICIT_SECRET_PASSWORD", "hunter2"),
        ],
        0,
    );
}

// ---- 13. The command a cassette names ---------------------------------------

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_changed_cassettes_command_is_shown_and_allow_server_pins_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let tests = repo.join("elicit-tests");
    std::fs::create_dir(&tests).unwrap();
    git(repo, &["init", "-q"]);
    write(&tests.join("a.cassette.json"), &cassette(&["false"], "t"));
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "a"]);
    std::fs::write(repo.join("README"), "x").unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "readme"]);
    // A pull request adds a cassette that runs something else.
    let pwned = repo.join("pwned");
    let evil = format!("touch {}", pwned.display());
    write(
        &tests.join("b.cassette.json"),
        &cassette(&["sh", "-c", &evil], "t"),
    );
    let run = |extra: &[&str], status: i32| {
        let run: Run = Test::new()
            .words("test --timeout 5s -j 1")
            .args(extra)
            .current_dir(repo)
            .status(status)
            .run();
        run.stderr().to_string()
    };
    // b's server is no MCP server: its test fails.
    let err = run(&[], 1);
    assert!(
        err.contains("elicit-tests/b.cassette.json runs sh -c") && err.contains("not committed"),
        "the new cassette's command is shown: {err}"
    );
    assert!(
        !err.contains("a.cassette.json runs"),
        "an unchanged one is not: {err}"
    );
    // Committed, it is still shown: the last commit changed it.
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "b"]);
    std::fs::remove_file(&pwned).ok();
    let err = run(&[], 1);
    assert!(
        err.contains("b.cassette.json runs sh -c") && err.contains("changed since HEAD~1"),
        "{err}"
    );
    std::fs::remove_file(&pwned).ok();
    // Pinned: only `false` may run; b is refused, named, and not run.
    let err = run(&["--allow-server", "false"], 2);
    assert!(
        err.contains("b.cassette.json")
            && err.contains("/server")
            && err.contains("--allow-server"),
        "{err}"
    );
    assert!(!pwned.exists(), "the command not allowed did not run");
    assert!(err.contains("1 failed"), "a (allowed) ran: {err}");
}

/// In a repository with one commit the default `--since HEAD~1` names no
/// commit: the cassette's command is shown as new, with no word of git
/// failing.
#[test]
fn one_commit_shows_the_command_as_new_without_git_noise() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    write(&repo.join("a.cassette.json"), &cassette(&["false"], "t"));
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "first"]);
    let run = Test::new()
        .words("test --timeout 5s a.cassette.json")
        .current_dir(repo)
        // Its server, `false`, is no MCP server.
        .status(1)
        .run();
    let err = &run.stderr();
    assert!(!err.contains("git could not"), "{err}");
    assert!(
        err.contains(
            "a.cassette.json runs false (new: HEAD~1 is before the repository's first commit)"
        ),
        "{err}"
    );
}

// ---- 5, 6. What waits in the proxy is bounded ------------------------------

fn status_value(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The proxy with the browser page (nobody answers it, so elicitations
/// wait), a tool of the hostile server `mode` called; returns the tool's
/// `errors`, the growth of the proxy's peak memory (KiB) and its threads.
fn flood_through_the_page(mode: &[&str]) -> (u64, u64, u64) {
    use crate::common::page::{call_tool, proxy};
    let mut server = hostile(mode[0]);
    server.extend(mode[1..].iter().map(|s| s.to_string()));
    let mut p = proxy(&["--ui", "browser", "--no-open"], &server);
    let pid = p.child.id();
    let idle = status_value(pid, "VmHWM:");
    call_tool(&mut p, 2, "t", json!({}));
    let reply = p.reply(2);
    let got: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let peak = status_value(pid, "VmHWM:");
    let threads = status_value(pid, "Threads:");
    eprintln!("{mode:?}: VmHWM {idle} KiB idle, {peak} KiB after; {threads} threads; {got}");
    (got["errors"].as_u64().unwrap(), peak - idle, threads)
}

#[test]
fn elicitations_repeating_one_id_are_refused_and_do_not_grow_threads() {
    let (errors, growth, threads) = flood_through_the_page(&["same_id_flood"]);
    assert_eq!(errors, 299, "every repeat of a pending id is refused");
    assert!(threads < 40, "{threads} threads");
    assert!(growth < 64 * MIB, "grew {growth} KiB");
}

/// 40 elicitations of 2 MiB: only those within the bytes bound (8 MiB)
/// wait, the rest are refused, though their number is under 64.
#[test]
fn elicitations_waiting_are_bounded_in_bytes() {
    let (errors, growth, _) = flood_through_the_page(&["big_elicitations"]);
    assert!((35..40).contains(&errors), "{errors} refused");
    assert!(growth < 64 * MIB, "grew {growth} KiB");
}

/// One elicitation line over the bytes bound (some 40 MB) is refused from
/// its head, never parsed: the proxy holds the line, not the line and its
/// parsed tree.
#[test]
fn one_giant_elicitation_is_refused_before_it_is_parsed() {
    use crate::common::page::{call_tool, proxy};
    let mut p = proxy(
        &["--ui", "browser", "--no-open"],
        &hostile("one_giant_elicitation"),
    );
    let pid = p.child.id();
    let idle = status_value(pid, "VmHWM:");
    call_tool(&mut p, 2, "t", json!({}));
    let reply = p.reply(2);
    let got: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let peak = status_value(pid, "VmHWM:");
    eprintln!("one giant elicitation: VmHWM {idle} KiB idle, {peak} KiB after; {got}");
    assert_eq!(got["reply"]["error"]["code"], -32000, "{got}");
    assert!(
        got["reply"]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("bytes")),
        "{got}"
    );
    assert!(peak - idle < 64 * MIB, "grew {} KiB", peak - idle);
}
