//! Property tests (proptest).
//!
//! 1. Schemas built from the MCP `requestedSchema` grammar (every kind: text
//!    with min/maxLength, format and pattern; integer and number with
//!    minimum/maximum; boolean; untitled, titled and legacy single selects;
//!    untitled and titled multi-selects with min/maxItems; defaults;
//!    required), answered with random `--answer`s through the whole library
//!    pipeline (`input::read_document` -> `resolve_document`). Each outcome is
//!    compared with a model written here, independently of elicit's per-field
//!    path:
//!    - content elicit accepts validates against the whole `requestedSchema`
//!      compiled as ONE object schema with `additionalProperties: false`
//!      (the `jsonschema` crate), and against the hand-written oracle below;
//!    - every field elicit rejects is a real violation, and every real
//!      violation is reported;
//!    - integer fields go out as JSON integers; content keys are in schema
//!      order.
//! 2. Random bytes and random JSON into every input path never panic.
//!
//! `cargo test --test properties` runs 64 cases per property (a few
//! seconds); `PROPTEST_CASES=5000 cargo test --release --test properties`
//! runs more.

use std::collections::BTreeSet;

use elicit::elicitation::answers::FormPlan;
use elicit::elicitation::resolve::{NoTerminal, SchemaCache};
use elicit::text::sanitize::{sanitize_block, sanitize_line};
use elicit::text::url_safety::assess_url;
use elicit::{elicitation::input, ElicitError, FormSchema, ScriptedAnswers};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Map, Value};

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    Config {
        cases,
        // Shrinking a failure should not take minutes.
        max_shrink_iters: 2048,
        // Failures are turned into named tests, not files in the tree.
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------
// The model: a form as the spec's grammar describes it.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fmt {
    Email,
    Uri,
    Date,
    DateTime,
}

impl Fmt {
    fn name(self) -> &'static str {
        match self {
            Fmt::Email => "email",
            Fmt::Uri => "uri",
            Fmt::Date => "date",
            Fmt::DateTime => "date-time",
        }
    }

    /// Labelled samples: (text, valid per RFC 5321 / RFC 3986 absolute URI /
    /// RFC 3339 full-date / RFC 3339 date-time).
    fn samples(self) -> &'static [(&'static str, bool)] {
        match self {
            Fmt::Email => &[
                ("ada@example.com", true),
                ("a.b+tag@sub.example.org", true),
                ("x@y.io", true),
                ("nope", false),
                ("@example.com", false),
                ("ada@", false),
                ("ada@@example.com", false),
                ("ada lovelace@example.com", false),
            ],
            Fmt::Uri => &[
                ("https://example.com/a?b=c#d", true),
                ("mailto:ada@example.com", true),
                ("urn:isbn:0451450523", true),
                ("http://[::1]:8080/", true),
                ("example.com", false),
                ("/relative/path", false),
                ("http://exa mple.com/", false),
                ("://x", false),
            ],
            Fmt::Date => &[
                ("2025-11-25", true),
                ("2024-02-29", true),
                ("0001-01-01", true),
                ("2025-13-01", false),
                ("2025-02-30", false),
                ("2023-02-29", false),
                ("2025-1-01", false),
                ("20251125", false),
                ("2025-11-25T00:00:00Z", false),
            ],
            Fmt::DateTime => &[
                ("2025-11-25T10:00:00Z", true),
                ("2025-11-25T10:00:00.5+02:00", true),
                ("2025-11-25T23:59:59-05:30", true),
                ("2025-11-25T10:00:00", false),
                ("2025-11-25", false),
                ("2025-11-25T24:00:01Z", false),
                ("2025-11-25T10:00Z", false),
                ("2025-02-30T10:00:00Z", false),
            ],
        }
    }

    /// Independent verdict: the label of a sample; anything else this test
    /// generates for a format field is `[a-z0-9]{0,6}`, which is none of the
    /// four formats (no `@`, no scheme, too short for a date).
    fn valid(self, s: &str) -> bool {
        self.samples()
            .iter()
            .find(|(t, _)| *t == s)
            .is_some_and(|(_, ok)| *ok)
    }
}

const PATTERNS: &[&str] = &["^[a-z]+$", "^[0-9]{3}$", "^A", "b"];

#[derive(Debug, Clone, Copy, PartialEq)]
enum SelectStyle {
    /// `enum`
    Untitled,
    /// `oneOf` of `{const, title}`
    Titled,
    /// `enum` + `enumNames`
    Legacy,
}

#[derive(Debug, Clone)]
enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<Fmt>,
        pattern: Option<&'static str>,
    },
    Integer {
        min: Option<i64>,
        max: Option<i64>,
    },
    Number {
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    Single {
        style: SelectStyle,
        values: Vec<String>,
    },
    Multi {
        titled: bool,
        values: Vec<String>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

/// Choice labels are derived from values: `abc` is shown as `L-ABC`. They
/// never equal a value, even ignoring case.
fn label_of(value: &str) -> String {
    format!("L-{}", value.to_uppercase())
}

impl Kind {
    fn labels(&self) -> bool {
        match self {
            Kind::Single { style, .. } => *style != SelectStyle::Untitled,
            Kind::Multi { titled, .. } => *titled,
            _ => false,
        }
    }

    fn values(&self) -> &[String] {
        match self {
            Kind::Single { values, .. } | Kind::Multi { values, .. } => values,
            _ => &[],
        }
    }

    /// What a select answer `text` means: a value, a label (when the schema
    /// has labels), or a value in another case; anything else stays as typed.
    fn choice(&self, text: &str) -> String {
        let values = self.values();
        if values.iter().any(|v| v == text) {
            return text.to_string();
        }
        if self.labels() {
            if let Some(v) = values.iter().find(|v| label_of(v) == text) {
                return v.clone();
            }
        }
        if let Some(v) = values.iter().find(|v| v.eq_ignore_ascii_case(text)) {
            return v.clone();
        }
        text.to_string()
    }
}

#[derive(Debug, Clone)]
struct Field {
    name: String,
    kind: Kind,
    required: bool,
    default: Option<Value>,
}

fn property_schema(f: &Field) -> Value {
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    match &f.kind {
        Kind::Text {
            min,
            max,
            format,
            pattern,
        } => {
            put("type", json!("string"));
            if let Some(n) = min {
                put("minLength", json!(n));
            }
            if let Some(n) = max {
                put("maxLength", json!(n));
            }
            if let Some(fm) = format {
                put("format", json!(fm.name()));
            }
            if let Some(p) = pattern {
                put("pattern", json!(p));
            }
        }
        Kind::Integer { min, max } => {
            put("type", json!("integer"));
            if let Some(n) = min {
                put("minimum", json!(n));
            }
            if let Some(n) = max {
                put("maximum", json!(n));
            }
        }
        Kind::Number { min, max } => {
            put("type", json!("number"));
            if let Some(n) = min {
                put("minimum", json!(n));
            }
            if let Some(n) = max {
                put("maximum", json!(n));
            }
        }
        Kind::Boolean => put("type", json!("boolean")),
        Kind::Single { style, values } => {
            put("type", json!("string"));
            match style {
                SelectStyle::Untitled => put("enum", json!(values)),
                SelectStyle::Titled => put(
                    "oneOf",
                    Value::Array(
                        values
                            .iter()
                            .map(|v| json!({"const": v, "title": label_of(v)}))
                            .collect(),
                    ),
                ),
                SelectStyle::Legacy => {
                    put("enum", json!(values));
                    put(
                        "enumNames",
                        Value::Array(values.iter().map(|v| json!(label_of(v))).collect()),
                    );
                }
            }
        }
        Kind::Multi {
            titled,
            values,
            min,
            max,
        } => {
            put("type", json!("array"));
            if *titled {
                put(
                    "items",
                    json!({"anyOf": values
                        .iter()
                        .map(|v| json!({"const": v, "title": label_of(v)}))
                        .collect::<Vec<_>>()}),
                );
            } else {
                put("items", json!({"type": "string", "enum": values}));
            }
            if let Some(n) = min {
                put("minItems", json!(n));
            }
            if let Some(n) = max {
                put("maxItems", json!(n));
            }
        }
    }
    put("title", json!(format!("The {}", f.name)));
    if let Some(d) = &f.default {
        put("default", d.clone());
    }
    Value::Object(o)
}

fn requested_schema(fields: &[Field]) -> Value {
    let mut props = Map::new();
    for f in fields {
        props.insert(f.name.clone(), property_schema(f));
    }
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name.as_str())
        .collect();
    json!({"type": "object", "properties": props, "required": required})
}

// ---------------------------------------------------------------------------
// The independent oracle.

fn as_number(v: &Value) -> Result<f64, String> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("{n} is not finite")),
        other => Err(format!("{other} is not a number")),
    }
}

/// The oracle's own exact reading of a JSON number's text as a 64-bit
/// integer, by a different method than elicit's digit counting: write the
/// number out in full as a plain decimal string (exponents within ±400;
/// past that, decided by the sign of the exponent alone), then read it.
fn oracle_integer(text: &str) -> Result<i128, String> {
    let (neg, rest) = text.strip_prefix('-').map_or((false, text), |r| (true, r));
    let (mant, exp) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => (
            m,
            e.parse::<i64>().unwrap_or(if e.starts_with('-') {
                -100_000
            } else {
                100_000
            }),
        ),
        None => (rest, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    if digits.bytes().all(|b| b == b'0') {
        return Ok(0);
    }
    if exp > 400 {
        return Err(format!("{text} does not fit a 64-bit integer"));
    }
    if exp < -400 {
        return Err(format!("{text} is not whole"));
    }
    // Pad with zeros on both sides, then put the point back.
    let pad = 500usize;
    let padded = format!("{}{digits}{}", "0".repeat(pad), "0".repeat(pad));
    let at = (pad as i64 + int.len() as i64 + exp) as usize;
    let (whole, fraction) = padded.split_at(at);
    if fraction.bytes().any(|b| b != b'0') {
        return Err(format!("{text} is not whole"));
    }
    let whole = whole.trim_start_matches('0');
    let too_big = || format!("{text} does not fit a 64-bit integer");
    if whole.len() > 30 {
        return Err(too_big());
    }
    let magnitude: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_big())?
    };
    let value = if neg { -magnitude } else { magnitude };
    if value < i128::from(i64::MIN) || value > i128::from(u64::MAX) {
        return Err(too_big());
    }
    Ok(value)
}

fn oracle(kind: &Kind, v: &Value) -> Result<(), String> {
    match kind {
        Kind::Text {
            min,
            max,
            format,
            pattern,
        } => {
            let s = v.as_str().ok_or_else(|| format!("{v} is not a string"))?;
            let n = s.chars().count() as u64;
            if min.is_some_and(|m| n < m) {
                return Err(format!("{v}: {n} characters, under minLength"));
            }
            if max.is_some_and(|m| n > m) {
                return Err(format!("{v}: {n} characters, over maxLength"));
            }
            if let Some(f) = format {
                if !f.valid(s) {
                    return Err(format!("{v} is not a valid {}", f.name()));
                }
            }
            if let Some(p) = pattern {
                if !regex::Regex::new(p).unwrap().is_match(s) {
                    return Err(format!("{v} does not match {p}"));
                }
            }
            Ok(())
        }
        Kind::Integer { min, max } => {
            // elicit's rule beyond JSON Schema: an integer is decided on the
            // decimal text (never through f64), and must fit a 64-bit JSON
            // integer, or it would go out as a float or rounded.
            let Value::Number(n) = v else {
                return Err(format!("{v} is not a number"));
            };
            let i = oracle_integer(n.as_str())?;
            if min.is_some_and(|m| i < i128::from(m)) || max.is_some_and(|m| i > i128::from(m)) {
                return Err(format!("{v} is out of range"));
            }
            Ok(())
        }
        Kind::Number { min, max } => {
            let f = as_number(v)?;
            if min.is_some_and(|m| f < m) || max.is_some_and(|m| f > m) {
                return Err(format!("{v} is out of range"));
            }
            Ok(())
        }
        Kind::Boolean => v
            .is_boolean()
            .then_some(())
            .ok_or_else(|| format!("{v} is not a boolean")),
        Kind::Single { values, .. } => match v.as_str() {
            Some(s) if values.iter().any(|x| x == s) => Ok(()),
            _ => Err(format!("{v} is not one of {values:?}")),
        },
        Kind::Multi {
            values, min, max, ..
        } => {
            let items = v.as_array().ok_or_else(|| format!("{v} is not an array"))?;
            for item in items {
                match item.as_str() {
                    Some(s) if values.iter().any(|x| x == s) => {}
                    _ => return Err(format!("{item} is not one of {values:?}")),
                }
            }
            let n = items.len() as u64;
            if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                return Err(format!("{n} items, out of minItems/maxItems"));
            }
            Ok(())
        }
    }
}

/// Equal as answers: numbers by value (`2` and `2.0` are the same answer).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Whole numbers compare exactly (as f64, 2^53 + 1 would equal 2^53).
        (Value::Number(x), Value::Number(y)) => {
            match (oracle_integer(x.as_str()), oracle_integer(y.as_str())) {
                (Ok(a), Ok(b)) => a == b,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}

// ---------------------------------------------------------------------------
// Generators.

const NAMES: &[&str] = &[
    "name",
    "email",
    "age",
    "n2",
    "Zeta",
    "é-field",
    "with space",
    "x_1",
    "tags",
    "dry.run",
    "日付",
];

fn arb_fmt() -> impl Strategy<Value = Fmt> {
    prop_oneof![
        Just(Fmt::Email),
        Just(Fmt::Uri),
        Just(Fmt::Date),
        Just(Fmt::DateTime)
    ]
}

fn arb_choices() -> impl Strategy<Value = Vec<String>> {
    prop::collection::btree_set("[a-m]{1,4}", 1..5).prop_map(|s| s.into_iter().collect())
}

fn arb_kind() -> impl Strategy<Value = Kind> {
    let small = || prop::option::of(0u64..4);
    prop_oneof![
        (
            small(),
            prop::option::of(0u64..10),
            prop::option::weighted(0.4, arb_fmt()),
            prop::option::weighted(0.25, prop::sample::select(PATTERNS)),
        )
            .prop_map(|(min, max, format, pattern)| Kind::Text {
                min,
                max,
                format,
                pattern
            }),
        (prop::option::of(-10i64..50), prop::option::of(0i64..120))
            .prop_map(|(min, max)| Kind::Integer { min, max }),
        (prop::option::of(-40i32..40), prop::option::of(-40i32..400)).prop_map(|(min, max)| {
            Kind::Number {
                min: min.map(|i| f64::from(i) / 4.0),
                max: max.map(|i| f64::from(i) / 4.0),
            }
        }),
        Just(Kind::Boolean),
        (
            prop_oneof![
                Just(SelectStyle::Untitled),
                Just(SelectStyle::Titled),
                Just(SelectStyle::Legacy)
            ],
            arb_choices()
        )
            .prop_map(|(style, values)| Kind::Single { style, values }),
        (any::<bool>(), arb_choices(), small(), small()).prop_map(|(titled, values, min, max)| {
            Kind::Multi {
                titled,
                values,
                min,
                max,
            }
        }),
    ]
}

/// Strings a person might type into a text field of this kind.
fn text_value(kind: &Kind) -> BoxedStrategy<String> {
    match kind {
        Kind::Text {
            format: Some(f), ..
        } => {
            let samples: Vec<String> = f.samples().iter().map(|(s, _)| s.to_string()).collect();
            prop_oneof![
                3 => prop::sample::select(samples),
                1 => "[a-z0-9]{0,6}",
            ]
            .boxed()
        }
        Kind::Text {
            pattern: Some(_), ..
        } => prop_oneof![
            "[a-zA-Z0-9]{0,5}",
            Just("123".to_string()),
            Just("abc".to_string()),
            Just("Abc".to_string())
        ]
        .boxed(),
        _ => prop_oneof![
            "[a-z]{0,10}",
            // Multi-byte characters: lengths are counted in characters.
            "[a-zé😀\u{301} =@{\\[]{0,10}",
            ".{0,8}",
        ]
        .boxed(),
    }
}

fn number_text() -> BoxedStrategy<String> {
    prop_oneof![
        4 => (-20i64..130).prop_map(|i| i.to_string()),
        1 => (-20i64..130).prop_map(|i| format!(" {i} ")),
        1 => (-20i64..130).prop_map(|i| format!("{i}.0")),
        2 => (-200i32..500).prop_map(|i| format!("{:?}", f64::from(i) / 4.0)),
        2 => prop::sample::select(vec![
            "1e2", "1E1", "-0", "-0.0", "1.5e1", "1e300", "99999999999999999999",
            "18446744073709551615", "-9223372036854775808", "abc", "", "+1", "05",
            "0x10", "NaN", "Infinity", "1_000",
        ])
        .prop_map(str::to_string),
        3 => near_limit_decimal(),
    ]
    .boxed()
}

/// Decimal strings near the places an f64 reading goes wrong: the ends of
/// i64 and u64, 2^53, one part in 10^20 off a whole number, exponents that
/// underflow or overflow, the same value written with a point or exponent.
fn near_limit_decimal() -> BoxedStrategy<String> {
    let base = prop::sample::select(vec![
        "9223372036854775807",
        "9223372036854775808",
        "9223372036854775806",
        "18446744073709551615",
        "18446744073709551616",
        "18446744073709551614",
        "9007199254740992",
        "9007199254740993",
        "9007199254740991",
        "0",
        "1",
        "2",
        "100",
    ]);
    let sign = prop::sample::select(vec!["", "-"]);
    let tail = prop::sample::select(vec![
        "",
        ".0",
        ".000000000000000000000",
        ".00000000000000000001",
        ".99999999999999999999",
        ".5",
        "e0",
        "e1",
        "e-1",
        "e-400",
        "e400",
        "0e-1",
        "00e-2",
        ".0e0",
    ]);
    (sign, base, tail)
        .prop_map(|(s, b, t)| format!("{s}{b}{t}"))
        .boxed()
}

fn number_json() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => (-20i64..130).prop_map(Value::from),
        2 => (-200i32..500).prop_map(|i| json!(f64::from(i) / 4.0)),
        1 => prop::sample::select(vec![1e20, 1e300, -0.0, 2.0, 9.0e15, 1.0e16]).prop_map(|f| json!(f)),
        1 => Just(json!(u64::MAX)),
        3 => near_limit_decimal().prop_filter_map("not JSON (leading zeros)", |t| serde_json::from_str::<Value>(&t).ok()),
        1 => Just(json!("5")),
        1 => Just(json!(true)),
    ]
    .boxed()
}

const BOOL_TEXT: &[&str] = &[
    "true", "FALSE", "Yes", "no", "y", "N", "on", "off", "1", "0", " true ", "maybe", "", "2",
    "tru",
];

fn bool_model(t: &str) -> Option<bool> {
    match t.trim().to_lowercase().as_str() {
        "true" | "yes" | "y" | "on" | "1" => Some(true),
        "false" | "no" | "n" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// A select answer: a value, its label, the value in upper case, or a word
/// that is none of them.
fn pick(kind: &Kind) -> BoxedStrategy<String> {
    let values = kind.values().to_vec();
    prop_oneof![
        3 => prop::sample::select(values.clone()),
        2 => prop::sample::select(values.iter().map(|v| label_of(v)).collect::<Vec<_>>()),
        1 => prop::sample::select(values.iter().map(|v| v.to_uppercase()).collect::<Vec<_>>()),
        1 => "[n-z]{1,5}",
    ]
    .boxed()
}

/// How one field is answered.
#[derive(Debug, Clone)]
enum Given {
    /// `NAME=VALUE`, once per element.
    Text(Vec<String>),
    /// A value in a JSON object answer.
    Json(Value),
}

/// The value the answer means, or `None` when it cannot be read as the
/// field's type (itself a violation).
fn model_value(kind: &Kind, given: &Given) -> Option<Value> {
    // `NAME=VALUE` is read with the spaces around the value trimmed, as
    // around the name (README, Scripted answers); JSON answers keep them.
    let trimmed;
    let given = match given {
        Given::Text(ts) => {
            trimmed = Given::Text(ts.iter().map(|t| t.trim().to_string()).collect());
            &trimmed
        }
        other => other,
    };
    match (kind, given) {
        (Kind::Text { .. }, Given::Text(t)) => Some(json!(t[0])),
        (Kind::Integer { .. } | Kind::Number { .. }, Given::Text(t)) => {
            serde_json::from_str::<serde_json::Number>(t[0].trim())
                .ok()
                .map(Value::Number)
        }
        (Kind::Boolean, Given::Text(t)) => bool_model(&t[0]).map(Value::Bool),
        (Kind::Single { .. }, Given::Text(t)) => Some(json!(kind.choice(&t[0]))),
        (Kind::Multi { .. }, Given::Text(ts)) => {
            let mut items = Vec::new();
            for t in ts {
                if t.trim_start().starts_with('[') {
                    let list: Vec<Value> = serde_json::from_str(t).ok()?;
                    items.extend(list.into_iter().map(|v| match v {
                        Value::String(s) => json!(kind.choice(&s)),
                        other => other,
                    }));
                } else {
                    items.push(json!(kind.choice(t)));
                }
            }
            Some(Value::Array(items))
        }
        (Kind::Single { .. }, Given::Json(Value::String(s))) => Some(json!(kind.choice(s))),
        (Kind::Multi { .. }, Given::Json(Value::Array(items))) => Some(Value::Array(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => json!(kind.choice(s)),
                    other => other.clone(),
                })
                .collect(),
        )),
        (_, Given::Json(v)) => Some(v.clone()),
    }
}

fn arb_given(kind: &Kind) -> BoxedStrategy<Given> {
    match kind {
        Kind::Text { .. } => prop_oneof![
            3 => text_value(kind).prop_map(|s| Given::Text(vec![s])),
            2 => text_value(kind).prop_map(|s| Given::Json(json!(s))),
            1 => prop::sample::select(vec![json!(5), json!(true), Value::Null, json!(["x"])])
                .prop_map(Given::Json),
        ]
        .boxed(),
        Kind::Integer { .. } | Kind::Number { .. } => prop_oneof![
            3 => number_text().prop_map(|s| Given::Text(vec![s])),
            2 => number_json().prop_map(Given::Json),
        ]
        .boxed(),
        Kind::Boolean => prop_oneof![
            3 => prop::sample::select(BOOL_TEXT).prop_map(|s| Given::Text(vec![s.to_string()])),
            2 => prop::sample::select(vec![json!(true), json!(false), json!("true"), json!(1)])
                .prop_map(Given::Json),
        ]
        .boxed(),
        Kind::Single { .. } => prop_oneof![
            3 => pick(kind).prop_map(|s| Given::Text(vec![s])),
            2 => pick(kind).prop_map(|s| Given::Json(json!(s))),
            1 => Just(Given::Json(json!(3))),
        ]
        .boxed(),
        Kind::Multi { .. } => {
            let picks = prop::collection::vec(pick(kind), 0..5);
            prop_oneof![
                3 => prop::collection::vec(pick(kind), 1..5).prop_map(Given::Text),
                1 => picks.clone().prop_map(|p| Given::Text(vec![serde_json::to_string(&p).unwrap()])),
                2 => picks.prop_map(|p| Given::Json(json!(p))),
                1 => pick(kind).prop_map(|s| Given::Json(json!(s))),
                1 => Just(Given::Json(json!([1]))),
            ]
            .boxed()
        }
    }
}

/// A default: usually a valid-looking answer, sometimes the server's
/// mistake (a label, the wrong type, out of range).
fn arb_default(kind: &Kind) -> BoxedStrategy<Option<Value>> {
    let k = kind.clone();
    prop::option::weighted(
        0.5,
        arb_given(kind).prop_filter_map("needs a JSON default", move |g| match g {
            Given::Json(v) => Some(v),
            Given::Text(t) => model_value(&k, &Given::Text(t)),
        }),
    )
    .boxed()
}

fn arb_field(name: String) -> impl Strategy<Value = Field> {
    (arb_kind(), any::<bool>()).prop_flat_map(move |(kind, required)| {
        let name = name.clone();
        arb_default(&kind).prop_map(move |default| Field {
            name: name.clone(),
            kind: kind.clone(),
            required,
            default,
        })
    })
}

fn arb_fields() -> impl Strategy<Value = Vec<Field>> {
    prop::sample::subsequence(NAMES, 1..6)
        .prop_shuffle()
        .prop_flat_map(|names| {
            names
                .into_iter()
                .map(|n| arb_field(n.to_string()))
                .collect::<Vec<_>>()
        })
}

#[derive(Debug, Clone)]
struct Case {
    fields: Vec<Field>,
    /// Per field (same index): how it is answered, if at all.
    given: Vec<Option<Given>>,
    /// Names the schema does not have.
    extra: Vec<(String, Given)>,
    decision: Option<&'static str>,
    decision_first: bool,
}

fn arb_case() -> impl Strategy<Value = Case> {
    arb_fields().prop_flat_map(|fields| {
        let given: Vec<_> = fields
            .iter()
            .map(|f| prop::option::weighted(0.6, arb_given(&f.kind)))
            .collect();
        let extra = prop::collection::vec(
            (
                prop::sample::select(vec!["zz_bogus", "nope"]),
                prop_oneof![
                    Just(Given::Text(vec!["1".into()])),
                    Just(Given::Json(json!("x")))
                ],
            ),
            0..2,
        )
        .prop_map(|v| {
            let mut seen = BTreeSet::new();
            v.into_iter()
                .filter(|(n, _)| seen.insert(*n))
                .map(|(n, g)| (n.to_string(), g))
                .collect::<Vec<_>>()
        });
        let decision = prop_oneof![
            6 => Just(Some("accept")),
            2 => Just(None),
            1 => Just(Some("decline")),
            1 => Just(Some("cancel")),
        ];
        (
            Just(fields),
            given,
            prop::option::weighted(0.15, extra),
            decision,
            any::<bool>(),
        )
            .prop_map(|(fields, given, extra, decision, decision_first)| Case {
                fields,
                given,
                extra: extra.unwrap_or_default(),
                decision,
                decision_first,
            })
    })
}

impl Case {
    fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut object = Map::new();
        let answered = self
            .fields
            .iter()
            .zip(&self.given)
            .filter_map(|(f, g)| g.as_ref().map(|g| (f.name.clone(), g.clone())))
            .chain(self.extra.iter().cloned());
        for (name, given) in answered {
            match given {
                Given::Text(texts) => {
                    for t in texts {
                        args.push(format!("{name}={t}"));
                    }
                }
                Given::Json(v) => {
                    object.insert(name, v);
                }
            }
        }
        if !object.is_empty() {
            args.push(Value::Object(object).to_string());
        }
        if let Some(d) = self.decision {
            if self.decision_first {
                args.insert(0, d.to_string());
            } else {
                args.push(d.to_string());
            }
        }
        args
    }
}

#[derive(Debug, PartialEq)]
enum Expect {
    /// decline / cancel: no content.
    Action(&'static str),
    /// The fields with a violation (each must be reported, and only those).
    Reject(BTreeSet<String>),
    /// Nobody to ask for these (schema order).
    Needs(Vec<String>),
    /// Accepted with this content (schema order).
    Accept(Map<String, Value>),
}

fn expect(case: &Case) -> Expect {
    if let Some(d @ ("decline" | "cancel")) = case.decision {
        return Expect::Action(d);
    }
    let accept = case.decision == Some("accept");
    let mut errors = BTreeSet::new();
    let mut values = Map::new();
    for (name, _) in &case.extra {
        errors.insert(name.clone());
    }
    let mut missing = Vec::new();
    for (f, g) in case.fields.iter().zip(&case.given) {
        match g {
            Some(g) => match model_value(&f.kind, g) {
                Some(v) if oracle(&f.kind, &v).is_ok() => {
                    values.insert(f.name.clone(), v);
                }
                _ => {
                    errors.insert(f.name.clone());
                }
            },
            None => missing.push(f.name.clone()),
        }
    }
    if accept {
        for f in &case.fields {
            if !missing.contains(&f.name) {
                continue;
            }
            match &f.default {
                Some(d) if oracle(&f.kind, d).is_ok() => {
                    values.insert(f.name.clone(), d.clone());
                }
                _ if f.required => {
                    errors.insert(f.name.clone());
                }
                _ => {}
            }
        }
    }
    if !errors.is_empty() {
        Expect::Reject(errors)
    } else if accept || missing.is_empty() {
        let mut ordered = Map::new();
        for f in &case.fields {
            if let Some(v) = values.get(&f.name) {
                ordered.insert(f.name.clone(), v.clone());
            }
        }
        Expect::Accept(ordered)
    } else {
        Expect::Needs(missing)
    }
}

fn no_files(_: &str) -> Result<String, std::io::Error> {
    Err(std::io::ErrorKind::NotFound.into())
}

/// The whole object schema, for the independent `jsonschema` check.
fn whole_validator(fields: &[Field]) -> jsonschema::Validator {
    let mut schema = requested_schema(fields);
    schema["additionalProperties"] = json!(false);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the generated schema is valid JSON Schema")
}

fn check_case(case: &Case) -> Result<(), TestCaseError> {
    let schema = requested_schema(&case.fields);
    let doc_text = json!({"message": "Fill in", "requestedSchema": schema}).to_string();
    let doc = input::read_document(&doc_text)
        .map_err(|e| TestCaseError::fail(format!("read_document failed: {}", e.error)))?;
    let args = case.args();
    let expected = expect(case);
    let scripted = match ScriptedAnswers::parse(&args, no_files) {
        Ok(s) => s,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "args {args:?} do not parse: {e}"
            )))
        }
    };
    let mut person = NoTerminal {
        detail: "property test".into(),
    };
    let mut cache = SchemaCache::default();
    let got = elicit::elicitation::resolve_document(doc, &scripted, &mut person, &mut cache, false);
    let context = || format!("\nschema: {schema}\nargs: {args:?}\nexpected: {expected:?}");
    match (&expected, got) {
        (Expect::Action(a), Ok(r)) => {
            prop_assert_eq!(
                r.output,
                json!({ "action": a }).to_string(),
                "{}",
                context()
            );
        }
        (Expect::Reject(fields), Err(ElicitError::Validation(errors))) => {
            let named: BTreeSet<String> = errors.iter().map(|e| e.field.clone()).collect();
            prop_assert_eq!(
                &named,
                fields,
                "elicit reported {:?}, the oracle finds violations in {:?}{}",
                errors,
                fields,
                context()
            );
            for e in &errors {
                prop_assert!(!e.reason.trim().is_empty(), "empty reason for {}", e.field);
            }
        }
        (Expect::Needs(missing), Err(ElicitError::NeedsAnswers { fields, .. })) => {
            prop_assert_eq!(&fields, missing, "{}", context());
        }
        (Expect::Accept(want), Ok(r)) => {
            let out: Value = serde_json::from_str(&r.output).expect("output is JSON");
            prop_assert_eq!(&out["action"], &json!("accept"), "{}", context());
            let content = out["content"]
                .as_object()
                .cloned()
                .ok_or_else(|| TestCaseError::fail(format!("no content in {}", r.output)))?;
            // 1. The whole schema, one object, additionalProperties: false.
            let whole = whole_validator(&case.fields);
            let problems: Vec<String> = whole
                .iter_errors(&Value::Object(content.clone()))
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            prop_assert!(
                problems.is_empty(),
                "elicit accepted {} but the whole-schema validator rejects it: {:?}{}",
                r.output,
                problems,
                context()
            );
            // 2. The hand-written oracle, field by field.
            for f in &case.fields {
                if let Some(v) = content.get(&f.name) {
                    if let Err(why) = oracle(&f.kind, v) {
                        return Err(TestCaseError::fail(format!(
                            "elicit accepted {}={v} but {why}{}",
                            f.name,
                            context()
                        )));
                    }
                    // 3. Integers stay integers.
                    if matches!(f.kind, Kind::Integer { .. }) {
                        prop_assert!(
                            v.is_i64() || v.is_u64(),
                            "integer field {} went out as {v} (not a JSON integer){}",
                            f.name,
                            context()
                        );
                    }
                } else {
                    prop_assert!(!f.required, "required {} missing{}", f.name, context());
                }
            }
            // 4. Schema order, and the values the answers meant.
            let got_keys: Vec<&String> = content.keys().collect();
            let want_keys: Vec<&String> = want.keys().collect();
            prop_assert_eq!(got_keys, want_keys, "content keys/order{}", context());
            for (k, v) in want {
                prop_assert!(
                    same(&content[k], v),
                    "{k}: elicit sent {} where the answer meant {v}{}",
                    content[k],
                    context()
                );
            }
        }
        (_, Ok(r)) => {
            return Err(TestCaseError::fail(format!(
                "elicit printed {}{}",
                r.output,
                context()
            )))
        }
        (_, Err(e)) => {
            return Err(TestCaseError::fail(format!(
                "elicit failed: {e}{}",
                context()
            )))
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Random answers to random spec-grammar forms: elicit and the
    /// independent model agree on every accept and every rejection.
    #[test]
    fn answers_agree_with_an_independent_validator(case in arb_case()) {
        check_case(&case)?;
    }

    /// Every labelled format sample: the `jsonschema` whole-object check
    /// agrees with the RFC label (so the oracle above is sound).
    #[test]
    fn format_samples_are_labelled_right(f in arb_fmt(), i in 0usize..9) {
        let samples = f.samples();
        let (text, ok) = samples[i % samples.len()];
        let fields = [Field {
            name: "x".into(),
            kind: Kind::Text { min: None, max: None, format: Some(f), pattern: None },
            required: true,
            default: None,
        }];
        let valid = whole_validator(&fields).is_valid(&json!({"x": text}));
        prop_assert_eq!(valid, ok, "{} {:?}", f.name(), text);
    }

    /// `plan_form` directly: an accepted plan always satisfies `validate`,
    /// and its keys are in schema order.
    #[test]
    fn accepted_plans_validate(case in arb_case()) {
        let form = FormSchema::parse(&requested_schema(&case.fields)).unwrap();
        let scripted = ScriptedAnswers::parse(case.args(), no_files).unwrap();
        if let Ok(FormPlan::Decided(elicit::Action::Accept, content)) = scripted.plan_form(&form, true) {
            prop_assert!(form.validate(&content).is_ok());
            let idx: Vec<usize> = content
                .keys()
                .map(|k| case.fields.iter().position(|f| &f.name == k).unwrap())
                .collect();
            prop_assert!(idx.windows(2).all(|w| w[0] < w[1]), "keys not in schema order: {:?}", content.keys());
        }
    }
}

/// Found by `answers_agree_with_an_independent_validator` (minimal case): an
/// integer field given a whole number of magnitude >= 9e15 written as a
/// float was accepted and printed as a float (`1e+20`). Now such values go
/// out as JSON integers, or are rejected when no 64-bit integer holds them.
#[test]
fn integer_fields_never_send_floats_even_for_huge_whole_numbers() {
    let doc = r#"{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}"#;
    for arg in [
        "n=99999999999999999999",
        "n=1e20",
        r#"{"n":1e20}"#,
        "n=1e300",
    ] {
        let doc = input::read_document(doc).unwrap();
        let scripted = ScriptedAnswers::parse([arg], no_files).unwrap();
        let mut person = NoTerminal {
            detail: String::new(),
        };
        let mut cache = SchemaCache::default();
        match elicit::elicitation::resolve_document(doc, &scripted, &mut person, &mut cache, false)
        {
            Ok(r) => {
                let out: Value = serde_json::from_str(&r.output).unwrap();
                let n = &out["content"]["n"];
                assert!(n.is_i64() || n.is_u64(), "{arg}: printed {}", r.output);
            }
            // Rejecting a value no JSON integer type holds is also a fix.
            Err(ElicitError::Validation(_)) => {}
            Err(e) => panic!("{arg}: {e}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Robustness: random bytes and JSON into every input path.

const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "message",
    "mode",
    "url",
    "requestedSchema",
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "enumNames",
    "oneOf",
    "anyOf",
    "const",
    "title",
    "default",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "format",
    "pattern",
    "resultType",
    "inputRequests",
    "requestState",
    "result",
    "error",
    "code",
    "data",
    "elicitations",
    "elicitationId",
    "_meta",
    "action",
    "content",
    "ok",
    "reason",
];

const WORDS: &[&str] = &[
    "elicitation/create",
    "2.0",
    "object",
    "string",
    "integer",
    "number",
    "boolean",
    "array",
    "form",
    "url",
    "email",
    "uri",
    "date",
    "date-time",
    "input_required",
    "accept",
    "decline",
    "cancel",
    "https://example.com",
    "^[a-z]+$",
    "(",
    "[",
];

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop::sample::select(vec![-32042i64, -1, 0, 1, 3, 1000, 1001]).prop_map(Value::from),
        prop::sample::select(WORDS).prop_map(|s| json!(s)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        let key = prop_oneof![
            4 => prop::sample::select(KEYS).prop_map(str::to_string),
            1 => ".{0,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Feeds one text through the library as `elicit -a accept` would.
fn whole_pipeline(text: &str, args: &[String]) {
    let Ok(doc) = input::read_document(text) else {
        return;
    };
    let Ok(scripted) = ScriptedAnswers::parse(args, |_| Ok("{}".into())) else {
        return;
    };
    let mut person = NoTerminal {
        detail: String::new(),
    };
    let mut cache = SchemaCache::default();
    if let Ok(r) =
        elicit::elicitation::resolve_document(doc, &scripted, &mut person, &mut cache, false)
    {
        assert!(
            serde_json::from_str::<Value>(&r.output).is_ok(),
            "output is not JSON: {}",
            r.output
        );
    }
}

fn forbidden(c: char, block: bool) -> bool {
    match c {
        '\n' => !block,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            true
        }
        _ => false,
    }
}

fn arb_arg() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "accept", "decline", "cancel", " accept ", "@f", "{", "="
        ])
        .prop_map(str::to_string),
        (prop::sample::select(KEYS), ".{0,8}").prop_map(|(k, v)| format!("{k}={v}")),
        arb_json().prop_map(|v| v.to_string()),
        ".{0,16}",
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(text) = input::decode(&bytes) {
            whole_pipeline(text, &["accept".into()]);
        }
        let lossy = String::from_utf8_lossy(&bytes);
        let _ = ScriptedAnswers::parse([lossy.as_ref()], |_| Ok(lossy.to_string()));
        let _ = sanitize_line(&lossy);
        let _ = sanitize_block(&lossy);
        let _ = assess_url(&lossy);
    }

    #[test]
    fn random_json_documents_never_panic(v in arb_json(), args in prop::collection::vec(arb_arg(), 0..4)) {
        let text = v.to_string();
        whole_pipeline(&text, &args);
        // The same value in each shape's slot.
        for wrapped in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": v}),
            json!({"message": "m", "requestedSchema": v}),
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"f": v}}}),
            json!({"resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create", "params": v}}}),
            json!({"code": -32042, "data": {"elicitations": [v]}}),
        ] {
            let mut args = args.clone();
            args.push("accept".into());
            whole_pipeline(&wrapped.to_string(), &args);
        }
    }

    #[test]
    fn random_schemas_and_content_never_panic(
        schema in arb_json(),
        prop in arb_json(),
        content in arb_json(),
        text in ".{0,12}",
    ) {
        for s in [schema, json!({"type": "object", "properties": {"f": prop, "g": {"type": "string"}}})] {
            let Ok(form) = FormSchema::parse(&s) else { continue };
            for f in &form.fields {
                let _ = f.hint();
                let _ = f.usable_default();
                if let Ok(v) = f.coerce(&text) {
                    let _ = f.check(&v);
                }
                let _ = f.check(&content);
                let _ = f.check(&f.normalize(content.clone()));
            }
            if let Value::Object(m) = &content {
                let _ = form.validate(m);
                let _ = form.validate(&form.order(m.clone()));
                let content_f = json!({"f": content.clone()});
                let _ = form.validate(content_f.as_object().unwrap());
            }
        }
    }

    #[test]
    fn random_answers_never_panic(
        args in prop::collection::vec(arb_arg(), 0..5),
        file in arb_json(),
        case in arb_case(),
    ) {
        let file = file.to_string();
        if let Ok(a) = ScriptedAnswers::parse(&args, |_| Ok(file.clone())) {
            let form = FormSchema::parse(&requested_schema(&case.fields)).unwrap();
            let _ = a.plan_form(&form, true);
            let _ = a.plan_form(&form, false);
            let _ = a.plan_url();
        }
    }

    #[test]
    fn sanitised_text_holds_no_controls(s in prop_oneof![
        ".{0,40}",
        "[\u{0}-\u{20}\u{7f}-\u{a0}\u{1b}\\[\\]0-9;mPX^_\\\\a\u{202e}\u{2066}\u{200b}\u{1f3f4}\u{e0067}\u{e007f}]{0,40}",
    ]) {
        let line = sanitize_line(&s);
        prop_assert!(!line.chars().any(|c| forbidden(c, false)), "line {:?} -> {:?}", s, line);
        let block = sanitize_block(&s);
        prop_assert!(!block.chars().any(|c| forbidden(c, true)), "block {:?} -> {:?}", s, block);
    }

    #[test]
    fn openable_urls_are_http(s in prop_oneof![
        ".{0,40}",
        (prop::sample::select(vec!["http://", "https://", "HTTPS://", "javascript:", "file:///", "data:", "hTTp:", "http:/", " https://", "https://\u{202e}"]),
         "[a-z0-9.@:/%\\[\\]\u{430}\u{1b}\t -]{0,30}").prop_map(|(a, b)| format!("{a}{b}")),
    ]) {
        let a = assess_url(&s);
        prop_assert_eq!(a.openable, !a.warnings.iter().any(|w| w.is_blocking()));
        if a.openable {
            let scheme = a.scheme.clone().unwrap_or_default();
            prop_assert!(scheme == "http" || scheme == "https", "{:?} openable with scheme {:?}", s, scheme);
            prop_assert!(a.host_ascii.is_some());
            prop_assert!(!s.chars().any(|c| c.is_control() || c.is_whitespace()), "{:?}", s);
        }
        prop_assert!(!a.display.chars().any(char::is_control), "display {:?}", a.display);
    }
}
