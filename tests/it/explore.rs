//! `elicit test --explore`: a three-step FastMCP flow recorded once, then
//! every decline, cancel and edge variant run and classified (the test
//! server crashes on a decline at step 2, so the run fails); `--save`
//! cassettes that `elicit test` then passes; `--invalid` against a server
//! that accepts anything; a hang past `--timeout`; `--max`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::{installed, Run, Test};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The FastMCP server that asks three times (tests/servers/fastmcp_steps.py).
fn steps_server() -> Vec<String> {
    installed();
    vec![
        root().join(".deps/venv/bin/python").display().to_string(),
        root()
            .join("tests/servers/fastmcp_steps.py")
            .display()
            .to_string(),
    ]
}

/// The stdlib fixture server, which accepts any content.
fn fixture_server() -> Vec<String> {
    vec![
        "python3".into(),
        root()
            .join("tests/servers/cassette_server.py")
            .display()
            .to_string(),
    ]
}

fn record(path: &Path, tool: &str, answers: &[&str], server: &[String]) {
    Test::new()
        .args(["call", "--record"])
        .arg(path)
        .args(["--tool", tool])
        .args(answers.iter().flat_map(|a| ["-a", *a]))
        .server(server)
        .stdout_unchecked(
            "the tool's result of a recording the test explores: the cassette is what counts",
        )
        .stderr_unchecked("the server's own log, forwarded")
        .run();
}

/// `elicit test --explore --format json ARGS`, ending with `status`, and
/// its report.
fn explore(args: &[&str], env: &[(&str, &str)], status: i32) -> (Run, Value) {
    let out = Test::new()
        .args(["test", "--explore", "--format", "json"])
        .args(args)
        .envs(env)
        .limit(Duration::from_secs(600))
        .status(status)
        .run();
    out.stderr_has("elicit test --explore: ");
    let report = out.json();
    (out, report)
}

/// Each variant's name (after the file) and its class.
fn classes(report: &Value) -> Vec<(String, String, bool)> {
    report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let name = v["name"].as_str().unwrap();
            let slug = name.rsplit(' ').next().unwrap().to_string();
            (
                slug,
                v["class"].as_str().unwrap_or("").to_string(),
                v["failed"] == true,
            )
        })
        .collect()
}

#[test]
fn every_variant_of_a_three_step_flow_runs_a_crash_fails_and_saved_variants_pass() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("book.cassette.json");
    let answers = [
        "name=Ada",
        "seats=2",
        "cabin=business",
        "confirm=true",
        "accept",
    ];
    record(&cassette, "book", &answers, &steps_server());
    let saved = dir.path().join("saved");
    let (out, report) = explore(
        &[
            cassette.to_str().unwrap(),
            "--save",
            saved.to_str().unwrap(),
            "-j",
            "4",
        ],
        &[],
        1, // a crash fails the run
    );
    let stderr = out.stderr();
    let got = classes(&report);
    let expected = [
        "decline-at-1",
        "cancel-at-1",
        "edge-1-name-shortest",
        "edge-1-name-longest",
        "edge-1-seats-min",
        "edge-1-seats-max",
        "decline-at-2",
        "cancel-at-2",
        "edge-2-cabin-option-economy",
        "edge-2-cabin-option-first",
        "decline-at-3",
        "cancel-at-3",
        "edge-3-confirm-false",
        "edge-3-note-longest",
    ];
    let slugs: Vec<&str> = got.iter().map(|(s, _, _)| s.as_str()).collect();
    assert_eq!(slugs, expected);
    for (slug, class, failed) in &got {
        if slug == "decline-at-2" {
            assert_eq!((class.as_str(), *failed), ("crash", true));
        } else {
            assert_eq!((class.as_str(), *failed), ("result", false), "{slug}");
        }
    }
    let crash = &report["variants"][6];
    assert!(
        crash["server_stderr"]
            .to_string()
            .contains("a decline at step 2 is not handled"),
        "the server's last words are kept: {crash}"
    );
    let seats_max = &report["variants"][5]["details"][0];
    assert!(
        seats_max.as_str().unwrap().contains("\"seats\":4"),
        "{seats_max}"
    );
    assert!(
        stderr.contains("14 variants of 1 cassette run (13 result, 1 crash), 1 failed"),
        "{stderr}"
    );

    // Every variant that returned is kept, named for what it tests; the
    // crash is not (it has no result to record: the failure is explore's
    // to report, and `elicit test DIR` stays a suite that passes).
    let mut files: Vec<String> = std::fs::read_dir(&saved)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 13, "{files:?}");
    assert!(files.contains(&"book.decline-at-1.cassette.json".to_string()));
    assert!(!files.iter().any(|f| f.contains("decline-at-2")));
    Test::new()
        .args(["test", "-j", "4"])
        .arg(&saved)
        .limit(Duration::from_secs(600))
        .run()
        .stderr_has("13 tests, 13 passed, 0 failed");
}

#[test]
fn invalid_content_accepted_fails_and_a_hang_is_classified_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("profile.cassette.json");
    record(
        &cassette,
        "profile",
        &["accept", "name=Ada", "age=36"],
        &fixture_server(),
    );
    let (_out, report) = explore(
        &[
            cassette.to_str().unwrap(),
            "--invalid",
            "--timeout",
            "20s",
            "-j",
            "4",
        ],
        &[("CASSETTE_FORM", "hang")],
        1,
    );
    let got = classes(&report);
    let find = |slug: &str| {
        got.iter()
            .find(|(s, _, _)| s == slug)
            .unwrap_or_else(|| panic!("{slug} in {got:?}"))
            .clone()
    };
    assert_eq!(find("cancel-at-1").1, "hang");
    assert!(find("cancel-at-1").2);
    assert_eq!(
        find("decline-at-1"),
        ("decline-at-1".into(), "result".into(), false)
    );
    assert_eq!(
        find("edge-1-age-max"),
        ("edge-1-age-max".into(), "result".into(), false)
    );
    // This server accepts anything: each invalid variant is a failure,
    // marked as content sent on purpose.
    for slug in [
        "invalid-1-age-above-max",
        "invalid-1-name-missing",
        "invalid-1-name-too-short",
        "invalid-1-age-wrong-type",
        "invalid-1-tags-unknown-option",
    ] {
        assert_eq!(find(slug), (slug.into(), "result".into(), true));
    }
    let above = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| {
            v["name"]
                .as_str()
                .unwrap()
                .ends_with("invalid-1-age-above-max")
        })
        .unwrap();
    assert_eq!(above["invalid"], true);
    assert!(
        above["details"][0].as_str().unwrap().contains("151"),
        "{above}"
    );
}

#[test]
fn max_bounds_the_count_and_says_how_many_were_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("profile.cassette.json");
    record(
        &cassette,
        "profile",
        &["accept", "name=Ada"],
        &fixture_server(),
    );
    let (out, report) = explore(&[cassette.to_str().unwrap(), "--max", "2"], &[], 0);
    let stderr = out.stderr();
    assert_eq!(report["variants"].as_array().unwrap().len(), 2);
    assert!(report["summary"]["skipped_by_max"].as_u64().unwrap() > 0);
    assert!(stderr.contains("skipped by --max 2"), "{stderr}");
    Test::new()
        .args(["test", "--explore", "--update"])
        .arg(&cassette)
        .status(2)
        .stdout("")
        .run()
        .stderr_has("error: the argument '--explore' cannot be used with '--update'");
}

#[test]
fn a_2026_flow_is_explored_through_input_required_rounds_and_reported_as_tap_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("profile.cassette.json");
    let mut server = vec!["--protocol".to_string(), "2026-07-28".into(), "--".into()];
    server.extend(fixture_server());
    server.push("--stateless".into());
    Test::new()
        .args(["call", "--record"])
        .arg(&cassette)
        .args(["--tool", "profile", "-a", "accept", "-a", "name=Ada"])
        .args(&server)
        .stdout_unchecked(
            "the tool's result of a recording the test explores: the cassette is what counts",
        )
        .run();
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    assert_eq!(recorded["protocol"], "2026-07-28");
    let run = |format: &str| {
        let run = Test::new()
            .args([
                "test",
                "--explore",
                "--max",
                "3",
                "-j",
                "3",
                "--format",
                format,
            ])
            .arg(&cassette)
            .limit(Duration::from_secs(300))
            .run();
        run.stderr_has("elicit test --explore: 3 variants");
        run
    };
    let tap = run("tap");
    let tap = tap.stdout();
    assert!(tap.starts_with("TAP version 13\n1..3\n"), "{tap}");
    assert!(
        tap.contains("ok 1 - ") && tap.contains("decline-at-1 # result"),
        "{tap}"
    );
    assert!(tap.contains(r#"{"reply":{"action":"decline"}"#), "{tap}");
    let junit = run("junit");
    let junit = junit.stdout();
    assert!(
        junit.contains(r#"<testsuites name="elicit test --explore" tests="3" failures="0""#),
        "{junit}"
    );
    assert!(junit.contains("cancel-at-1"), "{junit}");
}

/// `--invalid --save`: each invalid variant the server answered with a
/// result is kept as a cassette named for what it breaks, its elicitation
/// marked `"invalid": true` (sent as written, not checked against the
/// schema), expecting the server's recorded reaction; `elicit test` then
/// passes it. Without the mark the same answer is refused as breaking the
/// form, so the mark is what makes it a test.
/// Records the fixture's `profile` flow in `dir`, then explores it with
/// `--invalid --save DIR/saved` (the server's environment `env`).
fn explore_invalid_profile(dir: &Path, env: &[(&str, &str)], status: i32) -> (PathBuf, Run, Value) {
    let cassette = dir.join("profile.cassette.json");
    record(
        &cassette,
        "profile",
        &["accept", "name=Ada", "age=36"],
        &fixture_server(),
    );
    let saved = dir.join("saved");
    let (out, report) = explore(
        &[
            cassette.to_str().unwrap(),
            "--invalid",
            "--save",
            saved.to_str().unwrap(),
        ],
        env,
        status,
    );
    (saved, out, report)
}

#[test]
fn invalid_variants_are_saved_marked_and_pass_elicit_test() {
    let dir = tempfile::tempdir().unwrap();
    let (saved, _out, _report) = explore_invalid_profile(dir.path(), &[], 1);
    // The fixture server accepts anything: invalid content accepted fails
    // (the status 1 above).
    let above = saved.join("profile.invalid-1-age-above-max.cassette.json");
    let text = std::fs::read_to_string(&above).unwrap_or_else(|e| {
        panic!(
            "{} not saved ({e}); saved: {:?}",
            above.display(),
            std::fs::read_dir(&saved)
                .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
                .unwrap_or_default()
        )
    });
    let kept: Value = serde_json::from_str(&text).unwrap();
    let asked = &kept["elicitations"][0];
    assert_eq!(asked["invalid"], true, "{kept}");
    assert_eq!(asked["answer"]["content"]["age"], 151, "{kept}");
    assert!(kept["result"].is_object(), "{kept}");
    for name in [
        "profile.invalid-1-age-above-max.cassette.json",
        "profile.invalid-1-age-wrong-type.cassette.json",
        "profile.invalid-1-name-missing.cassette.json",
    ] {
        Test::new()
            .arg("test")
            .arg(saved.join(name))
            .limit(std::time::Duration::from_secs(120))
            .run()
            .stderr_has("elicit test: 1 test, 1 passed, 0 failed");
    }
    let mut unmarked = kept.clone();
    unmarked["elicitations"][0]
        .as_object_mut()
        .unwrap()
        .remove("invalid");
    let plain = dir.path().join("unmarked.cassette.json");
    std::fs::write(&plain, unmarked.to_string()).unwrap();
    Test::new()
        .arg("test")
        .arg(&plain)
        .limit(std::time::Duration::from_secs(120))
        .failure()
        .run()
        .stderr_has("field age: 151 is greater than the maximum of 150");
}

/// A server that refuses invalid content with a JSON-RPC error (as servers
/// are told to validate): each invalid variant is classified as an error
/// reply, not a failure, and saved with the refusal as `error`; `elicit
/// test` passes the saved cassette, and fails it when the server accepts
/// the content or refuses with another code.
#[test]
fn a_refusal_of_invalid_content_is_saved_as_an_error_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let validating = [("CASSETTE_FORM", "validating")];
    let (saved, out, report) = explore_invalid_profile(dir.path(), &validating, 0);
    let invalid: Vec<_> = classes(&report)
        .into_iter()
        .filter(|(slug, _, _)| slug.starts_with("invalid-"))
        .collect();
    assert!(invalid.len() >= 3, "{invalid:?}");
    for (slug, class, failed) in &invalid {
        assert_eq!(class, "error-reply", "{slug}: {}", out.stdout());
        assert!(!failed, "{slug}: a refused invalid answer is not a failure");
    }
    let path = saved.join("profile.invalid-1-age-above-max.cassette.json");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(kept["error"]["code"], -32602, "{kept}");
    assert!(kept.get("result").is_none(), "{kept}");
    let replay = |path: &Path, env: &[(&str, &str)], passes: bool| {
        let test = Test::new()
            .arg("test")
            .arg(path)
            .envs(env)
            .limit(Duration::from_secs(120));
        if passes { test } else { test.failure() }.run()
    };
    replay(&path, &validating, true).stderr_has("elicit test: 1 test, 1 passed, 0 failed");
    // The server now accepts the content: the recorded refusal is missed.
    let accepted = replay(&path, &[], false);
    let said = format!("{}{}", accepted.stdout(), accepted.stderr());
    assert!(said.contains("it refuses the call"), "{said}");
    // Another code is another refusal.
    let mut other = kept.clone();
    other["error"]["code"] = (-32603).into();
    let other_path = dir.path().join("other.cassette.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let refused = replay(&other_path, &validating, false);
    let said = format!("{}{}", refused.stdout(), refused.stderr());
    assert!(said.contains("recorded {\"code\":-32603"), "{said}");
}

/// A cassette of two elicitations of 1,000 optional strings each (up to
/// 4096 characters), every one answered with 200 characters: about 520 KB.
fn wide_cassette(path: &Path) {
    let props: serde_json::Map<String, Value> = (0..1000)
        .map(|i| {
            (
                format!("f{i:04}"),
                serde_json::json!({"type": "string", "maxLength": 4096}),
            )
        })
        .collect();
    let content: serde_json::Map<String, Value> = props
        .keys()
        .map(|k| (k.clone(), Value::String("x".repeat(200))))
        .collect();
    let exchange = serde_json::json!({
        "request": {"message": "Many?", "requestedSchema": {"type": "object", "properties": props}},
        "answer": {"action": "accept", "content": content}
    });
    let cassette = serde_json::json!({
        "elicit": "cassette/1",
        "server": {"command": fixture_server()},
        "protocol": "2025-11-25",
        "tool": "profile",
        "elicitations": [exchange.clone(), exchange],
        "result": {"content": []}
    });
    std::fs::write(path, cassette.to_string()).unwrap();
}

/// `--max 1` on a 1,000-field cassette makes one variant and counts the
/// other 6,003: its peak memory stays far under what building them all
/// took (over 2 GB before the variants were made one at a time).
#[test]
fn a_thousand_field_cassette_with_max_1_runs_one_variant_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("wide.cassette.json");
    wide_cassette(&cassette);
    let test = Test::new()
        .current_dir(root())
        .words("test --explore --max 1")
        .arg(&cassette);
    let (stderr, peak_kib) = crate::hostile_repo::run_measured(test, Duration::from_secs(120));
    assert!(
        stderr.contains("1 variant of 1 cassette run")
            && stderr.contains("6003 skipped by --max 1"),
        "{stderr}"
    );
    assert!(peak_kib < 200 * 1024, "peak {peak_kib} KiB: {stderr}");
}

/// A result of 17 MB is saved cut, with a marker, into a cassette under
/// the 16 MiB `elicit test` reads, which then passes against the server.
#[test]
fn a_result_too_large_for_a_cassette_is_saved_cut_and_elicit_test_passes_it() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("profile.cassette.json");
    record(
        &cassette,
        "profile",
        &["accept", "name=Ada"],
        &fixture_server(),
    );
    let saved = dir.path().join("saved");
    let big = [("CASSETTE_RESULT_BYTES", "17000000")];
    let (_out, report) = explore(
        &[
            cassette.to_str().unwrap(),
            "--max",
            "2",
            "--save",
            saved.to_str().unwrap(),
        ],
        &big,
        0,
    );
    for v in report["variants"].as_array().unwrap() {
        let said = v["saved"].as_str().unwrap_or_default();
        assert!(said.contains("was cut to fit a cassette"), "{v}");
        assert!(
            v.to_string().len() < 64 * 1024,
            "the report holds no result: {v}"
        );
    }
    let files: Vec<_> = std::fs::read_dir(&saved).unwrap().flatten().collect();
    assert_eq!(files.len(), 2);
    for f in &files {
        let len = f.metadata().unwrap().len();
        assert!(len < 1 << 20, "{}: {len} bytes", f.path().display());
        let text = std::fs::read_to_string(f.path()).unwrap();
        assert!(
            text.contains("cut by elicit test --explore --save"),
            "{text}"
        );
    }
    Test::new()
        .arg("test")
        .arg(&saved)
        .envs(&big)
        .limit(Duration::from_secs(300))
        .run()
        .stderr_has("2 tests, 2 passed, 0 failed");
}

/// Options `a.b`, `a-b` and `a b` make the same slug: each variant is
/// saved under a name of its own, and a second run says it replaced them.
#[test]
fn variants_whose_names_collide_are_each_saved_and_a_replaced_file_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("pick.cassette.json");
    let dotted = [("CASSETTE_FORM", "dotted")];
    Test::new()
        .args(["call", "--record"])
        .arg(&cassette)
        .args(["--tool", "profile", "-a", "accept", "-a", "name=Ada"])
        .envs(&dotted)
        .server(&fixture_server())
        .stdout_unchecked(
            "the tool's result of a recording the test explores: the cassette is what counts",
        )
        .run();
    let saved = dir.path().join("saved");
    let run = || {
        let (_out, report) = explore(
            &[
                cassette.to_str().unwrap(),
                "--save",
                saved.to_str().unwrap(),
                "-j",
                "3",
            ],
            &dotted,
            0,
        );
        let said: Vec<String> = report["variants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["name"].as_str().unwrap().contains("color-option"))
            .map(|v| v["saved"].as_str().unwrap().to_string())
            .collect();
        said
    };
    let said = run();
    assert_eq!(said.len(), 3, "{said:?}");
    let mut files: Vec<String> = std::fs::read_dir(&saved)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("color-option"))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "pick.edge-1-color-option-a-b-2.cassette.json",
            "pick.edge-1-color-option-a-b-3.cassette.json",
            "pick.edge-1-color-option-a-b.cassette.json",
        ]
    );
    assert!(said.iter().all(|s| !s.contains("replaced")), "{said:?}");
    let again = run();
    assert!(
        again
            .iter()
            .all(|s| s.contains("it replaced the file that was there")),
        "{again:?}"
    );
}
