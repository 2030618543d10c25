//! The checks: one document (any shape elicit reads) in, its findings out.

use serde_json::{Map, Value};

use super::{pointer, rule, Finding, Revision, Severity};
use crate::elicitation::input::{self, Document, Shape};
use crate::elicitation::protocol::{ElicitationParams, Mode};
use crate::elicitation::schema::{exact_integer, FieldKind, FormField, FormSchema, StringFormat};
use crate::error::ElicitError;
use crate::text::url_safety::{assess_url, UrlWarning};

/// `requestState` longer than this many bytes is `request-state-too-large`.
pub const MAX_REQUEST_STATE: usize = 16 * 1024;

/// The findings of one document.
#[derive(Debug, Clone)]
pub struct DocumentLint {
    /// The revision the rules followed.
    pub revision: Revision,
    /// How it was chosen, in words ("--protocol", "the input is an
    /// input_required result"…).
    pub revision_from: String,
    /// Every finding, before `--allow`/`--deny`; pointers are into this
    /// document.
    pub findings: Vec<Finding>,
    /// The elicitations found, by label, in order.
    pub elicitations: Vec<String>,
}

/// Why a document could not be linted at all (not JSON, not an
/// elicitation): `elicit lint` exits 2.
pub type LintFailure = ElicitError;

/// Lints one document: a bare params object, a request, a JSON-RPC request,
/// an `input_required` result, a -32042 error, or a cassette.
pub fn lint_text(text: &str, protocol: Option<Revision>) -> Result<DocumentLint, LintFailure> {
    let raw = input::parse_json(text)?;
    if let Some(tag) = raw.get("elicit").and_then(Value::as_str) {
        if tag.starts_with("cassette/") {
            return lint_cassette(&raw, protocol);
        }
    }
    lint_value(&raw, text, "", protocol)
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
    let version = |v: &Value| {
        v.get("protocolVersion")
            .and_then(Value::as_str)
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
        from.push(one.revision_from.clone());
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

/// At most this many findings of one rule are listed per elicitation (an
/// enum of 100 000 duplicate values is one problem, not 100 000); the rest
/// are counted in one more finding.
pub const MAX_PER_RULE: usize = 20;

/// Collects findings, keeping those whose rule applies to the revision.
struct Findings {
    revision: Revision,
    list: Vec<Finding>,
    elicitation: Option<String>,
    /// Findings per rule in the current elicitation.
    counts: std::collections::HashMap<&'static str, usize>,
    /// Findings left out, per rule, with where the first of them was.
    left_out: Vec<(&'static super::Rule, usize, String)>,
}

impl Findings {
    fn new(revision: Revision, elicitation: Option<String>) -> Findings {
        Findings {
            revision,
            list: Vec::new(),
            elicitation,
            counts: Default::default(),
            left_out: Vec::new(),
        }
    }

    /// Starts the findings of another elicitation.
    fn start(&mut self, label: String) {
        self.flush();
        self.elicitation = Some(label);
    }

    /// Adds one finding per rule that had more than [`MAX_PER_RULE`].
    fn flush(&mut self) {
        self.counts.clear();
        for (rule, n, at) in std::mem::take(&mut self.left_out) {
            self.list.push(Finding {
                rule,
                severity: rule.severity,
                pointer: at,
                message: format!(
                    "… and {n} more {} finding{} here, not listed",
                    rule.id,
                    if n == 1 { "" } else { "s" }
                ),
                revision: self.revision,
                elicitation: self.elicitation.clone(),
            });
        }
    }

    fn finish(mut self) -> Vec<Finding> {
        self.flush();
        self.list
    }

    fn add(&mut self, id: &str, at: String, message: impl Into<String>) {
        let rule = rule(id).unwrap_or_else(|| panic!("no lint rule {id}"));
        if !rule.applies_to(self.revision) {
            return;
        }
        let count = self.counts.entry(rule.id).or_insert(0);
        *count += 1;
        if *count > MAX_PER_RULE {
            match self.left_out.iter_mut().find(|(r, _, _)| r.id == rule.id) {
                Some((_, n, _)) => *n += 1,
                None => self.left_out.push((rule, 1, at)),
            }
            return;
        }
        self.list.push(Finding {
            rule,
            severity: rule.severity,
            pointer: at,
            message: message.into(),
            revision: self.revision,
            elicitation: self.elicitation.clone(),
        });
    }
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

/// Lints `raw` (parsed from `text`), whose pointers start at `base`.
fn lint_value(
    raw: &Value,
    text: &str,
    base: &str,
    protocol: Option<Revision>,
) -> Result<DocumentLint, LintFailure> {
    let doc = match input::read_document(text) {
        Ok(doc) => doc,
        Err(failure) => return unreadable_params(raw, base, protocol, failure.error),
    };
    let (revision, revision_from) = match protocol {
        Some(r) => (r, "--protocol".to_string()),
        None => detect(&doc),
    };
    let mut found = Findings::new(revision, None);
    // Where the elicitations sit, by shape.
    let mut elicitations = Vec::new();
    let entry_base: Vec<String> = match &doc.shape {
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
            check_input_required(result, &at, &mut found);
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
    };
    let url_required = matches!(doc.shape, Shape::UrlElicitationRequired);
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
                crate::elicitation::json_kind(other)
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

/// Whether text holds an http(s) link.
fn has_link(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("https://") || lower.contains("http://")
}

/// Keywords a form property may carry (of any kind); anything else is
/// `property-keyword-unknown`, `pattern` is `pattern-unsupported`.
const PROPERTY_KEYWORDS: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "enum",
    "enumNames",
    "oneOf",
    "items",
    "minItems",
    "maxItems",
];

fn check_schema(schema: &Value, at: &str, found: &mut Findings) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    let form = match FormSchema::parse(schema) {
        Ok(form) => Some(form),
        Err(e) => {
            let id = if obj.get("properties").is_some_and(|p| !p.is_object()) {
                "schema-type-not-object"
            } else {
                "params-invalid"
            };
            found.add(id, pointer(at, &["properties"]), e.to_string());
            None
        }
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => found.add(
            "schema-type-not-object",
            at.to_string(),
            "requestedSchema has no \"type\": \"object\"",
        ),
        Some(other) => found.add(
            "schema-type-not-object",
            pointer(at, &["type"]),
            format!("requestedSchema's type is {other}, not \"object\""),
        ),
    }
    if obj.get("properties").is_none() {
        found.add(
            "schema-type-not-object",
            at.to_string(),
            "requestedSchema has no properties",
        );
    }
    for key in obj.keys() {
        let known = matches!(key.as_str(), "type" | "properties" | "required")
            || (key == "$schema" && found.revision >= Revision::V2025_11_25);
        if !known {
            found.add(
                "schema-keyword-unknown",
                pointer(at, &[key]),
                format!("{key:?} is not a keyword of an MCP requestedSchema"),
            );
        }
    }
    match obj.get("required") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let properties = obj.get("properties").and_then(Value::as_object);
            for (i, item) in items.iter().enumerate() {
                let here = pointer(at, &["required", &i.to_string()]);
                match item {
                    Value::String(name) => {
                        if properties.is_some_and(|p| !p.contains_key(name)) {
                            found.add(
                                "required-not-a-property",
                                here,
                                format!("{name:?} is required but is not a property"),
                            );
                        }
                    }
                    other => found.add(
                        "required-invalid",
                        here,
                        format!(
                            "an entry of required is {}, not a name",
                            crate::elicitation::json_kind(other)
                        ),
                    ),
                }
            }
        }
        Some(other) => found.add(
            "required-invalid",
            pointer(at, &["required"]),
            format!(
                "required is {}, not an array of names",
                crate::elicitation::json_kind(other)
            ),
        ),
    }
    let (Some(form), Some(properties)) = (form, obj.get("properties").and_then(Value::as_object))
    else {
        return;
    };
    for field in &form.fields {
        if let Some(prop) = properties.get(&field.name) {
            check_field(
                field,
                prop,
                &pointer(at, &["properties", &field.name]),
                found,
            );
        }
    }
}

/// Whether a schema describes an object (`type: "object"`, or
/// `properties` without a type).
fn is_object_schema(v: &Value) -> bool {
    match v.get("type") {
        Some(Value::String(t)) => t == "object",
        None => v.get("properties").is_some(),
        _ => false,
    }
}

fn check_field(field: &FormField, prop: &Value, at: &str, found: &mut Findings) {
    let name = &field.name;
    let Some(obj) = prop.as_object() else {
        found.add(
            "property-type-unsupported",
            at.to_string(),
            format!(
                "property {name:?} is {}, not a schema object",
                crate::elicitation::json_kind(prop)
            ),
        );
        return;
    };
    let get = |k: &str| obj.get(k);
    let typ = get("type").and_then(Value::as_str);
    let items = get("items");
    let titled_items = items.and_then(|i| i.get("anyOf").or_else(|| i.get("oneOf")));
    if let FieldKind::Raw { why } = &field.kind {
        if is_object_schema(prop) {
            found.add(
                "form-nested-property",
                at.to_string(),
                format!("property {name:?} is an object: forms are flat"),
            );
            return;
        }
        if typ == Some("array") && items.is_some_and(is_object_schema) {
            found.add(
                "form-nested-property",
                pointer(at, &["items"]),
                format!("property {name:?} is an array of objects: forms are flat"),
            );
            return;
        }
        // A titled multi-select with a broken option is reported as such
        // below, not as an unknown kind.
        if !(typ == Some("array") && titled_items.is_some_and(Value::is_array)) {
            found.add(
                "property-type-unsupported",
                match get("type") {
                    Some(_) => pointer(at, &["type"]),
                    None => at.to_string(),
                },
                format!("property {name:?}: {why}"),
            );
            return;
        }
    }
    if let Some(problem) = &field.schema_problem {
        found.add(
            "property-schema-invalid",
            at.to_string(),
            format!("property {name:?}: {problem}"),
        );
    }
    for key in obj.keys() {
        if !PROPERTY_KEYWORDS.contains(&key.as_str()) {
            found.add(
                "property-keyword-unknown",
                pointer(at, &[key]),
                format!("{key:?} on property {name:?} is not part of an MCP form schema"),
            );
        }
    }
    if get("pattern").is_some() {
        found.add(
            "pattern-unsupported",
            pointer(at, &["pattern"]),
            format!("property {name:?} has a pattern, which MCP's string schema does not define"),
        );
    }
    for key in ["title", "description"] {
        if get(key).and_then(Value::as_str).is_some_and(has_link) {
            found.add(
                "form-contains-url",
                pointer(at, &[key]),
                format!("the {key} of property {name:?} holds a link"),
            );
        }
    }
    let inverted = |found: &mut Findings, low: &str, high: &str| {
        if let (Some(Value::Number(a)), Some(Value::Number(b))) = (get(low), get(high)) {
            if let (Some(a), Some(b)) = (a.as_f64(), b.as_f64()) {
                if a > b {
                    found.add(
                        "bounds-inverted",
                        pointer(at, &[low]),
                        format!("property {name:?} has {low} {a} above {high} {b}: no value fits"),
                    );
                }
            }
        }
    };
    match &field.kind {
        FieldKind::Text { format, .. } => {
            if let Some(StringFormat::Other(f)) = format {
                found.add(
                    "format-unknown",
                    pointer(at, &["format"]),
                    format!("property {name:?} has format {f:?}: MCP defines email, uri, date and date-time"),
                );
            }
            inverted(found, "minLength", "maxLength");
        }
        FieldKind::Integer { .. } => {
            for key in ["minimum", "maximum"] {
                if let Some(Value::Number(n)) = get(key) {
                    if exact_integer(n.as_str()).is_err() {
                        found.add(
                            "integer-bound-not-whole",
                            pointer(at, &[key]),
                            format!("integer property {name:?} has {key} {n}"),
                        );
                    }
                }
            }
            inverted(found, "minimum", "maximum");
        }
        FieldKind::Number { .. } => inverted(found, "minimum", "maximum"),
        FieldKind::MultiSelect { .. } | FieldKind::Raw { .. } => {
            inverted(found, "minItems", "maxItems");
        }
        FieldKind::Boolean | FieldKind::Select { .. } => {}
    }
    if typ == Some("string") {
        check_single_select(field, obj, at, found);
    }
    if typ == Some("array") {
        check_multi_select(field, obj, at, found);
    }
    check_default(field, obj, at, found);
    let secret_format = matches!(
        &field.kind,
        FieldKind::Text { format: Some(StringFormat::Other(f)), .. } if f == "password"
    );
    let may_hold_secret = matches!(
        field.kind,
        FieldKind::Text { .. } | FieldKind::Integer { .. } | FieldKind::Number { .. }
    );
    if may_hold_secret
        && (secret_format || crate::text::sanitize::looks_like_secret(name, field.title.as_deref()))
    {
        found.add(
            "form-requests-secret",
            at.to_string(),
            format!("property {name:?} looks like a secret (a password, key, token or PIN): ask for it in URL mode"),
        );
    }
}

/// Checks a list of `{const, title}` options; returns the values.
fn check_options(list: &[Value], at: &str, found: &mut Findings) -> Vec<Option<String>> {
    list.iter()
        .enumerate()
        .map(|(i, entry)| {
            let value = entry.get("const").and_then(Value::as_str);
            let title = entry.get("title").and_then(Value::as_str);
            if value.is_none() || title.is_none() {
                let missing = match (value, title) {
                    (None, None) => "a string const and a string title",
                    (None, _) => "a string const",
                    _ => "a string title",
                };
                found.add(
                    "enum-option-invalid",
                    pointer(at, &[&i.to_string()]),
                    format!("option {i} lacks {missing}"),
                );
            }
            value.map(str::to_string)
        })
        .collect()
}

/// `enum-empty` and `enum-duplicate-value` over a list of values.
fn check_values(values: &[Option<String>], at: &str, field: &str, found: &mut Findings) {
    if values.is_empty() {
        found.add(
            "enum-empty",
            at.to_string(),
            format!("property {field:?} offers no choices"),
        );
    }
    for (i, v) in values.iter().enumerate() {
        if let Some(v) = v {
            if values[..i].iter().any(|w| w.as_deref() == Some(v)) {
                found.add(
                    "enum-duplicate-value",
                    pointer(at, &[&i.to_string()]),
                    format!("property {field:?} lists {v:?} twice"),
                );
            }
        }
    }
}

fn string_values(list: &[Value]) -> Vec<Option<String>> {
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn check_single_select(
    field: &FormField,
    obj: &Map<String, Value>,
    at: &str,
    found: &mut Findings,
) {
    let name = &field.name;
    let one_of = obj.get("oneOf").and_then(Value::as_array);
    let values = obj.get("enum").and_then(Value::as_array);
    if let Some(list) = one_of {
        found.add(
            "kind-not-in-revision",
            pointer(at, &["oneOf"]),
            format!("property {name:?} is a titled select (oneOf), which 2025-06-18 does not have"),
        );
        let here = pointer(at, &["oneOf"]);
        let vals = check_options(list, &here, found);
        check_values(&vals, &here, name, found);
        if values.is_some() {
            found.add(
                "enum-shape-ambiguous",
                at.to_string(),
                format!("property {name:?} has both enum and oneOf"),
            );
        }
    } else if let Some(list) = values {
        check_values(&string_values(list), &pointer(at, &["enum"]), name, found);
    }
    if let Some(labels) = obj.get("enumNames") {
        let here = pointer(at, &["enumNames"]);
        found.add(
            "enum-names-deprecated",
            here.clone(),
            format!("property {name:?} labels its choices with the legacy enumNames; use oneOf of {{const, title}}"),
        );
        let count = labels.as_array().map(Vec::len);
        let want = values.map(Vec::len);
        if count != want || want.is_none() {
            found.add(
                "enum-names-length-mismatch",
                here,
                match (count, want) {
                    (Some(c), Some(w)) => {
                        format!("property {name:?} has {c} enumNames for {w} enum values")
                    }
                    (None, _) => format!("property {name:?} has enumNames that is not an array"),
                    (_, None) => format!("property {name:?} has enumNames but no enum"),
                },
            );
        }
    }
}

fn check_multi_select(field: &FormField, obj: &Map<String, Value>, at: &str, found: &mut Findings) {
    let name = &field.name;
    found.add(
        "kind-not-in-revision",
        pointer(at, &["type"]),
        format!("property {name:?} is a multi-select, which 2025-06-18 does not have"),
    );
    let Some(items) = obj.get("items").and_then(Value::as_object) else {
        return;
    };
    let items_at = pointer(at, &["items"]);
    if let Some(list) = items.get("anyOf").and_then(Value::as_array) {
        let here = pointer(&items_at, &["anyOf"]);
        let vals = check_options(list, &here, found);
        check_values(&vals, &here, name, found);
    } else if let Some(list) = items.get("oneOf").and_then(Value::as_array) {
        let here = pointer(&items_at, &["oneOf"]);
        found.add(
            "multiselect-items-oneof",
            here.clone(),
            format!(
                "property {name:?} lists its options in items.oneOf; the spec uses items.anyOf"
            ),
        );
        let vals = check_options(list, &here, found);
        check_values(&vals, &here, name, found);
    } else if let Some(list) = items.get("enum").and_then(Value::as_array) {
        if items.get("type").and_then(Value::as_str) != Some("string") {
            found.add(
                "multiselect-items-type",
                items_at,
                format!("the items of multi-select {name:?} have no \"type\": \"string\""),
            );
        }
        check_values(
            &string_values(list),
            &pointer(at, &["items", "enum"]),
            name,
            found,
        );
    }
}

fn check_default(field: &FormField, obj: &Map<String, Value>, at: &str, found: &mut Findings) {
    let Some(default) = obj.get("default") else {
        return;
    };
    let name = &field.name;
    let here = pointer(at, &["default"]);
    if !matches!(field.kind, FieldKind::Boolean) {
        found.add(
            "default-not-in-revision",
            here.clone(),
            format!("property {name:?} has a default; 2025-06-18 has defaults on booleans only"),
        );
    }
    match &field.kind {
        FieldKind::Select { choices } => {
            let ok = default
                .as_str()
                .is_some_and(|d| choices.iter().any(|c| c.value == d));
            if !ok {
                found.add(
                    "default-not-in-enum",
                    here,
                    format!(
                        "the default {} of {name:?} is not one of its values",
                        shown(default)
                    ),
                );
            }
        }
        FieldKind::MultiSelect { choices, .. } => match default.as_array() {
            Some(items) => {
                let mut all_choices = true;
                for (i, item) in items.iter().enumerate() {
                    if !item
                        .as_str()
                        .is_some_and(|d| choices.iter().any(|c| c.value == d))
                    {
                        all_choices = false;
                        found.add(
                            "default-not-in-enum",
                            pointer(&here, &[&i.to_string()]),
                            format!(
                                "the default {} of {name:?} is not one of its values",
                                shown(item)
                            ),
                        );
                    }
                }
                if all_choices {
                    if let Err(reason) = field.check(default) {
                        found.add(
                            "default-invalid",
                            here,
                            format!("the default of {name:?} is not a valid answer: {reason}"),
                        );
                    }
                }
            }
            None => found.add(
                "default-invalid",
                here,
                format!(
                    "the default of multi-select {name:?} is {}, not a list",
                    crate::elicitation::json_kind(default)
                ),
            ),
        },
        FieldKind::Raw { .. } => {}
        _ => {
            if let Err(reason) = field.check(&field.normalize(default.clone())) {
                found.add(
                    "default-invalid",
                    here,
                    format!("the default of {name:?} is not a valid answer: {reason}"),
                );
            }
        }
    }
}

/// A value as quoted in a finding: its JSON, cut at 60 characters.
fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(59).collect::<String>())
    } else {
        s
    }
}

/// The severity the findings of `lint` reach, if any.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
