//! Pseudo-terminal tests of the form flow: a person answers the prompts on
//! `/dev/tty` while the request comes from a file and the result goes to a file.

use crate::common::*;
use serde_json::{json, Value};

const HOME: &str = "\x1b[H";
const DEL: &str = "\x1b[3~";

/// Keys that clear `n` characters of a pre-filled line. Escape sequences
/// pass the cooked-mode line discipline untouched, so they can be sent before
/// the prompt has switched the terminal to raw mode (Backspace and Ctrl-U
/// would be eaten by it).
fn clear(n: usize) -> String {
    format!("{HOME}{}", DEL.repeat(n))
}

/// server-everything's default for `number` (a fixture value, not pi).
#[allow(clippy::approx_constant)]
const DEFAULT_NUMBER: f64 = 3.14;

fn everything() -> String {
    fixture("server-everything/form.request.json")
}

/// The 13-field form of server-everything, answered field by field to give
/// exactly the recorded client response.
#[test]
fn every_field_kind_of_server_everything() {
    let mut p = Test::new().stdin(everything()).pty();
    p.expect("Please provide inputs for the following fields:")
        .expect("13 fields")
        .answer("? String *", "Ada\r")
        // Optional boolean without default: the cursor starts on "skip".
        .answer("? Boolean (yes/no)", &format!("{UP}{UP}{ENTER}"))
        .answer("? String with default", ENTER)
        .answer("? String with email format (email)", "ada@example.com\r")
        .answer("? String with uri format", "https://example.com/ada\r")
        .answer("? String with date format (YYYY-MM-DD)", "1815-12-10\r")
        .answer(
            "? Integer (whole number, 1–100)",
            &format!("{}7\r", clear(2)),
        )
        .answer(
            "? Number in range 1-1000 (0–1000)",
            &format!("{}2.5\r", clear(4)),
        )
        .answer(
            "? Untitled Single Select Enum",
            &format!("{DOWN}{DOWN}{ENTER}"),
        )
        .answer(
            "? Untitled Multiple Select Enum (pick 1 to 3)",
            &format!("{DOWN}{SPACE}{ENTER}"),
        )
        .answer("? Titled Single Select Enum", &format!("{DOWN}{ENTER}"))
        .answer(
            "? Titled Multiple Select Enum (pick 1 to 3)",
            &format!("{DOWN}{DOWN}{SPACE}{ENTER}"),
        )
        .answer(
            "? Legacy Titled Single Select Enum",
            &format!("{DOWN}{ENTER}"),
        )
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    let expected: Value =
        serde_json::from_str(&fixture("server-everything/form.client-response.json")).unwrap();
    p.finish_with(expected);
}

/// Enter everywhere takes the defaults; optional fields without a default
/// are left out of the content (not "" nor null).
#[test]
fn defaults_taken_with_enter_and_optional_fields_left_out() {
    let mut p = Test::new().stdin(everything()).pty();
    p.answer("? String *", "Ada\r")
        .answer("? Boolean", ENTER)
        .answer("? String with default", ENTER)
        .answer("? String with email format", ENTER)
        .answer("? String with uri format", ENTER)
        .answer("? String with date format", ENTER)
        .answer("? Integer", ENTER)
        .answer("? Number in range", ENTER)
        .answer("? Untitled Single Select Enum", ENTER)
        .answer("? Untitled Multiple Select Enum", ENTER)
        .answer("? Titled Single Select Enum", ENTER)
        .answer("? Titled Multiple Select Enum", ENTER)
        .answer("? Legacy Titled Single Select Enum", ENTER)
        .expect("Review your answers")
        .expect_re(r"String with email format\s+—")
        .answer("Send these answers?", ENTER);
    p.finish_with(
        json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {
            "name": "Ada",
            "firstLine": "It was a dark and stormy night.",
            "integer": 42,
            "number": DEFAULT_NUMBER,
            "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"],
            "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-1"
        }}}),
    );
}

fn kinds_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "nick": {"type": "string", "title": "Nickname"},
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "ratio": {"type": "number", "title": "Ratio"},
            "subscribe": {"type": "boolean", "title": "Subscribe", "default": false},
            "size": {"type": "string", "title": "Size", "enum": ["s", "m", "l"]},
            "plan": {"type": "string", "title": "Plan", "oneOf": [
                {"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}]},
            "tags": {"type": "array", "title": "Tags", "items": {"type": "string", "enum": ["x", "y", "z"]}},
            "address": {"type": "object", "title": "Address",
                "properties": {"city": {"type": "string"}}}
        },
        "required": ["age", "address"]
    })
}

/// Every kind in one custom form, including a nested object answered as raw
/// JSON; optional text, select and multi-select skipped.
#[test]
fn every_kind_with_raw_json_and_skips() {
    let mut p = Test::new().stdin(form("Kinds", kinds_schema())).pty();
    p.answer("? Nickname", ENTER)
        .answer("? Age *", "33\r")
        .answer("? Ratio (number)", "-0.5\r")
        .answer("? Subscribe (yes/no)", &format!("{UP}{ENTER}"))
        // Optional select: the cursor starts on "— skip —".
        .answer("? Size", ENTER)
        .answer("? Plan", &format!("{DOWN}{DOWN}{ENTER}"))
        // Optional multi-select, nothing ticked: skipped.
        .answer("? Tags", ENTER)
        .expect("type raw JSON")
        .expect("? Address *")
        .send("{\"city\": \"Paris\"}\r")
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {
        "age": 33, "ratio": -0.5, "subscribe": true, "plan": "pro",
        "address": {"city": "Paris"}
    }}));
}

/// Wrong answers are reported and asked again, with the rejected text kept.
#[test]
fn validation_errors_are_asked_again() {
    let schema = json!({
        "type": "object",
        "properties": {
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "email": {"type": "string", "title": "Email", "format": "email"}
        },
        "required": ["age", "email"]
    });
    let mut p = Test::new().stdin(form("Validate", schema)).pty();
    p.answer("? Age *", "\r")
        .expect("required: type a value")
        .send("abc\r")
        .expect("\"abc\" is not a number")
        .expect("› abc")
        .send(&format!("{}200\r", clear(3)))
        .expect("200 is greater than the maximum of 150")
        .expect("› 200")
        .send(&format!("{}42\r", clear(3)))
        .answer("? Email *", "not-an-email\r")
        .expect("is not a valid email")
        .send(&format!("{}ada@example.com\r", clear(12)))
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"age": 42, "email": "ada@example.com"}}));
}

/// minItems / maxItems of a multi-select: too few and too many are re-asked,
/// keeping what was ticked.
#[test]
fn multi_select_limits_are_asked_again() {
    let schema = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "title": "Tags", "minItems": 1, "maxItems": 2,
            "items": {"type": "string", "enum": ["a", "b", "c"]}}},
        "required": ["tags"]
    });
    let mut p = Test::new().stdin(form("Limits", schema)).pty();
    p.answer("? Tags * (pick 1 to 2)", ENTER)
        .expect("pick at least 1 item")
        .send(&format!("{SPACE}{DOWN}{SPACE}{DOWN}{SPACE}{ENTER}"))
        .expect("pick at most 2 items")
        // Still all three ticked, the cursor where it was: go to the top
        // and untick the first.
        .send(&format!("{HOME}{SPACE}{ENTER}"))
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"tags": ["b", "c"]}}));
}

fn two_fields() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]}
        },
        "required": ["name", "color"]
    })
}

/// Review, edit a field, review again, submit.
#[test]
fn review_then_edit_a_field() {
    let mut p = Test::new().stdin(form("Edit", two_fields())).pty();
    p.answer("? Name *", "Ada\r")
        .answer("? Color *", ENTER)
        .expect_re(r"Color\s+red")
        .answer("Send these answers?", &format!("{DOWN}{ENTER}"))
        .answer("Which field?", &format!("{DOWN}{ENTER}"))
        .answer("? Color *", &format!("{DOWN}{DOWN}{ENTER}"))
        .expect_re(r"Color\s+blue")
        .answer("Send these answers?", ENTER);
    p.finish_with(json!({"action": "accept", "content": {"name": "Ada", "color": "blue"}}));
}

/// Decline from the review sends nothing.
#[test]
fn decline_from_the_review() {
    let mut p = Test::new().stdin(form("Decline", two_fields())).pty();
    p.answer("? Name *", "Ada\r")
        .answer("? Color *", ENTER)
        .answer("Send these answers?", &format!("{DOWN}{DOWN}{ENTER}"));
    p.finish_with(json!({"action": "decline"}));
}

/// Cancel from the review.
#[test]
fn cancel_from_the_review() {
    let mut p = Test::new().stdin(form("Cancel", two_fields())).pty();
    p.answer("? Name *", "Ada\r")
        .answer("? Color *", ENTER)
        .answer("Send these answers?", &format!("{UP}{ENTER}"));
    p.finish_with(json!({"action": "cancel"}));
}

/// Esc on a list cancels the whole request.
#[test]
fn esc_on_a_list_cancels() {
    let mut p = Test::new().stdin(form("Esc", two_fields())).pty();
    p.answer("? Name *", "Ada\r").answer("? Color *", ESC);
    let f = p.finish_with(json!({"action": "cancel"}));
    assert!(f.screen_text().contains("cancelled"), "{}", f.screen_text());
}

/// Esc on a text line cancels too (dialoguer's Input would ignore it).
#[test]
fn esc_on_a_text_line_cancels() {
    let mut p = Test::new().stdin(form("Esc", two_fields())).pty();
    p.answer("? Name *", &format!("Ad{ESC}"));
    p.finish_with(json!({"action": "cancel"}));
}

/// Ctrl-C on a list: cancel, the cursor shown again.
#[test]
fn ctrl_c_on_a_list_cancels_and_restores_the_terminal() {
    let mut p = Test::new().stdin(form_rpc("Ctrl-C", two_fields())).pty();
    p.answer("? Name *", "Ada\r")
        .answer_settled("? Color *", CTRL_C);
    let f = p.finish_with(json!({"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}}));
    let screen = &f.screen;
    let last_hide = screen.windows(6).rposition(|w| w == b"\x1b[?25l");
    let last_show = screen.windows(6).rposition(|w| w == SHOW_CURSOR);
    assert!(
        last_show.is_some() && last_show > last_hide,
        "cursor left hidden: {}",
        f.screen_text().escape_debug()
    );
}

/// Ctrl-C on a text line cancels.
#[test]
fn ctrl_c_on_a_text_line_cancels() {
    let mut p = Test::new().stdin(form("Ctrl-C", two_fields())).pty();
    p.answer_settled("? Name *", CTRL_C);
    p.finish_with(json!({"action": "cancel"}));
}

/// Ctrl-C pressed the moment a prompt appears (before it reads keys) must
/// still cancel rather than be lost.
#[test]
fn ctrl_c_right_away_cancels() {
    let mut p = Test::new().stdin(form("Ctrl-C", two_fields())).pty();
    p.answer("? Name *", CTRL_C);
    p.finish_with(json!({"action": "cancel"}));
}

/// No terminal at all (setsid, stdin a file, stdout captured) under
/// `--ui terminal`: exit 2, a message that suggests --answer, nothing on
/// stdout. (The default, `auto`, serves the browser page: tests/browser.rs.)
#[test]
fn no_terminal_is_an_error_that_suggests_answer() {
    let dir = tempfile::tempdir().unwrap();
    let req = dir.path().join("req.json");
    std::fs::write(&req, form("No tty", two_fields())).unwrap();
    // Without a terminal elicit must not block: a hang past the run's
    // limit fails the test.
    Test::new()
        .words("--ui terminal")
        .stdin_from(std::fs::File::open(&req).unwrap())
        .no_terminal()
        .status(2)
        .run()
        .stderr_has("--answer")
        .stdout_is("");
}

/// With stderr sent to a file the prompts still work: they draw on /dev/tty.
#[test]
fn prompts_work_with_stderr_redirected() {
    let mut p = Test::new()
        .stdin(form("Redirected", two_fields()))
        .stderr_to_file()
        .pty();
    p.answer("? Name *", "Ada\r")
        .answer("? Color *", &format!("{DOWN}{ENTER}"))
        .answer("Send these answers?", ENTER);
    let f =
        p.finish_with(json!({"action": "accept", "content": {"name": "Ada", "color": "green"}}));
    let log = std::fs::read_to_string(f.dir.join("err.log")).unwrap();
    assert!(!log.contains("Name"), "prompt text went to stderr: {log:?}");
}

/// --timeout: nobody answers, the result is cancel, exit 0.
#[test]
fn timeout_sends_cancel() {
    let mut p = Test::new()
        .stdin(form_rpc("Timeout", two_fields()))
        .args(["--timeout", "1s"])
        .pty();
    p.expect("? Name *").expect("timed out");
    let f = p.finish_with(json!({"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}}));
    assert!(contains(&f.screen, SHOW_CURSOR));
}

/// --timeout while a list is drawn (cursor hidden): cancel, cursor back.
#[test]
fn timeout_on_a_list_restores_the_cursor() {
    let mut p = Test::new()
        .stdin(form("Timeout", two_fields()))
        .args(["--timeout", "1s"])
        .pty();
    p.answer("? Name *", "Ada\r")
        .expect("? Color *")
        .expect("timed out");
    let f = p.finish_with(json!({"action": "cancel"}));
    let screen = &f.screen;
    let last_hide = screen.windows(6).rposition(|w| w == b"\x1b[?25l");
    let last_show = screen.windows(6).rposition(|w| w == SHOW_CURSOR);
    assert!(last_show > last_hide, "{}", f.screen_text().escape_debug());
}

/// Escape sequences in server text never reach the terminal; the visible
/// text does.
#[test]
fn escape_sequences_in_server_text_are_harmless() {
    let message = "Hello \u{1b}]0;pwned\u{7}world \u{1b}[2J\u{1b}[31mred\u{1b}[0m \
                   \u{1b}]8;;https://evil.example/\u{7}click me\u{1b}]8;;\u{7} end";
    let schema = json!({
        "type": "object",
        "properties": {
            "c": {"type": "string", "title": "Pick \u{1b}[2Ja color",
                  "description": "desc \u{1b}]0;title\u{7}text",
                  "enum": ["red", "blue"], "enumNames": ["Red \u{1b}[5mblink", "Blue"]}
        },
        "required": ["c"]
    });
    let mut p = Test::new()
        .stdin(form(message, schema))
        .args(["--server", "srv\u{1b}[2Jname"])
        .pty();
    p.expect("Hello world red click me end")
        .answer("? Pick a color *", ENTER)
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(json!({"action": "accept", "content": {"c": "red"}}));
    let screen = &f.screen;
    for bad in [
        &b"\x1b]0;"[..],
        b"\x1b]8;",
        b"\x1b[2J",
        b"\x1b[31m",
        b"\x1b[5m",
        b"\x07",
        b"pwned",
        b"evil.example",
    ] {
        assert!(
            !contains(screen, bad),
            "{:?} reached the terminal: {}",
            String::from_utf8_lossy(bad),
            f.screen_text().escape_debug()
        );
    }
    let text = f.screen_text();
    for good in ["srvname", "desc text", "Red blink"] {
        assert!(
            text.contains(good),
            "{good:?} missing: {}",
            text.escape_debug()
        );
    }
}

/// --answer gives some fields; only the others are asked.
#[test]
fn answers_mixed_with_prompts() {
    let mut p = Test::new()
        .stdin(everything())
        .args([
            "-a",
            "name=Ada",
            "-a",
            "integer=7",
            "--answer",
            "legacyTitledEnum=Dogs",
        ])
        .pty();
    p.answer("? Boolean", ENTER)
        .answer("? String with default", ENTER)
        .answer("? String with email format", ENTER)
        .answer("? String with uri format", ENTER)
        .answer("? String with date format", ENTER)
        .answer("? Number in range", ENTER)
        .answer("? Untitled Single Select Enum", ENTER)
        .answer("? Untitled Multiple Select Enum", ENTER)
        .answer("? Titled Single Select Enum", ENTER)
        .answer("? Titled Multiple Select Enum", ENTER)
        .expect("Review your answers")
        .answer("Send these answers?", ENTER);
    let f = p.finish_with(
        json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {
            "name": "Ada",
            "firstLine": "It was a dark and stormy night.",
            "integer": 7,
            "number": DEFAULT_NUMBER,
            "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"],
            "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-2"
        }}}),
    );
    let text = f.screen_text();
    for asked in ["? String *", "? Integer", "? Legacy"] {
        assert!(
            !text.contains(asked),
            "{asked} was asked: {}",
            text.escape_debug()
        );
    }
}

fn approve_only() -> String {
    form(
        "Allow the server to continue?",
        json!({"type": "object", "properties": {}}),
    )
}

#[test]
fn approve_only_form_accept() {
    let mut p = Test::new().stdin(approve_only()).pty();
    p.expect("Allow the server to continue?")
        .answer("Your answer", ENTER);
    p.finish_with(json!({"action": "accept", "content": {}}));
}

#[test]
fn approve_only_form_decline() {
    let mut p = Test::new().stdin(approve_only()).pty();
    p.answer("Your answer", &format!("{DOWN}{ENTER}"));
    p.finish_with(json!({"action": "decline"}));
}

#[test]
fn approve_only_form_cancel() {
    let mut p = Test::new().stdin(approve_only()).pty();
    p.answer("Your answer", ESC);
    p.finish_with(json!({"action": "cancel"}));
}

/// A JSON-RPC request in, a JSON-RPC response out with the same id (a
/// string id stays a string).
#[test]
fn json_rpc_request_gets_a_response_with_the_same_id() {
    let req = json!({
        "jsonrpc": "2.0", "id": "req-42",
        "method": "elicitation/create",
        "params": {"message": "RPC", "requestedSchema": two_fields()}
    })
    .to_string();
    let mut p = Test::new().stdin(req).pty();
    p.answer("? Name *", "Ada\r")
        .answer("? Color *", ENTER)
        .answer("Send these answers?", ENTER);
    p.finish_with(
        json!({"jsonrpc": "2.0", "id": "req-42", "result": {"action": "accept",
        "content": {"name": "Ada", "color": "red"}}}),
    );
}

/// NO_COLOR: no SGR colour sequences at all; without it, colours are drawn.
#[test]
fn no_color_means_no_colours() {
    let run = |colour: bool| {
        let mut spec = Test::new().stdin(form("Colours", two_fields()));
        if colour {
            spec = spec.env_remove("NO_COLOR");
        }
        let mut p = spec.pty();
        p.answer("Name", "Ada\r")
            .answer("Color", ENTER)
            .answer("Send these answers?", &format!("{DOWN}{DOWN}{ENTER}"));
        p.finish_with(json!({"action": "decline"}))
    };
    let plain = run(false);
    let sgr = regex_lite_sgr(&plain.screen);
    assert!(sgr.is_empty(), "SGR under NO_COLOR: {sgr:?}");
    let coloured = run(true);
    assert!(
        !regex_lite_sgr(&coloured.screen).is_empty(),
        "no colours without NO_COLOR"
    );
}

/// The SGR sequences (`ESC [ … m`) in `bytes`.
fn regex_lite_sgr(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == 0x1b && bytes[i + 1] == b'[' {
            let mut j = i + 2;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b';') {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'm' {
                found.push(String::from_utf8_lossy(&bytes[i..=j]).into_owned());
            }
            i = j;
        } else {
            i += 1;
        }
    }
    found
}

/// A field whose name looks like a secret gets a warning.
#[test]
fn secret_looking_field_is_flagged() {
    let schema = json!({"type": "object", "properties": {"api_token": {"type": "string"}}});
    let mut p = Test::new().stdin(form("Secret", schema)).pty();
    p.expect("this looks like a secret")
        .expect("? api_token")
        .send(ENTER)
        .answer("Send these answers?", &format!("{DOWN}{DOWN}{ENTER}"));
    p.finish_with(json!({"action": "decline"}));
}

/// Ctrl-C or Ctrl-D pressed while a list redraws after a key still
/// cancels: a prompt keeps the terminal in raw mode while it is up, so the
/// key is read as a key, not lost to the line discipline (Ctrl-D became a
/// line-mode end of file that was never read, and elicit waited on).
#[test]
fn a_cancel_key_between_two_keys_still_cancels() {
    let items: Vec<String> = (0..30).map(|i| format!("item number {i}")).collect();
    let schema = json!({"type": "object", "required": ["c"],
        "properties": {"c": {"type": "string", "title": "Long list", "enum": items}}});
    for key in [CTRL_C, CTRL_D] {
        for i in 0..8u64 {
            let mut p = Test::new().stdin(form("Race", schema.clone())).pty();
            p.expect("? Long list *").expect("item number 29");
            p.send_settled(DOWN);
            quiet_for(
                std::time::Duration::from_micros(60 * i),
                "each round a gap of its own between the two keys",
            );
            p.send(key);
            p.finish_with(json!({"action": "cancel"}));
        }
    }
}
