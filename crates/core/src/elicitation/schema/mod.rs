//! The one form model: a `requestedSchema` parsed once, in the server's
//! property order, into [`FormField`]s. Prompting, coercion of scripted
//! answers and validation all read this model. A property schema inside
//! MCP's form subset is checked by the model itself (`native`, with the
//! `jsonschema` crate's rules, held to it by the property tests); any other
//! is compiled once by the `jsonschema` crate from the server's own property
//! schema. Both report through one `Violation` wording.
//!
//! Parsing is lenient on purpose: people use elicit to see what their server
//! sends, so an unknown `format`, `$schema`, extra keywords or a property
//! shape MCP does not allow never fail the whole request. An unsupported
//! shape becomes a [`FieldKind::Raw`] field answered with raw JSON.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Number, Value};

use crate::error::{ElicitError, FieldError};

mod check;
mod coerce;
mod edges;
mod formats;
mod native;
#[cfg(test)]
mod oracle_tests;
mod parse;

use check::*;
use coerce::*;
pub(crate) use coerce::{exact_integer, NotInteger};
pub use edges::{slug_of, Edge};
use formats::McpFormat;
use native::{NativeRules, Violation};
pub(crate) use parse::SchemaObject;
use parse::*;

/// Upper bound on the number of properties in one form; past it the request
/// is rejected rather than prompting for thousands of fields.
pub const MAX_FIELDS: usize = 1000;

/// A `format` on a string field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StringFormat {
    /// `format: email`.
    Email,
    /// `format: uri`.
    Uri,
    /// `format: date`.
    Date,
    /// `format: date-time`.
    DateTime,
    /// A format MCP does not define: shown, not checked.
    Other(String),
}

impl StringFormat {
    fn parse(s: &str) -> Self {
        match s {
            "email" => StringFormat::Email,
            "uri" => StringFormat::Uri,
            "date" => StringFormat::Date,
            "date-time" => StringFormat::DateTime,
            other => StringFormat::Other(other.to_string()),
        }
    }

    /// A short hint for a person typing the value.
    pub fn hint(&self) -> String {
        match self {
            StringFormat::Email => "email".into(),
            StringFormat::Uri => "URI, e.g. https://…".into(),
            StringFormat::Date => "YYYY-MM-DD".into(),
            StringFormat::DateTime => "YYYY-MM-DDTHH:MM:SSZ".into(),
            StringFormat::Other(s) => s.clone(),
        }
    }
}

/// One choice of a single or multi select: the value sent, and the label shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The value sent when chosen.
    pub value: String,
    /// The title shown instead of the value, if any.
    pub label: Option<String>,
}

impl Choice {
    /// What a person sees: the label when there is one, else the value.
    pub fn display(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }
}

/// What kind of answer a field takes, with the constraints a prompt shows.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A string.
    Text {
        /// `minLength`.
        min_length: Option<u64>,
        /// `maxLength`.
        max_length: Option<u64>,
        /// `format`, if one MCP knows.
        format: Option<StringFormat>,
        /// `pattern`, a regular expression.
        pattern: Option<String>,
    },
    /// An integer.
    Integer {
        /// `minimum`.
        minimum: Option<Number>,
        /// `maximum`.
        maximum: Option<Number>,
    },
    /// A number.
    Number {
        /// `minimum`.
        minimum: Option<Number>,
        /// `maximum`.
        maximum: Option<Number>,
    },
    /// A boolean.
    Boolean,
    /// Untitled (`enum`), titled (`oneOf` of const/title) or legacy
    /// (`enum` + `enumNames`) single select.
    Select {
        /// The choices, in order.
        choices: Vec<Choice>,
    },
    /// Untitled (`items.enum`) or titled (`items.anyOf`, or `items.oneOf`)
    /// multi-select.
    MultiSelect {
        /// The choices, in order.
        choices: Vec<Choice>,
        /// `minItems`.
        min_items: Option<u64>,
        /// `maxItems`.
        max_items: Option<u64>,
    },
    /// A shape MCP does not allow (a nested object, an array of objects, a
    /// missing or unknown `type`): answered as raw JSON.
    Raw {
        /// Why the shape is not MCP's, in words.
        why: String,
    },
}

/// One property of the requested schema.
#[derive(Debug, Clone)]
pub struct FormField {
    /// The property's name.
    pub name: String,
    /// `title`, if any.
    pub title: Option<String>,
    /// `description`, if any.
    pub description: Option<String>,
    /// Whether `required` names it.
    pub required: bool,
    /// What kind of value it takes.
    pub kind: FieldKind,
    /// `default`, if any.
    pub default: Option<Value>,
    /// How the field's constraints are checked.
    rules: FieldRules,
    /// Why the property's schema is not valid JSON Schema, if it is not
    /// (then only its type is checked).
    pub schema_problem: Option<String>,
}

/// How one field's constraints are checked.
#[derive(Debug, Clone)]
enum FieldRules {
    /// Inside MCP's form subset: checked by [`NativeRules`]. A format
    /// check they leave open (an `xn--` email domain) goes to a validator of
    /// `{"format": …}` alone, compiled on first need, so a form of plain
    /// fields never compiles a JSON Schema.
    Native {
        rules: NativeRules,
        format_checker: OnceLock<Option<Arc<jsonschema::Validator>>>,
    },
    /// Anything else: the property schema compiled once by `jsonschema`.
    Compiled(Arc<jsonschema::Validator>),
    /// Not valid JSON Schema: only the field's type is checked, and
    /// [`FormField::schema_problem`] says why.
    TypeOnly,
}

/// A parsed `requestedSchema`.
#[derive(Debug, Clone)]
pub struct FormSchema {
    /// The properties, in schema order.
    pub fields: Vec<FormField>,
    /// Problems with the schema itself that did not stop parsing (shown to
    /// the person as warnings).
    pub warnings: Vec<String>,
    /// Set once [`Self::warnings_once`] has handed the warnings out.
    warned: WarnedFlag,
}

/// A flag shared by nobody: a clone starts where the original stands.
#[derive(Debug, Default)]
struct WarnedFlag(std::sync::atomic::AtomicBool);

impl Clone for WarnedFlag {
    fn clone(&self) -> Self {
        WarnedFlag(std::sync::atomic::AtomicBool::new(
            self.0.load(std::sync::atomic::Ordering::Relaxed),
        ))
    }
}

/// Top-level keywords beyond MCP's `type`, `properties` and `required`
/// that pass without a word: the 2025-11-25 schema allows `$schema`, and
/// frameworks always emit the annotations `title` and `description` (the
/// pydantic model's name and docstring). `additionalProperties` is silent
/// only as `false`, which says what a flat form is anyway.
fn harmless_top_level(key: &str, value: &Value) -> bool {
    match key {
        "type" | "properties" | "required" | "$schema" | "title" | "description" => true,
        "additionalProperties" => value == &Value::Bool(false),
        _ => false,
    }
}

impl FormSchema {
    /// Parses a `requestedSchema`. Fails only when the schema is not an
    /// object, `properties` is not an object, or there are more than
    /// [`MAX_FIELDS`] properties; everything else degrades gracefully.
    pub fn parse(schema: &Value) -> Result<Self, ElicitError> {
        let obj = schema
            .as_object()
            .ok_or_else(|| ElicitError::InvalidParams {
                message: format!(
                    "`requestedSchema` must be an object, found {}",
                    crate::elicitation::json::json_kind(schema)
                ),
            })?;
        let mut warnings = Vec::new();
        match obj.member("type") {
            Some(Value::String(t)) if t == "object" => {}
            None => warnings.push("requestedSchema has no \"type\": \"object\"".into()),
            Some(other) => warnings.push(format!(
                "requestedSchema \"type\" is {other}, expected \"object\""
            )),
        }
        let empty = Map::new();
        let properties = match obj.member("properties") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(p)) => p,
            Some(other) => {
                return Err(ElicitError::InvalidParams {
                    message: format!(
                        "`requestedSchema.properties` must be an object, found {}",
                        crate::elicitation::json::json_kind(other)
                    ),
                })
            }
        };
        if properties.len() > MAX_FIELDS {
            return Err(ElicitError::InvalidParams {
                message: format!(
                    "`requestedSchema` has {} properties, over the limit of {MAX_FIELDS}",
                    properties.len()
                ),
            });
        }
        let required: Vec<String> = match obj.member("required") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    other => {
                        warnings.push(format!("ignored a non-string entry {other} in `required`"));
                        None
                    }
                })
                .collect(),
            None | Some(Value::Null) => Vec::new(),
            Some(other) => {
                warnings.push(format!(
                    "ignored `required`: expected an array, found {other}"
                ));
                Vec::new()
            }
        };
        let fields: Vec<FormField> = properties
            .iter()
            .map(|(name, prop)| FormField::parse(name, prop, required.contains(name)))
            .collect();
        let unknown_required: Vec<String> = required
            .iter()
            .filter(|r| !properties.contains_key(r.as_str()))
            .cloned()
            .collect();
        for r in &unknown_required {
            warnings.push(format!("`required` names {r:?}, which is not a property"));
        }
        for (key, value) in obj.iter() {
            if !harmless_top_level(key, value) {
                warnings.push(format!(
                    "requestedSchema keyword {key:?} is not part of an MCP form schema; ignored"
                ));
            }
        }
        for (f, (_, prop)) in fields.iter().zip(properties.iter()) {
            if let Some(p) = &f.schema_problem {
                warnings.push(format!("field {}: {p}", f.name));
            }
            warnings.extend(
                lenient_warnings(prop, &f.kind)
                    .into_iter()
                    .map(|w| format!("field {}: {w}", f.name)),
            );
        }
        Ok(FormSchema {
            fields,
            warnings,
            warned: WarnedFlag::default(),
        })
    }

    /// [`Self::warnings`] the first time it is asked, nothing after: a
    /// schema that comes again (the cache hands out the same parse) is
    /// warned about once, not once per elicitation.
    pub fn warnings_once(&self) -> &[String] {
        if self
            .warned
            .0
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            &[]
        } else {
            &self.warnings
        }
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&FormField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Validates accepted content: every field's constraints, every required
    /// field present, no field the schema does not define. Returns every
    /// problem, in field order.
    pub fn validate(&self, content: &Map<String, Value>) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        for field in &self.fields {
            match content.get(&field.name) {
                Some(value) => {
                    if let Err(reason) = field.check(value) {
                        errors.push(FieldError {
                            field: field.name.clone(),
                            reason,
                        });
                    }
                }
                None if field.required => errors.push(FieldError {
                    field: field.name.clone(),
                    reason: "required, but no value was given".into(),
                }),
                None => {}
            }
        }
        for key in content.keys() {
            if self.field(key).is_none() {
                errors.push(FieldError {
                    field: key.clone(),
                    reason: "not a field of the requested schema".into(),
                });
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Puts content into the schema's field order (content built from
    /// scripted answers arrives in command-line order).
    /// Keys that are no field come last, in their order.
    ///
    /// Content already in field order comes back as it is; other content is
    /// sorted by field position (a stable sort, keys moved, not copied)
    /// instead of removing each field from the map and inserting it in a
    /// new one (two hash lookups and a shift of the map per field, once per
    /// `--lines` line).
    pub fn order(&self, content: Map<String, Value>) -> Map<String, Value> {
        let position =
            |key: &str, from: usize| self.fields[from..].iter().position(|f| f.name == key);
        // One walk over the fields: each key must come after the last.
        let mut next = 0;
        let in_order = content.keys().all(|k| match position(k, next) {
            Some(p) => {
                next += p + 1;
                true
            }
            None => false,
        });
        if in_order {
            return content;
        }
        let mut entries: Vec<(usize, String, Value)> = content
            .into_iter()
            .map(|(k, v)| (position(&k, 0).unwrap_or(usize::MAX), k, v))
            .collect();
        entries.sort_by_key(|e| e.0);
        let mut ordered = Map::with_capacity(entries.len());
        for (_, k, v) in entries {
            ordered.insert(k, v);
        }
        ordered
    }
}

impl FormField {
    /// Whether what is typed into this field is hidden (the terminal's
    /// dots, the page's password input): a field whose name or title looks
    /// like a secret ([`crate::text::sanitize::looks_like_secret`]) and is
    /// typed, not chosen from a list. `--record` leaves the values of these
    /// fields out of a cassette.
    pub fn masked(&self) -> bool {
        crate::text::sanitize::looks_like_secret(&self.name, self.title.as_deref())
            && !matches!(
                self.kind,
                FieldKind::Boolean | FieldKind::Select { .. } | FieldKind::MultiSelect { .. }
            )
    }

    /// What a person sees as the field's name: the title, else the key.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// The field's default, when it is itself a valid answer. A default that
    /// breaks the field's own constraints is the server's mistake; it is not
    /// pre-filled (it would be rejected on submit anyway).
    pub fn usable_default(&self) -> Option<Value> {
        let d = normalize_number(self.default.clone()?, &self.kind);
        self.check(&d).ok().map(|_| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_schemas_that_mean_the_same_are_compiled_as_draft_7() {
        use serde_json::json;
        assert!(same_in_draft7(
            &json!({"type":"string","minLength":1,"format":"email"})
        ));
        assert!(same_in_draft7(
            &json!({"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]},"maxItems":2})
        ));
        assert!(same_in_draft7(
            &json!({"type":"number","exclusiveMinimum":0})
        ));
        assert!(!same_in_draft7(&json!({"type":"string","format":"uuid"})));
        assert!(!same_in_draft7(&json!({"$ref":"#/$defs/x","maxLength":3})));
        assert!(!same_in_draft7(
            &json!({"type":"array","prefixItems":[{"type":"string"}]})
        ));
        assert!(!same_in_draft7(
            &json!({"type":"array","items":[{"type":"string"}]})
        ));
        assert!(!same_in_draft7(
            &json!({"type":"number","exclusiveMinimum":true})
        ));
    }

    #[test]
    fn exact_integer_decides_on_the_decimal_text() {
        let ok = |t: &str, want: &str| {
            assert_eq!(
                exact_integer(t).map(|n| n.to_string()),
                Ok(want.into()),
                "{t}"
            )
        };
        ok("0", "0");
        ok("-0", "0");
        ok("-0.0", "0");
        ok("0e-400", "0");
        ok("0.000e99999999999", "0");
        ok("2.0", "2");
        ok("1e2", "100");
        ok("1.5e1", "15");
        ok("150e-1", "15");
        ok("9007199254740993.0", "9007199254740993");
        ok("9007199254740993", "9007199254740993");
        ok("-9223372036854775808", "-9223372036854775808");
        ok("-9223372036854775808.000", "-9223372036854775808");
        ok("18446744073709551615", "18446744073709551615");
        ok("1.8446744073709551615e19", "18446744073709551615");
        ok("00012", "12");
        let not_whole = |t: &str| assert_eq!(exact_integer(t), Err(NotInteger::Fraction), "{t}");
        not_whole("0.99999999999999999999");
        not_whole("2.00000000000000001");
        not_whole("1e-400");
        not_whole("1e-99999999999999999999");
        not_whole("-0.5");
        not_whole("15e-1");
        not_whole("abc");
        not_whole("");
        not_whole("1e");
        let too_big = |t: &str| assert_eq!(exact_integer(t), Err(NotInteger::OutOfRange), "{t}");
        too_big("-9223372036854775809");
        too_big("18446744073709551616");
        too_big("1e20");
        too_big("1e400");
        too_big("1e99999999999999999999");
        too_big("-1e19");
        too_big("99999999999999999999");
    }
}
