//! What reading a document gives (its shape, its entries, a failure) and
//! the JSON reading every reader of it shares, below the one-pass and
//! two-pass readers and the shape detection.

use serde_json::value::RawValue;
use serde_json::Value;

use std::sync::Arc;

use crate::elicitation::json::json_error_text;
use crate::elicitation::protocol::ElicitationParams;
use crate::elicitation::schema::FormSchema;
use crate::error::ElicitError;

/// Largest input elicit reads in one document (or one `--lines` line).
pub const MAX_INPUT_BYTES: u64 = crate::elicitation::protocol::MAX_MESSAGE_BYTES;

/// Deepest nesting of arrays and objects elicit reads (serde_json's own
/// recursion limit); deeper input is rejected, never a stack overflow.
pub const MAX_DEPTH: usize = 128;

/// Which shape the input had; it decides the output's shape.
#[derive(Debug, Clone)]
pub enum Shape {
    /// Bare `elicitation/create` params.
    BareParams,
    /// An object with `method` and `params` but no JSON-RPC id.
    RequestObject,
    /// `id` kept as the exact JSON text received.
    JsonRpcRequest {
        /// The request's id.
        id: Box<RawValue>,
    },
    /// A 2026-07-28 `input_required` result holding elicitations.
    InputRequired {
        /// `requestState` exactly as received, echoed byte for byte.
        request_state: Option<Box<RawValue>>,
    },
    /// A -32042 error (URL elicitation required) holding elicitations.
    UrlElicitationRequired,
    /// Claude Code's `Elicitation` hook input (`hook_event_name`,
    /// `mcp_server_name`, `message`, `mode`, `url`, `elicitation_id`,
    /// `requested_schema`): answered with its `hookSpecificOutput`.
    ClaudeCodeHook,
}

/// One elicitation found in the input.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The `inputRequests` key, or the `elicitationId` of a -32042 entry.
    pub key: Option<String>,
    /// The elicitation's params.
    pub params: ElicitationParams,
    /// The `requestedSchema` exactly as written, when the raw pass over the
    /// text found it (a single-entry shape): the [`crate::elicitation::resolve::SchemaCache`]
    /// looks it up by this text, so a `--lines` stream of one request neither
    /// hashes nor compares its schema's tree on every line.
    pub schema_text: Option<Box<str>>,
    /// The parsed schema, when the reader's caller already had it
    /// ([`read_document_with`](super::read_document_with)): `params.requested_schema` is then `None`,
    /// as the schema's tree was never built.
    pub form: Option<Arc<FormSchema>>,
}

/// Equal entries hold the same parsed form (the same `Arc`), if any.
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
            && self.params == other.params
            && self.schema_text == other.schema_text
            && match (&self.form, &other.form) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

/// A parsed input document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The input's shape, which decides the output's.
    pub shape: Shape,
    /// The elicitations the document holds, in order.
    pub entries: Vec<Entry>,
    /// Entries of an `input_required` result that are not elicitations
    /// (sampling, roots…): elicit cannot answer them; the host must.
    pub skipped: Vec<String>,
    /// The server's name, when the input carries one: 2026-07-28 results put
    /// `serverInfo` in `_meta`.
    pub server: Option<String>,
}

/// `_meta` key under which 2026-07-28 results name the server.
pub use crate::elicitation::protocol::wire::SERVER_INFO_META;

pub(super) fn server_name(value: &Value) -> Option<String> {
    let from = |v: &Value| {
        v.get("_meta")?
            .get(SERVER_INFO_META)?
            .get("name")?
            .as_str()
            .map(str::to_string)
    };
    // A bare params object, a result, or a JSON-RPC request's params.
    from(value)
        .or_else(|| value.get("result").and_then(from))
        .or_else(|| value.get("params").and_then(from))
}

/// An input that failed, with the JSON-RPC id to answer when it was a
/// JSON-RPC request (so a pipeline can hand an error back to the server).
#[derive(Debug)]
pub struct InputFailure {
    /// What went wrong.
    pub error: ElicitError,
    /// The request's id, when the input was a JSON-RPC request, for an error reply.
    pub reply_id: Option<Box<RawValue>>,
}

impl From<ElicitError> for InputFailure {
    fn from(error: ElicitError) -> Self {
        InputFailure {
            error,
            reply_id: None,
        }
    }
}

/// Reads bytes into text, with the errors a person can act on.
pub fn decode(bytes: &[u8]) -> Result<&str, ElicitError> {
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(ElicitError::TooLarge {
            size: bytes.len() as u64,
            limit: MAX_INPUT_BYTES,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ElicitError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    if text.trim().is_empty() {
        return Err(ElicitError::EmptyInput);
    }
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Parses JSON, turning a syntax error into one that names line and column.
/// Nesting deeper than serde_json's limit (128) is rejected the same way,
/// so no input can overflow the stack.
pub fn parse_json(text: &str) -> Result<Value, ElicitError> {
    parse_json_within(text, crate::elicitation::protocol::wire::MAX_JSON_VALUES)
}

/// [`parse_json`] of a text holding at most `max_values` values (counted
/// over its bytes first, so that 32 MiB of `[0,0,…]` is refused before
/// 16 million values are built).
pub fn parse_json_within(text: &str, max_values: usize) -> Result<Value, ElicitError> {
    // Depth is left to the parser, whose error says where.
    crate::bounded::check_json_shape(text.as_bytes(), max_values, usize::MAX, usize::MAX).map_err(
        |m| ElicitError::UnknownShape {
            message: format!("refused before parsing: {m}"),
        },
    )?;
    serde_json::from_str(text).map_err(|e| {
        let mut message = json_error_text(&e);
        if message.contains("recursion limit") {
            message = format!("nesting deeper than {MAX_DEPTH} levels");
        }
        ElicitError::Json {
            line: e.line(),
            column: e.column().max(1),
            message,
        }
    })
}

/// A schema the caller has already parsed, found by its JSON text (see
/// [`read_document_with`](super::read_document_with)).
pub struct KnownSchema {
    /// The parsed schema.
    pub form: Arc<FormSchema>,
    /// How deeply the schema's JSON nests ([`nesting`]): a text that parsed
    /// alone may still be too deep where it now sits.
    pub nesting: usize,
}

/// The most deeply nested arrays and objects serde_json reads (its
/// recursion limit of [`MAX_DEPTH`] counts the value being opened).
pub(super) const MAX_NESTING: usize = MAX_DEPTH - 1;

/// How deeply `value` nests: 0 for a scalar, 1 for a flat array or object.
pub fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}
