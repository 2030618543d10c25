//! The suspension contract (Request / Answer) and its two mappings (ported from toolnexus's ElicitationToRequest and AnswerToElicitResult).
//!
//! toolnexus (SPEC §10) lets a host resolve "suspensions" (a form, an auth
//! link) with one code path. Its Go functions `ElicitationToRequest` and
//! `AnswerToElicitResult` map MCP elicitations onto that contract; this module
//! is their Rust port, table for table, so that elicit can sit between an MCP
//! server and any resolver that speaks the contract (`elicit request`,
//! `elicit result`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::elicitation::protocol::{Action, ElicitResult, ElicitationParams, Mode};

/// `Request.kind` for a form elicitation.
pub(crate) const KIND_INPUT: &str = "input";
/// `Request.kind` for a URL elicitation.
pub(crate) const KIND_AUTHORIZATION: &str = "authorization";

/// `Answer.reason` when the person said no.
pub const REASON_DECLINED: &str = "declined";
/// `Answer.reason` when the person dismissed the request.
pub const REASON_CANCELLED: &str = "cancelled";
/// `Answer.reason` when nobody answered in time.
pub const REASON_EXPIRED: &str = "expired";

/// What is being asked (the contract's `Request`). Optional keys are omitted
/// from the JSON when empty; `prompt` is always written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The request's id (the elicitation's id, or a fresh one).
    pub id: String,
    /// What is asked: `input` (a form) or `authorization` (a URL to visit).
    pub kind: String,
    #[serde(default)]
    /// The server's message, shown to the person.
    pub prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The URL to visit, for an `authorization` request.
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The form's data (its schema under `schema`), for an `input` request.
    pub data: Option<Map<String, Value>>,
    #[serde(rename = "expiresAt", default, skip_serializing_if = "Option::is_none")]
    /// When the request stops being answerable, if the server said.
    pub expires_at: Option<String>,
}

impl Request {
    /// The form schema carried by an `input` request (`data.schema`).
    pub fn schema(&self) -> Option<&Value> {
        self.data.as_ref()?.get("schema")
    }
}

/// How a Request was resolved (the contract's `Answer`). `ok` is always
/// written; `reason` only matters when `ok` is false.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    #[serde(default)]
    /// The id of the request this answers.
    pub id: String,
    /// Whether the request was accepted (`false`: declined or cancelled).
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The form's values, for an accepted `input` request.
    pub data: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Why the request was not accepted, if it was not.
    pub reason: Option<String>,
}

impl Answer {
    /// An accepted answer carrying the form's values.
    pub fn accepted(id: &str, data: Map<String, Value>) -> Self {
        Answer {
            id: id.to_string(),
            ok: true,
            data: Some(data),
            reason: None,
        }
    }

    /// A refusal with one of the contract's reasons.
    pub fn refused(id: &str, reason: &str) -> Self {
        Answer {
            id: id.to_string(),
            ok: false,
            data: None,
            reason: Some(reason.to_string()),
        }
    }

    /// The refusal matching an MCP action (`accept` is not a refusal).
    pub fn from_action(id: &str, action: Action, data: Option<Map<String, Value>>) -> Self {
        match action {
            Action::Accept => Answer::accepted(id, data.unwrap_or_default()),
            Action::Decline => Answer::refused(id, REASON_DECLINED),
            Action::Cancel => Answer::refused(id, REASON_CANCELLED),
        }
    }
}

/// Maps an `elicitation/create` onto a contract [`Request`] (toolnexus's
/// `ElicitationToRequest`).
///
/// | params | Request |
/// |---|---|
/// | `mode == "url"` | `kind: "authorization"`, `url: params.url` |
/// | any other mode (form, absent, empty) | `kind: "input"`, `data.schema: params.requestedSchema` |
/// | `message` | `prompt` |
/// | — | `id`: fresh and unique per call |
///
/// One addition of ours: a URL request's `elicitationId` (2025-11-25) is
/// carried as `data.elicitationId`, so a host can correlate the completion
/// notification; toolnexus drops it.
///
/// ```
/// use elicit_core::elicitation::contract::elicitation_to_request;
/// use elicit_core::elicitation::protocol::ElicitationParams;
/// use serde_json::json;
///
/// let params = ElicitationParams::form(
///     "What is your deployment region?",
///     json!({"type": "object", "properties": {"region": {"type": "string"}}}),
/// );
/// let req = elicitation_to_request(&params);
/// assert_eq!(req.kind, "input");
/// assert_eq!(req.prompt, params.message);
/// assert!(!req.id.is_empty(), "expected a generated, unique request id");
/// assert_eq!(req.data.unwrap()["schema"], params.requested_schema.unwrap());
/// ```
///
/// ```
/// use elicit_core::elicitation::contract::elicitation_to_request;
/// use elicit_core::elicitation::protocol::ElicitationParams;
///
/// let params = ElicitationParams::url("Sign in to continue", "https://example.com/oauth/authorize");
/// let req = elicitation_to_request(&params);
/// assert_eq!(req.kind, "authorization");
/// assert_eq!(req.url.as_deref(), Some("https://example.com/oauth/authorize"));
/// ```
pub fn elicitation_to_request(params: &ElicitationParams) -> Request {
    request_from(params, params.requested_schema.clone())
}

/// The same mapping without `data.schema`, for a resolution that keeps the
/// schema parsed instead (a large schema on every line of a `--lines`
/// stream is neither copied nor, when cached, built).
pub(crate) fn request_without_schema(params: &ElicitationParams) -> Request {
    request_from(params, None)
}

fn request_from(params: &ElicitationParams, schema: Option<Value>) -> Request {
    let id = fresh_request_id();
    match params.mode() {
        Mode::Url => {
            let data = params.elicitation_id.as_ref().map(|eid| {
                let mut m = Map::new();
                m.insert("elicitationId".into(), Value::String(eid.clone()));
                m
            });
            Request {
                id,
                kind: KIND_AUTHORIZATION.into(),
                prompt: params.message.clone(),
                url: params.url.clone(),
                data,
                expires_at: None,
            }
        }
        Mode::Form => {
            let data = schema.map(|schema| {
                let mut m = Map::new();
                m.insert("schema".into(), schema);
                m
            });
            Request {
                id,
                kind: KIND_INPUT.into(),
                prompt: params.message.clone(),
                url: None,
                data,
                expires_at: None,
            }
        }
    }
}

/// Maps a contract [`Answer`] back onto an MCP [`ElicitResult`] (toolnexus's
/// `AnswerToElicitResult`).
///
/// | Answer | ElicitResult |
/// |---|---|
/// | `ok: true` | `accept`, `content: data` (or `{}` when absent) |
/// | `ok: false, reason: "declined"` | `decline` |
/// | `ok: false`, any other reason | `cancel` |
///
/// This is toolnexus's rule exactly. For a URL-mode elicitation the MCP spec
/// (2025-11-25 and later) sends no `content` on accept; elicit's pipeline
/// drops it afterwards with [`ElicitResult::for_mode`], so this function stays
/// a faithful port.
///
/// ```
/// use elicit_core::elicitation::contract::{answer_to_elicit_result, Answer};
/// use elicit_core::elicitation::protocol::Action;
/// use serde_json::json;
///
/// let data = json!({"region": "apac"}).as_object().unwrap().clone();
/// let accepted = answer_to_elicit_result(&Answer::accepted("r1", data));
/// assert_eq!(accepted.action, Action::Accept);
/// assert_eq!(accepted.content.unwrap()["region"], "apac");
///
/// let declined = answer_to_elicit_result(&Answer::refused("r1", "declined"));
/// assert_eq!(declined.action, Action::Decline);
///
/// let cancelled = answer_to_elicit_result(&Answer::refused("r1", "expired"));
/// assert_eq!(cancelled.action, Action::Cancel);
/// ```
pub fn answer_to_elicit_result(answer: &Answer) -> ElicitResult {
    if answer.ok {
        ElicitResult {
            action: Action::Accept,
            content: Some(answer.data.clone().unwrap_or_default()),
            meta: None,
        }
    } else if answer.reason.as_deref() == Some(REASON_DECLINED) {
        ElicitResult::new(Action::Decline)
    } else {
        ElicitResult::new(Action::Cancel)
    }
}

impl ElicitResult {
    /// Applies the MCP spec's per-mode rule on top of the contract's mapping: a
    /// URL-mode accept carries no `content` (2025-11-25 and later), since the
    /// data went to the server's web page, never through the client.
    pub fn for_mode(mut self, mode: Mode) -> Self {
        if mode == Mode::Url {
            self.content = None;
        }
        self
    }
}

/// A fresh, unique request id. toolnexus's Go port uses a time-and-counter
/// id; the contract only asks for non-empty and unique, and a v4 UUID gives
/// that across processes too.
pub(crate) fn fresh_request_id() -> String {
    format!("elc-{}", uuid::Uuid::new_v4())
}
