//! The checks: one document (any shape elicit reads) in, its findings out.

use serde_json::{Map, Value};

use super::{pointer, Finding, Revision, Severity};
use crate::elicitation::input::{self, Document, Shape};
use crate::elicitation::protocol::{ElicitationParams, Mode};
use crate::error::ElicitError;
use crate::text::url_safety::{assess_url, UrlWarning};

mod findings;
mod form;
mod links;
use findings::Findings;
pub use findings::MAX_PER_RULE;
use form::*;
use links::has_link;

/// `requestState` longer than this many bytes is `request-state-too-large`.
pub(crate) const MAX_REQUEST_STATE: usize = 16 * 1024;

/// The findings of one document.
#[derive(Debug, Clone)]
pub struct DocumentLint {
    /// The revision the rules followed.
    pub revision: Revision,
    /// How it was chosen, in words ("--protocol", "the input is an
    /// input_required result"…).
    pub(crate) revision_from: String,
    /// Every finding, before `--allow`/`--deny`; pointers are into this
    /// document.
    pub findings: Vec<Finding>,
    /// The elicitations found, by label, in order.
    pub elicitations: Vec<String>,
}

/// Why a document could not be linted at all (not JSON, not an
/// elicitation): `elicit lint` exits 2.
pub(crate) type LintFailure = ElicitError;

/// Lints one document: a bare params object, a request, a JSON-RPC request,
/// an `input_required` result, a -32042 error, or a cassette.
pub fn lint_text(text: &str, protocol: Option<Revision>) -> Result<DocumentLint, LintFailure> {
    LogStream::default().lint_line(text, protocol)
}

/// Lines of one stream (`--lines`): elicit's own `--log` lines
/// (`{"dir", "time", "message"}`) are read as a session, each server
/// message linted at the revision the session negotiated (the
/// `initialize` result's `protocolVersion`, or the 2026-07-28 `_meta` on
/// what elicit sent); any other line is a document of its own.
#[derive(Debug, Default)]
pub struct LogStream {
    /// The revision the logged session speaks, once seen.
    revision: Option<Revision>,
}

impl LogStream {
    /// Lints one line (or a whole document).
    pub fn lint_line(
        &mut self,
        text: &str,
        protocol: Option<Revision>,
    ) -> Result<DocumentLint, LintFailure> {
        let raw = input::parse_json(text)?;
        if let Some(tag) = raw.get("elicit").and_then(Value::as_str) {
            if tag.starts_with("cassette/") {
                return lint_cassette(&raw, protocol);
            }
        }
        let Some((dir, message)) = log_entry(&raw) else {
            return lint_value(&raw, text, "", protocol);
        };
        if let Some(seen) = logged_revision(dir, message) {
            self.revision = Some(seen);
        }
        let chosen = protocol.or(self.revision);
        if dir != "recv" || !carries_elicitation(message) {
            // What elicit sent, and server messages that ask nothing.
            return Ok(DocumentLint {
                revision: chosen.unwrap_or(Revision::NEWEST),
                revision_from: "the logged session".into(),
                findings: Vec::new(),
                elicitations: Vec::new(),
            });
        }
        let mut one = lint_value(message, &message.to_string(), "/message", chosen)?;
        if protocol.is_none() && self.revision.is_some() {
            one.revision_from = "the session in the log".into();
        }
        Ok(one)
    }
}

/// `(dir, message)` of a line of elicit's `--log`.
fn log_entry(raw: &Value) -> Option<(&str, &Value)> {
    let obj = raw.as_object()?;
    let dir = obj.get("dir")?.as_str()?;
    obj.get("time")?.as_str()?;
    let message = obj.get("message").or_else(|| obj.get("raw"))?;
    matches!(dir, "send" | "recv").then_some((dir, message))
}

/// The revision a logged message shows the session speaks.
fn logged_revision(dir: &str, message: &Value) -> Option<Revision> {
    let version = match dir {
        "recv" => message.get("result")?.get("protocolVersion"),
        _ => message
            .get("params")?
            .get("_meta")?
            .get(crate::elicitation::protocol::wire::VERSION_META),
    };
    Revision::from_version(version?.as_str()?)
}

/// Whether a server message asks something: an `elicitation/create`
/// request, an `input_required` result, or a -32042 error.
fn carries_elicitation(message: &Value) -> bool {
    let method = message.get("method").and_then(Value::as_str);
    let result_type = message
        .get("result")
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str);
    let code = message
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64);
    method == Some(crate::elicitation::protocol::ELICITATION_METHOD)
        || result_type == Some("input_required")
        || code == Some(crate::elicitation::protocol::URL_ELICITATION_REQUIRED)
}

/// A cassette: `{"elicit": "cassette/1", "elicitations": [{"request": …}]}`,
/// each `request` linted as a document of its own, under its pointer.
fn lint_cassette(raw: &Value, protocol: Option<Revision>) -> Result<DocumentLint, LintFailure> {
    let list = raw
        .get("elicitations")
        .and_then(Value::as_array)
        .ok_or_else(|| ElicitError::UnknownShape {
            message: "a cassette without an `elicitations` array".into(),
        })?;
    // A cassette names its revision `protocol` ("auto" names none); an
    // entry may carry its own `protocolVersion`.
    let version = |v: &Value| {
        ["protocol", "protocolVersion"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_str))
            .and_then(Revision::from_version)
    };
    let mut out = DocumentLint {
        revision: protocol
            .or_else(|| version(raw))
            .unwrap_or(Revision::NEWEST),
        revision_from: String::new(),
        findings: Vec::new(),
        elicitations: Vec::new(),
    };
    let mut from = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let base = format!("/elicitations/{i}/request");
        let Some(request) = item.get("request") else {
            return Err(ElicitError::UnknownShape {
                message: format!("cassette entry elicitations[{i}] has no `request`"),
            });
        };
        let text = request.to_string();
        let chosen = protocol.or_else(|| version(item)).or_else(|| version(raw));
        let mut one =
            lint_value(request, &text, &base, chosen).map_err(|e| ElicitError::UnknownShape {
                message: format!("cassette entry elicitations[{i}].request: {e}"),
            })?;
        // "elicitations[0]", or "elicitations[0] inputRequests["k"]" when
        // the request holds several.
        let relabel = |label: &str| match label {
            "the elicitation" => format!("elicitations[{i}]"),
            other => format!("elicitations[{i}] {other}"),
        };
        for label in &mut one.elicitations {
            *label = relabel(label);
        }
        for f in &mut one.findings {
            f.elicitation = Some(relabel(
                f.elicitation.as_deref().unwrap_or("the elicitation"),
            ));
        }
        if i == 0 && protocol.is_none() {
            out.revision = one.revision;
        }
        // A revision the cassette names is the cassette's, not `--protocol`'s.
        from.push(if protocol.is_some() {
            one.revision_from.clone()
        } else if version(item).is_some() {
            format!("the cassette's elicitations[{i}]")
        } else if version(raw).is_some() {
            "the cassette's protocol".into()
        } else {
            one.revision_from.clone()
        });
        out.findings.append(&mut one.findings);
        out.elicitations.append(&mut one.elicitations);
    }
    out.revision_from = if protocol.is_some() {
        "--protocol".into()
    } else {
        from.first()
            .cloned()
            .unwrap_or_else(|| "the newest; the cassette is empty".into())
    };
    Ok(out)
}

/// The revision an input shows by its shape and fields, and why.
fn detect(doc: &Document) -> (Revision, String) {
    let has_id = doc
        .entries
        .iter()
        .any(|e| e.params.elicitation_id.is_some());
    match &doc.shape {
        Shape::InputRequired { .. } => (
            Revision::V2026_07_28,
            "the input is an input_required result".into(),
        ),
        Shape::UrlElicitationRequired => {
            (Revision::V2025_11_25, "the input is a -32042 error".into())
        }
        _ if has_id => (
            Revision::V2025_11_25,
            "the request has an elicitationId".into(),
        ),
        Shape::JsonRpcRequest { .. } => (
            Revision::V2025_11_25,
            "the input is a JSON-RPC request: 2025-06-18 or 2025-11-25, the newer taken".into(),
        ),
        _ => (
            Revision::NEWEST,
            "the newest; the input does not show its revision".into(),
        ),
    }
}

/// The MCP params names and the names Claude Code's hook input gives them.
const HOOK_NAMES: [(&str, &str); 2] = [
    ("requestedSchema", "requested_schema"),
    ("elicitationId", "elicitation_id"),
];

/// The params of a Claude Code `Elicitation` hook input, by MCP's names.
fn hook_params(raw: &Value) -> Option<Value> {
    let obj = raw.as_object()?;
    if obj.get("hook_event_name")?.as_str()? != "Elicitation" {
        return None;
    }
    let mut params = Map::new();
    for key in ["message", "mode", "url"] {
        if let Some(v) = obj.get(key) {
            params.insert(key.into(), v.clone());
        }
    }
    for (ours, theirs) in HOOK_NAMES {
        if let Some(v) = obj.get(theirs) {
            params.insert(ours.into(), v.clone());
        }
    }
    Some(Value::Object(params))
}

/// Lints `raw` (parsed from `text`), whose pointers start at `base`.
fn lint_value(
    raw: &Value,
    text: &str,
    base: &str,
    protocol: Option<Revision>,
) -> Result<DocumentLint, LintFailure> {
    if let Some(params) = hook_params(raw) {
        return lint_hook_input(&params, base, protocol);
    }
    let doc = match input::read_document(text) {
        Ok(doc) => doc,
        Err(failure) => return unreadable_params(raw, base, protocol, failure.error),
    };
    let (revision, revision_from) = match protocol {
        Some(r) => (r, "--protocol".to_string()),
        None => detect(&doc),
    };
    let mut found = Findings::new(revision, None);
    let entry_base = entry_pointers(&doc, raw, base, &mut found);
    let url_required = matches!(doc.shape, Shape::UrlElicitationRequired);
    let mut elicitations = Vec::new();
    for (i, (entry, at)) in doc.entries.iter().zip(&entry_base).enumerate() {
        let label = match &entry.key {
            Some(k) if url_required => format!("data.elicitations[{i}] ({k:?})"),
            Some(k) => format!("inputRequests[{k:?}]"),
            None => "the elicitation".to_string(),
        };
        elicitations.push(label.clone());
        let rel = at.strip_prefix(base).unwrap_or(at);
        let Some(params_raw) = raw.pointer(rel) else {
            continue;
        };
        found.start(label);
        if url_required && entry.params.mode() != Mode::Url {
            found.add(
                "url-required-entry-not-url",
                at.clone(),
                "an entry of a -32042 error that is not a URL-mode elicitation",
            );
        }
        check_params(&entry.params, params_raw, at, &mut found);
    }
    Ok(DocumentLint {
        revision,
        revision_from,
        findings: found.finish(),
        elicitations,
    })
}

/// Claude Code's hook input: its elicitation (`params`) linted as bare
/// params, each pointer then named as the hook input spells it.
fn lint_hook_input(
    params: &Value,
    base: &str,
    protocol: Option<Revision>,
) -> Result<DocumentLint, LintFailure> {
    let mut lint = lint_value(params, &params.to_string(), base, protocol)?;
    for f in &mut lint.findings {
        for (ours, theirs) in HOOK_NAMES {
            let from = format!("{base}/{ours}");
            if f.pointer == from || f.pointer.starts_with(&format!("{from}/")) {
                f.pointer = format!("{base}/{theirs}{}", &f.pointer[from.len()..]);
            }
        }
    }
    Ok(lint)
}

/// Where the document's elicitations sit, by shape, one pointer per entry;
/// what the shape itself breaks in `found`'s revision is found on the way.
fn entry_pointers(doc: &Document, raw: &Value, base: &str, found: &mut Findings) -> Vec<String> {
    let revision = found.revision;
    match &doc.shape {
        Shape::BareParams => vec![base.to_string()],
        Shape::RequestObject => vec![format!("{base}/params")],
        Shape::JsonRpcRequest { .. } => {
            if revision == Revision::V2026_07_28 {
                found.add(
                    "shape-not-in-revision",
                    base.to_string(),
                    "a server-to-client JSON-RPC request: 2026-07-28 sends elicitations inside an input_required result",
                );
            }
            vec![format!("{base}/params")]
        }
        Shape::InputRequired { .. } => {
            let (result, at) = match raw.get("result") {
                Some(r) if raw.get("jsonrpc").is_some() || raw.get("id").is_some() => {
                    (r, format!("{base}/result"))
                }
                _ => (raw, base.to_string()),
            };
            check_input_required(result, &at, found);
            doc.entries
                .iter()
                .map(|e| {
                    pointer(
                        &at,
                        &["inputRequests", e.key.as_deref().unwrap_or(""), "params"],
                    )
                })
                .collect()
        }
        Shape::UrlElicitationRequired => {
            let at = match raw.get("error") {
                Some(_) => format!("{base}/error"),
                None => base.to_string(),
            };
            if revision != Revision::V2025_11_25 {
                found.add(
                    "shape-not-in-revision",
                    format!("{at}/code"),
                    format!(
                        "a -32042 URLElicitationRequiredError: only 2025-11-25 has it, not {revision}"
                    ),
                );
            }
            (0..doc.entries.len())
                .map(|i| format!("{at}/data/elicitations/{i}"))
                .collect()
        }
        // Read above, as bare params.
        Shape::ClaudeCodeHook => vec![base.to_string()],
    }
}

/// An elicitation whose params elicit cannot read (an unknown mode, a form
/// without its schema…) is the server's mistake: a finding, not an
/// unreadable input. Anything else (not an elicitation at all) is.
fn unreadable_params(
    raw: &Value,
    base: &str,
    protocol: Option<Revision>,
    error: ElicitError,
) -> Result<DocumentLint, LintFailure> {
    if !matches!(
        error,
        ElicitError::InvalidParams { .. } | ElicitError::UnknownMode { .. }
    ) {
        return Err(error);
    }
    let at = match raw.get("params") {
        Some(_) => format!("{base}/params"),
        None => base.to_string(),
    };
    let revision = protocol.unwrap_or(Revision::NEWEST);
    let mut found = Findings::new(revision, Some("the elicitation".into()));
    found.add("params-invalid", at, error.to_string());
    Ok(DocumentLint {
        revision,
        revision_from: match protocol {
            Some(_) => "--protocol".into(),
            None => "the newest; the params could not be read".into(),
        },
        findings: found.finish(),
        elicitations: vec!["the elicitation".into()],
    })
}

fn check_input_required(result: &Value, at: &str, found: &mut Findings) {
    if found.revision < Revision::V2026_07_28 {
        found.add(
            "shape-not-in-revision",
            at.to_string(),
            format!(
                "an input_required result: {} has no InputRequiredResult (it came with 2026-07-28)",
                found.revision
            ),
        );
    }
    if result.get("resultType").is_none() {
        found.add(
            "result-type-missing",
            at.to_string(),
            "the result has inputRequests but no \"resultType\": \"input_required\"",
        );
    }
    let requests_empty = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    match result.get("requestState") {
        None if requests_empty => found.add(
            "input-required-empty",
            at.to_string(),
            "an input_required result with neither inputRequests nor requestState",
        ),
        None => {}
        Some(Value::String(s)) if s.len() > MAX_REQUEST_STATE => found.add(
            "request-state-too-large",
            format!("{at}/requestState"),
            format!(
                "requestState is {} bytes (over {} KiB), echoed on every retry",
                s.len(),
                MAX_REQUEST_STATE / 1024
            ),
        ),
        Some(Value::String(_)) => {}
        Some(other) => found.add(
            "request-state-not-string",
            format!("{at}/requestState"),
            format!(
                "requestState is {}, not a string",
                crate::elicitation::json::json_kind(other)
            ),
        ),
    }
}

/// Params members each revision defines.
fn defined_params(revision: Revision) -> &'static [&'static str] {
    match revision {
        Revision::V2025_06_18 => &["message", "requestedSchema", "_meta"],
        Revision::V2025_11_25 => &[
            "mode",
            "message",
            "requestedSchema",
            "url",
            "elicitationId",
            "_meta",
            "task",
        ],
        Revision::V2026_07_28 => &["mode", "message", "requestedSchema", "url"],
    }
}

/// Every member any revision defines.
const ANY_REVISION_PARAMS: &[&str] = &[
    "mode",
    "message",
    "requestedSchema",
    "url",
    "elicitationId",
    "_meta",
    "task",
];

fn check_params(params: &ElicitationParams, raw: &Value, at: &str, found: &mut Findings) {
    let Some(obj) = raw.as_object() else {
        return;
    };
    let revision = found.revision;
    match obj.get("message") {
        None | Some(Value::Null) => found.add(
            "message-missing",
            at.to_string(),
            "the request has no message: the person is not told why they are asked",
        ),
        Some(Value::String(s)) if s.trim().is_empty() => found.add(
            "message-empty",
            pointer(at, &["message"]),
            "the message is empty",
        ),
        _ => {}
    }
    for key in obj.keys() {
        let here = pointer(at, &[key]);
        if !ANY_REVISION_PARAMS.contains(&key.as_str()) {
            found.add(
                "params-unknown-key",
                here,
                format!("{key:?} is not a member of elicitation params"),
            );
        } else if !defined_params(revision).contains(&key.as_str()) {
            if key == "mode" && params.mode() == Mode::Url {
                found.add(
                    "mode-not-in-revision",
                    here,
                    format!("a URL-mode request: {revision} has form mode only"),
                );
            } else if !(key == "url" && revision == Revision::V2025_06_18) {
                found.add(
                    "field-not-in-revision",
                    here,
                    format!("{key:?} is not a member of elicitation params in {revision}"),
                );
            }
        }
    }
    match params.mode() {
        Mode::Form => {
            for key in ["url", "elicitationId"] {
                if obj.contains_key(key) {
                    found.add(
                        "params-mode-mismatch",
                        pointer(at, &[key]),
                        format!("a form-mode request with {key:?}, which only URL mode uses"),
                    );
                }
            }
            if let Some(Value::String(m)) = obj.get("message") {
                if has_link(m) {
                    found.add(
                        "form-contains-url",
                        pointer(at, &["message"]),
                        "the message of a form-mode request holds a link",
                    );
                }
            }
            if let Some(schema) = obj.get("requestedSchema") {
                check_schema(schema, &pointer(at, &["requestedSchema"]), found);
            }
        }
        Mode::Url => {
            if obj.contains_key("requestedSchema") {
                found.add(
                    "params-mode-mismatch",
                    pointer(at, &["requestedSchema"]),
                    "a URL-mode request with a requestedSchema, which only form mode uses",
                );
            }
            if params.elicitation_id.as_deref().is_none_or(str::is_empty) {
                let here = match params.elicitation_id {
                    Some(_) => pointer(at, &["elicitationId"]),
                    None => at.to_string(),
                };
                found.add(
                    "url-missing-elicitation-id",
                    here,
                    "a URL-mode request without an elicitationId",
                );
            }
            if let Some(url) = &params.url {
                check_url(url, &pointer(at, &["url"]), found);
            }
        }
    }
}

fn check_url(url: &str, at: &str, found: &mut Findings) {
    let assessment = assess_url(url);
    for w in &assessment.warnings {
        match w {
            UrlWarning::ForbiddenScheme { scheme } => found.add(
                "url-scheme-forbidden",
                at.to_string(),
                format!("the URL's scheme is {scheme:?}: only http and https are opened"),
            ),
            UrlWarning::Unparseable { reason } => found.add(
                "url-invalid",
                at.to_string(),
                format!("not a valid absolute URL ({reason})"),
            ),
            UrlWarning::ControlCharacters => found.add(
                "url-invalid",
                at.to_string(),
                "the URL holds spaces, control or invisible characters",
            ),
            UrlWarning::NotHttps { scheme } => found.add(
                "url-not-https",
                at.to_string(),
                format!("the URL is {scheme}, not https"),
            ),
            UrlWarning::UserInfo { .. } => found.add(
                "url-has-userinfo",
                at.to_string(),
                "the URL has user information (user@) before its host",
            ),
            _ => {}
        }
    }
}

/// The severity the findings of `lint` reach, if any.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
