//! Pseudo-terminal tests of hostile terminal cases: type-ahead never
//! answers a prompt, `--timeout` counts per prompt, and the terminal is put
//! back (line mode, cursor) when elicit dies of a signal mid-prompt.

use std::time::{Duration, Instant};

use crate::common::*;
use expectrl::session::OsSession;
use expectrl::Expect;
use serde_json::json;

fn url_request() -> String {
    json!({
        "jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://example.com/connect", "message": "Sign in",
                   "elicitationId": "e-1"}
    })
    .to_string()
}

/// Enter pressed before the URL screen appears (say, while waiting for the
/// server) neither opens the URL nor accepts: the keys are discarded, and
/// the person's own choice at the screen counts.
#[test]
fn type_ahead_never_opens_a_url_or_accepts() {
    let dir = tempfile::tempdir().unwrap();
    stub_openers(dir.path(), 0);
    let log = dir.path().join("opened.log");
    let mut p = Test::new().stdin(url_request()).stub_path().pty_in(dir);
    // Typed ahead: Enter (open), Enter (done), before anything is drawn.
    p.send("\r\r\r");
    p.answer("What do you want to do?", &format!("{DOWN}{DOWN}{ENTER}"));
    p.finish_with(json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}}));
    quiet_for(
        Duration::from_millis(300),
        "a detached opener, were one started, must not record anything",
    );
    assert!(
        !log.exists(),
        "the URL was opened by type-ahead: {:?}",
        std::fs::read_to_string(&log)
    );
}

/// An approve-only form (no fields) is not accepted by a typed-ahead Enter.
#[test]
fn type_ahead_never_approves_an_empty_form() {
    let mut p = Test::new()
        .stdin(form(
            "Approve?",
            json!({"type": "object", "properties": {}}),
        ))
        .pty();
    p.send("\r\r");
    p.answer("Your answer", &format!("{DOWN}{ENTER}"));
    p.finish_with(json!({"action": "decline"}));
}

/// A key typed on past the last field does not submit the review: the
/// review's choices appear only after a pause that discards it.
#[test]
fn type_ahead_never_submits_the_review() {
    let schema =
        json!({"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}});
    let mut p = Test::new().stdin(form("Review", schema)).pty();
    // Typed ahead of the first prompt: discarded, never the name.
    p.send("Eve\r\r");
    // The answer and one Enter too many, in one burst.
    p.answer("? Name", "Ada\r\r")
        .answer("Send these answers?", &format!("{DOWN}{DOWN}{ENTER}"));
    let f = p.finish_with(json!({"action": "decline"}));
    // The name prompt was drawn empty: "Eve" never reached it.
    assert!(
        !f.screen_text().contains("› Eve"),
        "{}",
        f.screen_text().escape_debug()
    );
}

/// Two elicitations in one input, `--timeout 4s`: the first is answered
/// after 2.5 s, and the second still gets the whole 4 s from when its
/// prompt appears (before the fix the deadline was one for the whole run).
#[test]
fn timeout_counts_per_prompt() {
    let input = two_name_questions();
    let mut p = Test::new().stdin(input).args(["--timeout", "4s"]).pty();
    p.expect("answer within 4s")
        .expect("(1 of 2)")
        .expect("? Name *")
        .quiet_for(2500, "the person takes their time")
        .send("Ada\r")
        .answer("Send these answers?", ENTER)
        // The second prompt's notice: the whole timeout again.
        .expect("answer within 4s")
        .expect("(2 of 2)")
        .expect("? Name *")
        .quiet_for(2500, "the person takes their time")
        .send("Bo\r")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"inputResponses": {
        "first": {"action": "accept", "content": {"name": "Ada"}},
        "second": {"action": "accept", "content": {"name": "Bo"}}
    }}));
}

/// elicit dies of SIGTERM (or SIGHUP, SIGQUIT) in the middle of a list
/// prompt (raw mode, cursor hidden): the terminal is back in line mode with
/// echo, and the cursor is shown again.
#[test]
fn a_fatal_signal_during_a_prompt_restores_the_terminal() {
    for (sig, name) in [
        (libc::SIGTERM, "TERM"),
        (libc::SIGHUP, "HUP"),
        (libc::SIGQUIT, "QUIT"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let schema = json!({"type": "object", "required": ["c"],
            "properties": {"c": {"type": "string", "title": "Color", "enum": ["red", "blue"]}}});
        std::fs::write(dir.path().join("req.json"), form("Signal", schema)).unwrap();
        // Not `exec`: the shell outlives elicit and shows the terminal's
        // state afterwards.
        let script = format!(
            "read -r go && stty cols 120 rows 40 echo && echo \"before=$(stty -g)\" && {{ {} < req.json > out.json & echo $! > pid; wait $!; echo \"exit=$?\"; echo \"after=$(stty -g)\"; stty -a; echo END; }}",
            sh_quote(BIN)
        );
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("TERM", "xterm-256color")
            .env("NO_COLOR", "1");
        let mut s = OsSession::spawn(cmd).expect("spawn under a pty");
        s.set_expect_timeout(Some(TIMEOUT));
        s.send("\n").unwrap();
        let before = s.expect("red").expect("the list prompt");
        let mut screen = before.as_bytes().to_vec();
        // The list has the terminal in raw mode: the signal must put it back.
        crate::common::wait_raw_mode(&s).unwrap();
        let pid_file = dir.path().join("pid");
        let until = Instant::now() + TIMEOUT;
        let pid: i32 = loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                break pid;
            }
            assert!(Instant::now() < until, "no pid file");
            std::thread::sleep(Duration::from_millis(20));
        };
        // SAFETY: signalling the elicit this test started.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        let after = s.expect("END").expect("stty output");
        screen.extend_from_slice(after.before());
        let text = String::from_utf8_lossy(&screen).into_owned();
        assert!(
            text.contains(&format!("exit={}", 128 + sig)),
            "SIG{name}: elicit did not die of the signal: {}",
            text.escape_debug()
        );
        // The settings afterwards are exactly those from before elicit ran
        // (line mode and echo on).
        let setting = |key: &str| {
            let at = text
                .find(key)
                .unwrap_or_else(|| panic!("no {key} in {text}"))
                + key.len();
            text[at..].split_whitespace().next().unwrap().to_string()
        };
        assert_eq!(
            setting("before="),
            setting("after="),
            "SIG{name}: terminal settings not restored: {}",
            text.escape_debug()
        );
        let stty = &text[text.find("after=").unwrap()..];
        let words: Vec<&str> = stty.split_whitespace().collect();
        assert!(
            words.contains(&"icanon") && words.contains(&"echo") && words.contains(&"isig"),
            "SIG{name}: terminal left raw: {stty}"
        );
        let last_hide = screen.windows(6).rposition(|w| w == b"\x1b[?25l");
        let last_show = screen.windows(6).rposition(|w| w == SHOW_CURSOR);
        assert!(last_hide.is_some(), "the list never hid the cursor");
        assert!(
            last_show > last_hide,
            "SIG{name}: cursor left hidden: {}",
            text.escape_debug()
        );
    }
}

/// Choice labels are cut at 100 characters (and to the terminal's width),
/// so a long label neither floods the screen nor wraps (a wrapped item
/// leaves stale rows when the list redraws).
#[test]
fn long_choice_labels_are_cut() {
    let long = format!("L{}", "x".repeat(300));
    let schema = json!({"type": "object", "required": ["c"], "properties": {"c": {
        "type": "string", "title": "Pick",
        "oneOf": [{"const": "a", "title": long}, {"const": "b", "title": "Short"}]}}});
    let mut p = Test::new().stdin(form("Long", schema)).pty();
    p.expect("? Pick *")
        .expect("Short")
        .send(DOWN)
        .send(UP)
        .send(ENTER)
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(json!({"action": "accept", "content": {"c": "a"}}));
    let text = f.screen_text();
    let longest_run = text.split(|c| c != 'x').map(str::len).max().unwrap_or(0);
    assert!(
        longest_run < 100,
        "a run of {longest_run} x: {}",
        text.escape_debug()
    );
    assert!(text.contains("x…"), "{}", text.escape_debug());
}
