//! The one-pass reader against the two-pass one: the same documents, the
//! same results and errors.

use super::super::{
    read_document, read_document_two_pass, read_document_with, read_single_document,
    without_schema_texts,
};
use super::*;
use crate::elicitation::schema::FormSchema;
use std::sync::Arc;

fn describe(r: Result<Document, InputFailure>) -> String {
    match r {
        Ok(doc) => format!("{doc:?}"),
        Err(f) => format!("error {} reply {:?}", f.error, f.reply_id),
    }
}

/// Documents that stress what the one pass keeps as text, skips or
/// refuses.
fn corpus() -> Vec<String> {
    let s = r#"{"type":"object","properties":{"a":{"type":"string","default":"x"}}}"#;
    let deep = |n: usize| {
        format!(
            r#"{{"type":"object","x":{}{}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let req = |id: &str, rest: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}{rest}}}"#
        )
    };
    let mut docs = vec![
        req("1", ""),
        req(r#""\u0041""#, ""),
        req("1e2", ""),
        req("null", ""),
        req("[1]", ""),
        req("1", r#","id":2"#),
        req(
            "1",
            r#","params":{"message":"n","requestedSchema":{"type":"object"}}"#,
        ),
        req("1", r#","requestState":"s\u0041","requestState":"t""#),
        req("1", r#","requestState":null"#),
        req("1", r#","requestedSchema":{"type":"object"}"#),
        req("1", r#","result":{"requestState":"r"}"#),
        req("1", r#","result":"x""#),
        req(
            "1",
            &format!(r#","deep":{}{}"#, "[".repeat(126), "]".repeat(126)),
        ),
        req("1", " x"),
        format!(r#"{{"message":"m","requestedSchema":{}}}"#, deep(125)),
        format!(
            r#"{{"method":"elicitation/create","params":{{"requestedSchema":{}}}}}"#,
            deep(125)
        ),
        format!(
            r#"{{"method":"elicitation/create","params":{{"requestedSchema":{}}}}}"#,
            deep(124)
        ),
        format!(
            r#"{{"method":"elicitation/create","params":{{"requestedSchema":{s},"requestedSchema":{s}}}}}"#
        ),
        format!(r#"{{"method":"elicitation/create","params":{{"requestedSchema":"\ud800"}}}}"#),
        format!(r#"{{"method":"elicitation/create","params":{{"requested\u0053chema":{s}}}}}"#),
        format!(
            r#"{{"method":"elicitation/create","params":{{"$serde_json::private::Number":"1"}}}}"#
        ),
        r#"{"$serde_json::private::Number":"1"}"#.into(),
        r#"{"$serde_json::private::RawValue":"{}"}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":12}"#.into(),
        format!(r#"{{"message":"m","requestedSchema":null,"requestState":{{"k":[1]}}}}"#),
        format!(
            r#"{{"resultType":"input_required","inputRequests":{{"a":{{"method":"elicitation/create","params":{{"requestedSchema":{s}}}}}}},"requestState":"st"}}"#
        ),
        r#"{"resultType":"input_required","inputRequests":{},"requestState":null}"#.into(),
        format!(
            r#"{{"resultType":"input_required","inputRequests":{{"a":{{"method":"x"}},"a":{{"method":"y"}}}},"requestedSchema":{s}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{{"resultType":"input_required","inputRequests":{{}},"requestState":"\u0041"}}}}"#
        ),
        format!(
            r#"{{"code":-32042,"data":{{"elicitations":[{{"mode":"url","url":"https://e.x","elicitationId":"i"}}]}},"id":5}}"#
        ),
        r#"{"foo":1,"foo":2,"bar":3}"#.into(),
        // The schema's text elsewhere than (or before) its own slot.
        req("1", &format!(r#","x":{s}"#)),
        format!(r#"{{"x":{s},"message":"m","requestedSchema":{s}}}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":6,"method":"elicitation/create","params":{{"_meta":{{"io.modelcontextprotocol/related-task":{s}}},"message":"m","requestedSchema":{s}}}}}"#
        ),
        format!(r#"{{"message":"{{}}","requestedSchema":{{}}}}"#),
        format!(r#"{{"x":{{"requestedSchema":{s}}},"message":"m","requestedSchema":{s}}}"#),
        format!(
            r#"{{"method":"elicitation/create","params":{{"_meta":{{"k":{{"requestedSchema":{s}}}}},"message":"m","requestedSchema":{s}}}}}"#
        ),
        format!(r#"{{"message":"m","requestedSchema":{s} x}}"#),
        format!(r#"{{"message":"m","requestedSchema":{s}}} x"#),
        format!(r#"{{"message":"m","requestedSchema":[{s}]}}"#),
        format!(r#"{{"message":"m","requestedSchema":{{"k":{s}}}}}"#),
        format!(r#"{{"message":"m","requestedSchema":{s},"requestedSchema":{s}}}"#),
        r#"[]"#.into(),
    ];
    // The repository's fixtures, two folders above this crate.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                docs.push(std::fs::read_to_string(p).unwrap());
            }
        }
    }
    docs
}

/// Reads every corpus document with the one pass (`keep_schema_text`
/// as given) and with `whole`, and checks both against the two-pass
/// reader, seen through `seen`. Returns how many the one pass took.
fn agree_with_two_passes(
    keep_schema_text: bool,
    whole: fn(&str) -> Result<Document, InputFailure>,
    seen: fn(Result<Document, InputFailure>) -> String,
) -> usize {
    let mut one_pass = 0;
    for doc in corpus() {
        let two = seen(read_document_two_pass(&doc));
        let seed = OnePassSeed::new(keep_schema_text);
        if let Some(one) = read_in_one_pass(&doc, &|_| None, None, seed) {
            one_pass += 1;
            assert_eq!(describe(one), two, "{doc}");
        }
        assert_eq!(describe(whole(&doc)), two, "{doc}");
    }
    one_pass
}

#[test]
fn one_pass_reads_what_two_passes_read() {
    let one_pass = agree_with_two_passes(true, read_document, describe);
    // Most documents take the one pass, fixtures included.
    assert!(one_pass > 30, "{one_pass}");
}

/// Read once (no cache), a schema is built in the same pass: the same
/// document, the same errors at the same line and column, only without
/// the schema's text.
#[test]
fn a_single_document_reads_as_two_passes_do_without_schema_texts() {
    let built_in_place = agree_with_two_passes(false, read_single_document, |r| {
        describe(r.map(without_schema_texts))
    });
    assert!(built_in_place > 30, "{built_in_place}");
    for doc in corpus() {
        if let Ok(d) = read_single_document(&doc) {
            assert!(d.entries.iter().all(|e| e.schema_text.is_none()), "{doc}");
        }
    }
}

#[test]
fn the_likely_schema_text_changes_nothing_but_the_work() {
    let s = r#"{"type":"object","properties":{"a":{"type":"string","default":"x"}}}"#;
    let texts = [s, "{}", r#"{"type":"object"}"#];
    let forms: Vec<(Arc<FormSchema>, usize)> = texts
        .iter()
        .map(|t| {
            let v: Value = serde_json::from_str(t).unwrap();
            (Arc::new(FormSchema::parse(&v).unwrap()), nesting(&v))
        })
        .collect();
    let known = |text: &str| {
        let i = texts.iter().position(|t| *t == text)?;
        Some(KnownSchema {
            form: forms[i].0.clone(),
            nesting: forms[i].1,
        })
    };
    for doc in corpus() {
        let plain = describe(read_document_with(&doc, &known, None));
        for likely in texts.into_iter().chain([r#""x""#, "{", "{}}"]) {
            let with = describe(read_document_with(&doc, &known, Some(likely)));
            assert_eq!(with, plain, "likely {likely}: {doc}");
        }
    }
}

#[test]
fn the_likely_schema_is_swapped_out_only_from_its_slot() {
    let s = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let swapped_schema = |doc: &str| {
        let (m, at, schema) = swap_out(doc, s)?;
        let (_, (bare, params)) = read_swapped(&m, at, schema)?;
        Some((bare.map(str::to_string), params.map(str::to_string)))
    };
    let rpc = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}"#
    );
    assert_eq!(swapped_schema(&rpc), Some((None, Some(s.to_string()))));
    let bare = format!(r#"{{"message":"m","requestedSchema":{s}}}"#);
    assert_eq!(swapped_schema(&bare), Some((Some(s.to_string()), None)));
    let after_another = format!(r#"{{"x":{s},"message":"m","requestedSchema" : {s}}}"#);
    assert_eq!(
        swapped_schema(&after_another),
        Some((Some(s.to_string()), None))
    );
    for elsewhere in [
        format!(r#"{{"x":{{"requestedSchema":{s}}},"message":"m","requestedSchema":{s}}}"#),
        format!(r#"{{"message":"m","requestedSchema":{{}},"x":{{"requestedSchema":{s}}}}}"#),
        format!(r#"{{"message":"m","requestedSchema":[{s}]}}"#),
        format!(r#"{{"message":"m","requestedSchema":{s} x}}"#),
        r#"{"message":"m"}"#.to_string(),
    ] {
        assert_eq!(swapped_schema(&elsewhere), None, "{elsewhere}");
    }
}

#[test]
fn a_known_schema_is_not_built() {
    let s = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let form = Arc::new(FormSchema::parse(&serde_json::from_str(s).unwrap()).unwrap());
    let known = |text: &str| {
        (text == s).then(|| KnownSchema {
            form: form.clone(),
            nesting: 3,
        })
    };
    let doc = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}"#
    );
    let read = read_document_with(&doc, &known, None).unwrap();
    let entry = &read.entries[0];
    assert!(entry.form.as_ref().is_some_and(|f| Arc::ptr_eq(f, &form)));
    assert_eq!(entry.params.requested_schema, None);
    assert_eq!(entry.schema_text, None);
    // Unknown text (here: other spacing) is built as usual.
    let spaced = doc.replace(r#""type":"string""#, r#""type": "string""#);
    let read = read_document_with(&spaced, &known, None).unwrap();
    assert!(read.entries[0].form.is_none());
    assert!(read.entries[0].params.requested_schema.is_some());
    assert!(read.entries[0].schema_text.is_some());
}
