//! Hostile input through the real binary: huge numbers, huge
//! durations, duplicate keys, odd `@FILE`s, oversized documents. Each test
//! checks a clear error (or an exact value) and that nothing panics.
use crate::common::Test;
use serde_json::{json, Value};

/// Runs elicit (never prompting) with `args` on `stdin`.
fn run(args: &[&str], stdin: &str) -> Test {
    Test::new()
        .arg("--no-input")
        .args(args)
        .stdin(stdin)
        .limit(std::time::Duration::from_secs(30))
}

// ---- item 17: durations ---------------------------------------------------

#[test]
fn overflowing_durations_are_refused_by_every_duration_flag() {
    let huge = "18446744073709551615";
    let cases: Vec<Vec<&str>> = vec![
        vec!["--timeout", huge],
        vec!["--timeout", "18446744073709551615s"],
        vec!["--timeout", "400days"],
        vec!["call", "--timeout", huge, "--tool", "x", "--", "true"],
        vec![
            "call",
            "--prompt-timeout",
            huge,
            "--tool",
            "x",
            "--",
            "true",
        ],
        vec!["proxy", "--shutdown-grace", huge, "--", "true"],
        vec![
            "proxy",
            "--prompt-timeout",
            "99999999999999999999h",
            "--",
            "true",
        ],
    ];
    for args in cases {
        let out = Test::new().args(&args).stdin("{}").status(2).run();
        let stderr = out.stderr();
        assert!(stderr.contains("at most 365 days"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A year is still fine.
    let r = run(
        &["--timeout", "365days", "-a", "accept"],
        r#"{"message":"m","requestedSchema":{"type":"object","properties":{}}}"#,
    )
    .run();
    assert_eq!(r.json(), json!({"action": "accept", "content": {}}));
}

// ---- item 14: a JSON-RPC request rejected for its schema -------------------

fn rpc_request(id: Value, schema: Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "elicitation/create",
        "params": {"message": "m", "requestedSchema": schema}
    })
    .to_string()
}

#[test]
fn a_request_rejected_for_its_schema_gets_a_json_rpc_error_on_stdout() {
    let many: serde_json::Map<String, Value> = (0..5000)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    let cases = [
        (
            json!(5),
            json!({"type": "object", "properties": [1]}),
            "properties` must be an object",
        ),
        (
            json!("abc"),
            json!({"type": "object", "properties": many}),
            "5000 properties",
        ),
        (json!(7), json!("nope"), "must be an object"),
    ];
    for (id, schema, says) in cases {
        let input = rpc_request(id.clone(), schema);
        let single = run(&["-a", "accept"], &input).status(2).run();
        assert!(single.stderr().contains(says), "{}", single.stderr());
        let reply = single.json();
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(reply["id"], id);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains(says),
            "{reply}"
        );
        // The same rule as under --lines (apart from the line number).
        let lines = run(&["--lines", "-a", "accept"], &format!("{input}\n"))
            .status(2)
            .run();
        lines.stderr_has("elicit: 1 of 1 lines failed");
        let line: Value = serde_json::from_str(lines.stdout().trim()).unwrap();
        assert_eq!(line["id"], reply["id"]);
        assert_eq!(line["error"]["code"], reply["error"]["code"]);
        assert_eq!(line["error"]["message"], reply["error"]["message"]);
    }
}

// ---- item 15: @FILE answers ------------------------------------------------

const EMPTY_FORM: &str =
    r#"{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}"#;

#[test]
fn answer_files_must_be_regular_files() {
    let r = run(&["-a", "@/dev/zero"], EMPTY_FORM).status(2).run();
    assert!(r.stderr().contains("/dev/zero"), "{}", r.stderr());
    assert!(r.stderr().contains("a character device"), "{}", r.stderr());
    assert!(r.stdout().is_empty());

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("answers.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let arg = format!("@{}", fifo.display());
    let r = run(&["-a", &arg], EMPTY_FORM).status(2).run();
    assert!(r.stderr().contains("answers.fifo"), "{}", r.stderr());
    assert!(r.stderr().contains("a FIFO"), "{}", r.stderr());

    let arg = format!("@{}", dir.path().display());
    let r = run(&["-a", &arg], EMPTY_FORM).status(2).run();
    assert!(r.stderr().contains("a directory"), "{}", r.stderr());
}

#[test]
fn answer_files_over_the_input_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    // Sparse: no disk space used.
    f.set_len(64 * 1024 * 1024 + 1).unwrap();
    let arg = format!("@{}", big.display());
    let r = run(&["-a", &arg], EMPTY_FORM).status(2).run();
    assert!(r.stderr().contains("big.json"), "{}", r.stderr());
    assert!(
        r.stderr().contains("more than 67108864 bytes"),
        "{}",
        r.stderr()
    );
    // A regular file within the limit still works.
    let ok = dir.path().join("ok.json");
    std::fs::write(&ok, r#"{"n":"x"}"#).unwrap();
    let arg = format!("@{}", ok.display());
    let r = run(&["-a", &arg], EMPTY_FORM).run();
    assert_eq!(r.json(), json!({"action": "accept", "content": {"n": "x"}}));
}

// ---- item 18: an oversized input is reported with its real size ------------

#[test]
fn an_oversized_input_is_reported_with_its_real_size() {
    let limit: u64 = 64 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(limit + 1000)
        .unwrap();
    // As FILE, and as stdin redirected from the file: the size is known.
    let by_path = run(&[big.to_str().unwrap()], "").status(2).run();
    let by_redirect = Test::new()
        .arg("--no-input")
        .stdin_from(std::fs::File::open(&big).unwrap())
        .status(2)
        .run();
    for stderr in [
        by_path.stderr().to_string(),
        by_redirect.stderr().to_string(),
    ] {
        assert!(
            stderr.contains(&format!("input is {} bytes", limit + 1000)),
            "{stderr}"
        );
    }
    // Through a pipe the size is unknown: "more than" the limit, never
    // the limit + 1 that was read.
    let piped = Test::new()
        .arg("--no-input")
        .stdin(vec![b' '; limit as usize + 10])
        .status(2)
        .run();
    let stderr = piped.stderr();
    assert!(
        stderr.contains(&format!("more than {limit} bytes")),
        "{stderr}"
    );
    assert!(!stderr.contains(&format!("{}", limit + 1)), "{stderr}");
}

// ---- item 16: duplicate keys ------------------------------------------------

fn url_entry(id: Option<&str>) -> Value {
    let mut e = json!({"mode": "url", "url": "https://example.com/x", "message": "m"});
    if let Some(id) = id {
        e["elicitationId"] = json!(id);
    }
    e
}

fn url_required(entries: Vec<Value>) -> String {
    json!({"code": -32042, "message": "URL required", "data": {"elicitations": entries}})
        .to_string()
}

#[test]
fn duplicate_elicitation_ids_are_rejected_naming_the_key() {
    let cases = [
        (
            url_required(vec![url_entry(Some("dup")), url_entry(Some("dup"))]),
            "\"dup\"",
        ),
        // An explicit `#1` beside an entry with no id (stand-in key `#1`).
        (
            url_required(vec![url_entry(Some("#1")), url_entry(None)]),
            "\"#1\"",
        ),
        (
            url_required(vec![
                url_entry(None),
                url_entry(None),
                url_entry(Some("#1")),
            ]),
            "\"#1\"",
        ),
    ];
    for (input, key) in cases {
        let r = run(&["-a", "accept"], &input).status(2).run();
        assert!(r.stderr().contains("duplicate"), "{}", r.stderr());
        assert!(r.stderr().contains(key), "{}", r.stderr());
        assert!(r.stdout().is_empty(), "{}", r.stdout());
    }
    // Distinct keys still work: one result per entry.
    let r = run(
        &["-a", "accept"],
        &url_required(vec![url_entry(Some("a")), url_entry(None)]),
    )
    .run();
    assert_eq!(
        r.json(),
        json!({"elicitationResults": {"a": {"action": "accept"}, "#1": {"action": "accept"}}})
    );
}

#[test]
fn duplicate_input_request_keys_are_rejected_naming_the_key() {
    let entry = r#"{"method":"elicitation/create","params":{"mode":"url","url":"https://example.com/","message":"m"}}"#;
    let bare = format!(
        r#"{{"resultType":"input_required","inputRequests":{{"k\u0031":{entry},"ok":{entry},"k1":{entry}}}}}"#
    );
    let rpc = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"input_required","inputRequests":{{"same":{entry},"same":{entry}}}}}}}"#
    );
    for (input, key) in [(bare, "\"k1\""), (rpc, "\"same\"")] {
        let r = run(&["-a", "accept"], &input).status(2).run();
        assert!(r.stderr().contains("duplicate key"), "{}", r.stderr());
        assert!(r.stderr().contains(key), "{}", r.stderr());
        assert!(r.stdout().is_empty(), "{}", r.stdout());
    }
}

// ---- item 5: integers decided on the decimal text --------------------------

fn integer_form(default: Option<&str>) -> String {
    let default = default
        .map(|d| format!(r#","default":{d}"#))
        .unwrap_or_default();
    format!(
        r#"{{"message":"m","requestedSchema":{{"type":"object","properties":{{"n":{{"type":"integer"{default}}}}},"required":["n"]}}}}"#
    )
}

/// Values no 64-bit whole number equals exactly: rejected, never rounded.
const NOT_EXACT: &[&str] = &[
    "-9223372036854775809",
    "18446744073709551616",
    "0.99999999999999999999",
    "2.00000000000000001",
    "1e-400",
    "1e400",
    "-1e-400",
];

#[test]
fn integer_answers_are_exact_or_rejected() {
    let dir = tempfile::tempdir().unwrap();
    for text in NOT_EXACT {
        let file = dir.path().join("a.json");
        std::fs::write(&file, format!(r#"{{"n":{text}}}"#)).unwrap();
        let at_file = format!("@{}", file.display());
        for answer in [
            format!("n={text}"),
            format!(r#"{{"n":{text}}}"#),
            format!(r#"{{"action":"accept","content":{{"n":{text}}}}}"#),
            at_file,
        ] {
            let r = run(&["-a", &answer], &integer_form(None)).status(2).run();
            assert!(r.stdout().is_empty(), "{answer}: {}", r.stdout());
            assert!(
                r.stderr().contains("not a whole number")
                    || r.stderr().contains("outside the whole numbers"),
                "{answer}: {}",
                r.stderr()
            );
        }
    }
    // Exact whole values, however written, go out as that exact integer.
    for (text, exact) in [
        ("9007199254740993.0", "9007199254740993"),
        ("9007199254740993", "9007199254740993"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("18446744073709551615", "18446744073709551615"),
        ("1.8446744073709551615e19", "18446744073709551615"),
        ("2.0", "2"),
        ("1e2", "100"),
        ("0e-400", "0"),
    ] {
        for answer in [format!("n={text}"), format!(r#"{{"n":{text}}}"#)] {
            let r = run(&["-a", &answer], &integer_form(None)).run();
            assert_eq!(
                r.stdout().trim(),
                format!(r#"{{"action":"accept","content":{{"n":{exact}}}}}"#),
                "{answer}"
            );
        }
    }
}

#[test]
fn integer_defaults_are_exact_or_not_used() {
    for text in NOT_EXACT {
        let r = run(&["-a", "accept"], &integer_form(Some(text)))
            .status(2)
            .run();
        assert!(
            r.stderr().contains("has no default"),
            "{text}: {}",
            r.stderr()
        );
    }
    let r = run(&["-a", "accept"], &integer_form(Some("9007199254740993.0"))).run();
    assert_eq!(
        r.stdout().trim(),
        r#"{"action":"accept","content":{"n":9007199254740993}}"#
    );
}

// ---- item 18: an error listing enum values is capped ----------------------

#[test]
fn an_error_listing_a_huge_enum_is_capped() {
    let strings: Vec<Value> = (0..100_000).map(|i| json!(format!("value-{i}"))).collect();
    let numbers: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    for (prop, answer) in [
        (json!({"type": "string", "enum": strings}), "c=nope"),
        (json!({"type": "integer", "enum": numbers}), "c=-5"),
    ] {
        let doc = json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"c": prop}, "required": ["c"]}})
        .to_string();
        let r = run(&["-a", answer], &doc).status(2).run();
        assert!(
            r.stderr().len() < 4000,
            "{} bytes of error: {}…",
            r.stderr().len(),
            &r.stderr()[..500]
        );
        assert!(r.stderr().contains("is not one of"), "{}", r.stderr());
        assert!(r.stderr().contains("… and 99980 more"), "{}", r.stderr());
    }
}
