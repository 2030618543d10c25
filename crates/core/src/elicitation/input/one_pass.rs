//! The one-pass reader (the `--lines` fast path): every member built as a
//! value while `requestedSchema`, `id` and `requestState` are kept as text,
//! and a schema the cache already holds never built again. Anything unusual
//! goes to the two-pass reader, so errors are the same either way.

use super::shapes::HOOK_EVENT;
use super::{
    finish_document, nesting, Document, InputFailure, KnownSchema, RawBits, Shape, MAX_NESTING,
};
use crate::elicitation::schema::FormSchema;
use serde_json::value::RawValue;
use serde_json::Map;
use serde_json::Value;
use std::sync::Arc;
/// Marks the one-pass reader's own refusals (the two-pass reader decides).
pub(super) const NOT_ONE_PASS: &str = "elicit: not for the one-pass reader";

/// The keys serde_json's `Value` reads specially when they come first in an
/// object (its number and raw-value markers): such an object is left to the
/// two-pass reader.
pub(super) fn is_marker_key(key: &str) -> bool {
    key.starts_with("$serde_json::private::")
}

/// The top-level object, read in one pass: every member as a `Value` but
/// the ones kept as text (their slots in `members` hold `null` until they
/// are built, so the members keep their order).
pub(super) struct OnePass<'a> {
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
pub(super) struct OnePassSeed {
    keep_schema_text: bool,
}

impl OnePassSeed {
    pub(super) fn new(keep_schema_text: bool) -> Self {
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
                    } else if key == "result" || key == HOOK_EVENT {
                        // Its `requestState` is kept as text too: the
                        // two-pass reader does that (and reads the hook
                        // input's own names).
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
pub(super) struct OnePassParams<'a> {
    members: Map<String, Value>,
    schema: Option<&'a RawValue>,
}

/// Reads `params` as its [`OnePassSeed`] says.
pub(super) struct ParamsSeed(OnePassSeed);

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
pub(super) fn build_member(raw: &str, level: usize) -> Option<Value> {
    let value: Value = serde_json::from_str(raw).ok()?;
    (level + nesting(&value) <= MAX_NESTING).then_some(value)
}

/// `text` with `schema` (a JSON object's text) replaced by `{}` where it
/// follows a `"requestedSchema":` key, and where: a line of a stream of one
/// request, read without its schema. Finding the key and comparing the
/// text after it costs a fraction of what serde_json takes to skip the
/// schema. `None` when no such key is followed by `schema`.
pub(super) fn swap_out<'s>(text: &str, schema: &'s str) -> Option<(String, usize, &'s str)> {
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
pub(super) type SchemaTexts<'a> = (Option<&'a str>, Option<&'a str>);

/// Reads `swapped` (from [`swap_out`]) in one pass, when the `{}` put at
/// `at` is a `requestedSchema`'s whole value: then `schema` was that
/// member's value in the document (an object, read to its closing brace
/// wherever it stands, so the rest reads the same either way).
pub(super) fn read_swapped<'a>(
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
pub(super) enum SchemaAt {
    Top,
    Params,
}

/// The one pass of [`read_document_with`]; `None` leaves the document to
/// the two-pass reader.
pub(super) fn read_in_one_pass(
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
    let found = match raw_schema {
        Some(raw) => place_schema(&mut members, known, raw, at, level)?,
        None => None,
    };
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
    Some(finish_document(text, value, raw).map(|doc| match found {
        Some(form) => with_known_form(doc, form, at),
        None => doc,
    }))
}

/// Puts the schema text `raw`, found `at` (`level` deep), in its slot of
/// `members`: an empty object when `known` holds its form (returned), else
/// the schema built. `None` leaves the document to the two-pass reader.
fn place_schema(
    members: &mut Map<String, Value>,
    known: &dyn Fn(&str) -> Option<KnownSchema>,
    raw: &str,
    at: SchemaAt,
    level: usize,
) -> Option<Option<Arc<FormSchema>>> {
    let mut found = None;
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
    Some(found)
}

/// `doc` with the known `form` in place of the placeholder schema, when
/// its one elicitation's schema is the one found `at`.
fn with_known_form(mut doc: Document, form: Arc<FormSchema>, at: SchemaAt) -> Document {
    let here = match doc.shape {
        Shape::BareParams => SchemaAt::Top,
        Shape::RequestObject | Shape::JsonRpcRequest { .. } => SchemaAt::Params,
        Shape::InputRequired { .. } | Shape::UrlElicitationRequired | Shape::ClaudeCodeHook => {
            return doc
        }
    };
    if here == at {
        if let Some(entry) = doc.entries.first_mut() {
            // The placeholder goes; the parsed form takes its place.
            entry.params.requested_schema = None;
            entry.form = Some(form);
        }
    }
    doc
}

#[cfg(test)]
#[path = "one_pass_tests.rs"]
mod one_pass_tests;
