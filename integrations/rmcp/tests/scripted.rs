//! rmcp's real client, on `ElicitHandler`, against real servers that
//! elicit (server-everything's `trigger-elicitation-request` and
//! `trigger-url-elicitation`, FastMCP's `ctx.elicit` tools), answered from
//! scripted answers and answer rules, with nobody to ask.

mod common;

use common::{call, close, connect, fastmcp, fastmcp_answer, raw_result, server_everything};
use elicit_rmcp::{Action, ElicitHandler, ElicitModes, Options};
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::{json, Value};

/// Options with no person: only what is scripted answers.
fn scripted(answers: &[&str]) -> Options {
    answers
        .iter()
        .fold(Options::default().no_input(true), |o, a| o.answer(*a))
}

fn handler(options: Options) -> ElicitHandler {
    ElicitHandler::new(options).expect("valid options")
}

/// Every field of server-everything's form, given.
fn everything_answers() -> Vec<&'static str> {
    vec![
        "name=Ada Lovelace",
        "check=yes",
        "firstLine=Call me Ishmael.",
        "email=ada@example.com",
        "homepage=https://ada.example.org/",
        "birthdate=1815-12-10",
        "integer=7",
        "number=6.25",
        "untitledSingleSelectEnum=Joey",
        "untitledMultipleSelectEnum=Piano",
        "untitledMultipleSelectEnum=Drums",
        // By title, as a person reads it; sent as its value.
        "titledSingleSelectEnum=Wonder Woman",
        "titledMultipleSelectEnum=fish-2",
        "legacyTitledEnum=Dogs",
    ]
}

fn everything_content() -> Value {
    json!({
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
        "titledMultipleSelectEnum": ["fish-2"],
        "legacyTitledEnum": "pet-2"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_form_gets_every_scripted_value() {
    if !common::servers("server_everything_form_gets_every_scripted_value") {
        return;
    }
    let client = connect(
        handler(scripted(&everything_answers())),
        server_everything(),
    )
    .await;
    let result = call(&client, "trigger-elicitation-request", json!({})).await;
    assert_eq!(
        raw_result(&result),
        json!({"action": "accept", "content": everything_content()})
    );
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_accept_takes_the_defaults_and_decline_cancel_send_no_content() {
    let test = "server_everything_accept_takes_the_defaults_and_decline_cancel_send_no_content";
    if !common::servers(test) {
        return;
    }
    // `accept` fills what is not given from the schema's defaults.
    let answers = [
        "accept",
        "name=Ada",
        "check=no",
        "email=ada@example.com",
        "homepage=https://a.example/",
        "birthdate=2000-01-31",
    ];
    let client = connect(handler(scripted(&answers)), server_everything()).await;
    let got = raw_result(&call(&client, "trigger-elicitation-request", json!({})).await);
    close(client).await;
    assert_eq!(got["action"], "accept");
    let content = &got["content"];
    assert_eq!(content["name"], "Ada");
    assert_eq!(content["check"], false);
    assert_eq!(content["firstLine"], "It was a dark and stormy night.");
    assert_eq!(content["integer"], 42);
    // The schema's default, as written there (not π).
    assert_eq!(content["number"].to_string(), "3.14");
    assert_eq!(content["untitledSingleSelectEnum"], "Monica");
    assert_eq!(content["untitledMultipleSelectEnum"], json!(["Guitar"]));
    assert_eq!(content["titledSingleSelectEnum"], "hero-1");
    assert_eq!(content["titledMultipleSelectEnum"], json!(["fish-1"]));

    for word in ["decline", "cancel"] {
        let client = connect(handler(scripted(&[word])), server_everything()).await;
        let got = raw_result(&call(&client, "trigger-elicitation-request", json!({})).await);
        close(client).await;
        assert_eq!(got, json!({ "action": word }), "{word}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_url_elicitation_accepted_without_content() {
    if !common::servers("server_everything_url_elicitation_accepted_without_content") {
        return;
    }
    let client = connect(handler(scripted(&["accept"])), server_everything()).await;
    let result = call(
        &client,
        "trigger-url-elicitation",
        json!({"url": "https://example.com/connect?session=abc", "elicitationId": "el-9"}),
    )
    .await;
    close(client).await;
    let text = common::text(&result);
    assert_ne!(result.is_error, Some(true), "{text}");
    // The tool reports the action the client sent, and no content.
    assert!(text.contains("accept"), "{text}");
    assert!(!text.contains("\"content\""), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_declared_modes_decide_which_elicitation_tools_server_everything_offers() {
    let test = "the_declared_modes_decide_which_elicitation_tools_server_everything_offers";
    if !common::servers(test) {
        return;
    }
    // server-everything registers its elicitation tools only for a client
    // that declares the capability (URL: only with `url`).
    let mut seen = Vec::new();
    for modes in ["form,url", "form", "url", "none"] {
        let options = scripted(&[]).modes(ElicitModes::parse(modes).unwrap());
        let client = connect(handler(options), server_everything()).await;
        let tools = tokio::time::timeout(common::LIMIT, client.list_all_tools())
            .await
            .expect("tools/list timed out")
            .expect("tools/list");
        close(client).await;
        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        seen.push((
            modes,
            names.iter().any(|n| n == "trigger-elicitation-request"),
            names.iter().any(|n| n == "trigger-url-elicitation"),
        ));
    }
    assert_eq!(
        seen,
        vec![
            ("form,url", true, true),
            ("form", true, false),
            ("url", true, true),
            ("none", false, false),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_ctx_elicit_form_choice_and_url() {
    if !common::servers("fastmcp_ctx_elicit_form_choice_and_url") {
        return;
    }
    // One session, three elicitations: each scripted value goes to the
    // form that has its field; `accept` settles the URL.
    let options = scripted(&["name=Bo", "age=30", "color=red", "value=blue", "accept"]);
    let client = connect(handler(options), fastmcp()).await;
    assert_eq!(
        fastmcp_answer(&call(&client, "form_ctx", json!({})).await),
        json!({"action":"accept","content":{"name":"Bo","age":30,"color":"red"}})
    );
    // FastMCP asks a single choice as `{"value": …}`.
    assert_eq!(
        fastmcp_answer(&call(&client, "pick_color", json!({})).await),
        json!({"action":"accept","content":"blue"})
    );
    assert_eq!(
        fastmcp_answer(&call(&client, "connect_url", json!({})).await),
        json!({"action":"accept","content":null})
    );
    close(client).await;

    let client = connect(handler(scripted(&["decline"])), fastmcp()).await;
    assert_eq!(
        fastmcp_answer(&call(&client, "always_decline", json!({})).await),
        json!({"action":"decline","content":null})
    );
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_do_not_fit_the_form_are_never_sent() {
    if !common::servers("answers_that_do_not_fit_the_form_are_never_sent") {
        return;
    }
    // `purple` is not one of the colours: the handler answers the server
    // with a JSON-RPC error rather than sending it, and the tool fails with
    // that error's words instead of returning an answer.
    let options = scripted(&["name=Bo", "age=30", "color=purple"]);
    let client = connect(handler(options), fastmcp()).await;
    let outcome = tokio::time::timeout(
        common::LIMIT,
        client.call_tool(CallToolRequestParams::new("form_ctx")),
    )
    .await
    .expect("form_ctx timed out");
    close(client).await;
    let result = outcome.expect("FastMCP reports a failed elicitation as a tool error");
    let text = common::text(&result);
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(
        text.contains("the answers do not satisfy the requested schema"),
        "{text}"
    );
    assert!(
        !text.contains("\"action\""),
        "an answer reached the tool: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_mode_is_refused_and_nobody_to_ask_uses_the_fallback() {
    let test = "an_undeclared_mode_is_refused_and_nobody_to_ask_uses_the_fallback";
    if !common::servers(test) {
        return;
    }
    // Form only: FastMCP's URL elicitation gets -32602 and its tool fails.
    let options = scripted(&["accept"]).modes(ElicitModes::parse("form").unwrap());
    let client = connect(handler(options), fastmcp()).await;
    let outcome = tokio::time::timeout(
        common::LIMIT,
        client.call_tool(CallToolRequestParams::new("connect_url")),
    )
    .await
    .expect("connect_url timed out");
    close(client).await;
    let result = outcome.expect("FastMCP reports a failed elicitation as a tool error");
    let text = common::text(&result);
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(
        text.contains("elicitation mode \"url\" not supported by this client (it declared form)"),
        "{text}"
    );

    // Nobody may answer; the fallback declines instead of failing.
    let options = Options::default().no_input(true).fallback(Action::Decline);
    let client = connect(handler(options), fastmcp()).await;
    assert_eq!(
        fastmcp_answer(&call(&client, "form_ctx", json!({})).await),
        json!({"action":"decline","content":null})
    );
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_rules_from_elicit_answers_match_on_the_server_name() {
    let test = "answer_rules_from_elicit_answers_match_on_the_server_name";
    if !common::servers(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(
        &rules,
        json!({"elicit": "answers/1", "rules": [
            {"match": {"server": "some-other-server"}, "answer": "cancel"},
            {"match": {"server": "fastmcp-elicit-test", "fields": ["name", "age", "color"]},
             "answer": {"name": "Rule", "age": "41", "color": "green"}},
            {"match": {"server": "mcp-servers/everything", "mode": "form"},
             "answer": "decline"}
        ]})
        .to_string(),
    )
    .unwrap();
    // As a program configured only by the environment would be.
    let vars = [
        ("ELICIT_ANSWERS", rules.clone().into_os_string()),
        ("ELICIT_NO_INPUT", "1".into()),
    ];
    let options = Options::from_vars(|name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    })
    .unwrap();
    let client = connect(handler(options.clone()), fastmcp()).await;
    assert_eq!(
        fastmcp_answer(&call(&client, "form_ctx", json!({})).await),
        json!({"action":"accept","content":{"name":"Rule","age":41,"color":"green"}})
    );
    // No rule matches this one: with no input, declined.
    assert_eq!(
        fastmcp_answer(&call(&client, "always_decline", json!({})).await),
        json!({"action":"decline","content":null})
    );
    close(client).await;

    let client = connect(handler(options), server_everything()).await;
    assert_eq!(
        raw_result(&call(&client, "trigger-elicitation-request", json!({})).await),
        json!({"action": "decline"})
    );
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_input_required_rounds_go_through_the_handler_on_2026_07_28() {
    let test = "fastmcp_input_required_rounds_go_through_the_handler_on_2026_07_28";
    if !common::servers(test) {
        return;
    }
    // A 2026-07-28 connection (server/discover): the guard pattern returns
    // input_required, and rmcp's call_tool answers it through the handler.
    let h = handler(scripted(&["name=Guard"]));
    let (transport, _) = TokioChildProcess::builder(fastmcp())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = tokio::time::timeout(common::LIMIT, h.serve_with_lifecycle(transport, lifecycle))
        .await
        .expect("discover timed out")
        .expect("discover failed");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    assert_eq!(
        fastmcp_answer(&call(&client, "guard_form", json!({})).await),
        json!({"action":"accept","content":{"name":"Guard"}})
    );
    close(client).await;
}

#[test]
fn the_handler_declares_form_and_url_by_default() {
    let h = handler(Options::default());
    let config: &ClientConfig = h.client_config();
    assert_eq!(
        serde_json::to_value(&config.capabilities).unwrap(),
        json!({"elicitation": {"form": {}, "url": {}}})
    );
    assert_eq!(config.client_info.name, "elicit-rmcp");
}
