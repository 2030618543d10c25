//! MCP's form subset, checked by the schema model itself.
//!
//! Why: checking a field with the `jsonschema` crate means compiling its
//! property schema, and the first compilation builds the crate's
//! meta-validator: 1.7M of the 3.1M instructions of a whole scripted run of
//! the server-everything form went to that and the 13 compilations
//! (callgrind). A property schema made only of what an MCP form carries
//! (`type`, `title`, `description`, `default`, `minLength`, `maxLength`, the
//! four MCP formats, `minimum`, `maximum`, a string `enum` with `enumNames`,
//! `oneOf`/`anyOf` of `{const, title}`, `minItems`, `maxItems`) is checked
//! here, with the crate's rules and in the crate's order of errors, so a
//! message reads the same either way. Anything else (`pattern`, exclusive
//! bounds, `$ref`, a keyword whose value is not of the expected JSON type,
//! another format …) is compiled by `jsonschema` exactly as before, and
//! `tests/it/properties.rs` holds this checker to the crate, message for
//! message, on random schemas and values.

use num_cmp::NumCmp;
use serde_json::{Map, Number, Value};

use super::formats::McpFormat;
use super::object::SchemaObject;

/// The rules of one property schema inside the subset.
#[derive(Debug, Clone)]
pub(super) enum NativeRules {
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<McpFormat>,
    },
    /// `integer` or `number`. The limits are the schema's own values (a
    /// message quotes them as written).
    Numeric {
        minimum: Option<Value>,
        maximum: Option<Value>,
    },
    Boolean,
    /// A string from a list: `enum`, or `oneOf` of consts.
    Choice {
        values: Vec<String>,
    },
    /// An array of strings from a list (`items.enum` or `items.anyOf`).
    Choices {
        min_items: Option<u64>,
        max_items: Option<u64>,
        /// `items` says `"type": "string"` (then a non-string item is a
        /// type error as well as not a choice).
        typed_items: bool,
        values: Vec<String>,
    },
}

/// One broken rule, for the field to put into words.
#[derive(Debug)]
pub(super) enum Violation<'v> {
    /// Not of the field's JSON type.
    Type(&'v Value),
    /// Not one of the field's choices.
    NotAChoice(&'v Value),
    MinLength(&'v Value, u64),
    MaxLength(&'v Value, u64),
    Format(&'v Value, &'static str),
    Minimum(&'v Value, &'v Value),
    Maximum(&'v Value, &'v Value),
    MinItems(u64),
    MaxItems(u64),
}

impl NativeRules {
    /// The rules of `prop`, when every keyword in it is in the subset and
    /// has the value the JSON Schema meta-schema requires; else `None`.
    pub(super) fn of(prop: &Value) -> Option<Self> {
        let obj = prop.as_object()?;
        // Annotations every kind may carry.
        let extra = |obj: &Map<String, Value>, allowed: &[&str]| {
            obj.iter().all(|(k, v)| match k.as_str() {
                "type" | "default" => true,
                "title" | "description" => v.is_string(),
                k => allowed.contains(&k),
            })
        };
        let count = |key: &str| match obj.member(key) {
            None => Some(None),
            Some(v) => v.as_u64().map(Some),
        };
        let limit = |key: &str| match obj.member(key) {
            None => Some(None),
            Some(v @ Value::Number(n)) if finite(n) => Some(Some(v.clone())),
            Some(_) => None,
        };
        match obj.member("type")?.as_str()? {
            "string" if obj.contains_key("enum") => {
                extra(obj, &["enum", "enumNames"]).then_some(())?;
                Some(NativeRules::Choice {
                    values: string_enum(obj.member("enum")?)?,
                })
            }
            "string" if obj.contains_key("oneOf") => {
                extra(obj, &["oneOf"]).then_some(())?;
                let values = const_list(obj.member("oneOf")?)?;
                // Two equal consts make `oneOf` fail for that value; the
                // crate words that case itself.
                let mut seen = std::collections::HashSet::new();
                values.iter().all(|v| seen.insert(v)).then_some(())?;
                Some(NativeRules::Choice { values })
            }
            "string" => {
                extra(obj, &["minLength", "maxLength", "format"]).then_some(())?;
                let format = match obj.member("format") {
                    None => None,
                    Some(f) => Some(McpFormat::parse(f.as_str()?)?),
                };
                Some(NativeRules::Text {
                    min_length: count("minLength")?,
                    max_length: count("maxLength")?,
                    format,
                })
            }
            "integer" | "number" => {
                extra(obj, &["minimum", "maximum"]).then_some(())?;
                Some(NativeRules::Numeric {
                    minimum: limit("minimum")?,
                    maximum: limit("maximum")?,
                })
            }
            "boolean" => extra(obj, &[]).then_some(NativeRules::Boolean),
            "array" => {
                extra(obj, &["items", "minItems", "maxItems"]).then_some(())?;
                let items = obj.member("items")?.as_object()?;
                let typed_items = match items.member("type") {
                    None => false,
                    Some(t) => (t.as_str()? == "string").then_some(true)?,
                };
                let values = match (items.member("enum"), items.member("anyOf")) {
                    (Some(list), None) => string_enum(list)?,
                    (None, Some(list)) => const_list(list)?,
                    _ => return None,
                };
                items
                    .keys()
                    .all(|k| matches!(k.as_str(), "type" | "enum" | "anyOf"))
                    .then_some(())?;
                Some(NativeRules::Choices {
                    min_items: count("minItems")?,
                    max_items: count("maxItems")?,
                    typed_items,
                    values,
                })
            }
            _ => None,
        }
    }

    /// Checks `value`, returning the broken rules in `jsonschema`'s order.
    /// The field has already made sure a number is one it can send (a whole
    /// 64-bit integer, a finite double). `undecided` answers the format
    /// checks [`McpFormat::accepts`] leaves open.
    pub(super) fn check<'v>(
        &'v self,
        value: &'v Value,
        undecided: &dyn Fn(McpFormat, &str) -> bool,
    ) -> Vec<Violation<'v>> {
        let mut found = Vec::new();
        match self {
            NativeRules::Text {
                min_length,
                max_length,
                format,
            } => {
                let Value::String(s) = value else {
                    return vec![Violation::Type(value)];
                };
                let length = s.chars().count() as u64;
                if let Some(min) = *min_length {
                    if length < min {
                        found.push(Violation::MinLength(value, min));
                    }
                }
                if let Some(max) = *max_length {
                    if length > max {
                        found.push(Violation::MaxLength(value, max));
                    }
                }
                if let Some(f) = *format {
                    if !f.accepts(s).unwrap_or_else(|| undecided(f, s)) {
                        found.push(Violation::Format(value, f.name()));
                    }
                }
            }
            NativeRules::Numeric { minimum, maximum } => {
                let Value::Number(n) = value else {
                    return vec![Violation::Type(value)];
                };
                if let Some(min) = minimum {
                    if !at_least(n, min) {
                        found.push(Violation::Minimum(value, min));
                    }
                }
                if let Some(max) = maximum {
                    if !at_most(n, max) {
                        found.push(Violation::Maximum(value, max));
                    }
                }
            }
            NativeRules::Boolean => {
                if !value.is_boolean() {
                    found.push(Violation::Type(value));
                }
            }
            NativeRules::Choice { values } => {
                let Value::String(s) = value else {
                    return vec![Violation::Type(value), Violation::NotAChoice(value)];
                };
                if !values.contains(s) {
                    found.push(Violation::NotAChoice(value));
                }
            }
            NativeRules::Choices {
                min_items,
                max_items,
                typed_items,
                values,
            } => {
                let Value::Array(items) = value else {
                    return vec![Violation::Type(value)];
                };
                let count = items.len() as u64;
                if let Some(min) = *min_items {
                    if count < min {
                        found.push(Violation::MinItems(min));
                    }
                }
                if let Some(max) = *max_items {
                    if count > max {
                        found.push(Violation::MaxItems(max));
                    }
                }
                for item in items {
                    match item {
                        Value::String(s) if values.contains(s) => {}
                        Value::String(_) => found.push(Violation::NotAChoice(item)),
                        _ => {
                            if *typed_items {
                                found.push(Violation::Type(item));
                            }
                            found.push(Violation::NotAChoice(item));
                        }
                    }
                }
            }
        }
        found
    }
}

/// A non-empty `enum` of strings.
fn string_enum(list: &Value) -> Option<Vec<String>> {
    let list = list.as_array().filter(|l| !l.is_empty())?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// A non-empty list of `{"const": "…", "title": "…"}` (title optional).
fn const_list(list: &Value) -> Option<Vec<String>> {
    let list = list.as_array().filter(|l| !l.is_empty())?;
    list.iter()
        .map(|entry| {
            let entry = entry.as_object()?;
            let shaped = entry.iter().all(|(k, v)| match k.as_str() {
                "const" => true,
                "title" => v.is_string(),
                _ => false,
            });
            shaped.then_some(())?;
            entry.member("const")?.as_str().map(str::to_string)
        })
        .collect()
}

/// A limit the crate would hold as a 64-bit integer or a finite double (a
/// limit past that, like `1e400`, is left to it).
fn finite(n: &Number) -> bool {
    n.as_u64().is_some() || n.as_i64().is_some() || n.as_f64().is_some()
}

/// One side of a comparison, as the crate reads a JSON number: an unsigned
/// integer, else a signed one, else a double; compared exactly across the
/// three (`num_cmp`, the crate's own choice), never through a rounded f64.
#[derive(Clone, Copy)]
enum Num {
    U(u64),
    I(i64),
    F(f64),
}

fn num(n: &Number) -> Num {
    if let Some(u) = n.as_u64() {
        Num::U(u)
    } else if let Some(i) = n.as_i64() {
        Num::I(i)
    } else if let Some(f) = n.as_f64() {
        Num::F(f)
    } else if n.as_str().starts_with('-') {
        Num::F(f64::NEG_INFINITY)
    } else {
        Num::F(f64::INFINITY)
    }
}

macro_rules! compare {
    ($name:ident, $op:ident) => {
        fn $name(value: &Number, limit: &Value) -> bool {
            let Value::Number(limit) = limit else {
                return true;
            };
            match (num(value), num(limit)) {
                (Num::U(a), Num::U(b)) => a.$op(b),
                (Num::U(a), Num::I(b)) => a.$op(b),
                (Num::U(a), Num::F(b)) => a.$op(b),
                (Num::I(a), Num::U(b)) => a.$op(b),
                (Num::I(a), Num::I(b)) => a.$op(b),
                (Num::I(a), Num::F(b)) => a.$op(b),
                (Num::F(a), Num::U(b)) => a.$op(b),
                (Num::F(a), Num::I(b)) => a.$op(b),
                (Num::F(a), Num::F(b)) => a.$op(b),
            }
        }
    };
}
compare!(at_least, num_ge);
compare!(at_most, num_le);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_subset_is_native() {
        for inside in [
            json!({"type":"string","title":"T","minLength":1,"format":"email","default":"a"}),
            json!({"type":"integer","minimum":1,"maximum":100,"default":42}),
            json!({"type":"string","enum":["a","b"],"enumNames":["A","B"]}),
            json!({"type":"string","oneOf":[{"const":"a","title":"A"},{"const":"b"}]}),
            json!({"type":"array","minItems":1,"items":{"type":"string","enum":["a"]}}),
            json!({"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}),
            json!({"type":"boolean","description":"d"}),
        ] {
            assert!(NativeRules::of(&inside).is_some(), "{inside}");
        }
        for outside in [
            json!({"type":"string","pattern":"^a"}),
            json!({"type":"string","format":"hostname"}),
            json!({"type":"string","minLength":"3"}),
            json!({"type":"string","minLength":2.0}),
            json!({"type":"string","title":5}),
            serde_json::from_str(r#"{"type":"number","minimum":1e400}"#).unwrap(),
            json!({"type":"number","exclusiveMinimum":1}),
            json!({"type":"string","oneOf":[{"const":"a"},{"const":"a"}]}),
            json!({"type":"string","enum":[]}),
            json!({"type":"string","enum":["a",1]}),
            json!({"type":"string","enum":["a"],"oneOf":[{"const":"a"}]}),
            json!({"type":"array","items":{"type":"string","enum":["a"]},"uniqueItems":true}),
            json!({"type":"array","items":{"oneOf":[{"const":"a"}]}}),
            json!({"type":["string","null"]}),
            json!({"type":"object"}),
            json!({"$ref":"#/x","type":"string"}),
        ] {
            assert!(NativeRules::of(&outside).is_none(), "{outside}");
        }
    }

    #[test]
    fn numbers_compare_exactly_across_kinds() {
        let n = |s: &str| serde_json::from_str::<Number>(s).unwrap();
        assert!(at_least(&n("9007199254740993"), &json!(9007199254740992.0)));
        assert!(!at_most(&n("9007199254740993"), &json!(9007199254740992.0)));
        assert!(at_least(&n("-1"), &json!(-1.0)));
        assert!(!at_least(&n("-2"), &json!(18446744073709551615u64)));
        assert!(at_most(&n("0.5"), &json!(1)));
    }
}
