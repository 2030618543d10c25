//! Pseudo-terminal tests of the keys: the keys do what the
//! README says at every prompt (Ctrl-D cancels everywhere), every prompt is
//! left tidy whatever the key, the current row is visible without colour,
//! a rejected checklist is not shown as accepted, safe starting choices
//! (URL with a warning, yes/no without a default), secrets masked, long
//! lists filter, and a prompt abandoned by `--timeout` does not swallow the
//! next one. Assertions on what a person sees render the pty output through
//! a terminal emulator (`vt100`), so erased lines count as gone.

use std::time::Duration;

use crate::common::*;
use serde_json::{json, Value};

const HOME: &str = "\x1b[H";

fn one(name: &str, field: Value, required: bool) -> String {
    let mut schema = json!({"type": "object", "properties": {name: field}});
    if required {
        schema["required"] = json!([name]);
    }
    form("Keys", schema)
}

fn url_request(url: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
        "params": {"mode": "url", "url": url, "message": "Sign in", "elicitationId": "e-1"}
    })
    .to_string()
}

fn rpc_action(action: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "result": {"action": action}})
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// Under NO_COLOR the checklist's current row is marked with `❯`.
#[test]
fn checklist_marks_the_current_row_without_colour() {
    let field = json!({"type": "array", "title": "Tags",
        "items": {"type": "string", "enum": ["alpha", "beta", "gamma"]}});
    let mut p = Test::new().stdin(one("tags", field, false)).pty();
    p.expect("❯ ⬚ alpha")
        .send(DOWN)
        .expect("❯ ⬚ beta")
        .send(&format!("{SPACE}{ENTER}"))
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"tags": ["beta"]}}));
}

/// Ctrl-D cancels a list, a checklist and a text field holding text.
#[test]
fn ctrl_d_cancels_lists_and_text_with_text() {
    let list = json!({"type": "string", "title": "Size", "enum": ["s", "m", "l"]});
    let checklist = json!({"type": "array", "title": "Tags",
        "items": {"type": "string", "enum": ["a", "b"]}});
    for field in [list, checklist] {
        let mut p = Test::new().stdin(one("f", field, true)).pty();
        p.answer_settled("❯", CTRL_D);
        let f = p.finish_with(json!({"action": "cancel"}));
        assert!(f.visible().ends_with("✗ cancelled"), "{}", f.visible());
    }
    let text = json!({"type": "string", "title": "Name"});
    let mut p = Test::new().stdin(one("name", text, true)).pty();
    p.answer_settled("? Name", "Ada").send(CTRL_D);
    let f = p.finish_with(json!({"action": "cancel"}));
    assert!(f.visible().ends_with("✗ cancelled"), "{}", f.visible());
}

/// Ctrl-D cancels the URL menu and the URL waiting screen; the waiting
/// screen says "cancelled" once.
#[test]
fn ctrl_d_cancels_the_url_menu_and_waiting_screen() {
    let dir = tempfile::tempdir().unwrap();
    stub_openers(dir.path(), 0);
    let mut p = Test::new()
        .stdin(url_request("https://example.com/a"))
        .stub_path()
        .pty_in(dir);
    p.answer_settled("What do you want to do?", CTRL_D);
    p.finish_with(rpc_action("cancel"));

    let dir = tempfile::tempdir().unwrap();
    stub_openers(dir.path(), 0);
    let mut p = Test::new()
        .stdin(url_request("https://example.com/a"))
        .stub_path()
        .pty_in(dir);
    p.answer("What do you want to do?", &format!("{DOWN}{ENTER}"))
        .answer_settled("waiting for you to finish", CTRL_D);
    let f = p.finish_with(rpc_action("cancel"));
    let seen = f.visible();
    assert_eq!(count(&seen, "cancelled"), 1, "{seen}");
    assert!(!seen.contains("waiting for you"), "{seen}");
}

/// Ctrl-C on a text field holding text: the whole prompt (input line and
/// title) is replaced by `✗ cancelled`, not left as `› 3✗ cancelled`.
#[test]
fn ctrl_c_leaves_a_text_field_tidy() {
    let field = json!({"type": "integer", "title": "Count"});
    let mut p = Test::new().stdin(one("n", field, true)).pty();
    p.answer_settled("? Count", "3").send(CTRL_C);
    let f = p.finish_with(json!({"action": "cancel"}));
    let seen = f.visible();
    assert!(!seen.contains("› 3"), "{seen}");
    assert!(!seen.contains("? Count"), "{seen}");
    assert!(seen.ends_with("Esc cancels\n✗ cancelled"), "{seen}");
}

/// Ctrl-C (and Esc) on a list: the list is gone, only `✗ cancelled` is left.
#[test]
fn cancelling_a_list_clears_it() {
    for key in [CTRL_C, ESC] {
        let field =
            json!({"type": "string", "title": "Size", "enum": ["small", "medium", "large"]});
        let mut p = Test::new().stdin(one("s", field, true)).pty();
        p.answer_settled("❯ small", key);
        let f = p.finish_with(json!({"action": "cancel"}));
        let seen = f.visible();
        assert!(!seen.contains("medium"), "{seen}");
        assert!(!seen.contains("? Size"), "{seen}");
        assert!(seen.ends_with("✗ cancelled"), "{seen}");
    }
}

/// A narrow terminal with labels longer than a line: nothing of the list
/// stays above the `✔` line once it is answered.
#[test]
fn long_labels_in_a_narrow_terminal_leave_no_stale_rows() {
    let long = |w: &str| format!("{w} {}", "and a very long explanation ".repeat(4));
    let field = json!({"type": "string", "title": "A rather long question about the plan you want",
        "oneOf": [{"const": "a", "title": long("Alpha")}, {"const": "b", "title": long("Beta")},
                  {"const": "c", "title": long("Gamma")}]});
    let mut p = Test::new()
        .stdin(one("plan", field, true))
        .size(40, 30)
        .pty();
    p.answer("❯ Alpha", &format!("{DOWN}{ENTER}"))
        .expect("Send these answers?");
    let seen = p.visible();
    assert!(!seen.contains("Alpha"), "{seen}");
    assert!(!seen.contains("Gamma"), "{seen}");
    assert!(!seen.contains("❯ Beta"), "{seen}");
    assert_eq!(count(&seen, "✔ A rather"), 1, "{seen}");
    p.send(ENTER);
    p.finish_with(json!({"action": "accept", "content": {"plan": "b"}}));
}

/// A rejected checklist answer is never recorded with a tick, and each
/// attempt's reason replaces the last one.
#[test]
fn rejected_checklist_is_not_ticked_and_errors_do_not_stack() {
    let field = json!({"type": "array", "title": "Tags", "maxItems": 2,
        "items": {"type": "string", "enum": ["a", "b", "c"]}});
    let mut p = Test::new().stdin(one("tags", field, true)).pty();
    p.answer(
        "❯ ⬚ a",
        &format!("{SPACE}{DOWN}{SPACE}{DOWN}{SPACE}{ENTER}"),
    )
    .expect("pick at most 2 items")
    .send(ENTER)
    .quiet_for(300, "a second error line, were one drawn, must not show");
    let seen = p.visible();
    assert_eq!(count(&seen, "pick at most 2 items"), 1, "{seen}");
    assert!(!seen.contains("✔ Tags"), "{seen}");
    p.send(&format!("{HOME}{SPACE}{ENTER}"))
        .expect("Send these answers?");
    let seen = p.visible();
    assert!(!seen.contains("pick at most 2 items"), "{seen}");
    assert_eq!(count(&seen, "✔ Tags"), 1, "{seen}");
    assert!(seen.contains("✔ Tags * (pick at most 2) · b, c"), "{seen}");
    p.send(ENTER);
    p.finish_with(json!({"action": "accept", "content": {"tags": ["b", "c"]}}));
}

/// A URL with a warning starts on "Show only": Enter opens nothing.
#[test]
fn url_with_a_warning_starts_on_show_only() {
    let dir = tempfile::tempdir().unwrap();
    stub_openers(dir.path(), 0);
    let log = dir.path().join("opened.log");
    let mut p = Test::new()
        .stdin(url_request("https://accounts.google.com@evil.example/"))
        .stub_path()
        .pty_in(dir);
    p.expect("❯ Show only")
        .answer("Cancel", ENTER)
        .expect("copy the URL above")
        .answer("waiting for you to finish", ENTER);
    p.finish_with(rpc_action("accept"));
    quiet_for(
        Duration::from_millis(100),
        "a detached opener, were one started, must not record anything",
    );
    assert!(!log.exists(), "something was opened");
}

/// Without a warning, "Open in the browser" is still the first choice.
#[test]
fn url_without_warning_starts_on_open() {
    let mut p = Test::new()
        .stdin(url_request("https://example.com/a"))
        .stub_path()
        .pty();
    p.expect("❯ Open in the browser").send(ESC);
    p.finish_with(rpc_action("cancel"));
}

/// A required yes/no without a default: nothing is chosen, Enter alone
/// only asks to choose.
#[test]
fn required_boolean_without_default_needs_a_choice() {
    let field = json!({"type": "boolean", "title": "Agree to terms"});
    let mut p = Test::new().stdin(one("agree", field, true)).pty();
    p.answer("? Agree to terms", ENTER)
        .expect("nothing is chosen")
        .send(&format!("{DOWN}{DOWN}{ENTER}"))
        .expect("✔ Agree to terms * (yes/no) · No");
    // A lone yes/no is its own review: the choice is sent as made.
    let f = p.finish_with(json!({"action": "accept", "content": {"agree": false}}));
    assert!(!f.visible().contains("❯ Yes"), "{}", f.visible());
    assert!(
        !f.visible().contains("Send these answers?"),
        "{}",
        f.visible()
    );
}

/// A secret-looking field is masked as it is typed; Ctrl-R reveals it.
#[test]
fn secret_field_is_masked_with_a_reveal_key() {
    let field = json!({"type": "string", "title": "API token"});
    let mut p = Test::new().stdin(one("token", field, true)).pty();
    p.expect("Ctrl-R shows or hides it")
        .answer("› ", "hunter2")
        .expect("•••••••")
        .send_settled("\x12")
        .expect("› hunter2")
        .send("\x12")
        .send(ENTER)
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(json!({"action": "accept", "content": {"token": "hunter2"}}));
    // Once entered, the secret is not left on the input line.
    assert!(!f.visible().contains("› hunter2"), "{}", f.visible());
}

/// More than ten choices: typing filters the list.
#[test]
fn long_list_filters_as_you_type() {
    let names: Vec<String> = (0..12).map(|i| format!("item-{i:02}")).collect();
    let mut names = names;
    names.push("zebra".into());
    let field = json!({"type": "string", "title": "Pick", "enum": names});
    let mut p = Test::new().stdin(one("pick", field, true)).pty();
    p.expect("type to filter")
        .send("zeb")
        .expect("❯ zebra")
        .send(ENTER)
        .expect("✔ Pick * · zebra")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"pick": "zebra"}}));
}

/// Two elicitations with `--timeout`: the first times out, the second is
/// still shown and answered (before, the abandoned first prompt kept
/// reading keys and the second was answered cancel unseen).
#[test]
fn a_timed_out_prompt_does_not_swallow_the_next() {
    let input = two_name_questions();
    let mut p = Test::new().stdin(input).args(["--timeout", "2s"]).pty();
    p.expect("(1 of 2)")
        .expect("? Name *")
        .expect("timed out")
        .expect("(2 of 2)")
        .answer("? Name *", "Bo\r")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"inputResponses": {
        "first": {"action": "cancel"},
        "second": {"action": "accept", "content": {"name": "Bo"}}
    }}));
}

/// Every lenient-schema warning is printed before the form starts.
#[test]
fn schema_warnings_come_before_the_form() {
    let schema = json!({"x-layout": "grid",
        "type": "object", "properties": {
            "a": {"type": "string", "title": "A", "format": "flavour", "x-ui": "big"},
            "n": {"type": "object", "title": "Nested"}}});
    let mut p = Test::new().stdin(form("Warned", schema)).pty();
    p.expect("warning: requestedSchema keyword \"x-layout\"")
        .expect("warning: field a: format \"flavour\" is not one MCP defines")
        .expect("warning: field a: keyword \"x-ui\"")
        .expect("warning: field n: type \"object\"")
        .expect("asks for input")
        .answer("? A", ENTER)
        .answer("? Nested", ENTER)
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {}}));
}

/// The header counts only the fields asked, and says `* required` only
/// when one of them is.
#[test]
fn form_header_counts_asked_fields_and_required_only_when_any() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "title": "A"}, "b": {"type": "string", "title": "B"}}});
    let mut p = Test::new()
        .stdin(form("Count", schema))
        .args(["-a", "a=x"])
        .pty();
    p.expect("1 field (1 more given by --answer) · Enter keeps")
        .answer("? B", "y\r")
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(json!({"action": "accept", "content": {"a": "x", "b": "y"}}));
    assert!(!f.visible().contains("* required"), "{}", f.visible());
}

/// Titled options read as their titles; the value sent is shown only when
/// two titles are the same. The header says ↑ goes back.
#[test]
fn titled_options_show_the_value_only_beside_equal_titles() {
    let schema = json!({"type": "object", "properties": {
        "shipping": {"type": "string", "title": "Shipping", "oneOf": [
            {"const": "std", "title": "Standard (3-5 days)"},
            {"const": "exp", "title": "Express"},
            {"const": "exp-eu", "title": "Express"}
        ]},
        "note": {"type": "string", "title": "Note"}
    }, "required": ["shipping"]});
    let mut p = Test::new().stdin(form("Ship", schema)).pty();
    p.expect("↑ on an empty field goes back")
        .expect("Standard (3-5 days)")
        .expect("Express (exp-eu)")
        .send(ENTER)
        .answer("? Note", ENTER)
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(json!({"action": "accept", "content": {"shipping": "std"}}));
    assert!(!f.visible().contains("(std)"), "{}", f.visible());
}

/// The harness's wait for raw mode tells a program reading lines from one
/// reading keys: without it, keys the line discipline edits (Ctrl-D,
/// Backspace, Ctrl-R) are sent too early and lost.
#[test]
fn the_wait_for_raw_mode_tells_line_mode_from_raw_mode() {
    use crate::common::wait_raw_mode_within;
    use expectrl::Expect;
    let spawn = |script: &str| {
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c").arg(script);
        let mut s = expectrl::session::OsSession::spawn(cmd).expect("spawn under a pty");
        s.set_expect_timeout(Some(crate::common::TIMEOUT));
        s
    };
    let mut lines = spawn("echo ready; read line");
    lines.expect("ready").unwrap();
    let short = Duration::from_millis(200);
    let err = wait_raw_mode_within(&lines, short).unwrap_err();
    assert!(err.contains("line mode"), "{err}");
    let mut keys = spawn("stty raw; echo ready; read line");
    keys.expect("ready").unwrap();
    wait_raw_mode_within(&keys, short).unwrap();
}
