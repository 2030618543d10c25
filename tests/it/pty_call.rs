//! `elicit call` with a person at the terminal: the tool result shown as
//! text when stdout is the terminal, and required arguments asked for.

use crate::common::Test;
use std::process::Command;
use std::time::Duration;

use expectrl::session::OsSession;
use expectrl::{Eof, Expect};

const BIN: &str = env!("CARGO_BIN_EXE_elicit");

fn fake_server() -> String {
    format!(
        "python3 {}/tests/servers/fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs `elicit ARGS -- fake server` with stdin, stdout and the tty all on
/// the pty; returns the session.
fn spawn(args: &str) -> OsSession {
    let script = format!("exec {BIN} {args} -- {}", fake_server());
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(&script);
    cmd.env("NO_COLOR", "1").env("TERM", "xterm-256color");
    let mut s = OsSession::spawn(cmd).expect("spawn under a pty");
    s.set_expect_timeout(Some(Duration::from_secs(20)));
    s
}

fn rest(s: &mut OsSession) -> String {
    let m = s.expect(Eof).expect("elicit ends");
    String::from_utf8_lossy(m.as_bytes()).into_owned()
}

#[test]
fn a_result_on_the_terminal_is_shown_as_text() {
    let mut s = spawn("call --tool sum --arg a=2 --arg b=5");
    let out = rest(&mut s);
    assert!(out.contains(r#"{"sum":7}"#), "{out}");
    assert!(
        !out.contains(r#""content""#),
        "JSON shown on a terminal: {out}"
    );
}

#[test]
fn json_keeps_the_json_on_a_terminal() {
    let mut s = spawn("call --json --tool sum --arg a=2 --arg b=5");
    let out = rest(&mut s);
    assert!(out.contains(r#""content":[{"type":"text""#), "{out}");
}

#[test]
fn a_missing_required_argument_is_asked() {
    let mut s = spawn("call --tool sum --arg a=2");
    s.expect("b *").expect("the prompt for b");
    crate::common::wait_raw_mode(&s).unwrap();
    s.send("40\r").unwrap();
    s.expect("Send these answers?").expect("the review");
    crate::common::wait_raw_mode(&s).unwrap();
    s.send("\r").unwrap();
    let out = rest(&mut s);
    assert!(out.contains(r#"{"sum":42}"#), "{out}");
}

#[test]
fn color_always_overrides_no_color_and_never_turns_it_off() {
    // NO_COLOR is set by spawn(); --color always wins over it.
    let mut s = spawn("call --color always --tool sum --arg a=2");
    let m = s.expect("whole number").expect("the prompt for b");
    let shown = String::from_utf8_lossy(m.before()).into_owned();
    assert!(shown.contains("\x1b[3"), "no colour: {shown:?}");
    s.send("\x1b").unwrap();
    let _ = rest(&mut s);

    let script = format!(
        "exec {BIN} call --color never --tool sum --arg a=2 -- {}",
        fake_server()
    );
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(&script);
    cmd.env_remove("NO_COLOR").env("TERM", "xterm-256color");
    let mut s = OsSession::spawn(cmd).expect("spawn under a pty");
    s.set_expect_timeout(Some(Duration::from_secs(20)));
    let m = s.expect("whole number").expect("the prompt for b");
    let shown = String::from_utf8_lossy(m.before()).into_owned();
    assert!(
        !shown.contains("\x1b[3"),
        "colour with --color never: {shown:?}"
    );
    s.send("\x1b").unwrap();
    let _ = rest(&mut s);
}

/// On a terminal, `elicit call` says what runs and for how long on stderr,
/// while it connects and while the tool runs; the line is erased before the
/// outcome, and never reaches stdout.
#[test]
fn a_call_shows_what_runs_and_for_how_long_then_erases_it() {
    let server = format!(
        "{}/tests/servers/fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut p = Test::new()
        .stdin("{}")
        .args([
            "call",
            "--timeout",
            "2s",
            "--tool",
            "hang",
            "--",
            "python3",
            &server,
        ])
        .failure()
        .pty();
    p.expect_re(r"calling hang \(0\.\d s\)");
    // The time moves on while the tool runs.
    p.expect_re(r"calling hang \(1\.\d s\)");
    let done = p.finish();
    let screen = done.visible();
    assert!(!screen.contains("calling hang"), "not erased: {screen}");
    assert!(screen.contains("hang"), "the timeout is reported: {screen}");
    assert!(!done.stdout().contains("calling"), "{}", done.stdout());
}

/// A prompt is drawn on a clean screen: the status line goes first, and
/// does not come back while the person answers.
#[test]
fn a_calls_status_line_is_erased_before_a_prompt() {
    let server = format!(
        "{}/tests/servers/fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut p = Test::new()
        .stdin("{}")
        .args(["call", "--tool", "form", "--", "python3", &server])
        .pty();
    p.expect("calling form (");
    p.expect("Who are you?");
    p.expect("? name");
    // Longer than a tick of the status line: it must not come back.
    p.quiet_for(600, "the status line must not be drawn again");
    assert!(p.alive()); // (takes in what was drawn meanwhile)
    let screen = p.visible();
    assert!(screen.contains("Who are you?"), "{screen}");
    assert!(!screen.contains("calling form"), "{screen}");
    p.send("\x03");
    let done = p.finish();
    assert!(done.stdout().contains("cancel"), "{}", done.stdout());
    assert!(!done.stdout().contains("calling"), "{}", done.stdout());
    assert!(
        !done.visible().contains("calling form"),
        "{}",
        done.visible()
    );
}

/// Piped, `elicit call` draws no status line at all.
#[test]
fn a_piped_call_draws_no_status_line() {
    let out = crate::common::Test::new()
        .args(["call", "--tool", "sum", "--arg", "a=2", "--arg", "b=5"])
        .server(&fake_server().split(' ').collect::<Vec<_>>())
        .run();
    out.stderr_lacks("calling").stderr_lacks("starting");
    assert!(!out.stdout().contains("calling"));
}
