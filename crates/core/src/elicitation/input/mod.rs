//! Input: reads one JSON document and detects which of the shapes an
//! elicitation travels in it is.
//!
//! | shape | looks like | output |
//! |---|---|---|
//! | bare params | `{"message", "requestedSchema"}` / `{"mode":"url", "url"}` | an ElicitResult |
//! | request object | `{"method":"elicitation/create","params"}` (a 2026 `inputRequests` value) | an ElicitResult |
//! | JSON-RPC request | `{"jsonrpc","id","method","params"}` | a JSON-RPC response, same `id` |
//! | input_required | `{"resultType":"input_required","inputRequests",…}`, bare or as a JSON-RPC `result` | `{"inputResponses":{…},"requestState":…}` |
//! | -32042 error | `{"code":-32042,"data":{"elicitations":[…]}}`, bare or as a JSON-RPC `error` | `{"elicitationResults":{ID: ElicitResult}}` |

use serde_json::value::RawValue;
use serde_json::Value;

use std::sync::Arc;

use crate::elicitation::protocol::{
    ElicitationParams, ELICITATION_METHOD, URL_ELICITATION_REQUIRED,
};
use crate::elicitation::schema::FormSchema;
use crate::error::ElicitError;

mod one_pass;
mod raw;
mod shapes;
mod two_pass;

use one_pass::*;
use raw::*;
pub use shapes::read_input_required;
use shapes::*;
use two_pass::*;

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
    /// ([`read_document_with`]): `params.requested_schema` is then `None`,
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

fn server_name(value: &Value) -> Option<String> {
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
        let mut message = crate::elicitation::json::json_error_text(&e);
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

/// Detects the shape of `text` and extracts every elicitation in it.
pub fn read_document(text: &str) -> Result<Document, InputFailure> {
    read_document_with(text, &|_| None, None)
}

/// A schema the caller has already parsed, found by its JSON text (see
/// [`read_document_with`]).
pub struct KnownSchema {
    /// The parsed schema.
    pub form: Arc<FormSchema>,
    /// How deeply the schema's JSON nests ([`nesting`]): a text that parsed
    /// alone may still be too deep where it now sits.
    pub nesting: usize,
}

/// [`read_document`], told by `known` which schema texts are already
/// parsed (the `--lines` cache). The document is read in one pass: every
/// member is built as [`parse_json`] would build it, except the
/// `requestedSchema` (at the top, or in `params`), `id` and `requestState`,
/// whose exact text is kept (`id` and `requestState` go back byte for byte;
/// the schema is the cache's key). A schema `known` names is never built:
/// its entry carries the parsed form ([`Entry::form`]) and no
/// `requested_schema`. Any other schema, and `id` and `requestState`, are
/// built from their text.
///
/// Anything out of the ordinary (a syntax error, a duplicate key among
/// those members, a `result`, `params` that is not an object, serde_json's
/// private marker keys) sends the document to the two-pass reader
/// ([`parse_json`], then the raw pass) instead, so every error, and its line
/// and column, is the one that reader gives.
///
/// `likely` is the schema text the caller expects (the last one the cache
/// parsed): when the document holds it as its `requestedSchema`, that
/// text is not even skipped by the parser.
pub fn read_document_with(
    text: &str,
    known: &dyn Fn(&str) -> Option<KnownSchema>,
    likely: Option<&str>,
) -> Result<Document, InputFailure> {
    match read_in_one_pass(text, known, likely, OnePassSeed::new(true)) {
        Some(done) => done,
        None => read_document_two_pass(text),
    }
}

/// [`read_document`] for a document read once, with no schema cache to
/// look in (`elicit FILE`): each `requestedSchema` is built in the same
/// pass as the rest of the document, and its text is not kept
/// ([`Entry::schema_text`] is `None`). Everything else, errors included,
/// is what [`read_document`] gives.
pub(crate) fn read_single_document(text: &str) -> Result<Document, InputFailure> {
    match read_in_one_pass(text, &|_| None, None, OnePassSeed::new(false)) {
        Some(done) => done,
        None => read_document_two_pass(text).map(without_schema_texts),
    }
}

fn without_schema_texts(mut doc: Document) -> Document {
    for entry in &mut doc.entries {
        entry.schema_text = None;
    }
    doc
}

/// The most deeply nested arrays and objects serde_json reads (its
/// recursion limit of [`MAX_DEPTH`] counts the value being opened).
const MAX_NESTING: usize = MAX_DEPTH - 1;

/// How deeply `value` nests: 0 for a scalar, 1 for a flat array or object.
pub fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod schema_text_tests {
    use super::*;

    /// A JSON-RPC request names its server in its params' `_meta`, as a bare
    /// params object does (answer rules match on it: the SDK resolvers send
    /// requests to `--lines`).
    #[test]
    fn a_request_names_its_server_in_its_params() {
        let params = r#"{"message":"m","requestedSchema":{"type":"object","properties":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv"}}}"#;
        let rpc = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{params}}}"#
        );
        for doc in [params.to_string(), rpc] {
            assert_eq!(
                read_document(&doc).unwrap().server.as_deref(),
                Some("srv"),
                "{doc}"
            );
        }
    }

    #[test]
    fn the_schema_text_is_the_one_the_shape_reads() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
        let text = |doc: &str| {
            read_document(doc).unwrap().entries[0]
                .schema_text
                .as_deref()
                .map(str::to_string)
        };
        let rpc = format!(
            r#"{{"jsonrpc":"2.0","id":1,"requestedSchema":{{"type":"object"}},"method":"elicitation/create","params":{{"message":"m","requestedSchema":{schema}}}}}"#
        );
        assert_eq!(text(&rpc).as_deref(), Some(schema));
        let bare = format!(r#"{{"message":"m","requestedSchema":{schema}}}"#);
        assert_eq!(text(&bare).as_deref(), Some(schema));
        // Duplicate keys: the parsed value keeps the last, and so does the text.
        let dup = format!(
            r#"{{"method":"elicitation/create","params":{{"requestedSchema":{{"type":"object"}},"message":"m","requestedSchema":{schema}}}}}"#
        );
        assert_eq!(text(&dup).as_deref(), Some(schema));
        // `params` of the wrong type still reports the params error.
        let e =
            read_document(r#"{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":12}"#)
                .unwrap_err();
        assert_eq!(
            e.reply_id.map(|r| r.get().to_string()).as_deref(),
            Some("7")
        );
    }
}
