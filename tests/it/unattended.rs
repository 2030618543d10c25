//! Nobody at a terminal (a CI job, `setsid elicit … </dev/null`, a desktop
//! client's pipes): a run with an answer missing fails at once, naming the
//! fields and the flags that answer them, unless a browser really opened
//! the page or the person asked for the page; under `CI` it never falls
//! back to the page. Each elicit here runs in a session of its own, so it
//! has no controlling terminal whoever runs the tests.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{stub_openers, Test};

/// Far above "at once", far below a hang: a run that serves a page nobody
/// sees is killed here and fails the test.
const LIMIT: Duration = Duration::from_secs(15);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// elicit with no controlling terminal, null stdin, no desktop, and
/// openers from `openers` first on PATH; the run is killed and fails the
/// test past [`LIMIT`] (a page nobody sees).
fn unattended(args: &[&str], openers: &Path, env: &[(&str, &str)]) -> Test {
    let path = format!(
        "{}:{}",
        openers.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Test::new()
        .args(args)
        .env("PATH", path)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .envs(env)
        .no_terminal()
        .limit(LIMIT)
}

/// Exit 2 well within the limit, nothing on stdout, and a message that
/// names what is left and how to answer it.
fn fails_at_once(test: Test, fields: &[&str]) {
    let end = test.status(2).stdout("").run();
    assert!(
        end.took() < Duration::from_secs(10),
        "took {:?}",
        end.took()
    );
    for needle in fields
        .iter()
        .chain(&["--answer", "--answers", "--no-input"])
    {
        assert!(
            end.stderr().contains(needle),
            "{needle:?} not in:\n{}",
            end.stderr()
        );
    }
    assert!(
        !end.stderr().contains("answer on the page"),
        "{}",
        end.stderr()
    );
}

fn opened(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("opened.log")).unwrap_or_default()
}

const FORM: &str = "fixtures/server-everything/form.request.json";

#[test]
fn a_plain_run_with_no_browser_to_open_fails_at_once() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 3);
    fails_at_once(
        unattended(&["-a", "name=Ada", FORM], openers.path(), &[]),
        &["check", "email", "no browser opened the page"],
    );
    // The openers were tried: the failure is theirs, not a guess.
    assert!(opened(openers.path()).contains("http://127.0.0.1:"));
}

#[test]
fn call_with_an_answer_missing_and_no_browser_fails_at_once() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 1);
    let server = root().join("tests/servers/fake_server.py");
    let server = server.to_str().unwrap();
    fails_at_once(
        unattended(
            &["call", "--tool", "form", "--", "python3", server],
            openers.path(),
            &[],
        ),
        &["name"],
    );
}

#[test]
fn under_ci_a_working_opener_is_never_used_for_the_page() {
    let openers = tempfile::tempdir().unwrap();
    stub_openers(openers.path(), 0);
    for ci in ["true", "1", "yes"] {
        fails_at_once(
            unattended(&["-a", "name=Ada", FORM], openers.path(), &[("CI", ci)]),
            &["check", "CI is set"],
        );
    }
    assert_eq!(opened(openers.path()), "", "nothing may be opened under CI");
}

/// `CI=false` (or empty) is not CI: a working opener serves the page.
#[test]
fn ci_false_is_not_ci() {
    for ci in ["false", "0", ""] {
        let openers = tempfile::tempdir().unwrap();
        stub_openers(openers.path(), 0);
        let child = unattended(&["-a", "name=Ada", FORM], openers.path(), &[("CI", ci)])
            .stderr_unchecked(RACE)
            .spawn();
        let seen = wait_for(|| opened(openers.path()).contains("http://127.0.0.1:"));
        child.kill();
        assert!(seen, "CI={ci:?}: the page was not opened");
    }
}

/// Why a run killed once its page was opened has what it printed set
/// aside.
const RACE: &str = "killed once the page is open: whether its lines were out by then is a race";

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
    let mut proxy = unattended(
        &["proxy", "--", "python3", server.to_str().unwrap()],
        openers.path(),
        &[],
    )
    .stdout_unchecked(RACE)
    .stderr_unchecked(RACE)
    .feed()
    .spawn();
    proxy.send(&serde_json::json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"desktop","version":"0"}}}));
    proxy.send(&serde_json::json!({"jsonrpc":"2.0","id":"a-1","method":"ask","params":{"n":1}}));
    let seen = wait_for(|| opened(openers.path()).contains("http://127.0.0.1:"));
    proxy.kill();
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
        let mut child = unattended(&args, openers.path(), env).spawn();
        let line = child.next_stderr_line(LIMIT);
        child.kill();
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
    let man = Test::new().args(["man", "proxy"]).run();
    let page = &man.stdout();
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
    fails_at_once(
        unattended(&[FORM], openers.path(), &[("ELICIT_NO_INPUT", "1")]),
        &["--no-input was given"],
    );
    assert_eq!(opened(openers.path()), "");
}
