//! The envelope as the wire has it: which ids are ids, which are the same
//! id, what each kind of message reads as, and ids going back out exactly
//! as they came.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{Invalid, Message, RequestId};

/// A message read from its text, as a side reads a line.
fn wire(text: &str) -> Value {
    serde_json::from_str(text).expect("JSON")
}

/// The id of a request read from its text.
fn request_id(id_text: &str) -> RequestId {
    let msg = wire(&format!(
        r#"{{"jsonrpc":"2.0","id":{id_text},"method":"ping"}}"#
    ));
    match Message::parse(&msg) {
        Message::Request { id, .. } => id,
        other => panic!("{id_text}: {other:?}"),
    }
}

/// The text an id is written back as, in a reply elicit writes.
fn written_back(id: &RequestId) -> String {
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {}});
    let text = serde_json::to_string(&reply).unwrap();
    let start = text.find(r#""id":"#).unwrap() + 5;
    let end = text.find(r#","result""#).unwrap();
    text[start..end].to_string()
}

#[test]
fn a_number_id_and_a_string_id_are_two_ids() {
    let number = request_id("1");
    let string = request_id(r#""1""#);
    assert_eq!(number, RequestId::Number(1.into()));
    assert_eq!(string, RequestId::from("1".to_string()));
    assert_ne!(number, string);
    let keys: HashSet<RequestId> = [number.clone(), string.clone()].into();
    assert_eq!(keys.len(), 2);
    assert_eq!(number.to_string(), "1");
    assert_eq!(string.to_string(), r#""1""#);
    assert_eq!(string.as_str(), Some("1"));
    assert_eq!(number.as_str(), None);
}

#[test]
fn number_ids_go_back_as_the_peer_spelled_them() {
    for text in [
        "1",
        "-5",
        "0",
        "1.0",
        "1.50",
        "123456789012345678901234567890",
        "-98765432109876543210.123456789",
    ] {
        let id = request_id(text);
        assert!(matches!(id, RequestId::Number(_)), "{text}: {id:?}");
        assert_eq!(written_back(&id), text, "{text} written back");
        assert_eq!(id.to_string(), text, "{text} as a note quotes it");
        assert_eq!(id.exact_text().as_deref(), Some(text), "{text}");
        assert_eq!(RequestId::from_value(&id.to_value()), Some(id.clone()));
    }
}

#[test]
fn an_exponent_is_written_the_one_way_serde_json_writes_it() {
    for text in ["1e3", "1E3", "1e+3", "1E+3"] {
        let id = request_id(text);
        assert_eq!(written_back(&id), "1e+3", "{text}");
        assert_eq!(id, request_id("1e+3"), "{text}");
        assert_eq!(
            id.exact_text(),
            None,
            "{text}: a peer may spell it otherwise"
        );
    }
    assert_eq!(written_back(&request_id("-2.5E-07")), "-2.5e-07");
}

#[test]
fn spellings_of_one_number_are_different_ids() {
    // A peer answers under the id it was sent: `1e3` is answered as `1e3`
    // (read as `1e+3`), never as `1000`.
    let spellings = ["1000", "1e3", "1000.0", "10e2"].map(request_id);
    let keys: HashSet<&RequestId> = spellings.iter().collect();
    assert_eq!(keys.len(), spellings.len(), "{spellings:?}");
    assert_ne!(request_id("1"), request_id("1.0"));
    assert_eq!(request_id("-5"), request_id("-5"));
}

#[test]
fn a_string_id_is_its_decoded_text() {
    assert_eq!(request_id(r#""a\u0062""#), request_id(r#""ab""#));
    let quoted = request_id(r#""say \"hi\"""#);
    assert_eq!(quoted.as_str(), Some(r#"say "hi""#));
    assert_eq!(quoted.to_string(), r#""say \"hi\"""#);
    assert_eq!(written_back(&quoted), r#""say \"hi\"""#);
}

#[test]
fn an_id_deserialises_as_the_wire_has_it_and_nothing_else_is_one() {
    let id: RequestId = serde_json::from_str("1.0").unwrap();
    assert_eq!(id.to_string(), "1.0");
    let id: RequestId = serde_json::from_str("98765432109876543210").unwrap();
    assert_eq!(id.to_string(), "98765432109876543210");
    let id: RequestId = serde_json::from_str(r#""x""#).unwrap();
    assert_eq!(id, RequestId::from("x".to_string()));
    for text in ["null", "true", "{}", r#"{"a":1}"#, "[1]"] {
        let err = serde_json::from_str::<RequestId>(text).unwrap_err();
        assert!(
            err.to_string().contains("a number or a string"),
            "{text}: {err}"
        );
    }
}

#[test]
fn requests_and_notifications_are_told_by_their_id() {
    let msg = wire(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}"#);
    let parsed = Message::parse(&msg);
    assert_eq!(
        parsed,
        Message::Request {
            id: RequestId::Number(7.into()),
            method: "tools/call",
            params: Some(&json!({"name": "t"})),
        }
    );
    assert_eq!(parsed.method(), Some("tools/call"));
    assert_eq!(parsed.id(), Some(&RequestId::Number(7.into())));
    assert_eq!(parsed.reply_to(), None);

    let msg = wire(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let parsed = Message::parse(&msg);
    assert_eq!(
        parsed,
        Message::Notification {
            method: "notifications/initialized",
            params: None,
        }
    );
    assert_eq!(parsed.id(), None);
}

#[test]
fn replies_are_results_or_errors() {
    let msg = wire(r#"{"jsonrpc":"2.0","id":"a","result":{"ok":true}}"#);
    let parsed = Message::parse(&msg);
    assert_eq!(parsed.reply_to(), Some(&RequestId::from("a".to_string())));
    assert_eq!(parsed.result(), Some(&json!({"ok": true})));
    assert_eq!(parsed.error(), None);

    let msg = wire(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#);
    let parsed = Message::parse(&msg);
    assert_eq!(parsed.reply_to(), Some(&RequestId::Number(2.into())));
    assert_eq!(parsed.error().unwrap()["code"], -32601);
    assert_eq!(parsed.result(), None);

    // An error to a request its sender could not read names no request.
    let msg = wire(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#);
    let parsed = Message::parse(&msg);
    assert!(
        matches!(parsed, Message::Error { id: None, .. }),
        "{parsed:?}"
    );
    assert_eq!(parsed.reply_to(), None);
}

#[test]
fn a_reply_with_both_result_and_error_is_an_error() {
    let msg = wire(
        r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required"},"error":{"code":1,"message":"m"}}"#,
    );
    let parsed = Message::parse(&msg);
    assert_eq!(parsed.reply_to(), Some(&RequestId::Number(4.into())));
    assert_eq!(parsed.result(), None, "no result is acted on: {parsed:?}");
    assert_eq!(parsed.error().unwrap()["message"], "m");
}

#[test]
fn a_null_error_beside_a_result_is_no_error() {
    let msg = wire(r#"{"jsonrpc":"2.0","id":4,"result":{"ok":1},"error":null}"#);
    let parsed = Message::parse(&msg);
    assert_eq!(parsed.result(), Some(&json!({"ok": 1})), "{parsed:?}");
    assert_eq!(parsed.error(), None);
    let msg = wire(r#"{"jsonrpc":"2.0","id":4,"result":null,"error":{"code":1,"message":"m"}}"#);
    assert_eq!(Message::parse(&msg).error().unwrap()["code"], 1);
    let msg = wire(r#"{"jsonrpc":"2.0","id":4,"error":null}"#);
    assert_eq!(Message::parse(&msg), Message::Invalid(Invalid::Shape));
}

#[test]
fn a_message_without_jsonrpc_is_read_by_its_other_members() {
    let msg = wire(r#"{"id":1,"method":"elicitation/create","params":{}}"#);
    assert!(matches!(
        Message::parse(&msg),
        Message::Request {
            method: "elicitation/create",
            ..
        }
    ));
    let msg = wire(r#"{"id":1,"result":{}}"#);
    assert!(matches!(Message::parse(&msg), Message::Result { .. }));
}

#[test]
fn ids_that_are_not_numbers_or_strings_make_a_message_invalid() {
    for id in ["null", "{}", r#"{"a":1}"#, "[1]", "[]", "true", "false"] {
        let request = wire(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        assert_eq!(
            Message::parse(&request),
            Message::Invalid(Invalid::Id),
            "request with id {id}"
        );
        let result = wire(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
        assert_eq!(
            Message::parse(&result),
            Message::Invalid(Invalid::Id),
            "result with id {id}"
        );
    }
    for id in ["{}", "[1]", "true"] {
        let error = wire(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":1,"message":"m"}}}}"#
        ));
        assert_eq!(
            Message::parse(&error),
            Message::Invalid(Invalid::Id),
            "error with id {id}"
        );
    }
    let result = wire(r#"{"jsonrpc":"2.0","result":{}}"#);
    assert_eq!(Message::parse(&result), Message::Invalid(Invalid::Id));
}

#[test]
fn what_is_no_json_rpc_message_says_why() {
    for (text, why) in [
        ("[]", Invalid::NotAnObject),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            Invalid::NotAnObject,
        ),
        ("3", Invalid::NotAnObject),
        (r#""text""#, Invalid::NotAnObject),
        (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, Invalid::Method),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#,
            Invalid::Method,
        ),
        (r#"{"jsonrpc":"2.0","id":1}"#, Invalid::Shape),
        ("{}", Invalid::Shape),
    ] {
        let msg = wire(text);
        let parsed = Message::parse(&msg);
        assert_eq!(parsed, Message::Invalid(why), "{text}");
        assert_eq!(parsed.id(), None, "{text}");
        assert_eq!(parsed.method(), None, "{text}");
    }
}
