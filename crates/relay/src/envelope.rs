//! The JSON-RPC envelope the relay reads every message by: what kind of
//! message it is and which request it belongs to, read once where the
//! message comes in. Only the envelope is typed: `params`, `result` and
//! `error` stay [`Value`]s, read leniently where they are used
//! (docs/design/own-json-rpc.md), and the message itself is relayed as it
//! came (this is a view of it, not a copy).
//!
//! The relay is lenient where a peer is sloppy but harmless and strict
//! where a wrong guess would misroute a reply:
//!
//! - `jsonrpc` is not required: a message without it is read by its other
//!   members (a sloppy server's elicitations are still answered);
//! - an id is a number or a string, nothing else (MCP allows no `null` id
//!   on a request): a request whose id is `null`, an object, an array or a
//!   boolean is [`Message::Invalid`], and so is a result under such an id.
//!   The relay passes those on as they came and acts on none of them: the
//!   peer they go to answers them (a JSON-RPC `-32600`), and no reply can
//!   be matched to them;
//! - a reply with both `result` and `error` is an error: the request it
//!   answers is over, and elicit acts on no result its sender also called
//!   a failure. An `error` that is `null` counts as none (JSON-RPC 1.0
//!   peers write one beside every result).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

/// A JSON-RPC request id (JSON-RPC 2.0 §4): a number or a string, kept as
/// the peer wrote it. `1` and `"1"` are two ids. A number keeps its digits
/// as written (serde_json's `arbitrary_precision`): `1` and `1.0` are two
/// ids (a peer answers under the id it was sent), and an id past any
/// integer type comes back digit for digit. Only an exponent is written
/// serde_json's way: `1e3`, `1E3` and `1e+3` are one id, `1e+3` (the same
/// number; MCP ids are strings or integers anyway).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A number id, spelled as it came.
    Number(Number),
    /// A string id (its escapes decoded: `"a\u0062"` is the id `"ab"`).
    String(String),
}

impl RequestId {
    /// The id a JSON value is, if it may be one: a number or a string.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => Some(RequestId::Number(n.clone())),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }

    /// The id as it goes on the wire.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }

    /// The id's JSON text when every line that answers it holds that text
    /// (a line with no escapes); `None` for a number with an exponent,
    /// which a peer may spell otherwise (`1E3` for `1e+3`).
    pub fn exact_text(&self) -> Option<String> {
        let text = self.to_string();
        match self {
            RequestId::Number(_) if text.contains('e') => None,
            _ => Some(text),
        }
    }

    /// The string of a string id.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            RequestId::String(s) => Some(s),
            RequestId::Number(_) => None,
        }
    }
}

impl From<String> for RequestId {
    fn from(id: String) -> Self {
        RequestId::String(id)
    }
}

/// The id as JSON text: a number as spelled, a string quoted (and escaped
/// as serde_json writes it). What a note quotes, and what a line that
/// answers the id holds when it has no escapes.
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(&serde_json::to_string(s).map_err(|_| fmt::Error)?),
        }
    }
}

/// Read through a [`Value`]: an untagged enum would buffer the number and
/// lose what `arbitrary_precision` keeps of its spelling.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RequestId::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("a JSON-RPC id is a number or a string"))
    }
}

/// What a JSON-RPC message is, read from its members (a view of the
/// message: its parts are borrowed from it).
#[derive(Debug, Clone, PartialEq)]
pub enum Message<'a> {
    /// A request: a `method` and an `id`; its reply comes under that id.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: &'a str,
        /// Its `params`, if it has any.
        params: Option<&'a Value>,
    },
    /// A notification: a `method` and no `id`; nothing answers it.
    Notification {
        /// Its method.
        method: &'a str,
        /// Its `params`, if it has any.
        params: Option<&'a Value>,
    },
    /// A successful reply to the request `id`.
    Result {
        /// The id of the request it answers.
        id: RequestId,
        /// Its `result`.
        result: &'a Value,
    },
    /// A failed reply: to the request `id`, or to one its sender could not
    /// read (`id` `null`: no request of anyone's).
    Error {
        /// The id of the request it answers, if any.
        id: Option<RequestId>,
        /// Its `error`.
        error: &'a Value,
    },
    /// Not a JSON-RPC message the relay can act on; passed on as it came.
    Invalid(Invalid),
}

/// Why a message is [`Message::Invalid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// Not a JSON object (an array, a batch, a bare value).
    NotAnObject,
    /// A `method` that is not a string.
    Method,
    /// An `id` that is neither a number nor a string (an object, an array,
    /// a boolean, or `null` or none where a request or a result needs one).
    Id,
    /// Neither a request nor a notification nor a reply: no `method`, and
    /// neither `result` nor `error`.
    Shape,
}

impl<'a> Message<'a> {
    /// Reads a message's envelope.
    pub fn parse(message: &'a Value) -> Self {
        let Some(obj) = message.as_object() else {
            return Message::Invalid(Invalid::NotAnObject);
        };
        let params = obj.get("params");
        let id = obj.get("id");
        match obj.get("method") {
            Some(Value::String(method)) => {
                return match id.map(RequestId::from_value) {
                    None => Message::Notification { method, params },
                    Some(Some(id)) => Message::Request { id, method, params },
                    Some(None) => Message::Invalid(Invalid::Id),
                };
            }
            Some(_) => return Message::Invalid(Invalid::Method),
            None => {}
        }
        let id = match id {
            Some(Value::Null) | None => None,
            Some(id) => match RequestId::from_value(id) {
                Some(id) => Some(id),
                None => return Message::Invalid(Invalid::Id),
            },
        };
        // A `null` error is none: JSON-RPC 1.0 peers write one beside a result.
        let error = obj.get("error").filter(|e| !e.is_null());
        match (error, obj.get("result"), id) {
            (Some(error), _, id) => Message::Error { id, error },
            (None, Some(result), Some(id)) => Message::Result { id, result },
            (None, Some(_), None) => Message::Invalid(Invalid::Id),
            (None, None, _) => Message::Invalid(Invalid::Shape),
        }
    }

    /// The method of a request or a notification.
    pub fn method(&self) -> Option<&'a str> {
        match self {
            Message::Request { method, .. } | Message::Notification { method, .. } => Some(method),
            _ => None,
        }
    }

    /// The id of the request this is, or answers.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request { id, .. } | Message::Result { id, .. } => Some(id),
            Message::Error { id, .. } => id.as_ref(),
            _ => None,
        }
    }

    /// The id of the request this answers, if it is a reply.
    pub fn reply_to(&self) -> Option<&RequestId> {
        match self {
            Message::Result { id, .. } => Some(id),
            Message::Error { id, .. } => id.as_ref(),
            _ => None,
        }
    }

    /// The `result` of a successful reply.
    pub fn result(&self) -> Option<&'a Value> {
        match self {
            Message::Result { result, .. } => Some(result),
            _ => None,
        }
    }

    /// The `error` of a failed reply.
    pub fn error(&self) -> Option<&'a Value> {
        match self {
            Message::Error { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
