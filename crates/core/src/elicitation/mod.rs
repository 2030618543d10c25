//! The one-way trip of an elicitation, pure: no terminal, no sockets, no
//! signals. A document comes in as text and leaves as the rendered output:
//!
//! ```text
//! input (detect the shape) -> protocol types -> Request (the suspension
//!   contract) -> resolver (scripted | terminal | page | URL) -> Answer
//!   -> ElicitResult -> output
//! ```
//!
//! - [`input`] reads a document and finds the elicitations in it;
//! - [`protocol`] holds the MCP types and every wire constant, [`contract`]
//!   the suspension contract's Request and Answer and the two mappings;
//! - [`schema`] is the one form model that drives prompting, coercion,
//!   validation and lint; [`answers`] reads `--answer`s, and
//!   [`answer_rules`] matches `--answers` rules to an elicitation;
//! - [`resolve`] settles each elicitation (scripted answers, then a
//!   [`resolve::Resolver`]: the terminal, the browser page, or
//!   [`resolve::NoTerminal`]);
//! - [`output`] prints results in the shape the input came in; [`lines`]
//!   runs a stream of documents;
//! - [`json`] words what every stage says about JSON it was given (a
//!   value's kind, a parse error), below them all.
//!
//! The people-facing resolvers live outside this folder (`elicit_ui::terminal`,
//! `elicit_ui::page`) and implement [`resolve::Resolver`]; nothing here imports
//! them.

pub mod answer_rules;
pub mod answers;
pub mod contract;
pub mod input;
pub mod json;
pub mod lines;
pub mod output;
pub mod protocol;
pub mod resolve;
pub mod schema;

use crate::error::{self, ElicitError};
use answers::ScriptedAnswers;
use input::{Document, Shape};
use protocol::ElicitResult;
use resolve::{Elicitation, Resolver, SchemaCache};

pub use json::json_kind;

/// The outcome of resolving one document: the printed text and the results.
#[derive(Debug)]
pub struct Resolved {
    /// The text to print: the result (or results) in the input's shape.
    pub output: String,
    /// Each elicitation's id (where the input had one) and its result.
    pub results: Vec<(Option<String>, ElicitResult)>,
    /// Things the person should know (schema oddities, skipped entries).
    pub warnings: Vec<String>,
}

/// Resolves every elicitation in `doc` in turn and renders the output.
/// Nothing is rendered unless every entry resolved: a failure leaves stdout
/// empty.
pub fn resolve_document(
    doc: Document,
    scripted: &ScriptedAnswers,
    person: &mut dyn Resolver,
    cache: &mut SchemaCache,
    pretty: bool,
) -> Result<Resolved, ElicitError> {
    let total = doc.entries.len();
    let strict = total <= 1
        && !matches!(
            doc.shape,
            Shape::InputRequired { .. } | Shape::UrlElicitationRequired
        );
    let mut warnings: Vec<String> = doc
        .skipped
        .iter()
        .map(|s| format!("skipped input request {s}: elicit only answers elicitation/create; the host must answer it"))
        .collect();
    let mut prepared = Vec::with_capacity(total);
    for (i, entry) in doc.entries.into_iter().enumerate() {
        let mut e = match entry.form {
            Some(form) => Elicitation::with_form(entry.params, Some(form)),
            None => {
                Elicitation::prepare_with_text(entry.params, entry.schema_text.as_deref(), cache)?
            }
        };
        e.key = entry.key;
        e.server = doc.server.clone();
        if total > 1 {
            e.position = Some((i + 1, total));
        }
        if let Some(form) = &e.form {
            let at = e
                .key
                .as_deref()
                .map(|k| format!("{k}: "))
                .unwrap_or_default();
            warnings.extend(form.warnings_once().iter().map(|w| format!("{at}{w}")));
        }
        prepared.push(e);
    }
    // Every warning is out before the first prompt (or refusal).
    if !warnings.is_empty() && person.warn_early(&warnings) {
        warnings.clear();
    }
    if !strict {
        // A scripted field that no form in the input has is a typo, not a
        // value meant for another form.
        let unknown: Vec<error::FieldError> = scripted
            .field_names()
            .filter(|n| {
                !prepared
                    .iter()
                    .any(|e| e.form.as_ref().is_some_and(|f| f.field(n).is_some()))
            })
            .map(|n| error::FieldError {
                field: n.to_string(),
                reason: "not a field of any requested schema in the input".into(),
            })
            .collect();
        if !unknown.is_empty() && prepared.iter().any(|e| e.form.is_some()) {
            return Err(ElicitError::Validation(unknown));
        }
    }
    let mut results = Vec::with_capacity(total);
    for e in &prepared {
        let r = resolve::resolve(e, scripted, strict, person)?;
        results.push((e.key.clone(), r));
    }
    let output = output::render(&doc.shape, &results, pretty);
    Ok(Resolved {
        output,
        results,
        warnings,
    })
}

/// Reads one document from `text` and resolves it: the one rule every entry
/// point (a single document, `--lines`) follows. Any failure of a JSON-RPC
/// request, found while reading the document or later (its schema, its
/// answers), carries the request's id, so the caller can hand a JSON-RPC
/// error back to the server.
pub fn resolve_text(
    text: &str,
    scripted: &ScriptedAnswers,
    person: &mut dyn Resolver,
    cache: &mut SchemaCache,
    pretty: bool,
) -> Result<Resolved, input::InputFailure> {
    let doc = if cache.is_single_use() {
        input::read_single_document(text)?
    } else {
        input::read_document_with(text, &|schema| cache.known(schema), cache.last_text())?
    };
    let reply_id = match &doc.shape {
        Shape::JsonRpcRequest { id } => Some(id.clone()),
        _ => None,
    };
    resolve_document(doc, scripted, person, cache, pretty)
        .map_err(|error| input::InputFailure { error, reply_id })
}
