//! Pseudo-terminal tests of the URL flow: consent before anything opens, a
//! stub browser that records what it was asked to open, the waiting screen.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{json, Value};

const URL: &str = "https://example.com/connect?session=abc";

fn everything_url() -> String {
    fixture("server-everything/url.request.json")
}

/// A JSON-RPC URL request with id 7.
fn url_request(url: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
        "params": {"mode": "url", "url": url, "message": "Sign in", "elicitationId": "e-1"}
    })
    .to_string()
}

fn rpc(id: Value, action: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": action}})
}

/// A tempdir with the stub openers (exiting `status`).
fn stubbed(status: i32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    stub_openers(dir.path(), status);
    dir
}

/// What the stubs recorded, waiting up to 5 s for `lines` lines (a
/// detached launcher may still be starting).
fn recorded(dir: &Path, lines: usize) -> String {
    let log = dir.join("opened.log");
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= lines || Instant::now() > until {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Nothing was launched: the stubs' record does not exist (after a short
/// wait, in case a detached launcher were still on its way).
fn assert_nothing_launched(dir: &Path) {
    quiet_for(
        Duration::from_millis(100),
        "a detached launcher, were one started, must not record anything",
    );
    let log = dir.join("opened.log");
    assert!(
        !log.exists(),
        "something was launched: {:?}",
        std::fs::read_to_string(&log)
    );
}

/// Consent, open with the system opener (a stub xdg-open first on PATH),
/// then Enter at the waiting screen: accept, and exactly the URL was opened.
#[test]
fn open_in_the_browser_then_done() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let mut p = Test::new().stdin(everything_url()).stub_path().pty_in(dir);
    p.expect("asks you to open a link")
        .expect("Connect your Example account")
        .expect(&format!("URL   {URL}"))
        .expect("example.com")
        .expect("nothing opens until you choose it")
        .expect("Open in the browser")
        .answer("Decline", ENTER)
        .expect("opened in your browser")
        .answer("waiting for you to finish in the browser", ENTER)
        .expect("done after");
    p.finish_with(rpc(json!(3), "accept"));
    assert_eq!(recorded(&path, 1), format!("xdg-open {URL}\n"));
}

/// --browser PROGRAM is run with the URL, instead of the system opener.
#[test]
fn browser_flag_runs_that_program() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let browser = path.join("mybrowser");
    write_script(
        &browser,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"mybrowser $*\" >> '{}'\n",
            path.join("opened.log").display()
        ),
    );
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .args(["--browser", browser.to_str().unwrap()])
        .pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .expect("opened in ")
        .expect("mybrowser")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
    assert_eq!(recorded(&path, 1), format!("mybrowser {URL}\n"));
}

/// ELICIT_BROWSER works like --browser.
#[test]
fn elicit_browser_variable_runs_that_program() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let browser = path.join("envbrowser");
    write_script(
        &browser,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"envbrowser $*\" >> '{}'\n",
            path.join("opened.log").display()
        ),
    );
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .env("ELICIT_BROWSER", browser.to_str().unwrap())
        .pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
    assert_eq!(recorded(&path, 1), format!("envbrowser {URL}\n"));
}

/// Show only: nothing is launched; Enter when done accepts.
#[test]
fn show_only_launches_nothing() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let mut p = Test::new().stdin(everything_url()).stub_path().pty_in(dir);
    p.answer("What do you want to do?", &format!("{DOWN}{ENTER}"))
        .expect("copy the URL above and open it yourself")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
    assert_nothing_launched(&path);
}

#[test]
fn decline_at_the_consent() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let mut p = Test::new().stdin(everything_url()).stub_path().pty_in(dir);
    p.answer("What do you want to do?", &format!("{DOWN}{DOWN}{ENTER}"));
    p.finish_with(rpc(json!(3), "decline"));
    assert_nothing_launched(&path);
}

#[test]
fn esc_at_the_consent_cancels() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let mut p = Test::new().stdin(everything_url()).stub_path().pty_in(dir);
    p.answer("What do you want to do?", ESC);
    p.finish_with(rpc(json!(3), "cancel"));
    assert_nothing_launched(&path);
}

#[test]
fn cancel_item_at_the_consent() {
    let mut p = Test::new().stdin(everything_url()).stub_path().pty();
    p.answer("What do you want to do?", UP).send(ENTER);
    p.finish_with(rpc(json!(3), "cancel"));
}

/// At the waiting screen: d declines, Esc cancels, Ctrl-C cancels.
#[test]
fn waiting_screen_keys() {
    for (keys, action) in [("d", "decline"), (ESC, "cancel"), ("q", "cancel")] {
        let mut p = Test::new().stdin(everything_url()).stub_path().pty();
        p.answer("What do you want to do?", &format!("{DOWN}{ENTER}"))
            .answer("waiting for you to finish", keys);
        p.finish_with(rpc(json!(3), action));
    }
}

#[test]
fn ctrl_c_at_the_waiting_screen_cancels() {
    let mut p = Test::new().stdin(everything_url()).stub_path().pty();
    p.answer("What do you want to do?", &format!("{DOWN}{ENTER}"))
        .answer_settled("waiting for you to finish", CTRL_C);
    let f = p.finish_with(rpc(json!(3), "cancel"));
    assert!(f.screen.ends_with(b"\r\n") || contains(&f.screen, b"cancelled"));
}

/// A URL that must never be opened: no open choice, no show-only, only
/// decline or cancel; nothing launched whatever is pressed.
fn never_opened(url: &str, why: &str) {
    // Enter on the first item, Down+Enter, Esc, and a stray 'o'.
    for (keys, action) in [
        (ENTER.to_string(), "decline"),
        (format!("{DOWN}{ENTER}"), "cancel"),
        (format!("o{DOWN}{DOWN}{ENTER}"), "decline"),
        (ESC.to_string(), "cancel"),
    ] {
        let dir = stubbed(0);
        let path = dir.path().to_path_buf();
        let mut p = Test::new().stdin(url_request(url)).stub_path().pty_in(dir);
        p.expect(why)
            .expect("this URL will not be opened")
            .answer("What do you want to do?", &keys);
        let f = p.finish_with(rpc(json!(7), action));
        let text = f.screen_text();
        assert!(
            !text.contains("Open in the browser"),
            "{}",
            text.escape_debug()
        );
        assert!(!text.contains("Show only"), "{}", text.escape_debug());
        assert_nothing_launched(&path);
    }
}

#[test]
fn javascript_url_is_never_opened() {
    never_opened(
        "javascript:alert(document.cookie)",
        "\"javascript:\" URLs are never opened",
    );
}

#[test]
fn file_url_is_never_opened() {
    never_opened("file:///etc/passwd", "\"file:\" URLs are never opened");
}

#[test]
fn url_with_an_escape_sequence_is_never_opened() {
    never_opened(
        "https://example.com/\u{1b}[2Jfake",
        "control or invisible characters",
    );
}

/// Each warning is shown (and the URL can still be opened: they warn,
/// they do not block).
#[test]
fn warnings_are_shown() {
    let long = format!("https://example.com/?q={}", "a".repeat(2100));
    let cases: Vec<(String, &str)> = vec![
        (
            "http://example.com/login".into(),
            "not https (http): the page and what you type can be read or changed on the network",
        ),
        (
            "http://127.0.0.1:8080/callback".into(),
            "plain http to this computer (loopback)",
        ),
        (
            "http://localhost:3000/cb".into(),
            "plain http to this computer (loopback)",
        ),
        (
            "https://xn--pple-43d.com/".into(),
            "the host xn--pple-43d.com is Punycode for \"аpple.com\"",
        ),
        (
            "https://аpple.com/".into(),
            "is written with non-ASCII characters: it really goes to xn--pple-43d.com",
        ),
        (
            "https://93.184.216.34/login".into(),
            "the host is a bare IP address (93.184.216.34), not a name",
        ),
        (
            "https://accounts.google.com@evil.example/".into(),
            "\"accounts.google.com@\" before the host is a user name, not the site",
        ),
        (long, "characters long, too long to read in full"),
    ];
    for (url, warning) in cases {
        let mut p = Test::new().stdin(url_request(&url)).stub_path().pty();
        p.expect(warning)
            .expect("What do you want to do?")
            .answer("Open in the browser", ESC);
        p.finish_with(rpc(json!(7), "cancel"));
    }
}

/// The loopback note is not also reported as "not https".
#[test]
fn loopback_http_is_a_note_not_a_warning() {
    let mut p = Test::new()
        .stdin(url_request("http://localhost:3000/cb"))
        .stub_path()
        .pty();
    p.expect("plain http to this computer")
        .answer("What do you want to do?", ESC);
    let f = p.finish_with(rpc(json!(7), "cancel"));
    assert!(
        !f.screen_text().contains("not https"),
        "{}",
        f.screen_text()
    );
}

/// The opener fails (every launcher exits 1): reported, then the flow still
/// waits for the person, exit 0.
#[test]
fn failing_system_opener_is_reported_and_the_flow_goes_on() {
    let dir = stubbed(1);
    let path = dir.path().to_path_buf();
    let mut p = Test::new().stdin(everything_url()).stub_path().pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .expect("could not open a browser")
        .expect("copy the URL above and open it yourself")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
    let log = recorded(&path, 1);
    assert!(log.starts_with(&format!("xdg-open {URL}\n")), "{log}");
}

/// --browser naming a program that does not exist: reported, flow goes on.
#[test]
fn missing_browser_program_is_reported_and_the_flow_goes_on() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .args(["--browser", "/nonexistent/browser"])
        .pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .expect("could not open a browser (cannot run /nonexistent/browser: not found)")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
    assert_nothing_launched(&path);
}

/// --browser takes a command line, split like a shell: the program gets
/// its arguments and the URL as the last one.
#[test]
fn browser_flag_takes_a_command_line() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let browser = path.join("my browser");
    write_script(
        &browser,
        &format!(
            "#!/bin/sh\nprintf '%s|' \"$@\" >> '{}'\necho >> '{}'\n",
            path.join("opened.log").display(),
            path.join("opened.log").display()
        ),
    );
    let line = format!("'{}' --new-window", browser.display());
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .args(["--browser", &line])
        .pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .expect("opened in ")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
    assert_eq!(recorded(&path, 1), format!("--new-window|{URL}|\n"));
}

/// $BROWSER is used when neither --browser nor ELICIT_BROWSER is given,
/// and ELICIT_BROWSER wins over it.
#[test]
fn browser_variable_comes_after_elicit_browser() {
    for (elicit_browser, expected) in [(false, "envbrowser"), (true, "elicitbrowser")] {
        let dir = stubbed(0);
        let path = dir.path().to_path_buf();
        for name in ["envbrowser", "elicitbrowser"] {
            write_script(
                &path.join(name),
                &format!(
                    "#!/bin/sh\nprintf '%s\\n' \"{name} $*\" >> '{}'\n",
                    path.join("opened.log").display()
                ),
            );
        }
        let mut spec = Test::new().stdin(everything_url()).stub_path().env(
            "BROWSER",
            format!("{} -x", path.join("envbrowser").display()),
        );
        if elicit_browser {
            spec = spec.env(
                "ELICIT_BROWSER",
                path.join("elicitbrowser").to_str().unwrap(),
            );
        }
        let mut p = spec.pty_in(dir);
        p.answer("What do you want to do?", ENTER)
            .answer("waiting for you to finish", ENTER);
        p.finish_with(rpc(json!(3), "accept"));
        let args = if elicit_browser { "" } else { " -x" };
        assert_eq!(recorded(&path, 1), format!("{expected}{args} {URL}\n"));
    }
}

/// --browser naming a program that exits 1 at once.
#[test]
fn failing_browser_program_is_reported() {
    let dir = stubbed(0);
    let path: PathBuf = dir.path().to_path_buf();
    let browser = path.join("badbrowser");
    write_script(&browser, "#!/bin/sh\nexit 1\n");
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .args(["--browser", browser.to_str().unwrap()])
        .pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .expect("could not open a browser (")
        .expect("badbrowser failed with exit status: 1)")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc(json!(3), "accept"));
}

/// --timeout while waiting for the person: cancel, exit 0, cursor shown.
#[test]
fn timeout_at_the_waiting_screen_cancels() {
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .args(["--timeout", "1s"])
        .pty();
    p.answer("What do you want to do?", &format!("{DOWN}{ENTER}"))
        .expect("waiting for you to finish")
        .expect("timed out");
    let f = p.finish_with(rpc(json!(3), "cancel"));
    assert!(contains(&f.screen, SHOW_CURSOR));
}

/// --no-open: no open choice, nothing launched.
#[test]
fn no_open_offers_no_open_choice() {
    let dir = stubbed(0);
    let path = dir.path().to_path_buf();
    let mut p = Test::new()
        .stdin(everything_url())
        .stub_path()
        .args(["--no-open"])
        .pty_in(dir);
    p.expect("--no-open: nothing will be launched")
        .answer("What do you want to do?", ENTER)
        .expect("copy the URL above")
        .answer("waiting for you to finish", ENTER);
    let f = p.finish_with(rpc(json!(3), "accept"));
    assert!(!f.screen_text().contains("Open in the browser"));
    assert_nothing_launched(&path);
}

/// A bare URL request (params only) gets a bare result; an accept of a URL
/// request carries no content.
#[test]
fn bare_url_request_gets_a_bare_result() {
    let req = json!({"mode": "url", "url": URL, "message": "m", "elicitationId": "x"}).to_string();
    let mut p = Test::new().stdin(req).stub_path().pty();
    p.answer("What do you want to do?", &format!("{DOWN}{ENTER}"))
        .answer("waiting for you to finish", ENTER);
    p.finish_with(json!({"action": "accept"}));
}
