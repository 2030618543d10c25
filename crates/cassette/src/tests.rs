use super::*;
use serde_json::json;

fn sample() -> Cassette {
    Cassette {
        server: ServerSpec::Command(vec!["python".into(), "server.py".into()]),
        protocol: "2025-11-25".into(),
        tool: "ask".into(),
        arguments: Map::new(),
        elicitations: vec![Exchange {
            key: None,
            request: json!({"mode":"form","message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}),
            answer: AnswerSpec::Result(json!({"action":"accept","content":{"name":"Ada"}})),
            ignore: vec![],
            invalid: false,
        }],
        result: Some(json!({"content":[{"type":"text","text":"hi"}]})),
        error: None,
        ignore: vec!["/content/0/text".into()],
        matches: vec![],
        extra: Map::new(),
        source: None,
    }
}

#[test]
fn a_cassette_round_trips_with_keys_in_order_and_passes_its_schema() {
    let c = sample();
    let v = c.to_value();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "elicit",
            "server",
            "protocol",
            "tool",
            "arguments",
            "elicitations",
            "result",
            "ignore"
        ]
    );
    assert!(cassette_validator().is_valid(&v));
    let mut back = Cassette::from_value(&v).unwrap();
    assert_eq!(back.source.take(), Some(v));
    assert_eq!(back, c);
}

/// `--update` writes into the file as it was: a person's keys, their
/// order and a hand-written answer stay; the request, the recorded
/// result and the protocol are the new ones.
#[test]
fn an_update_keeps_every_key_a_person_wrote() {
    let text = r#"{"x-owner": "payments team", "elicit": "cassette/1",
        "server": {"command": ["srv"]}, "protocol": "2025-11-25", "tool": "t",
        "arguments": {}, "ignore": ["/content/0/text"],
        "elicitations": [
          {"name": "login", "request": {"message": "old"}, "answer": "name=Ada",
           "ignore": ["/url"], "x-note": "keep me"},
          {"request": {"message": "two"}, "answer": {"action": "decline"}}
        ],
        "result": {"content": []}}"#;
    let source: Value = serde_json::from_str(text).unwrap();
    let mut c = Cassette::from_value(&source).unwrap();
    c.elicitations[0].request = json!({"message": "new"});
    c.elicitations[0].answer =
        AnswerSpec::Result(json!({"action": "accept", "content": {"name": "Ada"}}));
    c.elicitations[1].request = json!({"message": "two, changed"});
    c.elicitations[1].answer = AnswerSpec::Result(json!({"action": "cancel"}));
    c.result = Some(json!({"content": [{"type": "text", "text": "new"}]}));
    c.protocol = "2026-07-28".into();
    let v = c.to_value();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "x-owner",
            "elicit",
            "server",
            "protocol",
            "tool",
            "arguments",
            "ignore",
            "elicitations",
            "result"
        ]
    );
    assert_eq!(v["protocol"], "2026-07-28");
    assert_eq!(v["ignore"], json!(["/content/0/text"]));
    let first = &v["elicitations"][0];
    assert_eq!(first["name"], "login");
    assert_eq!(first["ignore"], json!(["/url"]));
    assert_eq!(first["x-note"], "keep me");
    assert_eq!(first["answer"], "name=Ada", "a hand-written answer stays");
    assert_eq!(first["request"], json!({"message": "new"}));
    let second = &v["elicitations"][1];
    assert_eq!(
        second["answer"],
        json!({"action": "cancel"}),
        "a recorded result is replaced"
    );
    assert_eq!(v["result"]["content"][0]["text"], "new");
}

#[test]
fn schema_errors_name_the_pointer() {
    let dir = std::env::temp_dir().join(format!("elicit-cassette-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.cassette.json");
    let mut v = sample().to_value();
    v["elicitations"][0]["answer"] = json!({"action": "maybe"});
    std::fs::write(&p, v.to_string()).unwrap();
    let e = Cassette::load(&p).unwrap_err();
    assert_eq!(e.pointer.as_deref(), Some("/elicitations/0/answer"), "{e}");
    v["elicitations"][0]["answer"] = json!("accept");
    v["elicit"] = json!("cassette/9");
    std::fs::write(&p, v.to_string()).unwrap();
    let e = Cassette::load(&p).unwrap_err();
    assert_eq!(e.pointer.as_deref(), Some("/elicit"), "{e}");
    assert!(e.to_string().contains("must be \"cassette/1\""), "{e}");
    std::fs::write(&p, &v.to_string()[..40]).unwrap();
    let e = Cassette::load(&p).unwrap_err().to_string();
    assert!(e.contains("invalid JSON at line 1, column"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hand_written_answers_become_scripted_answers() {
    let words = values_as_words(
        json!({"name": "Ada", "age": "7", "tags": ["a"]})
            .as_object()
            .unwrap(),
    );
    assert_eq!(words[..3], ["accept", "name=Ada", "age=7"]);
    assert_eq!(words[3], r#"{"action":"accept","content":{"tags":["a"]}}"#);
    let s = AnswerSpec::Words(vec!["name=Ada".into()])
        .scripted()
        .unwrap();
    assert_eq!(
        s.decision(),
        Some(elicit_core::elicitation::protocol::Action::Accept)
    );
}

#[test]
fn secret_query_parameters_are_left_out_and_filled_back() {
    let (url, left_out) = redact_url(
        "https://u:p@example.com/mcp?api_key=k1&region=eu&X-Amz-Signature=s2&sessionId=s3&q=1&token=",
    );
    assert_eq!(
        url,
        "https://example.com/mcp?api_key=${ELICIT_SECRET_API_KEY}&region=eu&X-Amz-Signature=${ELICIT_SECRET_X_AMZ_SIGNATURE}&sessionId=${ELICIT_SECRET_SESSIONID}&q=1&token="
    );
    assert_eq!(left_out.len(), 3);
    assert_eq!(
        without_credentials(&url),
        url,
        "a placeholder stays as it is"
    );
    for name in [
        "apiKey",
        "access_token",
        "client_secret",
        "code",
        "AUTH",
        "pwd",
    ] {
        assert!(secret_query_name(name), "{name}");
    }
    for name in ["region", "q", "keyboard", "monkey", "page"] {
        assert!(!secret_query_name(name), "{name}");
    }
    std::env::set_var("ELICIT_SECRET_UNIT_TEST_KEY", "k&1");
    assert_eq!(
        fill_secret_references("https://h/?a=${ELICIT_SECRET_UNIT_TEST_KEY}&b=2").unwrap(),
        "https://h/?a=k&1&b=2"
    );
    assert_eq!(
        fill_secret_references("https://h/?a=${ELICIT_SECRET_UNIT_TEST_UNSET}").unwrap_err(),
        "ELICIT_SECRET_UNIT_TEST_UNSET"
    );
}

#[test]
fn a_masked_fields_value_is_not_recorded() {
    let request = json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}, "password": {"type": "string"},
            "api_token_kind": {"type": "string", "enum": ["a", "b"]}}}});
    let mut result = elicit_core::elicitation::protocol::ElicitResult::new(
        elicit_core::elicitation::protocol::Action::Accept,
    );
    result.content = json!({"name": "Ada", "password": "hunter2", "api_token_kind": "a"})
        .as_object()
        .cloned();
    let e = Exchange::recorded(None, &request, &result);
    let v = e.answer.to_value();
    assert_eq!(v["content"]["name"], "Ada");
    assert_eq!(
        v["content"]["password"],
        json!({"$env": "ELICIT_SECRET_PASSWORD"})
    );
    assert_eq!(
        v["content"]["api_token_kind"], "a",
        "a choice is not masked"
    );
    assert!(!v.to_string().contains("hunter2"));
}

#[test]
fn urls_lose_their_credentials() {
    assert_eq!(
        without_credentials("https://u:secret@example.com/mcp"),
        "https://example.com/mcp"
    );
    assert_eq!(
        without_credentials("http://127.0.0.1:8/mcp"),
        "http://127.0.0.1:8/mcp"
    );
}

#[test]
fn a_recorded_refusal_round_trips_and_a_result_beside_it_is_refused() {
    let mut c = sample();
    c.result = None;
    c.error = Some(json!({"code": -32602, "message": "invalid content"}));
    let v = c.to_value();
    assert!(cassette_validator().is_valid(&v), "{v}");
    assert_eq!(v["error"]["code"], -32602);
    assert!(v.get("result").is_none(), "{v}");
    let back = Cassette::from_value(&v).unwrap();
    assert_eq!(back.error, c.error);
    let mut both = v.clone();
    both["result"] = json!({"content": []});
    let (pointer, message) = Cassette::from_value(&both).unwrap_err();
    assert_eq!(pointer, "/error");
    assert!(message.contains("not both"), "{message}");
    // A code that is not an integer is not of the format.
    let mut bad = v;
    bad["error"]["code"] = json!("x");
    assert!(!cassette_validator().is_valid(&bad));
}

#[test]
fn only_an_integer_code_and_the_message_of_a_refusal_are_kept() {
    let kept = recorded_error(&json!({"code": -32602, "message": "no", "data": {"big": [1, 2]}}));
    assert_eq!(kept, Some(json!({"code": -32602, "message": "no"})));
    assert_eq!(recorded_error(&json!({"code": "x"})), None);
    assert_eq!(recorded_error(&json!({"message": "no code"})), None);
}

#[test]
fn update_turns_a_recorded_refusal_into_a_result_in_the_file_as_written() {
    let mut c = sample();
    c.result = None;
    c.error = Some(json!({"code": -32602, "message": "invalid content"}));
    let source = c.to_value();
    let mut now = Cassette::from_value(&source).unwrap();
    now.error = None;
    now.result = Some(json!({"content": []}));
    let v = now.to_value();
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["result"], json!({"content": []}));
}
