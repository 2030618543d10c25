//! Attacks on the browser page from this machine (issue #30, items 1-4):
//! another local user who takes the page's port over or reads the page's
//! address from a browser's command line, and any local process that holds
//! connections open or sends an endless request head. The second user is
//! `nobody` (tests/servers/page_attacker.py through `setpriv`) when the
//! tests run as root; without root those tests say they are skipped.
//! Everything is on 127.0.0.1.

use crate::common::page::{
    as_other_user, http_within, open_page, page_port, readable_by_other_user, Browser, NoTerminal,
    OtherUserCopy, LIMIT,
};

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const PWNED: &str = "PWNED-BY-OTHER-USER";

/// A one-field form, as a document for plain resolution or `--lines`.
fn form(message: &str) -> Value {
    json!({"message": message, "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string", "title": "Name"}
    }}})
}

fn attacker_script() -> OtherUserCopy {
    readable_by_other_user("tests/servers/page_attacker.py")
}

/// The attacker as another user, its JSON lines arriving on a channel.
struct Attacker {
    child: Child,
    said: mpsc::Receiver<Value>,
    /// What it runs, kept until it has ended.
    _script: OtherUserCopy,
}

impl Attacker {
    /// `None` (the test is skipped, and says so) when not root.
    fn start(args: &[&str]) -> Option<Attacker> {
        let script = attacker_script();
        let path = script.path.display().to_string();
        let mut all = vec![path.as_str()];
        all.extend_from_slice(args);
        let mut child = as_other_user("/usr/bin/python3", &all)?
            .spawn()
            .expect("run the attacker as nobody");
        let out = child.stdout.take().unwrap();
        let (tx, said) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line).unwrap_or(json!({ "raw": line }));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Some(Attacker {
            child,
            said,
            _script: script,
        })
    }

    /// Everything it said, once it has ended (at most `LIMIT`).
    fn finish(mut self) -> Vec<Value> {
        let status = crate::common::wait_at_most(&mut self.child, LIMIT);
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        assert!(status.success(), "the attacker failed: {err}");
        self.said.try_iter().collect()
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What elicit printed for its next answer, parsed.
fn next_answer(p: &NoTerminal) -> Value {
    let out = p
        .lines
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("elicit gave no answer; stderr:\n{}", p.stderr()));
    serde_json::from_str(&out).unwrap()
}

fn answer_in_the_tab(b: &Browser, name: &str) {
    b.type_into("[name=name]", name);
    b.click("button[name=action][value=accept]");
}

// ---------------------------------------------------------------------------
// 1. Another local user takes over the page.

/// Between two elicitations nothing waits, and a tab stays open on the
/// page. Another user tries to bind the page's port then (to read the
/// tab's requests, feed it a form of its own and answer the next
/// elicitation with what it learns): the port stays elicit's, the
/// attacker gets nothing, and the open tab shows the next elicitation by
/// itself and answers it.
#[test]
fn another_user_cannot_take_the_port_of_an_open_page_between_elicitations() {
    let b = Browser::start();
    let mut p = NoTerminal::spawn(&["--ui", "browser", "--no-open", "--lines"], None);
    p.send(&form("First?"));
    let address = p.page_address();
    let port = page_port(&address).to_string();
    b.goto(&address);
    answer_in_the_tab(&b, "one");
    assert_eq!(
        next_answer(&p),
        json!({"action": "accept", "content": {"name": "one"}})
    );
    // The tab, open on the page, now waits for the next elicitation.
    b.wait_for(
        "the page to show nothing waiting",
        "return document.querySelectorAll('section.elicitation').length === 0",
    );

    let Some(attacker) = Attacker::start(&["squat", &port, "3"]) else {
        return;
    };
    let said = attacker.finish();
    assert_eq!(
        said.first().map(|v| v["bound"].clone()),
        Some(json!(false)),
        "another user bound the page's port while elicit runs: {:?}",
        &said[..said.len().min(3)]
    );
    assert!(
        !said.iter().any(|v| v.get("request").is_some()),
        "the tab's requests reached another user: {:?}",
        &said[..said.len().min(3)]
    );

    p.send(&form("Second?"));
    b.wait_for(
        "the next elicitation to appear in the open tab by itself",
        "return document.querySelectorAll('section.elicitation').length === 1",
    );
    assert!(!b.body_text().contains(PWNED));
    answer_in_the_tab(&b, "two");
    assert_eq!(
        next_answer(&p),
        json!({"action": "accept", "content": {"name": "two"}})
    );
}

/// elicit has exited and its port is free: another user binds it at once
/// and answers whatever the tab asks as elicit would, with a form of its
/// own. A one-shot elicit's tab says the answer was sent and elicit has
/// ended, and asks nothing more; should it still have asked the new owner,
/// it cannot verify the answer (no proof keyed with the page's secret), so
/// it shows none of it.
#[test]
fn after_elicit_exits_the_open_tab_shows_nothing_from_whoever_takes_its_port() {
    let b = Browser::start();
    let p = NoTerminal::spawn(
        &["--ui", "browser", "--no-open"],
        Some(&form("Only one?").to_string()),
    );
    let address = p.page_address();
    let port = page_port(&address).to_string();
    b.goto(&address);
    // Waiting for the port to be free before the person answers.
    let Some(attacker) = Attacker::start(&["squat", &port, "12"]) else {
        return;
    };
    answer_in_the_tab(&b, "real");
    assert_eq!(
        next_answer(&p),
        json!({"action": "accept", "content": {"name": "real"}})
    );
    assert!(p.finish().success());
    let deadline = Instant::now() + LIMIT;
    let mut said = Vec::new();
    while !said.iter().any(|v: &Value| v["bound"] == json!(true)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match attacker.said.recv_timeout(left) {
            Ok(v) => said.push(v),
            Err(_) => panic!("the port's new owner never took the port: {said:?}"),
        }
    }
    b.wait_for(
        "the tab to say the answer was sent and elicit has ended",
        "return document.body.hasAttribute('data-finished')",
    );
    crate::common::quiet_for(
        Duration::from_secs(3),
        "the port's new owner answers whatever the tab still asks in this window",
    );
    assert!(
        !b.body_text().contains(PWNED),
        "the tab shows the other user's form:\n{}",
        b.body_text()
    );
    assert_eq!(b.count("form, section[data-id='99']"), 0);
}

/// elicit killed while a form is on the page: the tab disables the form at
/// once, so nothing typed there can be sent to whatever takes the port next.
#[test]
fn when_elicit_stops_answering_nothing_can_be_sent_from_the_tab() {
    let b = Browser::start();
    let mut p = NoTerminal::spawn(
        &["--ui", "browser", "--no-open"],
        Some(&form("Killed?").to_string()),
    );
    b.goto(&p.page_address());
    b.type_into("[name=name]", "typed before the end");
    assert_eq!(
        b.exec(
            "return document.querySelector('button[name=action]').disabled",
            json!([])
        ),
        json!(false)
    );
    p.child.kill().unwrap();
    p.child.wait().unwrap();
    b.wait_for(
        "the form to be disabled",
        "return [...document.querySelectorAll('#pending button, #pending input')].every(e => e.disabled)",
    );
    assert!(
        b.text("#status").contains("not answering"),
        "{}",
        b.body_text()
    );
}

/// The proof the page's script checks: only a request with the page's
/// cookie gets one, and it is the HMAC of the request's challenge under the
/// key in the page (so only elicit, which made the page, can give it).
#[test]
fn the_page_proves_itself_only_to_its_own_session() {
    let p = NoTerminal::spawn(
        &["--ui", "browser", "--no-open"],
        Some(&form("Proof?").to_string()),
    );
    let page = open_page(&p.page_address());
    let (status, html) = page.request("GET", "", "", "");
    assert_eq!(status, 200);
    let key = html
        .split("data-key=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the page carries its proof key");
    let challenge = "0123456789abcdef0123456789abcdef";
    let proof_in = |response: &str| {
        response
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix("X-Elicit-Proof: "))
            .map(str::to_string)
    };
    let (status, with) = page.request(
        "GET",
        "events?since=0",
        &format!("X-Elicit-Challenge: {challenge}\r\n"),
        "",
    );
    assert_eq!(status, 200, "{with}");
    let tag = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.as_bytes()),
        challenge.as_bytes(),
    );
    let expected: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(proof_in(&with), Some(expected));
    // The same request without the cookie: refused, and nothing proved.
    let port = page.port;
    let (status, without) = http_within(
        port,
        &format!(
            "GET {}events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Elicit-Challenge: {challenge}",
            page.path
        ),
        "",
        LIMIT,
    );
    assert_eq!(status, 403);
    assert_eq!(proof_in(&without), None, "{without}");
}

// ---------------------------------------------------------------------------
// 2. The page's address in a browser's command line.

/// The browser elicit opens keeps the page's address in its argv, which
/// every local user can read. Another user reads it, loads it as a browser
/// would and answers with the page's CSRF token: nothing is answered, the
/// address having been spent by the browser it was given to.
#[test]
fn a_page_address_read_from_the_browsers_command_line_answers_nothing() {
    let b = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("opened.txt");
    let stub = dir.path().join("browser.sh");
    // A "browser" that stays up with the address in its argv; it hands the
    // address to the real (headless) browser by writing it down.
    crate::common::write_script(
        &stub,
        &format!(
            "#!/bin/sh\nprintf '%s %s\\n' \"$$\" \"$1\" > {}\nsleep 60\n",
            crate::common::sh_quote(&record.display().to_string())
        ),
    );
    let p = NoTerminal::spawn(
        &["--ui", "browser", "--browser", &stub.display().to_string()],
        Some(&form("Who?").to_string()),
    );
    let deadline = Instant::now() + LIMIT;
    let opened = loop {
        let text = std::fs::read_to_string(&record).unwrap_or_default();
        if text.ends_with('\n') {
            break text;
        }
        assert!(Instant::now() < deadline, "elicit opened no browser");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (pid, url) = opened.trim().split_once(' ').unwrap();
    let pid: i32 = pid.parse().unwrap();
    struct Kill(i32);
    impl Drop for Kill {
        fn drop(&mut self) {
            // SAFETY: kill has no memory preconditions; the pid is the stub's.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
    let _stub = Kill(pid);
    // The person's browser loads the page.
    b.goto(url);
    b.find("[name=name]");

    let Some(attacker) = Attacker::start(&["argv", &pid.to_string()]) else {
        return;
    };
    let said = attacker.finish();
    assert_eq!(said.first().map(|v| v["url"].clone()), Some(json!(url)));
    assert!(
        !said.iter().any(|v| v.get("answered").is_some()),
        "another user got as far as answering: {said:?}"
    );
    assert!(
        said.iter().all(|v| v["status"] != json!(200)),
        "another user loaded the page: {said:?}"
    );
    assert!(
        p.lines.recv_timeout(Duration::from_millis(300)).is_err(),
        "elicit answered before the person did"
    );
    // And elicit says the address was used twice.
    let deadline = Instant::now() + LIMIT;
    while !p
        .stderr()
        .contains("one-time address was opened a second time")
    {
        assert!(
            Instant::now() < deadline,
            "elicit said nothing of the second use:\n{}",
            p.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    answer_in_the_tab(&b, "the person");
    assert_eq!(
        next_answer(&p),
        json!({"action": "accept", "content": {"name": "the person"}})
    );
}

// ---------------------------------------------------------------------------
// 3. Idle connections. 4. An endless head.

/// `Kb` from `/proc/PID/status`'s line `name:`.
fn status_kb(pid: u32, name: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
}

/// Many more idle connections than elicit has file descriptors (its soft
/// limit set to 1024, a common default): the page still answers, during
/// the flood and after it.
#[test]
fn idle_connections_never_stop_the_page() {
    let p = NoTerminal::spawn_limited(
        &["--ui", "browser", "--no-open"],
        Some(&form("Still there?").to_string()),
        Some(1024),
    );
    let page = open_page(&p.page_address());
    let port = page.port;
    // (A listener that stopped accepting leaves connections waiting in
    // the kernel's queue: the flood stops at the first that cannot connect.)
    let to = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let flood: Vec<TcpStream> = (0..1500)
        .map_while(|_| TcpStream::connect_timeout(&to, Duration::from_secs(2)).ok())
        .collect();
    let quick = Duration::from_secs(10);
    let (status, _) = page.request_within("GET", "", "", "", quick);
    assert_eq!(
        status,
        200,
        "the page stopped answering under the flood ({} connections made)",
        flood.len()
    );
    assert_eq!(flood.len(), 1500, "elicit stopped taking connections");
    drop(flood);
    let (status, html) = page.request_within("GET", "", "", "", quick);
    assert_eq!(status, 200, "the page did not come back after the flood");
    // And the elicitation is still answered from the page.
    let csrf = crate::common::page::csrf_token(&html);
    let (status, _) = page.request(
        "POST",
        "answer/1",
        &format!("Origin: http://127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"),
        &format!("csrf={csrf}&action=cancel"),
    );
    assert_eq!(status, 200);
    assert_eq!(next_answer(&p), json!({"action": "cancel"}));
}

/// Sends `prefix` then `filler` over and over, up to `total` bytes, until
/// elicit stops reading (it closes the connection).
fn endless(port: u16, prefix: &[u8], filler: &[u8], total: usize) -> usize {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_write_timeout(Some(LIMIT)).unwrap();
    let chunk: Vec<u8> = filler.iter().copied().cycle().take(1 << 20).collect();
    let mut sent = 0;
    if s.write_all(prefix).is_err() {
        return 0;
    }
    while sent < total {
        match s.write(&chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => sent += n,
        }
    }
    sent
}

/// An endless header line, endless header lines and an endless request
/// line, each up to 300 MiB with no token, and each from 100 connections
/// at once: elicit's peak memory stays within 64 MiB of what it was
/// before, and the page still answers.
#[test]
fn an_endless_request_head_does_not_grow_elicit() {
    let p = NoTerminal::spawn(
        &["--ui", "browser", "--no-open"],
        Some(&form("Memory?").to_string()),
    );
    let page = open_page(&p.page_address());
    let port = page.port;
    let (status, _) = page.request("GET", "", "", "");
    assert_eq!(status, 200);
    let idle = status_kb(p.pid(), "VmHWM:");
    const TOTAL: usize = 300 << 20;
    for (what, prefix, filler) in [
        (
            "one endless header line",
            &b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Endless: "[..],
            &b"a"[..],
        ),
        (
            "endless header lines",
            &b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"[..],
            &b"X-A: b\r\n"[..],
        ),
        ("an endless request line", &b"GET /"[..], &b"a"[..]),
    ] {
        // Each alone (up to 300 MiB), then from 100 connections at once
        // (up to 3 MiB each).
        let sent = endless(port, prefix, filler, TOTAL)
            + std::thread::scope(|scope| {
                let all: Vec<_> = (0..100)
                    .map(|_| scope.spawn(|| endless(port, prefix, filler, 3 << 20)))
                    .collect();
                all.into_iter().map(|t| t.join().unwrap()).sum::<usize>()
            });
        let peak = status_kb(p.pid(), "VmHWM:");
        eprintln!("{what}: VmHWM {idle} kB idle, {peak} kB after {sent} bytes");
        assert!(
            peak.saturating_sub(idle) <= 64 * 1024,
            "{what}: elicit's peak memory grew from {idle} kB to {peak} kB ({sent} bytes sent)"
        );
        let (status, _) = http_within(
            port,
            &format!(
                "GET {} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {}",
                page.path, page.cookie
            ),
            "",
            Duration::from_secs(10),
        );
        assert_eq!(status, 200, "{what}: the page no longer answers");
    }
}
