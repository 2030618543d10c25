//! Pseudo-terminal tests of what a server author meets in the first hour:
//! keys typed ahead reach the fields they were typed for, and a yes/no
//! answers to `y`/`n`.

use crate::common::*;
use serde_json::json;

/// Two text fields answered in one burst of keys (a fast typist, or a
/// paste): nothing is dropped between ordinary fields.
#[test]
fn keys_typed_ahead_reach_the_next_text_field() {
    let schema = json!({"type": "object", "properties": {
        "first": {"type": "string", "title": "First"},
        "second": {"type": "string", "title": "Second"}}});
    let mut p = Test::new().stdin(form("Two fields", schema)).pty();
    p.answer("? First", "abc\rdef\r")
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"first": "abc", "second": "def"}}));
}

/// Keys typed before a consent screen are still dropped, and the screen
/// says so.
#[test]
fn keys_typed_ahead_of_the_review_are_ignored_and_the_screen_says_so() {
    let schema = json!({"type": "object", "properties": {
        "first": {"type": "string", "title": "First"}}});
    let mut p = Test::new().stdin(form("One field", schema)).pty();
    // The second Enter would submit the review unseen.
    p.answer("? First", "abc\r\x1b[B\r")
        .expect("Review your answers")
        .expect("keys typed ahead were ignored")
        .answer("Send these answers?", &format!("{DOWN}{DOWN}{ENTER}"));
    p.finish_with(json!({"action": "decline"}));
}

/// `y` and `n` answer a yes/no at once.
#[test]
fn y_and_n_choose_on_a_yes_no() {
    let schema = json!({"type": "object", "properties": {
        "agree": {"type": "boolean", "title": "Agree"},
        "spam": {"type": "boolean", "title": "Spam"}},
        "required": ["agree", "spam"]});
    let mut p = Test::new().stdin(form("Yes or no", schema)).pty();
    p.answer("? Agree", "y")
        .answer("? Spam", "n")
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"agree": true, "spam": false}}));
}

/// The prompt names the flag in effect: `call` has `--prompt-timeout` (its
/// `--timeout` is the server's reply time).
#[test]
fn call_names_prompt_timeout_on_the_screen() {
    let script = format!(
        "exec {BIN} call --prompt-timeout 3s --tool form -- python3 {}/tests/servers/fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(&script);
    cmd.env("NO_COLOR", "1").env("TERM", "xterm-256color");
    let mut s = expectrl::session::OsSession::spawn(cmd).expect("spawn under a pty");
    s.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
    use expectrl::Expect;
    let seen = s.expect("or it is cancelled").expect("the timeout line");
    let text = String::from_utf8_lossy(seen.before()).into_owned();
    assert!(
        text.contains("answer within 3s (--prompt-timeout)"),
        "{text}"
    );
    let _ = s.send(ESC);
    let _ = s.expect(expectrl::Eof);
}

/// `--prompt-timeout` works at the top level too, under its own name;
/// `--timeout` there keeps its.
#[test]
fn prompt_timeout_at_the_top_level() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "title": "A"}}});
    let mut p = Test::new()
        .stdin(form("Slow", schema.clone()))
        .args(["--prompt-timeout", "1s"])
        .pty();
    p.expect("answer within 1s (--prompt-timeout)")
        .expect("timed out");
    p.finish_with(json!({"action": "cancel"}));
    let mut p = Test::new()
        .stdin(form("Slow", schema))
        .args(["--timeout", "1s"])
        .pty();
    p.expect("answer within 1s (--timeout)").expect("timed out");
    p.finish_with(json!({"action": "cancel"}));
}

/// `elicit call ARGS -- fake server` on a pty (stdin, stdout and the tty);
/// the session.
fn call_on_pty(args: &str) -> expectrl::session::OsSession {
    let script = format!(
        "{BIN} {args} -- python3 {}/tests/servers/fake_server.py; echo \"exit=$?\"",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(&script);
    cmd.env("NO_COLOR", "1").env("TERM", "xterm-256color");
    let mut s = expectrl::session::OsSession::spawn(cmd).expect("spawn under a pty");
    s.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
    s
}

/// The tool-argument form is elicit asking, not the server; declining it
/// calls nothing and exits with the decline code, not a usage error.
#[test]
fn cancelling_the_tool_arguments_form_exits_with_the_cancel_code_and_offers_no_decline() {
    use expectrl::Expect;
    let mut s = call_on_pty("call --tool sum --arg a=2");
    let header = s.expect("b *").expect("the prompt for b");
    let header = String::from_utf8_lossy(header.before()).into_owned();
    assert!(header.contains("╭─ elicit asks for input"), "{header}");
    assert!(
        header.contains("The arguments to call the tool sum of fake with"),
        "{header}"
    );
    crate::common::wait_raw_mode(&s).unwrap();
    s.send("40\r").unwrap();
    // elicit's own form has no server to decline to: use, edit or cancel.
    let review = s.expect("Cancel").expect("the review");
    let review = String::from_utf8_lossy(review.before()).into_owned();
    assert!(review.contains("Use these"), "{review}");
    assert!(!review.contains("Decline"), "{review}");
    crate::common::wait_raw_mode(&s).unwrap();
    s.send(format!("{DOWN}{DOWN}{ENTER}")).unwrap();
    let end = s
        .expect(expectrl::Regex("exit=[0-9]+"))
        .expect("the exit status");
    let said = String::from_utf8_lossy(end.before()).into_owned();
    let code = String::from_utf8_lossy(end.get(0).unwrap()).into_owned();
    assert_eq!(code, "exit=4", "{said}");
    assert!(
        said.contains("the arguments of the tool sum were cancelled; it was not called"),
        "{said}"
    );
}

/// Esc or Ctrl-C take the whole field prompt away (title, description,
/// an earlier error), leaving one `✗ cancelled` line under the header.
#[test]
fn cancelling_a_field_wipes_its_whole_prompt() {
    let text = json!({"type": "integer", "title": "Count", "description": "How many to make"});
    let list = json!({"type": "string", "title": "Size", "description": "Pick a size", "enum": ["s", "m"]});
    for (key, field, is_text) in [
        (ESC, text.clone(), true),
        (CTRL_C, text, true),
        (ESC, list.clone(), false),
        (CTRL_C, list, false),
    ] {
        let schema = json!({"type": "object", "properties": {"f": field}, "required": ["f"]});
        let mut p = Test::new().stdin(form("Wipe", schema)).pty();
        if is_text {
            // A rejected answer first: its error line goes too.
            p.answer("› ", "x\r").expect("is not a number");
        } else {
            p.expect("❯ s");
        }
        p.send_settled(key);
        let f = p.finish_with(json!({"action": "cancel"}));
        let seen = f.visible();
        for gone in [
            "Count",
            "How many",
            "Size",
            "Pick a size",
            "is not a number",
            "› x",
        ] {
            assert!(!seen.contains(gone), "{gone:?} left on screen:\n{seen}");
        }
        assert!(seen.ends_with("Esc cancels\n✗ cancelled"), "{seen}");
    }
}

/// A field's description sits in one place for every kind: above its
/// question, with only its indented hints between.
#[test]
fn descriptions_sit_above_the_question_for_every_kind() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "title": "Name", "description": "Name note"},
        "size": {"type": "string", "title": "Size", "description": "Size note", "enum": ["s", "m"]},
        "ok": {"type": "boolean", "title": "Ok", "description": "Ok note"}},
        "required": ["name", "size", "ok"]});
    let mut p = Test::new().stdin(form("Notes", schema)).pty();
    p.answer("? Name", "Bo\r")
        .answer("❯ s", ENTER)
        .answer("? Ok", "y")
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(
        json!({"action": "accept", "content": {"name": "Bo", "size": "s", "ok": true}}),
    );
    let seen = f.visible();
    let rows: Vec<&str> = seen.lines().collect();
    for (note, question) in [
        ("Name note", "Name *"),
        ("Size note", "Size *"),
        ("Ok note", "Ok *"),
    ] {
        let at = rows
            .iter()
            .position(|r| r.contains(note))
            .unwrap_or_else(|| panic!("{note} missing:\n{seen}"));
        let next = rows[at + 1..]
            .iter()
            .find(|r| !r.starts_with("  "))
            .copied()
            .unwrap_or_default();
        assert!(
            next.contains(question),
            "{note} (and its hints) not just above {question}:\n{seen}"
        );
    }
}

/// A system opener that fails is named, with its exit status.
#[test]
fn a_failed_system_opener_is_named_with_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    for (name, status) in [
        ("xdg-open", 4),
        ("gio", 5),
        ("gnome-open", 5),
        ("kde-open", 5),
        ("kde-open5", 5),
        ("kde-open6", 5),
        ("wslview", 5),
    ] {
        write_script(
            &dir.path().join(name),
            &format!("#!/bin/sh\nexit {status}\n"),
        );
    }
    let req = json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://example.com/x", "message": "Sign in", "elicitationId": "e-1"}})
    .to_string();
    let mut p = Test::new().stdin(req).stub_path().pty_in(dir);
    p.answer("What do you want to do?", ENTER)
        .expect("could not open a browser (xdg-open failed with exit status: 4)")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "accept"}}));
}

/// ↑ (or Shift-Tab) on an empty text field goes back one field, with its
/// answer pre-filled; the review is still there for any field.
#[test]
fn up_on_an_empty_text_field_goes_back_one_field() {
    let schema = json!({"type": "object", "properties": {
        "first": {"type": "string", "title": "First"},
        "second": {"type": "string", "title": "Second"}}});
    let mut p = Test::new().stdin(form("Back", schema)).pty();
    p.answer("? First", "abc\r")
        .answer_settled("? Second", UP)
        .answer_settled("› abc", "\u{15}")
        .send("xyz\r")
        .answer("? Second", "def\r")
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"first": "xyz", "second": "def"}}));
    // On the first field there is nowhere to go back to: ↑ does nothing.
    let schema =
        json!({"type": "object", "properties": {"only": {"type": "string", "title": "Only"}}});
    let mut p = Test::new().stdin(form("Nowhere", schema)).pty();
    p.answer_settled("? Only", "\x1b[Z")
        .send("x\r")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"only": "x"}}));
}
