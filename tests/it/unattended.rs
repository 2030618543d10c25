//! Nobody at a terminal (a CI job, `setsid elicit … </dev/null`, a desktop
//! client's pipes): a run with an answer missing fails at once, naming the
//! fields and the flags that answer them, unless a browser really opened
//! the page or the person asked for the page; under `CI` it never falls
//! back to the page. Each elicit here runs in a session of its own, so it
//! has no controlling terminal whoever runs the tests.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{stub_openers, wait_up_to, BIN};

/// Far above "at once", far below a hang: a run that serves a page nobody
/// sees is killed here and fails the test.
const LIMIT: Duration = Duration::from_secs(15);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// elicit with no controlling terminal, null stdin (unless `stdin` is
/// given), no desktop, and openers from `openers` first on PATH.
fn unattended(args: &[&str], openers: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    let path = format!(
        "{}:{}",
        openers.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.args(args)
        .current_dir(root())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("ELICIT_UI")
        .env_remove("ELICIT_BROWSER")
        .env_remove("ELICIT_NO_OPEN")
        .env_remove("BROWSER")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: setsid is async-signal-safe; the child gets no controlling
    // terminal, as under `setsid` or a desktop app.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

fn run(mut cmd: Command) -> Ended {
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start elicit");
    let status = wait_up_to(&mut child, LIMIT);
    let took = started.elapsed();
    let output = child.wait_with_output().expect("read elicit's output");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        status.is_some(),
        "elicit was still waiting after {LIMIT:?} (a page nobody sees?):\n{stderr}"
    );
    Ended {
        code: status.and_then(|s| s.code()),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
        took,
    }
}

/// Exit 2 well within the limit, nothing on stdout, and a message that
/// names what is left and how to answer it.
fn assert_fails_at_once(end: &Ended, fields: &[&str]) {
    assert_eq!(end.code, Some(2), "{}", end.stderr);
    assert!(end.stdout.is_empty(), "stdout: {}", end.stdout);
    assert!(end.took < Duration::from_secs(10), "took {:?}", end.took);
    for needle in fields
        .iter()
        .chain(&["--answer", "--answers", "--no-input"])
    {
        assert!(
            end.stderr.contains(needle),
            "{needle:?} not in:\n{}",
            end.stderr
        );
    }
    assert!(!end.stderr.contains("answer on the page"), "{}", end.stderr);
}

fn opened(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("opened.log")).unwrap_or_default()
}

const FORM: &str = "fixtures/server-everything/form.request.json";

#[test]
fn a_plain_run_with_no_browser_to_open_fails_at_once() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 3);
    let end = run(unattended(&["-a", "name=Ada", FORM], openers.path(), &[]));
    assert_fails_at_once(&end, &["check", "email", "no browser opened the page"]);
    // The openers were tried: the failure is theirs, not a guess.
    assert!(opened(openers.path()).contains("http://127.0.0.1:"));
}

#[test]
fn call_with_an_answer_missing_and_no_browser_fails_at_once() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 1);
    let server = root().join("tests/servers/fake_server.py");
    let server = server.to_str().unwrap();
    let end = run(unattended(
        &["call", "--tool", "form", "--", "python3", server],
        openers.path(),
        &[],
    ));
    assert_fails_at_once(&end, &["name"]);
}

#[test]
fn under_ci_a_working_opener_is_never_used_for_the_page() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 0);
    for ci in ["true", "1", "yes"] {
        let end = run(unattended(
            &["-a", "name=Ada", FORM],
            openers.path(),
            &[("CI", ci)],
        ));
        assert_fails_at_once(&end, &["check", "CI is set"]);
    }
    assert_eq!(opened(openers.path()), "", "nothing may be opened under CI");
}

/// `CI=false` (or empty) is not CI: a working opener serves the page.
#[test]
fn ci_false_is_not_ci() {
    for ci in ["false", "0", ""] {
        let openers = tempfile::tempdir().unwrap();
        stub_openers(openers.path(), 0);
        let mut child = unattended(&["-a", "name=Ada", FORM], openers.path(), &[("CI", ci)])
            .spawn()
            .unwrap();
        let seen = wait_for(|| opened(openers.path()).contains("http://127.0.0.1:"));
        let _ = child.kill();
        let _ = child.wait();
        assert!(seen, "CI={ci:?}: the page was not opened");
    }
}

/// Polls `cond` until it holds or [`LIMIT`] passes.
fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < LIMIT {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A desktop client starts `elicit proxy` with pipes and no terminal; with
/// a working opener its server's elicitations still open the page.
#[test]
fn the_proxy_under_a_pipes_only_client_with_an_opener_serves_the_page() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 0);
    let server = root().join("tests/servers/relay_server.py");
    let mut cmd = unattended(
        &["proxy", "--", "python3", server.to_str().unwrap()],
        openers.path(),
        &[],
    );
    cmd.stdin(Stdio::piped());
    let mut proxy = cmd.spawn().unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"desktop","version":"0"}}}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":"a-1","method":"ask","params":{{"n":1}}}}"#
    )
    .unwrap();
    let stdout = proxy.stdout.take().unwrap();
    std::thread::spawn(move || for _ in BufReader::new(stdout).lines() {});
    let seen = wait_for(|| opened(openers.path()).contains("http://127.0.0.1:"));
    drop(stdin);
    let _ = proxy.kill();
    let _ = proxy.wait();
    assert!(seen, "the proxy did not open the page");
}

/// `--no-open` (or `ELICIT_NO_OPEN`) asks for the page: its address is
/// printed for the person to open, even with no browser to launch.
#[test]
fn no_open_asks_for_the_page_with_no_opener() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 3);
    for how in [&["--no-open"][..], &[][..]] {
        let mut args = vec!["-a", "name=Ada"];
        args.extend_from_slice(how);
        args.push(FORM);
        let env: &[(&str, &str)] = if how.is_empty() {
            &[("ELICIT_NO_OPEN", "1")]
        } else {
            &[]
        };
        let mut child = unattended(&args, openers.path(), env).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx.recv_timeout(LIMIT);
        let _ = child.kill();
        let _ = child.wait();
        let line = line.expect("no word from elicit");
        assert!(
            line.contains("answer on the page http://127.0.0.1:"),
            "{line}"
        );
    }
    assert_eq!(opened(openers.path()), "", "--no-open opens nothing");
}

/// Every flag a client's `mcpServers` entry may need has an environment
/// form (an MCP Inspector CLI run swallowed `--no-open --`), listed in
/// `elicit man`, and it works.
#[test]
fn the_proxy_flags_have_environment_forms_listed_in_man() {
    let man = Command::new(BIN).args(["man", "proxy"]).output().unwrap();
    let page = String::from_utf8_lossy(&man.stdout);
    for var in [
        "ELICIT_NO_OPEN",
        "ELICIT_NO_INPUT",
        "ELICIT_ANSWERS",
        "ELICIT_UI",
        "ELICIT_PROMPT_TIMEOUT",
        "ELICIT_SERVER_LOG",
        "ELICIT_STRICT",
        "ELICIT_MODES",
        "CI",
    ] {
        assert!(page.contains(var), "elicit man proxy lacks {var}");
    }
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 0);
    // ELICIT_NO_INPUT: fails at once, and nothing is opened.
    let end = run(unattended(
        &[FORM],
        openers.path(),
        &[("ELICIT_NO_INPUT", "1")],
    ));
    assert_fails_at_once(&end, &["--no-input was given"]);
    assert_eq!(opened(openers.path()), "");
}
