//! `--lines` keeps parsed schemas and, for a schema it has seen, reads the
//! line in one pass without building the schema's tree. These tests check
//! that a stream gives, line for line, exactly what each line gives alone
//! (a fresh cache, as a single document is resolved), whatever the lines
//! share or do not share with the ones before.

use crate::common::Test;
use elicit::elicitation::resolve::{NoTerminal, SchemaCache};
use elicit::{resolve_text, FormSchema, ScriptedAnswers};
use serde_json::{json, Map, Value};

const SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string","title":"Name"},"email":{"type":"string","format":"email"},"age":{"type":"integer","minimum":0,"default":42},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["a"]}},"required":["name"]}"#;

fn request(id: &str, message: &str, schema: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{{"message":{message},"requestedSchema":{schema}}}}}"#
    )
}

/// A schema `levels` arrays deep under one of its keywords.
fn deep_schema(levels: usize) -> String {
    format!(
        r#"{{"type":"object","properties":{{"name":{{"type":"string"}}}},"x":{}{}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

/// Lines that share the schema's text (or nearly) and differ in the rest.
fn stream() -> Vec<String> {
    let s = SCHEMA;
    let r = |id: &str| request(id, r#""Who?""#, s);
    vec![
        r("1"),
        r(r#""abc""#),
        r("1.0"),
        r("1e2"),
        r(r#""\u0041""#),
        request("7", r#""another message""#, s),
        request("8", "12", s),
        // Duplicate keys: the last value wins, the id goes back as written.
        r("9").replace(r#""id":9"#, r#""id":9,"id":10"#),
        r("11").replace(r#""jsonrpc":"2.0""#, r#""jsonrpc":"2.0","jsonrpc":"1.0""#),
        r("12").replace(r#""requestedSchema":"#, r#""requestedSchema":{"type":"object"},"requestedSchema":"#),
        format!(r#"{},"params":{{"message":"again","requestedSchema":{s}}}}}"#, &r("13")[..r("13").len() - 1]),
        // The same prefix, then a malformed or different schema.
        request("14", r#""m""#, &s[..s.len() - 2]),
        request("15", r#""m""#, &s[..s.len() - 30]),
        request("16", r#""m""#, &s.replace("\"a\"", "\"\\ud800\"")),
        request("17", r#""m""#, &s.replace("Name", "Na\tme")),
        request("18", r#""m""#, &s.replace(',', ", ")),
        request("19", r#""m""#, &s.replace("42", "4.2e1")),
        r("20") + " trailing",
        r("21") + "   ",
        // Other shapes carrying the same schema text.
        format!(r#"{{"message":"bare","requestedSchema":{s}}}"#),
        format!(r#"{{"requestState":"st\u0041te","message":"bare","requestedSchema":{s}}}"#),
        format!(r#"{{"mode":"url","message":"go","url":"https://example.com/x","requestedSchema":{s}}}"#),
        format!(r#"{{"resultType":"input_required","inputRequests":{{"a":{{"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}}},"requestState":"st"}}"#),
        format!(r#"{{"resultType":"input_required","requestedSchema":{s},"inputRequests":{{"a":{{"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}}},"requestState":null}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":22,"result":{{"resultType":"input_required","inputRequests":{{"a":{{"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}}}}}}}"#),
        r("23").replace(r#""params":{"#, r#""params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}},"#),
        r("24").replace(r#""requestedSchema""#, r#""requested\u0053chema""#),
        r("null"),
        r("[1]"),
        r(r#"{"a":1}"#),
        r#"{"jsonrpc":"2.0","id":25,"method":"elicitation/create","params":12}"#.into(),
        r#"{"$serde_json::private::Number":"12"}"#.into(),
        format!(r#"{{"jsonrpc":"2.0","id":26,"method":"elicitation/create","params":{{"$serde_json::private::Number":"1","requestedSchema":{s}}}}}"#),
        r("27").replace(r#""jsonrpc":"2.0","#, r#""jsonrpc":"2.0","deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"#),
        // A schema nested as deeply as a bare one may be is one level too
        // deep in a request's params, cached or not.
        format!(r#"{{"message":"m","requestedSchema":{}}}"#, deep_schema(125)),
        request("28", r#""m""#, &deep_schema(125)),
        request("29", r#""m""#, &deep_schema(124)),
        format!(r#"{{"message":"m","requestedSchema":{}}}"#, deep_schema(125)),
        String::new(),
        "{}".into(),
        r("30"),
    ]
}

/// What resolving one line gives: the output, or the error and reply id.
fn outcome(text: &str, cache: &mut SchemaCache, answers: &[&str]) -> String {
    let answers: Vec<String> = answers.iter().map(|a| a.to_string()).collect();
    let scripted = ScriptedAnswers::parse(&answers, |_| Ok(String::new())).unwrap();
    let mut nobody = NoTerminal {
        detail: "test".into(),
    };
    let text = match elicit::elicitation::input::decode(text.as_bytes()) {
        Ok(t) => t,
        Err(e) => return format!("error: {e}"),
    };
    match resolve_text(text, &scripted, &mut nobody, cache, false) {
        Ok(r) => format!("ok: {} {:?}", r.output, r.warnings),
        Err(f) => format!(
            "error: {} (reply id {:?})",
            f.error,
            f.reply_id.map(|r| r.get().to_string())
        ),
    }
}

#[test]
fn a_stream_resolves_each_line_as_it_resolves_alone() {
    for answers in [
        &["accept", "name=Ada", "email=ada@example.com"][..],
        &["accept"][..],
        &["decline"][..],
        &["accept", "name=Ada", "email=nope"][..],
    ] {
        let mut shared = SchemaCache::default();
        for (i, line) in stream().iter().enumerate() {
            let alone = outcome(line, &mut SchemaCache::default(), answers);
            let streamed = outcome(line, &mut shared, answers);
            assert_eq!(streamed, alone, "line {} with {answers:?}: {line}", i + 1);
        }
    }
}

#[test]
fn the_binary_streams_what_it_resolves_one_line_at_a_time() {
    let lines = stream();
    let run = |input: String| {
        Test::new()
            .args(["--lines", "--no-input", "-a", "accept", "-a", "name=Ada"])
            .stdin(input)
            // 2: some lines fail, on purpose.
            .status_in(&[0, 2])
            .stderr_unchecked("the errors are compared as stdout gives them, line for line")
            .run()
            .stdout()
            .to_string()
    };
    let streamed = run(lines.join("\n") + "\n");
    let streamed: Vec<&str> = streamed.lines().collect();
    assert_eq!(streamed.len(), lines.len());
    for (i, line) in lines.iter().enumerate() {
        // Alone, the line is line 1 of its stream.
        let alone = run(format!("{line}\n"));
        let want = alone
            .trim_end()
            .replace(r#""line":1"#, &format!(r#""line":{}"#, i + 1))
            .replace("at line 1,", &format!("at line {},", i + 1));
        assert_eq!(streamed[i], want, "line {}: {line}", i + 1);
    }
}

/// The order `FormSchema::order` had before it sorted: each field removed
/// from the content and appended, the rest after, as it came.
fn order_by_removal(form: &FormSchema, mut content: Map<String, Value>) -> Map<String, Value> {
    let mut ordered = Map::new();
    for f in &form.fields {
        if let Some(v) = content.shift_remove(&f.name) {
            ordered.insert(f.name.clone(), v);
        }
    }
    ordered.extend(content);
    ordered
}

#[test]
fn content_is_put_in_field_order_with_unknown_keys_last() {
    let form = FormSchema::parse(&serde_json::from_str(SCHEMA).unwrap()).unwrap();
    let keys = ["tags", "zz", "name", "age", "aa", "email"];
    // Every arrangement of every subset of the keys.
    for mask in 0u32..(1 << keys.len()) {
        let chosen: Vec<&str> = (0..keys.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| keys[i])
            .collect();
        let mut perm = chosen.clone();
        for rotation in 0..perm.len().max(1) {
            perm.rotate_left(if rotation == 0 { 0 } else { 1 });
            for reversed in [false, true] {
                let mut order = perm.clone();
                if reversed {
                    order.reverse();
                }
                let content: Map<String, Value> = order
                    .iter()
                    .enumerate()
                    .map(|(i, k)| (k.to_string(), json!(i)))
                    .collect();
                let got = form.order(content.clone());
                let want = order_by_removal(&form, content);
                assert_eq!(
                    got.iter().collect::<Vec<_>>(),
                    want.iter().collect::<Vec<_>>(),
                    "{order:?}"
                );
            }
        }
    }
}
