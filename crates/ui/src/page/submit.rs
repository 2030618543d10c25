//! A form posted from the page, read through the one schema model: each
//! control's text is coerced by its field ([`FormField::coerce`]) and the
//! whole answer validated by the schema ([`FormSchema::validate`]), exactly
//! as typed and scripted answers are. Nothing here knows a rule of its own.

use serde_json::{Map, Value};

use super::{Ask, Entry};
use elicit_core::elicitation::schema::{FieldKind, FormField};

/// The controls of a posted form, the page's own taken out.
pub(super) struct Submitted {
    /// The first `csrf` pair: the hidden input, first in every form.
    pub csrf: Option<String>,
    /// The last `action` pair: the pressed button, last in every form.
    pub action: Option<String>,
    /// Everything else, in order: the fields (a property may itself be named
    /// `csrf` or `action`; it keeps its pairs).
    pub values: Vec<(String, String)>,
}

impl Submitted {
    /// The controls of an `application/x-www-form-urlencoded` body.
    pub fn parse(body: &[u8]) -> Self {
        Self::split(
            url::form_urlencoded::parse(body)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    pub fn split(mut pairs: Vec<(String, String)>) -> Self {
        let csrf = pairs
            .iter()
            .position(|(k, _)| k == "csrf")
            .map(|i| pairs.remove(i).1);
        let action = pairs
            .iter()
            .rposition(|(k, _)| k == "action")
            .map(|i| pairs.remove(i).1);
        Submitted {
            csrf,
            action,
            values: pairs,
        }
    }
}

/// One field's problem, for the page.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Problem {
    pub field: String,
    pub reason: String,
}

/// The posted texts for `name`.
pub(super) fn texts<'a>(values: &'a [(String, String)], name: &'a str) -> Vec<&'a str> {
    values
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// Reads one field from the posted texts. `Ok(None)`: left empty (not
/// sent: never `""` or `null`, as on the terminal).
fn read_field(field: &FormField, texts: &[&str]) -> Result<Option<Value>, String> {
    match &field.kind {
        FieldKind::MultiSelect { .. } => {
            let items: Vec<Value> = texts
                .iter()
                .filter(|t| !t.is_empty())
                .map(|t| Value::String(t.to_string()))
                .collect();
            if items.is_empty() && !field.required {
                return Ok(None);
            }
            Ok(Some(field.normalize(Value::Array(items))))
        }
        _ => match texts.iter().rev().find(|t| !t.is_empty()) {
            None => Ok(None),
            Some(text) => field.coerce(text).map(Some),
        },
    }
}

/// The content to send, or every field's problem.
pub(super) fn read(
    entry: &Entry,
    values: &[(String, String)],
) -> Result<Map<String, Value>, Vec<Problem>> {
    let Ask::Form {
        form,
        given,
        missing,
    } = &entry.ask
    else {
        return Ok(Map::new());
    };
    let mut content = given.clone();
    let mut problems = Vec::new();
    for name in missing {
        let Some(field) = form.field(name) else {
            continue;
        };
        match read_field(field, &texts(values, name)) {
            Ok(Some(v)) => {
                content.insert(name.clone(), v);
            }
            Ok(None) => {}
            Err(reason) => problems.push(Problem {
                field: name.clone(),
                reason,
            }),
        }
    }
    let content = form.order(content);
    if let Err(errors) = form.validate(&content) {
        for e in errors {
            if !problems.iter().any(|p| p.field == e.field) {
                problems.push(Problem {
                    field: e.field,
                    reason: e.reason,
                });
            }
        }
    }
    if problems.is_empty() {
        Ok(content)
    } else {
        // In the form's order, as the page shows them.
        problems.sort_by_key(|p| {
            form.fields
                .iter()
                .position(|f| f.name == p.field)
                .unwrap_or(usize::MAX)
        });
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_core::elicitation::schema::FormSchema;
    use std::sync::Arc;

    fn entry(schema: Value) -> Entry {
        let form = FormSchema::parse(&schema).unwrap();
        let missing = form.fields.iter().map(|f| f.name.clone()).collect();
        Entry {
            id: 1,
            server: "s".into(),
            message: "m".into(),
            position: None,
            ask: Ask::Form {
                form: Arc::new(form),
                given: Map::new(),
                missing,
            },
            deadline: None,
            warnings: Vec::new(),
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn posted_text_goes_through_the_schema_model() {
        let e = entry(serde_json::json!({"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 100},
            "ok": {"type": "boolean"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1},
            "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cat", "Dog"]},
            "note": {"type": "string"}
        }, "required": ["n", "tags"]}));
        let got = read(
            &e,
            &pairs(&[
                ("n", "42"),
                ("ok", "false"),
                ("tags", "a"),
                ("tags", "b"),
                ("pet", "p2"),
                ("note", ""),
            ]),
        )
        .unwrap();
        assert_eq!(
            Value::Object(got),
            serde_json::json!({"n": 42, "ok": false, "tags": ["a", "b"], "pet": "p2"})
        );
        let problems = read(&e, &pairs(&[("n", "500")])).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].field, "n");
        assert!(
            problems[0].reason.contains("maximum of 100"),
            "{problems:?}"
        );
        assert_eq!(problems[1].field, "tags");
        let problems = read(&e, &pairs(&[("n", "x"), ("tags", "c")])).unwrap_err();
        assert!(problems[0].reason.contains("not a number"), "{problems:?}");
        assert!(problems[1].reason.contains("not one of"), "{problems:?}");
    }

    #[test]
    fn the_pages_own_controls_are_taken_out_first_and_last() {
        let s = Submitted::split(pairs(&[
            ("csrf", "T"),
            ("action", "field value"),
            ("csrf", "field value"),
            ("action", "accept"),
        ]));
        assert_eq!(s.csrf.as_deref(), Some("T"));
        assert_eq!(s.action.as_deref(), Some("accept"));
        assert_eq!(
            s.values,
            pairs(&[("action", "field value"), ("csrf", "field value")])
        );
    }
}
