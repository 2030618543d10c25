//! Which relayed lines the proxy must look at. Most traffic is none of
//! elicit's business and must pass at pipe speed, so a line is first tested
//! for substrings; but JSON can spell any name with escapes
//! (`"elicitation\/create"`, `"\u0069nitialize"`), and a substring test
//! must never decide what a message means. The rule:
//!
//! - a line without a backslash holds every string exactly as written, so
//!   the substring test is exact as a filter: a message that matters always
//!   contains the names it is tested for;
//! - a line with a backslash is skimmed with serde (the few members that
//!   matter are decoded, everything else skipped without building a tree),
//!   and anything the skim cannot read (duplicate members, odd shapes) is
//!   passed on as "may matter", to the full parse that decides.
//!
//! The exact decisions on a parsed message are [`client_message_matters`]
//! and [`server_message_matters`]; the line tests may say yes more often,
//! never less (the `proxy_classifier` fuzz target checks that).

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use crate::protocol::ELICITATION_METHOD;

/// Client requests that may come back `input_required` (2026-07-28).
pub const RETRYABLE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];
/// Per-request client capabilities (2026-07-28).
pub const CAPS_META: &str = "io.modelcontextprotocol/clientCapabilities";
/// Per-request protocol version (2026-07-28).
pub const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// The id prefix of the proxy's own retries.
pub const RETRY_PREFIX: &str = "elicit-proxy-";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

fn has_backslash(bytes: &[u8]) -> bool {
    memchr::memchr(b'\\', bytes).is_some()
}

/// Whether a client method is one the proxy rewrites or tracks.
fn client_method_matters(method: &str, has_2026_meta: bool) -> bool {
    method == "initialize" || method == DISCOVER || RETRYABLE.contains(&method) || has_2026_meta
}

/// The 2026-07-28 request whose reply names the server (as `initialize`'s
/// does for the handshake): the proxy reads the name for its prompts.
const DISCOVER: &str = "server/discover";

/// The exact decision: a client message is an `initialize` or a
/// `server/discover` (their replies name the server), carries
/// 2026-07-28 `_meta` (capabilities or version), or is a request that may
/// come back `input_required`.
pub fn client_message_matters(msg: &Value) -> bool {
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return false;
    };
    let meta = msg
        .get("params")
        .and_then(|p| p.get("_meta"))
        .is_some_and(|m| m.get(CAPS_META).is_some() || m.get(VERSION_META).is_some());
    client_method_matters(method, meta)
}

/// The exact decision: a server message is an `elicitation/create`
/// request, an `input_required` result, or a reply to one of the proxy's
/// retries. (Replies to tracked client requests are caught by the proxy's
/// state, not by the line.)
pub fn server_message_matters(msg: &Value) -> bool {
    msg.get("method").and_then(Value::as_str) == Some(ELICITATION_METHOD)
        || msg
            .get("result")
            .and_then(|r| r.get("resultType"))
            .and_then(Value::as_str)
            == Some("input_required")
        || msg
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with(RETRY_PREFIX))
}

#[derive(Deserialize)]
struct ClientSkim<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    params: Option<ParamsSkim>,
}

#[derive(Deserialize)]
struct ParamsSkim {
    #[serde(rename = "_meta")]
    meta: Option<MetaSkim>,
}

#[derive(Deserialize)]
struct MetaSkim {
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    caps: Option<IgnoredAny>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ServerSkim<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    id: Option<Value>,
    #[serde(borrow)]
    result: Option<ResultSkim<'a>>,
}

#[derive(Deserialize)]
struct ResultSkim<'a> {
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
}

fn skip_ws(mut b: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r' | b'\n', rest @ ..] = b {
        b = rest;
    }
    b
}

/// Text without escapes: whether any `"method": "NAME"` in it names a
/// method elicit acts on. A message's method is written exactly so (JSON
/// allows only whitespace around the colon), so this is exact as a filter,
/// and it costs one pass over the text (not one per name).
fn names_a_client_method(text: &[u8]) -> bool {
    memchr::memmem::find_iter(text, b"\"method\"").any(|at| {
        let rest = skip_ws(&text[at + 8..]);
        let Some(rest) = rest.strip_prefix(b":") else {
            return false;
        };
        let Some(value) = skip_ws(rest).strip_prefix(b"\"") else {
            return false;
        };
        let name = &value[..memchr::memchr(b'"', value).unwrap_or(value.len())];
        std::str::from_utf8(name).is_ok_and(|m| client_method_matters(m, false))
    })
}

/// Text without escapes: whether it holds one of the 2026 `_meta` keys (a
/// superset: any place, any role), in one pass for both.
fn has_2026_meta_key(text: &[u8]) -> bool {
    const PREFIX: &[u8] = b"io.modelcontextprotocol/";
    memchr::memmem::find_iter(text, PREFIX).any(|at| {
        let rest = &text[at + PREFIX.len()..];
        rest.starts_with(&CAPS_META.as_bytes()[PREFIX.len()..])
            || rest.starts_with(&VERSION_META.as_bytes()[PREFIX.len()..])
    })
}

/// True when one client line may need elicit (see the module doc).
pub fn client_line_matters(line: &[u8]) -> bool {
    if !has_backslash(line) {
        return names_a_client_method(line) || has_2026_meta_key(line);
    }
    match serde_json::from_slice::<ClientSkim>(line) {
        Ok(skim) => {
            let meta = skim
                .params
                .and_then(|p| p.meta)
                .is_some_and(|m| m.caps.is_some() || m.version.is_some());
            skim.method.is_some_and(|m| client_method_matters(&m, meta))
        }
        // Not a message the skim can read: let the full parse decide.
        Err(_) => true,
    }
}

/// True when one server line may need elicit (see the module doc).
pub fn server_line_matters(line: &[u8]) -> bool {
    if !has_backslash(line) {
        return contains(line, ELICITATION_METHOD.as_bytes())
            || contains(line, b"input_required")
            || contains(line, RETRY_PREFIX.as_bytes());
    }
    match serde_json::from_slice::<ServerSkim>(line) {
        Ok(skim) => {
            skim.method.as_deref() == Some(ELICITATION_METHOD)
                || skim
                    .result
                    .and_then(|r| r.result_type)
                    .is_some_and(|t| t == "input_required")
                || skim
                    .id
                    .as_ref()
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.starts_with(RETRY_PREFIX))
        }
        Err(_) => true,
    }
}

/// True when any line of a run of whole lines may matter: one substring
/// pass over the run when it has no backslash, else line by line.
pub fn chunk_matters(chunk: &[u8], line_matters: fn(&[u8]) -> bool) -> bool {
    if !has_backslash(chunk) {
        return line_matters(chunk);
    }
    chunk.split_inclusive(|b| *b == b'\n').any(line_matters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_names_are_caught() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"elicitation\/create","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"\u0065licitation/create","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input\u005frequired"}}"#,
            r#"{"jsonrpc":"2.0","id":"elicit\u002dproxy-3","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","method":"elicitation/create","s":"\n"}"#,
        ] {
            assert!(server_line_matters(line.as_bytes()), "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"\u0069nitialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}"#,
        ] {
            assert!(client_line_matters(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn method_names_are_read_where_the_method_is() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method" :	"tools/call","params":{}}"#,
            r#"{"id":1,"params":{"x":"method"},"method": "server/discover"}"#,
            r#"{"method":"x","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ] {
            assert!(client_line_matters(line.as_bytes()), "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"tools/call initialize"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"echo","params":{"method":"nope","m":"io.modelcontextprotocol/other"}}"#,
        ] {
            assert!(!client_line_matters(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn ordinary_escaped_traffic_is_not_claimed() {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb \"q\" \u00e9"}]}}"#;
        assert!(!server_line_matters(line));
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"echo","params":{"s":"x\u00e9\/"}}"#;
        assert!(!client_line_matters(line));
        let chunk = [line.as_slice(), b"\n", line.as_slice(), b"\n"].concat();
        assert!(!chunk_matters(&chunk, client_line_matters));
    }
}
