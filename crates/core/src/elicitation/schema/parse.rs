//! Reading a property schema into a [`FormField`]: its kind, its rules, and
//! warnings for what a lenient reader ignores (keywords outside MCP's form
//! subset, unknown formats, shapes answered as raw JSON).

use super::check::compile;
use super::model::{Choice, FieldKind, FieldRules, FormField, StringFormat};
use super::native::NativeRules;
use super::object::SchemaObject;
use serde_json::Map;
use serde_json::Value;
use std::sync::OnceLock;

impl FormField {
    pub(super) fn parse(name: &str, prop: &Value, required: bool) -> Self {
        let obj = prop.as_object();
        let get_str = |k: &str| obj.and_then(|o| str_member(o, k));
        let kind = match obj {
            None => FieldKind::Raw {
                why: format!(
                    "the property schema is {}, not an object",
                    crate::elicitation::json::json_kind(prop)
                ),
            },
            Some(o) => kind_of(o),
        };
        let (rules, schema_problem) = match NativeRules::of(prop) {
            Some(rules) if !matches!(kind, FieldKind::Raw { .. }) => (
                FieldRules::Native {
                    rules,
                    format_checker: OnceLock::new(),
                },
                None,
            ),
            _ => match compile(prop) {
                Ok(v) => (FieldRules::Compiled(v), None),
                Err(why) => (FieldRules::TypeOnly, why),
            },
        };
        FormField {
            name: name.to_string(),
            title: get_str("title").filter(|t| !t.trim().is_empty()),
            description: get_str("description").filter(|t| !t.trim().is_empty()),
            required,
            kind,
            default: obj.and_then(|o| o.member("default")).cloned(),
            rules,
            schema_problem,
        }
    }
}

fn str_member(o: &Map<String, Value>, k: &str) -> Option<String> {
    o.member(k).and_then(Value::as_str).map(str::to_string)
}

fn u64_member(o: &Map<String, Value>, k: &str) -> Option<u64> {
    o.member(k).and_then(Value::as_u64)
}

fn number_member(o: &Map<String, Value>, k: &str) -> Option<serde_json::Number> {
    match o.member(k) {
        Some(Value::Number(n)) => Some(n.clone()),
        _ => None,
    }
}

/// The kind of field a property schema object describes, by its `type`.
fn kind_of(o: &Map<String, Value>) -> FieldKind {
    match o.member("type").and_then(Value::as_str) {
        Some("string") => string_kind(o),
        Some("integer") => FieldKind::Integer {
            minimum: number_member(o, "minimum"),
            maximum: number_member(o, "maximum"),
        },
        Some("number") => FieldKind::Number {
            minimum: number_member(o, "minimum"),
            maximum: number_member(o, "maximum"),
        },
        Some("boolean") => FieldKind::Boolean,
        Some("array") => array_kind(o),
        Some(other) => FieldKind::Raw {
            why: format!("type {other:?} is not a primitive MCP allows in a form"),
        },
        None => FieldKind::Raw {
            why: "the property has no \"type\"".into(),
        },
    }
}

/// A string: a single select (titled `oneOf`, or `enum` with the legacy
/// `enumNames`), else text.
fn string_kind(o: &Map<String, Value>) -> FieldKind {
    if let Some(choices) = one_of_choices(o.member("oneOf")) {
        FieldKind::Select { choices }
    } else if let Some(values) = string_list(o.member("enum")) {
        let labels = string_list(o.member("enumNames"));
        let choices = values
            .into_iter()
            .enumerate()
            .map(|(i, value)| Choice {
                label: labels.as_ref().and_then(|l| l.get(i).cloned()),
                value,
            })
            .collect();
        FieldKind::Select { choices }
    } else {
        FieldKind::Text {
            min_length: u64_member(o, "minLength"),
            max_length: u64_member(o, "maxLength"),
            format: str_member(o, "format").map(|f| StringFormat::parse(&f)),
            pattern: str_member(o, "pattern"),
        }
    }
}

/// An array: a multi-select of strings (titled `anyOf`/`oneOf` items, or
/// an items `enum`), else raw JSON.
fn array_kind(o: &Map<String, Value>) -> FieldKind {
    let items = o.member("items").and_then(Value::as_object);
    let titled = items.and_then(|i| {
        one_of_choices(i.member("anyOf")).or_else(|| one_of_choices(i.member("oneOf")))
    });
    let untitled = items
        .and_then(|i| string_list(i.member("enum")))
        .map(|values| {
            values
                .into_iter()
                .map(|value| Choice { value, label: None })
                .collect()
        });
    match titled.or(untitled) {
        Some(choices) => FieldKind::MultiSelect {
            choices,
            min_items: u64_member(o, "minItems"),
            max_items: u64_member(o, "maxItems"),
        },
        None => FieldKind::Raw {
            why: "an array that is not a multi-select of strings".into(),
        },
    }
}

/// Keywords an MCP form property may carry (any of the primitive kinds).
pub(super) const MCP_KEYWORDS: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "enum",
    "enumNames",
    "oneOf",
    "anyOf",
    "items",
    "minItems",
    "maxItems",
    "const",
];

/// JSON Schema (2020-12) keywords outside MCP's form subset: still checked
/// by the validator, but a form does not show them.
pub(super) const JSON_SCHEMA_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "$comment",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "definitions",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "unevaluatedItems",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The formats JSON Schema (2020-12) defines, which the validator checks.
pub(super) const JSON_SCHEMA_FORMATS: &[&str] = &[
    "date",
    "time",
    "date-time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The formats MCP defines for strings.
pub(super) const MCP_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// What a lenient parse let through for one property, in words: the
/// README promises a warning for each (unknown `format`, `$schema`,
/// extra keywords, shapes answered as raw JSON).
pub(super) fn lenient_warnings(prop: &Value, kind: &FieldKind) -> Vec<String> {
    let mut out = Vec::new();
    if let FieldKind::Raw { why } = kind {
        out.push(format!("{why}; asked as raw JSON"));
    }
    let Some(obj) = prop.as_object() else {
        return out;
    };
    if let Some(f) = obj.member("format").and_then(Value::as_str) {
        if !MCP_FORMATS.contains(&f) {
            let checked = if JSON_SCHEMA_FORMATS.contains(&f) {
                "checked as JSON Schema defines it"
            } else {
                "not checked"
            };
            out.push(format!(
                "format {f:?} is not one MCP defines (email, uri, date, date-time); {checked}"
            ));
        }
    }
    for key in obj.keys() {
        if MCP_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        if JSON_SCHEMA_KEYWORDS.contains(&key.as_str()) {
            out.push(format!(
                "keyword {key:?} is not part of an MCP form schema; it is still checked"
            ));
        } else {
            out.push(format!(
                "keyword {key:?} is not part of an MCP form schema; ignored"
            ));
        }
    }
    out
}

pub(super) fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    let arr = v?.as_array()?;
    arr.iter().map(|x| x.as_str().map(str::to_string)).collect()
}

pub(super) fn one_of_choices(v: Option<&Value>) -> Option<Vec<Choice>> {
    let arr = v?.as_array()?;
    arr.iter()
        .map(|entry| {
            let o = entry.as_object()?;
            let value = o.member("const")?.as_str()?.to_string();
            let label = o
                .member("title")
                .and_then(Value::as_str)
                .map(str::to_string);
            Some(Choice { value, label })
        })
        .collect()
}
