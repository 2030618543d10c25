//! `elicit call --park` against real servers, with no terminal: the call
//! parks at its first question (exit 5, one JSON object), `elicit pending`
//! lists it, `elicit respond` answers it (a wrong answer is refused and
//! the call stays parked; a right one gets the tool's result), a tool that
//! asks again parks again, an expired call ends whole, another local user
//! can neither list nor answer it; over stdio and Streamable HTTP.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::common::{http_server, installed, server_everything, Run, Test};

/// A private runtime folder per test (the parked calls of one test are not
/// another's), readable by others at its top so that only elicit's own
/// folder inside stands in another user's way.
struct Place {
    root: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        Place { root }
    }

    fn test(&self) -> Test {
        Test::new()
            .no_terminal()
            .env("XDG_RUNTIME_DIR", self.root.path())
            .env_remove("ELICIT_PARK")
            .stderr_unchecked(
                "the parked servers' own logs come through (FastMCP's dated banner); a test reads what it needs",
            )
    }

    fn folder(&self) -> PathBuf {
        self.root.path().join("elicit")
    }

    /// The files left in elicit's folder.
    fn files(&self) -> Vec<String> {
        std::fs::read_dir(self.folder())
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn pending(&self) -> Vec<Value> {
        let run = self.test().args(["pending", "--json"]).run();
        run.json().as_array().unwrap().clone()
    }

    fn respond(&self, id: &str, answers: &[&str]) -> Test {
        let mut args = vec!["respond".to_string(), id.to_string()];
        for a in answers {
            args.push("-a".into());
            args.push(a.to_string());
        }
        self.test().args(args)
    }
}

fn python() -> String {
    installed();
    crate::common::page::root()
        .join(".deps/venv/bin/python")
        .display()
        .to_string()
}

fn server(script: &str) -> Vec<String> {
    let path = crate::common::page::root()
        .join("tests/servers")
        .join(script);
    vec![python(), path.display().to_string()]
}

/// The parked object a `call --park` run (expected to exit 5) printed.
fn parked(run: &Run) -> Value {
    let object = run.json();
    assert!(object["parked"].is_string(), "{object}");
    object
}

/// The tool's result text (FastMCP: one text block of compact JSON).
fn tool_text(run: &Run) -> Value {
    let result = run.json();
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn fastmcp_parks_refuses_a_wrong_answer_and_gets_the_right_one() {
    let place = Place::new();
    let log = place.root.path().join("call.jsonl");
    let run = place
        .test()
        .args(["call", "--park", "--tool", "form_ctx", "--log"])
        .arg(&log)
        .server(&server("fastmcp_server.py"))
        .status(5)
        .run();
    let ended = SystemTime::now();
    let object = parked(&run);
    let id = object["parked"].as_str().unwrap().to_string();
    assert_eq!(object["tool"], "form_ctx");
    assert_eq!(object["server"], "fastmcp-elicit-test");
    assert_eq!(object["respond"], format!("elicit respond {id}"));
    assert_eq!(object["elicitation"]["kind"], "input");
    assert_eq!(object["elicitation"]["prompt"], "Tell us about yourself");
    let schema = &object["elicitation"]["data"]["schema"];
    assert_eq!(schema["properties"]["age"]["type"], "integer");
    assert!(humantime::parse_rfc3339(object["expires"].as_str().unwrap()).is_ok());
    // Parked within a second of the question's arrival.
    let asked = question_time(&log);
    let after = ended.duration_since(asked).unwrap_or_default();
    assert!(
        after < Duration::from_secs(1),
        "parked {after:?} after the question"
    );

    let listed = place.pending();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["tool"], "form_ctx");
    assert_eq!(listed[0]["question"], "Tell us about yourself");

    let wrong = place
        .respond(&id, &["name=Ada", "age=old", "color=red"])
        .status(2)
        .run();
    wrong.stderr_has("age");
    assert_eq!(wrong.stdout(), "");
    assert_eq!(
        place.pending().len(),
        1,
        "still parked after a wrong answer"
    );

    let right = place
        .respond(&id, &["name=Ada", "age=36", "color=red"])
        .run();
    assert_eq!(
        tool_text(&right),
        json!({"action": "accept", "content": {"name": "Ada", "age": 36, "color": "red"}})
    );
    assert!(place.pending().is_empty());
    assert_eq!(
        place.files(),
        Vec::<String>::new(),
        "nothing of the call is left"
    );
    place
        .respond(&id, &["accept"])
        .status(6)
        .run()
        .stderr_has("no parked call");
}

/// When the call's log says the server's question arrived.
fn question_time(log: &Path) -> SystemTime {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["dir"] == "recv" && l["message"]["method"] == "elicitation/create")
        .expect("the question is in the log");
    humantime::parse_rfc3339_weak(line["time"].as_str().unwrap()).unwrap()
}

#[test]
fn server_everything_parks_and_the_tool_gets_the_answer() {
    let place = Place::new();
    let run = place
        .test()
        .args(["call", "--park", "--tool", "trigger-elicitation-request"])
        .server(&server_everything())
        .status(5)
        .run();
    let object = parked(&run);
    let id = object["parked"].as_str().unwrap();
    assert_eq!(object["elicitation"]["kind"], "input");
    let right = place.respond(id, &["decline"]).run();
    let result = right.json();
    let text = result["content"].to_string();
    assert!(text.contains("decline"), "the tool got the decline: {text}");
    assert!(place.pending().is_empty());
}

#[test]
fn a_tool_that_asks_three_times_parks_three_times() {
    let place = Place::new();
    let run = place
        .test()
        .args(["call", "--park", "--tool", "book"])
        .server(&server("fastmcp_steps.py"))
        .status(5)
        .run();
    let first = parked(&run);
    let id = first["parked"].as_str().unwrap().to_string();
    assert_eq!(first["elicitation"]["prompt"], "Who is travelling?");
    let second = parked(&place.respond(&id, &["name=Ada", "seats=2"]).status(5).run());
    assert_eq!(second["elicitation"]["prompt"], "Which class?");
    assert_eq!(second["parked"], id.as_str(), "the same call, parked again");
    let third = parked(&place.respond(&id, &["cabin=business"]).status(5).run());
    assert_eq!(third["elicitation"]["prompt"], "Confirm the booking");
    let done = place.respond(&id, &["confirm=true", "note=aisle"]).run();
    let result = tool_text(&done);
    assert_eq!(result["name"], "Ada");
    assert_eq!(result["seats"], 2);
    assert_eq!(result["cabin"], "business");
    assert_eq!(result["confirm"], true);
    assert_eq!(result["note"], "aisle");
}

/// The processes whose environment holds `mark` (the call's, its holder's,
/// its server's: they all inherit it).
fn marked_processes(mark: &str) -> Vec<u32> {
    let needle = format!("ELICIT_PARK_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// Waits up to `limit` for `done`; whether it came.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

#[test]
fn an_expired_call_is_cancelled_and_nothing_of_it_is_left() {
    let place = Place::new();
    let mark = uuid::Uuid::new_v4().to_string();
    let run = place
        .test()
        .env("ELICIT_PARK_TEST_MARK", &mark)
        .args(["call", "--park", "--park-for", "3s", "--tool", "form_ctx"])
        .server(&server("fastmcp_server.py"))
        .status(5)
        .run();
    let id = parked(&run)["parked"].as_str().unwrap().to_string();
    assert!(
        !marked_processes(&mark).is_empty(),
        "the holder and the server run"
    );
    assert!(
        within(Duration::from_secs(20), || marked_processes(&mark)
            .is_empty()),
        "the call's processes still run after its expiry: {:?}",
        marked_processes(&mark)
    );
    place
        .respond(&id, &["accept"])
        .status(6)
        .run()
        .stderr_has("expired");
    assert_eq!(
        place.files(),
        Vec::<String>::new(),
        "nothing of the call is left"
    );
}

#[test]
fn streamable_http_server_parks_and_gets_the_answer() {
    let place = Place::new();
    let http = http_server(&python(), &["tests/servers/fastmcp_server.py"]);
    let run = place
        .test()
        .args(["call", "--park", "--tool", "form_ctx", &http.url()])
        .status(5)
        .run();
    let id = parked(&run)["parked"].as_str().unwrap().to_string();
    assert_eq!(place.pending().len(), 1);
    let right = place
        .respond(&id, &["name=Bo", "age=7", "color=blue"])
        .run();
    assert_eq!(
        tool_text(&right),
        json!({"action": "accept", "content": {"name": "Bo", "age": 7, "color": "blue"}})
    );
}

/// A server behind sign-in (client credentials against an authorization
/// server, a token on every request, the question on the call's event
/// stream): the holder signs in, parks the question, and answers it on the
/// same signed-in session; the secret is in no output.
#[test]
fn a_server_behind_sign_in_parks_and_takes_the_answer_on_its_session() {
    use crate::common::fake_auth::{Config, FakeAuth};
    const SECRET: &str = "PRE-SECRET-VALUE";
    let fake = FakeAuth::start(Config {
        registration: false,
        auth_methods: vec!["client_secret_basic"],
        client: Some(("pre-id", SECRET)),
        grants: vec!["client_credentials"],
        pkce_methods: None,
        initialize_needs_token: true,
        ..Default::default()
    });
    let place = Place::new();
    let data = tempfile::tempdir().unwrap();
    let sign_in = |test: Test| test.env("ELICIT_DATA_DIR", data.path());
    let run = sign_in(place.test())
        .args(["call", "--park", "--protocol", "2025-11-25"])
        .args(["--client-id", "pre-id", "--client-secret", SECRET])
        .args(["--tool", "ask", &fake.url()])
        .status(5)
        .run();
    let object = parked(&run);
    assert_eq!(object["elicitation"]["prompt"], "Your name?", "{object}");
    let id = object["parked"].as_str().unwrap().to_string();
    assert_eq!(place.pending().len(), 1);
    // Anyone may read a command line (`ps`): the holder's holds no secret.
    let holder = holder_pid(&id).expect("the holder runs");
    let command_line = std::fs::read(format!("/proc/{holder}/cmdline")).unwrap();
    assert!(
        !String::from_utf8_lossy(&command_line).contains(SECRET),
        "the secret is on the holder's command line"
    );
    let answered = sign_in(place.test())
        .args(["respond", &id, "-a", "name=Ada"])
        .run();
    assert_eq!(answered.json()["content"][0]["text"], "hello Ada");
    assert_eq!(
        fake.find("/token").len(),
        1,
        "signed in once: {:?}",
        fake.paths()
    );
    assert!(fake.failures().is_empty(), "{:?}", fake.failures());
    for said in [
        &run.stdout(),
        &run.stderr(),
        &answered.stdout(),
        &answered.stderr(),
    ] {
        assert!(!said.contains(SECRET), "the secret was printed: {said}");
    }
}

#[test]
fn another_local_user_can_neither_list_nor_answer_a_parked_call() {
    let place = Place::new();
    let run = place
        .test()
        .args(["call", "--park", "--park-for", "60s", "--tool", "form_ctx"])
        .server(&server("fastmcp_server.py"))
        .status(5)
        .run();
    let id = parked(&run)["parked"].as_str().unwrap().to_string();
    // The binary where the other user can run it.
    let bin = place.root.path().join("elicit-bin");
    std::fs::copy(crate::common::BIN, &bin).unwrap();
    let root = place.root.path().display().to_string();
    let bin = bin.display().to_string();
    let script = format!(
        "XDG_RUNTIME_DIR={root} {bin} pending --json; echo \"pending=$?\"; \
         XDG_RUNTIME_DIR={root} {bin} respond {id} -a decline; echo \"respond=$?\"; \
         cat {root}/elicit/{id}.err; echo \"read=$?\""
    );
    let Some(mut other) = crate::common::page::as_other_user("/bin/sh", &["-c", &script]) else {
        place.respond(&id, &["cancel"]).run();
        return;
    };
    let out = other.output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("pending=1"), "{said}\n{err}");
    assert!(said.contains("respond=1"), "{said}\n{err}");
    assert!(!said.contains("read=0"), "{said}\n{err}");
    assert!(!said.contains(&id), "the other user saw the call: {said}");
    assert!(err.contains("belongs to uid"), "{err}");
    // Still parked, and answerable by its own user.
    assert_eq!(place.pending().len(), 1);
    place
        .respond(&id, &["name=Ada", "age=1", "color=red"])
        .run()
        .stdout_has(r#"\"name\":\"Ada\""#);
}

#[test]
fn a_url_question_parks_with_its_host_and_takes_an_answer_on_stdin() {
    let place = Place::new();
    let run = place
        .test()
        .env("BROWSER", "false")
        .args(["call", "--park", "--tool", "connect_url"])
        .server(&server("fastmcp_server.py"))
        .status(5)
        .run();
    let object = parked(&run);
    let id = object["parked"].as_str().unwrap().to_string();
    assert_eq!(object["elicitation"]["kind"], "authorization");
    assert_eq!(
        object["elicitation"]["url"],
        "https://example.com/connect?session=abc"
    );
    assert_eq!(object["host"], "example.com");
    assert!(object["warnings"].is_array(), "{object}");
    let answered = place
        .test()
        .args(["respond", &id])
        .stdin(r#"{"id":"x","ok":false,"reason":"declined"}"#)
        .run();
    assert_eq!(
        tool_text(&answered),
        json!({"action": "decline", "content": null})
    );
}

#[test]
fn respond_takes_answer_rules() {
    let place = Place::new();
    let rules = place.root.path().join("rules.json");
    std::fs::write(
        &rules,
        r#"{"elicit": "answers/1", "rules": [
            {"match": {"message": "^Tell"}, "answer": {"name": "Rule", "age": "33", "color": "green"}}
        ]}"#,
    )
    .unwrap();
    let run = place
        .test()
        .args(["call", "--park", "--tool", "form_ctx"])
        .server(&server("fastmcp_server.py"))
        .status(5)
        .run();
    let id = parked(&run)["parked"].as_str().unwrap().to_string();
    let answered = place
        .test()
        .args(["respond", &id, "--answers"])
        .arg(&rules)
        .run();
    assert_eq!(
        tool_text(&answered),
        json!({"action": "accept", "content": {"name": "Rule", "age": 33, "color": "green"}})
    );
}

/// `call --park` of `tool` on the server `script`, in `place`: its id.
fn park_one(place: &Place, script: &str, tool: &str) -> String {
    let run = place
        .test()
        .args(["call", "--park", "--tool", tool])
        .server(&server(script))
        .status(5)
        .run();
    parked(&run)["parked"].as_str().unwrap().to_string()
}

/// The page's section that holds the field `field` (ids on the page come
/// in the order the calls' questions arrived, which threads race for).
fn section(field: &str) -> String {
    format!("section.elicitation:has([name={field}])")
}

#[test]
fn pending_on_one_browser_page_answers_two_parked_calls() {
    let place = Place::new();
    let profile = park_one(&place, "fastmcp_server.py", "form_ctx");
    let booking = park_one(&place, "fastmcp_steps.py", "book");
    let b = crate::common::page::Browser::start();
    let mut run = place
        .test()
        .args(["pending", "--ui", "browser", "--json", "--no-open"])
        // Four answers through a browser, each starting a server's next step:
        // on a loaded machine that is more than one run's usual limit.
        .limit(Duration::from_secs(300))
        .spawn();
    let address = page_address(&mut run);
    b.goto(&address);
    let page = b.location();
    b.wait_for(
        "both parked questions on the page",
        "return document.querySelectorAll('section.elicitation').length === 2",
    );
    let who = section("seats");
    b.type_into(&format!("{who} [name=name]"), "Ada");
    b.type_into(&format!("{who} [name=seats]"), "2");
    b.click(&format!("{who} button[name=action][value=accept]"));
    // The answer is posted (the page that comes back no longer asks it)
    // before the page is loaded again: a load at once would cancel the post.
    b.wait_for(
        "the booking's first answer taken",
        "return document.querySelector('[name=seats]') === null",
    );
    // The booking parks again: its next question comes to the same page.
    b.goto(&page);
    b.wait_for(
        "the booking's next question on the page",
        "return document.querySelector(\"section.elicitation select[name=cabin]\") !== null",
    );
    let profile_form = section("age");
    b.type_into(&format!("{profile_form} [name=name]"), "Grace");
    b.type_into(&format!("{profile_form} [name=age]"), "85");
    b.click(&format!(
        "{profile_form} select[name=color] option[value=green]"
    ));
    b.click(&format!("{profile_form} button[name=action][value=accept]"));
    b.wait_for(
        "the profile's answer taken",
        "return document.querySelector('[name=age]') === null",
    );
    b.goto(&page);
    b.wait_for(
        "the cabin question still waiting",
        "return document.querySelector(\"section.elicitation select[name=cabin]\") !== null",
    );
    let cabin = section("cabin");
    b.click(&format!("{cabin} select[name=cabin] option[value=first]"));
    b.click(&format!("{cabin} button[name=action][value=accept]"));
    b.wait_for(
        "the cabin's answer taken",
        "return document.querySelector('select[name=cabin]') === null",
    );
    b.goto(&page);
    b.wait_for(
        "the confirmation question",
        "return document.querySelector(\"section.elicitation [name=note]\") !== null",
    );
    b.click(&format!(
        "{} button[name=action][value=decline]",
        section("note")
    ));

    let ended = run.wait();
    let listed = ended.json();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let of = |id: &str| listed.iter().find(|c| c["id"] == id).unwrap().clone();
    let first = of(&profile);
    assert_eq!(first["state"], "finished", "{first}");
    assert_eq!(first["exit"], 0);
    let text = |c: &Value| -> Value {
        serde_json::from_str(c["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(
        text(&first),
        json!({"action": "accept", "content": {"name": "Grace", "age": 85, "color": "green"}})
    );
    let second = of(&booking);
    assert_eq!(second["state"], "finished", "{second}");
    assert_eq!(second["tool"], "book");
    assert_eq!(text(&second), json!({"step": 3, "action": "decline"}));
    assert!(place.pending().is_empty());
    assert_eq!(
        place.files(),
        Vec::<String>::new(),
        "nothing of the calls is left"
    );
}

/// The page's one-time address, from what `run` says on stderr.
fn page_address(run: &mut crate::common::Running) -> String {
    const SAID: &str = "answer on the page ";
    loop {
        let line = run
            .next_stderr_line(Duration::from_secs(30))
            .expect("the page is announced");
        if let Some(at) = line.find(SAID) {
            return line[at + SAID.len()..]
                .split_whitespace()
                .next()
                .unwrap()
                .to_string();
        }
    }
}

#[test]
fn respond_ui_browser_answers_the_parked_form_on_the_page() {
    let place = Place::new();
    let id = park_one(&place, "fastmcp_server.py", "form_ctx");
    let b = crate::common::page::Browser::start();
    let mut run = place
        .test()
        .env("BROWSER", "true")
        .args(["respond", &id, "--ui", "browser"])
        .spawn();
    b.goto(&page_address(&mut run));
    b.type_into("[name=name]", "Ada");
    b.type_into("[name=age]", "36");
    b.click("select[name=color] option[value=red]");
    b.click("button[name=action][value=accept]");
    let answered = run.wait();
    assert_eq!(
        tool_text(&answered),
        json!({"action": "accept", "content": {"name": "Ada", "age": 36, "color": "red"}})
    );
    assert!(place.pending().is_empty());
}

#[test]
fn respond_ui_browser_stops_waiting_when_the_call_expires() {
    let place = Place::new();
    let run = place
        .test()
        .args(["call", "--park", "--park-for", "3s", "--tool", "form_ctx"])
        .server(&server("fastmcp_server.py"))
        .status(5)
        .run();
    let id = parked(&run)["parked"].as_str().unwrap().to_string();
    // Nobody opens the page: the command ends with the call, not later.
    let unanswered = place
        .test()
        .env("BROWSER", "true")
        .args(["respond", &id, "--ui", "browser"])
        .limit(Duration::from_secs(20))
        .status(6)
        .run();
    unanswered
        .stdout_is("")
        .stderr_has("expired before an answer");
}

/// The peak resident memory of the holder of call `id`, in KiB.
fn holder_peak_kib(id: &str) -> u64 {
    let pid = holder_pid(id).expect("the holder runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn what_a_server_says_on_stderr_while_parked_is_kept_within_a_bound() {
    let place = Place::new();
    let done = place.root.path().join("flood-done");
    const FLOOD: u64 = 48 << 20;
    let run = place
        .test()
        .env("FLOOD_BYTES", FLOOD.to_string())
        .env("FLOOD_DONE", &done)
        .args(["call", "--park", "--tool", "ask"])
        .server(&server("stderr_flood.py"))
        .status(5)
        .run();
    let id = parked(&run)["parked"].as_str().unwrap().to_string();
    assert!(
        within(Duration::from_secs(60), || done.exists()),
        "the server did not finish its flood"
    );
    let on_disk: u64 = std::fs::read_dir(place.folder())
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    let peak = holder_peak_kib(&id);
    eprintln!("parked call's files: {on_disk} bytes; holder peak: {peak} KiB");
    assert!(on_disk < 1 << 20, "the call's files hold {on_disk} bytes");
    assert!(peak < 40 << 10, "the holder peaked at {peak} KiB");
    let answered = place.respond(&id, &["name=Ada"]).run();
    answered.stderr_has("bytes of the call's stderr were left out");
    assert!(
        answered.stderr().len() < 1 << 20,
        "{}",
        answered.stderr().len()
    );
    assert_eq!(
        tool_text(&answered),
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
}

/// The pid of the holder of call `id`.
fn holder_pid(id: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("__park-hold") && c.contains(id)
            })
        })
}

#[test]
fn a_killed_holders_files_are_cleared_by_the_next_respond_and_its_call_is_gone() {
    let place = Place::new();
    let id = park_one(&place, "fastmcp_server.py", "form_ctx");
    let holder = holder_pid(&id).expect("the holder runs");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &holder.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Its command line is gone before its files are closed: wait until
    // the process is gone or a zombie, whose sockets are closed.
    let ended = || {
        std::fs::read_to_string(format!("/proc/{holder}/stat")).map_or(true, |stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'))
        })
    };
    assert!(
        within(Duration::from_secs(10), ended),
        "the holder did not end"
    );
    assert!(
        !place.files().is_empty(),
        "the killed holder left its files"
    );
    // Answering another call clears them away.
    place
        .respond("0123456789ab", &["accept"])
        .status(6)
        .run()
        .stderr_has("no parked call");
    assert_eq!(
        place.files(),
        Vec::<String>::new(),
        "a dead holder's files are left"
    );
    place
        .respond(&id, &["accept"])
        .status(6)
        .run()
        .stderr_has("no parked call");
}

/// Sends `signal` (as `kill` names it) to process `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

#[test]
fn a_stopped_holder_holds_up_neither_pending_nor_respond_for_ever() {
    let place = Place::new();
    let id = park_one(&place, "fastmcp_server.py", "form_ctx");
    let other = park_one(&place, "fastmcp_server.py", "form_ctx");
    let holder = holder_pid(&id).expect("the holder runs");
    signal(holder, "STOP");
    // The other call is still listed; the stopped one is named as left out.
    let listed = place.test().args(["pending", "--json"]).run();
    listed.stderr_has(&format!("parked call {id} is left out"));
    let ids: Vec<Value> = listed
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(other)]);
    // An answer to it is sent into a connection nobody reads: respond gives
    // up after the holder's silence, instead of waiting for ever.
    let started = Instant::now();
    place
        .respond(&id, &["name=Ada", "age=36", "color=red"])
        .status(1)
        .run()
        .stderr_has("stopped answering");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    signal(holder, "CONT");
    signal(holder, "KILL");
    place
        .respond(&other, &["cancel"])
        .run()
        .stdout_has(r#"\"action\":\"cancel\""#);
}

#[test]
fn respond_ui_terminal_answers_the_parked_form_at_the_terminal() {
    let place = Place::new();
    let id = park_one(&place, "fastmcp_server.py", "form_ctx");
    let root = place.root.path().display().to_string();
    let mut p = Test::new()
        .stdin("")
        .env("XDG_RUNTIME_DIR", &root)
        .args(["respond", &id, "--ui", "terminal"])
        .pty();
    p.expect("Tell us about yourself")
        .answer("? Name", "Ada\r")
        .answer("? Age", "36\r")
        .answer("? Color", crate::common::ENTER)
        .expect("Review your answers")
        .answer("Send these answers?", crate::common::ENTER);
    let f = p.finish();
    let result = f.json();
    let echoed: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echoed["action"], "accept");
    assert_eq!(echoed["content"]["name"], "Ada");
    assert_eq!(echoed["content"]["age"], 36);
    assert!(place.pending().is_empty());
}
