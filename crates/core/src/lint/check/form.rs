//! The form rules: the requested schema as a whole (an object of flat properties,
//! its keywords and `required`) and each field in it (types, formats, bounds, the
//! options of single and multiple selects, defaults).

use serde_json::{Map, Value};

use super::findings::Findings;
use super::links::has_link;
use crate::elicitation::schema::{exact_integer, FieldKind, FormField, FormSchema, StringFormat};
use crate::lint::{pointer, Revision};

/// Keywords a form property may carry (of any kind); anything else is
/// `property-keyword-unknown`, `pattern` is `pattern-unsupported`.
pub(super) const PROPERTY_KEYWORDS: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "enum",
    "enumNames",
    "oneOf",
    "items",
    "minItems",
    "maxItems",
];

pub(super) fn check_schema(schema: &Value, at: &str, found: &mut Findings) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    let form = match FormSchema::parse(schema) {
        Ok(form) => Some(form),
        Err(e) => {
            let id = if obj.get("properties").is_some_and(|p| !p.is_object()) {
                "schema-type-not-object"
            } else {
                "params-invalid"
            };
            found.add(id, pointer(at, &["properties"]), e.to_string());
            None
        }
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => found.add(
            "schema-type-not-object",
            at.to_string(),
            "requestedSchema has no \"type\": \"object\"",
        ),
        Some(other) => found.add(
            "schema-type-not-object",
            pointer(at, &["type"]),
            format!("requestedSchema's type is {other}, not \"object\""),
        ),
    }
    if obj.get("properties").is_none() {
        found.add(
            "schema-type-not-object",
            at.to_string(),
            "requestedSchema has no properties",
        );
    }
    for key in obj.keys() {
        let known = matches!(key.as_str(), "type" | "properties" | "required")
            || (key == "$schema" && found.revision >= Revision::V2025_11_25);
        if !known {
            found.add(
                "schema-keyword-unknown",
                pointer(at, &[key]),
                format!("{key:?} is not a keyword of an MCP requestedSchema"),
            );
        }
    }
    match obj.get("required") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let properties = obj.get("properties").and_then(Value::as_object);
            for (i, item) in items.iter().enumerate() {
                let here = pointer(at, &["required", &i.to_string()]);
                match item {
                    Value::String(name) => {
                        if properties.is_some_and(|p| !p.contains_key(name)) {
                            found.add(
                                "required-not-a-property",
                                here,
                                format!("{name:?} is required but is not a property"),
                            );
                        }
                    }
                    other => found.add(
                        "required-invalid",
                        here,
                        format!(
                            "an entry of required is {}, not a name",
                            crate::elicitation::json::json_kind(other)
                        ),
                    ),
                }
            }
        }
        Some(other) => found.add(
            "required-invalid",
            pointer(at, &["required"]),
            format!(
                "required is {}, not an array of names",
                crate::elicitation::json::json_kind(other)
            ),
        ),
    }
    let (Some(form), Some(properties)) = (form, obj.get("properties").and_then(Value::as_object))
    else {
        return;
    };
    for field in &form.fields {
        if let Some(prop) = properties.get(&field.name) {
            check_field(
                field,
                prop,
                &pointer(at, &["properties", &field.name]),
                found,
            );
        }
    }
}

/// Whether a schema describes an object (`type: "object"`, or
/// `properties` without a type).
pub(super) fn is_object_schema(v: &Value) -> bool {
    match v.get("type") {
        Some(Value::String(t)) => t == "object",
        None => v.get("properties").is_some(),
        _ => false,
    }
}

pub(super) fn check_field(field: &FormField, prop: &Value, at: &str, found: &mut Findings) {
    let name = &field.name;
    let Some(obj) = prop.as_object() else {
        found.add(
            "property-type-unsupported",
            at.to_string(),
            format!(
                "property {name:?} is {}, not a schema object",
                crate::elicitation::json::json_kind(prop)
            ),
        );
        return;
    };
    let typ = obj.get("type").and_then(Value::as_str);
    if let FieldKind::Raw { why } = &field.kind {
        if check_not_a_form_field(field, why, prop, at, found) {
            return;
        }
    }
    if let Some(problem) = &field.schema_problem {
        found.add(
            "property-schema-invalid",
            at.to_string(),
            format!("property {name:?}: {problem}"),
        );
    }
    check_keywords(field, obj, at, found);
    check_bounds(field, obj, at, found);
    if typ == Some("string") {
        check_single_select(field, obj, at, found);
    }
    if typ == Some("array") {
        check_multi_select(field, obj, at, found);
    }
    check_default(field, obj, at, found);
    check_secret(field, at, found);
}

/// A property the schema model could not make a form field of (`why`):
/// nested (an object, an array of objects) or of a kind MCP does not have.
/// True when that is all there is to say of it; a titled multi-select with
/// a broken option is left to be reported as such.
fn check_not_a_form_field(
    field: &FormField,
    why: &str,
    prop: &Value,
    at: &str,
    found: &mut Findings,
) -> bool {
    let name = &field.name;
    let typ = prop.get("type").and_then(Value::as_str);
    let items = prop.get("items");
    let titled_items = items.and_then(|i| i.get("anyOf").or_else(|| i.get("oneOf")));
    if is_object_schema(prop) {
        found.add(
            "form-nested-property",
            at.to_string(),
            format!("property {name:?} is an object: forms are flat"),
        );
        return true;
    }
    if typ == Some("array") && items.is_some_and(is_object_schema) {
        found.add(
            "form-nested-property",
            pointer(at, &["items"]),
            format!("property {name:?} is an array of objects: forms are flat"),
        );
        return true;
    }
    if typ == Some("array") && titled_items.is_some_and(Value::is_array) {
        return false;
    }
    found.add(
        "property-type-unsupported",
        match prop.get("type") {
            Some(_) => pointer(at, &["type"]),
            None => at.to_string(),
        },
        format!("property {name:?}: {why}"),
    );
    true
}

/// Keywords an MCP form property does not have (any unknown one, and a
/// `pattern`), and links in its title or description.
fn check_keywords(field: &FormField, obj: &Map<String, Value>, at: &str, found: &mut Findings) {
    let name = &field.name;
    for key in obj.keys() {
        if !PROPERTY_KEYWORDS.contains(&key.as_str()) {
            found.add(
                "property-keyword-unknown",
                pointer(at, &[key]),
                format!("{key:?} on property {name:?} is not part of an MCP form schema"),
            );
        }
    }
    if obj.get("pattern").is_some() {
        found.add(
            "pattern-unsupported",
            pointer(at, &["pattern"]),
            format!("property {name:?} has a pattern, which MCP's string schema does not define"),
        );
    }
    for key in ["title", "description"] {
        if obj.get(key).and_then(Value::as_str).is_some_and(has_link) {
            found.add(
                "form-contains-url",
                pointer(at, &[key]),
                format!("the {key} of property {name:?} holds a link"),
            );
        }
    }
}

/// The bounds of the field's kind: an unknown string format, an integer
/// bound that is not whole, and a lower bound above the upper one.
fn check_bounds(field: &FormField, obj: &Map<String, Value>, at: &str, found: &mut Findings) {
    let name = &field.name;
    let get = |k: &str| obj.get(k);
    let inverted = |found: &mut Findings, low: &str, high: &str| {
        if let (Some(Value::Number(a)), Some(Value::Number(b))) = (get(low), get(high)) {
            if let (Some(a), Some(b)) = (a.as_f64(), b.as_f64()) {
                if a > b {
                    found.add(
                        "bounds-inverted",
                        pointer(at, &[low]),
                        format!("property {name:?} has {low} {a} above {high} {b}: no value fits"),
                    );
                }
            }
        }
    };
    match &field.kind {
        FieldKind::Text { format, .. } => {
            if let Some(StringFormat::Other(f)) = format {
                found.add(
                    "format-unknown",
                    pointer(at, &["format"]),
                    format!("property {name:?} has format {f:?}: MCP defines email, uri, date and date-time"),
                );
            }
            inverted(found, "minLength", "maxLength");
        }
        FieldKind::Integer { .. } => {
            for key in ["minimum", "maximum"] {
                if let Some(Value::Number(n)) = get(key) {
                    if exact_integer(n.as_str()).is_err() {
                        found.add(
                            "integer-bound-not-whole",
                            pointer(at, &[key]),
                            format!("integer property {name:?} has {key} {n}"),
                        );
                    }
                }
            }
            inverted(found, "minimum", "maximum");
        }
        FieldKind::Number { .. } => inverted(found, "minimum", "maximum"),
        FieldKind::MultiSelect { .. } | FieldKind::Raw { .. } => {
            inverted(found, "minItems", "maxItems");
        }
        FieldKind::Boolean | FieldKind::Select { .. } => {}
    }
}

/// A field that may hold a secret (text or a number) and looks like one.
fn check_secret(field: &FormField, at: &str, found: &mut Findings) {
    let name = &field.name;
    let secret_format = matches!(
        &field.kind,
        FieldKind::Text { format: Some(StringFormat::Other(f)), .. } if f == "password"
    );
    let may_hold_secret = matches!(
        field.kind,
        FieldKind::Text { .. } | FieldKind::Integer { .. } | FieldKind::Number { .. }
    );
    if may_hold_secret
        && (secret_format || crate::text::sanitize::looks_like_secret(name, field.title.as_deref()))
    {
        found.add(
            "form-requests-secret",
            at.to_string(),
            format!("property {name:?} looks like a secret (a password, key, token or PIN): ask for it in URL mode"),
        );
    }
}

/// Checks a list of `{const, title}` options; returns the values.
pub(super) fn check_options(list: &[Value], at: &str, found: &mut Findings) -> Vec<Option<String>> {
    list.iter()
        .enumerate()
        .map(|(i, entry)| {
            let value = entry.get("const").and_then(Value::as_str);
            let title = entry.get("title").and_then(Value::as_str);
            if value.is_none() || title.is_none() {
                let missing = match (value, title) {
                    (None, None) => "a string const and a string title",
                    (None, _) => "a string const",
                    _ => "a string title",
                };
                found.add(
                    "enum-option-invalid",
                    pointer(at, &[&i.to_string()]),
                    format!("option {i} lacks {missing}"),
                );
            }
            value.map(str::to_string)
        })
        .collect()
}

/// `enum-empty` and `enum-duplicate-value` over a list of values.
pub(super) fn check_values(values: &[Option<String>], at: &str, field: &str, found: &mut Findings) {
    if values.is_empty() {
        found.add(
            "enum-empty",
            at.to_string(),
            format!("property {field:?} offers no choices"),
        );
    }
    for (i, v) in values.iter().enumerate() {
        if let Some(v) = v {
            if values[..i].iter().any(|w| w.as_deref() == Some(v)) {
                found.add(
                    "enum-duplicate-value",
                    pointer(at, &[&i.to_string()]),
                    format!("property {field:?} lists {v:?} twice"),
                );
            }
        }
    }
}

pub(super) fn string_values(list: &[Value]) -> Vec<Option<String>> {
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

pub(super) fn check_single_select(
    field: &FormField,
    obj: &Map<String, Value>,
    at: &str,
    found: &mut Findings,
) {
    let name = &field.name;
    let one_of = obj.get("oneOf").and_then(Value::as_array);
    let values = obj.get("enum").and_then(Value::as_array);
    if let Some(list) = one_of {
        found.add(
            "kind-not-in-revision",
            pointer(at, &["oneOf"]),
            format!("property {name:?} is a titled select (oneOf), which 2025-06-18 does not have"),
        );
        let here = pointer(at, &["oneOf"]);
        let vals = check_options(list, &here, found);
        check_values(&vals, &here, name, found);
        if values.is_some() {
            found.add(
                "enum-shape-ambiguous",
                at.to_string(),
                format!("property {name:?} has both enum and oneOf"),
            );
        }
    } else if let Some(list) = values {
        check_values(&string_values(list), &pointer(at, &["enum"]), name, found);
    }
    if let Some(labels) = obj.get("enumNames") {
        let here = pointer(at, &["enumNames"]);
        found.add(
            "enum-names-deprecated",
            here.clone(),
            format!("property {name:?} labels its choices with the legacy enumNames; use oneOf of {{const, title}}"),
        );
        let count = labels.as_array().map(Vec::len);
        let want = values.map(Vec::len);
        if count != want || want.is_none() {
            found.add(
                "enum-names-length-mismatch",
                here,
                match (count, want) {
                    (Some(c), Some(w)) => {
                        format!("property {name:?} has {c} enumNames for {w} enum values")
                    }
                    (None, _) => format!("property {name:?} has enumNames that is not an array"),
                    (_, None) => format!("property {name:?} has enumNames but no enum"),
                },
            );
        }
    }
}

pub(super) fn check_multi_select(
    field: &FormField,
    obj: &Map<String, Value>,
    at: &str,
    found: &mut Findings,
) {
    let name = &field.name;
    found.add(
        "kind-not-in-revision",
        pointer(at, &["type"]),
        format!("property {name:?} is a multi-select, which 2025-06-18 does not have"),
    );
    let Some(items) = obj.get("items").and_then(Value::as_object) else {
        return;
    };
    let items_at = pointer(at, &["items"]);
    if let Some(list) = items.get("anyOf").and_then(Value::as_array) {
        let here = pointer(&items_at, &["anyOf"]);
        let vals = check_options(list, &here, found);
        check_values(&vals, &here, name, found);
    } else if let Some(list) = items.get("oneOf").and_then(Value::as_array) {
        let here = pointer(&items_at, &["oneOf"]);
        found.add(
            "multiselect-items-oneof",
            here.clone(),
            format!(
                "property {name:?} lists its options in items.oneOf; the spec uses items.anyOf"
            ),
        );
        let vals = check_options(list, &here, found);
        check_values(&vals, &here, name, found);
    } else if let Some(list) = items.get("enum").and_then(Value::as_array) {
        if items.get("type").and_then(Value::as_str) != Some("string") {
            found.add(
                "multiselect-items-type",
                items_at,
                format!("the items of multi-select {name:?} have no \"type\": \"string\""),
            );
        }
        check_values(
            &string_values(list),
            &pointer(at, &["items", "enum"]),
            name,
            found,
        );
    }
}

pub(super) fn check_default(
    field: &FormField,
    obj: &Map<String, Value>,
    at: &str,
    found: &mut Findings,
) {
    let Some(default) = obj.get("default") else {
        return;
    };
    let name = &field.name;
    let here = pointer(at, &["default"]);
    if !matches!(field.kind, FieldKind::Boolean) {
        found.add(
            "default-not-in-revision",
            here.clone(),
            format!("property {name:?} has a default; 2025-06-18 has defaults on booleans only"),
        );
    }
    match &field.kind {
        FieldKind::Select { choices } => {
            let ok = default
                .as_str()
                .is_some_and(|d| choices.iter().any(|c| c.value == d));
            if !ok {
                found.add(
                    "default-not-in-enum",
                    here,
                    format!(
                        "the default {} of {name:?} is not one of its values",
                        shown(default)
                    ),
                );
            }
        }
        FieldKind::MultiSelect { choices, .. } => match default.as_array() {
            Some(items) => {
                let mut all_choices = true;
                for (i, item) in items.iter().enumerate() {
                    if !item
                        .as_str()
                        .is_some_and(|d| choices.iter().any(|c| c.value == d))
                    {
                        all_choices = false;
                        found.add(
                            "default-not-in-enum",
                            pointer(&here, &[&i.to_string()]),
                            format!(
                                "the default {} of {name:?} is not one of its values",
                                shown(item)
                            ),
                        );
                    }
                }
                if all_choices {
                    if let Err(reason) = field.check(default) {
                        found.add(
                            "default-invalid",
                            here,
                            format!("the default of {name:?} is not a valid answer: {reason}"),
                        );
                    }
                }
            }
            None => found.add(
                "default-invalid",
                here,
                format!(
                    "the default of multi-select {name:?} is {}, not a list",
                    crate::elicitation::json::json_kind(default)
                ),
            ),
        },
        FieldKind::Raw { .. } => {}
        _ => {
            if let Err(reason) = field.check(&field.normalize(default.clone())) {
                found.add(
                    "default-invalid",
                    here,
                    format!("the default of {name:?} is not a valid answer: {reason}"),
                );
            }
        }
    }
}

/// A value as quoted in a finding: its JSON, cut at 60 characters.
pub(super) fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(59).collect::<String>())
    } else {
        s
    }
}
