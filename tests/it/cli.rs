//! Integration tests through the real binary: every fixture, every input
//! shape, the seed's mapping rows, and each rejection.

use crate::common;

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::common::{Run, Test};

/// Runs elicit with `--no-input` (tests must never prompt, even when run
/// from a terminal) on `stdin`.
fn run(args: &[&str], stdin: &str) -> Test {
    Test::new().arg("--no-input").args(args).stdin(stdin)
}

fn stdout_json(a: &Run) -> Value {
    a.json()
}

#[test]
fn every_fixture_case_gives_its_expected_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("cases.json")).unwrap()).unwrap();
    assert!(cases.len() >= 20, "the case list shrank");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let args: Vec<&str> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let out = Test::new()
            .arg("--no-input")
            .args(&args)
            .arg(root.join(case["input"].as_str().unwrap()))
            .stderr_unchecked(
                "the cases hold stdout; the warnings some inputs draw are not in them",
            )
            .run();
        let stdout = out.stdout();
        let want = case["stdout"].as_str().unwrap();
        if out.code() != 0 || stdout.trim_end() != want {
            failures.push(format!(
                "{name}: exit {:?}\n  want {want}\n  got  {}\n  stderr {}",
                Some(out.code()),
                stdout.trim_end(),
                out.stderr()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn readme_example_prints_accept_with_content() {
    run(&["-a", "region=apac"], r#"{"message":"Region?","requestedSchema":{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}}"#).run()
        .stdout_is("{\"action\":\"accept\",\"content\":{\"region\":\"apac\"}}\n");
}

#[test]
fn json_rpc_ids_come_back_exactly() {
    let req = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{{"message":"ok?","requestedSchema":{{"type":"object","properties":{{}}}}}}}}"#
        )
    };
    for id in ["\"abc\"", "7", "1.0", "1e2", "-0", "\"\\u00e9\""] {
        let a = run(&["-a", "accept"], &req(id)).run();
        let out = a.stdout().to_string();
        assert_eq!(
            out,
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"action\":\"accept\",\"content\":{{}}}}}}\n")
        );
    }
}

#[test]
fn server_everything_form_fills_defaults_in_schema_order() {
    let req = std::fs::read_to_string("fixtures/server-everything/form.request.json").unwrap();
    let a = run(
        &[
            "-a",
            "accept",
            "-a",
            "name=Ada",
            "-a",
            "email=ada@example.com",
        ],
        &req,
    )
    .run();
    let v = stdout_json(&a);
    let content = v["result"]["content"].as_object().unwrap();
    assert_eq!(content["integer"], json!(42));
    assert!(
        content["integer"].is_i64(),
        "integer must be a JSON integer"
    );
    assert_eq!(content["number"].to_string(), "3.14");
    let keys: Vec<&str> = content.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "name",
            "firstLine",
            "email",
            "integer",
            "number",
            "untitledSingleSelectEnum",
            "untitledMultipleSelectEnum",
            "titledSingleSelectEnum",
            "titledMultipleSelectEnum",
            "legacyTitledEnum"
        ]
    );
}

// --- the seed's mapping rows, through `elicit request` and `elicit result` ---

#[test]
fn request_maps_form_to_input_with_schema() {
    let schema = json!({"type":"object","properties":{"region":{"type":"string"}}});
    let params = json!({"mode":"form","message":"What is your deployment region?","requestedSchema": schema});
    let a = Test::new().arg("request").stdin(params.to_string()).run();
    let r = stdout_json(&a);
    assert_eq!(r["kind"], "input");
    assert_eq!(r["prompt"], "What is your deployment region?");
    assert_eq!(r["data"]["schema"], schema);
    assert!(r["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        r.get("url").is_none() && r.get("expiresAt").is_none(),
        "empty keys are omitted: {r}"
    );
}

#[test]
fn request_maps_absent_and_empty_mode_to_input() {
    for mode in [json!(null), json!("")] {
        let mut params = json!({"message":"m","requestedSchema":{"type":"object","properties":{}}});
        if !mode.is_null() {
            params["mode"] = mode;
        }
        let r = stdout_json(&Test::new().arg("request").stdin(params.to_string()).run());
        assert_eq!(r["kind"], "input");
    }
}

#[test]
fn request_maps_url_to_authorization_without_schema() {
    let params = json!({"mode":"url","message":"Sign in to continue","url":"https://example.com/oauth/authorize","elicitationId":"e-9"});
    let r = stdout_json(&Test::new().arg("request").stdin(params.to_string()).run());
    assert_eq!(r["kind"], "authorization");
    assert_eq!(r["url"], "https://example.com/oauth/authorize");
    assert_eq!(r["prompt"], "Sign in to continue");
    assert!(r["data"].get("schema").is_none());
    assert_eq!(r["data"]["elicitationId"], "e-9");
}

#[test]
fn request_ids_are_fresh_per_call() {
    let params = r#"{"message":"","requestedSchema":{"type":"object","properties":{}}}"#;
    let a = stdout_json(&Test::new().arg("request").stdin(params).run());
    let b = stdout_json(&Test::new().arg("request").stdin(params).run());
    assert_ne!(a["id"], b["id"]);
    assert_eq!(a["prompt"], "", "prompt is always written");
}

#[test]
fn result_maps_every_answer_row() {
    let rows = [
        (
            json!({"id":"r1","ok":true,"data":{"region":"apac"}}),
            json!({"action":"accept","content":{"region":"apac"}}),
        ),
        (
            json!({"id":"r1","ok":true}),
            json!({"action":"accept","content":{}}),
        ),
        (
            json!({"id":"r1","ok":false,"reason":"declined"}),
            json!({"action":"decline"}),
        ),
        (
            json!({"id":"r1","ok":false,"reason":"cancelled"}),
            json!({"action":"cancel"}),
        ),
        (
            json!({"id":"r1","ok":false,"reason":"expired"}),
            json!({"action":"cancel"}),
        ),
        (json!({"id":"r1","ok":false}), json!({"action":"cancel"})),
    ];
    for (answer, want) in rows {
        let got = stdout_json(&Test::new().arg("result").stdin(answer.to_string()).run());
        assert_eq!(got, want, "for {answer}");
    }
}

#[test]
fn request_then_result_pipeline() {
    let req = std::fs::read_to_string("fixtures/shapes/form-region.json").unwrap();
    let r = stdout_json(&Test::new().arg("request").stdin(req).run());
    let answer = json!({"id": r["id"], "ok": true, "data": {"region": "eu-west-1"}});
    Test::new()
        .arg("result")
        .stdin(answer.to_string())
        .run()
        .stdout_is("{\"action\":\"accept\",\"content\":{\"region\":\"eu-west-1\"}}\n");
}

#[test]
fn result_rejects_non_answers() {
    Test::new()
        .arg("result")
        .stdin(r#"{"action":"accept"}"#)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("not a contract Answer");
}

// --- rejections ---

#[test]
fn bad_json_names_line_and_column() {
    run(&["-a", "accept"], "{\n  \"message\": \"x\",\n  oops\n}")
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("line 3, column 3");
}

#[test]
fn bad_inputs_are_clear_errors_never_panics() {
    let deep = "[".repeat(100_000);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"".to_vec(), "input is empty"),
        (b"   \n".to_vec(), "input is empty"),
        (b"[1,2]".to_vec(), "found an array"),
        (b"42".to_vec(), "found a number"),
        (b"{\"a\":1}".to_vec(), "not an elicitation"),
        (deep.into_bytes(), "nesting deeper than 128"),
        (b"{\"message\":\"\xff\"}".to_vec(), "not valid UTF-8"),
        (
            br#"{"message":"x","requestedSchema":[]}"#.to_vec(),
            "must be an object",
        ),
        (br#"{"message":"x"}"#.to_vec(), "missing `requestedSchema`"),
        (br#"{"mode":"url","message":"x"}"#.to_vec(), "missing `url`"),
        (
            br#"{"mode":"sms","message":"x"}"#.to_vec(),
            "unknown elicitation mode \"sms\"",
        ),
        (
            br#"{"method":"roots/list"}"#.to_vec(),
            "unsupported method \"roots/list\"",
        ),
        (
            br#"{"message":5,"requestedSchema":{}}"#.to_vec(),
            "`message` must be a string",
        ),
        (
            br#"{"jsonrpc":"2.0","method":"elicitation/create","params":{}}"#.to_vec(),
            "notification",
        ),
        (
            br#"{"jsonrpc":"2.0","id":{},"method":"elicitation/create","params":{}}"#.to_vec(),
            "`id` must be a string or a number",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#.to_vec(),
            "only -32042",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}"#.to_vec(),
            "asks nothing",
        ),
    ];
    for (input, want) in cases {
        let out = Test::new()
            .args(["--no-input", "-a", "accept"])
            .stdin(input.clone())
            .status(2)
            .run();
        let stderr = out.stderr();
        assert!(out.stdout().is_empty(), "stdout must stay empty for {want}");
        assert!(stderr.contains(want), "stderr for {want:?} was: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_fifty_megabyte_message_is_handled() {
    let big = "x".repeat(50 * 1024 * 1024);
    let req =
        format!(r#"{{"message":"{big}","requestedSchema":{{"type":"object","properties":{{}}}}}}"#);
    run(&["-a", "accept"], &req)
        .run()
        .stdout_is("{\"action\":\"accept\",\"content\":{}}\n");
}

#[test]
fn json_rpc_requests_with_bad_params_get_a_json_rpc_error_on_stdout() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"mode":"sms","message":"x"}}"#,
            -32602,
            "\"q1\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"mode":"url","message":"x"}}"#,
            -32602,
            "4",
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"elicitation/create"}"#,
            -32602,
            "5",
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"sampling/createMessage","params":{}}"#,
            -32601,
            "6",
        ),
    ];
    for (req, code, id) in cases {
        let a = run(&["-a", "accept"], req).status(2).run();
        let out = a.stdout().to_string();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["code"], code, "{req}");
        let message = v["error"]["message"].as_str().unwrap();
        a.stderr_has(&format!("elicit: {message}"));
        assert!(
            out.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},")),
            "{out}"
        );
    }
}

#[test]
fn invalid_answers_list_every_failing_field_and_print_nothing() {
    let req = std::fs::read_to_string("fixtures/kinds/every-kind.json").unwrap();
    let a = run(
        &[
            "-a",
            "seats=2.5",
            "-a",
            "budget=abc",
            "-a",
            "agree=maybe",
            "-a",
            "size=xl",
            "-a",
            "tags=ux",
            "-a",
            "tags=bug",
            "-a",
            "tags=docs",
            "-a",
            "email=nope",
            "-a",
            "birthday=2025-13-01",
            "-a",
            "meeting=2025-11-25",
            "-a",
            "site=notauri",
            "-a",
            "handle=ab",
            "-a",
            "code=abc",
            "-a",
            "region=Mars",
            "-a",
            "bogus=1",
            "-a",
            "seats=11",
        ],
        &req,
    )
    .status(2)
    .run();
    a.stdout_is("");
    let err = a.stderr().to_string();
    for want in [
        "seats: given 2 times",
        "budget: \"abc\" is not a number",
        "agree: \"maybe\" is not a yes/no answer",
        "size: \"xl\" is not one of: s, m, l",
        "tags: pick at most 2 items",
        "email: \"nope\" is not a valid email",
        "birthday: \"2025-13-01\" is not a valid date",
        "meeting: \"2025-11-25\" is not a valid date-time",
        "site: \"notauri\" is not a valid uri",
        "handle: \"ab\" is too short",
        "code: \"abc\" does not match the pattern",
        "region: \"Mars\" is not one of",
        "bogus: not a field of the requested schema",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

#[test]
fn range_and_integer_rules() {
    let req = r#"{"message":"n","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"x":{"type":"number","maximum":1.5}}}}"#;
    run(&["-a", "n=11", "-a", "x=2"], req)
        .status(2)
        .run()
        .stderr_has("n: 11 is greater than the maximum of 10")
        .stderr_has("x: 2 is greater than the maximum of 1.5");
    run(&["-a", "n=0", "-a", "x=1"], req)
        .status(2)
        .run()
        .stderr_has("less than the minimum of 1");
    run(&["-a", "n=3.0", "-a", "x=1.25"], req)
        .run()
        .stdout_is("{\"action\":\"accept\",\"content\":{\"n\":3,\"x\":1.25}}\n");
    run(&["-a", r#"{"n":4.5,"x":1}"#], req)
        .status(2)
        .run()
        .stderr_has("n: 4.5 is not a whole number");
}

#[test]
fn lengths_count_characters_not_bytes() {
    let req = r#"{"message":"n","requestedSchema":{"type":"object","properties":{"s":{"type":"string","minLength":3,"maxLength":3}}}}"#;
    run(&["-a", "s=日本語"], req)
        .stdout("{\"action\":\"accept\",\"content\":{\"s\":\"日本語\"}}\n")
        .run();
    run(&["-a", "s=éé"], req)
        .status(2)
        .run()
        .stderr_has("too short");
}

#[test]
fn accept_names_required_fields_without_defaults() {
    let req = std::fs::read_to_string("fixtures/kinds/every-kind.json").unwrap();
    let a = run(&["-a", "accept"], &req).status(2).run();
    a.stdout_is("");
    let err = a.stderr().to_string();
    assert!(err.contains("email: required, has no default"), "{err}");
    assert!(err.contains("region: required, has no default"), "{err}");
    assert!(!err.contains("handle:"), "handle has a default: {err}");
}

#[test]
fn unknown_fields_in_json_answers_are_rejected() {
    let req = std::fs::read_to_string("fixtures/shapes/form-region.json").unwrap();
    run(
        &["-a", r#"{"region":"eu-west-1","zone":"b"}"#, "-a", "accept"],
        &req,
    )
    .status(2)
    .run()
    .stdout_is("")
    .stderr_has("zone: not a field of the requested schema");
}

#[test]
fn bad_answer_syntax_is_a_usage_error() {
    let req = std::fs::read_to_string("fixtures/shapes/form-region.json").unwrap();
    run(&["-a", "region"], &req)
        .status(2)
        .run()
        .stderr_has("expected NAME=VALUE");
    run(&["-a", "{\"region\":"], &req)
        .status(2)
        .run()
        .stderr_has("invalid JSON at line 1");
    run(&["-a", "accept", "-a", "cancel"], &req)
        .status(2)
        .run()
        .stderr_has("conflicting answers");
    run(&["-a", "@/does/not/exist.json"], &req)
        .status(2)
        .run()
        .stderr_has("cannot read file");
    let url = std::fs::read_to_string("fixtures/shapes/url-bare.json").unwrap();
    run(&["-a", "token=abc"], &url)
        .status(2)
        .run()
        .stderr_has("URL elicitation");
}

#[test]
fn answers_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let req = std::fs::read_to_string("fixtures/shapes/form-region.json").unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        format!("@{}", p.display())
    };
    let values = write(
        "values.json",
        r#"{"region":"Singapore","replicas":2,"dryRun":false}"#,
    );
    run(&["-a", &values], &req).run().stdout_is("{\"action\":\"accept\",\"content\":{\"region\":\"ap-southeast-1\",\"replicas\":2,\"dryRun\":false}}\n");
    let answer = write(
        "answer.json",
        r#"{"id":"r1","ok":true,"data":{"region":"eu-west-1"}}"#,
    );
    run(&["-a", &answer], &req).run().stdout_is("{\"action\":\"accept\",\"content\":{\"region\":\"eu-west-1\",\"replicas\":3,\"dryRun\":true}}\n");
    let result = write("result.json", r#"{"action":"decline","content":null}"#);
    run(&["-a", &result], &req)
        .run()
        .stdout_is("{\"action\":\"decline\"}\n");
}

#[test]
fn unanswered_fields_without_a_terminal_fail_at_once_and_suggest_answer() {
    let req = std::fs::read_to_string("fixtures/shapes/form-region.json").unwrap();
    run(&["-a", "region=eu-west-1"], &req)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("replicas, dryRun")
        .stderr_has("--answer");
    let url = std::fs::read_to_string("fixtures/shapes/url-bare.json").unwrap();
    run(&[], &url)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("--answer accept");
}

/// `--ui terminal` keeps the terminal's error when there is none (the
/// default, `auto`, serves the browser page instead: tests/browser.rs).
#[test]
fn no_controlling_terminal_is_detected_without_no_input() {
    let req = std::fs::read_to_string("fixtures/shapes/form-region.json").unwrap();
    // No controlling terminal, as under cron or CI.
    let out = Test::new()
        .args(["--ui", "terminal"])
        .no_terminal()
        .stdin(req)
        .limit(std::time::Duration::from_secs(20))
        .status(2)
        .run();
    out.stdout_is("");
    let err = out.stderr().to_string();
    assert!(
        err.contains("no terminal") && err.contains("/dev/tty"),
        "{err}"
    );
}

#[test]
fn exit_status_flag_distinguishes_decline_and_cancel() {
    let req = std::fs::read_to_string("fixtures/kinds/empty-form.json").unwrap();
    run(&["-e", "-a", "accept"], &req)
        .stdout("{\"action\":\"accept\",\"content\":{}}\n")
        .run();
    run(&["-e", "-a", "decline"], &req)
        .status(3)
        .run()
        .stdout_is("{\"action\":\"decline\"}\n");
    run(&["-e", "-a", "cancel"], &req)
        .status(4)
        .run()
        .stdout_is("{\"action\":\"cancel\"}\n");
    // Without -e a cancel is still a success.
    run(&["-a", "cancel"], &req)
        .stdout("{\"action\":\"cancel\"}\n")
        .run();
}

#[test]
fn pretty_indents() {
    let req = std::fs::read_to_string("fixtures/kinds/empty-form.json").unwrap();
    run(&["--pretty", "-a", "accept"], &req)
        .run()
        .stdout_is("{\n  \"action\": \"accept\",\n  \"content\": {}\n}\n");
}

#[test]
fn file_argument_and_dash() {
    Test::new()
        .args([
            "--no-input",
            "-a",
            "accept",
            "fixtures/kinds/empty-form.json",
        ])
        .stdout("{\"action\":\"accept\",\"content\":{}}\n")
        .run();
    Test::new()
        .args(["--no-input", "-a", "accept", "-"])
        .stdin(std::fs::read_to_string("fixtures/kinds/empty-form.json").unwrap())
        .stdout("{\"action\":\"accept\",\"content\":{}}\n")
        .run();
    Test::new()
        .args(["--no-input", "/no/such/file.json"])
        .status(1)
        .run()
        .stderr_has("cannot open /no/such/file.json");
}

#[test]
fn lines_mode_keeps_order_and_accounts_for_every_line() {
    let form = r#"{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","default":1}}}}"#;
    let rpc = r#"{"jsonrpc":"2.0","id":"x","method":"elicitation/create","params":{"mode":"nope","message":"m"}}"#;
    let input = format!("{form}\nnot json\n{rpc}\n\n{form}\n");
    let a = run(&["--lines", "-a", "accept"], &input).status(2).run();
    let out = a.stdout().to_string();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(lines[0], json!({"action":"accept","content":{"n":1}}));
    assert_eq!(lines[1]["error"]["line"], 2);
    assert!(lines[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("column"));
    assert_eq!(lines[2]["id"], "x");
    assert_eq!(lines[2]["error"]["code"], -32602);
    assert_eq!(lines[2]["error"]["data"]["line"], 3);
    assert_eq!(lines[3]["error"]["line"], 4);
    assert_eq!(lines[4], lines[0]);
    let err = a.stderr().to_string();
    assert!(err.contains("3 of 5 lines failed"), "{err}");
}

#[test]
fn lines_mode_succeeds_and_reports_outcomes() {
    let req = r#"{"message":"m","requestedSchema":{"type":"object","properties":{}}}"#;
    let input = format!("{req}\n{req}\r\n{req}");
    run(&["--lines", "-a", "accept"], &input)
        .run()
        .stdout_is(&"{\"action\":\"accept\",\"content\":{}}\n".repeat(3));
    run(&["--lines", "-e", "-a", "decline"], &input)
        .status(3)
        .stdout("{\"action\":\"decline\"}\n".repeat(3))
        .run();
}

#[test]
fn server_text_in_errors_is_sanitised() {
    run(
        &["-a", "accept"],
        "{\"mode\":\"\\u001b]0;pwned\\u0007\",\"message\":\"x\"}",
    )
    .status(2)
    .run()
    .stderr_lacks("\u{1b}");
}

#[test]
fn help_and_version() {
    Test::new().arg("--help").run().stdout_has("--answer");
    Test::new().arg("--version").run().stdout_has("elicit");
}

#[test]
fn completions_and_man_page_come_from_the_clap_definitions() {
    for (shell, marker) in [
        ("bash", "_elicit()"),
        ("zsh", "#compdef elicit"),
        ("fish", "complete -c elicit"),
    ] {
        let a = Test::new().args(["completions", shell]).run();
        let out = a.stdout().to_string();
        assert!(out.contains(marker), "{shell}");
        assert!(
            out.contains("answer") && out.contains("proxy"),
            "{shell} completes options and commands"
        );
    }
    let a = Test::new().arg("man").run();
    let out = a.stdout().to_string();
    assert!(out.contains(".TH elicit 1") && out.contains("answer"));
}

#[test]
fn every_command_has_examples_in_its_help() {
    for cmd in [
        &["--help"][..],
        &["call", "--help"],
        &["proxy", "--help"],
        &["request", "--help"],
        &["result", "--help"],
        &["completions", "--help"],
        &["man", "--help"],
    ] {
        Test::new().args(cmd).run().stdout_has("Example");
    }
}

#[test]
fn result_for_an_authorization_request_drops_content_on_accept() {
    Test::new()
        .args(["result", "--kind", "authorization"])
        .stdin(r#"{"id":"r1","ok":true,"data":{"x":1}}"#)
        .run()
        .stdout_is("{\"action\":\"accept\"}\n");
}

#[test]
fn request_on_several_elicitations_prints_one_request_each() {
    let a = Test::new()
        .args(["request", "fixtures/shapes/input-required.json"])
        .run();
    let v = stdout_json(&a);
    let kinds: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["input", "authorization"]);
}

#[test]
fn an_approve_only_form_needs_a_decision() {
    let req = std::fs::read_to_string("fixtures/kinds/empty-form.json").unwrap();
    run(&[], &req)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("approval only");
}

/// A raw-JSON field names itself and the JSON type it wants;
/// text that does not parse is "invalid JSON" (unless the schema takes a
/// string); a big integer is quoted as typed; columns count from 1.
#[test]
fn raw_json_and_number_errors_say_what_was_wrong() {
    let req = json!({"method": "elicitation/create", "params": {"message": "m",
        "requestedSchema": {"type": "object", "properties": {
            "obj": {"type": "object", "title": "Settings"},
            "big": {"type": "integer", "title": "Big", "maximum": 10},
            "any": {"title": "Anything"}}, "required": ["obj"]}}})
    .to_string();
    run(&["-a", "obj=1", "-a", "big=1", "-a", "any=1"], &req)
        .status(2)
        .run()
        .stderr_has("obj: expected a JSON object for \"Settings\", got 1");
    run(&["-a", "obj=abc", "-a", "big=1", "-a", "any=1"], &req)
        .status(2)
        .run()
        .stderr_has("obj: invalid JSON for \"Settings\" at line 1, column 1: expected value");
    // No type: plain text is a string.
    let a = run(&["-a", "obj={}", "-a", "big=1", "-a", "any=abc"], &req).run();
    assert_eq!(stdout_json(&a)["content"]["any"], json!("abc"));
    a.stderr_has("field any: the property has no \"type\"; asked as raw JSON");
    run(
        &[
            "-a",
            "obj={}",
            "-a",
            "big=99999999999999999999",
            "-a",
            "any=1",
        ],
        &req,
    )
    .status(2)
    .run()
    .stderr_has("big: 99999999999999999999 is outside")
    .stderr_lacks("e+20");
    run(&["-a", "{\"obj\":\n"], &req)
        .status(2)
        .run()
        .stderr_has("invalid JSON at line 2, column 1");
    run(&["-a", "accept"], "{\"method\":\n")
        .failure()
        .run()
        .stderr_has("line 2, column 1");
}

/// Under --no-input every lenient-schema warning is printed,
/// before the error.
#[test]
fn schema_warnings_come_before_the_no_input_error() {
    let req = json!({"method": "elicitation/create", "params": {"message": "m",
        "requestedSchema": {"x-layout": "grid", "type": "object", "properties": {
            "a": {"type": "string", "format": "flavour", "x-ui": 1},
            "n": {"type": "object"}}, "required": ["a"]}}})
    .to_string();
    let out = run(&[], &req).status(2).run();
    let err = out.stderr().to_string();
    let at = |s: &str| {
        err.find(s)
            .unwrap_or_else(|| panic!("{s:?} missing in {err}"))
    };
    let error = at("no terminal to ask on");
    for w in [
        "warning: requestedSchema keyword \"x-layout\"",
        "warning: field a: format \"flavour\"",
        "warning: field a: keyword \"x-ui\" is not part of an MCP form schema; ignored",
        "warning: field n: type \"object\" is not a primitive MCP allows in a form; asked as raw JSON",
    ] {
        assert!(at(w) < error, "{w:?} after the error in {err}");
    }
}

/// A reader that goes away (`elicit --lines … | head`) is a write error,
/// exit 1, not a silent death by SIGPIPE (std's start-up ignores it; this
/// keeps anyone from changing the entry point without noticing).
#[test]
fn a_reader_that_goes_away_is_a_write_error_not_a_signal() {
    let one = std::fs::read_to_string("fixtures/server-everything/form.request.json").unwrap();
    let one: Value = serde_json::from_str(&one).unwrap();
    let line = format!("{one}\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines.ndjson");
    // About 12 MB of answers: far past any pipe and output buffer.
    std::fs::write(&path, line.repeat(4000)).unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    // A signal (SIGPIPE) would end it with no exit code: -1, not 1.
    Test::new()
        .words("--lines --no-input -a accept -a name=Ada -a email=ada@example.com")
        .arg(&path)
        .stdout_to(writer)
        .limit(std::time::Duration::from_secs(60))
        .status(1)
        .run();
}

/// As std's start-up does, a closed standard descriptor is opened on
/// /dev/null before anything else, so nothing elicit opens later (a `--log`
/// file, a pipe to a server, its signal socket) can become its stdout.
/// Seen from outside: elicit, started with stdout closed and waiting on its
/// input, has descriptor 1 open on /dev/null.
#[test]
fn a_closed_stdout_is_opened_on_dev_null() {
    let bin = std::path::PathBuf::from(common::BIN);
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" --no-input -a accept >&-")
        .arg(&bin)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let fd1 = format!("/proc/{}/fd/1", child.id());
    let exe = format!("/proc/{}/exe", child.id());
    let start = std::time::Instant::now();
    let mut seen = None;
    while start.elapsed() < std::time::Duration::from_secs(10) {
        if std::fs::read_link(&exe).ok().as_deref() == Some(bin.as_path()) {
            seen = std::fs::read_link(&fd1).ok();
            if seen.as_deref() == Some(Path::new("/dev/null")) {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(child.stdin.take());
    let _ = common::wait_at_most(&mut child, std::time::Duration::from_secs(30));
    assert_eq!(seen.as_deref(), Some(Path::new("/dev/null")));
}
