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

use crate::elicitation::protocol::{
    ElicitationParams, ELICITATION_METHOD, URL_ELICITATION_REQUIRED,
};

mod document;
mod one_pass;
mod raw;
mod shapes;
mod two_pass;

pub use document::{
    decode, nesting, parse_json, parse_json_within, Document, Entry, InputFailure, KnownSchema,
    Shape, MAX_DEPTH, MAX_INPUT_BYTES, SERVER_INFO_META,
};
use document::{server_name, MAX_NESTING};
use one_pass::*;
use raw::*;
pub use shapes::read_input_required;
use shapes::*;
use two_pass::*;

/// Detects the shape of `text` and extracts every elicitation in it.
pub fn read_document(text: &str) -> Result<Document, InputFailure> {
    read_document_with(text, &|_| None, None)
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
