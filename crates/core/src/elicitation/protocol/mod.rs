//! MCP protocol types for elicitation, parsed leniently from raw JSON.
//!
//! We do not use `rmcp`'s model types here on purpose: they reject whole
//! requests for things a person testing a server needs to *see* (an unknown
//! `format`, a nested property), and they drop fields (`task`). A tool for
//! server authors has to show what the server really sent, so we read the
//! params as plain JSON and only insist on what each mode truly requires.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ElicitError;

pub mod results;
mod revision;
pub mod wire;

pub use revision::Revision;

// The wire's names and numbers, where code has always found them.
pub(crate) use wire::RELATED_TASK_META;
pub use wire::{ELICITATION_METHOD, MAX_MESSAGE_BYTES, URL_ELICITATION_REQUIRED};

/// The two elicitation modes. A missing or empty `mode` means [`Mode::Form`]
/// (kept for 2025-06-18 clients, see the 2025-11-25 spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A form the person fills in.
    Form,
    /// A URL the person visits (out of band).
    Url,
}

impl Mode {
    /// The mode as spelled on the wire (`form`, `url`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Form => "form",
            Mode::Url => "url",
        }
    }
}

/// The `params` of an `elicitation/create` request, as the server sent them.
///
/// `mode` keeps the raw string (the seed's mapping branches on `mode == "url"`,
/// and an error must be able to name an unknown value exactly).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ElicitationParams {
    /// `mode` as sent (`form` when absent).
    pub mode: Option<String>,
    /// The message shown to the person.
    pub message: String,
    /// The form's schema (form mode).
    pub requested_schema: Option<Value>,
    /// The URL to visit (URL mode).
    pub url: Option<String>,
    /// The elicitation's id (URL mode).
    pub elicitation_id: Option<String>,
    /// `_meta`, kept as sent.
    pub meta: Option<Map<String, Value>>,
}

impl ElicitationParams {
    /// A form-mode request.
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        ElicitationParams {
            mode: Some("form".into()),
            message: message.into(),
            requested_schema: Some(requested_schema),
            ..Default::default()
        }
    }

    /// A URL-mode request.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitationParams {
            mode: Some("url".into()),
            message: message.into(),
            url: Some(url.into()),
            ..Default::default()
        }
    }

    /// The effective mode. Does not fail: an unknown mode is reported by
    /// [`ElicitationParams::from_value`], and the seed maps every mode other
    /// than `"url"` to an input request.
    pub fn mode(&self) -> Mode {
        match self.mode.as_deref() {
            Some("url") => Mode::Url,
            _ => Mode::Form,
        }
    }

    /// Reads params from JSON, checking what the request's mode requires:
    /// form needs an object `requestedSchema`, URL needs a string `url`.
    /// `message` is required by the spec, but the contract writes `""` when it
    /// is absent, so a missing message is accepted; a message of the wrong
    /// type is not.
    pub fn from_value(value: &Value) -> Result<Self, ElicitError> {
        Self::parse_with(value, value.get("requestedSchema").cloned())
    }

    /// [`ElicitationParams::from_value`] on an owned value: the schema is
    /// moved out, not copied.
    pub fn from_owned(mut value: Value) -> Result<Self, ElicitError> {
        let schema = value
            .as_object_mut()
            .and_then(|o| o.shift_remove("requestedSchema"));
        Self::parse_with(&value, schema)
    }

    /// `schema` is the `requestedSchema` member, already taken out.
    fn parse_with(value: &Value, schema: Option<Value>) -> Result<Self, ElicitError> {
        let obj = value
            .as_object()
            .ok_or_else(|| ElicitError::InvalidParams {
                message: format!(
                    "`params` must be a JSON object, found {}",
                    crate::elicitation::json::json_kind(value)
                ),
            })?;
        let mode = match obj.get("mode") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(ElicitError::InvalidParams {
                    message: format!(
                        "`mode` must be a string, found {}",
                        crate::elicitation::json::json_kind(other)
                    ),
                })
            }
        };
        match mode.as_deref() {
            None | Some("") | Some("form") | Some("url") => {}
            Some(other) => {
                return Err(ElicitError::UnknownMode {
                    mode: other.to_string(),
                })
            }
        }
        let message = optional_string(obj, "message")?.unwrap_or_default();
        let url = optional_string(obj, "url")?;
        let elicitation_id = optional_string(obj, "elicitationId")?;
        let meta = match obj.get("_meta") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(other) => {
                return Err(ElicitError::InvalidParams {
                    message: format!(
                        "`_meta` must be an object, found {}",
                        crate::elicitation::json::json_kind(other)
                    ),
                })
            }
        };
        let requested_schema = match schema {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v),
            Some(other) => {
                return Err(ElicitError::InvalidParams {
                    message: format!(
                        "`requestedSchema` must be an object, found {}",
                        crate::elicitation::json::json_kind(&other)
                    ),
                })
            }
        };
        let params = ElicitationParams {
            mode,
            message,
            requested_schema,
            url,
            elicitation_id,
            meta,
        };
        match params.mode() {
            Mode::Form if params.requested_schema.is_none() => Err(ElicitError::InvalidParams {
                message: "form-mode elicitation is missing `requestedSchema`".into(),
            }),
            Mode::Url if params.url.is_none() => Err(ElicitError::InvalidParams {
                message: "url-mode elicitation is missing `url`".into(),
            }),
            _ => Ok(params),
        }
    }

    /// The related-task `_meta` entry, which the result must echo (tasks spec).
    pub fn related_task(&self) -> Option<&Value> {
        self.meta.as_ref()?.get(RELATED_TASK_META)
    }
}

fn optional_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, ElicitError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ElicitError::InvalidParams {
            message: format!(
                "`{key}` must be a string, found {}",
                crate::elicitation::json::json_kind(other)
            ),
        }),
    }
}

/// What the person did with the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// The person accepted (with content, for a form).
    Accept,
    /// The person declined.
    Decline,
    /// The person dismissed the request without choosing.
    Cancel,
}

impl Action {
    /// The action as spelled on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Decline => "decline",
            Action::Cancel => "cancel",
        }
    }
}

/// The `ElicitResult` sent back to the server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElicitResult {
    /// What the person did.
    pub action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The form's values, for an accepted form.
    pub content: Option<Map<String, Value>>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    /// `_meta` for the result (echoing a related task).
    pub meta: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// A result with `action` and nothing else.
    pub fn new(action: Action) -> Self {
        ElicitResult {
            action,
            content: None,
            meta: None,
        }
    }

    /// The result as the JSON sent on the wire.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("an ElicitResult always serialises")
    }
}
