//! Scripted answers (`-a/--answer`), for fixtures, test suites and CI.
//!
//! Each `--answer` is one of:
//! - `NAME=VALUE`: a field's value, coerced by the field's kind (a
//!   multi-select takes the NAME several times, or a JSON array);
//! - a JSON object of field values, inline or as `@FILE`; the object may
//!   also be a contract Answer (`{"ok":…,"data":…,"reason":…}`) or an
//!   ElicitResult (`{"action":…,"content":…}`);
//! - the word `accept`, `decline` or `cancel`.

use serde_json::{Map, Value};

use crate::elicitation::protocol::Action;
use crate::elicitation::schema::{FieldKind, FormSchema};
use crate::error::{ElicitError, FieldError};

/// One field's scripted input, before the schema gives it a type.
#[derive(Debug, Clone, PartialEq)]
enum FieldInput {
    /// `NAME=VALUE` on the command line, once per occurrence.
    Text(Vec<String>),
    /// A value from a JSON object: already typed.
    Json(Value),
}

/// The `--answer` arguments, parsed once and applied to each elicitation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptedAnswers {
    decision: Option<Action>,
    fields: Vec<(String, FieldInput)>,
}

/// What the scripted answers settle for one form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormPlan {
    /// Nothing is left to ask: the action, and the content for an accept.
    Decided(Action, Map<String, Value>),
    /// Some fields are still unanswered; `values` holds those that were.
    NeedsPerson {
        /// The fields already answered, by name.
        values: Map<String, Value>,
        /// The fields still to ask, in schema order.
        missing: Vec<String>,
    },
}

impl ScriptedAnswers {
    /// Parses every `--answer`, in order. `read_file` loads `@FILE`
    /// (injected so the library does no I/O of its own in tests).
    pub fn parse<I, S>(
        args: I,
        mut read_file: impl FnMut(&str) -> Result<String, std::io::Error>,
    ) -> Result<Self, ElicitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut answers = ScriptedAnswers::default();
        for arg in args {
            let arg = arg.as_ref();
            let bad = |reason: String| ElicitError::BadAnswer {
                answer: arg.to_string(),
                reason,
            };
            match arg.trim() {
                "accept" => answers.decide(Action::Accept, arg)?,
                "decline" => answers.decide(Action::Decline, arg)?,
                "cancel" => answers.decide(Action::Cancel, arg)?,
                _ if arg.starts_with('@') => {
                    let path = &arg[1..];
                    let text = read_file(path)
                        .map_err(|e| bad(format!("cannot read file {path:?}: {e}")))?;
                    answers.add_object(&text, arg)?;
                }
                t if t.starts_with('{') => answers.add_object(arg, arg)?,
                // `NAME = VALUE`: spaces around the name and the value are
                // both trimmed, so `name = Ada` sends "Ada". A value that
                // must keep its spaces goes as JSON: `{"sep":" "}`.
                _ => match arg.split_once('=') {
                    Some((name, value)) if !name.trim().is_empty() => {
                        answers.add_text(name.trim(), value.trim());
                    }
                    _ => {
                        return Err(bad(
                            "expected NAME=VALUE, a JSON object, @FILE, or one of accept, decline, cancel"
                                .into(),
                        ))
                    }
                },
            }
        }
        Ok(answers)
    }

    /// True when no `--answer` was given.
    pub fn is_empty(&self) -> bool {
        self.decision.is_none() && self.fields.is_empty()
    }

    /// The action chosen by `accept`/`decline`/`cancel` (or an Answer or
    /// ElicitResult object), if any.
    pub fn decision(&self) -> Option<Action> {
        self.decision
    }

    /// Names of the fields given a value, in command-line order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(n, _)| n.as_str())
    }

    fn decide(&mut self, action: Action, arg: &str) -> Result<(), ElicitError> {
        match self.decision {
            Some(prev) if prev != action => Err(ElicitError::Usage(format!(
                "conflicting answers: {} and then {} (from {arg:?})",
                prev.as_str(),
                action.as_str()
            ))),
            _ => {
                self.decision = Some(action);
                Ok(())
            }
        }
    }

    fn add_text(&mut self, name: &str, value: &str) {
        if let Some((_, FieldInput::Text(list))) = self.fields.iter_mut().find(|(n, _)| n == name) {
            list.push(value.to_string());
            return;
        }
        self.set(name, FieldInput::Text(vec![value.to_string()]));
    }

    fn set(&mut self, name: &str, input: FieldInput) {
        if let Some(slot) = self.fields.iter_mut().find(|(n, _)| n == name) {
            slot.1 = input;
        } else {
            self.fields.push((name.to_string(), input));
        }
    }

    fn add_object(&mut self, text: &str, arg: &str) -> Result<(), ElicitError> {
        let bad = |reason: String| ElicitError::BadAnswer {
            answer: arg.to_string(),
            reason,
        };
        let value: Value = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "invalid JSON at line {}, column {}: {}",
                e.line(),
                // serde_json counts 0 for "before the first character";
                // people count columns from 1.
                e.column().max(1),
                crate::elicitation::json::json_error_text(&e)
            ))
        })?;
        let Value::Object(obj) = value else {
            return Err(bad(format!(
                "expected a JSON object, found {}",
                crate::elicitation::json::json_kind(&value)
            )));
        };
        let keys_within = |allowed: &[&str]| obj.keys().all(|k| allowed.contains(&k.as_str()));
        if obj.get("action").is_some_and(Value::is_string)
            && keys_within(&["action", "content", "_meta"])
        {
            // An ElicitResult.
            let action = match obj["action"].as_str() {
                Some("accept") => Action::Accept,
                Some("decline") => Action::Decline,
                Some("cancel") => Action::Cancel,
                other => {
                    return Err(bad(format!(
                        "unknown action {:?}: expected accept, decline or cancel",
                        other.unwrap_or_default()
                    )))
                }
            };
            self.decide(action, arg)?;
            self.add_values(obj.get("content"), "content", &bad)?;
        } else if obj.get("ok").is_some_and(Value::is_boolean)
            && keys_within(&["id", "ok", "data", "reason"])
        {
            // A contract Answer: the seed's rule decides the action.
            let answer: crate::elicitation::contract::Answer =
                serde_json::from_value(Value::Object(obj.clone()))
                    .map_err(|e| bad(format!("not a valid Answer: {e}")))?;
            let action = crate::elicitation::contract::answer_to_elicit_result(&answer).action;
            self.decide(action, arg)?;
            self.add_values(obj.get("data"), "data", &bad)?;
        } else {
            for (k, v) in obj {
                self.set(&k, FieldInput::Json(v));
            }
        }
        Ok(())
    }

    fn add_values(
        &mut self,
        values: Option<&Value>,
        key: &str,
        bad: &dyn Fn(String) -> ElicitError,
    ) -> Result<(), ElicitError> {
        match values {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    self.set(k, FieldInput::Json(v.clone()));
                }
                Ok(())
            }
            Some(other) => Err(bad(format!(
                "`{key}` must be an object, found {}",
                crate::elicitation::json::json_kind(other)
            ))),
        }
    }

    /// Applies the answers to one form.
    ///
    /// With `strict`, a value for a field the form does not have is an error
    /// (one elicitation); without it (several elicitations in one input) the
    /// value is left for the forms that do have the field.
    ///
    /// Values that cannot be read as the field's type, and required fields
    /// with no default under `accept`, are all reported together.
    pub fn plan_form(&self, form: &FormSchema, strict: bool) -> Result<FormPlan, ElicitError> {
        if let Some(action @ (Action::Decline | Action::Cancel)) = self.decision {
            return Ok(FormPlan::Decided(action, Map::new()));
        }
        let mut errors = Vec::new();
        let mut values = Map::new();
        for (name, input) in &self.fields {
            let Some(field) = form.field(name) else {
                if strict {
                    errors.push(FieldError {
                        field: name.clone(),
                        reason: "not a field of the requested schema".into(),
                    });
                }
                continue;
            };
            let value = match input {
                FieldInput::Json(v) => Ok(field.normalize(v.clone())),
                FieldInput::Text(texts) => match (&field.kind, texts.as_slice()) {
                    (FieldKind::MultiSelect { .. }, _) => {
                        let mut items = Vec::new();
                        let mut failed = None;
                        for t in texts {
                            match field.coerce(t) {
                                Ok(Value::Array(a)) => items.extend(a),
                                Ok(other) => items.push(other),
                                Err(e) => {
                                    failed = Some(e);
                                    break;
                                }
                            }
                        }
                        match failed {
                            Some(e) => Err(e),
                            None => Ok(Value::Array(items)),
                        }
                    }
                    (_, [one]) => field.coerce(one),
                    (_, many) => Err(format!(
                        "given {} times; only a multi-select takes several values",
                        many.len()
                    )),
                },
            };
            // Check each given value now, so one run reports every bad
            // field (not just those that failed to parse), before anyone is
            // asked for the rest.
            match value.and_then(|v| field.check(&v).map(|()| v)) {
                Ok(v) => {
                    values.insert(name.clone(), v);
                }
                Err(reason) => errors.push(FieldError {
                    field: name.clone(),
                    reason,
                }),
            }
        }
        let missing: Vec<String> = form
            .fields
            .iter()
            .filter(|f| !values.contains_key(&f.name))
            .map(|f| f.name.clone())
            .collect();
        if self.decision == Some(Action::Accept) {
            for name in &missing {
                // A value was given and is wrong: that is the one problem
                // with this field, not also a missing value.
                if errors.iter().any(|e| &e.field == name) {
                    continue;
                }
                let field = form.field(name).expect("missing names come from the form");
                match field.usable_default() {
                    Some(d) => {
                        values.insert(name.clone(), d);
                    }
                    None if field.required => errors.push(FieldError {
                        field: name.clone(),
                        reason: "required, has no default, and no --answer gave it a value".into(),
                    }),
                    None => {}
                }
            }
        }
        if !errors.is_empty() {
            return Err(ElicitError::Validation(errors));
        }
        let values = form.order(values);
        // A form with no fields asks for approval itself: only an explicit
        // decision settles it, never the absence of fields to ask.
        let all_given = missing.is_empty() && !form.fields.is_empty();
        if self.decision == Some(Action::Accept) || all_given {
            Ok(FormPlan::Decided(Action::Accept, values))
        } else {
            Ok(FormPlan::NeedsPerson { values, missing })
        }
    }

    /// Applies the answers to a URL elicitation: only a decision makes sense.
    pub fn plan_url(&self) -> Result<Option<Action>, ElicitError> {
        if let Some((name, _)) = self.fields.first() {
            if self.decision.is_none() {
                return Err(ElicitError::Usage(format!(
                    "--answer {name}=… gives a form field, but this is a URL elicitation: answer it with accept, decline or cancel"
                )));
            }
        }
        Ok(self.decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_files(_: &str) -> Result<String, std::io::Error> {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no files in tests",
        ))
    }

    fn form() -> FormSchema {
        FormSchema::parse(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer", "minimum": 0, "default": 30},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
                "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}
            },
            "required": ["name"]
        }))
        .unwrap()
    }

    #[test]
    fn name_value_pairs_are_coerced_and_ordered_by_schema() {
        let a = ScriptedAnswers::parse(
            ["color=Green", "tags=a", "tags=c", "age=41", "name=Ada"],
            no_files,
        )
        .unwrap();
        match a.plan_form(&form(), true).unwrap() {
            FormPlan::Decided(Action::Accept, v) => assert_eq!(
                Value::Object(v).to_string(),
                r#"{"name":"Ada","age":41,"tags":["a","c"],"color":"g"}"#
            ),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// `name = Ada` trims the name and the value alike.
    #[test]
    fn spaces_around_name_and_value_are_both_trimmed() {
        let a = ScriptedAnswers::parse(
            ["name = Ada ", " age =41", "tags= b", "color = Red"],
            no_files,
        )
        .unwrap();
        match a.plan_form(&form(), true).unwrap() {
            FormPlan::Decided(Action::Accept, v) => assert_eq!(
                Value::Object(v).to_string(),
                r#"{"name":"Ada","age":41,"tags":["b"],"color":"r"}"#
            ),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn accept_fills_defaults_and_names_required_fields_without_one() {
        let a = ScriptedAnswers::parse(["accept"], no_files).unwrap();
        match a.plan_form(&form(), true) {
            Err(ElicitError::Validation(errs)) => {
                assert_eq!(errs.len(), 1);
                assert_eq!(errs[0].field, "name");
            }
            other => panic!("unexpected {other:?}"),
        }
        let a = ScriptedAnswers::parse(["accept", "name=Bo"], no_files).unwrap();
        match a.plan_form(&form(), true).unwrap() {
            FormPlan::Decided(Action::Accept, v) => {
                assert_eq!(Value::Object(v), json!({"name": "Bo", "age": 30}))
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn missing_fields_without_accept_need_a_person() {
        let a = ScriptedAnswers::parse(["name=Ada"], no_files).unwrap();
        match a.plan_form(&form(), true).unwrap() {
            FormPlan::NeedsPerson { missing, .. } => assert_eq!(missing, ["age", "tags", "color"]),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn answer_and_result_objects_decide() {
        let a = ScriptedAnswers::parse([r#"{"ok":false,"reason":"declined"}"#], no_files).unwrap();
        assert_eq!(a.decision(), Some(Action::Decline));
        let a = ScriptedAnswers::parse([r#"{"ok":false,"reason":"expired"}"#], no_files).unwrap();
        assert_eq!(a.decision(), Some(Action::Cancel));
        let a = ScriptedAnswers::parse([r#"{"action":"accept","content":{"name":"X"}}"#], no_files)
            .unwrap();
        assert_eq!(a.decision(), Some(Action::Accept));
        assert_eq!(a.field_names().collect::<Vec<_>>(), ["name"]);
    }

    #[test]
    fn conflicting_words_and_bad_syntax_are_errors() {
        assert!(matches!(
            ScriptedAnswers::parse(["accept", "decline"], no_files),
            Err(ElicitError::Usage(_))
        ));
        assert!(matches!(
            ScriptedAnswers::parse(["nonsense"], no_files),
            Err(ElicitError::BadAnswer { .. })
        ));
        assert!(matches!(
            ScriptedAnswers::parse(["{\"a\":"], no_files),
            Err(ElicitError::BadAnswer { .. })
        ));
        assert!(matches!(
            ScriptedAnswers::parse(["@/nope"], no_files),
            Err(ElicitError::BadAnswer { .. })
        ));
    }

    #[test]
    fn unknown_fields_and_bad_types_are_all_reported() {
        let a = ScriptedAnswers::parse(["nope=1", "age=old", "name=x"], no_files).unwrap();
        match a.plan_form(&form(), true) {
            Err(ElicitError::Validation(errs)) => {
                let names: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
                assert_eq!(names, ["nope", "age"]);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
