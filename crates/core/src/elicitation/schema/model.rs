//! The form model's types: a field, its kind and the rules its value is
//! checked by. The files that parse, coerce and check build on them; this
//! one builds on none of theirs (only the native rules a field holds).

use std::sync::{Arc, OnceLock};

use serde_json::{Number, Value};

use super::native::NativeRules;

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
    pub(super) fn parse(s: &str) -> Self {
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
    pub(super) rules: FieldRules,
    /// Why the property's schema is not valid JSON Schema, if it is not
    /// (then only its type is checked).
    pub schema_problem: Option<String>,
}

/// How one field's constraints are checked.
#[derive(Debug, Clone)]
pub(super) enum FieldRules {
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
}
