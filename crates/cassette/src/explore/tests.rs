//! The variants explore makes of a cassette, and how it classifies what a run did.

use super::*;

fn cassette() -> Cassette {
    Cassette::from_value(&json!({
        "elicit": "cassette/1",
        "server": {"command": ["true"]},
        "tool": "book",
        "elicitations": [
            {"request": {"message": "Who?", "requestedSchema": {"type": "object",
                "properties": {"seats": {"type": "integer", "minimum": 1, "maximum": 4},
                               "note": {"type": "string"}},
                "required": ["seats"]}},
             "answer": {"action": "accept", "content": {"seats": 2}}},
            {"request": {"mode": "url", "message": "Sign in", "url": "https://x.example/"},
             "answer": {"action": "decline"}}
        ]
    }))
    .unwrap()
}

#[test]
fn variants_cover_each_elicitation_and_each_edge() {
    let slugs: Vec<String> = variants(&cassette(), false).map(|v| v.slug).collect();
    assert_eq!(
        slugs,
        [
            "decline-at-1",
            "cancel-at-1",
            "edge-1-seats-min",
            "edge-1-seats-max",
            "edge-1-note-shortest",
            "cancel-at-2"
        ]
    );
    let with_invalid: Vec<Variant> = variants(&cassette(), true).collect();
    let bad: Vec<&str> = with_invalid
        .iter()
        .filter(|v| v.invalid)
        .map(|v| v.slug.as_str())
        .collect();
    assert_eq!(
        bad,
        [
            "invalid-1-seats-below-min",
            "invalid-1-seats-above-max",
            "invalid-1-seats-fraction",
            "invalid-1-seats-wrong-type",
            "invalid-1-seats-missing",
            "invalid-1-note-wrong-type"
        ]
    );
    let max = &with_invalid[3];
    assert_eq!(
        max.answer,
        json!({"action": "accept", "content": {"seats": 4}})
    );
}

/// A cassette of two elicitations of `fields` optional strings each,
/// every one answered.
fn wide(fields: usize) -> Cassette {
    let props: Map<String, Value> = (0..fields)
        .map(|i| (format!("f{i}"), json!({"type": "string", "maxLength": 64})))
        .collect();
    let content: Map<String, Value> = (0..fields).map(|i| (format!("f{i}"), json!("v"))).collect();
    let exchange = json!({
        "request": {"message": "Many?", "requestedSchema": {"type": "object", "properties": props}},
        "answer": {"action": "accept", "content": content}
    });
    Cassette::from_value(&json!({
        "elicit": "cassette/1",
        "server": {"command": ["true"]},
        "tool": "many",
        "elicitations": [exchange.clone(), exchange]
    }))
    .unwrap()
}

#[test]
fn taking_a_few_variants_of_a_huge_form_builds_only_those() {
    let cassette = wide(1000);
    let built = || BUILT.with(std::cell::Cell::get);
    let before = built();
    let first: Vec<Variant> = variants(&cassette, true).take(1).collect();
    assert_eq!(first.len(), 1);
    assert_eq!(built() - before, 1, "one variant taken, one built");
    let before = built();
    let some: Vec<Variant> = variants(&cassette, true).take(40).collect();
    assert_eq!(some.len(), 40);
    assert_eq!(built() - before, 40);
    // The rest is counted, not built: decline, cancel, then per field
    // shortest, longest, left out (valid) and too long, wrong type
    // (invalid), at each elicitation.
    let mut rest = variants(&cassette, true);
    rest.next();
    let before = built();
    assert_eq!(rest.count_rest(), 2 * (2 + 1000 * 5) - 1);
    assert_eq!(built(), before);
}

#[test]
fn slugs_made_twice_get_a_suffix() {
    let c = Cassette::from_value(&json!({
        "elicit": "cassette/1",
        "server": {"command": ["true"]},
        "tool": "pick",
        "elicitations": [{"request": {"message": "Which?", "requestedSchema": {"type": "object",
            "properties": {"c": {"type": "string", "enum": ["x", "a.b", "a-b", "a b", "a-b-2"]}}}},
            "answer": {"action": "accept", "content": {"c": "x"}}}]
    }))
    .unwrap();
    let slugs: Vec<String> = variants(&c, false).map(|v| v.slug).collect();
    assert_eq!(
        slugs,
        [
            "decline-at-1",
            "cancel-at-1",
            "edge-1-c-option-a-b",
            "edge-1-c-option-a-b-2",
            "edge-1-c-option-a-b-3",
            "edge-1-c-option-a-b-2-2",
            "edge-1-c-left-out"
        ]
    );
    let long = "a".repeat(40);
    let mut taken = std::collections::HashSet::new();
    let cut = slug_of(&long, 0);
    assert_eq!(unique(&mut taken, cut.clone()), cut);
    assert_eq!(
        unique(&mut taken, slug_of(&format!("{long}b"), 0)),
        format!("{cut}-2")
    );
}

#[test]
fn a_crash_a_hang_and_invalid_content_accepted_are_failures() {
    assert!(failure(Class::Crash, false).is_some());
    assert!(failure(Class::Hang, false).is_some());
    assert!(failure(Class::ProtocolError, false).is_some());
    assert!(failure(Class::Result, true).is_some());
    assert!(failure(Class::Result, false).is_none());
    assert!(failure(Class::ToolError, true).is_none());
    assert!(failure(Class::QuestionChanged, true).is_none());
}
