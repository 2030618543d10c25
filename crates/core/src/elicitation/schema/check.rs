//! Checking a value against a field: MCP's subset natively, anything else
//! by a validator compiled once from the property schema, with messages
//! written for a person.

use super::coerce::{exact_integer, normalize_number, shown_number, NotInteger};
use super::formats::McpFormat;
use super::model::{FieldKind, FieldRules, FormField};
use super::native::Violation;
use super::words::{capped_list, plural, shown};
use serde_json::Value;
use std::sync::Arc;

impl FormField {
    /// Checks one value against the field's constraints. The message is
    /// written for a person and names the violated constraint.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        if let Value::Number(n) = value {
            match self.kind {
                // Decided on the decimal text, never through f64: a value is
                // whole only when it exactly is, and it must fit a 64-bit
                // JSON integer, or it would go out as a float (or rounded).
                FieldKind::Integer { .. } => match exact_integer(n.as_str()) {
                    Ok(_) => {}
                    Err(NotInteger::Fraction) => {
                        return Err(format!("{} is not a whole number", shown_number(n)))
                    }
                    Err(NotInteger::OutOfRange) => {
                        return Err(format!(
                            "{} is outside the whole numbers that can be sent (-9223372036854775808 to 18446744073709551615)",
                            shown_number(n)
                        ))
                    }
                },
                FieldKind::Number { .. } if n.as_f64().is_none() => {
                    return Err(format!(
                        "{} is too large to send as a number",
                        shown_number(n)
                    ))
                }
                _ => {}
            }
        }
        let messages: Vec<String> = match &self.rules {
            FieldRules::Native {
                rules,
                format_checker,
            } => {
                let by_jsonschema = |format: McpFormat, text: &str| {
                    format_checker
                        .get_or_init(|| {
                            compile(&serde_json::json!({ "format": format.name() })).ok()
                        })
                        .as_ref()
                        .is_none_or(|v| v.is_valid(&Value::String(text.to_string())))
                };
                rules
                    .check(value, &by_jsonschema)
                    .iter()
                    .map(|v| self.phrase(v))
                    .collect()
            }
            FieldRules::Compiled(validator) => validator
                .iter_errors(value)
                .map(|e| self.describe(&e))
                .collect(),
            FieldRules::TypeOnly => return type_only_check(&self.kind, value),
        };
        if messages.is_empty() {
            Ok(())
        } else {
            let mut unique: Vec<String> = Vec::new();
            for m in messages {
                if !unique.contains(&m) {
                    unique.push(m);
                }
            }
            Err(unique.join("; "))
        }
    }

    /// Turns a validator error into words that fit this field. The rule was
    /// already decided by `jsonschema`; this only picks the phrasing, through
    /// the same [`Violation`] words as the native check where one fits.
    fn describe(&self, e: &jsonschema::ValidationError<'_>) -> String {
        use jsonschema::error::ValidationErrorKind as K;
        let instance = e.instance();
        let has_choices = matches!(
            self.kind,
            FieldKind::Select { .. } | FieldKind::MultiSelect { .. }
        );
        let violation = match e.kind() {
            // A raw-JSON field names itself and the JSON type its schema
            // wants (there is no kind of ours to describe it by).
            K::Type { kind } if matches!(self.kind, FieldKind::Raw { .. }) => {
                use jsonschema::error::TypeKind;
                let wanted = match kind {
                    TypeKind::Single(t) => t.to_string(),
                    TypeKind::Multiple(set) => set
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(" or "),
                };
                return format!(
                    "expected a JSON {wanted} for {:?}, got {}",
                    self.label(),
                    shown(instance)
                );
            }
            K::Type { .. } => Violation::Type(instance),
            K::Enum { .. } | K::OneOfNotValid { .. } | K::AnyOf { .. } | K::Constant { .. }
                if has_choices =>
            {
                Violation::NotAChoice(instance)
            }
            // An `enum` on another kind (numbers, raw JSON): the list from
            // the schema, capped like the choices (jsonschema's own message
            // would print every value).
            K::Enum { options } => {
                return match options.as_array() {
                    Some(values) => format!(
                        "{} is not one of: {}",
                        shown(instance),
                        capped_list(values.iter().map(shown), values.len())
                    ),
                    None => format!("{} is not one of the allowed values", shown(instance)),
                }
            }
            K::MinLength { limit } => Violation::MinLength(instance, *limit),
            K::MaxLength { limit } => Violation::MaxLength(instance, *limit),
            K::Minimum { limit } => Violation::Minimum(instance, limit),
            K::Maximum { limit } => Violation::Maximum(instance, limit),
            K::MinItems { limit } => Violation::MinItems(*limit),
            K::MaxItems { limit } => Violation::MaxItems(*limit),
            K::Format { format } => return format!("{} is not a valid {format}", shown(instance)),
            K::Pattern { pattern } => {
                return format!("{} does not match the pattern {pattern}", shown(instance))
            }
            _ => return e.to_string(),
        };
        self.phrase(&violation)
    }

    /// Puts one broken rule into words for a person, naming the constraint.
    fn phrase(&self, violation: &Violation<'_>) -> String {
        match *violation {
            Violation::Type(v) => format!("{} is not {}", shown(v), self.expected_type()),
            Violation::NotAChoice(v) => {
                let choices = match &self.kind {
                    FieldKind::Select { choices } | FieldKind::MultiSelect { choices, .. } => {
                        capped_list(choices.iter().map(|c| c.value.clone()), choices.len())
                    }
                    _ => String::new(),
                };
                format!("{} is not one of: {choices}", shown(v))
            }
            Violation::MinLength(v, limit) => format!(
                "{} is too short: at least {limit} character{} needed",
                shown(v),
                plural(limit)
            ),
            Violation::MaxLength(v, limit) => format!(
                "{} is too long: at most {limit} character{} allowed",
                shown(v),
                plural(limit)
            ),
            Violation::Format(v, format) => format!("{} is not a valid {format}", shown(v)),
            Violation::Minimum(v, limit) => {
                format!("{} is less than the minimum of {limit}", shown(v))
            }
            Violation::Maximum(v, limit) => {
                format!("{} is greater than the maximum of {limit}", shown(v))
            }
            Violation::MinItems(limit) => format!("pick at least {limit} item{}", plural(limit)),
            Violation::MaxItems(limit) => format!("pick at most {limit} item{}", plural(limit)),
        }
    }

    fn expected_type(&self) -> &'static str {
        match self.kind {
            FieldKind::Text { .. } | FieldKind::Select { .. } => "a string",
            FieldKind::Integer { .. } => "a whole number",
            FieldKind::Number { .. } => "a number",
            FieldKind::Boolean => "true or false",
            FieldKind::MultiSelect { .. } => "a list of strings",
            FieldKind::Raw { .. } => "of the expected type",
        }
    }
}

/// Compiles a property schema with format checks on. An invalid property
/// schema (say `"minLength": "3"`) must not sink the form: the field keeps its
/// kind, only its type is checked, and the problem is reported.
pub(super) fn compile(prop: &Value) -> Result<Arc<jsonschema::Validator>, Option<String>> {
    if !prop.is_object() {
        return Err(None);
    }
    let draft = if same_in_draft7(prop) {
        jsonschema::Draft::Draft7
    } else {
        jsonschema::Draft::Draft202012
    };
    jsonschema::options()
        .with_draft(draft)
        .should_validate_formats(true)
        .build(prop)
        .map(Arc::new)
        .map_err(|e| {
            Some(format!(
                "the property schema is not valid JSON Schema ({e}); only its type is checked"
            ))
        })
}

/// Whether a property schema means exactly the same in JSON Schema draft 7
/// as in 2020-12: only keywords (and formats) whose definitions did not
/// change between the two, all the way down. Such a schema is compiled as
/// draft 7, whose meta-schema is a fraction of 2020-12's: building the
/// 2020-12 meta-validator was half the instructions of a whole scripted
/// run (callgrind, 5.9M -> 3.1M). Anything else (`$ref`, `prefixItems`,
/// `dependentRequired`, `uuid`, …) keeps 2020-12.
pub(super) fn same_in_draft7(schema: &Value) -> bool {
    const KEYWORDS: &[&str] = &[
        "type",
        "title",
        "description",
        "default",
        "examples",
        "enum",
        "const",
        "enumNames",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "items",
        "anyOf",
        "oneOf",
    ];
    const FORMATS: &[&str] = &[
        "email",
        "uri",
        "date",
        "date-time",
        "time",
        "hostname",
        "ipv4",
        "ipv6",
    ];
    let Some(obj) = schema.as_object() else {
        return schema.is_boolean();
    };
    obj.iter().all(|(k, v)| match k.as_str() {
        "format" => v.as_str().is_some_and(|f| FORMATS.contains(&f)),
        "items" => v.is_object() && same_in_draft7(v),
        "anyOf" | "oneOf" => v
            .as_array()
            .is_some_and(|list| list.iter().all(same_in_draft7)),
        // Boolean exclusive bounds are draft 4; both later drafts take numbers.
        "exclusiveMinimum" | "exclusiveMaximum" => v.is_number(),
        k => KEYWORDS.contains(&k),
    })
}

/// The fallback check for a field whose schema did not compile.
pub(super) fn type_only_check(kind: &FieldKind, value: &Value) -> Result<(), String> {
    let ok = match kind {
        FieldKind::Text { .. } | FieldKind::Select { .. } => value.is_string(),
        FieldKind::Integer { .. } => {
            matches!(value, Value::Number(n) if exact_integer(n.as_str()).is_ok())
        }
        FieldKind::Number { .. } => value.is_number(),
        FieldKind::Boolean => value.is_boolean(),
        FieldKind::MultiSelect { .. } => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
        FieldKind::Raw { .. } => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{value} has the wrong type"))
    }
}

impl FormField {
    /// The field's default, when it is itself a valid answer. A default that
    /// breaks the field's own constraints is the server's mistake; it is not
    /// pre-filled (it would be rejected on submit anyway).
    pub fn usable_default(&self) -> Option<Value> {
        let d = normalize_number(self.default.clone()?, &self.kind);
        self.check(&d).ok().map(|_| d)
    }
}
