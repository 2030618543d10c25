//! The browser page (`--ui browser`, and `auto` with no terminal) driven in
//! a real browser: Debian's headless Chromium through chromedriver's W3C
//! WebDriver (plain HTTP+JSON, with the HTTP client already in the tree).
//! Both come from scripts/install-browser, the MCP servers from
//! scripts/install-test-servers. Nothing here talks to any address but
//! 127.0.0.1 (Chromium's resolver maps the test's made-up host names there).
//!
//! The clients here have no terminal: each elicit runs in its own session
//! (setsid) with pipes, as a desktop app starts its `mcpServers`.

use crate::common::page::{
    call_tool, choice, free_port, http, install, open_page, page_port, proxy, raw_result, root,
    Browser, NoTerminal, LIMIT,
};
use crate::common::{self, Test};

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[test]
fn server_everything_form_filled_in_chromium_through_the_proxy_with_no_terminal() {
    let b = Browser::start();
    // No --ui: `auto` finds no terminal and serves the page.
    let mut p = proxy(&["--no-open"], &crate::common::server_everything());
    call_tool(&mut p, 2, "trigger-elicitation-request", json!({}));
    // A one-time address: the browser is sent on to the page itself.
    let address = p.page_address();
    assert!(
        address.starts_with("http://127.0.0.1:") && address.contains("/open/"),
        "{address}"
    );
    b.goto(&address);
    assert!(!b.location().contains("/open/"), "{}", b.location());
    b.find("form[action$='/answer/1']");
    // The CSRF token, 13 fields: 3 yes/no radios (optional), 8 checkboxes.
    assert_eq!(b.count("form input, form select, form textarea"), 1 + 21);

    b.type_into("[name=name]", "Ada Lovelace");
    b.click(&choice("check", "true"));
    b.type_into("[name=firstLine]", "Call me Ishmael.");
    b.type_into("[name=email]", "ada@example.com");
    b.type_into("[name=homepage]", "https://ada.example.org/");
    // A date control types month, day, year in an en-US browser.
    b.type_into("[name=birthdate]", "12101815");
    assert_eq!(
        b.exec(
            "return document.querySelector('[name=birthdate]').value",
            json!([])
        ),
        json!("1815-12-10")
    );
    b.type_into("[name=integer]", "7");
    b.type_into("[name=number]", "6.25");
    b.click(&format!(
        "select[name=untitledSingleSelectEnum] option{}",
        "[value=Joey]"
    ));
    b.click(&choice("untitledMultipleSelectEnum", "Guitar"));
    b.click(&choice("untitledMultipleSelectEnum", "Piano"));
    b.click(&choice("untitledMultipleSelectEnum", "Drums"));
    b.click("select[name=titledSingleSelectEnum] option[value=hero-3]");
    b.click(&choice("titledMultipleSelectEnum", "fish-2"));
    b.click("select[name=legacyTitledEnum] option[value=pet-2]");

    let shot = root().join("target/browser-page-form.png");
    b.screenshot(&shot);
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);

    // 500 is over the schema's maximum: the page says so at the field, keeps
    // what was typed, and nothing reaches the server.
    b.type_into("[name=integer]", "500");
    b.click("button[name=action][value=accept]");
    b.wait_for(
        "the field's error",
        "return document.querySelector('p.error') !== null",
    );
    let error_id = b
        .exec(
            "return document.querySelector('[name=integer]').getAttribute('aria-describedby')",
            json!([]),
        )
        .as_str()
        .unwrap()
        .to_string();
    let error_text = b.text(&format!(
        "[id='{}']",
        error_id.split(' ').next_back().unwrap()
    ));
    assert!(error_text.contains("maximum of 100"), "{error_text}");
    assert_eq!(b.count("p.error"), 1, "{}", b.body_text());
    assert_eq!(
        b.exec(
            "return document.querySelector('[name=integer]').getAttribute('aria-invalid')",
            json!([])
        ),
        json!("true")
    );
    assert_eq!(
        b.exec(
            "return document.querySelector('[name=name]').value",
            json!([])
        ),
        json!("Ada Lovelace"),
        "typed values are kept"
    );
    p.no_reply_within(2, Duration::from_millis(500));

    b.type_into("[name=integer]", "7");
    b.click("button[name=action][value=accept]");
    let reply = p.reply(2);
    assert_eq!(
        raw_result(&reply),
        json!({"action": "accept", "content": {
            "name": "Ada Lovelace",
            "check": true,
            "firstLine": "Call me Ishmael.",
            "email": "ada@example.com",
            "homepage": "https://ada.example.org/",
            "birthdate": "1815-12-10",
            "integer": 7,
            "number": 6.25,
            "untitledSingleSelectEnum": "Joey",
            "untitledMultipleSelectEnum": ["Piano", "Drums"],
            "titledSingleSelectEnum": "hero-3",
            "titledMultipleSelectEnum": ["fish-1", "fish-2"],
            "legacyTitledEnum": "pet-2"
        }})
    );
    assert!(b.body_text().contains("Sent to"), "{}", b.body_text());
    assert!(p.finish().success());
}

#[test]
fn decline_and_cancel_on_the_page_reach_the_server_and_send_no_content() {
    let b = Browser::start();
    let mut p = proxy(
        &["--ui", "browser", "--no-open"],
        &crate::common::server_everything(),
    );
    for (n, (id, button, action)) in [(2, "decline", "decline"), (3, "cancel", "cancel")]
        .into_iter()
        .enumerate()
    {
        call_tool(&mut p, id, "trigger-elicitation-request", json!({}));
        b.goto(&p.nth_page_address(n + 1));
        b.type_into("[name=name]", "not to be sent");
        // A date picker shows the browser's own format: no YYYY-MM-DD hint.
        assert!(!b.body_text().contains("YYYY-MM-DD"), "{}", b.body_text());
        b.click(&format!("button[name=action][value={button}]"));
        assert_eq!(raw_result(&p.reply(id)), json!({ "action": action }));
        // The server was told: the page does not say nothing was sent.
        let said = b.body_text();
        assert!(
            said.contains("was told, and got none of the answers"),
            "{said}"
        );
        assert!(!said.contains("nothing was sent"), "{said}");
    }
    // What was answered here says which question and what was done.
    b.wait_for(
        "the list of answers",
        "return document.querySelectorAll('#recent li').length >= 2",
    );
    let recent = b.text("#recent");
    assert!(recent.contains("declined — "), "{recent}");
    assert!(recent.contains("cancelled — "), "{recent}");
    assert!(p.finish().success());
}

/// Two tool calls at once: both forms are on the one page (the second
/// appears by itself, what is typed in the first is kept), each is answered
/// on its own, and a second submit of an answered one is refused.
#[test]
fn two_pending_elicitations_share_the_page_and_each_is_answered_once() {
    let b = Browser::start();
    let mut p = proxy(&["--no-open"], &crate::common::server_everything());
    call_tool(&mut p, 2, "trigger-elicitation-request", json!({}));
    b.goto(&p.page_address());
    let address = b.location();
    b.find("section[data-id='1'] [name=name]");
    b.type_into("section[data-id='1'] [name=name]", "First");
    call_tool(&mut p, 3, "trigger-elicitation-request", json!({}));
    b.wait_for(
        "the second form to appear without a reload",
        "return document.querySelectorAll('section.elicitation').length === 2",
    );
    assert_eq!(
        b.exec(
            "return document.querySelector(\"section[data-id='1'] [name=name]\").value",
            json!([])
        ),
        json!("First"),
        "what was typed in the first form is kept"
    );
    assert!(b
        .exec("return document.title", json!([]))
        .as_str()
        .unwrap()
        .contains("2 requests"));

    // The second, first.
    b.type_into("section[data-id='2'] [name=name]", "Second");
    b.click("section[data-id='2'] button[name=action][value=accept]");
    let second = raw_result(&p.reply(3));
    assert_eq!(second["action"], "accept");
    assert_eq!(second["content"]["name"], "Second");

    // The same answer posted again, with the page's own token and origin:
    // refused, and nothing is sent twice.
    let replay = b.exec(
        "const f = new URLSearchParams(); f.set('csrf', arguments[0]); f.set('name', 'Again'); f.set('action', 'accept');
         return fetch(arguments[1] + 'answer/2', {method: 'POST', body: f})
           .then(r => r.text().then(t => [r.status, t]));",
        json!([csrf(&b), address]),
    );
    assert_eq!(replay[0], json!(409), "{replay}");
    assert!(replay[1].as_str().unwrap().contains("no longer waits"));
    p.no_reply_within(3, Duration::from_millis(300));

    b.goto(&address);
    assert_eq!(b.count("section.elicitation"), 1);
    b.type_into("section[data-id='1'] [name=name]", "First");
    b.click("section[data-id='1'] button[name=action][value=accept]");
    let first = raw_result(&p.reply(2));
    assert_eq!(first["content"]["name"], "First");
    assert!(p.finish().success());
}

/// The page's CSRF token, from its forms.
fn csrf(b: &Browser) -> String {
    b.exec(
        "return document.querySelector('input[name=csrf]').value",
        json!([]),
    )
    .as_str()
    .unwrap()
    .to_string()
}

/// A one-shot HTTP listener for the URL a server asks to open: it records
/// each request's head, and answers a small page.
fn url_target() -> (u16, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !common::contains(&head, b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 19\r\nConnection: close\r\n\r\n<p>signed in</p>\r\n",
            );
            if tx
                .send(String::from_utf8_lossy(&head).into_owned())
                .is_err()
            {
                break;
            }
        }
    });
    (port, rx)
}

#[test]
fn url_mode_opens_nothing_by_itself_and_the_link_only_on_a_click() {
    let b = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("opened.txt");
    let stub = dir.path().join("opener.sh");
    common::write_script(
        &stub,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" >> {}\n",
            common::sh_quote(&record.display().to_string())
        ),
    );
    let (port, visits) = url_target();
    let target = format!("http://127.0.0.1:{port}/connect?session=abc");
    let mut p = proxy(
        &["--browser", &stub.display().to_string()],
        &crate::common::python_sdk_server(),
    );
    call_tool(
        &mut p,
        2,
        "connect_account",
        json!({"url": target, "message": "Connect your Example account"}),
    );
    let address = p.page_address();
    // The opener chain opened the page, and only the page.
    let deadline = Instant::now() + LIMIT;
    while std::fs::read_to_string(&record)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the page was not opened");
        std::thread::sleep(Duration::from_millis(20));
    }
    b.goto(&address);
    b.find("a.open");
    assert!(b.text("mark.host").contains(&format!("127.0.0.1:{port}")));
    assert!(b.body_text().contains("Connect your Example account"));
    // Plain http to this machine: the note the terminal shows too.
    assert!(b.count(".url-warnings li.info") >= 1, "{}", b.body_text());
    common::quiet_for(
        Duration::from_millis(300),
        "nothing may fetch the URL before a click",
    );
    assert!(
        visits.try_recv().is_err(),
        "the URL was fetched before any click"
    );
    assert_eq!(
        std::fs::read_to_string(&record).unwrap().trim(),
        address,
        "the opener ran for the page only"
    );
    assert_eq!(
        b.exec("return document.querySelector('a.open').rel", json!([])),
        json!("noopener noreferrer")
    );
    assert_eq!(
        b.exec("return document.querySelector('a.open').href", json!([])),
        json!(target)
    );
    b.click("a.open");
    let visit = visits.recv_timeout(LIMIT).expect("the link opened the URL");
    assert!(visit.starts_with("GET /connect?session=abc "), "{visit}");
    assert!(
        !visit.to_ascii_lowercase().contains("\nreferer:"),
        "the page's address leaked: {visit}"
    );
    b.click("button[name=action][value=accept]");
    let reply = p.reply(2);
    let echoed: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echoed["action"], "accept");
    assert!(p.finish().success());
}

#[test]
fn prompt_timeout_expires_the_elicitation_on_the_page_as_a_cancel() {
    let b = Browser::start();
    let mut p = proxy(
        &["--no-open", "--prompt-timeout", "4s"],
        &crate::common::server_everything(),
    );
    call_tool(&mut p, 2, "trigger-elicitation-request", json!({}));
    b.goto(&p.page_address());
    let said = b.text("p.deadline");
    assert!(said.starts_with("Answer within"), "{said}");
    let csrf_token = csrf(&b);
    assert_eq!(raw_result(&p.reply(2)), json!({ "action": "cancel" }));
    // The listener stays open, so the page hears of it: the form leaves,
    // and the list of answers says it expired.
    b.wait_for(
        "the page to say the time is up",
        "return document.querySelector('p.deadline') === null
            && document.getElementById('recent').innerText.includes('expired: no answer within 4s')",
    );
    assert!(p.stderr().contains("no answer on the page within 4s"));
    // Sending now is refused: nothing waits. The listener stays open (its
    // port is elicit's for as long as elicit runs), and answers nothing.
    let sent = b.exec(
        "const f = new URLSearchParams(); f.set('csrf', arguments[0]); f.set('action', 'accept');
         return fetch(location.href + 'answer/1', {method: 'POST', body: f}).then(r => r.status);",
        json!([csrf_token]),
    );
    assert_eq!(sent, json!(409));
    assert!(p.finish().success());
}

/// Server text that tries to be HTML, script, a link and reversed text.
const HOSTILE: &str = "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\"><a href=\"javascript:window.pwned=3\">click</a> \u{202e}txt.exe";

#[test]
fn attacks_on_the_page_are_refused_and_server_text_is_inert() {
    let b = Browser::start();
    let request = json!({"method": "elicitation/create", "params": {
        "message": HOSTILE,
        "requestedSchema": {"type": "object", "properties": {
            "pick": {"type": "string", "title": HOSTILE, "description": HOSTILE,
                     "oneOf": [{"const": "a", "title": HOSTILE}, {"const": "b", "title": "B"}]},
            "free": {"type": "string", "title": "Free", "default": HOSTILE}
        }}
    }, "jsonrpc": "2.0", "id": 7})
    .to_string();
    let p = NoTerminal::spawn(
        &["--ui", "browser", "--no-open", "--server", HOSTILE],
        Some(&request),
    );
    let once = p.page_address();
    let port = page_port(&once);
    b.goto(&once);
    // The page's own address (its secret path) and the session cookie the
    // one-time address gave this browser.
    let address = b.location();
    let token = address
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let cookie = format!("elicit={}", b.cookie("elicit").expect("the page's cookie"));
    // The one-time address is spent: a second use gets nothing.
    let once_path = &once[once.find("/open/").unwrap()..];
    let (status, head) = http(
        port,
        &format!("GET {once_path} HTTP/1.1\r\nHost: 127.0.0.1:{port}"),
        "",
    );
    assert_eq!(status, 410, "{head}");
    assert!(!head.to_ascii_lowercase().contains("set-cookie"), "{head}");
    // The page's path without the cookie: refused.
    let (status, _) = http(
        port,
        &format!("GET /{token}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}"),
        "",
    );
    assert_eq!(status, 403);
    b.find("form");
    // Inert: the page's own script is the only one, nothing ran, nothing
    // was injected, and the text shows as text.
    assert_eq!(
        b.exec(
            "return [document.scripts.length, typeof window.pwned, document.images.length,
                     document.querySelectorAll('a[href^=\"javascript\"], [onerror]').length]",
            json!([])
        ),
        json!([1, "undefined", 0, 0])
    );
    let text = b.body_text();
    assert!(text.contains("<script>window.pwned = 1</script>"), "{text}");
    assert!(text.contains("<img src=x onerror="), "{text}");
    assert!(
        !text.contains('\u{202e}'),
        "a bidi override reached the page: {text}"
    );
    assert!(text.contains("<U+202E>"), "{text}");
    // A default with a bidi override is not pre-filled, only shown
    // neutralised (as on the terminal).
    assert_eq!(
        b.exec(
            "return document.querySelector('[name=free]').value",
            json!([])
        ),
        json!("")
    );
    assert!(
        text.contains("Pre-filled value not shown as it is"),
        "{text}"
    );

    // A DNS-rebinding page: the browser's own host name for 127.0.0.1.
    b.goto(&format!("http://rebind.test:{port}/{token}/"));
    assert!(
        b.body_text().contains("answers only at 127.0.0.1"),
        "{}",
        b.body_text()
    );
    let (status, _) = http(
        port,
        &format!("GET /{token}/ HTTP/1.1\r\nHost: rebind.test:{port}"),
        "",
    );
    assert_eq!(status, 421);
    // Any other path, or the right one with a wrong token: 404.
    b.goto(&format!(
        "http://127.0.0.1:{port}/00000000000000000000000000000000/"
    ));
    assert!(b.body_text().contains("not found"));
    for path in [
        "/",
        "/favicon.ico",
        &format!("/{token}x/"),
        &format!("/{}/", &token[..31]),
    ] {
        let (status, _) = http(
            port,
            &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}"),
            "",
        );
        assert_eq!(status, 404, "{path}");
    }
    // The page's headers.
    let (status, head) = http(
        port,
        &format!("GET /{token}/ HTTP/1.1\r\nHost: localhost:{port}\r\nCookie: {cookie}"),
        "",
    );
    assert_eq!(status, 200);
    for h in [
        "Content-Security-Policy: default-src 'none'; script-src 'nonce-",
        "frame-ancestors 'none'",
        "Cache-Control: no-store",
        "Referrer-Policy: no-referrer",
        "X-Content-Type-Options: nosniff",
    ] {
        assert!(head.contains(h), "{h:?} missing:\n{head}");
    }

    // POSTs that are not the page's own answer nothing.
    b.goto(&address);
    let csrf = csrf(&b);
    let no_token = b.exec(
        "return fetch(arguments[0] + 'answer/1', {method: 'POST', body: new URLSearchParams({pick: 'a', action: 'accept'})})
           .then(r => r.status);",
        json!([address]),
    );
    assert_eq!(no_token, json!(403));
    let form = format!("csrf={csrf}&pick=a&action=accept");
    let form_head = |origin: &str| {
        format!("POST /{token}/answer/1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nContent-Type: application/x-www-form-urlencoded{origin}")
    };
    assert_eq!(http(port, &form_head(""), &form).0, 403, "no Origin");
    assert_eq!(
        http(
            port,
            &form_head("\r\nOrigin: http://attacker.test:1"),
            &form
        )
        .0,
        403
    );
    assert_eq!(http(port, &form_head("\r\nOrigin: null"), &form).0, 403);
    let big = "x".repeat(300 * 1024);
    assert_eq!(
        http(
            port,
            &form_head(&format!("\r\nOrigin: http://127.0.0.1:{port}")),
            &format!("{form}&free={big}")
        )
        .0,
        413
    );
    // Another site in the same browser, which somehow knows the CSRF token.
    let attacker = TcpListener::bind("127.0.0.1:0").unwrap();
    let attacker_port = attacker.local_addr().unwrap().port();
    let page = format!(
        "<form method=post action=\"http://127.0.0.1:{port}/{token}/answer/1\"><input name=csrf value={csrf}><input name=pick value=a><button id=go name=action value=accept>go</button></form>"
    );
    std::thread::spawn(move || {
        for stream in attacker.incoming().take(2) {
            let Ok(mut s) = stream else { break };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    b.goto(&format!("http://attacker.test:{attacker_port}/"));
    b.click("#go");
    b.wait_for(
        "elicit's refusal",
        // The page's cookie is SameSite=Strict, so another site's POST does
        // not even carry it; its Origin would be refused next.
        "return document.body.innerText.includes('refused: this browser has not opened the page')",
    );
    assert!(
        p.lines.try_recv().is_err(),
        "a POST from another site answered the elicitation"
    );

    // The person, on the page, cancels: that is the one answer sent.
    b.goto(&address);
    b.click("button[name=action][value=cancel]");
    let out = p.lines.recv_timeout(LIMIT).expect("elicit answered");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "cancel"}})
    );
}

/// Plain resolution of a document with no terminal: `auto` serves the
/// page, and an approve-only form is one Approve/Decline choice.
#[test]
fn plain_resolution_without_a_terminal_asks_on_the_page() {
    let b = Browser::start();
    let request = json!({"message": "Deploy to production?", "requestedSchema": {"type": "object", "properties": {}}});
    let p = NoTerminal::spawn(&["--no-open"], Some(&request.to_string()));
    b.goto(&p.page_address());
    assert_eq!(b.count("button[name=action]"), 2);
    b.click("button[name=action][value=accept]");
    let out = p.lines.recv_timeout(LIMIT).expect("elicit answered");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"action": "accept", "content": {}})
    );
    // The confirmation was written before elicit went on (and exited): the
    // browser shows it, not a dropped connection.
    assert!(b.body_text().contains("Sent to"), "{}", b.body_text());
    // elicit ends after this one answer: the page says so, and promises no
    // next request nor says elicit is "not answering just now" once it has.
    let status = p.finish();
    assert!(status.success(), "{status:?}");
    let text = b.body_text();
    assert!(text.contains("You can close this tab."), "{text}");
    assert!(!text.contains("next request"), "{text}");
    assert_eq!(b.text("#status"), "", "{text}");
}

/// The page that confirms an answer is written before elicit hands the
/// answer on (and, resolving one document, exits): the person sees
/// "Cancelled", never a dropped connection. No browser needed.
#[test]
fn the_confirmation_is_written_before_elicit_exits() {
    let request = common::fixture("server-everything/form.request.json");
    for _ in 0..5 {
        let p = NoTerminal::spawn(&["--ui", "browser", "--no-open"], Some(&request));
        let page = open_page(&p.page_address());
        let port = page.port;
        let (status, html) = page.request("GET", "", "", "");
        assert_eq!(status, 200);
        let csrf = crate::common::page::csrf_token(&html);
        let (status, reply) = page.request(
            "POST",
            "answer/1",
            &format!("Origin: http://127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"),
            &format!("csrf={csrf}&action=cancel"),
        );
        assert_eq!(status, 200, "{reply}");
        assert!(reply.contains("Cancelled: "), "{reply}");
        assert!(reply.contains("got none of the answers"), "{reply}");
        let out = p.lines.recv_timeout(LIMIT).expect("elicit answered");
        assert!(out.contains(r#""action":"cancel""#), "{out}");
    }
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The PyPI `mcp` test server over Streamable HTTP, through `elicit proxy
/// URL`: its form is answered on the page too.
#[test]
fn pypi_mcp_server_over_streamable_http_through_the_remote_proxy() {
    install("install-test-servers");
    let port = free_port();
    let _server = Server(
        Command::new(root().join(".deps/venv/bin/python"))
            .arg(root().join("tests/servers/py_http_server.py"))
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python server"),
    );
    let deadline = Instant::now() + LIMIT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the Python server did not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let b = Browser::start();
    let mut p = proxy(&["--no-open"], &[format!("http://127.0.0.1:{port}/mcp")]);
    call_tool(&mut p, 2, "ask_profile", json!({}));
    b.goto(&p.page_address());
    b.type_into("[name=name]", "Grace");
    b.type_into("[name=age]", "85");
    b.click(&choice("subscribe", "true"));
    b.click("select[name=color] option[value=green]");
    b.click("button[name=action][value=accept]");
    let reply = p.reply(2);
    let echoed: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        echoed,
        json!({"action": "accept", "content": {"name": "Grace", "age": 85, "subscribe": true, "color": "green"}})
    );
    assert!(p.finish().success());
}

/// `elicit call` with no terminal asks on the page as well.
#[test]
fn call_without_a_terminal_asks_on_the_page() {
    let b = Browser::start();
    let mut args = vec![
        "call",
        "--no-open",
        "--tool",
        "trigger-elicitation-request",
        "--server-log",
        "/dev/null",
        "--",
    ];
    let server = crate::common::server_everything();
    args.extend(server.iter().map(String::as_str));
    let p = NoTerminal::spawn(&args, None);
    b.goto(&p.page_address());
    b.type_into("[name=name]", "Ada");
    b.click("button[name=action][value=accept]");
    let out = p.lines.recv_timeout(LIMIT).expect("the call's result");
    let result: Value = serde_json::from_str(&out).unwrap();
    let raw = raw_result(&json!({ "result": result }));
    assert_eq!(raw["action"], "accept");
    assert_eq!(raw["content"]["name"], "Ada");
    assert_eq!(raw["content"]["integer"], 42, "defaults were pre-filled");
}

/// A secret-looking field is masked with a Show toggle and the terminal's
/// warning; a required yes/no starts with nothing chosen; a multi-select's
/// item limit is checked by the schema model on the page.
#[test]
fn secrets_are_masked_and_a_required_yes_no_starts_unchosen() {
    let b = Browser::start();
    let request = json!({"message": "Connect", "requestedSchema": {"type": "object", "properties": {
        "apiToken": {"type": "string", "title": "API token"},
        "agree": {"type": "boolean", "title": "I agree"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 1}
    }, "required": ["apiToken", "agree"]}});
    let p = NoTerminal::spawn(&["--no-open"], Some(&request.to_string()));
    b.goto(&p.page_address());
    let field_type = || {
        b.exec(
            "return document.querySelector('[name=apiToken]').type",
            json!([]),
        )
    };
    assert_eq!(field_type(), json!("password"));
    assert!(b.body_text().contains("This looks like a secret"));
    b.type_into("[name=apiToken]", "s3cret");
    b.click("button[data-reveal]");
    assert_eq!(field_type(), json!("text"));
    assert_eq!(
        b.exec(
            "return document.querySelector('button[data-reveal]').getAttribute('aria-pressed')",
            json!([])
        ),
        json!("true")
    );
    assert_eq!(
        b.exec(
            "return [...document.querySelectorAll('[name=agree]')].map(r => r.checked)",
            json!([])
        ),
        json!([false, false]),
        "a required yes/no has no third choice and starts unchosen"
    );
    b.click(&choice("tags", "a"));
    b.click(&choice("tags", "b"));
    b.click("button[name=action][value=accept]");
    b.wait_for(
        "the fields' errors",
        "return document.querySelectorAll('p.error').length === 2",
    );
    let text = b.body_text();
    assert!(text.contains("pick at most 1 item"), "{text}");
    assert!(text.contains("required, but no value was given"), "{text}");
    b.click(&choice("agree", "true"));
    b.click(&choice("tags", "b"));
    b.type_into("[name=apiToken]", "s3cret");
    b.click("button[name=action][value=accept]");
    let out = p.lines.recv_timeout(LIMIT).expect("elicit answered");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"action": "accept", "content": {"apiToken": "s3cret", "agree": true, "tags": ["a"]}})
    );
}

/// The cassette fixture server (stdlib Python): its `profile` tool asks
/// name (required), age (default 30) and tags, and returns the answer it got.
fn cassette_server() -> Vec<String> {
    vec![
        "python3".to_string(),
        root()
            .join("tests/servers/cassette_server.py")
            .display()
            .to_string(),
    ]
}

/// Fills the cassette fixture's form on the page: a name typed in, a tag
/// ticked, the age's default changed (to a refused value first, then a
/// good one); and sends it.
fn answer_profile_on_the_page(b: &Browser, address: &str) {
    b.goto(address);
    assert_eq!(
        b.exec(
            "return document.querySelector('[name=age]').value",
            json!([])
        ),
        json!("30"),
        "the default is pre-filled"
    );
    b.type_into("[name=name]", "Grace Hopper");
    b.click(&choice("tags", "b"));
    // Over the maximum of 150 first: refused on the page, so neither sent
    // nor recorded.
    b.type_into("[name=age]", "200");
    b.click("button[name=action][value=accept]");
    b.wait_for(
        "the age's error",
        "return document.querySelector('p.error') !== null",
    );
    b.type_into("[name=age]", "85");
    b.click("button[name=action][value=accept]");
}

/// What answer_profile_on_the_page sends.
fn profile_answer() -> Value {
    json!({"action": "accept", "content": {"name": "Grace Hopper", "age": 85, "tags": ["b"]}})
}

/// `elicit test FILE`, ending with `status`: its stderr.
fn replay(file: &Path, status: i32) -> String {
    let run = Test::new().arg("test").arg(file).status(status).run();
    run.stderr().to_string()
}

/// The cassette holds the answer given on the page, `elicit test` replays it
/// green, and fails once the recorded answer no longer gives the recorded
/// result (so the answer is what the replay sends, not a note on the side).
fn check_page_answer_recorded(file: &Path) {
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let e = c["elicitations"].as_array().unwrap();
    assert_eq!(e.len(), 1, "{c}");
    assert_eq!(e[0]["request"]["message"], "Who are you?", "{c}");
    assert_eq!(e[0]["answer"], profile_answer(), "{c}");
    let stderr = replay(file, 0);
    assert!(stderr.contains("1 test, 1 passed, 0 failed"), "{stderr}");

    c["elicitations"][0]["answer"]["content"]["age"] = json!(86);
    std::fs::write(file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let stderr = replay(file, 1);
    assert!(
        stderr.contains("the result differs from the recorded one"),
        "{stderr}"
    );
}

/// Answers given on the page are recorded as terminal ones are: `elicit
/// call --ui browser --record` writes the page's answer into the cassette.
#[test]
fn answers_given_on_the_page_are_recorded_by_call_and_replay() {
    let b = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.cassette.json");
    let mut args: Vec<&str> = "call --ui browser --no-open --server-log /dev/null --record"
        .split(' ')
        .collect();
    args.extend([file.to_str().unwrap(), "--tool", "profile", "--"]);
    let server = cassette_server();
    args.extend(server.iter().map(String::as_str));
    let p = NoTerminal::spawn(&args, None);
    answer_profile_on_the_page(&b, &p.page_address());
    let out = p
        .lines
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("no result from the call; stderr:\n{}", p.stderr()));
    let result: Value = serde_json::from_str(&out).unwrap();
    let echoed: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echoed["reply"], profile_answer(), "{result}");
    let stderr = p.stderr();
    assert!(p.finish().success(), "{stderr}");
    check_page_answer_recorded(&file);
}

/// The same through the proxy: a client's tool call, answered on the page.
#[test]
fn answers_given_on_the_page_are_recorded_by_the_proxy_and_replay() {
    let b = Browser::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("proxy-page.cassette.json");
    let mut p = proxy(
        &[
            "--ui",
            "browser",
            "--no-open",
            "--record",
            file.to_str().unwrap(),
        ],
        &cassette_server(),
    );
    call_tool(&mut p, 2, "profile", json!({"note": "n"}));
    answer_profile_on_the_page(&b, &p.page_address());
    let reply = p.reply(2);
    let echoed: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echoed["reply"], profile_answer(), "{reply}");
    assert!(p.finish().success());
    check_page_answer_recorded(&file);
}
