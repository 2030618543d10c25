//! The exact text of `id`, `requestState` and `requestedSchema`: a second,
//! borrowing pass over the document, because a parsed `Value` may re-write
//! numbers and escapes that must go back to the server byte for byte.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
#[derive(Deserialize)]
pub(super) struct RawTop<'a> {
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
pub(super) struct RawParams<'a> {
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
pub(super) struct RawResult<'a> {
    #[serde(borrow, default, rename = "requestState")]
    request_state: Option<&'a RawValue>,
}

/// The exact text of `id` and `requestState`: a parsed `Value` would turn
/// `1.0` into `1.0` but `1e2` into `100.0`, and could re-escape strings, and
/// both must go back to the server byte for byte.
pub(super) struct RawBits {
    pub(super) id: Option<Box<RawValue>>,
    pub(super) request_state: Option<Box<RawValue>>,
    /// The text of `requestedSchema` at the top (bare params) and in
    /// `params` (a request): the schema cache's key.
    pub(super) bare_schema: Option<Box<str>>,
    pub(super) params_schema: Option<Box<str>>,
}

pub(super) fn raw_bits(text: &str, value: &Value) -> RawBits {
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
