//! The native checks against the `jsonschema` crate, message for message.
//!
//! Each case is one property schema from MCP's form subset (with the
//! keywords' values drawn near their edges) and one value. The field is
//! checked twice: as parsed (native rules), and with the same schema
//! compiled by `jsonschema`, the way every field was checked before the
//! native rules existed. The two answers, messages included, must be equal.
//! Strings are drawn from shapes that sit on the edges of the formats
//! (calendar days, leap seconds, offsets, quoted and bracketed addresses,
//! URI delimiters) as well as from arbitrary text.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Map, Number, Value};

use super::check::compile;
use super::model::{FieldRules, FormField};
use super::native::NativeRules;

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(512);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

fn number(text: &str) -> Value {
    Value::Number(serde_json::from_str::<Number>(text).unwrap())
}

const NUMBER_TEXTS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "100",
    "1.0",
    "1.5",
    "-1.5",
    "0.5",
    "1e2",
    "2.5e1",
    "1e-3",
    "9007199254740992",
    "9007199254740993",
    "9007199254740992.0",
    "18446744073709551615",
    "-9223372036854775808",
    "9223372036854775807",
    "1.7976931348623157e308",
];

fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(NUMBER_TEXTS).prop_map(number),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
    ]
}

const WORDS: &[&str] = &["a", "b", "ab", "hero-1", "Ünï", "x y", ""];

fn arb_words() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(WORDS), 1..4).prop_map(|v| {
        let mut out: Vec<String> = Vec::new();
        for w in v {
            if !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
        out
    })
}

fn arb_count() -> impl Strategy<Value = Option<Value>> {
    prop::option::of((0u64..6).prop_map(Value::from))
}

fn arb_limit() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(arb_number())
}

fn put(obj: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        obj.insert(key.into(), v);
    }
}

/// A property schema inside the native subset.
fn arb_schema() -> impl Strategy<Value = Value> {
    let text = (
        arb_count(),
        arb_count(),
        prop::option::of(prop::sample::select(
            &["date", "date-time", "email", "uri"][..],
        )),
    )
        .prop_map(|(min, max, format)| {
            let mut o = Map::new();
            o.insert("type".into(), json!("string"));
            put(&mut o, "minLength", min);
            put(&mut o, "maxLength", max);
            put(&mut o, "format", format.map(Value::from));
            Value::Object(o)
        });
    let numeric = (
        prop::sample::select(&["integer", "number"][..]),
        arb_limit(),
        arb_limit(),
    )
        .prop_map(|(ty, min, max)| {
            let mut o = Map::new();
            o.insert("type".into(), json!(ty));
            put(&mut o, "minimum", min);
            put(&mut o, "maximum", max);
            Value::Object(o)
        });
    let choice = (arb_words(), any::<bool>()).prop_map(|(words, titled)| {
        if titled {
            let one_of: Vec<Value> = words
                .iter()
                .map(|w| json!({"const": w, "title": format!("T {w}")}))
                .collect();
            json!({"type": "string", "oneOf": one_of})
        } else {
            json!({"type": "string", "enum": words})
        }
    });
    let choices =
        (arb_words(), 0u8..3, arb_count(), arb_count()).prop_map(|(words, style, min, max)| {
            let items = match style {
                0 => json!({"type": "string", "enum": words}),
                1 => json!({"enum": words}),
                _ => {
                    json!({"anyOf": words.iter().map(|w| json!({"const": w})).collect::<Vec<_>>()})
                }
            };
            let mut o = Map::new();
            o.insert("type".into(), json!("array"));
            o.insert("items".into(), items);
            put(&mut o, "minItems", min);
            put(&mut o, "maxItems", max);
            Value::Object(o)
        });
    prop_oneof![
        text,
        numeric,
        choice,
        choices,
        Just(json!({"type": "boolean", "title": "B", "default": true})),
    ]
}

/// Strings on the edges of the four formats, and any text.
fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{4}-[0-1][0-9]-[0-3][0-9]",
        "[0-9]{4}-[0-1][0-9]-[0-3][0-9][Tt ][0-2][0-9]:[0-5][0-9]:[0-6][0-9](\\.[0-9]{0,2})?([Zz]|[+-][0-2][0-9]:[0-6][0-9]|[+-][0-9]{4})?",
        "(19|20)[0-9]{2}-02-(2[89]|30)(T23:59:60Z)?",
        // Leap seconds: only at 23:59 UTC, after the offset.
        "2016-12-31T(23|2[0-2]|0[0-1]):(59|5[0-8]|[0-3][0-9]):60([Zz]|[+-]0[0-2]:(00|30|59|01))",
        "[a-zA-Z0-9.!#+_\"-]{0,6}@[a-z0-9.-]{0,10}",
        "[a-z\"]{0,3}@\\[((IPv6|ipv6):[0-9a-f:]{0,8}|[0-9.]{0,15})\\]",
        "[a-z]{1,3}@(xn--[a-z0-9]{0,6}|[a-z]{2}--[a-z]{0,3})\\.[a-z]{2}",
        "[a-zA-Z][a-zA-Z0-9+.-]{0,4}:(//)?[a-zA-Z0-9/?#%:@\\[\\]!$&'()*+,;=._~ -]{0,14}",
        "[/a-z0-9:%.#?]{0,10}",
        ".{0,8}",
    ]
}

fn arb_value(words: Vec<String>) -> impl Strategy<Value = Value> {
    let word = prop::sample::select(words);
    let leaf = prop_oneof![
        arb_text().prop_map(Value::from),
        word.prop_map(Value::from),
        arb_number(),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    prop_oneof![
        3 => leaf.clone(),
        1 => prop::collection::vec(leaf, 0..5).prop_map(Value::Array),
        1 => Just(json!({"a": 1})),
    ]
}

fn arb_case() -> impl Strategy<Value = (Value, Value)> {
    arb_schema().prop_flat_map(|schema| {
        let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        words.push("zzz".into());
        (Just(schema), arb_value(words))
    })
}

/// The field as parsed, and the same field checked by `jsonschema`.
fn both(schema: &Value) -> (FormField, FormField) {
    let native = FormField::parse("f", schema, false);
    assert!(
        matches!(native.rules, FieldRules::Native { .. }),
        "{schema} should be in the native subset"
    );
    let mut compiled = native.clone();
    compiled.rules = FieldRules::Compiled(compile(schema).expect("a subset schema compiles"));
    (native, compiled)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn native_checks_say_what_jsonschema_says((schema, value) in arb_case()) {
        prop_assert!(NativeRules::of(&schema).is_some());
        let (native, compiled) = both(&schema);
        prop_assert_eq!(native.check(&value), compiled.check(&value), "schema {} value {}", schema, value);
    }
}

/// Cases the generators reach only by luck, pinned.
#[test]
fn native_checks_agree_on_pinned_edges() {
    let cases: &[(Value, &[&str])] = &[
        (
            json!({"type": "string", "format": "email"}),
            &[
                "ada@example.com",
                "\"\"@example.com",
                "\"a b\"@example.com",
                "ada@[127.0.0.1]",
                "ada@[IPv6:::1]",
                "ada@[ipv6:::1]",
                "ada@[::1]",
                "ada@xn--bcher-kva.example",
                "ada@xn--zz.example",
                "ada@ab--cd.example",
                "ada@XN--bcher-kva.example",
                "ada@-a.example",
                "ada@a.example.",
                "ünï@example.com",
                "ada@exämple.com",
                "a@b",
                "a..b@example.com",
            ],
        ),
        (
            json!({"type": "string", "format": "date-time"}),
            &[
                "2016-12-31T23:59:60Z",
                "2016-12-31T23:59:60+00:00",
                "2016-12-31T15:59:60-08:00",
                "2017-01-01T00:29:60+00:30",
                "2016-12-31T23:59:60+01:00",
                "2016-12-31T22:59:60Z",
                "2016-12-31T23:58:60Z",
                "2016-12-31T23:58:60+00:00",
                "2017-01-01T00:58:60+01:00",
                "2017-01-01T00:59:60+01:00",
                "2016-12-31T22:59:60-01:00",
                "2025-11-25t10:00:00z",
                "2025-11-25T10:00:00.Z",
                "2025-11-25T10:00:00+01:60",
                "2025-11-25T10:00:00+24:00",
                "2025-11-25T1:00:00Z",
                "2025-11-25TT10:00:00Z",
                "2025-11-25",
            ],
        ),
        (
            json!({"type": "string", "format": "uri"}),
            &[
                "https://example.com/a?b=c#d",
                "urn:isbn:0451450523",
                "http://[::1]:8080/",
                "http://[v1.x]/",
                "http://exa mple.com/",
                "http://%zz/",
                "a:",
                "1a:b",
                "",
            ],
        ),
    ];
    for (schema, texts) in cases {
        let (native, compiled) = both(schema);
        for text in *texts {
            let v = Value::from(*text);
            assert_eq!(native.check(&v), compiled.check(&v), "{schema} {v}");
        }
    }
}

/// The point of the native rules: a form of plain fields never compiles a
/// JSON Schema (the first compilation builds jsonschema's meta-validator).
/// Only a value the native rules leave undecided compiles the field.
#[test]
fn a_native_field_compiles_only_for_a_value_it_cannot_decide() {
    let compiled = |f: &FormField| match &f.rules {
        FieldRules::Native { format_checker, .. } => format_checker.get().is_some(),
        _ => panic!("not native"),
    };
    let field = FormField::parse("e", &json!({"type": "string", "format": "email"}), true);
    assert_eq!(field.check(&json!("ada@example.com")), Ok(()));
    assert!(field.check(&json!("nope")).is_err());
    assert!(field.check(&json!(5)).is_err());
    assert!(!compiled(&field), "a plain address compiled the schema");
    assert_eq!(field.check(&json!("ada@xn--bcher-kva.example")), Ok(()));
    assert!(
        compiled(&field),
        "an A-label domain is jsonschema's to decide"
    );
}
