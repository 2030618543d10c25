//! `elicit request` -> a resolver -> `elicit result`: the round trip for
//! inputs with several elicitations, through the real binary.

use crate::common::Test;
use serde_json::Value;

fn fixture(rel: &str) -> String {
    format!("fixtures/{rel}")
}

fn run_result(input: &str, answers: &str) -> Test {
    Test::new()
        .args(["result", "--input", &fixture(input)])
        .stdin(answers)
}

/// The README's worked example, verbatim.
#[test]
fn readme_worked_example_round_trips_input_required() {
    let out = Test::new()
        .args(["request", &fixture("shapes/input-required.json")])
        .run();
    let requests: Vec<Value> = serde_json::from_str(out.stdout()).unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["kind"], "input");
    assert_eq!(requests[1]["kind"], "authorization");
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"[{"id":"a","ok":true,"data":{"labels":["bug"]}},{"id":"b","ok":true}]"#,
    )
    .unwrap();
    Test::new()
        .args(["result", "--input", &fixture("shapes/input-required.json")])
        .arg(&answers)
        .run()
        .stdout_is(concat!(
            r#"{"inputResponses":{"labels_q":{"action":"accept","content":{"labels":["bug"]}},"connect":{"action":"accept"}},"requestState":"opaque-\u00e9-\/blob"}"#,
            "\n"
        ));
}

#[test]
fn url_required_results_are_keyed_by_elicitation_id() {
    run_result(
        "shapes/url-required-error.json",
        r#"[{"id":"x","ok":true},{"id":"y","ok":false,"reason":"declined"}]"#,
    ).run()
    .stdout_is("{\"elicitationResults\":{\"e-1\":{\"action\":\"accept\"},\"e-2\":{\"action\":\"decline\"}}}\n");
}

#[test]
fn a_jsonrpc_request_keeps_its_id() {
    run_result(
        "shapes/jsonrpc-string-id.json",
        r#"{"id":"x","ok":true,"data":{"env":"prod"}}"#,
    )
    .run()
    .stdout_starts_with(
        r#"{"jsonrpc":"2.0","id":"abc","result":{"action":"accept","content":{"env":"prod""#,
    );
}

#[test]
fn answers_are_validated_against_the_input_schema() {
    run_result(
        "shapes/input-required.json",
        r#"[{"id":"a","ok":true,"data":{"labels":["nope"]}},{"id":"b","ok":true}]"#,
    )
    .status(2)
    .run()
    .stdout_is("")
    .stderr_has("labels_q: labels");
}

#[test]
fn the_answer_count_must_match_the_elicitations() {
    run_result("shapes/input-required.json", r#"[{"id":"a","ok":true}]"#)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("holds 2 elicitation(s) but 1 Answer(s) were given");
}

#[test]
fn an_array_without_input_gives_an_array() {
    Test::new()
        .args(["result", "--kind", "authorization"])
        .stdin(r#"[{"id":"a","ok":true,"data":{}},{"id":"b","ok":false,"reason":"expired"}]"#)
        .run()
        .stdout_is("[{\"action\":\"accept\"},{\"action\":\"cancel\"}]\n");
}

#[test]
fn a_bad_item_is_named_by_position() {
    Test::new()
        .arg("result")
        .stdin(r#"[{"id":"a","ok":true},{"id":"b"}]"#)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("item 1: not a contract Answer");
}

#[test]
fn kind_takes_only_its_values() {
    Test::new()
        .args(["result", "--kind", "bogus"])
        .stdin(r#"{"id":"a","ok":true}"#)
        .status(2)
        .run()
        .stdout_is("")
        .stderr_has("possible values: input, authorization");
}
