//! The one form model: a `requestedSchema` parsed once, in the server's
//! property order, into [`FormField`]s. Prompting, coercion of scripted
//! answers and validation all read this model. A property schema inside
//! MCP's form subset is checked by the model itself ([`native`], with the
//! `jsonschema` crate's rules, held to it by the property tests); any other
//! is compiled once by the `jsonschema` crate from the server's own property
//! schema. Both report through one [`Violation`] wording.
//!
//! Parsing is lenient on purpose: people use elicit to see what their server
//! sends, so an unknown `format`, `$schema`, extra keywords or a property
//! shape MCP does not allow never fail the whole request. An unsupported
//! shape becomes a [`FieldKind::Raw`] field answered with raw JSON.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Number, Value};

use crate::error::{ElicitError, FieldError};

mod formats;
mod native;
#[cfg(test)]
mod oracle_tests;

use formats::McpFormat;
use native::{NativeRules, Violation};

/// Upper bound on the number of properties in one form; past it the request
/// is rejected rather than prompting for thousands of fields.
pub const MAX_FIELDS: usize = 1000;

/// A `format` on a string field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StringFormat {
    Email,
    Uri,
    Date,
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
    pub value: String,
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
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<StringFormat>,
        pattern: Option<String>,
    },
    Integer {
        minimum: Option<Number>,
        maximum: Option<Number>,
    },
    Number {
        minimum: Option<Number>,
        maximum: Option<Number>,
    },
    Boolean,
    /// Untitled (`enum`), titled (`oneOf` of const/title) or legacy
    /// (`enum` + `enumNames`) single select.
    Select {
        choices: Vec<Choice>,
    },
    /// Untitled (`items.enum`) or titled (`items.anyOf`, or `items.oneOf`)
    /// multi-select.
    MultiSelect {
        choices: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
    /// A shape MCP does not allow (a nested object, an array of objects, a
    /// missing or unknown `type`): answered as raw JSON.
    Raw {
        why: String,
    },
}

/// One property of the requested schema.
#[derive(Debug, Clone)]
pub struct FormField {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    pub default: Option<Value>,
    /// How the field's constraints are checked.
    rules: FieldRules,
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
    pub fields: Vec<FormField>,
    /// Names in `required` that are not properties: the server's mistake,
    /// reported as a warning, never asked.
    pub unknown_required: Vec<String>,
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
                    crate::elicitation::json_kind(schema)
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
                        crate::elicitation::json_kind(other)
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
            unknown_required,
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
    fn parse(name: &str, prop: &Value, required: bool) -> Self {
        let obj = prop.as_object();
        let get_str = |k: &str| {
            obj.and_then(|o| o.member(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let get_u64 = |k: &str| obj.and_then(|o| o.member(k)).and_then(Value::as_u64);
        let get_num = |k: &str| match obj.and_then(|o| o.member(k)) {
            Some(Value::Number(n)) => Some(n.clone()),
            _ => None,
        };
        let kind = match obj {
            None => FieldKind::Raw {
                why: format!(
                    "the property schema is {}, not an object",
                    crate::elicitation::json_kind(prop)
                ),
            },
            Some(o) => match o.member("type").and_then(Value::as_str) {
                Some("string") => {
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
                            min_length: get_u64("minLength"),
                            max_length: get_u64("maxLength"),
                            format: get_str("format").map(|f| StringFormat::parse(&f)),
                            pattern: get_str("pattern"),
                        }
                    }
                }
                Some("integer") => FieldKind::Integer {
                    minimum: get_num("minimum"),
                    maximum: get_num("maximum"),
                },
                Some("number") => FieldKind::Number {
                    minimum: get_num("minimum"),
                    maximum: get_num("maximum"),
                },
                Some("boolean") => FieldKind::Boolean,
                Some("array") => {
                    let items = o.member("items").and_then(Value::as_object);
                    let titled = items.and_then(|i| {
                        one_of_choices(i.member("anyOf"))
                            .or_else(|| one_of_choices(i.member("oneOf")))
                    });
                    let untitled =
                        items
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
                            min_items: get_u64("minItems"),
                            max_items: get_u64("maxItems"),
                        },
                        None => FieldKind::Raw {
                            why: "an array that is not a multi-select of strings".into(),
                        },
                    }
                }
                Some(other) => FieldKind::Raw {
                    why: format!("type {other:?} is not a primitive MCP allows in a form"),
                },
                None => FieldKind::Raw {
                    why: "the property has no \"type\"".into(),
                },
            },
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

    /// Reads one scripted or typed answer (`VALUE` of `NAME=VALUE`) into the
    /// JSON value the field takes. Only the *type* is decided here; the
    /// constraints are left to [`FormField::check`], so a value out of range
    /// is reported as such, not as unparsable.
    pub fn coerce(&self, text: &str) -> Result<Value, String> {
        match &self.kind {
            FieldKind::Text { .. } => Ok(Value::String(text.to_string())),
            FieldKind::Integer { .. } | FieldKind::Number { .. } => {
                let trimmed = text.trim();
                let n: Number = serde_json::from_str(trimmed)
                    .map_err(|_| format!("{text:?} is not a number"))?;
                Ok(normalize_number(Value::Number(n), &self.kind))
            }
            FieldKind::Boolean => parse_bool(text).map(Value::Bool).ok_or_else(|| {
                format!("{text:?} is not a yes/no answer (use true, false, yes or no)")
            }),
            FieldKind::Select { choices } => Ok(Value::String(match_choice(choices, text))),
            FieldKind::MultiSelect { choices, .. } => {
                let trimmed = text.trim_start();
                if trimmed.starts_with('[') {
                    let items: Vec<Value> = serde_json::from_str(trimmed)
                        .map_err(|e| format!("{text:?} is not a JSON array: {e}"))?;
                    Ok(match_items(choices, items))
                } else {
                    Ok(Value::Array(vec![Value::String(match_choice(
                        choices, text,
                    ))]))
                }
            }
            // Raw JSON; text that does not parse is taken as a string only
            // where the schema accepts one, else it is reported as invalid
            // JSON (not as a string of the wrong type).
            FieldKind::Raw { .. } => match serde_json::from_str(text) {
                Ok(v) => Ok(v),
                Err(e) => {
                    let as_text = Value::String(text.to_string());
                    let accepted = match &self.rules {
                        FieldRules::Compiled(v) => v.is_valid(&as_text),
                        _ => true,
                    };
                    if accepted {
                        Ok(as_text)
                    } else {
                        Err(format!(
                            "invalid JSON for {:?} at line {}, column {}: {}",
                            self.label(),
                            e.line(),
                            e.column().max(1),
                            crate::elicitation::input::json_error_text(&e)
                        ))
                    }
                }
            },
        }
    }

    /// Normalises a JSON value given for this field (from a JSON answer
    /// object): whole numbers become JSON integers, select labels become
    /// values.
    pub fn normalize(&self, value: Value) -> Value {
        match (&self.kind, value) {
            (FieldKind::Select { choices }, Value::String(s)) => {
                Value::String(match_choice(choices, &s))
            }
            (FieldKind::MultiSelect { choices, .. }, Value::Array(items)) => {
                match_items(choices, items)
            }
            (kind, v) => normalize_number(v, kind),
        }
    }

    /// A short description of what the field accepts, e.g. `1–100`,
    /// `email`, `pick 1 to 3`.
    pub fn hint(&self) -> Option<String> {
        match &self.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
                pattern,
            } => {
                let mut parts = Vec::new();
                if let Some(f) = format {
                    parts.push(f.hint());
                }
                match (min_length, max_length) {
                    (Some(a), Some(b)) if a == b => {
                        parts.push(format!("exactly {a} character{}", plural(*a)))
                    }
                    (Some(a), Some(b)) => parts.push(format!("{a}–{b} characters")),
                    (Some(1), None) => parts.push("not empty".into()),
                    (Some(a), None) => parts.push(format!("at least {a} characters")),
                    (None, Some(b)) => parts.push(format!("at most {b} character{}", plural(*b))),
                    _ => {}
                }
                if let Some(p) = pattern {
                    parts.push(format!("matching {p}"));
                }
                (!parts.is_empty()).then(|| parts.join(", "))
            }
            FieldKind::Integer { minimum, maximum } | FieldKind::Number { minimum, maximum } => {
                let whole = matches!(self.kind, FieldKind::Integer { .. });
                let range = match (minimum, maximum) {
                    (Some(a), Some(b)) => Some(format!("{a}–{b}")),
                    (Some(a), None) => Some(format!("≥ {a}")),
                    (None, Some(b)) => Some(format!("≤ {b}")),
                    _ => None,
                };
                match (whole, range) {
                    (true, Some(r)) => Some(format!("whole number, {r}")),
                    (true, None) => Some("whole number".into()),
                    (false, r) => r.or(Some("number".into())),
                }
            }
            FieldKind::Boolean => Some("yes/no".into()),
            FieldKind::Select { .. } => None,
            FieldKind::MultiSelect {
                min_items,
                max_items,
                ..
            } => match (min_items, max_items) {
                (Some(a), Some(b)) if a == b => Some(format!("pick {a}")),
                (Some(a), Some(b)) => Some(format!("pick {a} to {b}")),
                (Some(a), None) => Some(format!("pick at least {a}")),
                (None, Some(b)) => Some(format!("pick at most {b}")),
                _ => None,
            },
            FieldKind::Raw { .. } => Some("JSON".into()),
        }
    }
}

/// A value as quoted in a message: its JSON, cut at 60 characters.
fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// How many values an error message lists before "… and N more": a schema
/// may carry 100 000 enum values, and the message is for a person.
pub const LISTED_VALUES: usize = 20;

/// The first [`LISTED_VALUES`] of `total` values, comma-separated, then how
/// many were left out.
fn capped_list(values: impl Iterator<Item = String>, total: usize) -> String {
    let mut s = values
        .take(LISTED_VALUES)
        .map(|v| {
            if v.chars().count() > 60 {
                format!("{}…", v.chars().take(59).collect::<String>())
            } else {
                v
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    if total > LISTED_VALUES {
        s.push_str(&format!(" … and {} more", total - LISTED_VALUES));
    }
    s
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Compiles a property schema with format checks on. An invalid property
/// schema (say `"minLength": "3"`) must not sink the form: the field keeps its
/// kind, only its type is checked, and the problem is reported.
/// Keywords an MCP form property may carry (any of the primitive kinds).
const MCP_KEYWORDS: &[&str] = &[
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
const JSON_SCHEMA_KEYWORDS: &[&str] = &[
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
const JSON_SCHEMA_FORMATS: &[&str] = &[
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
const MCP_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// What a lenient parse let through for one property, in words: the
/// README promises a warning for each (unknown `format`, `$schema`,
/// extra keywords, shapes answered as raw JSON).
fn lenient_warnings(prop: &Value, kind: &FieldKind) -> Vec<String> {
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

fn compile(prop: &Value) -> Result<Arc<jsonschema::Validator>, Option<String>> {
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
fn same_in_draft7(schema: &Value) -> bool {
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
fn type_only_check(kind: &FieldKind, value: &Value) -> Result<(), String> {
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

/// Numbers keep the decimal text they were written with (serde_json's
/// `arbitrary_precision`), so an integer field decides on that text, never on
/// a rounded f64: `2.00000000000000001`, `0.99999999999999999999` and
/// `1e-400` are not whole, `-9223372036854775809` does not fit, and
/// `9007199254740993.0` is exactly 9007199254740993.
///
/// Why not an f64 check: every f64 conversion rounds (to 17 significant
/// digits, and to 0 or infinity at the ends), so no test on the converted
/// value can tell `2.0` from `2.00000000000000001`. Why `arbitrary_precision`
/// rather than a check on raw text in each reader: schema defaults, JSON
/// answers, `@FILE` answers and typed text all reach this one place as a
/// `Number`, and with the feature each still holds its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotInteger {
    /// Not a whole number (a nonzero digit after the point).
    Fraction,
    /// Whole, but outside -2^63 ..= 2^64-1.
    OutOfRange,
}

/// The exact integer a JSON number's text denotes, when it is whole and fits
/// an i64 or a u64. `text` is JSON number syntax (`-`? digits (`.` digits)?
/// (`e` sign? digits)?); anything else is `Fraction`. Hand-written: no
/// decimal crate is in the tree, and this needs only digit counting, with no
/// allocation proportional to the exponent (`1e999999999` is answered at once).
pub fn exact_integer(text: &str) -> Result<Number, NotInteger> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mantissa, ""),
    };
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() || !digits_ok(int_part) || !digits_ok(frac_part) {
        return Err(NotInteger::Fraction);
    }
    // The exponent, saturated: anything past ±10^6 is as good as infinite
    // for a number of at most 20 integer digits.
    let exp: i64 = match exponent {
        None => 0,
        Some(exponent) => {
            let (sign, digits) = match exponent.as_bytes().first() {
                Some(b'-') => (-1, &exponent[1..]),
                Some(b'+') => (1, &exponent[1..]),
                _ => (1, exponent),
            };
            if digits.is_empty() || !digits_ok(digits) {
                return Err(NotInteger::Fraction);
            }
            let digits = digits.trim_start_matches('0');
            let magnitude: i64 = if digits.len() > 7 {
                10_000_000
            } else {
                digits.parse().unwrap_or(0)
            };
            sign * magnitude
        }
    };
    // All the digits, and where the point sits among them.
    let all: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).collect();
    let lead = all.iter().take_while(|&&b| b == b'0').count();
    let significant = &all[lead..];
    let significant = &significant[..significant
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |i| i + 1)];
    if significant.is_empty() {
        return Ok(Number::from(0u64));
    }
    // Digits before the point, counted from the first significant digit.
    let point = int_part.len() as i64 - lead as i64 + exp;
    if point < significant.len() as i64 {
        return Err(NotInteger::Fraction);
    }
    if point > 20 {
        return Err(NotInteger::OutOfRange);
    }
    // At most 20 digits: 10^20 fits a u128 with room to spare.
    let mut magnitude: u128 = 0;
    for i in 0..point as usize {
        let digit = significant.get(i).copied().unwrap_or(b'0');
        magnitude = magnitude * 10 + u128::from(digit - b'0');
    }
    if negative {
        if magnitude <= 1u128 << 63 {
            Ok(Number::from((-(magnitude as i128)) as i64))
        } else {
            Err(NotInteger::OutOfRange)
        }
    } else {
        u64::try_from(magnitude)
            .map(Number::from)
            .map_err(|_| NotInteger::OutOfRange)
    }
}

/// A number as quoted in a message: its text, shortened when huge.
fn shown_number(n: &Number) -> String {
    let s = n.as_str();
    if s.len() > 40 {
        format!("{}…", &s[..39])
    } else {
        s.to_string()
    }
}

/// Gives a number the field's canonical form: an integer field's exact
/// whole value as a JSON integer (`2`, not `2.0`: some SDKs follow the
/// generated schema.json, which types content numbers as integers); a number
/// field's value as the nearest f64 (whole ones as integers, as before).
/// Values that are not the field's kind are left for `check` to reject.
fn normalize_number(value: Value, kind: &FieldKind) -> Value {
    let Value::Number(n) = &value else {
        return value;
    };
    match kind {
        FieldKind::Integer { .. } => match exact_integer(n.as_str()) {
            Ok(exact) => Value::Number(exact),
            Err(_) => value,
        },
        FieldKind::Number { .. } => {
            if let Ok(exact) = exact_integer(n.as_str()) {
                return Value::Number(exact);
            }
            // Not an exact 64-bit integer: a number field takes the nearest
            // double, and a whole one below 2^63 (2^64 when positive) still
            // goes out as an integer.
            const TWO_63: f64 = 9_223_372_036_854_775_808.0;
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && (-TWO_63..TWO_63).contains(&f) => {
                    Value::from(f as i64)
                }
                Some(f) if f.fract() == 0.0 && (0.0..2.0 * TWO_63).contains(&f) => {
                    Value::from(f as u64)
                }
                Some(f) => Number::from_f64(f).map_or(value, Value::Number),
                None => value,
            }
        }
        _ => value,
    }
}

/// A keyword of a schema object, by name. Form schemas are many small
/// objects (a property holds a handful of keywords), and serde_json's
/// ordered map finds a key by hashing it with SipHash, about 200
/// instructions a lookup: comparing a few keys is several times cheaper,
/// and a form's parse makes a few hundred lookups. Larger objects are
/// looked up by hash as before.
pub(crate) trait SchemaObject {
    fn member(&self, key: &str) -> Option<&Value>;
}

impl SchemaObject for Map<String, Value> {
    fn member(&self, key: &str) -> Option<&Value> {
        if self.len() <= 8 {
            self.iter().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            self.get(key)
        }
    }
}

/// `true/false/yes/no` and their usual short forms, in any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "on" | "1" => Some(true),
        "false" | "no" | "n" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Finds the choice a person meant: the value itself, else a label (exact,
/// then case-insensitive when that is unambiguous). Anything else is kept as
/// typed, so validation can say it is not one of the choices.
fn match_choice(choices: &[Choice], text: &str) -> String {
    if choices.iter().any(|c| c.value == text) {
        return text.to_string();
    }
    if let Some(c) = choices.iter().find(|c| c.label.as_deref() == Some(text)) {
        return c.value.clone();
    }
    let lower = text.to_lowercase();
    let matches: Vec<&Choice> = choices
        .iter()
        .filter(|c| {
            c.value.to_lowercase() == lower
                || c.label.as_deref().map(str::to_lowercase).as_deref() == Some(lower.as_str())
        })
        .collect();
    if matches.len() == 1 {
        return matches[0].value.clone();
    }
    text.to_string()
}

/// [`match_choice`] over a multi-select's items; non-strings are kept for
/// validation to reject.
fn match_items(choices: &[Choice], items: Vec<Value>) -> Value {
    Value::Array(
        items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Value::String(match_choice(choices, &s)),
                other => other,
            })
            .collect(),
    )
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    let arr = v?.as_array()?;
    arr.iter().map(|x| x.as_str().map(str::to_string)).collect()
}

fn one_of_choices(v: Option<&Value>) -> Option<Vec<Choice>> {
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
