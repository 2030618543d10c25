//! `elicit hook claude-code`: Claude Code's documented `Elicitation` hook
//! input in (form and URL mode), the exact `hookSpecificOutput` out; the
//! empty, exit-0 fall-through when nobody may answer; the page in headless
//! Chromium; the `ElicitationResult` record.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::page::{Browser, NoTerminal, LIMIT};
use crate::common::Test;

/// The common fields Claude Code gives every hook, then the event's own.
fn hook_input(event: Value) -> Value {
    let mut input = json!({
        "session_id": "9f1c2d3e-0000-4000-8000-000000000001",
        "transcript_path": "/home/ada/.claude/projects/shop/9f1c2d3e.jsonl",
        "cwd": "/home/ada/shop",
        "permission_mode": "default",
    });
    input
        .as_object_mut()
        .unwrap()
        .extend(event.as_object().unwrap().clone());
    input
}

fn form_event(server: &str) -> Value {
    hook_input(json!({
        "hook_event_name": "Elicitation",
        "mcp_server_name": server,
        "message": "Where should we deploy?",
        "mode": "form",
        "elicitation_id": "el-7",
        "requested_schema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "enum": ["eu-west-1", "us-east-1"]},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
                "dryRun": {"type": "boolean", "default": true}
            },
            "required": ["region"]
        }
    }))
}

fn url_event(server: &str) -> Value {
    hook_input(json!({
        "hook_event_name": "Elicitation",
        "mcp_server_name": server,
        "message": "Connect your GitHub account",
        "mode": "url",
        "url": "https://github.example/login/oauth?state=abc",
        "elicitation_id": "el-8"
    }))
}

/// `elicit hook claude-code ARGS` with `input` on stdin and no terminal,
/// as Claude Code runs a hook.
fn hook(args: &[&str], input: &Value) -> Test {
    Test::new()
        .args(["hook", "claude-code"])
        .args(args)
        .stdin(input.to_string())
        .limit(Duration::from_secs(30))
}

fn rules(dir: &std::path::Path) -> String {
    let path = dir.join("answers.json");
    std::fs::write(
        &path,
        json!({"elicit": "answers/1", "rules": [
            {"match": {"server": "deploy-bot", "fields": ["region"]}, "answer": {"region": "eu-west-1", "replicas": "5"}},
            {"match": {"server": "deploy-bot", "mode": "url"}, "answer": "decline"}
        ]})
        .to_string(),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn rules_answer_the_documented_input_with_the_exact_output() {
    let dir = tempfile::tempdir().unwrap();
    let answers = rules(dir.path());
    let form = hook(
        &["--answers", &answers, "--no-input"],
        &form_event("deploy-bot"),
    )
    .run();
    assert_eq!(
        serde_json::from_str::<Value>(form.stdout()).unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
            "content": {"region": "eu-west-1", "replicas": 5, "dryRun": true}}})
    );
    let url = hook(
        &["--answers", &answers, "--no-input"],
        &url_event("deploy-bot"),
    )
    .run();
    assert_eq!(
        serde_json::from_str::<Value>(url.stdout()).unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}})
    );
    // -a works as everywhere; a URL accepted carries no content.
    let accepted = hook(&["-a", "accept"], &url_event("other")).run();
    assert_eq!(
        serde_json::from_str::<Value>(accepted.stdout()).unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept"}})
    );
}

/// No rule matches (another server) and nobody may be asked: nothing on
/// stdout and exit 0, so Claude Code shows its own dialog; `--fallback`
/// answers instead. Never exit 2, which Claude Code reads as a denial.
#[test]
fn nobody_to_ask_falls_through_to_claude_code() {
    let dir = tempfile::tempdir().unwrap();
    let answers = rules(dir.path());
    for event in [form_event("billing"), url_event("billing")] {
        let ran = hook(&["--answers", &answers, "--no-input"], &event).run();
        assert_eq!(ran.stdout(), "", "{}", ran.stderr());
        assert!(
            ran.stderr().contains("Claude Code asks instead"),
            "{}",
            ran.stderr()
        );
        let declined = hook(
            &["--answers", &answers, "--no-input", "--fallback", "decline"],
            &event,
        )
        .run();
        declined
            .stderr_has("nobody may answer here (no rule or person")
            .stderr_has("--fallback answers it");
        assert_eq!(
            serde_json::from_str::<Value>(declined.stdout()).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}})
        );
    }
    // Under CI with no terminal, the page is never a fallback either.
    Test::new()
        .args(["hook", "claude-code"])
        .env("CI", "true")
        .no_terminal()
        .stdin(form_event("billing").to_string())
        .limit(Duration::from_secs(15))
        .stdout("")
        .run()
        .stderr_has("Claude Code asks instead");
    // A bad input is a non-blocking error (1), never a denial (2).
    hook(
        &[],
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"}),
    )
    .status(1)
    .stdout("")
    .run()
    .stderr_has("not a Claude Code Elicitation or ElicitationResult hook input (hook_event_name: \"PreToolUse\")");
    hook(&[], &json!([1, 2]))
        .status(1)
        .stdout("")
        .run()
        .stderr_has("(hook_event_name: missing)");
}

/// The `ElicitationResult` event is kept in the record, as are the hook's
/// own answers; the record is readable by its owner only.
#[test]
fn the_record_keeps_what_was_answered() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("answered.jsonl");
    let record_arg = record.to_str().unwrap();
    let answers = rules(dir.path());
    hook(
        &["--answers", &answers, "--no-input", "--record", record_arg],
        &form_event("deploy-bot"),
    )
    .stdout(concat!(
        r#"{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","#,
        r#""content":{"region":"eu-west-1","replicas":5,"dryRun":true}}}"#,
        "\n"
    ))
    .run();
    let result = hook_input(json!({"hook_event_name": "ElicitationResult",
        "mcp_server_name": "billing", "action": "accept", "mode": "form",
        "elicitation_id": "el-9", "content": {"plan": "pro"}}));
    hook(&["--record", record_arg], &result).stdout("").run();
    let lines: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["event"], "Elicitation");
    assert_eq!(lines[0]["result"]["content"]["region"], "eu-west-1");
    assert_eq!(lines[1]["event"], "ElicitationResult");
    assert_eq!(lines[1]["content"], json!({"plan": "pro"}));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&record).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the record is private: {mode:o}");
}

/// A person answers on the page, in headless Chromium: the hook prints
/// what they gave.
#[test]
fn the_page_answers_a_hook_in_chromium() {
    let b = Browser::start();
    let p = NoTerminal::spawn(
        &["hook", "claude-code", "--no-open"],
        Some(&form_event("deploy-bot").to_string()),
    );
    b.goto(&p.page_address());
    b.find("form[action$='/answer/1']");
    b.click("select[name=region] option[value=us-east-1]");
    b.type_into("[name=replicas]", "7");
    b.click("button[name=action][value=accept]");
    let out = p.lines.recv_timeout(LIMIT).expect("the hook answered");
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "Elicitation");
    assert_eq!(answer["hookSpecificOutput"]["action"], "accept");
    assert_eq!(
        answer["hookSpecificOutput"]["content"]["region"],
        "us-east-1"
    );
    assert_eq!(answer["hookSpecificOutput"]["content"]["replicas"], 7);
    // The hook ends after this answer: its page says the tab can be closed.
    let text = b.body_text();
    assert!(text.contains("You can close this tab."), "{text}");
    assert!(!text.contains("next request"), "{text}");
}

/// A typo in the hook's settings (a flag, or a variable of its
/// environment in the wrong case) is no denial: clap would exit 2, which
/// Claude Code reads as "deny" for every elicitation. The hook says what
/// is wrong (naming the variable), prints nothing and exits 0, so Claude
/// Code shows its own dialog.
#[test]
fn a_bad_flag_or_variable_leaves_the_elicitation_to_claude_code() {
    use std::os::unix::ffi::OsStringExt;
    let not_text = std::ffi::OsString::from_vec(b"yes\xff".to_vec());
    type Var = Option<(&'static str, std::ffi::OsString)>;
    let cases: Vec<(Vec<&str>, Var)> = vec![
        (vec![], Some(("ELICIT_HOOK_FALLBACK", "Decline".into()))),
        (vec![], Some(("ELICIT_UI", "Browser".into()))),
        (vec![], Some(("ELICIT_NO_INPUT", not_text))),
        (vec!["--prompt-timeout", "5x"], None),
        (vec!["--fallback", "Decline"], None),
    ];
    for (args, var) in cases {
        let mut test = Test::new()
            .args(["hook", "claude-code"])
            .args(&args)
            .no_terminal()
            .stdin(form_event("deploy-bot").to_string())
            .limit(Duration::from_secs(30));
        if let Some((name, value)) = &var {
            test = test.env(name, value);
        }
        let ran = test.run();
        assert_eq!(
            (ran.code(), ran.stdout()),
            (0, ""),
            "{args:?} {var:?}: {}",
            ran.stderr()
        );
        ran.stderr_has("Claude Code asks instead");
        if let Some((name, _)) = var {
            ran.stderr_has(&format!(
                "the value comes from {name} in the hook's environment"
            ));
        }
    }
    // A misspelt client is no denial either.
    Test::new()
        .args(["hook", "claude-cod"])
        .stdin(form_event("deploy-bot").to_string())
        .run()
        .stdout_is("")
        .stderr_has("claude-cod");
}

/// `--record` writes only into a file of its user's that nobody else may
/// open: in a shared sticky folder another user (nobody) plants the record
/// first, open to all, to read the answers back; a link or a file of the
/// user's own that others may read is refused too. The answer is then not
/// given (exit 1: Claude Code asks), and nothing is written.
#[test]
fn the_record_is_never_a_file_another_user_can_read() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path();
    std::fs::set_permissions(shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let answers = rules(shared);
    let refused = |record: &std::path::Path, why: &str| {
        let arg = record.to_str().unwrap();
        let ran = hook(
            &["--answers", &answers, "--no-input", "--record", arg],
            &form_event("deploy-bot"),
        )
        .status(1)
        .stdout("")
        .run();
        ran.stderr_has(&format!("cannot write the record {arg}"))
            .stderr_has(why);
    };
    let planted = shared.join("planted.jsonl");
    let plant = format!("touch '{0}' && chmod 666 '{0}'", planted.to_str().unwrap());
    if let Some(mut nobody) = crate::common::page::as_other_user("sh", &["-c", &plant]) {
        assert!(
            nobody.status().unwrap().success(),
            "nobody planted the record"
        );
        refused(&planted, "belongs to another user (uid ");
        assert_eq!(
            std::fs::read_to_string(&planted).unwrap(),
            "",
            "nothing written"
        );
    }
    let open_to_all = shared.join("mine.jsonl");
    std::fs::write(&open_to_all, "").unwrap();
    std::fs::set_permissions(&open_to_all, std::fs::Permissions::from_mode(0o644)).unwrap();
    refused(&open_to_all, "other users may open it");
    assert_eq!(std::fs::read_to_string(&open_to_all).unwrap(), "");
    let link = shared.join("link.jsonl");
    std::os::unix::fs::symlink(shared.join("elsewhere.jsonl"), &link).unwrap();
    refused(&link, "symbolic link");
    assert!(
        !shared.join("elsewhere.jsonl").exists(),
        "no file made through the link"
    );
}

/// Without `--prompt-timeout` the hook's page is bounded under Claude
/// Code's default hook timeout (60 s): the answer is cancel at 50 s, so
/// the hook answers before Claude Code kills it and no page is left open.
#[test]
fn the_hooks_page_is_bounded_under_claude_codes_default_timeout() {
    let p = NoTerminal::spawn(
        &["hook", "claude-code", "--no-open"],
        Some(&form_event("deploy-bot").to_string()),
    );
    p.page_address();
    let started = std::time::Instant::now();
    let out = p
        .lines
        .recv_timeout(Duration::from_secs(58))
        .expect("the hook answered within Claude Code's 60 s");
    assert!(
        started.elapsed() >= Duration::from_secs(45),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"}})
    );
}
