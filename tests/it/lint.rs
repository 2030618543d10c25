//! `elicit lint`: the rule corpus (one fixture per rule, with the exact
//! findings expected, and its fix, which must be clean), the real requests of
//! server-everything and the Python SDKs, the output formats (SARIF checked
//! against the official 2.1.0 schema), severities and exit statuses, and the
//! generated rule docs.

use std::path::{Path, PathBuf};

use crate::common::{answers, Run, Test};
use elicit::lint::{self, docs, lint_text, Scope, RULES};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_path(rel: &str) -> String {
    root().join("fixtures").join(rel).display().to_string()
}

fn read(rel: &str) -> String {
    let p = root().join("fixtures").join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `elicit lint --format json FILE`: one finding a line.
fn lint_json(file: &str) -> Test {
    Test::new().args(["lint", "--format", "json", file])
}

fn stdout(o: &Run) -> String {
    o.stdout().to_string()
}

/// `severity rule pointer` for each finding of `--format json` output.
fn summary_of_json(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            format!(
                "{} {} {}",
                v["severity"].as_str().unwrap(),
                v["rule"].as_str().unwrap(),
                match v["pointer"].as_str().unwrap() {
                    "" => "/",
                    p => p,
                }
            )
        })
        .collect()
}

fn summary(findings: &[lint::Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {}",
                f.severity.as_str(),
                f.rule.id,
                if f.pointer.is_empty() {
                    "/"
                } else {
                    &f.pointer
                }
            )
        })
        .collect()
}

#[test]
fn every_document_rule_has_a_fixture_with_its_exact_findings_and_a_clean_fix() {
    let mut checked = 0;
    for rule in RULES.iter().filter(|r| r.scope == Scope::Document) {
        let dir = format!("lint/rules/{}", rule.id);
        let example = read(&format!("{dir}.json"));
        assert_eq!(
            example, rule.example,
            "{}: the table shows the fixture",
            rule.id
        );
        let protocol = docs::example_protocol(rule);
        let lint = lint_text(&example, protocol).unwrap_or_else(|e| panic!("{}: {e}", rule.id));
        let got = summary(&lint.findings);
        let want: Vec<String> = read(&format!("{dir}.expected"))
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(got, want, "{}: findings of its example", rule.id);
        assert!(
            lint.findings.iter().any(|f| f.rule.id == rule.id),
            "{}: the example triggers the rule",
            rule.id
        );
        let fix = read(&format!("{dir}.fix.json"));
        assert_eq!(fix, rule.fix);
        let fixed = lint_text(&fix, protocol).unwrap();
        assert!(
            fixed.findings.is_empty(),
            "{}: the fix is clean, got {:?}",
            rule.id,
            summary(&fixed.findings)
        );
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} rules checked");
    // Every fixture belongs to a rule (a renamed rule leaves none behind).
    for entry in std::fs::read_dir(root().join("fixtures/lint/rules")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let id = name.split('.').next().unwrap();
        assert!(lint::rule(id).is_some(), "fixture {name} has no rule");
    }
}

#[test]
fn rule_ids_are_unique_kebab_case_and_the_issue_names_are_all_there() {
    let mut seen = std::collections::HashSet::new();
    for r in RULES {
        assert!(seen.insert(r.id), "duplicate rule id {}", r.id);
        assert!(
            r.id.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{} is not kebab-case",
            r.id
        );
    }
    for id in [
        "form-nested-property",
        "format-unknown",
        "enum-names-deprecated",
        "default-not-in-enum",
        "bounds-inverted",
        "required-not-a-property",
        "url-missing-elicitation-id",
        "url-not-https",
        "url-scheme-forbidden",
        "form-requests-secret",
        "message-empty",
        "request-state-too-large",
    ] {
        assert!(seen.contains(id), "missing rule {id}");
    }
    assert_eq!(
        lint::rule("form-requests-secret").unwrap().severity,
        lint::Severity::Warning,
        "a heuristic is never an error"
    );
}

#[test]
fn a_clean_request_has_no_findings() {
    let o = Test::new().args(["lint", "fixtures/lint/clean.json"]).run();
    assert!(stdout(&o).contains("no findings"), "{}", stdout(&o));
    let o = lint_json("fixtures/lint/clean.json").run();
    assert_eq!(stdout(&o), "");
}

#[test]
fn server_everything_has_only_its_legacy_enum_names() {
    let o = lint_json("fixtures/server-everything/form.request.json").run();
    assert_eq!(
        summary_of_json(&stdout(&o)),
        ["warning enum-names-deprecated /params/requestedSchema/properties/legacyTitledEnum/enumNames"]
    );
    // Its URL request is clean: https, with an elicitationId.
    let o = lint_json("fixtures/server-everything/url.request.json").run();
    assert_eq!(stdout(&o), "");
}

#[test]
fn the_python_sdks_requests_are_clean_but_for_their_schema_title() {
    // The Python SDKs (PyPI mcp, and fastmcp on top of it) add a top-level
    // "title" to the form schema: harmless, not in the spec: info.
    for file in [
        "python-mcp/form.request.json",
        "python-mcp/confirm.request.json",
    ] {
        let o = lint_json(&fixture_path(file)).run();
        assert_eq!(
            summary_of_json(&stdout(&o)),
            ["info schema-keyword-unknown /params/requestedSchema/title"],
            "{file}"
        );
    }
    for file in [
        "python-mcp/url.request.json",
        "python-mcp/url.error-32042.response.json",
        "python-mcp/input-required.response.json",
        "python-mcp/input-required.url.response.json",
    ] {
        let o = lint_json(&fixture_path(file)).run();
        assert_eq!(stdout(&o), "", "{file}");
    }
    // A response that carries no elicitation is not lint's input.
    Test::new()
        .args(["lint", &fixture_path("python-mcp/discover.response.json")])
        .status(2)
        .stdout("")
        .run()
        .stderr_has("elicit: ");
}

#[test]
fn nested_object_password_and_inverted_bound_are_exactly_three_findings() {
    let o = lint_json("fixtures/lint/nested-password-inverted.json")
        .status(1)
        .run();
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<(String, String, u64, u64, String, String)> = lines
        .iter()
        .map(|v| {
            (
                v["rule"].as_str().unwrap().to_string(),
                v["pointer"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap(),
                v["column"].as_u64().unwrap(),
                v["revision"].as_str().unwrap().to_string(),
                v["section"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let p = "/params/requestedSchema/properties";
    let row = |rule: &str, ptr: String, line, col, section: &str| {
        (
            rule.to_string(),
            ptr,
            line,
            col,
            "2025-11-25".to_string(),
            format!("client/elicitation § {section}"),
        )
    };
    assert_eq!(
        got,
        [
            row(
                "form-nested-property",
                format!("{p}/address"),
                10,
                20,
                "Requested Schema"
            ),
            row(
                "form-requests-secret",
                format!("{p}/password"),
                14,
                21,
                "User Interaction Model"
            ),
            row(
                "bounds-inverted",
                format!("{p}/age/minimum"),
                15,
                47,
                "Requested Schema"
            ),
        ]
    );
    assert_eq!(lines[0]["severity"], "error");
    assert_eq!(lines[1]["severity"], "warning");
    assert_eq!(lines[2]["severity"], "error");
    // The human report groups them, quotes the fragment and cites the spec.
    let o = Test::new()
        .args(["lint", "fixtures/lint/nested-password-inverted.json"])
        .status(1)
        .run();
    let text = stdout(&o);
    assert!(text.contains("error[form-nested-property] /params/requestedSchema/properties/address (line 10, column 20)"), "{text}");
    assert!(
        text.contains("| {\"type\":\"object\",\"properties\":{\"street\""),
        "{text}"
    );
    assert!(
        text.contains("= MCP 2025-11-25, client/elicitation § Requested Schema"),
        "{text}"
    );
    assert!(text.contains("2 errors, 1 warning, 0 infos"), "{text}");
}

#[test]
fn a_description_that_mentions_a_pin_is_not_a_secret_field() {
    // server-everything's "integer" field says "do not give us your ... pin".
    let text = read("server-everything/form.request.json");
    assert!(text.contains("pin"));
    let lint = lint_text(&text, None).unwrap();
    assert!(!lint
        .findings
        .iter()
        .any(|f| f.rule.id == "form-requests-secret"));
    let pin = r#"{"message":"Unlock","requestedSchema":{"type":"object","properties":{"pin":{"type":"integer"}}}}"#;
    let lint = lint_text(pin, None).unwrap();
    assert_eq!(
        summary(&lint.findings),
        ["warning form-requests-secret /requestedSchema/properties/pin"]
    );
}

#[test]
fn the_protocol_decides_which_rules_apply() {
    let url = r#"{"mode":"url","message":"Connect","url":"https://example.com/c"}"#;
    // Bare params show no revision: the newest, where URL mode has no id.
    assert!(lint_text(url, None).unwrap().findings.is_empty());
    let old = lint_text(url, Some(lint::Revision::V2025_11_25)).unwrap();
    assert_eq!(
        summary(&old.findings),
        ["error url-missing-elicitation-id /"]
    );
    let oldest = lint_text(url, Some(lint::Revision::V2025_06_18)).unwrap();
    assert_eq!(
        summary(&oldest.findings),
        ["error mode-not-in-revision /mode"]
    );
    // Through the binary, the revision and its source are shown.
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), url).unwrap();
    let path = file.path().to_str().unwrap();
    let o = Test::new()
        .args(["lint", "--protocol", "2025-11-25", path])
        .status(1)
        .run();
    assert!(
        stdout(&o).contains("MCP 2025-11-25 (--protocol)"),
        "{}",
        stdout(&o)
    );
    let o = Test::new().args(["lint", path]).run();
    assert!(
        stdout(&o).contains("MCP 2026-07-28 (the newest"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn allow_and_deny_adjust_severities_and_the_exit_status() {
    let f = "fixtures/server-everything/form.request.json";
    let o = Test::new()
        .args(["lint", "--deny", "warnings", "--format", "json", f])
        .status(1)
        .run();
    assert_eq!(
        summary_of_json(&stdout(&o)),
        ["error enum-names-deprecated /params/requestedSchema/properties/legacyTitledEnum/enumNames"]
    );
    Test::new()
        .args([
            "lint",
            "--deny",
            "enum-names-deprecated",
            "--format",
            "json",
            f,
        ])
        .status(1)
        .run()
        .stdout_has(r#""rule":"enum-names-deprecated","severity":"error""#);
    let o = Test::new()
        .args([
            "lint",
            "--allow",
            "enum-names-deprecated",
            "--format",
            "json",
            f,
        ])
        .run();
    assert_eq!(stdout(&o), "");
    let o = Test::new()
        .args(["lint", "--allow", "warnings", "--format", "json", f])
        .run();
    assert_eq!(stdout(&o), "");
    // An error can be allowed away, too.
    let n = "fixtures/lint/nested-password-inverted.json";
    Test::new()
        .args([
            "lint",
            "--allow",
            "form-nested-property",
            "--allow",
            "bounds-inverted",
            n,
        ])
        .run()
        .stdout_has("0 errors, 1 warning, 0 infos");
    // A typo is a usage error that names the nearest rule.
    let o = Test::new()
        .args(["lint", "--allow", "enum-name-deprecated", f])
        .status(2)
        .run();
    let err = o.stderr();
    assert!(err.contains("did you mean enum-names-deprecated?"), "{err}");
    assert_eq!(stdout(&o), "");
}

#[test]
fn explain_prints_one_rule_and_rejects_unknown_ones() {
    let o = Test::new()
        .args(["lint", "--explain", "bounds-inverted"])
        .run();
    let text = stdout(&o);
    assert!(
        text.starts_with("bounds-inverted (error; revisions: all)"),
        "{text}"
    );
    assert!(text.contains("Why: "), "{text}");
    assert!(
        text.contains("-> error[bounds-inverted] /requestedSchema/properties/seats/minimum"),
        "{text}"
    );
    assert!(text.contains("Fix:"), "{text}");
    let o = Test::new().args(["lint", "--explain", "all"]).run();
    assert_eq!(stdout(&o).lines().count(), RULES.len());
    Test::new()
        .args(["lint", "--explain", "nope"])
        .status(2)
        .stdout("")
        .stderr(
            "elicit: unknown lint rule \"nope\" (`elicit lint --explain all` lists the rules)\n",
        )
        .run();
}

#[test]
fn lines_are_documents_of_their_own_and_an_unreadable_one_is_exit_2() {
    let o = Test::new()
        .args([
            "lint",
            "--lines",
            "--format",
            "json",
            "fixtures/lint/stream.ndjson",
        ])
        .status(2)
        .run();
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<(String, u64, u64)> = lines
        .iter()
        .map(|v| {
            (
                v["rule"].as_str().unwrap().into(),
                v["line"].as_u64().unwrap(),
                v["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("format-unknown".into(), 3, 104),
            ("url-not-https".into(), 5, 36)
        ]
    );
    let err = o.stderr();
    assert!(
        err.contains("stream.ndjson:4: invalid JSON at line 1, column 2"),
        "{err}"
    );
}

#[test]
fn a_cassette_is_read_by_its_elicitations_key() {
    let o = lint_json("fixtures/lint/cassette.json").status(1).run();
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["rule"], "default-not-in-enum");
    assert_eq!(
        v["pointer"],
        "/elicitations/0/request/params/requestedSchema/properties/size/default"
    );
    assert_eq!(v["elicitation"], "elicitations[0]");
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(2), Some(223))
    );
    assert_eq!(v["revision"], "2025-11-25");
}

#[test]
fn input_that_is_no_elicitation_is_exit_2_with_nothing_on_stdout() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "{\"message\": ").unwrap();
    let o = Test::new()
        .args(["lint", file.path().to_str().unwrap()])
        .status(2)
        .run();
    assert_eq!(stdout(&o), "");
    assert!(o.stderr().contains("invalid JSON at line 1"));
    let o = Test::new()
        .args(["lint", "/no/such/file.json"])
        .status(2)
        .run();
    assert!(o.stderr().contains("cannot open /no/such/file.json"));
    // Params elicit cannot read are the server's mistake: a finding.
    let o = Test::new()
        .args(["lint", "--format", "json"])
        .stdin(r#"{"mode":"url","message":"no url"}"#)
        .status(1)
        .run();
    assert_eq!(summary_of_json(&stdout(&o)), ["error params-invalid /"]);
    // From stdin there is no file position.
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v.get("line").is_none());
}

fn sarif_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&read("lint/sarif-schema-2.1.0.json")).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0_with_lines_and_columns() {
    let validator = sarif_validator();
    // The validator is not vacuous: a log without its version is refused.
    assert!(!validator.is_valid(&serde_json::json!({"runs": []})));
    assert!(
        !validator.is_valid(&serde_json::json!({"version": "2.1.0", "runs": [{"results": []}]}))
    );
    let o = Test::new()
        .args([
            "lint",
            "--format",
            "sarif",
            "fixtures/lint/nested-password-inverted.json",
            "fixtures/lint/clean.json",
            "fixtures/server-everything/form.request.json",
            "fixtures/lint/cassette.json",
        ])
        .status(1)
        .run();
    let log: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let run = &log["runs"][0];
    assert_eq!(
        run["tool"]["driver"]["rules"].as_array().unwrap().len(),
        RULES.len()
    );
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    let first = &results[0];
    assert_eq!(first["ruleId"], "form-nested-property");
    assert_eq!(first["level"], "error");
    let loc = &first["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "fixtures/lint/nested-password-inverted.json"
    );
    assert_eq!(loc["region"]["startLine"], 10);
    assert_eq!(loc["region"]["startColumn"], 20);
    assert_eq!(
        first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        "/params/requestedSchema/properties/address"
    );
    let index = first["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(
        run["tool"]["driver"]["rules"][index]["id"],
        "form-nested-property"
    );
    assert_eq!(results[1]["level"], "warning");
    // stdin, with every rule's example: still valid, no physical location.
    let mut all = String::new();
    for r in RULES.iter().filter(|r| r.scope == Scope::Document) {
        all.push_str(
            &serde_json::from_str::<Value>(r.example)
                .unwrap()
                .to_string(),
        );
        all.push('\n');
    }
    let o = Test::new()
        .args(["lint", "--lines", "--format", "sarif"])
        .stdin(all)
        .status(1)
        .run();
    let log: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(results.len() > 30);
    assert!(results
        .iter()
        .all(|r| r["locations"][0].get("physicalLocation").is_none()));
}

#[test]
fn the_rule_docs_are_generated_from_the_table() {
    let path = root().join("docs/lint-rules.md");
    let generated = docs::markdown();
    if std::env::var_os("UPDATE_LINT_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/lint-rules.md is stale: run `UPDATE_LINT_DOCS=1 cargo test --test it lint::` (or `elicit lint --rules-markdown > docs/lint-rules.md`)"
    );
    for r in RULES {
        assert!(generated.contains(&format!("### `{}`", r.id)), "{}", r.id);
    }
    // The hidden flag prints the same text.
    let o = Test::new().args(["lint", "--rules-markdown"]).run();
    assert_eq!(stdout(&o).trim_end(), generated.trim_end());
    assert!(Path::new(&path).exists());
}

/// `elicit call ARGS -- python3 tests/servers/lint_server.py SERVER_ARGS`.
fn call(args: &[&str], server_args: &[&str]) -> Test {
    let script = root().join("tests/servers/lint_server.py");
    Test::new()
        .arg("call")
        .args(["--no-input", "--timeout", "20s"])
        .args(args)
        .arg("--")
        .arg("python3")
        .arg(script)
        .args(server_args)
        .limit(std::time::Duration::from_secs(60))
}

/// The JSON the server's tool result carries as text.
fn tool_echo(out: &str) -> Value {
    let result: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn strict_call_with_modes_form_reports_a_url_elicitation_and_exits_5() {
    let run = call(
        &[
            "--strict",
            "--modes",
            "form",
            "--tool",
            "url_anyway",
            "-a",
            "accept",
        ],
        &[],
    )
    .status(5)
    .run();
    let out = run.stdout().to_string();
    let err = run.stderr().to_string();
    assert!(
        err.contains("elicit: strict: error[session-mode-undeclared] elicitation/create (id 7) /params/mode: a url elicitation, but the client declared only form"),
        "{err}"
    );
    assert!(
        err.contains("elicit: strict: 1 error, 0 warnings, 0 infos in 1 elicitation"),
        "{err}"
    );
    // The server saw only form declared, and got the -32602 the spec asks for.
    let echo = tool_echo(&out);
    assert_eq!(
        echo["capabilities"],
        serde_json::json!({"elicitation": {"form": {}}})
    );
    assert_eq!(echo["reply"]["error"]["code"], -32602);
    // Without --strict the same run is the tool's success.
    let run = call(
        &["--modes", "form", "--tool", "url_anyway", "-a", "accept"],
        &[],
    )
    .run();
    let out = run.stdout().to_string();
    assert_eq!(tool_echo(&out)["reply"]["error"]["code"], -32602);
}

#[test]
fn strict_call_reports_a_nested_form_finishes_the_flow_and_exits_5() {
    let answers = ["-a", "name=Ada", "-a", r#"address={"street":"Main"}"#];
    let mut args = vec!["--strict", "--tool", "nested_form"];
    args.extend(answers);
    let run = call(&args, &[]).status(5).run();
    let out = run.stdout().to_string();
    let err = run.stderr().to_string();
    assert!(
        err.contains("error[form-nested-property] elicitation/create (id 7) /params/requestedSchema/properties/address"),
        "{err}"
    );
    // The form was still answered, and the tool's result printed.
    let echo = tool_echo(&out);
    assert_eq!(
        echo["reply"]["result"],
        serde_json::json!({"action": "accept", "content": {"name": "Ada", "address": {"street": "Main"}}})
    );
    assert_eq!(
        echo["capabilities"],
        serde_json::json!({"elicitation": {"form": {}, "url": {}}})
    );
    let mut args = vec!["--tool", "nested_form"];
    args.extend(answers);
    // Without --strict nothing is said of the rules: the form's warnings
    // only.
    call(&args, &[])
        .stderr(concat!(
            "elicit: warning: field address: type \"object\" is not a primitive MCP allows in a form; asked as raw JSON\n",
            "elicit: warning: field address: keyword \"properties\" is not part of an MCP form schema; it is still checked\n",
        ))
        .run()
        .stdout_has("\\\"street\\\":\\\"Main\\\"");
}

#[test]
fn strict_call_checks_the_session_rules() {
    // No capability declared at all.
    let run = call(
        &["--strict", "--modes", "none", "--tool", "plain_form"],
        &[],
    )
    .status(5)
    .run();
    let out = run.stdout().to_string();
    let err = run.stderr().to_string();
    assert!(err.contains("error[session-no-capability]"), "{err}");
    assert_eq!(tool_echo(&out)["capabilities"], serde_json::json!({}));
    // An accepted URL elicitation whose completion never came (an info:
    // the spec lets a server leave it out).
    let run = call(&["--strict", "--tool", "url_anyway", "-a", "accept"], &[]).run();
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    assert!(
        err.contains("info[session-url-completion-missing] the URL elicitation \"e-1\""),
        "{err}"
    );
    // --deny/--allow adjust them as in `elicit lint`.
    let run = call(
        &[
            "--strict",
            "--deny",
            "session-url-completion-missing",
            "--tool",
            "url_anyway",
            "-a",
            "accept",
        ],
        &[],
    )
    .status(5)
    .run();
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    assert!(
        err.contains("error[session-url-completion-missing]"),
        "{err}"
    );
    let run = call(
        &[
            "--strict",
            "--allow",
            "session-url-completion-missing",
            "--tool",
            "url_anyway",
            "-a",
            "accept",
        ],
        &[],
    )
    .run();
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    assert!(
        err.contains("strict: 0 errors, 0 warnings, 0 infos"),
        "{err}"
    );
    call(
        &["--strict", "--allow", "nope", "--tool", "url_anyway"],
        &[],
    )
    .status(2)
    .stdout("")
    .run()
    .stderr_has("nope");

    let run = call(
        &["--strict", "--tool", "url_completed", "-a", "accept"],
        &[],
    )
    .run();
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    assert!(
        err.contains("strict: 0 errors, 0 warnings, 0 infos in 1 elicitation"),
        "{err}"
    );
    // Two elicitations at once.
    let run = call(&["--strict", "--tool", "two_at_once", "-a", "name=x"], &[]).run();
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    assert!(
        err.contains("warning[session-concurrent-elicitations] elicitation/create (id 101)"),
        "{err}"
    );
    // 2026-07-28: the modes go in every request's _meta, and an undeclared
    // one in an input_required result fails the call (no reply can refuse
    // it), still reported.
    let run = call(
        &["--modes", "form", "--tool", "plain_form", "-a", "name=x"],
        &["--stateless"],
    )
    .run();
    let out = run.stdout().to_string();
    assert_eq!(
        tool_echo(&out)["capabilities"],
        serde_json::json!({"elicitation": {"form": {}}})
    );
    let run = call(
        &[
            "--strict",
            "--modes",
            "form",
            "--tool",
            "url_anyway",
            "-a",
            "accept",
        ],
        &["--stateless"],
    )
    .status(5)
    .run();
    let err = run.stderr().to_string();
    assert!(err.contains("error[session-mode-undeclared] the reply to request 4 /result/inputRequests/k/params/mode"), "{err}");
    assert!(
        err.contains(
            "the server asked for a url elicitation, which elicit did not declare (--modes form)"
        ),
        "{err}"
    );
    // An input_required loop whose question changes every round (2026-07-28).
    let run = call(
        &["--strict", "--tool", "changing", "-a", "accept"],
        &["--stateless"],
    )
    .run();
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    assert_eq!(
        err.matches("warning[session-question-changed]").count(),
        2,
        "{err}"
    );
    assert!(
        err.contains("(MCP 2026-07-28, basic/patterns/mrtr § InputRequiredResult)"),
        "{err}"
    );
}

/// `elicit proxy ARGS -- python3 tests/servers/lint_server.py` driven by a
/// client that initializes (declaring `client_caps`) and calls `tool`; the
/// client hangs up once the call's reply is in, and the proxy ends with
/// `status`. Returns the reply and stderr.
fn proxy(args: &[&str], client_caps: Value, tool: &str, status: i32) -> (Value, String) {
    let script = root().join("tests/servers/lint_server.py");
    let target = [
        "--".to_string(),
        "python3".into(),
        script.display().to_string(),
    ];
    proxy_to(&target, args, client_caps, tool, status)
}

/// [`proxy`] to any server: `target` is the URL, or `--` and the command.
fn proxy_to(
    target: &[String],
    args: &[&str],
    client_caps: Value,
    tool: &str,
    status: i32,
) -> (Value, String) {
    let mut proxy = Test::new()
        .arg("proxy")
        .args(["--no-input"])
        .args(args)
        .args(target)
        .limit(std::time::Duration::from_secs(60))
        .status(status)
        .feed()
        .spawn();
    // All at once, before any reply.
    for msg in [
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":client_caps,"clientInfo":{"name":"t","version":"1"}}}),
        serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":tool,"arguments":{}}}),
    ] {
        proxy.send(&msg);
    }
    let reply = loop {
        let v = proxy.next_json();
        if v["id"] == 2 {
            break v;
        }
    };
    proxy.close_stdin();
    let run = proxy.wait();
    (reply, run.stderr().to_string())
}

#[test]
fn strict_proxy_reports_like_call_and_exits_5_after_a_clean_server_exit() {
    let (reply, err) = proxy(
        &["--strict", "--modes", "form", "-a", "accept"],
        serde_json::json!({}),
        "url_anyway",
        5,
    );
    assert!(
        err.contains("error[session-mode-undeclared] elicitation/create (id 7) /params/mode"),
        "{err}"
    );
    let echo = tool_echo(&reply["result"].to_string());
    // elicit declared form only on the client's behalf, and refused the URL.
    assert_eq!(
        echo["capabilities"],
        serde_json::json!({"elicitation": {"form": {}}})
    );
    assert_eq!(echo["reply"]["error"]["code"], -32602);
    let (reply, err) = proxy(
        &[
            "--strict",
            "-a",
            "name=Ada",
            "-a",
            r#"address={"street":"Main"}"#,
        ],
        serde_json::json!({}),
        "nested_form",
        5,
    );
    assert!(err.contains("error[form-nested-property]"), "{err}");
    let echo = tool_echo(&reply["result"].to_string());
    assert_eq!(echo["reply"]["result"]["action"], "accept");
    // Without --strict the proxy exits with the server's status.
    proxy(
        &["-a", "name=Ada", "-a", r#"address={"street":"Main"}"#],
        serde_json::json!({}),
        "nested_form",
        0,
    );
}

#[test]
fn findings_are_bounded_per_rule_and_server_text_is_sanitised() {
    let doc = serde_json::json!({
        "message": "x",
        "requestedSchema": {"type": "object",
            "properties": {"p": {"type": "string", "enum": vec!["a"; 10_000]}},
            "required": (0..50).map(|i| format!("n{i}")).collect::<Vec<_>>()},
    });
    let lint = lint_text(&doc.to_string(), None).unwrap();
    let count = |id: &str| lint.findings.iter().filter(|f| f.rule.id == id).count();
    assert_eq!(count("enum-duplicate-value"), lint::check::MAX_PER_RULE + 1);
    assert_eq!(
        count("required-not-a-property"),
        lint::check::MAX_PER_RULE + 1
    );
    let last = lint
        .findings
        .iter()
        .rev()
        .find(|f| f.rule.id == "enum-duplicate-value")
        .unwrap();
    assert!(
        last.message
            .contains("and 9979 more enum-duplicate-value findings"),
        "{}",
        last.message
    );
    // A property name with an escape sequence reaches the report harmless.
    let hostile = r#"{"message":"\u001b]8;;https://evil\u0007hi","requestedSchema":{"type":"object","properties":{"\u001b[2Jpw":{"type":"object"}}}}"#;
    let o = Test::new()
        .args(["lint", "--color", "always"])
        .env_remove("NO_COLOR")
        .stdin(hostile)
        .status(1)
        .run();
    let text = stdout(&o);
    assert!(text.contains("form-nested-property"), "{text}");
    assert!(
        !text.contains("\u{1b}[2J") && !text.contains("\u{1b}]8"),
        "{text:?}"
    );
    // --color always colours the report even into a pipe; never does not.
    assert!(text.contains("\u{1b}[31m\u{1b}[1merror"), "{text:?}");
    let o = Test::new()
        .args(["lint", "--color", "never"])
        .env_remove("NO_COLOR")
        .stdin(hostile)
        .status(1)
        .run();
    assert!(!stdout(&o).contains('\u{1b}'));
}

#[test]
fn strict_proxy_checks_a_remote_server_too() {
    // The Python SDK's server over Streamable HTTP: its form carries a
    // top-level "title" (an info finding), nothing worse.
    let python = root().join(".deps/venv/bin/python");
    assert!(
        python.exists(),
        "scripts/install-test-servers installs the Python SDK"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new(&python)
        .arg(root().join("tests/servers/py_http_server.py"))
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (reply, err) = proxy_to(
        &[url],
        &[
            &["--strict", "--modes", "form"][..],
            &answers(&["accept", "name=Ada", "age=36", "color=green"]),
        ]
        .concat(),
        serde_json::json!({}),
        "ask_profile",
        0,
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        err.contains(
            "info[schema-keyword-unknown] elicitation/create (id 1) /params/requestedSchema/title"
        ),
        "{err}"
    );
    assert!(
        err.contains("strict: 0 errors, 0 warnings, 1 info in 1 elicitation (MCP 2025-11-25)"),
        "{err}"
    );
    assert!(reply["result"].to_string().contains("Ada"), "{reply}");
}

mod any_schema {
    //! Lint on generated forms: it never panics, and every finding's
    //! pointer names a part that exists in the document.
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(Value::from),
            (-5i64..20).prop_map(Value::from),
            Just(json!(2.5)),
            "[a-c~/]{0,3}".prop_map(Value::from),
        ]
    }

    fn keyword_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            scalar(),
            prop::collection::vec(scalar(), 0..4).prop_map(Value::from),
            prop::collection::vec(
                (scalar(), scalar()).prop_map(|(c, t)| json!({"const": c, "title": t})),
                0..3
            )
            .prop_map(Value::from),
            Just(json!({"type": "string", "enum": ["a", "b"]})),
            Just(json!({"type": "object", "properties": {}})),
            Just(json!({"anyOf": [{"const": "a"}]})),
        ]
    }

    fn property() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "type",
            "title",
            "description",
            "default",
            "minLength",
            "maxLength",
            "format",
            "pattern",
            "minimum",
            "maximum",
            "enum",
            "enumNames",
            "oneOf",
            "items",
            "minItems",
            "maxItems",
            "properties",
            "examples",
        ]);
        let typ = prop::sample::select(vec![
            "string", "number", "integer", "boolean", "array", "object", "null",
        ]);
        (typ, prop::collection::vec((key, keyword_value()), 0..5)).prop_map(|(t, kws)| {
            let mut o = serde_json::Map::new();
            o.insert("type".into(), json!(t));
            for (k, v) in kws {
                o.insert(k.to_string(), v);
            }
            Value::Object(o)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn findings_point_at_real_parts(
            props in prop::collection::vec(("[a-z~/]{1,4}", property()), 0..4),
            required in prop::collection::vec(scalar(), 0..3),
            wrap in 0usize..3,
            url in prop::sample::select(vec!["", "https://a.example/x", "http://a.example", "javascript:x", "/rel"]),
        ) {
            let mut properties = serde_json::Map::new();
            for (k, v) in props {
                properties.insert(k, v);
            }
            let params = if url.is_empty() {
                json!({"message": "m", "requestedSchema": {"type": "object", "properties": properties, "required": required}})
            } else {
                json!({"mode": "url", "message": "", "url": url})
            };
            let doc = match wrap {
                0 => params,
                1 => json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": params}),
                _ => json!({"resultType": "input_required", "inputRequests": {"k/~": {"method": "elicitation/create", "params": params}}}),
            };
            let text = serde_json::to_string_pretty(&doc).unwrap();
            for revision in [None, Some(elicit::lint::Revision::V2025_06_18)] {
                if let Ok(lint) = elicit::lint::lint_text(&text, revision) {
                    for f in &lint.findings {
                        prop_assert!(
                            doc.pointer(&f.pointer).is_some(),
                            "{} at {:?} names nothing in {}", f.rule.id, f.pointer, text
                        );
                    }
                }
            }
        }
    }
}

/// `elicit test --strict`: a recorded flow whose form breaks a rule of
/// error severity replays green without `--strict` and fails with the
/// finding under it (the finding named, the exit status 1 of a failed test).
#[test]
fn test_strict_fails_a_replay_whose_elicitation_breaks_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("nested.cassette.json");
    let record = cassette.to_str().unwrap();
    call(
        &[
            "--record",
            record,
            "--tool",
            "nested_form",
            "-a",
            "name=Ada",
            "-a",
            r#"address={"street":"Main"}"#,
        ],
        &[],
    )
    .run()
    .stdout_has("\\\"street\\\":\\\"Main\\\"")
    .stderr_has("field address: type \"object\" is not a primitive MCP allows in a form");
    let replay = |extra: &[&str], status: i32| {
        let o = Test::new()
            .arg("test")
            .args(extra)
            .arg(&cassette)
            .limit(std::time::Duration::from_secs(60))
            .status(status)
            .run();
        o.stderr().to_string()
    };
    let err = replay(&[], 0);
    assert!(err.contains("1 test, 1 passed, 0 failed"), "{err}");
    let err = replay(&["--strict"], 1);
    assert!(
        err.contains("--strict: the server's elicitations broke 1 rule"),
        "{err}"
    );
    assert!(err.contains("form-nested-property"), "{err}");
    // --allow puts the rule out of the way again.
    let err = replay(&["--strict", "--allow", "form-nested-property"], 0);
    assert!(err.contains("0 failed"), "{err}");
}

/// elicit's own `--log`, linted line by line: the lines elicit sent and
/// the server's other messages are not findings; the server's
/// elicitations are checked at the revision the session negotiated.
#[test]
fn lint_reads_elicits_own_log_at_the_revision_it_records() {
    let dir = tempfile::tempdir().unwrap();
    let server = root().join("tests/servers/fake_server.py");
    for (flags, revision) in [
        (&[][..], "2025-11-25"),
        (&["--stateless"][..], "2026-07-28"),
    ] {
        let log = dir.path().join(format!("session-{revision}.jsonl"));
        Test::new()
            .args(
                [
                    &["call", "--no-input", "--log", log.to_str().unwrap()][..],
                    &[
                        "--tool", "form", "-a", "name=Ada", "-a", "accept", "--", "python3",
                    ],
                    &[server.to_str().unwrap()],
                    flags,
                ]
                .concat(),
            )
            .run()
            .stdout_has(r#"\"action\":\"accept\""#);
        let lint = Test::new()
            .args(["lint", "--lines", "--format", "json", log.to_str().unwrap()])
            .run();
        let text = stdout(&lint);
        assert!(!text.contains("params-invalid"), "{text}");
        // The one elicitation was read, at the session's revision.
        let human = stdout(
            &Test::new()
                .args(["lint", "--lines", log.to_str().unwrap()])
                .run(),
        );
        assert!(human.contains(revision), "{revision}: {human}");
    }
}

/// A cassette is linted at the revision it was recorded with: URL mode in
/// a 2025-06-18 cassette breaks a rule that 2026-07-28 does not have.
#[test]
fn lint_of_a_cassette_follows_its_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let url = serde_json::json!({"mode": "url", "message": "Connect", "url": "https://example.com/c", "elicitationId": "e-1"});
    for (protocol, code) in [("2025-06-18", 1), ("2026-07-28", 0)] {
        let file = dir.path().join(format!("{protocol}.cassette.json"));
        let c = serde_json::json!({"elicit": "cassette/1", "server": {"command": ["x"]},
            "protocol": protocol, "tool": "t",
            "elicitations": [{"request": url, "answer": "accept"}]});
        std::fs::write(&file, c.to_string()).unwrap();
        let out = Test::new()
            .args(["lint", file.to_str().unwrap()])
            .status(code)
            .run();
        let text = stdout(&out);
        assert_eq!(text.contains("mode-not-in-revision"), code == 1, "{text}");
    }
}

/// One `--strict`: `elicit test --strict` reports the session rules `call
/// --strict` reports on the same flow, warnings and infos included, and
/// `--deny` turns them into a failed test.
#[test]
fn strict_test_reports_what_strict_call_reports() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("url.cassette.json");
    let script = root().join("tests/servers/lint_server.py");
    let script = script.to_str().unwrap();
    Test::new()
        .args([
            "call",
            "--no-input",
            "--record",
            cassette.to_str().unwrap(),
            "--tool",
            "url_anyway",
            "-a",
            "accept",
            "--",
            "python3",
            script,
        ])
        .run()
        .stdout_has("\\\"action\\\":\\\"accept\\\"");
    let run = call(&["--strict", "--tool", "url_anyway", "-a", "accept"], &[]).run();
    run.stdout_has("\"isError\":false");
    let call_err = run.stderr().to_string();
    let test = Test::new()
        .args(["test", "--strict", cassette.to_str().unwrap()])
        .run();
    let test_err = test.stderr().to_string();
    let said = "info[session-url-completion-missing] the URL elicitation \"e-1\"";
    assert!(call_err.contains(said), "{call_err}");
    assert!(test_err.contains(said), "{test_err}");
    assert!(
        test_err.contains("strict: 0 errors, 0 warnings, 1 info"),
        "{test_err}"
    );
    let denied = Test::new()
        .args([
            "test",
            "--strict",
            "--deny",
            "session-url-completion-missing",
            cassette.to_str().unwrap(),
        ])
        .failure()
        .run();
    let denied_err = denied.stderr();
    assert!(
        denied_err.contains("error[session-url-completion-missing]"),
        "{denied_err}"
    );
}

/// A 2026-07-28 server whose discovery and tool list lack what the revision
/// requires of them (`ttlMs` and `cacheScope`; `resultType` on the list,
/// which the Python SDK's client rejects): `--strict` names each and exits
/// 5; the same server with them has nothing reported.
#[test]
fn strict_reports_a_2026_list_result_without_what_its_revision_requires() {
    let tool = ["--strict", "--tool", "plain_form", "-a", "accept"];
    let run = call(&tool, &["--stateless", "--bare-lists"])
        .status(5)
        .run();
    // The call itself went through.
    run.stdout_has("\"isError\":false");
    let err = run.stderr().to_string();
    let discover = err
        .lines()
        .find(|l| l.contains("error[session-result-incomplete] the reply to server/discover"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        discover.contains("/result: the server/discover result lacks `ttlMs`, `cacheScope`"),
        "{discover}"
    );
    let list = err
        .lines()
        .find(|l| l.contains("error[session-result-incomplete] the reply to tools/list"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        list.contains("lacks `resultType`, `ttlMs`, `cacheScope`"),
        "{list}"
    );
    assert!(
        list.contains("(MCP 2026-07-28, basic/index § General fields)"),
        "{list}"
    );
    // The call itself, once the tool list is out of the way, is clean.
    call(&tool, &["--stateless"])
        .stderr("elicit: strict: 0 errors, 0 warnings, 0 infos in 1 elicitation (MCP 2026-07-28)\n")
        .run()
        .stdout_has("\"isError\":false");
}

/// `proxy --strict` in front of a 2026-07-28 server whose tool list lacks
/// what the revision requires: the list goes to the client as the server
/// sent it, and the finding is reported with exit 5.
#[test]
fn strict_proxy_reports_a_2026_list_result_without_what_its_revision_requires() {
    let script = root().join("tests/servers/lint_server.py");
    let mut proxy = Test::new()
        .args(["proxy", "--no-input", "--strict", "--"])
        .arg("python3")
        .arg(script)
        .args(["--stateless", "--bare-lists"])
        .limit(std::time::Duration::from_secs(60))
        .feed()
        .status(5)
        .spawn();
    let meta = serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    proxy.send(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}));
    let reply = loop {
        let v = proxy.next_json();
        if v["id"] == 1 {
            break v;
        }
    };
    assert!(reply["result"].get("ttlMs").is_none(), "{reply}");
    proxy.close_stdin();
    let run = proxy.wait();
    assert!(
        run.stderr().contains("error[session-result-incomplete] the reply to tools/list (id 1) /result: the tools/list result lacks `resultType`, `ttlMs`, `cacheScope`"),
        "{}",
        run.stderr()
    );
}

/// A cassette that names its revision is linted under it, and the header
/// says so: the cassette's, not `--protocol`'s.
#[test]
fn a_cassettes_revision_is_said_to_be_the_cassettes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.cassette.json");
    let cassette = serde_json::json!({"elicit": "cassette/1", "protocol": "2025-11-25",
        "elicitations": [{"request": {"message": "m", "requestedSchema":
            {"type": "object", "properties": {"a": {"type": "string"}}}}}]});
    std::fs::write(&file, cassette.to_string()).unwrap();
    let o = Test::new().args(["lint", file.to_str().unwrap()]).run();
    assert!(
        o.stdout()
            .contains("MCP 2025-11-25 (the cassette's protocol)"),
        "{}",
        o.stdout()
    );
    let o = Test::new()
        .args(["lint", "--protocol", "2025-06-18", file.to_str().unwrap()])
        .run();
    assert!(
        o.stdout().contains("MCP 2025-06-18 (--protocol)"),
        "{}",
        o.stdout()
    );
}

/// `elicit lint DIR` lints the folder's cassettes as `elicit test DIR`
/// finds them; a folder with none, or a path not there, is a usage error
/// that leaves nothing on stdout (no SARIF that reads as a clean run).
#[test]
fn lint_a_folder_lints_its_cassettes_and_a_bad_path_leaves_no_sarif() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("flows/nested");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::copy(
        fixture_path("lint/cassette.json"),
        nested.join("sizes.cassette.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("flows/notes.json"), "not json").unwrap();
    let flows = dir.path().join("flows");
    let o = Test::new()
        .args(["lint", "--format", "sarif", flows.to_str().unwrap()])
        .status(1)
        .run();
    let log: Value = serde_json::from_str(o.stdout()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{}", o.stdout());
    assert!(results.iter().all(
        |r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("sizes.cassette.json")
    ));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for bad in [empty.clone(), dir.path().join("not-there.json")] {
        Test::new()
            .args(["lint", "--format", "sarif", bad.to_str().unwrap()])
            .arg(fixture_path("lint/clean.json"))
            .status(2)
            .stdout("")
            .run()
            .stderr_has(&format!("{}", bad.display()));
    }
}

/// Over Streamable HTTP, a TypeScript SDK server sends a URL elicitation's
/// completion on its standalone GET stream: `--strict` sees it (no
/// `session-url-completion-missing`) and `-v` shows it, as over stdio.
#[test]
fn strict_over_streamable_http_sees_the_completion_on_the_get_stream() {
    crate::common::installed();
    let server = crate::common::http_server("node", &["tests/servers/ts_url_complete_server.cjs"]);
    let url = server.url();
    let run = Test::new()
        .args(["call", "--no-input", "--timeout", "20s", "--strict", "-v"])
        .args(["--tool", "connect_account", "-a", "accept", url.as_str()])
        .run();
    run.stdout_is("{\"content\":[{\"type\":\"text\",\"text\":\"accept\"}]}\n");
    run.stderr_has(
        "notification notifications/elicitation/complete {\"elicitationId\":\"ts-el-1\"}",
    )
    .stderr_has("strict: 0 errors, 0 warnings, 0 infos in 1 elicitation")
    .stderr_lacks("session-url-completion-missing");
}
