//! The two-pass reader: parse the document, then take the exact texts in a
//! second pass ([`super::raw`]); refuses duplicate keys where they change
//! the meaning.

use super::{
    parse_json, raw_bits, read_shape, server_name, Document, InputFailure, RawBits, Shape,
};
use crate::error::ElicitError;
use serde::Deserialize;
use serde_json::Value;
/// The two passes: the whole document parsed, then its exact bits read again.
pub(super) fn read_document_two_pass(text: &str) -> Result<Document, InputFailure> {
    let value = parse_json(text)?;
    match &value {
        Value::Object(_) => {}
        other => {
            return Err(ElicitError::UnknownShape {
                message: format!(
                    "expected a JSON object (an elicitation), found {}",
                    crate::elicitation::json::json_kind(other)
                ),
            }
            .into())
        }
    };
    let raw = raw_bits(text, &value);
    finish_document(text, value, raw)
}

/// The shape rules, the same for both readers.
pub(super) fn finish_document(
    text: &str,
    value: Value,
    raw: RawBits,
) -> Result<Document, InputFailure> {
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
pub(super) const DUPLICATE_KEY: &str = "elicit: duplicate key ";

/// An object whose keys are checked for duplicates (values are skipped).
/// A parsed `Value` keeps only the last of two equal keys, so this looks at
/// the text itself.
pub(super) struct UniqueKeys;

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
pub(super) struct KeysTop {
    #[serde(default, rename = "inputRequests")]
    _input_requests: Option<UniqueKeys>,
    #[serde(default)]
    result: Option<KeysResult>,
}

#[derive(Deserialize)]
pub(super) struct KeysResult {
    #[serde(default, rename = "inputRequests")]
    _input_requests: Option<UniqueKeys>,
}

/// The first key that `inputRequests` (bare or in a JSON-RPC `result`) has
/// twice, if any.
pub(super) fn duplicate_input_request_key(text: &str) -> Option<String> {
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
