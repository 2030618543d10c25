//! Cassettes: `elicit call --record` against real servers (npm
//! server-everything, the PyPI `mcp` SDK server, a fixture server whose form
//! changes with its environment), then `elicit test` replaying them: green
//! when the server asks and answers the same, a readable diff when it does
//! not, `--update`, unreadable cassettes, and the TAP / JUnit / JSON reports.

use crate::common::installed;
use crate::common::{answers, client_session, dumb_client, replies_to, Run, Test};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture server (stdlib Python), optionally speaking 2026-07-28.
fn fixture(stateless: bool) -> Vec<String> {
    let mut v = vec![
        "python3".to_string(),
        root()
            .join("tests/servers/cassette_server.py")
            .display()
            .to_string(),
    ];
    if stateless {
        v.push("--stateless".into());
    }
    v
}

/// `elicit call --no-input ARGS -- python3 tests/servers/cassette_server.py`.
fn call_cassette_server(args: &[&str], env: &[(&str, &str)]) -> Test {
    let mut all = vec!["call", "--no-input"];
    all.extend_from_slice(args);
    all.push("--");
    let server = fixture(false);
    all.extend(server.iter().map(String::as_str));
    Test::new().args(&all).envs(env)
}

/// `elicit call --record FILE ARGS -- SERVER`, which must succeed.
fn record(file: &Path, args: &[&str], server: &[String], env: &[(&str, &str)]) -> Value {
    let mut all: Vec<&str> = "call --no-input --server-log /dev/null --record"
        .split(' ')
        .collect();
    all.push(file.to_str().unwrap());
    all.extend_from_slice(args);
    all.push("--");
    all.extend(server.iter().map(String::as_str));
    Test::new()
        .args(&all)
        .envs(env)
        .stdout_unchecked("the tool's result is read back from the cassette")
        .run();
    read(file)
}

/// `elicit call --no-input --record FILE ARGS URL`, the profile form answered in full, which
/// must succeed.
fn record_profile_at(url: &str, file: &Path, args: &[&str]) -> Value {
    let mut all = vec!["call", "--no-input", "--record", file.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--tool", "ask_profile"]);
    all.extend(answers(&["name=Ada", "age=36", "color=red", "accept"]));
    all.push(url);
    Test::new()
        .args(&all)
        .stdout_unchecked("the tool's result is read back from the cassette")
        .run();
    read(file)
}

fn read(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn test(args: &[&str], env: &[(&str, &str)]) -> Test {
    let mut all = vec!["test"];
    all.extend_from_slice(args);
    Test::new().args(&all).envs(env)
}

/// [`test`] run to its end, every cassette passing (as its summary says).
fn passes(args: &[&str], env: &[(&str, &str)]) {
    test(args, env).run().stderr_has(", 0 failed (");
}

const PROFILE: &[&str] = &["--tool", "profile", "-a", "name=Ada", "-a", "accept"];

#[test]
fn server_everything_form_records_and_replays_green() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("everything.cassette.json");
    let c = record(
        &file,
        &[
            &["--tool", "trigger-elicitation-request"][..],
            &answers(&[
                "accept",
                "name=Ada",
                "check=yes",
                "integer=7",
                "untitledMultipleSelectEnum=Piano",
            ]),
        ]
        .concat(),
        &crate::common::server_everything(),
        &[],
    );
    assert_eq!(c["elicit"], "cassette/1");
    assert_eq!(
        c["server"],
        json!({"command": crate::common::server_everything()})
    );
    assert_eq!(c["protocol"], "2025-11-25");
    assert_eq!(c["tool"], "trigger-elicitation-request");
    assert_eq!(c["arguments"], json!({}));
    let e = c["elicitations"].as_array().unwrap();
    assert_eq!(e.len(), 1);
    let props = e[0]["request"]["requestedSchema"]["properties"]
        .as_object()
        .unwrap();
    assert_eq!(props.len(), 13, "server-everything's 13-field form");
    assert_eq!(e[0]["answer"]["action"], "accept");
    assert_eq!(e[0]["answer"]["content"]["name"], "Ada");
    assert_eq!(e[0]["answer"]["content"]["integer"], 7);
    assert!(c["result"]["content"].is_array());
    // The file is pretty, with the keys in their fixed order.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("{\n  \"elicit\": \"cassette/1\",\n  \"server\": {"));
    assert!(text.ends_with("}\n"));

    let run = test(&[file.to_str().unwrap()], &[]).run();
    assert!(run.stderr().contains("ok "), "{}", run.stderr());
    assert!(
        run.stderr().contains("1 test, 1 passed, 0 failed"),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().is_empty(), "no report without --format");

    // As if the server had changed its form since the recording: the
    // cassette's form lacks `email` and has an older bound on `integer`.
    let mut older = c.clone();
    let props = older["elicitations"][0]["request"]["requestedSchema"]["properties"]
        .as_object_mut()
        .unwrap();
    props.shift_remove("email");
    props["integer"]["maximum"] = json!(50);
    std::fs::write(&file, serde_json::to_string_pretty(&older).unwrap()).unwrap();
    let run = test(&[file.to_str().unwrap()], &[]).status(1).run();
    assert!(
        run.stderr().contains("field email added (string")
            && run
                .stderr()
                .contains("field integer: maximum changed from 50 to 100"),
        "{}",
        run.stderr()
    );
    passes(&["--update", file.to_str().unwrap()], &[]);
    passes(&[file.to_str().unwrap()], &[]);
    assert_eq!(read(&file)["elicitations"], c["elicitations"]);
}

#[test]
fn a_form_that_changes_fails_with_a_diff_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cassette.json");
    record(&file, PROFILE, &fixture(false), &[]);
    let f = file.to_str().unwrap();
    passes(&[f], &[]);
    let cases = [
        ("added", vec!["field email added (string, required)"]),
        (
            "renamed",
            vec![
                "field name removed (was string, required) (renamed to fullName?)",
                "field fullName added (string, required)",
            ],
        ),
        ("bound", vec!["field age: maximum changed from 150 to 120"]),
    ];
    for (variant, lines) in cases {
        let run = test(&[f], &[("CASSETTE_FORM", variant)]).status(1).run();
        assert!(
            run.stderr().contains("FAIL")
                && run.stderr().contains("elicitation 1 asks something else"),
            "{variant}: {}",
            run.stderr()
        );
        for l in lines {
            assert!(
                run.stderr().contains(l),
                "{variant}: no {l:?} in {}",
                run.stderr()
            );
        }
        assert!(
            run.stderr().contains("0 passed, 1 failed"),
            "{}",
            run.stderr()
        );
    }
}

#[test]
fn update_rewrites_the_cassette_and_keeps_answers_by_field_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cassette.json");
    record(
        &file,
        &[
            "--tool", "profile", "-a", "name=Ada", "-a", "age=41", "-a", "accept",
        ],
        &fixture(false),
        &[],
    );
    let f = file.to_str().unwrap();
    let before = std::fs::read_to_string(&file).unwrap();
    for variant in ["bound", "optional"] {
        let env = [("CASSETTE_FORM", variant)];
        // It fails before --update.
        test(&[f], &env)
            .status(1)
            .run()
            .stderr_has("asks something else than recorded");
        let run = test(&["--update", f], &env).run();
        assert!(run.stderr().contains("updated"), "{}", run.stderr());
        passes(&[f], &env);
        let c = read(&file);
        let content = &c["elicitations"][0]["answer"]["content"];
        assert_eq!(content["name"], "Ada", "kept by field name");
        assert_eq!(content["age"], 41, "kept by field name");
        if variant == "optional" {
            assert_eq!(content["nickname"], "x", "a new field takes its default");
        }
        // Nothing changed: --update leaves the file as it is.
        let again = std::fs::read_to_string(&file).unwrap();
        let run = test(&["--update", f], &env).run();
        assert!(run.stderr().contains("ok "), "{}", run.stderr());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), again);
    }
    assert_ne!(before, std::fs::read_to_string(&file).unwrap());
    // A new required field with no default and no recorded answer cannot be
    // updated: record again.
    let run = test(&["--update", f], &[("CASSETTE_FORM", "added")])
        .status(1)
        .run();
    assert!(
        run.stderr()
            .contains("no recorded answer and no default: email")
            && run.stderr().contains("record the cassette again"),
        "{}",
        run.stderr()
    );
}

#[test]
fn asking_more_fewer_or_never_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cassette.json");
    record(&file, PROFILE, &fixture(false), &[]);
    let f = file.to_str().unwrap();
    let run = test(&[f], &[("CASSETTE_FORM", "twice")]).status(1).run();
    assert!(
        run.stderr()
            .contains("asked more than the 1 elicitation(s) recorded: elicitation 2"),
        "{}",
        run.stderr()
    );
    let run = test(&[f], &[("CASSETTE_FORM", "silent")]).status(1).run();
    assert!(
        run.stderr().contains("the server never asked"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains(
            "the result differs from the recorded one: ~ /content/0/text (JSON text) /reply:"
        ),
        "{}",
        run.stderr()
    );
    // Recorded twice, asked once.
    let twice = dir.path().join("twice.cassette.json");
    record(
        &twice,
        PROFILE,
        &fixture(false),
        &[("CASSETTE_FORM", "twice")],
    );
    let run = test(&[twice.to_str().unwrap()], &[]).status(1).run();
    assert!(
        run.stderr()
            .contains("the server asked 1 time(s); the cassette recorded 2"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_multi_round_input_required_flow_with_url_mode_replays_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("steps.cassette.json");
    // A browser that would leave a trace if anything were opened.
    let opened = dir.path().join("opened");
    let browser = format!("touch {}", opened.display());
    let env = [
        ("ELICIT_BROWSER", browser.as_str()),
        ("BROWSER", browser.as_str()),
    ];
    let c = record(
        &file,
        &[
            "--protocol",
            "2026-07-28",
            "--tool",
            "steps",
            "-a",
            "name=Ada",
            "-a",
            "go=yes",
            "-a",
            "accept",
        ],
        &fixture(true),
        &env,
    );
    assert_eq!(c["protocol"], "2026-07-28");
    let e = c["elicitations"].as_array().unwrap();
    let keys: Vec<&str> = e.iter().map(|x| x["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["who", "go", "link"]);
    assert_eq!(e[2]["request"]["mode"], "url");
    assert_eq!(e[2]["answer"], json!({"action": "accept"}));
    // The server checked each round's requestState; the result says so.
    let text = c["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("came back changed"), "{text}");
    assert_eq!(c["result"]["isError"], false, "{}", c["result"]);

    passes(&[file.to_str().unwrap()], &env);
    assert!(!opened.exists(), "the replay opened a browser");

    // The handshake generation of the same flow.
    let hs = dir.path().join("steps-hs.cassette.json");
    let c = record(
        &hs,
        &[
            "--tool", "steps", "-a", "name=Ada", "-a", "go=no", "-a", "accept",
        ],
        &fixture(false),
        &env,
    );
    assert_eq!(c["elicitations"].as_array().unwrap().len(), 3);
    assert!(c["elicitations"][0].get("key").is_none());
    passes(&[hs.to_str().unwrap()], &env);
    assert!(!opened.exists(), "a browser was opened");
}

#[test]
fn volatile_results_are_declared_with_ignore_and_match() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stamp.cassette.json");
    record(
        &file,
        &["--tool", "stamp", "-a", "name=Ada", "-a", "accept"],
        &fixture(false),
        &[],
    );
    let f = file.to_str().unwrap();
    let run = test(&[f], &[]).status(1).run();
    assert!(
        run.stderr().contains("~ /content/0/text: \"id "),
        "{}",
        run.stderr()
    );
    let mut c = read(&file);
    c["ignore"] = json!(["/content/0/text"]);
    c["match"] = json!({"/content/1/text": "^at \\d\\d:\\d\\d:\\d\\d$"});
    std::fs::write(&file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    passes(&[f], &[]);
    c["match"] = json!({"/content/1/text": "^never$"});
    std::fs::write(&file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let run = test(&[f], &[]).status(1).run();
    assert!(
        run.stderr().contains("/content/1/text: \"at ")
            && run.stderr().contains("does not match /^never$/"),
        "{}",
        run.stderr()
    );
}

#[test]
fn hand_written_cassettes_answer_by_field_name() {
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("elicit-tests");
    std::fs::create_dir_all(tests.join("nested")).unwrap();
    let server = fixture(false);
    let request = json!({"mode":"form","message":"Who are you?","requestedSchema":{"type":"object","properties":{
        "age":{"type":"integer","minimum":0,"maximum":150,"default":30},
        "name":{"type":"string","title":"Name","minLength":1},
        "tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["name"]}});
    let result = json!({"content":[{"type":"text","text":"{\"reply\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\",\"age\":7}},\"args\":{}}"}],"isError":false});
    for (name, answer) in [
        ("words", json!(["name=Ada", "age=7"])),
        ("values", json!({"name": "Ada", "age": "7"})),
    ] {
        let c = json!({"elicit":"cassette/1","server":{"command":server},"protocol":"2025-11-25",
            "tool":"profile","elicitations":[{"request":request,"answer":answer}],"result":result});
        std::fs::write(
            tests.join("nested").join(format!("{name}.cassette.json")),
            c.to_string(),
        )
        .unwrap();
    }
    // Only the elicitations checked: no result, no protocol.
    let minimal = json!({"elicit":"cassette/1","server":{"command":server},"tool":"profile",
        "elicitations":[{"request":request,"answer":"name=Eve"}]});
    std::fs::write(tests.join("minimal.cassette.json"), minimal.to_string()).unwrap();
    // Not a cassette by name: not picked up from a folder.
    std::fs::write(tests.join("notes.json"), "{}").unwrap();
    Test::new()
        .arg("test")
        .current_dir(dir.path())
        .run()
        .stderr_has("3 tests, 3 passed");
}

#[test]
fn unreadable_cassettes_name_the_file_and_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.cassette.json");
    record(&good, PROFILE, &fixture(false), &[]);
    let text = std::fs::read_to_string(&good).unwrap();
    let c = read(&good);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated",
            text[..text.len() / 2].to_string(),
            "invalid JSON at line",
        ),
        ("empty", String::new(), "the file is empty"),
        (
            "version",
            {
                let mut c = c.clone();
                c["elicit"] = json!("cassette/2");
                c.to_string()
            },
            "at /elicit: must be \"cassette/1\"",
        ),
        (
            "answer",
            {
                let mut c = c.clone();
                c["elicitations"][0]["answer"] = json!({"action": "maybe"});
                c.to_string()
            },
            "at /elicitations/0/answer",
        ),
        (
            "server",
            {
                let mut c = c.clone();
                c["server"] = json!({"command": []});
                c.to_string()
            },
            "at /server",
        ),
        (
            "regex",
            {
                let mut c = c.clone();
                c["match"] = json!({"/content/0/text": "(unclosed"});
                c.to_string()
            },
            "at /match/~1content~10~1text: not a valid regular expression",
        ),
        (
            "tampered",
            text.replacen("\"elicit\"", "\"elicit\" \"", 1),
            "invalid JSON at line 2, column",
        ),
    ];
    for (name, body, expected) in cases {
        let file = dir.path().join(format!("{name}.cassette.json"));
        std::fs::write(&file, body).unwrap();
        let run = test(&[file.to_str().unwrap()], &[]).status(2).run();
        assert!(
            run.stderr().contains(&format!("{}: ", file.display()))
                && run.stderr().contains(expected),
            "{name}: no {expected:?} in {}",
            run.stderr()
        );
        assert!(run.stdout().is_empty(), "{name}");
    }
    // A readable cassette beside an unreadable one still runs; exit 2 wins.
    let bad = dir.path().join("version.cassette.json");
    let run = test(&[good.to_str().unwrap(), bad.to_str().unwrap()], &[])
        .status(2)
        .run();
    assert!(run.stderr().contains("1 passed"), "{}", run.stderr());
    // No such path.
    let run = test(&[dir.path().join("nope").to_str().unwrap()], &[])
        .status(2)
        .run();
    assert!(run.stderr().contains("nope"), "{}", run.stderr());
}

/// Three cassettes (a pass, a failure, an unreadable one) in a folder.
fn three_cassettes(dir: &Path) -> PathBuf {
    let tests = dir.join("suite");
    std::fs::create_dir_all(&tests).unwrap();
    let pass = tests.join("a-pass.cassette.json");
    record(&pass, PROFILE, &fixture(false), &[]);
    let mut fail = read(&pass);
    fail["elicitations"][0]["request"]["message"] = json!("Who were you?");
    std::fs::write(tests.join("b-fail.cassette.json"), fail.to_string()).unwrap();
    std::fs::write(tests.join("c-bad.cassette.json"), "{\"elicit\": ").unwrap();
    tests
}

#[test]
fn junit_output_has_one_testcase_per_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let suite = three_cassettes(dir.path());
    let run = test(
        &["--format", "junit", "-j", "2", suite.to_str().unwrap()],
        &[],
    )
    .status(2)
    .stderr_unchecked("the report on stdout is what this checks; the lines for a person are checked by the plain run")
    .run();
    let doc = roxmltree::Document::parse(run.stdout())
        .unwrap_or_else(|e| panic!("not XML ({e}): {}", run.stdout()));
    let top = doc.root_element();
    assert_eq!(top.tag_name().name(), "testsuites");
    let suites: Vec<_> = top
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    let suite_el = suites[0];
    assert_eq!(suite_el.attribute("tests"), Some("3"));
    assert_eq!(suite_el.attribute("failures"), Some("1"));
    assert_eq!(suite_el.attribute("errors"), Some("1"));
    let cases: Vec<_> = suite_el
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3, "one testcase per cassette");
    for c in &cases {
        assert!(c.attribute("name").is_some() && c.attribute("classname").is_some());
        let t: f64 = c.attribute("time").unwrap().parse().unwrap();
        assert!(t >= 0.0);
    }
    assert!(cases[0]
        .attribute("name")
        .unwrap()
        .ends_with("a-pass.cassette.json"));
    assert_eq!(cases[0].children().filter(|n| n.is_element()).count(), 0);
    let failure = cases[1]
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("the failed test has a <failure>");
    assert!(failure
        .text()
        .unwrap()
        .contains("message changed: \"Who were you?\" → \"Who are you?\""));
    let error = cases[2]
        .children()
        .find(|n| n.has_tag_name("error"))
        .expect("the unreadable cassette has an <error>");
    assert!(error.attribute("message").unwrap().contains("invalid JSON"));
}

#[test]
fn tap_and_json_reports() {
    let dir = tempfile::tempdir().unwrap();
    let suite = three_cassettes(dir.path());
    let run = test(&["--format", "tap", suite.to_str().unwrap()], &[])
        .status(2)
        .stderr_unchecked("the report on stdout is what this checks; the lines for a person are checked by the plain run")
        .run();
    let lines: Vec<&str> = run.stdout().lines().collect();
    assert_eq!(lines[0], "TAP version 13");
    assert_eq!(lines[1], "1..3");
    let results: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("ok ") || l.starts_with("not ok "))
        .collect();
    assert_eq!(results.len(), 3);
    assert!(results[0].starts_with("ok 1 - ") && results[0].ends_with("a-pass.cassette.json"));
    assert!(results[1].starts_with("not ok 2 - "));
    assert!(results[2].starts_with("not ok 3 - "));

    let run = test(&["--format", "json", suite.to_str().unwrap()], &[])
        .status(2)
        .stderr_unchecked("the report on stdout is what this checks; the lines for a person are checked by the plain run")
        .run();
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    let statuses: Vec<&str> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["pass", "fail", "error"]);
    assert_eq!(v["summary"]["total"], 3);
    assert_eq!(v["summary"]["passed"], 1);
    assert!(v["tests"][1]["details"][0]
        .as_str()
        .unwrap()
        .contains("asks something else"));
    // One line per test on stderr, and the summary.
    assert_eq!(
        run.stderr()
            .lines()
            .filter(|l| l.starts_with("ok ") || l.starts_with("FAIL ") || l.starts_with("ERROR "))
            .count(),
        3,
        "{}",
        run.stderr()
    );
    assert!(run
        .stderr()
        .contains("3 tests, 1 passed, 1 failed, 1 unreadable"));
}

#[test]
fn parallel_runs_and_a_server_given_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("p0.cassette.json");
    record(&first, PROFILE, &fixture(false), &[]);
    let mut c = read(&first);
    // Cassettes naming a server that does not exist: --server replaces it.
    c["server"] = json!({"command": ["/nonexistent/server"]});
    for i in 0..6 {
        std::fs::write(
            dir.path().join(format!("p{i}.cassette.json")),
            c.to_string(),
        )
        .unwrap();
    }
    let d = dir.path().to_str().unwrap();
    let run = test(&["-j", "3", d], &[]).status(1).run();
    assert!(
        run.stderr().contains("cannot start or reach the server"),
        "{}",
        run.stderr()
    );
    let server = fixture(false).join(" ");
    let run = test(&["-j", "3", "--server", &server, d], &[]).run();
    assert!(
        run.stderr().contains("6 tests, 6 passed"),
        "{}",
        run.stderr()
    );
}

#[test]
fn python_sdk_stdio_both_generations() {
    let dir = tempfile::tempdir().unwrap();
    for protocol in ["2025-11-25", "2026-07-28"] {
        for (tool, given) in [
            (
                "ask_profile",
                answers(&["name=Ada", "age=36", "color=Green", "accept"]),
            ),
            ("connect_account", answers(&["accept"])),
        ] {
            let file = dir.path().join(format!("{tool}-{protocol}.cassette.json"));
            let mut args = vec!["--protocol", protocol, "--tool", tool];
            args.extend(given);
            let c = record(&file, &args, &crate::common::python_sdk_server(), &[]);
            assert_eq!(c["protocol"], protocol);
            assert_eq!(
                c["elicitations"].as_array().unwrap().len(),
                1,
                "{tool} {protocol}: {c}"
            );
            passes(&[file.to_str().unwrap()], &[]);
        }
    }
}

/// A server listening on 127.0.0.1, ended when dropped.
struct Listening(Child);

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn listen(mut cmd: Command, port: u16) -> Listening {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Listening(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

#[test]
fn remote_servers_streamable_http_both_eras_and_legacy_sse() {
    installed();
    let dir = tempfile::tempdir().unwrap();
    let everything_js = root()
        .join(".deps/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    for (mode, path, transport) in [("streamableHttp", "mcp", "auto"), ("sse", "sse", "sse")] {
        let port = free_port();
        let mut cmd = Command::new("node");
        cmd.arg(&everything_js)
            .arg(mode)
            .env("PORT", port.to_string());
        let _server = listen(cmd, port);
        let url = format!("http://127.0.0.1:{port}/{path}");
        let file = dir.path().join(format!("{mode}.cassette.json"));
        let mut all = vec!["call", "--no-input", "--record", file.to_str().unwrap()];
        all.extend(["--transport", transport, "-H", "X-Secret: do-not-record-42"]);
        all.extend("--tool trigger-elicitation-request -a accept -a name=Ada".split(' '));
        all.push(&url);
        Test::new()
            .args(&all)
            .stdout_unchecked("the tool's result is read back from the cassette")
            .run();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("do-not-record-42"),
            "a header value was recorded"
        );
        let c = read(&file);
        assert_eq!(c["server"], json!({"url": url, "transport": transport}));
        passes(&[file.to_str().unwrap()], &[]);
    }
    // The PyPI SDK over Streamable HTTP, both generations.
    let port = free_port();
    let mut cmd = Command::new(root().join(".deps/venv/bin/python"));
    cmd.arg(root().join("tests/servers/py_http_server.py"))
        .arg(port.to_string());
    let _server = listen(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    for protocol in ["2025-11-25", "2026-07-28"] {
        let file = dir.path().join(format!("py-{protocol}.cassette.json"));
        let c = record_profile_at(&url, &file, &["--protocol", protocol]);
        assert_eq!(c["protocol"], protocol);
        assert_eq!(c["elicitations"].as_array().unwrap().len(), 1);
        passes(&[file.to_str().unwrap()], &[]);
    }
}

#[test]
fn answers_given_at_the_terminal_are_recorded_and_replay() {
    use expectrl::{Eof, Expect};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tty.cassette.json");
    let mut s = Test::new()
        .words("call --record")
        .arg(&file)
        .words("--tool profile -a age=41")
        .server(&fixture(false))
        .limit(Duration::from_secs(20))
        .terminal();
    // Each prompt reads keys in raw mode before they are sent.
    let mut answer = |prompt: &str, keys: &str| {
        s.expect(prompt).expect(prompt);
        crate::common::wait_raw_mode(&s).expect(prompt);
        s.send(keys).unwrap();
    };
    answer("Name", "Grace\r");
    answer("tags", "\r");
    answer("Send these answers?", "\r");
    s.expect(Eof).expect("elicit ends");
    let c = read(&file);
    let content = &c["elicitations"][0]["answer"]["content"];
    assert_eq!(content["name"], "Grace", "{c}");
    assert_eq!(content["age"], 41, "{c}");
    passes(&[file.to_str().unwrap()], &[]);
}

const RULES: &str = r#"{"elicit": "answers/1", "rules": [
  {"match": {"mode": "url", "host": "example.com"}, "answer": "decline"},
  {"match": {"tool": "profile", "message": "^Who", "fields": ["name", "age"]}, "answer": {"name": "Rule", "age": "33"}},
  {"match": {"message": "deployment region"}, "answer": {"region": "eu-west-1"}},
  {"match": {"message": "^Go"}, "answer": ["go=no"]}
]}"#;

fn reply_of(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn answer_rules_answer_call_elicitations_and_say_which_with_v() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, RULES).unwrap();
    let r = rules.to_str().unwrap();
    let args = ["-v", "--answers", r, "--tool", "profile"];
    let run = call_cassette_server(&args, &[]).run();
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(
        reply_of(&v)["reply"],
        json!({"action":"accept","content":{"name":"Rule","age":33}})
    );
    assert!(
        run.stderr().contains("rule 2 of ")
            && run
                .stderr()
                .contains("answered the form elicitation \"Who are you?\" (accept)"),
        "{}",
        run.stderr()
    );
    // `--answer` values win over a rule's; the rule fills the rest.
    let args = ["--answers", r, "-a", "age=50", "--tool", "profile"];
    let run = call_cassette_server(&args, &[]).run();
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(
        reply_of(&v)["reply"]["content"],
        json!({"name":"Rule","age":50})
    );
    // `steps`: no rule for its first form (rule 2 is for `profile`): with
    // --no-input it is declined and named; the URL one is declined by rule 1.
    let args = ["--answers", r, "--tool", "steps"];
    let run = call_cassette_server(&args, &[]).run();
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(
        reply_of(&v)["replies"],
        json!([{"action":"decline"},{"action":"accept","content":{"go":false}},{"action":"decline"}])
    );
    assert!(
        run.stderr().contains("no answer rule in ")
            && run
                .stderr()
                .contains("matched the form elicitation \"Who are you?\"; declined"),
        "{}",
        run.stderr()
    );
}

#[test]
fn answer_rules_in_plain_resolution_and_a_cassette_as_an_answer_file() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, RULES).unwrap();
    let form = root().join("fixtures/shapes/form-region.json");
    let run = Test::new()
        .args([
            "--no-input",
            "-v",
            "--answers",
            rules.to_str().unwrap(),
            form.to_str().unwrap(),
        ])
        .run();
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(v["action"], "accept", "{v}");
    assert_eq!(v["content"]["region"], "eu-west-1", "{v}");
    assert!(run.stderr().contains("rule 3 of"), "{}", run.stderr());

    // A cassette answers the same requests as it recorded.
    let cassette = dir.path().join("p.cassette.json");
    record(
        &cassette,
        &["--tool", "profile", "-a", "name=Kept", "-a", "accept"],
        &fixture(false),
        &[],
    );
    let args = ["--answers", cassette.to_str().unwrap(), "--tool", "profile"];
    let run = call_cassette_server(&args, &[]).run();
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(reply_of(&v)["reply"]["content"]["name"], "Kept");
    // Another form of the same tool is not the recorded one.
    let run = call_cassette_server(&args, &[("CASSETTE_FORM", "added")]).run();
    run.stderr_has("matched the form elicitation \"Who are you?\"; declined");
    let v: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(reply_of(&v)["reply"], json!({"action": "decline"}));

    // A bad rules file: the file and the pointer, exit 2.
    for (body, expected) in [
        (
            r#"{"elicit":"answers/1","rules":[{"match":{"mood":"x"},"answer":"accept"}]}"#,
            "at /rules/0/match",
        ),
        (
            r#"{"elicit":"answers/1","rules":[{"match":{"message":"("},"answer":"accept"}]}"#,
            "at /rules/0/match/message: not a valid regular expression",
        ),
        (
            r#"{"elicit":"answers/7","rules":[]}"#,
            "at /elicit: must be \"answers/1\"",
        ),
        (
            r#"{"elicit":"answers/1","rules":[{"answer":"perhaps"}]}"#,
            "at /rules/0/answer",
        ),
        (r#"{"elicit":"answers/1","#, "invalid JSON at line 1"),
    ] {
        std::fs::write(&rules, body).unwrap();
        let run = Test::new()
            .args([
                "--no-input",
                "--answers",
                rules.to_str().unwrap(),
                form.to_str().unwrap(),
            ])
            .status(2)
            .run();
        assert!(
            run.stderr().contains(&format!("{}: ", rules.display()))
                && run.stderr().contains(expected),
            "{body}: no {expected:?} in {}",
            run.stderr()
        );
        assert!(run.stdout().is_empty());
    }
}

#[test]
fn answer_rules_answer_in_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, RULES).unwrap();
    let proxy = Test::new()
        .args(["proxy", "--no-input", "--answers", rules.to_str().unwrap()])
        .server(&fixture(false));
    let got = dumb_client(
        proxy,
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"link","arguments":{}}}),
        ],
    );
    let reply = got.last().expect("the call's reply");
    assert_eq!(
        reply_of(&reply["result"])["reply"],
        json!({"action": "decline"})
    );
}

/// A rule's `tool` in the proxy: the tool of the call an elicitation
/// belongs to (the call in flight, for the handshake's `elicitation/create`;
/// the call that came back `input_required`, for 2026-07-28).
#[test]
fn answer_rules_match_the_tool_of_the_call_in_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(
        &rules,
        r#"{"elicit": "answers/1", "rules": [
  {"match": {"tool": "profile"}, "answer": {"name": "ByTool"}},
  {"match": {}, "answer": "decline"}
]}"#,
    )
    .unwrap();
    let args = ["--no-input", "--answers", rules.to_str().unwrap()];
    let call = |id: i64, tool: &str, meta: Option<&Value>| {
        let mut params = json!({"name": tool, "arguments": {}});
        if let Some(m) = meta {
            params["_meta"] = m.clone();
        }
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
    };
    // `stamp` asks the same form as `profile`: only the tool tells them apart.
    let (replies, _) = through_proxy(
        &args,
        &fixture(false),
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            call(2, "profile", None),
            call(3, "stamp", None),
        ],
    );
    assert_eq!(
        reply_of(&replies[1]["result"])["reply"],
        json!({"action": "accept", "content": {"name": "ByTool", "age": 30}}),
        "{}",
        replies[1]
    );
    let stamp = replies[2]["result"]["content"][2]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(stamp).unwrap(),
        json!({"action": "decline"})
    );

    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{},
        "io.modelcontextprotocol/clientInfo":{"name":"p","version":"1"}});
    let (replies, _) = through_proxy(
        &args,
        &fixture(true),
        &[
            call(4, "profile", Some(&meta)),
            call(5, "steps", Some(&meta)),
        ],
    );
    assert_eq!(
        reply_of(&replies[0]["result"])["reply"],
        json!({"action": "accept", "content": {"name": "ByTool", "age": 30}}),
        "{}",
        replies[0]
    );
    assert_eq!(
        reply_of(&replies[1]["result"])["replies"][0],
        json!({"action": "decline"}),
        "{}",
        replies[1]
    );
}

/// Runs `elicit proxy ARGS -- SERVER` (or `ARGS URL`, for a URL) as a
/// client would: each message in turn, waiting for the reply to each
/// request; returns the replies and the proxy's run (for what it said).
fn through_proxy(args: &[&str], server: &[String], messages: &[Value]) -> (Vec<Value>, Run) {
    let remote = server.len() == 1 && server[0].starts_with("http");
    let proxy = Test::new()
        .arg("proxy")
        .args(args)
        .args((!remote).then_some("--"))
        .args(server);
    let (got, run) = client_session(proxy, messages);
    (replies_to(got, messages), run)
}

#[test]
fn the_proxy_records_each_call_that_elicited() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("px.cassette.json");
    let f = file.to_str().unwrap();
    let call = |id: i64, tool: &str, meta: Option<Value>| {
        let mut params = json!({"name": tool, "arguments": {"note": "n"}});
        if let Some(m) = meta {
            params["_meta"] = m;
        }
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
    };
    let (replies, proxy_run) = through_proxy(
        &[
            "--no-input",
            "-a",
            "name=Px",
            "-a",
            "go=yes",
            "-a",
            "accept",
            "--record",
            f,
        ],
        &fixture(false),
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            call(2, "profile", None),
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}),
            call(4, "link", None),
        ],
    );
    assert_eq!(replies.len(), 4);
    // Neither tool asked for `go`.
    proxy_run.stderr_has("elicit proxy: warning: unused answer go");
    let first = read(&file);
    assert_eq!(first["tool"], "profile");
    assert_eq!(first["arguments"], json!({"note": "n"}));
    assert_eq!(first["protocol"], "2025-11-25");
    assert_eq!(first["result"], replies[1]["result"]);
    let second = read(&dir.path().join("px-2.cassette.json"));
    assert_eq!(second["tool"], "link");
    assert_eq!(second["elicitations"][0]["request"]["mode"], "url");
    let run = test(&[dir.path().to_str().unwrap()], &[]).run();
    assert!(
        run.stderr().contains("2 tests, 2 passed"),
        "{}",
        run.stderr()
    );

    // 2026-07-28: the rounds of input_required the proxy answered.
    let file = dir.path().join("v2026").join("steps.cassette.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{},
        "io.modelcontextprotocol/clientInfo":{"name":"p","version":"1"}});
    let (replies, _) = through_proxy(
        &[
            "--no-input",
            "-a",
            "name=Px",
            "-a",
            "go=yes",
            "-a",
            "accept",
            "--record",
            file.to_str().unwrap(),
        ],
        &fixture(true),
        &[call(7, "steps", Some(meta))],
    );
    assert_eq!(replies[0]["result"]["isError"], false, "{}", replies[0]);
    let c = read(&file);
    assert_eq!(c["protocol"], "2026-07-28");
    let keys: Vec<&str> = c["elicitations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["who", "go", "link"]);
    passes(&[file.to_str().unwrap()], &[]);
}

/// `--record` into folders not there yet (a fresh repository's
/// `tests/cassettes/`) creates them, the user's alone, and writes the
/// cassette there.
#[test]
fn record_creates_the_folders_it_names_private() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tests/cassettes/profile.cassette.json");
    let c = record(&file, PROFILE, &fixture(false), &[]);
    assert_eq!(c["tool"], "profile");
    #[cfg(unix)]
    for folder in ["tests", "tests/cassettes"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(folder))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{folder}: {mode:o}");
    }
}

#[test]
fn a_record_path_that_cannot_be_written_is_refused_before_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let a_file = dir.path().join("a-file");
    std::fs::write(&a_file, "").unwrap();
    let nowhere = a_file.join("sub").join("t.cassette.json");
    let args = ["--record", nowhere.to_str().unwrap(), "--tool", "profile"];
    let run = call_cassette_server(&args, &[]).status(2).run();
    assert!(
        run.stderr().contains("a-file is not a folder"),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().is_empty());
    let args = [
        "--record",
        dir.path().to_str().unwrap(),
        "--tool",
        "profile",
    ];
    let run = call_cassette_server(&args, &[]).status(2).run();
    assert!(
        run.stderr().contains("that is a folder"),
        "{}",
        run.stderr()
    );
}

#[test]
fn the_proxy_records_a_remote_server_too() {
    installed();
    let dir = tempfile::tempdir().unwrap();
    let everything_js = root()
        .join(".deps/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(&everything_js)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let _server = listen(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let file = dir.path().join("remote.cassette.json");
    let (replies, _) = through_proxy(
        &[
            "--no-input",
            "-a",
            "accept",
            "-a",
            "name=Ada",
            "--record",
            file.to_str().unwrap(),
        ],
        std::slice::from_ref(&url),
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-elicitation-request","arguments":{}}}),
        ],
    );
    assert!(replies[1]["result"]["content"].is_array(), "{}", replies[1]);
    let c = read(&file);
    assert_eq!(c["server"], json!({"url": url, "transport": "auto"}));
    assert_eq!(c["tool"], "trigger-elicitation-request");
    assert_eq!(c["elicitations"][0]["answer"]["content"]["name"], "Ada");
    passes(&[file.to_str().unwrap()], &[]);
}

/// `elicit test` chooses the protocol exactly as `elicit call` does (one
/// session type): a cassette that says `auto`, of a FastMCP guard-pattern
/// tool, replays through the handshake's refusal and 2026-07-28, and a
/// tool that charged and failed is replayed once, never twice.
#[test]
fn a_replay_negotiates_the_protocol_as_call_does() {
    installed();
    let python = root().join(".deps/venv/bin/python").display().to_string();
    let server = vec![
        python,
        root()
            .join("tests/servers/fastmcp_server.py")
            .display()
            .to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("guard.cassette.json");
    let recorded = record(
        &file,
        &["--tool", "guard_form", "-a", "name=Bo", "-a", "accept"],
        &server,
        &[],
    );
    assert_eq!(recorded["protocol"], "2026-07-28");
    let mut auto = recorded.clone();
    auto["protocol"] = json!("auto");
    std::fs::write(&file, auto.to_string()).unwrap();
    let call_run = Test::new()
        .args(
            [
                &["call", "-v", "--no-input", "--server-log", "/dev/null"][..],
                &[
                    "--tool",
                    "guard_form",
                    "-a",
                    "name=Bo",
                    "-a",
                    "accept",
                    "--",
                ],
                &server.iter().map(String::as_str).collect::<Vec<_>>(),
            ]
            .concat(),
        )
        .run();
    call_run.stdout_has("\"isError\":false");
    let test_run = Test::new()
        .args(["test", "-v", file.to_str().unwrap()])
        .run();
    for said in [
        "because the tool asks with input_required",
        "calling it again over 2026-07-28",
    ] {
        assert!(
            call_run.stderr().contains(said),
            "call: {said:?}: {}",
            call_run.stderr()
        );
        assert!(
            test_run.stderr().contains(said),
            "test: {said:?}: {}",
            test_run.stderr()
        );
    }
    // A cassette of a tool that charged and failed: replayed, it charges once.
    let ledger = dir.path().join("ledger.txt");
    let charge = json!({"elicit":"cassette/1","server":{"command":server},"protocol":"auto",
        "tool":"charge","arguments":{"ledger":ledger.display().to_string()},"elicitations":[]});
    let charge_file = dir.path().join("charge.cassette.json");
    std::fs::write(&charge_file, charge.to_string()).unwrap();
    Test::new()
        .args(["test", charge_file.to_str().unwrap()])
        .run()
        .stderr_has(", 0 failed (");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), "charged 5\n");
}

/// A field the server added is answered with `--update -a`, a field it
/// renamed keeps its answer (said on stderr), and what a person wrote in
/// the cassette survives the update.
#[test]
fn update_answers_new_fields_follows_renames_and_keeps_what_a_person_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cassette.json");
    record(&file, PROFILE, &fixture(false), &[]);
    let f = file.to_str().unwrap();
    // What a person adds by hand: a note, a name and an ignore on the step.
    let mut c = read(&file);
    c["x-owner"] = json!("payments team");
    c["elicitations"][0]["name"] = json!("profile step");
    c["elicitations"][0]["ignore"] = json!(["/message"]);
    std::fs::write(&file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let added = [("CASSETTE_FORM", "added")];
    let run = test(&["--update", f], &added).status(1).run();
    assert!(
        run.stderr().contains("--update -a NAME=VALUE"),
        "{}",
        run.stderr()
    );
    passes(&["--update", "-a", "email=ada@example.com", f], &added);
    passes(&[f], &added);
    let c = read(&file);
    assert_eq!(c["x-owner"], "payments team");
    assert_eq!(c["elicitations"][0]["name"], "profile step");
    assert_eq!(c["elicitations"][0]["ignore"], json!(["/message"]));
    let content = &c["elicitations"][0]["answer"]["content"];
    assert_eq!(content["email"], "ada@example.com");
    assert_eq!(content["name"], "Ada");
    // A rename (name -> fullName): the answer moves, and it is said.
    let renamed = [("CASSETTE_FORM", "renamed")];
    let run = test(&["--update", f], &renamed).run();
    assert!(
        run.stderr()
            .contains("field name renamed to fullName: its recorded answer moved"),
        "{}",
        run.stderr()
    );
    let c = read(&file);
    assert_eq!(c["elicitations"][0]["answer"]["content"]["fullName"], "Ada");
    passes(&[f], &renamed);
}

/// A step the server no longer asks is named as such, and a URL carrying
/// a fresh elicitation id and UUID replays green the first time.
#[test]
fn a_skipped_step_is_named_and_a_fresh_url_id_passes() {
    let dir = tempfile::tempdir().unwrap();
    let steps = dir.path().join("steps.cassette.json");
    record(
        &steps,
        &[
            "--tool", "steps", "-a", "name=Ada", "-a", "go=true", "-a", "accept",
        ],
        &fixture(false),
        &[],
    );
    let run = test(&[steps.to_str().unwrap()], &[("CASSETTE_FORM", "skip")])
        .status(1)
        .run();
    assert!(
        run.stderr().contains(
            "elicitation 2 (form \"Go ahead?\") is no longer asked: the server asked elicitation 3 next"
        ),
        "{}",
        run.stderr()
    );
    let link = dir.path().join("link.cassette.json");
    let fresh = [("CASSETTE_FORM", "fresh")];
    record(
        &link,
        &["--tool", "link", "-a", "accept"],
        &fixture(false),
        &fresh,
    );
    passes(&[link.to_str().unwrap()], &fresh);
}

/// Reports CI can act on: a failure's message is the change itself; a
/// server that cannot be reached or breaks the session is an `<error>`,
/// not a mismatch; its traceback goes to `<system-err>`, never into the
/// failure text (TAP and the human report alike).
#[test]
fn reports_carry_the_change_errors_and_keep_tracebacks_apart() {
    let dir = tempfile::tempdir().unwrap();
    let changed = dir.path().join("changed.cassette.json");
    record(&changed, PROFILE, &fixture(false), &[]);
    let crash = dir.path().join("crash.cassette.json");
    let script = "import sys; sys.stderr.write('Traceback (most recent call last):\\n  File x\\nValueError: boom\\n'); sys.exit(1)";
    let c = json!({"elicit": "cassette/1", "server": {"command": ["python3", "-c", script]},
        "tool": "profile", "elicitations": []});
    std::fs::write(&crash, c.to_string()).unwrap();
    let files = [changed.to_str().unwrap(), crash.to_str().unwrap()];
    let bound = [("CASSETTE_FORM", "bound")];
    let run = test(&[&["--format", "junit"][..], &files].concat(), &bound)
        .status(1)
        .stderr_unchecked("the report on stdout is what this checks; the lines for a person are checked by the plain run")
        .run();
    let doc = roxmltree::Document::parse(run.stdout()).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    let message = failure.attribute("message").unwrap();
    assert!(
        message.contains("field age: maximum changed from 150 to 120"),
        "{message}"
    );
    let error = doc.descendants().find(|n| n.has_tag_name("error")).unwrap();
    assert_eq!(error.attribute("type"), Some("not-run"));
    assert!(
        !error.text().unwrap_or("").contains("Traceback"),
        "{}",
        run.stdout()
    );
    let system_err = doc
        .descendants()
        .find(|n| n.has_tag_name("system-err"))
        .expect("the server's stderr in <system-err>");
    assert!(system_err.text().unwrap().contains("ValueError: boom"));
    let tap = test(&[&["--format", "tap"][..], &files].concat(), &bound)
        .status(1)
        .stderr_unchecked("the report on stdout is what this checks; the lines for a person are checked by the plain run")
        .run();
    let (diff, stderr) = tap.stdout().split_once("server_stderr").unwrap();
    assert!(!diff.contains("Traceback"), "{}", tap.stdout());
    assert!(stderr.contains("ValueError: boom"), "{}", tap.stdout());
    let human = test(&files, &bound).status(1).run();
    assert!(human.stderr().contains("ERROR   "), "{}", human.stderr());
    assert!(
        human.stderr().contains("server: ValueError: boom"),
        "{}",
        human.stderr()
    );
}

/// A misspelt action names the key, the value and the nearest word.
#[test]
fn a_misspelt_action_names_the_nearest_word() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typo.cassette.json");
    let c = json!({"elicit": "cassette/1", "server": {"command": ["x"]}, "tool": "t",
        "elicitations": [{"request": {"message": "m"}, "answer": "decilne"}]});
    std::fs::write(&file, c.to_string()).unwrap();
    let run = test(&[file.to_str().unwrap()], &[]).status(2).run();
    assert!(
        run.stderr().contains(
            "at /elicitations/0/answer: answer \"decilne\" is not one of accept, decline, cancel (nearest: decline)"
        ),
        "{}",
        run.stderr()
    );
    assert!(!run.stderr().contains("oneOf"), "{}", run.stderr());
}

/// A misspelt word inside an answer object or an answer rule's `match`
/// names the key and the nearest word, not the schema's `oneOf`.
#[test]
fn a_misspelt_action_or_match_key_in_an_object_names_the_nearest_word() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("typo.cassette.json");
    let c = json!({"elicit": "cassette/1", "server": {"command": ["x"]}, "tool": "t",
        "elicitations": [{"request": {"message": "m"}, "answer": {"action": "acept"}}]});
    std::fs::write(&cassette, c.to_string()).unwrap();
    test(&[cassette.to_str().unwrap()], &[]).status(2).run()
        .stderr_has("at /elicitations/0/answer: key \"action\": \"acept\" is not one of accept, decline, cancel (nearest: accept)")
        .stderr_lacks("oneOf");
    let form = r#"{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}"#;
    for (rule, says) in [
        (
            json!({"answer": {"action": "declin"}}),
            "at /rules/0/answer: key \"action\": \"declin\" is not one of accept, decline, cancel (nearest: decline)",
        ),
        (
            json!({"match": {"tol": "book"}, "answer": "accept"}),
            "at /rules/0/match: key \"tol\" is not one of server, tool, mode, message, fields, host (nearest: tool)",
        ),
        (
            json!({"match": {}, "anwser": "accept"}),
            "at /rules/0: key \"anwser\" is not one of match, answer (nearest: answer)",
        ),
    ] {
        let rules = dir.path().join("answers.json");
        std::fs::write(&rules, json!({"elicit": "answers/1", "rules": [rule]}).to_string()).unwrap();
        Test::new()
            .args(["--no-input", "--answers", rules.to_str().unwrap()])
            .stdin(form)
            .status(2).run()
            .stdout_is("")
            .stderr_has(says)
            .stderr_lacks("oneOf");
    }
}

/// tests/servers/fastmcp_seats.py (FastMCP), with the pinned venv.
fn fastmcp_seats() -> Vec<String> {
    installed();
    vec![
        root().join(".deps/venv/bin/python").display().to_string(),
        root()
            .join("tests/servers/fastmcp_seats.py")
            .display()
            .to_string(),
    ]
}

/// A bound tightened (`le=5` to `le=2`): `--update -a seats=2` replaces
/// the recorded answer the server now refuses and says so, keeping the
/// hand edits; with nothing to replace it, the refusal lists one problem
/// a line.
#[test]
fn update_with_answers_replaces_what_the_server_now_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seats.cassette.json");
    record(
        &file,
        &["--tool", "reserve", "-a", "seats=4"],
        &fastmcp_seats(),
        &[],
    );
    let mut c = read(&file);
    c["x-owner"] = json!("booking team");
    std::fs::write(&file, c.to_string()).unwrap();
    let f = file.to_str().unwrap();
    test(&["--update", "-a", "seats=2", f], &[("SEATS_MAX", "2")]).run()
        .stderr_has("elicitation 1: field seats: the server now refuses the recorded answer (4 is greater than the maximum of 2); replaced by -a seats=2");
    let c = read(&file);
    assert_eq!(c["elicitations"][0]["answer"]["content"]["seats"], 2);
    assert_eq!(c["x-owner"], "booking team");
    passes(&[f], &[("SEATS_MAX", "2")]);
    // The same from an answers file's rule.
    let rules = dir.path().join("rules.json");
    let rule = json!({"elicit": "answers/1", "rules": [{"match": {"fields": ["seats"]}, "answer": {"seats": 1}}]});
    std::fs::write(&rules, rule.to_string()).unwrap();
    test(&["--update", "--answers", rules.to_str().unwrap(), f], &[("SEATS_MAX", "1")]).run()
        .stderr_has("elicitation 1: field seats: the server now refuses the recorded answer (2 is greater than the maximum of 1); replaced by --answers");
    assert_eq!(
        read(&file)["elicitations"][0]["answer"]["content"]["seats"],
        1
    );
    test(&["--update", f], &[("SEATS_MAX", "0")]).status(1).run()
        .stderr_has("the server refuses the recorded answer; give new values with `elicit test --update -a NAME=VALUE`")
        .stderr_has("\n          field seats: 1 is greater than the maximum of 0\n");
}

/// A failing test shows the exception line of the server's boxed (rich)
/// traceback, not the box's rows: when the server broke off, and when it
/// caught its exception and returned an error result.
#[test]
fn a_failing_test_shows_the_servers_exception_line_not_its_box() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seats.cassette.json");
    record(
        &file,
        &["--tool", "reserve", "-a", "seats=2"],
        &fastmcp_seats(),
        &[],
    );
    let f = file.to_str().unwrap();
    test(&[f], &[("SEATS_LOCKED", "1")])
        .status(1)
        .run()
        .stderr_has("server: ValueError: the ledger is locked for account 7\n")
        .stderr_lacks("│")
        .stderr_lacks("╰");
    test(&[f], &[("SEATS_MAX", "1")]).status(1).run()
        .stderr_has("server: MCPError: elicit could not resolve the elicitation: the replay stopped: the server asked something the cassette did not record\n")
        .stderr_lacks("│")
        .stderr_lacks("╰");
}

/// On a terminal, `elicit test` says what is running and for how long
/// (on stderr, cleared before each result); piped, it never does, and the
/// `--format` report on stdout never carries it.
#[test]
fn a_terminal_sees_what_is_running_a_pipe_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cassette.json");
    record(&file, PROFILE, &fixture(false), &[]);
    let f = file.to_str().unwrap();
    let mut p = Test::new().stdin("{}").args(["test", f]).pty();
    p.expect("running p.cassette.json (");
    let done = p.finish();
    let screen = done.visible();
    assert!(screen.contains("ok      "), "{screen}");
    assert!(
        !screen.contains("running"),
        "the status line is cleared: {screen}"
    );
    let piped = test(&["--format", "json", f], &[]).run();
    assert!(!piped.stderr().contains("running") && !piped.stdout().contains("running"));
}

/// Whether something accepts connections on 127.0.0.1:`port`, looked at
/// until `want` holds or 10 s pass.
fn accepting_becomes(port: u16, want: bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = TcpStream::connect(("127.0.0.1", port)).is_ok();
        if now == want || Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `elicit test --start-server CMD` starts the HTTP cassettes' server
/// itself (on a free port given as `{port}`, or on the cassette's own),
/// waits until it accepts, replays, and ends it after: CI needs no second
/// step.
#[test]
fn test_starts_the_server_of_an_http_cassette_and_ends_it() {
    installed();
    let dir = tempfile::tempdir().unwrap();
    let python = root().join(".deps/venv/bin/python");
    let script = root().join("tests/servers/py_http_server.py");
    let port = free_port();
    let file = dir.path().join("http.cassette.json");
    {
        let mut cmd = Command::new(&python);
        cmd.arg(&script).arg(port.to_string());
        let _server = listen(cmd, port);
        let url = format!("http://127.0.0.1:{port}/mcp");
        record_profile_at(&url, &file, &[]);
    }
    assert!(
        !accepting_becomes(port, false),
        "the recording's server is still up"
    );
    let command = |port: &str| {
        format!(
            "{} {} {port}",
            crate::common::sh_quote(python.to_str().unwrap()),
            crate::common::sh_quote(script.to_str().unwrap())
        )
    };
    // On a free port: the cassette's URL is replayed there.
    let run = test(
        &["--start-server", &command("{port}"), file.to_str().unwrap()],
        &[],
    )
    .run();
    assert!(run.stderr().contains("1 passed"), "{}", run.stderr());
    let started: u16 = run
        .stderr()
        .split("(port ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port named: {}", run.stderr()));
    assert!(
        !accepting_becomes(started, false),
        "the started server outlived the run"
    );
    // On the cassette's own port.
    test(
        &[
            "--start-server",
            &command(&port.to_string()),
            file.to_str().unwrap(),
        ],
        &[],
    )
    .run()
    .stderr_has(&format!("(port {port})"));
    assert!(
        !accepting_becomes(port, false),
        "the started server outlived the run"
    );
}

/// A server that never listens, or exits first, fails the run within the
/// bound, with its last words, and is ended.
#[test]
fn a_started_server_that_never_listens_fails_the_run_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("http.cassette.json");
    let c = json!({"elicit": "cassette/1", "server": {"url": "http://127.0.0.1:9/mcp"},
        "tool": "t", "elicitations": []});
    std::fs::write(&file, c.to_string()).unwrap();
    let f = file.to_str().unwrap();
    let exits =
        "python3 -c 'import sys; print(\"no port for me\", file=sys.stderr); sys.exit(4)' {port}";
    let began = Instant::now();
    let run = test(&["--start-server", exits, f], &[]).status(2).run();
    assert!(
        run.stderr().contains("exited (status 4)"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().contains("no port for me"), "{}", run.stderr());
    assert!(began.elapsed() < Duration::from_secs(20));
    // Never listens: the bound ends the wait, and the server.
    let pidfile = dir.path().join("pid");
    let silent = format!(
        "sh -c 'echo $$ > {}; exec sleep 60' {{port}}",
        pidfile.display()
    );
    let began = Instant::now();
    let run = test(
        &["--start-server", &silent, "--start-timeout", "1s", f],
        &[],
    )
    .status(2)
    .run();
    assert!(
        run.stderr().contains("did not accept connections"),
        "{}",
        run.stderr()
    );
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the started server is still running: {stat}"
    );
}

/// A listener that prints a JSON line when it listens and one for every
/// connection it accepts, with what arrived on it (a second local user's).
const PORT_THIEF: &str = r#"
import json, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print(json.dumps({"listening": True}), flush=True)
while True:
    c, _ = s.accept()
    print(json.dumps({"accepted": True}), flush=True)
    c.settimeout(1)
    data = b""
    try:
        while len(data) < 65536:
            d = c.recv(4096)
            if not d:
                break
            data += d
    except OSError:
        pass
    print(json.dumps({"received": data.decode("latin-1")}), flush=True)
    c.close()
"#;

/// Another local user who listens on an HTTP cassette's port before the
/// server `--start-server` starts gets nothing from elicit: not a
/// connection, let alone the `initialize` with its `-H Authorization`; the
/// run fails saying who listens there (#42 item 2).
#[test]
fn a_port_another_user_listens_on_first_gets_nothing_and_fails_the_run() {
    use std::io::BufRead;
    let port = crate::common::page::free_port();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("http.cassette.json");
    let c = json!({"elicit": "cassette/1",
        "server": {"url": format!("http://127.0.0.1:{port}/mcp")},
        "tool": "t", "elicitations": []});
    std::fs::write(&file, c.to_string()).unwrap();
    let Some(mut thief) = crate::common::page::as_other_user(
        "/usr/bin/python3",
        &["-c", PORT_THIEF, &port.to_string()],
    ) else {
        return;
    };
    let mut thief = thief.spawn().expect("run the listener as nobody");
    let out = thief.stdout.take().unwrap();
    let (tx, said) = std::sync::mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&line).unwrap_or(json!({ "raw": line })));
        }
    });
    let first = said.recv_timeout(Duration::from_secs(30));
    assert_eq!(
        first.ok(),
        Some(json!({"listening": true})),
        "the listener did not start"
    );
    // A server that would listen on the port if it could.
    let run = test(
        &[
            "--start-server",
            "sleep 30",
            "-H",
            "Authorization: Bearer the-secret-token",
            file.to_str().unwrap(),
        ],
        &[],
    )
    .status(2)
    .run();
    let _ = thief.kill();
    let _ = thief.wait();
    reader.join().unwrap();
    let heard: Vec<Value> = said.try_iter().collect();
    assert!(
        heard.is_empty(),
        "the other user's listener heard from elicit: {heard:?}"
    );
    assert!(
        run.stderr().contains(&format!(
            "another process (uid 65534) listens on 127.0.0.1:{port}, not the server --start-server started"
        )),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().is_empty(), "{}", run.stdout());
}

/// `call --record` of a call the server refuses with a JSON-RPC error: the
/// call still fails, the refusal is recorded as the cassette's `error`, and
/// `elicit test` passes while the server refuses it with the same code (and
/// fails when the recorded code is another), in both lifecycles.
#[test]
fn a_refused_call_is_recorded_as_its_error_and_replayed() {
    let server = [
        "python3".to_string(),
        root()
            .join("tests/servers/two_era_server.py")
            .display()
            .to_string(),
    ];
    for protocol in ["2025-11-25", "2026-07-28"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("refused.cassette.json");
        let mut args = vec![
            "call",
            "--no-input",
            "--protocol",
            protocol,
            "--server-log",
            "/dev/null",
            "--record",
            file.to_str().unwrap(),
            "--tool",
            "bad_params",
            "--",
        ];
        args.extend(server.iter().map(String::as_str));
        let run = Test::new().args(&args).status(1).run();
        assert_eq!(run.stdout(), "", "{protocol}");
        assert!(
            run.stderr().contains("-32602"),
            "{protocol}: {}",
            run.stderr()
        );
        assert!(
            run.stderr().contains("the refusal is recorded in"),
            "{protocol}: {}",
            run.stderr()
        );
        let cassette: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(cassette["error"]["code"], -32602, "{cassette}");
        assert!(cassette.get("result").is_none(), "{cassette}");
        assert_eq!(cassette["protocol"], protocol, "{cassette}");

        passes(&[file.to_str().unwrap()], &[]);
        // Another code recorded: the server's refusal no longer matches.
        let mut other = cassette.clone();
        other["error"]["code"] = json!(-32603);
        std::fs::write(&file, other.to_string()).unwrap();
        test(&[file.to_str().unwrap()], &[])
            .status(1)
            .run()
            .stderr_has("the server refused the call with");
    }
}
