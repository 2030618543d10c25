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

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use std::sync::Arc;

use crate::elicitation::protocol::{
    ElicitationParams, ELICITATION_METHOD, URL_ELICITATION_REQUIRED,
};
use crate::elicitation::schema::FormSchema;
use crate::error::ElicitError;

/// Largest input elicit reads in one document (or one `--lines` line).
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Deepest nesting of arrays and objects elicit reads (serde_json's own
/// recursion limit); deeper input is rejected, never a stack overflow.
pub const MAX_DEPTH: usize = 128;

/// Which shape the input had; it decides the output's shape.
#[derive(Debug, Clone)]
pub enum Shape {
    BareParams,
    RequestObject,
    /// `id` kept as the exact JSON text received.
    JsonRpcRequest {
        id: Box<RawValue>,
    },
    InputRequired {
        /// `requestState` exactly as received, echoed byte for byte.
        request_state: Option<Box<RawValue>>,
    },
    UrlElicitationRequired,
}

/// One elicitation found in the input.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The `inputRequests` key, or the `elicitationId` of a -32042 entry.
    pub key: Option<String>,
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
    pub shape: Shape,
    pub entries: Vec<Entry>,
    /// Entries of an `input_required` result that are not elicitations
    /// (sampling, roots…): elicit cannot answer them; the host must.
    pub skipped: Vec<String>,
    /// The server's name, when the input carries one: 2026-07-28 results put
    /// `serverInfo` in `_meta`.
    pub server: Option<String>,
}

/// `_meta` key under which 2026-07-28 results name the server.
pub const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

fn server_name(value: &Value) -> Option<String> {
    let from = |v: &Value| {
        v.get("_meta")?
            .get(SERVER_INFO_META)?
            .get("name")?
            .as_str()
            .map(str::to_string)
    };
    from(value).or_else(|| value.get("result").and_then(from))
}

/// An input that failed, with the JSON-RPC id to answer when it was a
/// JSON-RPC request (so a pipeline can hand an error back to the server).
#[derive(Debug)]
pub struct InputFailure {
    pub error: ElicitError,
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

/// serde_json's message without its own " at line L column C" suffix (we
/// print line and column ourselves).
pub fn json_error_text(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
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

#[derive(Deserialize)]
struct RawTop<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "requestState")]
    request_state: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<RawResult<'a>>,
    /// Bare params carry the schema at the top.
    #[serde(borrow, default, rename = "requestedSchema")]
    requested_schema: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<RawParams<'a>>,
}

/// `params` in the raw pass: only its `requestedSchema` is kept. Any other
/// value of `params` (a string, an array…) is not this pass's business and
/// yields nothing: the parsed value decides what is wrong with it.
struct RawParams<'a> {
    requested_schema: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for RawParams<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Visit<'a> {
            type Value = RawParams<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut requested_schema = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "requestedSchema" {
                        // The last of duplicate keys wins, as in the parsed value.
                        requested_schema = Some(map.next_value::<&'de RawValue>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(RawParams { requested_schema })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(RawParams {
                    requested_schema: None,
                })
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(RawParams {
                    requested_schema: None,
                })
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(RawParams {
                    requested_schema: None,
                })
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(RawParams {
                    requested_schema: None,
                })
            }
        }
        d.deserialize_any(Visit(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct RawResult<'a> {
    #[serde(borrow, default, rename = "requestState")]
    request_state: Option<&'a RawValue>,
}

/// The exact text of `id` and `requestState`: a parsed `Value` would turn
/// `1.0` into `1.0` but `1e2` into `100.0`, and could re-escape strings, and
/// both must go back to the server byte for byte.
struct RawBits {
    id: Option<Box<RawValue>>,
    request_state: Option<Box<RawValue>>,
    /// The text of `requestedSchema` at the top (bare params) and in
    /// `params` (a request): the schema cache's key.
    bare_schema: Option<Box<str>>,
    params_schema: Option<Box<str>>,
}

fn raw_bits(text: &str, value: &Value) -> RawBits {
    // The second, raw pass over the text is only worth it when there is
    // something to copy exactly, or a schema to look up by its text.
    let has_state = value.get("requestState").is_some()
        || value
            .get("result")
            .and_then(|r| r.get("requestState"))
            .is_some();
    let has_schema = value.get("requestedSchema").is_some()
        || value
            .get("params")
            .and_then(|p| p.get("requestedSchema"))
            .is_some();
    if value.get("id").is_none() && !has_state && !has_schema {
        return RawBits {
            id: None,
            request_state: None,
            bare_schema: None,
            params_schema: None,
        };
    }
    let from_value = |v: Option<&Value>| v.and_then(|v| RawValue::from_string(v.to_string()).ok());
    match serde_json::from_str::<RawTop<'_>>(text) {
        Ok(top) => RawBits {
            id: top.id.map(ToOwned::to_owned),
            request_state: top
                .request_state
                .or(top.result.and_then(|r| r.request_state))
                .map(ToOwned::to_owned),
            bare_schema: top.requested_schema.map(|r| r.get().into()),
            params_schema: top
                .params
                .and_then(|p| p.requested_schema)
                .map(|r| r.get().into()),
        },
        // Duplicate keys, or a `result` that is not an object: fall back to
        // the parsed value's serialisation.
        Err(_) => RawBits {
            id: from_value(value.get("id")),
            request_state: from_value(
                value
                    .get("requestState")
                    .or_else(|| value.get("result").and_then(|r| r.get("requestState"))),
            ),
            bare_schema: None,
            params_schema: None,
        },
    }
}

/// Detects the shape of `text` and extracts every elicitation in it.
pub fn read_document(text: &str) -> Result<Document, InputFailure> {
    read_document_with(text, &|_| None, None)
}

/// A schema the caller has already parsed, found by its JSON text (see
/// [`read_document_with`]).
pub struct KnownSchema {
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
pub fn read_single_document(text: &str) -> Result<Document, InputFailure> {
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

/// Marks the one-pass reader's own refusals (the two-pass reader decides).
const NOT_ONE_PASS: &str = "elicit: not for the one-pass reader";

/// The keys serde_json's `Value` reads specially when they come first in an
/// object (its number and raw-value markers): such an object is left to the
/// two-pass reader.
fn is_marker_key(key: &str) -> bool {
    key.starts_with("$serde_json::private::")
}

/// The top-level object, read in one pass: every member as a `Value` but
/// the ones kept as text (their slots in `members` hold `null` until they
/// are built, so the members keep their order).
struct OnePass<'a> {
    members: Map<String, Value>,
    id: Option<&'a RawValue>,
    request_state: Option<&'a RawValue>,
    bare_schema: Option<&'a RawValue>,
    params_schema: Option<&'a RawValue>,
}

/// How the one pass reads a `requestedSchema`: kept as text (`true`: the
/// schema cache finds a schema it has seen by its text, and never builds
/// it), or built in the same pass as everything else (`false`: a document
/// read once, with no cache to look in, would otherwise be scanned twice
/// there).
#[derive(Clone, Copy)]
struct OnePassSeed {
    keep_schema_text: bool,
}

impl OnePassSeed {
    fn new(keep_schema_text: bool) -> Self {
        OnePassSeed { keep_schema_text }
    }

    /// Reads all of `text` (as `serde_json::from_str` does: trailing
    /// characters are an error).
    fn read(self, text: &str) -> Option<OnePass<'_>> {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(text);
        let one = self.deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(one)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for OnePassSeed {
    type Value = OnePass<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<OnePass<'de>, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct Visit(OnePassSeed);
        impl<'de> Visitor<'de> for Visit {
            type Value = OnePass<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = OnePass {
                    members: Map::new(),
                    id: None,
                    request_state: None,
                    bare_schema: None,
                    params_schema: None,
                };
                let mut seen_params = false;
                while let Some(key) = map.next_key::<String>()? {
                    if out.members.is_empty() && is_marker_key(&key) {
                        return Err(Error::custom(NOT_ONE_PASS));
                    }
                    let raw_slot = match key.as_str() {
                        "id" => Some(&mut out.id),
                        "requestState" => Some(&mut out.request_state),
                        "requestedSchema" if self.0.keep_schema_text => Some(&mut out.bare_schema),
                        _ => None,
                    };
                    let value = if let Some(slot) = raw_slot {
                        if slot.replace(map.next_value::<&'de RawValue>()?).is_some() {
                            return Err(Error::custom(NOT_ONE_PASS));
                        }
                        Value::Null
                    } else if key == "params" {
                        if std::mem::replace(&mut seen_params, true) {
                            return Err(Error::custom(NOT_ONE_PASS));
                        }
                        let params = map.next_value_seed(ParamsSeed(self.0))?;
                        out.params_schema = params.schema;
                        Value::Object(params.members)
                    } else if key == "result" {
                        // Its `requestState` is kept as text too: the
                        // two-pass reader does that.
                        return Err(Error::custom(NOT_ONE_PASS));
                    } else {
                        map.next_value::<Value>()?
                    };
                    // A repeated key keeps its first place and its last
                    // value, as in a parsed `Value`.
                    out.members.insert(key, value);
                }
                Ok(out)
            }
        }
        d.deserialize_map(Visit(self))
    }
}

/// `params` in the one pass: an object, its `requestedSchema` kept as text
/// (its slot holds `null`).
struct OnePassParams<'a> {
    members: Map<String, Value>,
    schema: Option<&'a RawValue>,
}

/// Reads `params` as its [`OnePassSeed`] says.
struct ParamsSeed(OnePassSeed);

impl<'de> serde::de::DeserializeSeed<'de> for ParamsSeed {
    type Value = OnePassParams<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> Result<OnePassParams<'de>, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct Visit(OnePassSeed);
        impl<'de> Visitor<'de> for Visit {
            type Value = OnePassParams<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = OnePassParams {
                    members: Map::new(),
                    schema: None,
                };
                while let Some(key) = map.next_key::<String>()? {
                    if out.members.is_empty() && is_marker_key(&key) {
                        return Err(Error::custom(NOT_ONE_PASS));
                    }
                    let value = if key == "requestedSchema" && self.0.keep_schema_text {
                        if out.schema.replace(map.next_value()?).is_some() {
                            return Err(Error::custom(NOT_ONE_PASS));
                        }
                        Value::Null
                    } else {
                        map.next_value::<Value>()?
                    };
                    out.members.insert(key, value);
                }
                Ok(out)
            }
        }
        // Anything but an object is refused (the visitor only takes maps).
        d.deserialize_any(Visit(self.0))
    }
}

/// Builds a member kept as text, `level` objects deep in the document (1:
/// a member of the top object). `None` when it does not parse alone or
/// would nest too deeply where it sits: the two-pass reader then gives the
/// error.
fn build_member(raw: &str, level: usize) -> Option<Value> {
    let value: Value = serde_json::from_str(raw).ok()?;
    (level + nesting(&value) <= MAX_NESTING).then_some(value)
}

/// `text` with `schema` (a JSON object's text) replaced by `{}` where it
/// follows a `"requestedSchema":` key, and where: a line of a stream of one
/// request, read without its schema. Finding the key and comparing the
/// text after it costs a fraction of what serde_json takes to skip the
/// schema. `None` when no such key is followed by `schema`.
fn swap_out<'s>(text: &str, schema: &'s str) -> Option<(String, usize, &'s str)> {
    static KEY: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    if !(schema.starts_with('{') && schema.ends_with('}')) {
        return None;
    }
    let key = KEY.get_or_init(|| memchr::memmem::Finder::new(b"\"requestedSchema\""));
    let json_space = [' ', '\t', '\n', '\r'];
    let at = key.find_iter(text.as_bytes()).find_map(|k| {
        let after_key = &text[k + key.needle().len()..];
        let value = after_key
            .trim_start_matches(json_space)
            .strip_prefix(':')?
            .trim_start_matches(json_space);
        value.starts_with(schema).then(|| text.len() - value.len())
    })?;
    let rest = &text[at + schema.len()..];
    let mut swapped = String::with_capacity(at + 2 + rest.len());
    swapped.push_str(&text[..at]);
    swapped.push_str("{}");
    swapped.push_str(rest);
    Some((swapped, at, schema))
}

/// The texts of the top's and `params`' `requestedSchema`.
type SchemaTexts<'a> = (Option<&'a str>, Option<&'a str>);

/// Reads `swapped` (from [`swap_out`]) in one pass, when the `{}` put at
/// `at` is a `requestedSchema`'s whole value: then `schema` was that
/// member's value in the document (an object, read to its closing brace
/// wherever it stands, so the rest reads the same either way).
fn read_swapped<'a>(
    swapped: &'a str,
    at: usize,
    schema: &'a str,
) -> Option<(OnePass<'a>, SchemaTexts<'a>)> {
    let one = OnePassSeed::new(true).read(swapped)?;
    let here = |r: Option<&RawValue>| {
        r.is_some_and(|r| {
            r.get() == "{}"
                && (r.get().as_ptr() as usize).checked_sub(swapped.as_ptr() as usize) == Some(at)
        })
    };
    let texts = match (here(one.bare_schema), here(one.params_schema)) {
        (true, false) => (Some(schema), one.params_schema.map(RawValue::get)),
        (false, true) => (one.bare_schema.map(RawValue::get), Some(schema)),
        _ => return None,
    };
    Some((one, texts))
}

/// Which `requestedSchema` a [`KnownSchema`] was found for.
#[derive(Clone, Copy, PartialEq)]
enum SchemaAt {
    Top,
    Params,
}

/// The one pass of [`read_document_with`]; `None` leaves the document to
/// the two-pass reader.
fn read_in_one_pass(
    text: &str,
    known: &dyn Fn(&str) -> Option<KnownSchema>,
    likely: Option<&str>,
    seed: OnePassSeed,
) -> Option<Result<Document, InputFailure>> {
    // The likely schema text, where this line's schema sits, is not even
    // skipped: the line is read with `{}` in its place (see below).
    let swapped = likely
        .filter(|_| seed.keep_schema_text)
        .and_then(|schema| swap_out(text, schema));
    let read = swapped
        .as_ref()
        .and_then(|(m, at, schema)| read_swapped(m, *at, schema));
    let (one, (bare_schema, params_schema)) = match read {
        Some(read) => read,
        None => {
            let one = seed.read(text)?;
            let texts = (
                one.bare_schema.map(RawValue::get),
                one.params_schema.map(RawValue::get),
            );
            (one, texts)
        }
    };
    let OnePass {
        mut members,
        id,
        request_state,
        ..
    } = one;
    if bare_schema.is_some() && params_schema.is_some() {
        // Rare, and only one of them is the cache's key: not worth a rule.
        return None;
    }
    if let Some(raw) = id {
        members.insert("id".into(), build_member(raw.get(), 1)?);
    }
    if let Some(raw) = request_state {
        members.insert("requestState".into(), build_member(raw.get(), 1)?);
    }
    let (at, raw_schema, level) = match (bare_schema, params_schema) {
        (Some(raw), _) => (SchemaAt::Top, Some(raw), 1),
        (None, Some(raw)) => (SchemaAt::Params, Some(raw), 2),
        (None, None) => (SchemaAt::Top, None, 0),
    };
    let mut found = None;
    if let Some(raw) = raw_schema {
        let schema = match known(raw) {
            // Parsed before, so it parses again: only its depth here is new.
            Some(k) if level + k.nesting <= MAX_NESTING => {
                found = Some(k.form);
                // An object, as every schema the cache holds is: the shape
                // rules see the member they would see, never read it.
                Value::Object(Map::new())
            }
            _ => build_member(raw, level)?,
        };
        let slot = match at {
            SchemaAt::Top => members.get_mut("requestedSchema"),
            SchemaAt::Params => members
                .get_mut("params")
                .and_then(|p| p.get_mut("requestedSchema")),
        };
        // The pass left a slot where it kept the text; were it ever
        // missing, the two-pass reader decides (never a panic on input).
        *slot? = schema;
    }
    let text_of = |raw: Option<&str>, here: SchemaAt| match (raw, &found) {
        (Some(raw), None) if at == here => Some(Box::<str>::from(raw)),
        _ => None,
    };
    // The raw pass reads the top's members as `Option<&RawValue>`, which
    // takes `null` for absent (and `params`' schema as a `&RawValue`).
    fn at_top(r: Option<&RawValue>) -> Option<&RawValue> {
        r.filter(|r| r.get() != "null")
    }
    let raw = RawBits {
        id: at_top(id).map(ToOwned::to_owned),
        request_state: at_top(request_state).map(ToOwned::to_owned),
        bare_schema: text_of(bare_schema.filter(|t| *t != "null"), SchemaAt::Top),
        params_schema: text_of(params_schema, SchemaAt::Params),
    };
    let value = Value::Object(members);
    Some(finish_document(text, value, raw).map(|mut doc| {
        if let Some(form) = found {
            let here = match doc.shape {
                Shape::BareParams => SchemaAt::Top,
                Shape::RequestObject | Shape::JsonRpcRequest { .. } => SchemaAt::Params,
                _ => return doc,
            };
            if here == at {
                if let Some(entry) = doc.entries.first_mut() {
                    // The placeholder goes; the parsed form takes its place.
                    entry.params.requested_schema = None;
                    entry.form = Some(form);
                }
            }
        }
        doc
    }))
}

/// The two passes: the whole document parsed, then its exact bits read again.
fn read_document_two_pass(text: &str) -> Result<Document, InputFailure> {
    let value = parse_json(text)?;
    match &value {
        Value::Object(_) => {}
        other => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "expected a JSON object (an elicitation), found {}",
                    crate::elicitation::json_kind(other)
                ),
            }
            .into())
        }
    };
    let raw = raw_bits(text, &value);
    finish_document(text, value, raw)
}

/// The shape rules, the same for both readers.
fn finish_document(text: &str, value: Value, raw: RawBits) -> Result<Document, InputFailure> {
    let server = server_name(&value);
    let mut doc = read_shape(value, raw)?;
    if doc.server.is_none() {
        doc.server = server;
    }
    if matches!(doc.shape, Shape::InputRequired { .. }) {
        if let Some(key) = duplicate_input_request_key(text) {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "duplicate key {key:?} in `inputRequests`: each input request needs its own key, or one answer would be lost"
                ),
            }
            .into());
        }
    }
    Ok(doc)
}

/// Marks the error [`UniqueKeys`] raises, to tell it from any other.
const DUPLICATE_KEY: &str = "elicit: duplicate key ";

/// An object whose keys are checked for duplicates (values are skipped).
/// A parsed `Value` keeps only the last of two equal keys, so this looks at
/// the text itself.
struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = UniqueKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UniqueKeys, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format!(
                            "{DUPLICATE_KEY}{}",
                            serde_json::to_string(&key).unwrap_or_default()
                        )));
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(UniqueKeys)
            }
        }
        d.deserialize_map(Visit)
    }
}

#[derive(Deserialize)]
struct KeysTop {
    #[serde(default, rename = "inputRequests")]
    _input_requests: Option<UniqueKeys>,
    #[serde(default)]
    result: Option<KeysResult>,
}

#[derive(Deserialize)]
struct KeysResult {
    #[serde(default, rename = "inputRequests")]
    _input_requests: Option<UniqueKeys>,
}

/// The first key that `inputRequests` (bare or in a JSON-RPC `result`) has
/// twice, if any.
fn duplicate_input_request_key(text: &str) -> Option<String> {
    let err = match serde_json::from_str::<KeysTop>(text) {
        Ok(top) => {
            let _ = top.result;
            return None;
        }
        Err(e) => e.to_string(),
    };
    let at = err.find(DUPLICATE_KEY)? + DUPLICATE_KEY.len();
    let mut de = serde_json::Deserializer::from_str(&err[at..]);
    String::deserialize(&mut de).ok()
}

/// Owns the document, so the params of a request can be moved out (a large
/// schema is never copied).
fn read_shape(mut value: Value, raw: RawBits) -> Result<Document, InputFailure> {
    let obj = value
        .as_object_mut()
        .expect("read_document checked for an object");
    // JSON-RPC: a request (method), a response (result) or an error.
    if obj.contains_key("jsonrpc") || (obj.contains_key("id") && obj.contains_key("method")) {
        if obj.contains_key("method") {
            let id = match (obj.get("id"), raw.id) {
                (Some(Value::String(_) | Value::Number(_)), Some(id)) => id,
                (None, _) | (Some(Value::Null), _) => {
                    return Err(ElicitError::UnknownShape {
                        message: "a JSON-RPC notification (no `id`) cannot be answered: elicitation/create must be a request with an id".into(),
                    }
                    .into())
                }
                (Some(other), _) => {
                    return Err(ElicitError::UnknownShape {
                        message: format!(
                            "JSON-RPC `id` must be a string or a number, found {}",
                            crate::elicitation::json_kind(other)
                        ),
                    }
                    .into())
                }
            };
            let params = method_params(obj).map_err(|error| InputFailure {
                error,
                reply_id: Some(id.clone()),
            })?;
            return Ok(Document {
                shape: Shape::JsonRpcRequest { id },
                entries: vec![Entry {
                    key: None,
                    params,
                    schema_text: raw.params_schema,
                    form: None,
                }],
                skipped: vec![],
                server: None,
            });
        }
        if let Some(result) = obj.get("result") {
            return input_required(result, raw.request_state).map_err(Into::into);
        }
        if let Some(error) = obj.get("error") {
            return url_required(error).map_err(Into::into);
        }
        return Err(ElicitError::UnknownShape {
            message: "a JSON-RPC message with neither `method`, `result` nor `error`".into(),
        }
        .into());
    }
    if obj.contains_key("method") {
        let params = method_params(obj)?;
        return Ok(Document {
            shape: Shape::RequestObject,
            entries: vec![Entry {
                key: None,
                params,
                schema_text: raw.params_schema,
                form: None,
            }],
            skipped: vec![],
            server: None,
        });
    }
    if obj.contains_key("inputRequests") || obj.contains_key("resultType") {
        return input_required(&value, raw.request_state).map_err(Into::into);
    }
    if obj.contains_key("code") && obj.contains_key("data") {
        return url_required(&value).map_err(Into::into);
    }
    if obj.contains_key("error") {
        return url_required(&obj["error"]).map_err(Into::into);
    }
    let looks_like_params = ["message", "requestedSchema", "mode", "url", "elicitationId"]
        .iter()
        .any(|k| obj.contains_key(*k));
    if looks_like_params {
        return Ok(Document {
            shape: Shape::BareParams,
            entries: vec![Entry {
                key: None,
                params: ElicitationParams::from_owned(value)?,
                schema_text: raw.bare_schema,
                form: None,
            }],
            skipped: vec![],
            server: None,
        });
    }
    let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
    Err(ElicitError::UnknownShape {
        message: format!(
            "not an elicitation: expected params (`message`, `requestedSchema` or `url`), a request (`method`), a JSON-RPC request, an input_required result or a -32042 error; found keys {keys:?}"
        ),
    }
    .into())
}

fn method_params(obj: &mut Map<String, Value>) -> Result<ElicitationParams, ElicitError> {
    match obj.get("method") {
        Some(Value::String(m)) if m == ELICITATION_METHOD => {}
        Some(Value::String(m)) => {
            return Err(ElicitError::UnknownMethod { method: m.clone() });
        }
        Some(other) => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "`method` must be a string, found {}",
                    crate::elicitation::json_kind(other)
                ),
            })
        }
        None => unreachable!("callers check for `method`"),
    }
    match obj.shift_remove("params") {
        Some(p) => ElicitationParams::from_owned(p),
        None => Err(ElicitError::InvalidParams {
            message: "elicitation/create has no `params`".into(),
        }),
    }
}

/// Reads a bare `input_required` result (as a live session receives it).
pub fn read_input_required(result: &Value) -> Result<Document, ElicitError> {
    input_required(result, None)
}

fn input_required(
    result: &Value,
    request_state: Option<Box<RawValue>>,
) -> Result<Document, ElicitError> {
    let obj = result
        .as_object()
        .ok_or_else(|| ElicitError::UnknownShape {
            message: format!(
                "a JSON-RPC response whose `result` is {}, not an input_required result",
                crate::elicitation::json_kind(result)
            ),
        })?;
    match obj.get("resultType").and_then(Value::as_str) {
        Some("input_required") => {}
        None if obj.contains_key("inputRequests") => {}
        Some(other) => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "a result with resultType {other:?} asks nothing: only \"input_required\" results carry elicitations"
                ),
            })
        }
        None => {
            return Err(ElicitError::UnknownShape {
                message: "a JSON-RPC response that is not an input_required result: there is nothing to elicit".into(),
            })
        }
    }
    let requests = match obj.get("inputRequests") {
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "`inputRequests` must be an object, found {}",
                    crate::elicitation::json_kind(other)
                ),
            })
        }
        None => {
            return Err(ElicitError::UnknownShape {
                message: "input_required result has no `inputRequests`".into(),
            })
        }
    };
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    for (key, req) in requests {
        let method = req.get("method").and_then(Value::as_str);
        if method != Some(ELICITATION_METHOD) {
            skipped.push(format!("{key} ({})", method.unwrap_or("no method")));
            continue;
        }
        let params = req
            .get("params")
            .ok_or_else(|| ElicitError::InvalidParams {
                message: format!("inputRequests[{key:?}] has no `params`"),
            })
            .and_then(ElicitationParams::from_value)
            .map_err(|e| match e {
                ElicitError::InvalidParams { message } => ElicitError::InvalidParams {
                    message: format!("inputRequests[{key:?}]: {message}"),
                },
                other => other,
            })?;
        entries.push(Entry {
            key: Some(key.clone()),
            params,
            schema_text: None,
            form: None,
        });
    }
    Ok(Document {
        shape: Shape::InputRequired { request_state },
        entries,
        skipped,
        server: server_name(result),
    })
}

fn url_required(error: &Value) -> Result<Document, ElicitError> {
    let code = error.get("code").and_then(Value::as_i64);
    if code != Some(URL_ELICITATION_REQUIRED) {
        return Err(ElicitError::UnknownShape {
            message: format!(
                "a JSON-RPC error with code {}: only -32042 (URL elicitation required) carries elicitations",
                error.get("code").map(Value::to_string).unwrap_or_else(|| "(none)".into())
            ),
        });
    }
    let list = error
        .get("data")
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
        .ok_or_else(|| ElicitError::InvalidParams {
            message: "-32042 error has no `data.elicitations` array".into(),
        })?;
    let mut entries: Vec<Entry> = Vec::new();
    // Results are keyed by elicitationId (or `#INDEX` for an entry without
    // one): two entries with one key would both be asked and one answer
    // silently lost in the output object.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, item) in list.iter().enumerate() {
        let params = ElicitationParams::from_value(item).map_err(|e| match e {
            ElicitError::InvalidParams { message } => ElicitError::InvalidParams {
                message: format!("data.elicitations[{i}]: {message}"),
            },
            other => other,
        })?;
        let key = params
            .elicitation_id
            .clone()
            .unwrap_or_else(|| format!("#{i}"));
        if let Some(&first) = seen.get(&key) {
            let has_id = |n: usize| {
                if n == i {
                    params.elicitation_id.is_some()
                } else {
                    entries[n].params.elicitation_id.is_some()
                }
            };
            let how = |n: usize| {
                if has_id(n) {
                    format!("data.elicitations[{n}] has the elicitationId {key:?}")
                } else {
                    format!(
                        "data.elicitations[{n}] has no elicitationId (its stand-in key is {key:?})"
                    )
                }
            };
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "duplicate elicitation key {key:?}: {} and {}; each elicitation needs its own key, or one answer would be lost",
                    how(first),
                    how(i)
                ),
            });
        }
        seen.insert(key.clone(), i);
        entries.push(Entry {
            key: Some(key),
            params,
            schema_text: None,
            form: None,
        });
    }
    Ok(Document {
        shape: Shape::UrlElicitationRequired,
        entries,
        skipped: vec![],
        server: None,
    })
}

#[cfg(test)]
mod schema_text_tests {
    use super::*;

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

#[cfg(test)]
mod one_pass_tests {
    use super::*;

    fn describe(r: Result<Document, InputFailure>) -> String {
        match r {
            Ok(doc) => format!("{doc:?}"),
            Err(f) => format!("error {} reply {:?}", f.error, f.reply_id),
        }
    }

    /// Documents that stress what the one pass keeps as text, skips or
    /// refuses.
    fn corpus() -> Vec<String> {
        let s = r#"{"type":"object","properties":{"a":{"type":"string","default":"x"}}}"#;
        let deep = |n: usize| {
            format!(
                r#"{{"type":"object","x":{}{}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let req = |id: &str, rest: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}{rest}}}"#
            )
        };
        let mut docs = vec![
            req("1", ""),
            req(r#""\u0041""#, ""),
            req("1e2", ""),
            req("null", ""),
            req("[1]", ""),
            req("1", r#","id":2"#),
            req(
                "1",
                r#","params":{"message":"n","requestedSchema":{"type":"object"}}"#,
            ),
            req("1", r#","requestState":"s\u0041","requestState":"t""#),
            req("1", r#","requestState":null"#),
            req("1", r#","requestedSchema":{"type":"object"}"#),
            req("1", r#","result":{"requestState":"r"}"#),
            req("1", r#","result":"x""#),
            req(
                "1",
                &format!(r#","deep":{}{}"#, "[".repeat(126), "]".repeat(126)),
            ),
            req("1", " x"),
            format!(r#"{{"message":"m","requestedSchema":{}}}"#, deep(125)),
            format!(
                r#"{{"method":"elicitation/create","params":{{"requestedSchema":{}}}}}"#,
                deep(125)
            ),
            format!(
                r#"{{"method":"elicitation/create","params":{{"requestedSchema":{}}}}}"#,
                deep(124)
            ),
            format!(
                r#"{{"method":"elicitation/create","params":{{"requestedSchema":{s},"requestedSchema":{s}}}}}"#
            ),
            format!(r#"{{"method":"elicitation/create","params":{{"requestedSchema":"\ud800"}}}}"#),
            format!(r#"{{"method":"elicitation/create","params":{{"requested\u0053chema":{s}}}}}"#),
            format!(
                r#"{{"method":"elicitation/create","params":{{"$serde_json::private::Number":"1"}}}}"#
            ),
            r#"{"$serde_json::private::Number":"1"}"#.into(),
            r#"{"$serde_json::private::RawValue":"{}"}"#.into(),
            r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":12}"#.into(),
            format!(r#"{{"message":"m","requestedSchema":null,"requestState":{{"k":[1]}}}}"#),
            format!(
                r#"{{"resultType":"input_required","inputRequests":{{"a":{{"method":"elicitation/create","params":{{"requestedSchema":{s}}}}}}},"requestState":"st"}}"#
            ),
            r#"{"resultType":"input_required","inputRequests":{},"requestState":null}"#.into(),
            format!(
                r#"{{"resultType":"input_required","inputRequests":{{"a":{{"method":"x"}},"a":{{"method":"y"}}}},"requestedSchema":{s}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"result":{{"resultType":"input_required","inputRequests":{{}},"requestState":"\u0041"}}}}"#
            ),
            format!(
                r#"{{"code":-32042,"data":{{"elicitations":[{{"mode":"url","url":"https://e.x","elicitationId":"i"}}]}},"id":5}}"#
            ),
            r#"{"foo":1,"foo":2,"bar":3}"#.into(),
            // The schema's text elsewhere than (or before) its own slot.
            req("1", &format!(r#","x":{s}"#)),
            format!(r#"{{"x":{s},"message":"m","requestedSchema":{s}}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":6,"method":"elicitation/create","params":{{"_meta":{{"io.modelcontextprotocol/related-task":{s}}},"message":"m","requestedSchema":{s}}}}}"#
            ),
            format!(r#"{{"message":"{{}}","requestedSchema":{{}}}}"#),
            format!(r#"{{"x":{{"requestedSchema":{s}}},"message":"m","requestedSchema":{s}}}"#),
            format!(
                r#"{{"method":"elicitation/create","params":{{"_meta":{{"k":{{"requestedSchema":{s}}}}},"message":"m","requestedSchema":{s}}}}}"#
            ),
            format!(r#"{{"message":"m","requestedSchema":{s} x}}"#),
            format!(r#"{{"message":"m","requestedSchema":{s}}} x"#),
            format!(r#"{{"message":"m","requestedSchema":[{s}]}}"#),
            format!(r#"{{"message":"m","requestedSchema":{{"k":{s}}}}}"#),
            format!(r#"{{"message":"m","requestedSchema":{s},"requestedSchema":{s}}}"#),
            r#"[]"#.into(),
        ];
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "json") {
                    docs.push(std::fs::read_to_string(p).unwrap());
                }
            }
        }
        docs
    }

    /// Reads every corpus document with the one pass (`keep_schema_text`
    /// as given) and with `whole`, and checks both against the two-pass
    /// reader, seen through `seen`. Returns how many the one pass took.
    fn agree_with_two_passes(
        keep_schema_text: bool,
        whole: fn(&str) -> Result<Document, InputFailure>,
        seen: fn(Result<Document, InputFailure>) -> String,
    ) -> usize {
        let mut one_pass = 0;
        for doc in corpus() {
            let two = seen(read_document_two_pass(&doc));
            let seed = OnePassSeed::new(keep_schema_text);
            if let Some(one) = read_in_one_pass(&doc, &|_| None, None, seed) {
                one_pass += 1;
                assert_eq!(describe(one), two, "{doc}");
            }
            assert_eq!(describe(whole(&doc)), two, "{doc}");
        }
        one_pass
    }

    #[test]
    fn one_pass_reads_what_two_passes_read() {
        let one_pass = agree_with_two_passes(true, read_document, describe);
        // Most documents take the one pass, fixtures included.
        assert!(one_pass > 30, "{one_pass}");
    }

    /// Read once (no cache), a schema is built in the same pass: the same
    /// document, the same errors at the same line and column, only without
    /// the schema's text.
    #[test]
    fn a_single_document_reads_as_two_passes_do_without_schema_texts() {
        let built_in_place = agree_with_two_passes(false, read_single_document, |r| {
            describe(r.map(without_schema_texts))
        });
        assert!(built_in_place > 30, "{built_in_place}");
        for doc in corpus() {
            if let Ok(d) = read_single_document(&doc) {
                assert!(d.entries.iter().all(|e| e.schema_text.is_none()), "{doc}");
            }
        }
    }

    #[test]
    fn the_likely_schema_text_changes_nothing_but_the_work() {
        let s = r#"{"type":"object","properties":{"a":{"type":"string","default":"x"}}}"#;
        let texts = [s, "{}", r#"{"type":"object"}"#];
        let forms: Vec<(Arc<FormSchema>, usize)> = texts
            .iter()
            .map(|t| {
                let v: Value = serde_json::from_str(t).unwrap();
                (Arc::new(FormSchema::parse(&v).unwrap()), nesting(&v))
            })
            .collect();
        let known = |text: &str| {
            let i = texts.iter().position(|t| *t == text)?;
            Some(KnownSchema {
                form: forms[i].0.clone(),
                nesting: forms[i].1,
            })
        };
        for doc in corpus() {
            let plain = describe(read_document_with(&doc, &known, None));
            for likely in texts.into_iter().chain([r#""x""#, "{", "{}}"]) {
                let with = describe(read_document_with(&doc, &known, Some(likely)));
                assert_eq!(with, plain, "likely {likely}: {doc}");
            }
        }
    }

    #[test]
    fn the_likely_schema_is_swapped_out_only_from_its_slot() {
        let s = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
        let swapped_schema = |doc: &str| {
            let (m, at, schema) = swap_out(doc, s)?;
            let (_, (bare, params)) = read_swapped(&m, at, schema)?;
            Some((bare.map(str::to_string), params.map(str::to_string)))
        };
        let rpc = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}"#
        );
        assert_eq!(swapped_schema(&rpc), Some((None, Some(s.to_string()))));
        let bare = format!(r#"{{"message":"m","requestedSchema":{s}}}"#);
        assert_eq!(swapped_schema(&bare), Some((Some(s.to_string()), None)));
        let after_another = format!(r#"{{"x":{s},"message":"m","requestedSchema" : {s}}}"#);
        assert_eq!(
            swapped_schema(&after_another),
            Some((Some(s.to_string()), None))
        );
        for elsewhere in [
            format!(r#"{{"x":{{"requestedSchema":{s}}},"message":"m","requestedSchema":{s}}}"#),
            format!(r#"{{"message":"m","requestedSchema":{{}},"x":{{"requestedSchema":{s}}}}}"#),
            format!(r#"{{"message":"m","requestedSchema":[{s}]}}"#),
            format!(r#"{{"message":"m","requestedSchema":{s} x}}"#),
            r#"{"message":"m"}"#.to_string(),
        ] {
            assert_eq!(swapped_schema(&elsewhere), None, "{elsewhere}");
        }
    }

    #[test]
    fn a_known_schema_is_not_built() {
        let s = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
        let form = Arc::new(FormSchema::parse(&serde_json::from_str(s).unwrap()).unwrap());
        let known = |text: &str| {
            (text == s).then(|| KnownSchema {
                form: form.clone(),
                nesting: 3,
            })
        };
        let doc = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{{"message":"m","requestedSchema":{s}}}}}"#
        );
        let read = read_document_with(&doc, &known, None).unwrap();
        let entry = &read.entries[0];
        assert!(entry.form.as_ref().is_some_and(|f| Arc::ptr_eq(f, &form)));
        assert_eq!(entry.params.requested_schema, None);
        assert_eq!(entry.schema_text, None);
        // Unknown text (here: other spacing) is built as usual.
        let spaced = doc.replace(r#""type":"string""#, r#""type": "string""#);
        let read = read_document_with(&spaced, &known, None).unwrap();
        assert!(read.entries[0].form.is_none());
        assert!(read.entries[0].params.requested_schema.is_some());
        assert!(read.entries[0].schema_text.is_some());
    }
}
