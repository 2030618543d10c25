//! rmcp's real client, on `ElicitHandler` with the browser page
//! (`Ui::Browser`), against server-everything and FastMCP: each
//! elicitation is answered by filling the page in headless Chromium.
//!
//! The page is one per process (elicit's page is made once and kept), so
//! this is one test that runs the servers one after the other. The
//! handler's browser command hands the page's one-time address to the
//! test, as a real browser would be given it.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{call, choice, close, connect, fastmcp, fastmcp_answer, raw_result, Browser, LIMIT};
use elicit_rmcp::{ElicitHandler, Options, Ui};
use serde_json::{json, Value};

/// Waits for the page to show elicitation `id` (the page's own count, from
/// 1), going to each address the handler opened meanwhile: the first
/// elicitation opens the page; later ones either open it again or appear
/// on the page already open.
fn await_form(b: &Browser, opened: &Path, visited: &mut usize, id: u64) {
    let css = format!("form[action$='/answer/{id}']");
    let deadline = Instant::now() + LIMIT;
    loop {
        let lines: Vec<String> = std::fs::read_to_string(opened)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        if lines.len() > *visited {
            *visited = lines.len();
            let address = lines.last().unwrap().trim();
            assert!(
                address.starts_with("http://127.0.0.1:") && address.contains("/open/"),
                "the handler opened {address}"
            );
            b.goto(address);
        }
        let found = b.exec(
            &format!("return document.querySelector({css:?}) !== null"),
            json!([]),
        );
        if found == json!(true) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "elicitation {id} never reached the page; it says:\n{}",
            b.body_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `tool` on a task while the test thread drives the browser.
fn spawn_call(
    rt: &tokio::runtime::Runtime,
    handler: ElicitHandler,
    server: tokio::process::Command,
    tool: &'static str,
    arguments: Value,
) -> tokio::task::JoinHandle<rmcp::model::CallToolResult> {
    rt.spawn(async move {
        let client = connect(handler, server).await;
        let result = call(&client, tool, arguments).await;
        close(client).await;
        result
    })
}

fn finish<T>(rt: &tokio::runtime::Runtime, task: tokio::task::JoinHandle<T>) -> T {
    rt.block_on(async { tokio::time::timeout(LIMIT, task).await })
        .expect("the tool call did not finish")
        .expect("the tool call panicked")
}

#[test]
fn server_everything_and_fastmcp_answered_on_the_page_in_chromium() {
    let test = "server_everything_and_fastmcp_answered_on_the_page_in_chromium";
    if !common::servers(test) || !common::browser_available(test) {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opened = dir.path().join("opened.txt");
    let options = Options::default()
        .ui(Ui::Browser)
        .browser(common::browser_command(&opened));
    let handler = ElicitHandler::new(options).unwrap();
    let b = Browser::start();
    let mut visited = 0;

    // 1. server-everything's 13 fields.
    let task = spawn_call(
        &rt,
        handler.clone(),
        common::server_everything(),
        "trigger-elicitation-request",
        json!({}),
    );
    await_form(&b, &opened, &mut visited, 1);
    b.type_into("[name=name]", "Ada Lovelace");
    b.click(&choice("check", "true"));
    b.type_into("[name=firstLine]", "Call me Ishmael.");
    b.type_into("[name=email]", "ada@example.com");
    b.type_into("[name=homepage]", "https://ada.example.org/");
    // A date control types month, day, year in an en-US browser.
    b.type_into("[name=birthdate]", "12101815");
    b.type_into("[name=integer]", "7");
    b.type_into("[name=number]", "6.25");
    b.click("select[name=untitledSingleSelectEnum] option[value=Joey]");
    b.click(&choice("untitledMultipleSelectEnum", "Guitar"));
    b.click(&choice("untitledMultipleSelectEnum", "Piano"));
    b.click(&choice("untitledMultipleSelectEnum", "Drums"));
    b.click("select[name=titledSingleSelectEnum] option[value=hero-3]");
    b.click(&choice("titledMultipleSelectEnum", "fish-2"));
    b.click("select[name=legacyTitledEnum] option[value=pet-2]");
    b.click("button[name=action][value=accept]");
    let result = finish(&rt, task);
    assert_eq!(
        raw_result(&result),
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

    // 2. Declined on the page: no content reaches the tool.
    let task = spawn_call(
        &rt,
        handler.clone(),
        common::server_everything(),
        "trigger-elicitation-request",
        json!({}),
    );
    await_form(&b, &opened, &mut visited, 2);
    b.click("form[action$='/answer/2'] button[name=action][value=decline]");
    assert_eq!(raw_result(&finish(&rt, task)), json!({"action": "decline"}));

    // 3. FastMCP's ctx.elicit form: the server's name is on the page.
    let task = spawn_call(&rt, handler.clone(), fastmcp(), "form_ctx", json!({}));
    await_form(&b, &opened, &mut visited, 3);
    assert!(
        b.body_text().contains("fastmcp-elicit-test"),
        "{}",
        b.body_text()
    );
    b.type_into("form[action$='/answer/3'] [name=name]", "Bo");
    b.type_into("form[action$='/answer/3'] [name=age]", "30");
    b.click("form[action$='/answer/3'] select[name=color] option[value=green]");
    b.click("form[action$='/answer/3'] button[name=action][value=accept]");
    assert_eq!(
        fastmcp_answer(&finish(&rt, task)),
        json!({"action":"accept","content":{"name":"Bo","age":30,"color":"green"}})
    );

    // 4. FastMCP's URL elicitation: the page shows the link (never
    // followed here: it is not this machine's) and "Done" accepts.
    let task = spawn_call(&rt, handler.clone(), fastmcp(), "connect_url", json!({}));
    await_form(&b, &opened, &mut visited, 4);
    assert_eq!(
        b.exec("return document.querySelector('a.open').href", json!([])),
        json!("https://example.com/connect?session=abc")
    );
    b.click("form[action$='/answer/4'] button[name=action][value=accept]");
    assert_eq!(
        fastmcp_answer(&finish(&rt, task)),
        json!({"action":"accept","content":null})
    );

    // 5. Two elicitations at once (two clients): both wait on the page
    // together, and each is answered on its own, the later one first.
    let first = spawn_call(
        &rt,
        handler.clone(),
        common::server_everything(),
        "trigger-elicitation-request",
        json!({}),
    );
    let second = spawn_call(
        &rt,
        handler.clone(),
        common::server_everything(),
        "trigger-elicitation-request",
        json!({}),
    );
    await_form(&b, &opened, &mut visited, 5);
    await_form(&b, &opened, &mut visited, 6);
    b.click("form[action$='/answer/6'] button[name=action][value=decline]");
    b.wait_for(
        "the declined one to leave the page",
        "return document.querySelector(\"form[action$='/answer/6']\") === null",
    );
    assert_eq!(
        b.exec(
            "return document.querySelector(\"form[action$='/answer/5']\") !== null",
            json!([])
        ),
        json!(true),
        "the other one still waits"
    );
    b.click("form[action$='/answer/5'] button[name=action][value=cancel]");
    let mut got = [
        raw_result(&finish(&rt, first)),
        raw_result(&finish(&rt, second)),
    ];
    got.sort_by_key(|v| v["action"].as_str().unwrap_or_default().to_string());
    assert_eq!(
        got,
        [json!({"action": "cancel"}), json!({"action": "decline"})]
    );
    drop(b);
}
