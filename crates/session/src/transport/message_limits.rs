//! What one message from a server may hold, checked over its bytes before
//! it is parsed.
//!
//! The byte cap (64 MiB) bounds the text, not what parsing it builds:
//! every JSON value becomes a `Value` of some 80 bytes plus its share of a
//! vector or map, so 64 MiB of `[{},{},…]` made 3 GB, and deeply nested
//! empty arrays more. One pass over the bytes, skipping the insides of
//! strings, counts the structural tokens (`[`, `{`, `,`, `:`: every value
//! and key but the first is preceded by one), the nesting depth and the
//! length of a top-level batch; a message past a limit is refused with the
//! limit named, before anything is built. Parsed, a message within the
//! limits takes at most a few hundred MiB, whatever its shape.
//!
//! serde_json's own recursion limit (128) would stop deep nesting too, but
//! only after building what came before; and it has no count of values.

use serde_json::Value;

/// Most values (and object keys) in one message: parsed, at most some
/// 200 MiB (the worst shape, single-element arrays, takes about 400 bytes
/// a value), next to the at most 64 MiB of its text.
pub const MAX_VALUES: usize = elicit_core::elicitation::protocol::wire::MAX_JSON_VALUES;
/// What one value is taken to cost in memory once parsed, for the bound on
/// what waits in a transport's queue ([`weight`]).
const VALUE_BYTES: usize = 256;
/// Deepest nesting of arrays and objects in one message: the input
/// documents' limit too (and serde_json's recursion limit).
pub const MAX_DEPTH: usize = 128;
/// Most messages in one JSON-RPC batch (a top-level array).
pub const MAX_BATCH: usize = 1000;

/// Refuses a message past [`MAX_VALUES`], [`MAX_DEPTH`] or [`MAX_BATCH`]:
/// the error says which. Bytes that are not JSON pass (the parser reports
/// them). Returns the number of structural tokens (about the number of
/// values).
pub fn check(text: &[u8]) -> Result<usize, String> {
    elicit_core::bounded::check_json_shape(text, MAX_VALUES, MAX_DEPTH, MAX_BATCH)
}

/// Parses one message from a server, within the limits ([`check`]).
pub fn parse(text: &str) -> Result<Value, String> {
    parse_weighed(text).0
}

/// [`parse`], and about how much memory the message takes once parsed,
/// its text included: what a queue of messages counts.
pub fn parse_weighed(text: &str) -> (Result<Value, String>, usize) {
    match check(text.as_bytes()) {
        Ok(tokens) => (
            serde_json::from_str(text).map_err(|e| e.to_string()),
            weight(text.len(), tokens),
        ),
        Err(e) => (Err(e), text.len().min(1024)),
    }
}

/// The memory a message of `len` bytes and `tokens` values is taken to
/// need, parsed.
fn weight(len: usize, tokens: usize) -> usize {
    len.saturating_add(tokens.saturating_mul(VALUE_BYTES))
}

/// [`parse`] for bytes (a body read whole).
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, String> {
    check(bytes)?;
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

/// The first bytes of a message too large or malformed to keep: what an
/// error shows of it (the whole text could be 64 MiB).
pub(crate) fn excerpt(text: &str) -> String {
    let mut end = text.len().min(1024);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_messages_pass() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b"}]}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]"#,
            r#""a string with [[[ { , : and \" \\ inside""#,
            "42",
            "",
            "not json at all",
        ] {
            assert!(check(ok.as_bytes()).is_ok(), "{ok}");
        }
    }

    #[test]
    fn many_values_are_refused_before_parsing() {
        let many = format!("[{}{{}}]", "{},".repeat(2000));
        assert!(
            elicit_core::bounded::check_json_shape(many.as_bytes(), 10_000, 128, 1_000_000).is_ok()
        );
        assert_eq!(
            elicit_core::bounded::check_json_shape(many.as_bytes(), 10_000, 128, 1_000_000),
            Ok(4002),
            "[, then {{ and , for each"
        );
        let err = elicit_core::bounded::check_json_shape(many.as_bytes(), 1000, 128, 1_000_000)
            .unwrap_err();
        assert!(err.contains("more than 1000 values"), "{err}");
        // Keys count too: an object of many members.
        let obj = format!("{{{}\"z\":0}}", "\"k\":0,".repeat(600));
        assert!(elicit_core::bounded::check_json_shape(obj.as_bytes(), 1000, 128, 10).is_err());
    }

    #[test]
    fn deep_nesting_is_refused_and_strings_do_not_count() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let err = check(deep.as_bytes()).unwrap_err();
        assert!(err.contains("nesting deeper than 128 levels"), "{err}");
        let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert!(check(ok.as_bytes()).is_ok());
        assert!(
            serde_json::from_str::<Value>(&ok).is_ok(),
            "what passes, serde_json reads"
        );
        let quoted = format!("[\"{}\\\"{}\"]", "[".repeat(500), ",".repeat(500));
        assert_eq!(
            elicit_core::bounded::check_json_shape(quoted.as_bytes(), 10, 4, 2),
            Ok(1)
        );
    }

    #[test]
    fn long_batches_are_refused_but_long_inner_arrays_only_by_count() {
        let batch = format!("[{}1]", "1,".repeat(1500));
        let err = check(batch.as_bytes()).unwrap_err();
        assert!(err.contains("batch of more than 1000"), "{err}");
        let inner = format!("{{\"result\":[{}1]}}", "1,".repeat(1500));
        assert!(check(inner.as_bytes()).is_ok());
    }

    #[test]
    fn excerpts_cut_on_a_character_boundary() {
        let text = "é".repeat(1000);
        let cut = excerpt(&text);
        assert!(cut.len() <= 1024 && cut.chars().all(|c| c == 'é'));
    }
}
