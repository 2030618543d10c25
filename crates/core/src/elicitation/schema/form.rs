//! A whole `requestedSchema` read into the model ([`FormSchema::parse`]),
//! and what is done with a form's content as a whole: validated, put in the
//! schema's field order.

use serde_json::{Map, Value};

use super::model::FormField;
use super::object::SchemaObject;
use super::parse::lenient_warnings;
use crate::error::{ElicitError, FieldError};

/// Upper bound on the number of properties in one form; past it the request
/// is rejected rather than prompting for thousands of fields.
pub const MAX_FIELDS: usize = 1000;

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
